/** BciBig: a method whose rewritten code (with instruction probes, about 5x the original) no
 *  longer lets its branches reach with 16-bit offsets: the if over the long body becomes
 *  if<!cond> +8; goto_w, with a new StackMapTable frame, and the loop's back branch a goto_w.
 *  big(n) must equal reference(n), which computes the same with a short loop. */
public class BciBig {
    static final int REPS = 350;

    static int big(int n) {
        int s = 17;
        for (int i = 0; i < n; i++) {
            if ((i & 1) == 0) {
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
                s = s * 31 + i; s ^= s >>> 7; s = s * 31 + i; s ^= s >>> 7;
            } else {
                s += i;
            }
        }
        return s;
    }

    static int reference(int n) {
        int s = 17;
        for (int i = 0; i < n; i++) {
            if ((i & 1) == 0) {
                for (int r = 0; r < REPS; r++) {
                    s = s * 31 + i;
                    s ^= s >>> 7;
                }
            } else {
                s += i;
            }
        }
        return s;
    }
}
