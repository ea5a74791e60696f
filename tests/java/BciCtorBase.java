/** BciCtorBase: the superclass of BciCtor. */
public class BciCtorBase {
    static int made;
    final int v;

    BciCtorBase(int v, int[] extra) {
        this.v = v + extra.length;
        made++;
    }
}
