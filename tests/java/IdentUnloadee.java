/** Defined by throw-away class loaders in IdentUnload, so that it can unload. Nothing else
 *  refers to it: the application class loader never loads it. */
public class IdentUnloadee {
    static int instances;
    int serial = ++instances;

    public String toString() {
        return "unloadee#" + serial;
    }
}
