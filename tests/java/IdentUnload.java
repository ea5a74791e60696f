import java.io.InputStream;
import java.lang.ref.WeakReference;

/** IdentUnload [N]: workload of the ident_unload test (legacy-agents/ident_unload.c).
 *  1. Prints IdentHooked.text() and IdentHookGarbage.text()/sum() (the agent rewrites the
 *     first class in CLASS_LOAD_HOOK and returns garbage for the second).
 *  2. Defines IdentUnloadee through N (default 3) throw-away class loaders, uses each
 *     instance, drops everything, and collects until Java sees the classes gone (weak
 *     references cleared) and the agent has reported N unloads through the system property
 *     ident.unloads (set from its CLASS_UNLOAD handler), or 15 s pass.
 *  3. Loads IdentUnload$Done: the agent checks, in that handler, that the unloaded ids no
 *     longer resolve. */
public class IdentUnload {
    static class Done {}

    static byte[] bytes;

    static class Loader extends ClassLoader {
        Loader() {
            super(IdentUnload.class.getClassLoader());
        }

        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("IdentUnloadee"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : defineClass(name, bytes, 0, bytes.length);
            }
        }
    }

    /** In its own frame, so that nothing but the weak references survives the return. */
    @SuppressWarnings("unchecked")
    static WeakReference<Class<?>>[] loadSome(int n) throws Exception {
        WeakReference<Class<?>>[] refs = new WeakReference[n];
        for (int i = 0; i < n; i++) {
            Loader l = new Loader();
            Class<?> c = l.loadClass("IdentUnloadee");
            Object o = c.getDeclaredConstructor().newInstance();
            System.out.println("IdentUnload: loaded " + c.getName() + " #" + i + " own_loader="
                    + (c.getClassLoader() == l) + " says=" + o);
            refs[i] = new WeakReference<>(c);
        }
        return refs;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        System.out.println("IdentUnload: hooked text=" + IdentHooked.text());
        System.out.println("IdentUnload: garbage text=" + IdentHookGarbage.text() + " sum=" + IdentHookGarbage.sum(2, 3));
        try (InputStream in = IdentUnload.class.getResourceAsStream("/IdentUnloadee.class")) {
            bytes = in.readAllBytes();
        }
        WeakReference<Class<?>>[] refs = loadSome(n);
        int cleared = 0;
        String reported = null;
        long end = System.nanoTime() + 15_000_000_000L;
        int gcs = 0;
        while (System.nanoTime() < end) {
            System.gc();
            gcs++;
            Thread.sleep(100);
            cleared = 0;
            for (WeakReference<Class<?>> r : refs)
                if (r.get() == null)
                    cleared++;
            reported = System.getProperty("ident.unloads");
            if (cleared == n && reported != null && Integer.parseInt(reported) >= n)
                break;
        }
        System.out.println("IdentUnload: collected=" + cleared + " of " + n + " agent_unloads=" + reported + " gcs=" + gcs);
        Class.forName("IdentUnload$Done");
        System.out.println("IdentUnload: done");
    }
}
