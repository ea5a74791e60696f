/** HprofApp [NODES] [CALLS] [SPIN] [CONTENDS] [WAITS] [PAUSE_MS]: the workload of the hprof
 * tests (tests/it/hprof/hprof_*.sh), with ground truth a profiler must find:
 *  - NODES (default 5000) HprofApp$Node objects, all allocated in HprofApp.makeNodes and all
 *    kept reachable (a static array), so each is really allocated and still live at exit;
 *  - CALLS (default 1000) calls of HprofApp.counted, from main only;
 *  - a hot method, HprofApp.spin, that runs SPIN (default 200_000_000) iterations of
 *    arithmetic without calling anything: it dominates the CPU;
 *  - CONTENDS (default 3) rounds in which thread "holder" keeps the monitor of an
 *    HprofApp$Lock for 100 ms while thread "contender" blocks entering it: exactly CONTENDS
 *    contended entries, all by "contender" in HprofApp.contend;
 *  - WAITS (default 2) Object.wait(20) calls on an HprofApp$Waiter by main (none notified);
 *  - PAUSE_MS (default 0): after the nodes are made, main prints "ready" and sleeps this
 *    long (Thread.sleep posts no event), so that a test can send SIGQUIT mid-run.
 * The last line states the counts: "HprofApp: nodes=N calls=N spin=N contends=N waits=N".
 */
public class HprofApp {
    static final class Node {
        final int value;
        Node next;
        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static final class Lock {}
    static final class Waiter {}

    static Node[] kept;
    static volatile long sink;
    static final Lock LOCK = new Lock();
    static final Waiter WAITER = new Waiter();
    static volatile boolean held, contended;

    static Node[] makeNodes(int n) {
        Node[] a = new Node[n];
        Node prev = null;
        for (int i = 0; i < n; i++) {
            prev = new Node(i, prev);
            a[i] = prev;
        }
        return a;
    }

    static int counted(int i) {
        return i * 31 + 7;
    }

    /** Arithmetic only: no calls, no allocation, a long-typed loop. */
    static long spin(long iterations) {
        long x = 0x9e3779b97f4a7c15L;
        for (long i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static void contend() {
        synchronized (LOCK) {
            contended = true;
        }
    }

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        long spins = args.length > 2 ? Long.parseLong(args[2]) : 200_000_000L;
        int contends = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        int waits = args.length > 4 ? Integer.parseInt(args[4]) : 2;
        long pauseMs = args.length > 5 ? Long.parseLong(args[5]) : 0;

        kept = makeNodes(nodes);
        if (pauseMs > 0) {
            System.out.println("ready");
            System.out.flush();
            pause(pauseMs);
        }
        long s = 0;
        for (int i = 0; i < calls; i++)
            s += counted(i);
        s += spin(spins);

        for (int round = 0; round < contends; round++) {
            held = false;
            contended = false;
            Thread holder = new Thread(() -> {
                synchronized (LOCK) {
                    held = true;
                    pause(100);
                }
            }, "holder");
            Thread contender = new Thread(() -> {
                while (!held)
                    pause(1);
                contend();
            }, "contender");
            holder.start();
            contender.start();
            holder.join();
            contender.join();
            if (!contended)
                throw new IllegalStateException("no contention in round " + round);
        }
        synchronized (WAITER) {
            for (int i = 0; i < waits; i++)
                WAITER.wait(20);
        }
        sink = s;
        System.out.println("HprofApp: nodes=" + kept.length + " calls=" + calls + " spin=" + spins +
                           " contends=" + contends + " waits=" + waits);
    }
}
