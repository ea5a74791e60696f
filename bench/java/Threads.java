/* Threads — many threads making calls at once.
 *
 *   java Threads [THREADS [CALLS_PER_THREAD]]     (default 32 threads, 2,000,000 calls each)
 *
 * Every thread runs the MethodCalls loop (one megamorphic interface call per iteration).
 * The threads wait at a latch, so the timed part is only the concurrent calls: from
 * releasing the latch to the last join. Prints
 *   BENCH Threads threads=K calls=N elapsed_ms=T cpu_ms=C result=R
 * where N is the total number of calls made in the timed part and C the CPU time the
 * calling threads used for them, summed.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import java.util.concurrent.CountDownLatch;

public class Threads {
    interface Op { long apply(long acc, int i); }
    static final class Add implements Op { public long apply(long a, int i) { return a + i; } }
    static final class Xor implements Op { public long apply(long a, int i) { return a ^ (i * 31L); } }
    static final class Mul implements Op { public long apply(long a, int i) { return a * 3 + 1; } }
    static final class Rot implements Op { public long apply(long a, int i) { return Long.rotateLeft(a, i & 7); } }

    static long work(long calls, int seed) {
        Op[] ops = {new Add(), new Xor(), new Mul(), new Rot()};
        long acc = seed;
        for (long n = 0; n < calls; n++) {
            int i = (int) n + seed;
            acc = ops[i & 3].apply(acc, i);
        }
        return acc;
    }

    public static void main(String[] args) throws Exception {
        int nthreads = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        long perThread = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000L;
        CountDownLatch go = new CountDownLatch(1);
        long[] results = new long[nthreads];
        long[] cpus = new long[nthreads];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        mx.getCurrentThreadCpuTime();
        Thread[] ts = new Thread[nthreads];
        for (int t = 0; t < nthreads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                try { go.await(); } catch (InterruptedException e) { return; }
                long c0 = mx.getCurrentThreadCpuTime();
                results[id] = work(perThread, id);
                cpus[id] = mx.getCurrentThreadCpuTime() - c0;
            }, "bench-" + t);
            ts[t].start();
        }
        long t0 = System.nanoTime();
        go.countDown();
        for (Thread t : ts)
            t.join();
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        long r = 0, cpu = 0;
        for (int t = 0; t < nthreads; t++) {
            r ^= results[t];
            cpu += cpus[t];
        }
        System.out.println("BENCH Threads threads=" + nthreads + " calls=" + (nthreads * perThread)
                + " elapsed_ms=" + ms + " cpu_ms=" + cpu / 1_000_000L + " result=" + r);
    }
}
