/** MonEvents [N]: ground truth for the mon_events test (legacy-agents/mon_events.c).
 *
 * 1. Contention, N rounds (default 20): thread mon-holder enters MonEvents.LOCK (the only
 *    MonLock), lets mon-contender go, and stays inside the monitor until the agent's
 *    MONITOR_CONTENDED_ENTER handler has run for this round (the agent sets the static
 *    enterSeen through JNI; at most 2 s, and no more waiting once a round timed out) and
 *    then 20 ms more. So the contender blocks while the holder owns LOCK, even on a loaded
 *    machine. The next round starts when the contender is done (Semaphores: no Java
 *    monitors besides LOCK are used). So there are N contended entries of LOCK, all by
 *    mon-contender, each released by mon-holder.
 * 2. main: WLOCK.wait(50) times out (prints "MonEvents: wait50 ms=..").
 * 3. main: WLOCK.wait() until mon-notifier, started just before, sleeps 100 ms and calls
 *    notifyAll (prints "MonEvents: wait0 ms=..").
 * 4. Hand-off: mon-leaver enters HLOCK (the only MonHandoffLock) and stays until the
 *    agent's MONITOR_CONTENDED_ENTER handler has run for all three threads mon-waiter-1..3
 *    blocked on it (the agent sets handoffEnterSeen through JNI; at most 2 s), leaves it
 *    and ends. The waiter that gets HLOCK first joins
 *    mon-leaver and sleeps 50 ms inside, so the other two get it only after mon-leaver has
 *    ended (prints "MonEvents: handoff waiters=3 entered=3").
 * Ends with "MonEvents: done rounds=N". */
import java.util.concurrent.Semaphore;

public class MonEvents {
    static final MonLock LOCK = new MonLock();
    static final MonWaitLock WLOCK = new MonWaitLock();
    static final MonHandoffLock HLOCK = new MonHandoffLock();
    static volatile Thread leaver;
    static volatile int handoffEntered;
    static volatile int handoffEnterSeen; /* set by the agent: HLOCK contentions seen */
    static final Semaphore held = new Semaphore(0);
    static final Semaphore roundDone = new Semaphore(0);
    static volatile boolean notified;
    static int rounds;
    static volatile int enterSeen;      /* set by the agent: MONITOR_CONTENDED_ENTERs seen */
    static boolean handshake = true;

    static class Holder implements Runnable {
        public void run() {
            try {
                for (int i = 0; i < rounds; i++) {
                    synchronized (LOCK) {
                        held.release();
                        /* Generous: a shared machine may stall a thread for seconds; the
                         * check is that the handler ran while this thread held LOCK. */
                        long end = System.nanoTime() + 30_000_000_000L;
                        while (handshake && enterSeen <= i && System.nanoTime() < end)
                            Thread.sleep(1);
                        if (enterSeen <= i && handshake) {
                            System.out.println("MonEvents: no handshake from the agent in round " + i);
                            handshake = false;
                        }
                        Thread.sleep(20);
                    }
                    roundDone.acquire();
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static class Contender implements Runnable {
        int entered;
        public void run() {
            try {
                for (int i = 0; i < rounds; i++) {
                    held.acquire();
                    synchronized (LOCK) {
                        entered++;
                    }
                    roundDone.release();
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static class Notifier implements Runnable {
        public void run() {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            synchronized (WLOCK) {
                notified = true;
                WLOCK.notifyAll();
            }
        }
    }

    static void handoff() throws Exception {
        final Thread[] waiters = new Thread[3];
        for (int i = 0; i < waiters.length; i++)
            waiters[i] = new Thread(new Runnable() {
                public void run() {
                    synchronized (HLOCK) {
                        if (handoffEntered++ == 0) {
                            try {
                                leaver.join();
                                Thread.sleep(50);
                            } catch (InterruptedException e) {
                                throw new RuntimeException(e);
                            }
                        }
                    }
                }
            }, "mon-waiter-" + (i + 1));
        leaver = new Thread(new Runnable() {
            public void run() {
                synchronized (HLOCK) {
                    for (Thread w : waiters)
                        w.start();
                    long t0 = System.nanoTime(), end = t0 + 30_000_000_000L;
                    while (handoffEnterSeen < waiters.length && System.nanoTime() < end) {
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    }
                    if (handoffEnterSeen < waiters.length)
                        System.out.println("MonEvents: no handshake from the agent in the hand-off");
                    else
                        System.out.println("MonEvents: hand-off handshake after "
                                + (System.nanoTime() - t0) / 1_000_000 + " ms");
                }
            }
        }, "mon-leaver");
        leaver.start();
        leaver.join();
        for (Thread w : waiters)
            w.join();
        System.out.println("MonEvents: handoff waiters=" + waiters.length + " entered=" + handoffEntered);
    }

    public static void main(String[] args) throws Exception {
        rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        Contender c = new Contender();
        Thread h = new Thread(new Holder(), "mon-holder");
        Thread ct = new Thread(c, "mon-contender");
        h.start();
        ct.start();
        h.join();
        ct.join();
        System.out.println("MonEvents: contention rounds=" + rounds + " entered=" + c.entered);

        long t0 = System.nanoTime();
        synchronized (WLOCK) {
            WLOCK.wait(50);
        }
        System.out.println("MonEvents: wait50 ms=" + (System.nanoTime() - t0) / 1_000_000);

        Thread n = new Thread(new Notifier(), "mon-notifier");
        t0 = System.nanoTime();
        synchronized (WLOCK) {
            n.start();
            while (!notified)
                WLOCK.wait();
        }
        System.out.println("MonEvents: wait0 ms=" + (System.nanoTime() - t0) / 1_000_000);
        n.join();

        handoff();
        System.out.println("MonEvents: done rounds=" + rounds);
    }
}
