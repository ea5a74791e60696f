/** BciCtor: constructors whose super(...) arguments are computed with branches and calls
 *  before `this` is initialized (frames with uninitializedThis), a this(...) delegation, and
 *  constructors left by exceptions before `this` is initialized: neg() throwing while the
 *  arguments of super(...) are computed, Integer.parseInt throwing in the arguments of
 *  this(...), and the superclass constructor throwing inside super(...) (reached directly
 *  and through this(...)). Every entry must still get its exit. */
public class BciCtor extends BciCtorBase {
    static int made, delegated, parsed, gaps;

    BciCtor(int x) {
        super(x > 0 ? pos(x) : neg(x), new int[] {x, x > 5 ? 1 : 2});
        made++;
    }

    BciCtor(int x, int y) {
        this(x + y);
        delegated++;
    }

    BciCtor(String s) {
        this(Integer.parseInt(s));
        parsed++;
    }

    static int pos(int x) {
        return x * 2;
    }

    static int neg(int x) {
        if (x < -100)
            throw new IllegalArgumentException("too small");
        return -x;
    }

    /** g constructions of each kind that throw before super() returns; returns how many
     *  were caught. */
    static int gap(int g) {
        int n = 0;
        for (int i = 0; i < g; i++) {
            try {
                new BciCtor(-1000 - i); /* neg() throws in super(...)'s arguments */
            } catch (IllegalArgumentException e) {
                n++;
                gaps++;
            }
            try {
                new BciCtor("x" + i); /* parseInt throws in this(...)'s arguments */
            } catch (NumberFormatException e) {
                n++;
                gaps++;
            }
            try {
                new BciCtor(BOOM / 2); /* the superclass throws inside super(...) */
            } catch (IllegalStateException e) {
                n++;
                gaps++;
            }
            try {
                new BciCtor(BOOM / 2 - i, i); /* the same, reached through this(...) */
            } catch (IllegalStateException e) {
                n++;
                gaps++;
            }
        }
        return n;
    }
}
