import java.lang.invoke.MethodHandles;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/** DumpAsk [KEPT] [DROPPED] [LOADERS]: the workload of tests/it/dumps/dump_ask.sh (agent
 *  legacy-agents/dump_ask.c, a heap analyzer: DisableGC, a heap dump, then OBJECT_ALLOC and
 *  OBJECT_DUMP for every id of it). What the heap holds, known to this side:
 *  - KEPT DumpAskKept (serial 0..KEPT-1, stamp = 3*serial+1), reachable from KEEP, an
 *    object array of exactly KEPT elements; DROPPED DumpAskDropped (serial, stamp the
 *    same), in a chain that is dropped (unreachable) before the agent is told to start;
 *  - one primitive array of each of the eight kinds, of length 777, element i = 3*i (cast to
 *    the kind; booleans: i % 3 == 0), kept;
 *  - DumpAskLoadee defined in LOADERS class loaders of its own (one instance each, serial =
 *    the loader's number); the even ones kept, the odd ones (loader, class and instance)
 *    dropped; a second definition of it in loader 0, which fails (LinkageError);
 *  - a hidden class (Lookup.defineHiddenClass, DumpAskHidden's bytes) with an instance,
 *    lambdas (hidden classes too), the mirrors int.class, void.class, long[].class,
 *    DumpAskKept[][].class, kept.
 *  Prints the facts, sets the system property dumpask.ready and waits (at most 600 s) for
 *  dumpask.done, set by the agent:
 *    DumpAsk: kept=K dropped=D loaders=L kept_loadees=LK dropped_loadees=LD marker_len=777
 *    DumpAsk: linkage_error=yes|no
 *    DumpAsk: gcs_before=A gcs_after=B done=<value> */
public class DumpAsk {
    static DumpAskKept[] KEEP;
    static DumpAskDropped DROP;
    static final List<Object> HOLD = new ArrayList<>();
    static final int MARK = 777;

    static long gcs() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
            n += Math.max(0, b.getCollectionCount());
        return n;
    }

    static byte[] bytes(String name) throws Exception {
        try (java.io.InputStream in = DumpAsk.class.getResourceAsStream(name + ".class")) {
            return in.readAllBytes();
        }
    }

    static final class Loader extends ClassLoader {
        final byte[] b;
        Loader(byte[] b) { super(DumpAsk.class.getClassLoader()); this.b = b; }
        Class<?> define() { return defineClass("DumpAskLoadee", b, 0, b.length); }
    }

    public static void main(String[] args) throws Exception {
        int kept = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int dropped = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        int loaders = args.length > 2 ? Integer.parseInt(args[2]) : 40;
        KEEP = new DumpAskKept[kept];
        for (int i = 0; i < kept; i++) KEEP[i] = new DumpAskKept(i);
        DumpAskDropped prev = null;
        for (int i = 0; i < dropped; i++) prev = new DumpAskDropped(i, prev);
        DROP = prev;

        boolean[] z = new boolean[MARK]; byte[] b = new byte[MARK]; char[] c = new char[MARK];
        short[] s = new short[MARK]; int[] in = new int[MARK]; long[] l = new long[MARK];
        float[] f = new float[MARK]; double[] d = new double[MARK];
        for (int i = 0; i < MARK; i++) {
            z[i] = i % 3 == 0; b[i] = (byte) (3 * i); c[i] = (char) (3 * i); s[i] = (short) (3 * i);
            in[i] = 3 * i; l[i] = 3L * i; f[i] = 3 * i; d[i] = 3 * i;
        }
        HOLD.add(z); HOLD.add(b); HOLD.add(c); HOLD.add(s); HOLD.add(in); HOLD.add(l); HOLD.add(f); HOLD.add(d);

        byte[] lb = bytes("DumpAskLoadee");
        int keptLoadees = 0, droppedLoadees = 0;
        Loader first = null;
        for (int i = 0; i < loaders; i++) {
            Loader ld = new Loader(lb);
            Class<?> k = ld.define();
            Object o = k.getConstructor(int.class).newInstance(i);
            if (i == 0) first = ld;
            if (i % 2 == 0) { HOLD.add(o); keptLoadees++; } else droppedLoadees++;
        }
        boolean linkage = false;
        try { first.define(); } catch (LinkageError e) { linkage = true; }

        MethodHandles.Lookup lk = MethodHandles.lookup();
        Class<?> hidden = lk.defineHiddenClass(bytes("DumpAskHidden"), true).lookupClass();
        HOLD.add(hidden.getConstructor().newInstance());
        int base = kept;
        IntSupplier lam = () -> base + 1;
        Runnable r = () -> HOLD.size();
        HOLD.add(lam); HOLD.add(r);
        HOLD.add(int.class); HOLD.add(void.class); HOLD.add(long[].class); HOLD.add(DumpAskKept[][].class);
        DROP = null;

        System.out.println("DumpAsk: kept=" + kept + " dropped=" + dropped + " loaders=" + loaders
                + " kept_loadees=" + keptLoadees + " dropped_loadees=" + droppedLoadees + " marker_len=" + MARK);
        System.out.println("DumpAsk: linkage_error=" + (linkage ? "yes" : "no"));
        long g0 = gcs();
        System.setProperty("dumpask.ready", "1");
        String done = null;
        for (int i = 0; i < 60000 && (done = System.getProperty("dumpask.done")) == null; i++)
            Thread.sleep(10);
        System.out.println("DumpAsk: gcs_before=" + g0 + " gcs_after=" + gcs() + " done=" + done
                + " hold=" + HOLD.size() + " lam=" + lam.getAsInt());
    }
}
