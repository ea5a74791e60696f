/** ExecCtor: constructors left by an exception before `this` is initialized, each of which
 *  must still get its METHOD_EXIT: an argument of super(...) throws (check), an argument of
 *  this(...) throws (Integer.parseInt), the superclass constructor throws inside super(...)
 *  (reached directly and through this(...)). */
public class ExecCtor extends ExecCtorBase {
    ExecCtor(int x) {
        super(check(x));
    }

    ExecCtor(int x, int y) {
        this(x + y);
    }

    ExecCtor(String s) {
        this(Integer.parseInt(s));
    }

    static int check(int x) {
        if (x < 0)
            throw new IllegalArgumentException("negative");
        return x;
    }

    /** n of each kind; returns the exceptions caught (4 n). */
    static int loop(int n) {
        int caught = 0;
        for (int i = 0; i < n; i++) {
            try { new ExecCtor(-1 - i); } catch (IllegalArgumentException e) { caught++; }
            try { new ExecCtor("x" + i); } catch (NumberFormatException e) { caught++; }
            try { new ExecCtor(BOOM); } catch (IllegalStateException e) { caught++; }
            try { new ExecCtor(BOOM - i, i); } catch (IllegalStateException e) { caught++; }
        }
        return caught;
    }
}
