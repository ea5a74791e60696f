/* CallTrace — threads held at a known stack depth, for the calltrace scenario's samplers.
 *
 *   java CallTrace [PARKED [RUNNING [DEPTH]]]       (default 6 parked, 2 running, depth 100)
 *
 * PARKED threads ("ctbench-parked-N") recurse DEPTH frames deep through a fixed chain of
 * methods and park there for good: their stacks are the same in every run, so two agents
 * sampling them must report the same frames. RUNNING threads ("ctbench-running-N") recurse
 * as deep and then keep computing in a loop at that depth, so a sampler also meets threads
 * that are on a CPU. When every thread is at its depth, main starts a thread named
 * "ctbench-go": the benchmark agents take that THREAD_START as the signal to sample. The
 * agents end the JVM when they are done (JVMPI ProfilerExit, or System.exit); main gives up
 * after 240 s and exits with status 1, so an agent that never samples shows as a failure.
 * Prints "CTREADY parked=P running=R depth=D" when the threads are in place.
 */
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public class CallTrace {
    static CountDownLatch ready;
    static volatile long sink;

    // Three methods in turn, so a frame's method and line depend on its depth.
    static long a(int n, boolean park) {
        if (n <= 0)
            return bottom(park);
        return b(n - 1, park) + 1;
    }
    static long b(int n, boolean park) {
        if (n <= 0)
            return bottom(park);
        return c(n - 1, park) + 2;
    }
    static long c(int n, boolean park) {
        if (n <= 0)
            return bottom(park);
        return a(n - 1, park) + 3;
    }

    static long bottom(boolean park) {
        ready.countDown();
        if (park) {
            for (;;)
                LockSupport.park();
        }
        long x = 1;
        for (long i = 0; ; i++) {
            x = step(x, i);
            if ((i & 0xfffff) == 0) {
                sink = x;
                Thread.yield();
            }
        }
    }

    static long step(long x, long i) {
        return x * 31 + (i ^ (x >>> 7));
    }

    public static void main(String[] args) throws Exception {
        int parked = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int running = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        ready = new CountDownLatch(parked + running);
        for (int i = 0; i < parked + running; i++) {
            final boolean park = i < parked;
            String name = park ? "ctbench-parked-" + i : "ctbench-running-" + (i - parked);
            Thread t = new Thread(() -> sink = a(depth, park), name);
            t.setDaemon(true);
            t.start();
        }
        ready.await();
        System.out.println("CTREADY parked=" + parked + " running=" + running + " depth=" + depth);
        System.out.flush();
        Thread go = new Thread(() -> { }, "ctbench-go");
        go.start();
        go.join();
        Thread.sleep(240_000);
        System.out.println("CallTrace: no agent ended the run within 240 s");
        System.exit(1);
    }
}
