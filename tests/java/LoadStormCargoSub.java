/** The subclass LoadStorm's loaders define first: its superclass and interface are then
 *  defined by the same loader while it is being defined (CLASS_LOADs nest). */
public class LoadStormCargoSub extends LoadStormCargo {
    public int applyAsInt(int x) {
        return deeper(x, 6) + weight();
    }

    int deeper(int x, int d) {
        return d == 0 ? super.applyAsInt(x) : deeper(x + 1, d - 1) + 1;
    }
}
