import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

/* Workload of tests/it/threads/ident_attach.sh. Its natives are exported by the JVMPI agent's
 * library (legacy-agents/ident_attach.c); nothing here loads a library, as with -Xrun
 * agents' helper classes. attach() makes 8 native threads attach at once, named
 * ident-attach-K in group identGroup; each calls fromNative(K), which prints the ground
 * truth. Meanwhile 8 Java threads start at once.
 * With the argument "gc": a security manager (where this JVM still has one) is installed
 * whose checkAccess(ThreadGroup), which the Thread constructor calls, makes garbage on a
 * thread whose Thread object is being built (an attaching thread: it has no group yet),
 * collects it with System.gc() and sleeps, so that the collection's frees come while that
 * thread's THREAD_START is still ahead. */

public class IdentAttach {
    static final int N = 8;
    static native int attach(int n, ThreadGroup group);
    static native String hello(String who);
    static volatile Object sink;

    static void fromNative(int k) {
        Thread t = Thread.currentThread();
        ThreadGroup g = t.getThreadGroup();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 100; i++)
            sb.append(i);
        sink = sb.toString();
        synchronized (IdentAttach.class) {
            System.out.println("IdentAttach: native thread " + k + " name=" + t.getName()
                               + " group=" + g.getName() + " parent=" + g.getParent().getName());
        }
    }

    /* The 8 attaching threads count at once: a volatile int++ lost an update (7 of 8). */
    static final AtomicInteger garbageRounds = new AtomicInteger();

    static final class GcInConstructor extends SecurityManager {
        @Override public void checkPermission(java.security.Permission p) {}
        @Override public void checkPermission(java.security.Permission p, Object ctx) {}
        @Override public void checkAccess(ThreadGroup g) {
            if (Thread.currentThread().getThreadGroup() != null)
                return; /* not a Thread object being built (its group is set after this) */
            for (int i = 0; i < 200; i++)
                sink = new byte[64];
            sink = null;
            System.gc();
            System.gc(); /* the first one's frees posted by the second at the latest */
            garbageRounds.incrementAndGet();
            try { Thread.sleep(300); } catch (InterruptedException e) { }
        }
    }

    @SuppressWarnings("removal")
    static boolean installGcInConstructor() {
        GcInConstructor sm = new GcInConstructor();
        sm.checkAccess(Thread.currentThread().getThreadGroup()); /* linked before use */
        try {
            System.setSecurityManager(sm);
            return true;
        } catch (UnsupportedOperationException e) {
            return false; /* this JVM has no security manager any more */
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("gc"))
            System.out.println("IdentAttach: gc in constructor " + (installGcInConstructor() ? "installed" : "unavailable"));
        System.out.println("IdentAttach: hello=" + hello("IdentAttach"));
        CyclicBarrier go = new CyclicBarrier(N);
        Thread[] ts = new Thread[N];
        for (int k = 0; k < N; k++) {
            ts[k] = new Thread(() -> {
                try { go.await(); } catch (Exception e) { throw new RuntimeException(e); }
                for (int i = 0; i < 1000; i++)
                    sink = new int[i % 50];
            }, "ident-java-" + k);
            ts[k].start();
        }
        ThreadGroup g = new ThreadGroup("identGroup");
        int n = attach(N, g);
        for (Thread t : ts)
            t.join();
        System.out.println("IdentAttach: attached=" + n);
        if (args.length > 0 && args[0].equals("gc"))
            System.out.println("IdentAttach: garbage rounds=" + garbageRounds.get());
        System.out.println("IdentAttach: done");
    }
}
