import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;

/** VtCensus N M: where this JVM has virtual threads (Thread.ofVirtual, found by reflection,
 *  so the class compiles and runs on JDK 17 too), N virtual threads vc-0..vc-(N-1) each call
 *  a method that sleeps in the middle; then M virtual threads vm-0..vm-(M-1) all wait on a
 *  latch at once, System.gc() is called with them alive (after the "live" marker, with half
 *  a second for the agent to hear of it), they are released and joined, and System.gc() is
 *  called again (after the "ended" marker), with nothing holding them. Prints what Java says of a
 *  virtual thread's group, and the counts. Without virtual threads it says so and stops. */
public class VtCensus {
    static volatile Object sink;

    static int work(int k) throws InterruptedException {
        sink = new int[k % 7 + 1];
        Thread.sleep(1);
        return leaf(k);
    }

    static int leaf(int k) {
        sink = new long[2];
        return k * 31;
    }

    /* A collection, and time for its GC_START/GC_FINISH to reach the agent. */
    static void settle() throws InterruptedException {
        System.gc();
        Thread.sleep(500);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), m = Integer.parseInt(args[1]);
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            System.out.println("VtCensus: no Thread.ofVirtual on this JVM");
            return;
        }
        Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
        Method name = builderClass.getMethod("name", String.class, long.class);
        Method start = builderClass.getMethod("start", Runnable.class);

        Object vc = name.invoke(ofVirtual.invoke(null), "vc-", 0L);
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            ts[i] = (Thread) start.invoke(vc, (Runnable) () -> {
                try {
                    work(k);
                    if (k == 0) {
                        ThreadGroup g = Thread.currentThread().getThreadGroup();
                        ThreadGroup p = g.getParent();
                        System.out.println("VtCensus: vthread name=" + Thread.currentThread().getName()
                                + " group=" + g.getName() + " parent=" + (p == null ? "NULL" : p.getName()));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        for (Thread t : ts)
            t.join();
        System.out.println("VtCensus: vc done n=" + n);

        Object vm = name.invoke(ofVirtual.invoke(null), "vm-", 0L);
        CountDownLatch started = new CountDownLatch(m), go = new CountDownLatch(1);
        ts = new Thread[m];
        for (int i = 0; i < m; i++)
            ts[i] = (Thread) start.invoke(vm, (Runnable) () -> {
                started.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        started.await();
        System.out.println("VtCensus: live m=" + m);
        settle();
        go.countDown();
        for (Thread t : ts)
            t.join();
        ts = null;
        System.out.println("VtCensus: ended m=" + m);
        settle();
        System.out.println("VtCensus: done n=" + n + " m=" + m);
    }
}
