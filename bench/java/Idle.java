/* Idle — a mixed workload for the agent that enables no event: what a profiler costs
 * merely by being loaded.
 *
 *   java Idle [ITERATIONS]        (default 20,000,000)
 *
 * Each iteration: a megamorphic call, a synchronized method on a shared object, and every
 * 4th iteration a small allocation kept in a ring; every 1,024th a StringBuilder/String.
 * A second thread takes the same lock 100 times every millisecond, so some acquisitions
 * are contended.
 * Prints  BENCH Idle iterations=N elapsed_ms=T cpu_ms=C result=R  (T measured inside Java
 * around the loop, C the main thread's CPU time over it).
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Idle {
    interface Op { long apply(long acc, int i); }
    static final class Add implements Op { public long apply(long a, int i) { return a + i; } }
    static final class Xor implements Op { public long apply(long a, int i) { return a ^ (i * 31L); } }
    static final class Mul implements Op { public long apply(long a, int i) { return a * 3 + 1; } }

    static final class Counter {
        private long n;
        synchronized void add(long d) { n += d; }
        synchronized long get() { return n; }
    }

    static final class Box {
        final long v;
        Box(long v) { this.v = v; }
    }

    static volatile boolean done;

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20_000_000;
        Op[] ops = {new Add(), new Xor(), new Mul()};
        Counter counter = new Counter();
        Box[] ring = new Box[4096];
        String[] strings = new String[64];
        Thread other = new Thread(() -> {
            while (!done) {
                for (int k = 0; k < 100; k++)
                    counter.add(1);
                try { Thread.sleep(1); } catch (InterruptedException e) { return; }
            }
        }, "idle-other");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long acc = 1;
        long c0 = mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        other.start();
        for (int i = 0; i < iterations; i++) {
            acc = ops[i % 3].apply(acc, i);
            counter.add(acc & 1);
            if ((i & 3) == 0)
                ring[(i >>> 2) & 4095] = new Box(acc);
            if ((i & 1023) == 0)
                strings[(i >>> 10) & 63] = new StringBuilder("s").append(i).append(acc).toString();
        }
        done = true;
        other.join();
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        long cpu = (mx.getCurrentThreadCpuTime() - c0) / 1_000_000L;
        long check = counter.get() + ring[7].v + strings[3].length();
        System.out.println("BENCH Idle iterations=" + iterations + " elapsed_ms=" + ms + " cpu_ms=" + cpu + " result=" + check);
    }
}
