/** BciCtorBase: the superclass of BciCtor. It rejects v == BOOM after its own work, so
 *  that a subclass constructor is left by an exception thrown inside its super(...) call. */
public class BciCtorBase {
    static final int BOOM = 19998;
    static int made, rejected;
    final int v;

    BciCtorBase(int v, int[] extra) {
        this.v = v + extra.length;
        if (v == BOOM) {
            rejected++;
            throw new IllegalStateException("rejected by the superclass");
        }
        made++;
    }
}
