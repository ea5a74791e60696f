/** MultiWork: workload of tests/it/lifecycle/multi_agent.sh (two legacy agents,
 *  legacy-agents/multi.c, in one JVM).
 *
 *  main allocates MAIN_TARGETS MultiTarget objects (the first is KNOWN, value 42) and calls
 *  mark() on each MAIN_MARKS times; the thread "multi-worker" allocates WORKER_TARGETS more
 *  and marks each WORKER_MARKS times. Every target stays reachable from ALL, so no
 *  allocation is optimised away and all are in a heap dump. main then loads the marker
 *  class MultiWork$End: the agents' CLASS_LOAD handler for it runs on main, before
 *  Class.forName returns, with every target alive (ids, heap dumps, TLS checks there).
 *  Before that, for the monitor events: main enters LOCK while "multi-holder" holds it
 *  (one contended enter), then waits on it for 10 ms (one timed wait).
 *  The ground truth is printed as "MultiWork: ..." lines. */
public class MultiWork {
    static class End {}

    static final int MAIN_TARGETS = 2, MAIN_MARKS = 3, WORKER_TARGETS = 3, WORKER_MARKS = 2;
    static final MultiTarget[] ALL = new MultiTarget[MAIN_TARGETS + WORKER_TARGETS];
    static MultiTarget KNOWN;
    static final Object LOCK = new Object();
    static volatile boolean held;

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < MAIN_TARGETS; i++)
            ALL[i] = new MultiTarget(i == 0 ? 42 : i);
        KNOWN = ALL[0];
        for (int i = 0; i < MAIN_TARGETS; i++)
            for (int k = 0; k < MAIN_MARKS; k++)
                ALL[i].mark();
        Thread worker = new Thread(new Runnable() {
            public void run() {
                for (int i = 0; i < WORKER_TARGETS; i++)
                    ALL[MAIN_TARGETS + i] = new MultiTarget(100 + i);
                for (int i = 0; i < WORKER_TARGETS; i++)
                    for (int k = 0; k < WORKER_MARKS; k++)
                        ALL[MAIN_TARGETS + i].mark();
            }
        }, "multi-worker");
        worker.start();
        worker.join();
        final Thread mainThread = Thread.currentThread();
        Thread holder = new Thread(new Runnable() {
            public void run() {
                synchronized (LOCK) {
                    held = true;
                    try {
                        // Release only once main is blocked on LOCK (at most 10 s), so the
                        // enter is contended however slowly main gets there.
                        for (int i = 0; i < 10000 && mainThread.getState() != Thread.State.BLOCKED; i++)
                            Thread.sleep(1);
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            }
        }, "multi-holder");
        holder.start();
        while (!held)
            Thread.sleep(1);
        synchronized (LOCK) { // blocks until multi-holder leaves
            LOCK.wait(10);
        }
        holder.join();
        System.out.println("MultiWork: monitors contended=1 waits=1");
        System.out.println("MultiWork: targets main=" + MAIN_TARGETS + " worker=" + WORKER_TARGETS
                + " marks main=" + MAIN_TARGETS * MAIN_MARKS + " worker=" + WORKER_TARGETS * WORKER_MARKS);
        Class.forName("MultiWork$End");
        System.out.println("MultiWork: done known=" + KNOWN.value);
    }
}
