import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicLong;

/** Stress SECONDS [THREADS]: the workload of tests/it/lifecycle/stress.sh. THREADS (32) worker
 *  threads "stress-N" call (recursion, exceptions thrown through frames, a Deflater), allocate
 *  (most objects die young, some survive a while in a per-thread ring), contend on four shared
 *  locks and wait on a fifth, for SECONDS. Beside them, "stress-churner" keeps starting short-lived
 *  threads that call and allocate briefly and die, and "stress-loader" defines StressPayload again
 *  and again from its bytes in a fresh class loader, runs it until it is compiled, drops it, and
 *  runs System.gc() every 20 loaders so that the classes unload. Every second main prints
 *  "stress: sample t=S rss_kb=R heap_used_kb=H loaders=L churned=C" (R from /proc/self/status),
 *  and at the end "stress: done ..." with the totals, after every thread has stopped. */
public class Stress {
    static volatile boolean stop;
    static final Object[] locks = {new Object(), new Object(), new Object(), new Object()};
    static final Object waitLock = new Object();
    static final AtomicLong calls = new AtomicLong(), allocs = new AtomicLong(),
            contended = new AtomicLong(), waits = new AtomicLong(), throwsCaught = new AtomicLong(),
            churned = new AtomicLong(), loaders = new AtomicLong(), gcs = new AtomicLong();

    public static void main(String[] args) throws Exception {
        int secs = Integer.parseInt(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        byte[] payload = readPayload();
        Thread[] workers = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int id = i;
            workers[i] = new Thread(() -> work(id), "stress-" + i);
            workers[i].start();
        }
        Thread churner = new Thread(Stress::churn, "stress-churner");
        churner.start();
        Thread loader = new Thread(() -> loadLoop(payload), "stress-loader");
        loader.start();
        long start = System.nanoTime();
        for (int s = 1; s <= secs; s++) {
            long next = start + s * 1_000_000_000L;
            long ms;
            while ((ms = (next - System.nanoTime()) / 1_000_000L) > 0)
                Thread.sleep(ms);
            Runtime rt = Runtime.getRuntime();
            System.out.println("stress: sample t=" + s + " rss_kb=" + rssKb() + " heap_used_kb="
                    + (rt.totalMemory() - rt.freeMemory()) / 1024 + " loaders=" + loaders.get()
                    + " churned=" + churned.get());
        }
        stop = true;
        for (Thread t : workers)
            t.join();
        churner.join();
        loader.join();
        System.out.println("stress: done threads=" + n + " seconds=" + secs + " calls=" + calls.get()
                + " allocs=" + allocs.get() + " contended=" + contended.get() + " waits=" + waits.get()
                + " throws=" + throwsCaught.get() + " churned=" + churned.get() + " loaders="
                + loaders.get() + " gcs=" + gcs.get());
    }

    static byte[] readPayload() throws Exception {
        try (InputStream in = Stress.class.getResourceAsStream("/StressPayload.class")) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int k;
            while ((k = in.read(buf)) > 0)
                out.write(buf, 0, k);
            return out.toByteArray();
        }
    }

    static long rssKb() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status")))
                if (line.startsWith("VmRSS:"))
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
        } catch (Exception e) {
            return -1;
        }
        return -1;
    }

    /* ---- workers ---- */

    static void work(int id) {
        Object[] ring = new Object[256];
        /* Deflater's natives are linked after start-up, so with method events on they run
         * behind Java wrappers: their frames and compiled wrappers must still name the
         * methods CLASS_LOAD listed. */
        java.util.zip.Deflater deflater = new java.util.zip.Deflater();
        byte[] plain = new byte[64], packed = new byte[128];
        long i = 0;
        while (!stop) {
            i++;
            calls.addAndGet(recurse(5 + (int) (i % 11), i));
            if ((i & 3) == 0) {
                deflater.reset();
                deflater.setInput(plain);
                deflater.finish();
                deflater.deflate(packed);
            }
            ring[(int) (i & 255)] = allocate(i);
            allocs.incrementAndGet();
            if ((i & 7) == 0) {
                try {
                    thrower(3 + (int) (i % 5));
                } catch (IllegalStateException e) {
                    throwsCaught.incrementAndGet();
                }
            }
            Object lock = locks[(int) ((i + id) & 3)];
            synchronized (lock) {
                contended.incrementAndGet();
                spin(50);
            }
            /* Breathe now and then, so that the churner and the loader (one thread each, next
             * to 32 workers on a machine of a few cores) get on with their loops too. */
            if ((i & 15) == 0) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
            if ((i & 31) == id % 32) {
                synchronized (waitLock) {
                    try {
                        waitLock.wait(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                    waits.incrementAndGet();
                    waitLock.notifyAll();
                }
            }
        }
        deflater.end();
    }

    static int recurse(int depth, long seed) {
        if (depth == 0)
            return (int) (seed & 1) + 1;
        return recurse(depth - 1, seed * 31 + depth) + 1;
    }

    static void thrower(int depth) {
        if (depth == 0)
            throw new IllegalStateException("deep");
        thrower(depth - 1);
    }

    static Object allocate(long i) {
        switch ((int) (i % 4)) {
            case 0: return new byte[16 + (int) (i % 200)];
            case 1: return new int[4][(int) (i % 8) + 1];
            case 2: return "s" + i;
            default: return new StringBuilder().append(i).append('x');
        }
    }

    static long spin(int n) {
        long x = 0;
        for (int k = 0; k < n; k++)
            x += k * 7;
        return x;
    }

    /* ---- thread churn ---- */

    static void churn() {
        Thread[] alive = new Thread[4];
        long k = 0;
        while (!stop) {
            int slot = (int) (k % alive.length);
            if (alive[slot] != null) {
                try {
                    alive[slot].join();
                } catch (InterruptedException e) {
                    return;
                }
            }
            final long seed = k;
            alive[slot] = new Thread(() -> {
                for (int j = 0; j < 20; j++) {
                    recurse(8, seed + j);
                    allocate(seed + j);
                }
            }, "stress-churn-" + k);
            alive[slot].start();
            churned.incrementAndGet();
            k++;
        }
        for (Thread t : alive)
            if (t != null)
                try {
                    t.join();
                } catch (InterruptedException e) {
                    return;
                }
    }

    /* ---- class load / unload ---- */

    static final class PayloadLoader extends ClassLoader {
        private final byte[] bytes;

        PayloadLoader(byte[] bytes) {
            super(Stress.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("StressPayload"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null)
                    c = defineClass(name, bytes, 0, bytes.length);
                return c;
            }
        }
    }

    static void loadLoop(byte[] payload) {
        long n = 0;
        while (!stop) {
            try {
                Class<?> c = new PayloadLoader(payload).loadClass("StressPayload");
                Runnable r = (Runnable) c.getDeclaredConstructor().newInstance();
                for (int k = 0; k < 300; k++)
                    r.run();
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
            loaders.incrementAndGet();
            if (++n % 20 == 0) {
                System.gc();
                gcs.incrementAndGet();
            }
        }
    }
}
