/* IdsWork.java — workload for tests/it/memory/ids_resolve.sh (agent legacy-agents/ids_tracer.c).
 *
 * Three classes whose instances differ only in size: IdsWork.A {int serial}, B {int serial;
 * long x, y}, C {int serial; long a..f}; each declares its own touch(), so the receiver of
 * X.touch() is an X.
 *
 * "ensure" THREADS PER: THREADS threads start at once; thread t makes PER objects, A, B, C in
 * turn (serials t*PER + i), calls touch() on each twice, and keeps them until every thread is
 * done. Prints "IdsWork: ensure A=<n> B=<n> C=<n>": how many of each got touch() calls.
 * With a fourth argument HEAP (the benchmark), HEAP one-element int arrays are made and kept
 * first (arrays have no constructor, so building the heap posts no METHOD_ENTRY2), and "BENCH ensure heap=HEAP elapsed_ms=T" times the threads' part.
 *
 * "badids" NA NB CALLS: keeps NA As and NB Bs, sets jvmpishim.ids.ready, waits for
 * jvmpishim.ids.drop, drops the As and collects (System.gc() three times), sets
 * jvmpishim.ids.calls=CALLS and jvmpishim.ids.dropped, and waits for jvmpishim.ids.done.
 *
 * "fresh" HEAP N: keeps HEAP one-element int arrays, then N times defines IdsWork$Fresh in a
 * new class loader (so N classes of that name), makes one of it and passes it to the native
 * convert(Object) of the agent library (the agent asks for the ids as they are handed out:
 * option "fresh"). Prints "BENCH fresh heap=HEAP classes=N elapsed_ms=T".
 *
 * "dumpask" NA NB NC K: keeps NA As, NB Bs, NC Cs (serials 0..n-1 per class) and K arrays
 * A[2], A[4] .. A[2K] in statics (the As themselves are held in an Object[]), prints "IdsWork: dumpask A=.. B=.. C=.. arrays=K", sets the
 * system property jvmpishim.ids.ready and waits (at most 120 s) for jvmpishim.ids.done, set by
 * the agent after its dump and its requests; then prints "IdsWork: done=<value>".
 */
import java.util.concurrent.CountDownLatch;

public class IdsWork {
    static final class A { int serial; A(int s) { serial = s; } int touch() { return serial; } }
    static final class B { int serial; long x, y; B(int s) { serial = s; x = s; y = -s; } int touch() { return serial + (int) (x - y); } }
    static final class C { int serial; long a, b, c, d, e, f; C(int s) { serial = s; a = s; f = s; } int touch() { return serial + (int) (a + f); } }

    public static final class Fresh { public int v = 7; }
    static native void convert(Object o);

    static Object[] as; static B[] bs; static C[] cs; static A[][] arrays;
    static volatile int sink;

