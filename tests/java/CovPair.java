import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;

/* CovPair — workload for the per-thread hook/CLASS_LOAD pairing (tests/it/classes/cov_pair.sh) and
 * for the JIT-symbol agent (tests/it/methods/jit_symbols.sh).
 *
 * 8 threads start at once and, through loaders of their own, each define the classes
 * CovPairWork, CovPairBase, CovPairSub (extends CovPairBase, implements CovPairIface; the base
 * class names the subclass in a method, so verifying the base needs the subclass) and run
 * their code: the same names, distinct classes, on 8 threads at the same moment. Then all 8
 * load CovPairShared through one shared parallel-capable loader at once (one of them defines
 * it). Last, main defines CovPairLate with Class.forName(name, false, loader) (defined, not
 * linked), and another thread links and uses it.
 * Prints "CovPair: loaders=N late=ok" and "CovPair: done". */
public class CovPair {
    static final int THREADS = 8, ROUNDS = Integer.getInteger("covpair.rounds", 3);

    /* Defines the CovPair* classes itself (from the class path's bytes); delegates the rest. */
    static class OwnLoader extends ClassLoader {
        static { registerAsParallelCapable(); }
        OwnLoader() { super(CovPair.class.getClassLoader()); }
        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("CovPair") || name.startsWith("CovPair$") || name.equals("CovPair"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getParent().getResourceAsStream(name + ".class")) {
                        byte[] b = in.readAllBytes();
                        c = defineClass(name, b, 0, b.length);
                    } catch (java.io.IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (resolve)
                    resolveClass(c);
                return c;
            }
        }
    }

    static volatile long sink;

    static long use(Class<?> c, int arg) throws Exception {
        Object o = c.getDeclaredConstructor().newInstance();
        return ((Number) c.getMethod("work", int.class).invoke(o, arg)).longValue();
    }

    public static void main(String[] args) throws Exception {
        final CyclicBarrier start = new CyclicBarrier(THREADS), shared = new CyclicBarrier(THREADS);
        final OwnLoader sharedLoader = new OwnLoader();
        final int[] loaders = new int[1];
        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                try {
                    start.await();
                    for (int r = 0; r < ROUNDS; r++) {
                        OwnLoader l = new OwnLoader();
                        synchronized (loaders) { loaders[0]++; }
                        sink += use(l.loadClass("CovPairSub"), k + r);  // Sub first: Base, Iface during its parse
                        sink += use(l.loadClass("CovPairWork"), k * r);
                        sink += use(Class.forName("CovPairBase", true, l), r);
                    }
                    shared.await();
                    sink += use(sharedLoader.loadClass("CovPairShared"), k);
                } catch (Exception e) {
                    e.printStackTrace();
                    System.exit(3);
                }
            }, "covpair-" + i);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();

        /* Defined on main, not linked; linked and used on another thread. */
        OwnLoader ll = new OwnLoader();
        final Class<?> late = Class.forName("CovPairLate", false, ll);
        final long[] got = new long[1];
        Thread user = new Thread(() -> {
            try { got[0] = use(late, 5); } catch (Exception e) { e.printStackTrace(); System.exit(3); }
        }, "covpair-user");
        user.start();
        user.join();
        System.out.println("CovPair: loaders=" + loaders[0] + " late=" + (got[0] == 25 ? "ok" : "bad " + got[0]));
        System.out.println("CovPair: done");
    }
}
