/** BciThrow: an exception thrown through three frames (thrower -> mid -> top) and caught by
 *  the caller, with try/catch/finally in the frames it unwinds. Every frame gets its exit
 *  probe through the catch-all handler: entries == exits, and the thread's depth is back at
 *  its old value after each call. The counters are the ground truth. */
public class BciThrow {
    static int topCalls, midCalls, throwerCalls, finallyRuns, caught;

    static int top(int i) {
        topCalls++;
        try {
            return mid(i) + 1;
        } finally {
            finallyRuns++;
        }
    }

    static int mid(int i) {
        midCalls++;
        try {
            return thrower(i) + 1;
        } catch (ArithmeticException e) {
            return -1; /* not this one: the exception passes through */
        }
    }

    static int thrower(int i) {
        throwerCalls++;
        if (i >= 0)
            throw new IllegalStateException("bci " + i);
        return i;
    }

    /** n calls of top(): those with i >= 0 throw through all three frames. */
    static int run(int n) {
        int sum = 0;
        for (int i = -n / 2; i < n - n / 2; i++) {
            try {
                sum += top(i);
            } catch (IllegalStateException e) {
                caught++;
            }
        }
        return sum;
    }
}
