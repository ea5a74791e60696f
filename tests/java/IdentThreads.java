/** IdentThreads [K]: ground truth for the ident_threads test (legacy-agents/ident_threads.c).
 *
 * Starts K (default 20) threads named ident-worker-NN in a new ThreadGroup "identGroup", a
 * child of main's group "main". Worker NN prints what Java says about itself (name, group,
 * the group's parent), loads the nested class IdentThreads$WNN (so the agent gets a
 * CLASS_LOAD on that worker), does a little work and ends. main joins them all, then loads
 * IdentThreads$Done: the agent runs its late checks in that CLASS_LOAD handler. */
public class IdentThreads {
    static class W00 {} static class W01 {} static class W02 {} static class W03 {}
    static class W04 {} static class W05 {} static class W06 {} static class W07 {}
    static class W08 {} static class W09 {} static class W10 {} static class W11 {}
    static class W12 {} static class W13 {} static class W14 {} static class W15 {}
    static class W16 {} static class W17 {} static class W18 {} static class W19 {}
    static class Done {}

    static volatile long sink;

    static void describe(String what, Thread t) {
        ThreadGroup g = t.getThreadGroup();
        ThreadGroup p = g == null ? null : g.getParent();
        System.out.println("IdentThreads: " + what + " name=" + t.getName() + " group="
                + (g == null ? "NULL" : g.getName()) + " parent=" + (p == null ? "NULL" : p.getName()));
    }

    static void work(int n) {
        describe("worker", Thread.currentThread());
        try {
            Class.forName(String.format("IdentThreads$W%02d", n));
        } catch (ClassNotFoundException e) {
            throw new RuntimeException(e);
        }
        long s = 0;
        for (int i = 0; i < 200_000; i++)
            s += i ^ n;
        sink += s;
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        int k = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        describe("main", Thread.currentThread());
        ThreadGroup g = new ThreadGroup("identGroup");
        Thread[] ts = new Thread[k];
        for (int i = 0; i < k; i++) {
            final int n = i;
            ts[i] = new Thread(g, new Runnable() {
                public void run() {
                    work(n);
                }
            }, String.format("ident-worker-%02d", i));
        }
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        System.out.println("IdentThreads: joined k=" + k);
        Class.forName("IdentThreads$Done");
        System.out.println("IdentThreads: done k=" + k);
    }
}
