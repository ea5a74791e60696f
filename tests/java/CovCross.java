import java.io.InputStream;

/* CovCross — workload for tests/it/classes/cov_cross.sh: a subclass defined on one thread while its
 * interface, defined on another, is between its definition and the end of its CLASS_LOAD.
 *
 * One shared parallel-capable loader defines CovCrossIface on thread "cross-iface" and
 * CovCrossSub (implements CovCrossIface) on thread "cross-sub". cross-sub waits until the
 * loader has CovCrossIface (findLoadedClass: in the JVM's dictionary, which the JVM fills
 * before it reports the definition), then loads CovCrossSub, whose parse finds the interface
 * there without waiting for the other thread's definition to finish. Both then use their
 * class. Prints "CovCross: iface=ok sub=N" and "CovCross: done". */
public class CovCross {
    static class SharedLoader extends ClassLoader {
        static { registerAsParallelCapable(); }
        SharedLoader() { super(CovCross.class.getClassLoader()); }
        Class<?> loaded(String name) { return findLoadedClass(name); }
        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("CovCross") || name.equals("CovCross") || name.startsWith("CovCross$"))
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

    public static void main(String[] args) throws Exception {
        final SharedLoader l = new SharedLoader();
        final Object[] got = new Object[2];
        Thread iface = new Thread(() -> {
            try {
                got[0] = l.loadClass("CovCrossIface").isInterface() ? "ok" : "bad";
            } catch (Exception e) { e.printStackTrace(); System.exit(3); }
        }, "cross-iface");
        Thread sub = new Thread(() -> {
            try {
                while (l.loaded("CovCrossIface") == null)
                    Thread.onSpinWait();
                Class<?> c = l.loadClass("CovCrossSub");
                Object o = c.getDeclaredConstructor().newInstance();
                got[1] = c.getMethod("work", int.class).invoke(o, 6);
            } catch (Exception e) { e.printStackTrace(); System.exit(3); }
        }, "cross-sub");
        sub.start();
        iface.start();
        iface.join();
        sub.join();
        System.out.println("CovCross: iface=" + got[0] + " sub=" + got[1]);
        System.out.println("CovCross: done");
    }
}
