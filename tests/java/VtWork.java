import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;

/** VtWork MODE [N]: ground truth for the virtual-thread tests (tests/it/threads/vthreads_*.sh).
 *
 * MODE virtual starts N (default 400) virtual threads, MODE platform N platform threads (the
 * control). Virtual threads are made through reflection (Thread.ofVirtual), so the class
 * compiles with javac 17 and runs there: without Thread.ofVirtual, MODE virtual prints
 * "VtWork: no Thread.ofVirtual on this JVM" and ends with status 0.
 *
 * Thread i runs Task.run -> body -> the five "middle" methods, each of which calls leaf once
 * before and once after a point where it blocks (a virtual thread unmounts there, and may
 * come back on another carrier):
 *   sleepy   Thread.sleep
 *   locked   a ReentrantLock shared by all, held across a short sleep (contended)
 *   synced   a synchronized block on one shared object, held across a short sleep (contended)
 *   waiting  Object.wait(1) on an object of its own (MONITOR_WAIT/WAITED, no notify)
 *   reading  a one-byte read from a pipe shared by all, written by the platform thread
 *            vt-feeder about a millisecond after each read is announced
 * for 1 + i % 3 rounds, synced only in rounds where (i + k) is even and waiting only where
 * (i + k) % 3 != 1, so the counts differ between threads and methods. Thread 0 loads the
 * class VtWork$Once in body (its CLASS_LOAD belongs to that thread). Threads with i % 4 == 3
 * get no name (a virtual thread's name is then "", a platform thread's "Thread-N"); the
 * others are vt-i or pt-i.
 *
 * Printed after all are joined, one line each, what the threads counted themselves:
 *   VtWork: thread name=NAME body=1 sleepy=A locked=B synced=C waiting=D reading=E leaf=F
 *   VtWork: group name=G parent=P          (Java's view of the workers' group: getThreadGroup)
 *   VtWork: carrier NAME                   (the carriers the virtual threads saw in
 *                                            Thread.toString(), "...@ForkJoinPool-1-worker-1")
 *   VtWork: loaded VtWork$Once on=NAME
 *   VtWork: DONE mode=MODE threads=N
 */
public class VtWork {
    static final class Counts {
        String name;
        int body, sleepy, locked, synced, waiting, reading, leaf;
        final TreeSet<String> carriers = new TreeSet<>();
        String group = "NULL", parent = "NULL";
    }

    static final class Once {
        static int touched;
    }

    static final class Task implements Runnable {
        final int i;
        final Counts c;

        Task(int i, Counts c) {
            this.i = i;
            this.c = c;
        }

        public void run() {
            body(i, c);
        }
    }

    static final ReentrantLock LOCK = new ReentrantLock();
    static final Object MON = new Object();
    static final LinkedBlockingQueue<Integer> REQUESTS = new LinkedBlockingQueue<>();
    static Pipe pipe;
    static volatile long sink;
    static volatile String onceLoader;

    static int leaf(Counts c, int x) {
        c.leaf++;
        return x * 31 + 7;
    }

    /** The carrier a virtual thread runs on, from Thread.toString()
     *  ("VirtualThread[#22,vt-1]/runnable@ForkJoinPool-1-worker-1"); nothing for others. */
    static void noteCarrier(Counts c) {
        String s = Thread.currentThread().toString();
        int at = s.lastIndexOf('@');
        if (s.startsWith("VirtualThread[") && at > 0)
            c.carriers.add(s.substring(at + 1));
    }

    static void pause() throws InterruptedException {
        Thread.sleep(0, 300_000);
    }

    static void sleepy(Counts c) throws InterruptedException {
        c.sleepy++;
        sink += leaf(c, 1);
        Thread.sleep(1);
        noteCarrier(c);
        sink += leaf(c, 2);
    }

    static void locked(Counts c) throws InterruptedException {
        c.locked++;
        sink += leaf(c, 3);
        LOCK.lock();
        try {
            pause();
        } finally {
            LOCK.unlock();
        }
        noteCarrier(c);
        sink += leaf(c, 4);
    }

    static void synced(Counts c) throws InterruptedException {
        c.synced++;
        sink += leaf(c, 5);
        synchronized (MON) {
            pause();
        }
        noteCarrier(c);
        sink += leaf(c, 6);
    }

