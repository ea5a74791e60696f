/** ExecCtorBase: superclass of ExecCtor; rejects v == BOOM after its own work, so that a
 *  subclass constructor is left by an exception thrown inside its super(...) call. */
public class ExecCtorBase {
    static final int BOOM = 4242;
    final int v;

    ExecCtorBase(int v) {
        this.v = v;
        if (v == BOOM)
            throw new IllegalStateException("rejected by the superclass");
    }
}
