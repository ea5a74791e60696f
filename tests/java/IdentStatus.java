import java.util.concurrent.locks.LockSupport;

/** IdentStatus: workload of the ident_status test (legacy-agents/ident_status.c). Puts one
 *  daemon thread into each state and prints what Java says about it (Thread.getState,
 *  isInterrupted) before and after the agent's checks:
 *    st-spin     spins (counter spinCount)           RUNNABLE
 *    st-holder   holds LOCK and sleeps               TIMED_WAITING
 *    st-blocked  waits to enter LOCK                 BLOCKED
 *    st-waiting  Object.wait() on W                  WAITING
 *    st-parked   LockSupport.park()                  WAITING
 *    st-sleeping Thread.sleep                        TIMED_WAITING
 *    st-intr     interrupts itself, then spins       RUNNABLE, interrupted (counter intrCount)
 *  Then it loads IdentStatus$Go: its CLASS_LOAD handler wakes the agent's tester thread and
 *  waits until the tester is done. */
public class IdentStatus {
    static class Go {}

    static volatile boolean stop, holderIn;
    static volatile long spinCount, intrCount;
    static final Object LOCK = new Object(), W = new Object();

    static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    static void nap(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            // stop
        }
    }

    static void print(String when, Thread... ts) {
        for (Thread t : ts)
            System.out.println("IdentStatus: java " + when + " " + t.getName() + " state=" + t.getState()
                    + " interrupted=" + t.isInterrupted());
    }

    public static void main(String[] args) throws Exception {
        Thread holder = daemon("st-holder", () -> {
            synchronized (LOCK) {
                holderIn = true;
                while (!stop)
                    nap(600_000);
            }
        });
        holder.start();
        while (!holderIn)
            Thread.sleep(5);
        Thread spin = daemon("st-spin", () -> {
            while (!stop)
                spinCount++;
        });
        Thread blocked = daemon("st-blocked", () -> {
            synchronized (LOCK) {
                stop = stop;
            }
        });
        Thread waiting = daemon("st-waiting", () -> {
            synchronized (W) {
                while (!stop) {
                    try {
                        W.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        });
        Thread parked = daemon("st-parked", () -> {
            while (!stop)
                LockSupport.park();
        });
        Thread sleeping = daemon("st-sleeping", () -> {
            while (!stop)
                nap(600_000);
        });
        Thread intr = daemon("st-intr", () -> {
            Thread.currentThread().interrupt();
            while (!stop)
                intrCount++;
        });
        Thread[] all = {spin, holder, blocked, waiting, parked, sleeping, intr};
        for (Thread t : all)
            if (t != holder)
                t.start();
        long end = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < end
                && !(spinCount > 0 && intrCount > 0 && intr.isInterrupted()
                     && blocked.getState() == Thread.State.BLOCKED
                     && waiting.getState() == Thread.State.WAITING
                     && parked.getState() == Thread.State.WAITING
                     && sleeping.getState() == Thread.State.TIMED_WAITING
                     && holder.getState() == Thread.State.TIMED_WAITING))
            Thread.sleep(5);
        print("before", all);
        Class.forName("IdentStatus$Go");
        print("after", all);
        stop = true;
        for (Thread t : all) {
            LockSupport.unpark(t);
            t.interrupt();
        }
        synchronized (W) {
            W.notifyAll();
        }
        for (Thread t : all)
            t.join(5000);
        System.out.println("IdentStatus: done");
    }
}
