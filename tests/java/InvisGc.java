import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/** Workload of tests/it/memory/invis_gc.sh: 8 threads start at once, load classes and allocate
 *  while main calls System.gc() N times and then loads InvisGcMark, whose CLASS_LOAD makes
 *  the agent (legacy-agents/invis_gc.c) call RunGC M times in all. Main waits until the
 *  JVM's own collection count (GarbageCollectorMXBean) has grown by N + M, prints it, and
 *  polls the agent's status file until the agent has seen as many GC brackets as the JVM
 *  ran collections since main began.
 *  Args: N M STATUS_FILE. Prints "InvisGc: gcs_at_main=C0 gcs_at_end=C1 forced=N agent=M"
 *  and "InvisGc: brackets_seen=K". */
public class InvisGc {
    static volatile Object sink;

    static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
            n += Math.max(0, b.getCollectionCount());
        return n;
    }

    static long readStatus(Path p) {
        try {
            return Long.parseLong(Files.readString(p).trim());
        } catch (Exception e) {
            return -1;
        }
    }

    interface Work { Object make(int i); }
    static final class A implements Work { public Object make(int i) { return new int[i % 16 + 1]; } }
    static final class B implements Work { public Object make(int i) { return new StringBuilder().append(i).toString(); } }
    static final class C implements Work { public Object make(int i) { return new Object[] { new Object(), null }; } }
    static final class D implements Work { public Object make(int i) { return new java.util.ArrayList<Integer>(i % 8); } }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int m = Integer.parseInt(args[1]);
        Path status = Path.of(args[2]);
        long c0 = gcCount();
        CountDownLatch go = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        Thread[] ts = new Thread[8];
        for (int t = 0; t < ts.length; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                try { go.await(); } catch (InterruptedException e) { return; }
                Work[] w = id % 2 == 0 ? new Work[] { new A(), new B(), new C(), new D() }
                                       : new Work[] { new D(), new C(), new B(), new A() };
                int i = 0;
                while (!stop.get() || i < 20000) {
                    sink = w[i & 3].make(i);
                    i++;
                    if ((i & 1023) == 0) Thread.yield();
                }
            }, "invis-worker-" + t);
            ts[t].start();
        }
        go.countDown();
        for (int i = 0; i < n; i++) {
            System.gc();
        }
        Class.forName("InvisGcMark");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (gcCount() < c0 + n + m && System.nanoTime() < deadline)
            Thread.sleep(10);
        stop.set(true);
        for (Thread t : ts) t.join();
        long c1 = gcCount();
        System.out.println("InvisGc: gcs_at_main=" + c0 + " gcs_at_end=" + c1 + " forced=" + n + " agent=" + m);
        deadline = System.nanoTime() + 30_000_000_000L;
        long k;
        while ((k = readStatus(status)) < c1 - c0 && System.nanoTime() < deadline)
            Thread.sleep(10);
        System.out.println("InvisGc: brackets_seen=" + k);
    }
}
