/** DumpMarkers [MS]: ground truth for the dump_heap and dump_object tests
 *  (legacy-agents/dump_agent.c).
 *
 * Holds exactly N = 50 DumpMarker objects (k = 0..49: i=k, l=k*1000, d=k+0.5, z=k even,
 * s=SS for odd k else null, ref=marker k+1 or null for k=49; from DumpMarkerBase:
 * base=1000+k, bref=DumpMarkers.class for k=0 else null) in the static array MARKERS and
 * in main's local m, an int[] {3,1,4,1,5,9,2,6} and an Object[] {marker 0, marker 1, null}
 * in main's locals, a Class[] {int.class, boolean.class, void.class} in main's locals (the
 * mirrors of primitive classes, their names asked for once so that Class.name is set), and
 * the statics SI=12345, SS="dump", SL=-7. Prints "DumpMarkers:
 * ready", sets the system property jvmpishim.dump.ready and polls (sleeping) for
 * jvmpishim.dump.done, set by the agent when its dumps are taken, for at most MS ms
 * (default 30000); then prints "DumpMarkers: done=<value> ..." using the locals. */
public class DumpMarkers {
    static int SI = 12345;
    static String SS = "dump";
    static long SL = -7;
    static DumpMarker[] MARKERS;
    static final int N = 50;

    public static void main(String[] args) throws Exception {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 30000;
        DumpMarker[] m = new DumpMarker[N];
        for (int k = N - 1; k >= 0; k--)
            m[k] = new DumpMarker(k, k + 1 < N ? m[k + 1] : null);
        MARKERS = m;
        int[] ints = {3, 1, 4, 1, 5, 9, 2, 6};
        Object[] objs = {m[0], m[1], null};
        Class<?>[] prims = {int.class, boolean.class, void.class};
        for (Class<?> c : prims)
            c.getName();
        System.out.println("DumpMarkers: ready n=" + N);
        System.setProperty("jvmpishim.dump.ready", "1");
        String done = null;
        long end = System.nanoTime() + ms * 1_000_000L;
        while ((done = System.getProperty("jvmpishim.dump.done")) == null && System.nanoTime() < end)
            Thread.sleep(10);
        System.out.println("DumpMarkers: done=" + done + " markers=" + m.length + " ints=" + ints.length
                + " objs=" + objs.length + " prims=" + prims.length);
    }
}
