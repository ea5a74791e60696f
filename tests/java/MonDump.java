/** MonDump [MS]: ground truth for the mon_dump test (legacy-agents/mon_dump.c).
 *
 * Sets up, on the lock L (the only MonDumpLock):
 *   md-C enters L first and calls L.wait() (waiting to be notified),
 *   md-A then enters L twice (recursively) and sleeps inside it,
 *   md-B then blocks entering L (waiting to enter),
 * checking each step with Thread.getState. Then prints "MonDump: ready" and sets the system
 * property jvmpishim.md.ready; the agent takes its MONITOR_DUMP and sets jvmpishim.md.done,
 * which main polls (sleeping) for at most MS ms (default 30000). Then A is interrupted,
 * B gets L and leaves, C is notified, and main prints "MonDump: done=<value>". */
public class MonDump {
    static final MonDumpLock L = new MonDumpLock();
    static volatile boolean cIn, aIn, release;

    static class A implements Runnable {
        public void run() {
            synchronized (L) {
                synchronized (L) {
                    aIn = true;
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        // released by main
                    }
                }
            }
        }
    }

    static class B implements Runnable {
        public void run() {
            synchronized (L) {
                System.out.println("MonDump: B entered L");
            }
        }
    }

    static class C implements Runnable {
        public void run() {
            synchronized (L) {
                cIn = true;
                while (!release) {
                    try {
                        L.wait();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            }
        }
    }

    static void until(String what, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                System.out.println("MonDump: timeout waiting for " + what);
                System.exit(3);
            }
            Thread.sleep(5);
        }
    }

    public static void main(String[] args) throws Exception {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 30000;
        Thread c = new Thread(new C(), "md-C");
        c.start();
        until("C waiting", () -> cIn && c.getState() == Thread.State.WAITING);
        Thread a = new Thread(new A(), "md-A");
        a.start();
        until("A sleeping in L", () -> aIn && a.getState() == Thread.State.TIMED_WAITING);
        Thread b = new Thread(new B(), "md-B");
        b.start();
        until("B blocked", () -> b.getState() == Thread.State.BLOCKED);
        System.out.println("MonDump: ready");
        System.setProperty("jvmpishim.md.ready", "1");
        String done = null;
        long end = System.nanoTime() + ms * 1_000_000L;
        while ((done = System.getProperty("jvmpishim.md.done")) == null && System.nanoTime() < end)
            Thread.sleep(10);
        a.interrupt();
        b.join();
        synchronized (L) {
            release = true;
            L.notifyAll();
        }
        c.join();
        a.join();
        System.out.println("MonDump: done=" + done);
    }
}
