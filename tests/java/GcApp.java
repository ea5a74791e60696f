/* GcApp.java — four "render" threads hold GC off (GcHold.frameBegin/frameEnd, DisableGC and
 * EnableGC) around each frame's allocation, while the main thread forces collections between
 * them (tests/it/lifecycle/client_gc.sh). Prints the frames it ran and the collections it
 * asked for. */
public class GcApp {
    static volatile Object sink;
    public static void main(String[] args) throws Exception {
        if (!GcHold.init()) { System.out.println("GcApp: FAIL init"); return; }
        final int threads = 4, perThread = 150;
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                for (int f = 0; f < perThread; f++) {
                    GcHold.frameBegin();
                    for (int k = 0; k < 40; k++) sink = new byte[16 * 1024];
                    GcHold.frameEnd();
                }
            }, "render-" + i);
            ts[i].start();
        }
        int gcs = 0;
        for (boolean alive = true; alive; ) {
            System.gc();
            gcs++;
            Thread.sleep(20);
            alive = false;
            for (Thread t : ts) alive |= t.isAlive();
        }
        System.gc();
        gcs++;
        // The brackets come after the collections, from the shim's worker: wait for the
        // last one (300 ms at least; up to 60 s, for a JVM under emulation).
        Thread.sleep(300);
        for (int i = 0; i < 1200 && GcHold.finished() < 1; i++) Thread.sleep(50);
        GcHold.summary();
        System.out.println("GcApp: frames=" + threads * perThread + " gcs=" + gcs);
    }
}
