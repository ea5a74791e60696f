/* VtMany — many short tasks, each on a thread of its own: virtual or platform.
 *
 *   java VtMany virtual|platform TASKS [LIVE]
 *
 * Each task calls a few methods and, in the middle of one, Thread.yield() (a virtual thread
 * unmounts there and goes on, perhaps on another carrier). Tasks start in batches of 1000
 * that are joined before the next batch. A warm-up pass of TASKS/10 tasks runs first; the
 * timed part is the TASKS tasks after it. Prints
 *   BENCH VtMany kind=K tasks=N elapsed_ms=T cpu_ms=C result=R
 * (C: the whole process's CPU time over the timed part, the JVM's own threads included).
 * With LIVE > 0 (virtual only), LIVE virtual threads then wait on a latch at once; the
 * program prints "VtMany: live=LIVE", calls System.gc() and waits a second (the agent reads
 * the memory in use at that collection), releases and joins them, prints "VtMany: ended",
 * and does the same again. Thread.ofVirtual is found by reflection: the class compiles on
 * JDK 17, where "virtual" prints "VtMany: no virtual threads" and exits.
 */
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;

public class VtMany {
    static volatile long sink;

    static long leaf(long x) { return x * 31 + 7; }

    static long middle(int k) {
        long s = leaf(k);
        Thread.yield();
        return s + leaf(s);
    }

    static long work(int k) {
        long s = 0;
        for (int i = 0; i < 4; i++)
            s += leaf(k + i);
        sink = new long[2].length;
        return s + middle(k);
    }

    interface Starter { Thread start(Runnable r) throws Exception; }

    static long run(Starter st, int tasks) throws Exception {
        final int batch = 1000;
        Thread[] ts = new Thread[batch];
        long[] res = new long[batch];
        long total = 0;
        for (int base = 0; base < tasks; base += batch) {
            int n = Math.min(batch, tasks - base);
            for (int j = 0; j < n; j++) {
                final int k = base + j, slot = j;
                ts[j] = st.start(() -> res[slot] = work(k));
            }
            for (int j = 0; j < n; j++) {
                ts[j].join();
                total += res[j];
            }
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        int tasks = Integer.parseInt(args[1]);
        int live = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        Starter st;
        if (kind.equals("virtual")) {
            Method ofVirtual;
            try {
                ofVirtual = Thread.class.getMethod("ofVirtual");
            } catch (NoSuchMethodException e) {
                System.out.println("VtMany: no virtual threads");
                return;
            }
            Class<?> bc = Class.forName("java.lang.Thread$Builder");
            Object builder = ofVirtual.invoke(null);
            Method start = bc.getMethod("start", Runnable.class);
            st = r -> (Thread) start.invoke(builder, r);
        } else {
            st = r -> {
                Thread t = new Thread(r);
                t.start();
                return t;
            };
        }
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        run(st, Math.max(1, tasks / 10));
        long c0 = os.getProcessCpuTime(), t0 = System.nanoTime();
        long r = run(st, tasks);
        long ms = (System.nanoTime() - t0) / 1_000_000, cpu = (os.getProcessCpuTime() - c0) / 1_000_000;
        System.out.println("BENCH VtMany kind=" + kind + " tasks=" + tasks + " elapsed_ms=" + ms + " cpu_ms=" + cpu + " result=" + r);
        if (live > 0 && kind.equals("virtual")) {
            CountDownLatch started = new CountDownLatch(live), go = new CountDownLatch(1);
            Thread[] ts = new Thread[live];
            for (int i = 0; i < live; i++)
                ts[i] = st.start(() -> {
                    started.countDown();
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            started.await();
            System.out.println("VtMany: live=" + live);
            System.gc();
            Thread.sleep(1000);
            go.countDown();
            for (Thread t : ts)
                t.join();
            ts = null;
            System.out.println("VtMany: ended");
            System.gc();
            Thread.sleep(1000);
        }
    }
}
