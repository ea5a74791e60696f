/** MemAlloc [thread]: workload of tests/it/memory/mem_alloc.sh (agent legacy-agents/mem_alloc.c).
 *
 *  Phases, each opened by loading a marker class on main (the agent's CLASS_LOAD handler
 *  acts there, on this thread, before Class.forName returns):
 *    Start    main allocates W MemMarker (kept)                 -- "pre"
 *    Enable   the agent enables OBJECT_ALLOC if it was not yet (late modes: in this handler,
 *             or, with argument "thread", on its own system thread, which then sets the
 *             system property jvmpishim.mem.enabled; main waits for it without allocating).
 *             Right after: main allocates N MemMarker, M int[L], K MemMarker[A] (kept), then
 *             a thread "mem-worker" loads MemAlloc$WorkerStart and allocates N2 MemMarker.
 *    End      the agent checks ids of the kept objects and RequestEvent(OBJECT_ALLOC) here.
 *    Disable  the agent disables OBJECT_ALLOC; main then allocates X MemMarker (kept).
 *    Done     the agent prints its counts.
 *  Everything allocated is kept reachable (static arrays), so escape analysis removes none.
 *  The ground truth is printed as "MemAlloc: ..." lines. */
public class MemAlloc {
    static class Start {}
    static class Enable {}
    static class WorkerStart {}
    static class End {}
    static class Disable {}
    static class Done {}

    static final int W = 5000, N = 1000, M = 500, L = 1237, K = 300, A = 3, N2 = 700, X = 1000;
    static Object[] pre, keepM, keepI, keepA, keepW, after;

    public static void main(String[] args) throws Exception {
        boolean viaThread = args.length > 0 && args[0].equals("thread");
        Class.forName("MemAlloc$Start");
        pre = new Object[W];
        for (int i = 0; i < W; i++)
            pre[i] = new MemMarker(i);
        // Size the kept arrays now, so that after enabling main allocates only what it counts.
        keepM = new Object[N];
        keepI = new Object[M];
        keepA = new Object[K];
        keepW = new Object[N2];
        after = new Object[X];
        Thread worker = new Thread(() -> {
            try {
                Class.forName("MemAlloc$WorkerStart");
            } catch (ClassNotFoundException e) {
                throw new RuntimeException(e);
            }
            for (int i = 0; i < N2; i++)
                keepW[i] = new MemMarker(i);
        }, "mem-worker");

        Class.forName("MemAlloc$Enable");
        if (viaThread) {
            long end = System.nanoTime() + 20_000_000_000L;
            while (System.getProperty("jvmpishim.mem.enabled") == null) {
                if (System.nanoTime() > end) {
                    System.out.println("MemAlloc: timeout waiting for jvmpishim.mem.enabled");
                    System.exit(3);
                }
                Thread.onSpinWait();
            }
        }
        // The burst: must be seen from its first allocation.
        for (int i = 0; i < N; i++)
            keepM[i] = new MemMarker(i);
        for (int i = 0; i < M; i++)
            keepI[i] = new int[L];
        for (int i = 0; i < K; i++)
            keepA[i] = new MemMarker[A];
        worker.start();
        worker.join();
        Class.forName("MemAlloc$End");
        Class.forName("MemAlloc$Disable");
        for (int i = 0; i < X; i++)
            after[i] = new MemMarker(i);
        Class.forName("MemAlloc$Done");
        System.out.println("MemAlloc: pre markers=" + W);
        System.out.println("MemAlloc: burst markers=" + N + " ints=" + M + " int_length=" + L
                + " arrays=" + K + " array_length=" + A + " worker_markers=" + N2);
        System.out.println("MemAlloc: after_disable markers=" + X);
        System.out.println("MemAlloc: done");
    }
}
