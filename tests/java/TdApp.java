/* TdApp.java — a known monitor state for the thread-dump viewer (tests/it/lifecycle/client_tdview.sh):
 * nested synchronized blocks (nester holds L1 once and L2 twice), a thread blocked on L2
 * (blocked), a thread in L3.wait() (waiter), and a deadlock (dead1 holds D1 and wants D2,
 * dead2 holds D2 and wants D1). Prints the ground truth, one "TdApp: truth" line per monitor
 * and per thread with the method each thread is in, then asks the library for its dump.
 * A monitor's entry count is its contenders plus its waiters, as HotSpot 1.4.2 counted it
 * (docs/mapping.md, MONITOR_DUMP). */
import java.util.concurrent.CountDownLatch;

public class TdApp {
    static final class Lock {
        final String name;
        Lock(String name) { this.name = name; }
    }
    static final Lock L1 = new Lock("L1"), L2 = new Lock("L2"), L3 = new Lock("L3"),
                      D1 = new Lock("D1"), D2 = new Lock("D2");
    static final CountDownLatch nested = new CountDownLatch(1), locked = new CountDownLatch(2);

    static void nest3() throws InterruptedException {
        synchronized (L2) { nested.countDown(); Thread.sleep(1000000); }
    }
    static void nest2() throws InterruptedException { synchronized (L2) { nest3(); } }
    static void nest1() throws InterruptedException { synchronized (L1) { nest2(); } }
    static void blockedOnL2() { synchronized (L2) { System.out.println("TdApp: FAIL blocked got L2"); } }
    static void waitOnL3() throws InterruptedException { synchronized (L3) { L3.wait(); } }
    static void deadlock(Lock a, Lock b) throws InterruptedException {
        synchronized (a) {
            locked.countDown();
            locked.await();
            synchronized (b) { System.out.println("TdApp: FAIL no deadlock"); }
        }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
    interface Body { void run() throws Exception; }
    static Runnable body(Body b) { return () -> { try { b.run(); } catch (Exception e) { } }; }

    static void until(Thread t, Thread.State s) throws InterruptedException {
        for (int i = 0; i < 2000 && t.getState() != s; i++) Thread.sleep(5);
        if (t.getState() != s) System.out.println("TdApp: FAIL " + t.getName() + " is " + t.getState());
    }

    public static void main(String[] args) throws Exception {
        if (!TdView.init()) { System.out.println("TdApp: FAIL init"); return; }
        Thread nester = start("nester", body(TdApp::nest1));
        nested.await();
        until(nester, Thread.State.TIMED_WAITING);
        Thread blocked = start("blocked", body(TdApp::blockedOnL2));
        Thread waiter = start("waiter", body(TdApp::waitOnL3));
        Thread d1 = start("dead1", body(() -> deadlock(D1, D2)));
        Thread d2 = start("dead2", body(() -> deadlock(D2, D1)));
        until(blocked, Thread.State.BLOCKED);
        until(waiter, Thread.State.WAITING);
        until(d1, Thread.State.BLOCKED);
        until(d2, Thread.State.BLOCKED);
        System.out.println("TdApp: truth monitor L1 class=TdApp$Lock owner=nester entry=0 enter=[] notify=[]");
        System.out.println("TdApp: truth monitor L2 class=TdApp$Lock owner=nester entry=1 enter=[blocked] notify=[]");
        System.out.println("TdApp: truth monitor L3 class=TdApp$Lock owner=- entry=1 enter=[] notify=[waiter]");
        System.out.println("TdApp: truth monitor D1 class=TdApp$Lock owner=dead1 entry=1 enter=[dead2] notify=[]");
        System.out.println("TdApp: truth monitor D2 class=TdApp$Lock owner=dead2 entry=1 enter=[dead1] notify=[]");
        System.out.println("TdApp: truth thread nester in TdApp.nest3 TdApp.nest2 TdApp.nest1");
        System.out.println("TdApp: truth thread blocked in TdApp.blockedOnL2 status=2");
        System.out.println("TdApp: truth thread waiter in TdApp.waitOnL3 status=3");
        System.out.println("TdApp: truth thread dead1 in TdApp.deadlock status=2");
        System.out.println("TdApp: truth thread dead2 in TdApp.deadlock status=2");
        int n = TdView.dump();
        System.out.println("TdApp: dumped " + n);
        // The threads resumed: still where they were.
        if (blocked.getState() != Thread.State.BLOCKED || d1.getState() != Thread.State.BLOCKED)
            System.out.println("TdApp: FAIL threads not back in place after the viewer resumed them");
        System.out.println("TdApp: done");
    }
}
