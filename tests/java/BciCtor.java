/** BciCtor: constructors whose super(...) arguments are computed with branches and calls
 *  before `this` is initialized (frames with uninitializedThis), a this(...) delegation, and
 *  the documented gap: when neg() throws while the arguments of super(...) are computed, the
 *  constructor was entered but gets no exit probe (no handler may cover that code). */
public class BciCtor extends BciCtorBase {
    static int made, delegated, gaps;

    BciCtor(int x) {
        super(x > 0 ? pos(x) : neg(x), new int[] {x, x > 5 ? 1 : 2});
        made++;
    }

    BciCtor(int x, int y) {
        this(x + y);
        delegated++;
    }

    static int pos(int x) {
        return x * 2;
    }

    static int neg(int x) {
        if (x < -100)
            throw new IllegalArgumentException("too small");
        return -x;
    }

    /** g constructions that throw before super() returns; returns how many were caught. */
    static int gap(int g) {
        int n = 0;
        for (int i = 0; i < g; i++) {
            try {
                new BciCtor(-1000 - i);
            } catch (IllegalArgumentException e) {
                n++;
                gaps++;
            }
        }
        return n;
    }
}