    public static void main(String[] args) throws Exception {
        if (args[0].equals("ensure")) {
            int heap = args.length > 3 ? Integer.parseInt(args[3]) : 0;
            Object[] keep = new Object[heap];
            for (int i = 0; i < heap; i++) keep[i] = new int[] {i}; /* no constructor: no ENTRY2 */
            long t0 = System.nanoTime();
            ensure(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            long t1 = System.nanoTime();
            System.out.println("BENCH ensure heap=" + keep.length + " elapsed_ms=" + (t1 - t0) / 1000000);
        }
        else if (args[0].equals("fresh")) fresh(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        else if (args[0].equals("badids")) badids(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        else dumpask(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
    }

    static void fresh(int heap, int n) throws Exception {
        Object[] keep = new Object[heap];
        for (int i = 0; i < heap; i++) keep[i] = new int[] {i};
        byte[] bytes;
        try (java.io.InputStream in = IdsWork.class.getResourceAsStream("IdsWork$Fresh.class")) {
            bytes = in.readAllBytes();
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            ClassLoader l = new ClassLoader(IdsWork.class.getClassLoader()) {
                @Override protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                    if (!name.equals("IdsWork$Fresh")) return super.loadClass(name, resolve);
                    synchronized (getClassLoadingLock(name)) {
                        Class<?> c = findLoadedClass(name);
                        return c != null ? c : defineClass(name, bytes, 0, bytes.length);
                    }
                }
            };
            Object o = l.loadClass("IdsWork$Fresh").getConstructor().newInstance();
            convert(o);
        }
        long t1 = System.nanoTime();
        System.out.println("BENCH fresh heap=" + keep.length + " classes=" + n + " elapsed_ms=" + (t1 - t0) / 1000000);
    }

    static void ensure(int threads, int per) throws Exception {
        CountDownLatch start = new CountDownLatch(1), done = new CountDownLatch(threads), release = new CountDownLatch(1);
        int[][] counts = new int[threads][3];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int tt = t;
            ts[t] = new Thread(() -> {
                try {
                    start.await();
                    Object[] keep = new Object[per];
                    int s = 0;
                    for (int i = 0; i < per; i++) {
                        int serial = tt * per + i;
                        switch (i % 3) {
                        case 0: { A o = new A(serial); keep[i] = o; s += o.touch() + o.touch(); counts[tt][0]++; break; }
                        case 1: { B o = new B(serial); keep[i] = o; s += o.touch() + o.touch(); counts[tt][1]++; break; }
                        default: { C o = new C(serial); keep[i] = o; s += o.touch() + o.touch(); counts[tt][2]++; break; }
                        }
                    }
                    sink += s;
                    done.countDown();
                    release.await();
                    sink += keep.length;
                } catch (InterruptedException e) { throw new RuntimeException(e); }
            }, "ids-" + t);
            ts[t].start();
        }
        start.countDown();
        done.await();
        release.countDown();
        for (Thread t : ts) t.join();
        int a = 0, b = 0, c = 0;
        for (int[] k : counts) { a += k[0]; b += k[1]; c += k[2]; }
        System.out.println("IdsWork: ensure A=" + a + " B=" + b + " C=" + c);
    }

    static String await(String prop) throws InterruptedException {
        String v = null;
        long end = System.nanoTime() + 300_000_000_000L;
        while ((v = System.getProperty(prop)) == null && System.nanoTime() < end)
            Thread.sleep(10);
        return v;
    }

    static void badids(int na, int nb, int calls) throws Exception {
        as = new Object[na]; bs = new B[nb];
        for (int i = 0; i < na; i++) as[i] = new A(i);
        for (int i = 0; i < nb; i++) bs[i] = new B(i);
        System.out.println("IdsWork: badids A=" + na + " B=" + nb + " calls=" + calls);
        System.setProperty("jvmpishim.ids.ready", "1");
        await("jvmpishim.ids.drop");
        as = null;
        for (int i = 0; i < 3; i++) System.gc();
        System.setProperty("jvmpishim.ids.calls", Integer.toString(calls));
        System.setProperty("jvmpishim.ids.dropped", "1");
        System.out.println("IdsWork: done=" + await("jvmpishim.ids.done") + " " + bs.length);
    }

    static void dumpask(int na, int nb, int nc, int k) throws Exception {
        as = new Object[na]; bs = new B[nb]; cs = new C[nc]; arrays = new A[k][];
        for (int i = 0; i < na; i++) as[i] = new A(i);
        for (int i = 0; i < nb; i++) bs[i] = new B(i);
        for (int i = 0; i < nc; i++) cs[i] = new C(i);
        for (int i = 0; i < k; i++) arrays[i] = new A[2 * (i + 1)];
        System.out.println("IdsWork: dumpask A=" + na + " B=" + nb + " C=" + nc + " arrays=" + k);
        System.setProperty("jvmpishim.ids.ready", "1");
        String done = null;
        long end = System.nanoTime() + 120_000_000_000L;
        while ((done = System.getProperty("jvmpishim.ids.done")) == null && System.nanoTime() < end)
            Thread.sleep(10);
        System.out.println("IdsWork: done=" + done + " " + (as.length + bs.length + cs.length + arrays.length));
    }
}
