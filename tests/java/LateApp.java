/* LateApp.java — libraries that ask for JVMPI after the JVM started (tests/it/lifecycle/client_late.sh).
 * After some work of its own, main loads LateLib (lateuse asks in JNI_OnLoad), then a thread
 * "late-worker" loads LateTarget, allocates 5 of them and calls work() on each, contends for
 * LOCK held by main (one contended entry) and waits on it once (50 ms); main forces a
 * collection. Then AttachThreads' library asks on a thread it attached itself and traces main,
 * spinning in spin(). Prints the ground truth. */
public class LateApp {
    static final Object LOCK = new Object();
    static volatile long sink;

    static void spin() {
        while (!AttachThreads.done()) sink++;
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 1000; i++) sink += new StringBuilder().append(i).length();
        LateLib.load();
        Thread w = new Thread(() -> {
            for (int i = 0; i < 5; i++) sink += new LateTarget().work(i);
            synchronized (LOCK) { sink++; }
            synchronized (LOCK) {
                try { LOCK.wait(50); } catch (InterruptedException e) { }
            }
        }, "late-worker");
        synchronized (LOCK) {
            w.start();
            for (int i = 0; i < 2000 && w.getState() != Thread.State.BLOCKED; i++) Thread.sleep(5);
            if (w.getState() != Thread.State.BLOCKED) System.out.println("LateApp: FAIL late-worker never blocked");
        }
        w.join();
        System.gc();
        System.out.println("LateApp: truth start=1 end=1 class=1 entries=5 allocs=5 contended_enter=1 contended_entered=1 wait=1 waited=1");
        if (args.length > 0 && args[0].equals("attach")) {
            AttachThreads.start();
            spin();
            System.out.println("LateApp: truth main in LateApp.spin LateApp.main");
        }
        Thread.sleep(200); // the collection's bracket
        System.out.println("LateApp: done");
    }
}
