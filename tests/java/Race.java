/** Race THREADS MS CODE: the workload of tests/it/lifecycle/shutdown_races.sh. Starts THREADS
 *  non-daemon threads "race-N" that call small methods, allocate and take a lock in an
 *  endless loop, so that with method and allocation events on they are always in the
 *  middle of an event. After MS ms main calls aboutToExit(CODE) (a marker the agent sees as
 *  a METHOD_ENTRY) and System.exit(CODE) while they run. With CODE < 0 main does not exit
 *  itself: it waits for the agent's ProfilerExit, and exits 99 if none comes in 60 s. */
public class Race {
    static final Object lock = new Object();
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]);
        long ms = Long.parseLong(args[1]);
        int code = Integer.parseInt(args[2]);
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(Race::work, "race-" + i);
            t.start();
        }
        Thread.sleep(ms);
        aboutToExit(code);
        if (code >= 0)
            System.exit(code);
        Thread.sleep(60000);
        System.out.println("race: no ProfilerExit came");
        System.exit(99);
    }

    static void aboutToExit(int code) {
        System.out.println("race: exiting " + code);
    }

    static void work() {
        long n = 0;
        while (true) {
            n += leaf(n);
            int[] a = new int[4 + (int) (n & 7)];
            a[0] = (int) n;
            if ((n & 15) == 0) {
                synchronized (lock) {
                    sink += a[0];
                }
            }
        }
    }

    static int leaf(long n) {
        return (int) (n & 3) + 1;
    }
}