    static void waiting(Counts c) throws InterruptedException {
        c.waiting++;
        sink += leaf(c, 7);
        Object own = new Object();
        synchronized (own) {
            own.wait(1);
        }
        noteCarrier(c);
        sink += leaf(c, 8);
    }

    static void reading(Counts c) throws Exception {
        c.reading++;
        sink += leaf(c, 9);
        ByteBuffer b = ByteBuffer.allocate(1);
        REQUESTS.put(1);
        while (b.hasRemaining())
            if (pipe.source().read(b) < 0)
                throw new IllegalStateException("pipe closed");
        noteCarrier(c);
        sink += leaf(c, 10);
    }

    static void body(int i, Counts c) {
        c.body++;
        Thread me = Thread.currentThread();
        c.name = me.getName();
        ThreadGroup g = me.getThreadGroup();
        if (g != null) {
            c.group = g.getName();
            c.parent = g.getParent() == null ? "NULL" : g.getParent().getName();
        }
        noteCarrier(c);
        try {
            if (i == 0) {
                Once.touched++;
                onceLoader = c.name;
            }
            int rounds = 1 + i % 3;
            for (int k = 0; k < rounds; k++) {
                sleepy(c);
                locked(c);
                if ((i + k) % 2 == 0)
                    synced(c);
                if ((i + k) % 3 != 1)
                    waiting(c);
                reading(c);
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** vt-feeder: about a millisecond after a read is announced, one byte per announced read. */
    static void feed() {
        ByteBuffer one = ByteBuffer.allocate(64);
        try {
            while (true) {
                int n = REQUESTS.take();
                Thread.sleep(1);
                List<Integer> more = new ArrayList<>();
                REQUESTS.drainTo(more);
                n += more.size();
                while (n > 0) {
                    one.clear();
                    one.limit(Math.min(n, 64));
                    n -= one.remaining();
                    while (one.hasRemaining())
                        pipe.sink().write(one);
                }
            }
        } catch (Exception e) {
            System.out.println("VtWork: feeder failed " + e);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "virtual";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        Method ofVirtual = null;
        if (mode.equals("virtual")) {
            try {
                ofVirtual = Thread.class.getMethod("ofVirtual");
            } catch (NoSuchMethodException e) {
                System.out.println("VtWork: no Thread.ofVirtual on this JVM");
                return;
            }
        } else if (!mode.equals("platform")) {
            throw new IllegalArgumentException("mode: virtual or platform");
        }
        pipe = Pipe.open();
        Thread feeder = new Thread(VtWork::feed, "vt-feeder");
        feeder.setDaemon(true);
        feeder.start();

        Counts[] cs = new Counts[n];
        Thread[] ts = new Thread[n];
        Method unstarted = null;
        Object builder = null;
        if (ofVirtual != null) {
            builder = ofVirtual.invoke(null);
            unstarted = Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
        }
        Method name = ofVirtual != null ? Thread.class.getMethod("setName", String.class) : null;
        for (int i = 0; i < n; i++) {
            cs[i] = new Counts();
            Task t = new Task(i, cs[i]);
            boolean named = i % 4 != 3;
            if (ofVirtual != null) {
                ts[i] = (Thread) unstarted.invoke(builder, t);
                if (named)
                    name.invoke(ts[i], "vt-" + i);
            } else {
                ts[i] = named ? new Thread(t, "pt-" + i) : new Thread(t);
            }
        }
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();

        TreeSet<String> carriers = new TreeSet<>();
        TreeSet<String> groups = new TreeSet<>();
        StringBuilder out = new StringBuilder();
        for (Counts c : cs) {
            out.append("VtWork: thread name=").append(c.name).append(" body=").append(c.body)
               .append(" sleepy=").append(c.sleepy).append(" locked=").append(c.locked)
               .append(" synced=").append(c.synced).append(" waiting=").append(c.waiting)
               .append(" reading=").append(c.reading).append(" leaf=").append(c.leaf).append('\n');
            carriers.addAll(c.carriers);
            groups.add("name=" + c.group + " parent=" + c.parent);
        }
        for (String g : groups)
            out.append("VtWork: group ").append(g).append('\n');
        for (String c : carriers)
            out.append("VtWork: carrier ").append(c).append('\n');
        out.append("VtWork: loaded VtWork$Once on=").append(onceLoader).append('\n');
        System.out.print(out);
        System.out.println("VtWork: DONE mode=" + mode + " threads=" + n);
    }
}
