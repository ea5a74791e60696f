import java.util.concurrent.CyclicBarrier;

/* Workload of tests/it/ident_attach.sh. Its natives are exported by the JVMPI agent's
 * library (legacy-agents/ident_attach.c); nothing here loads a library, as with -Xrun
 * agents' helper classes. attach() makes 8 native threads attach at once, named
 * ident-attach-K in group identGroup; each calls fromNative(K), which prints the ground
 * truth. Meanwhile 8 Java threads start at once. */
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

    public static void main(String[] args) throws Exception {
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
        System.out.println("IdentAttach: done");
    }
}
