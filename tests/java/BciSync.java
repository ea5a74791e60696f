/** BciSync: synchronized methods, static and instance, and a synchronized block left by an
 *  exception (the monitor is released and the exit probe still runs). */
public class BciSync {
    static int sn, blockThrows;
    int n;

    synchronized void inc() {
        n++;
    }

    static synchronized void sinc() {
        sn++;
    }

    void blockThrow(int i) {
        synchronized (this) {
            if (i % 2 == 0) {
                blockThrows++;
                throw new IllegalStateException("sync");
            }
            n++;
        }
    }
}
