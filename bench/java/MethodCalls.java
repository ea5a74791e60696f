/* MethodCalls — a tight loop of small calls the JIT cannot inline.
 *
 *   java MethodCalls [CALLS]      (default 50,000,000)
 *
 * Each iteration makes one megamorphic interface call (four implementations, picked by the
 * loop index, so C2 cannot inline it), i.e. CALLS Java method invocations in the timed loop,
 * each of which a method-event agent sees as one entry and one exit. Prints
 *   BENCH MethodCalls calls=N elapsed_ms=T cpu_ms=C result=R
 * with T measured inside Java around the loop only (not JVM start-up or exit) and C the
 * CPU time of the main thread over the same span (less sensitive to other load on the box).
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class MethodCalls {
    interface Op { long apply(long acc, int i); }
    static final class Add implements Op { public long apply(long a, int i) { return a + i; } }
    static final class Xor implements Op { public long apply(long a, int i) { return a ^ (i * 31L); } }
    static final class Mul implements Op { public long apply(long a, int i) { return a * 3 + 1; } }
    static final class Rot implements Op { public long apply(long a, int i) { return Long.rotateLeft(a, i & 7); } }

    public static void main(String[] args) {
        long calls = args.length > 0 ? Long.parseLong(args[0]) : 50_000_000L;
        Op[] ops = {new Add(), new Xor(), new Mul(), new Rot()};
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long acc = 1;
        long c0 = mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (long n = 0; n < calls; n++) {
            int i = (int) n;
            acc = ops[i & 3].apply(acc, i);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        long cpu = (mx.getCurrentThreadCpuTime() - c0) / 1_000_000L;
        System.out.println("BENCH MethodCalls calls=" + calls + " elapsed_ms=" + ms + " cpu_ms=" + cpu + " result=" + acc);
    }
}
