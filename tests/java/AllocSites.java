import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/** AllocSites: the workload of tests/it/classes/alloc_sites.sh (agent
 *  legacy-agents/alloc_sites.c, an allocation-site profiler keyed by class). It allocates
 *  known numbers of objects of its own classes at known sites and keeps every one of them
 *  reachable to the end (so no allocation is optimized away and every count is exact):
 *    APPLES AllocSites$Apple in makeApples, called from main;
 *    PEARS AllocSites$Pear in makePears, called by 4 threads "alloc-sites-N" (PEARS/4 each);
 *    PLUMS AllocSites$Plum in makePlum, called from makePlums (one object a call);
 *    LOADERS fresh class loaders each define AllocSitesLoadee from its class file and make
 *    PER_LOADEE instances of it in makeLoadees (a new class, and Class object, each time).
 *  Ground truth lines: "AllocSites: count NAME N" and "AllocSites: site NAME METHOD N"
 *  (METHOD: Class.method that executes the new), then "AllocSites: done". */
public class AllocSites {
    static final class Apple {
        int a;
        Apple(int a) { this.a = a; }
    }

    static final class Pear {
        long p;
        Object ref;
    }

    static final class Plum {
        short s;
    }

    static final int APPLES = 1500, PEARS = 2400, PLUMS = 700, LOADERS = 20, PER_LOADEE = 3;
    static final List<Object> keep = new ArrayList<>();
    static byte[] loadeeBytes;

    static Apple[] makeApples(int n) {
        Apple[] a = new Apple[n];
        for (int i = 0; i < n; i++)
            a[i] = new Apple(i);
        return a;
    }

    static Pear[] makePears(int n) {
        Pear[] a = new Pear[n];
        for (int i = 0; i < n; i++)
            a[i] = new Pear();
        return a;
    }

    static Plum makePlum() {
        return new Plum();
    }

    static Plum[] makePlums(int n) {
        Plum[] a = new Plum[n];
        for (int i = 0; i < n; i++)
            a[i] = makePlum();
        return a;
    }

    static final class Loader extends ClassLoader {
        Loader() { super(AllocSites.class.getClassLoader()); }

        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("AllocSitesLoadee"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : defineClass(name, loadeeBytes, 0, loadeeBytes.length);
            }
        }
    }

    static Object[] makeLoadees(Class<?> c, int n) throws Exception {
        Object[] a = new Object[n];
        for (int i = 0; i < n; i++)
            a[i] = c.getDeclaredConstructor().newInstance();
        return a;
    }

    public static void main(String[] args) throws Exception {
        try (InputStream in = AllocSites.class.getResourceAsStream("/AllocSitesLoadee.class")) {
            loadeeBytes = in.readAllBytes();
        }
        keep.add(makeApples(APPLES));
        Thread[] ts = new Thread[4];
        Object[] got = new Object[4];
        for (int t = 0; t < 4; t++) {
            final int k = t;
            ts[t] = new Thread(() -> got[k] = makePears(PEARS / 4), "alloc-sites-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        for (Object o : got)
            keep.add(o);
        keep.add(makePlums(PLUMS));
        for (int l = 0; l < LOADERS; l++) {
            Class<?> c = new Loader().loadClass("AllocSitesLoadee");
            keep.add(c);
            keep.add(makeLoadees(c, PER_LOADEE));
        }
        System.out.println("AllocSites: count AllocSites$Apple " + APPLES);
        System.out.println("AllocSites: count AllocSites$Pear " + PEARS);
        System.out.println("AllocSites: count AllocSites$Plum " + PLUMS);
        System.out.println("AllocSites: count AllocSitesLoadee " + LOADERS * PER_LOADEE);
        System.out.println("AllocSites: site AllocSites$Apple AllocSites.makeApples " + APPLES);
        System.out.println("AllocSites: site AllocSites$Pear AllocSites.makePears " + PEARS);
        System.out.println("AllocSites: site AllocSites$Plum AllocSites.makePlum " + PLUMS);
        System.out.println("AllocSites: kept " + keep.size());
        System.out.println("AllocSites: done");
    }
}
