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
        Thread.sleep(300); // the last collection's bracket
        GcHold.summary();
        System.out.println("GcApp: frames=" + threads * perThread + " gcs=" + gcs);
    }
}
