import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** DemoApp [RECORDS] [CRUNCH_MS]: the sample application of `make demo` (tests/demo.sh,
 * profiled by the bundled HPROF, legacy-agents/hprof/) and of tests/it/hprof/demo_agent.sh
 * (profiled by legacy-agents/jvmpitop.c), both through the shim.
 *
 * Three named worker threads in the ThreadGroup "demo-workers" do distinct work at the same
 * time, so a profiler has something to say about each:
 *  - "cruncher"  CPU-bound: renders Mandelbrot rows for CRUNCH_MS ms (default 2000); nearly
 *                all its time is spent in DemoApp$Cruncher.mandelbrot, which allocates nothing.
 *  - "allocator" allocation-bound: builds RECORDS (default 40000) DemoApp$Record objects, each
 *                with a name built by a StringBuilder, a char[] scratch buffer and a byte[]
 *                payload, all allocated in DemoApp$Allocator.makeRecord; every Record escapes
 *                into a list kept in a static field, so the JIT cannot elide one and a JVMPI
 *                profiler must see exactly RECORDS allocations of DemoApp$Record.
 *  - "churner"   HashMap churn: a fixed, seeded sequence of puts and removes of boxed keys;
 *                every 1000 operations it runs DemoApp$Ledger.audit, which holds the ledger's
 *                lock for about a millisecond, while the allocator enters that lock once per
 *                Record (DemoApp$Ledger.record): monitor contention for a profiler to find.
 * main starts them, joins them and prints one summary line, including the Record count:
 *   DemoApp: done in 2.51 s: cruncher 1234 rows (checksum 5678), allocator 40000 DemoApp$Record
 *   objects (kept 40000), churner 120000 map operations (final size 1234)
 */
public class DemoApp {
    /** What the allocator allocates and keeps. */
    static final class Record {
        final int id;
        final String name;
        final byte[] payload;
        Record(int id, String name, byte[] payload) {
            this.id = id;
            this.name = name;
            this.payload = payload;
        }
    }

    /** Every Record ever made: keeps them reachable, hence really allocated. */
    static final List<Record> KEPT = new ArrayList<>();
    static volatile long sink;

    /** Shared by the allocator (a short record() per Record) and the churner (a slow audit()
     * now and then): the allocator blocks on the lock while an audit runs. */
    static final class Ledger {
        private long entries, audits, digest;
        synchronized void record() {
            entries++;
        }
        synchronized void audit() {
            long d = digest;
            for (int i = 0; i < 400_000; i++)
                d = d * 31 + (entries ^ i);
            digest = d;
            audits++;
        }
    }
    static final Ledger LEDGER = new Ledger();

    /** CPU-bound: Mandelbrot rows until the deadline. */
    static final class Cruncher implements Runnable {
        final long millis;
        long rows, checksum;
        Cruncher(long millis) { this.millis = millis; }

        /** One row of a width x height Mandelbrot image: the sum of the iteration counts
         * (at most maxIter per pixel). Both loops are in this one method, and the inner one's
         * back-edge tests a double, not a counter, so the JIT keeps safepoint polls in it: a
         * sampler that suspends the thread finds it here, whatever gets inlined. */
        static long mandelbrot(int y, int width, int height, int maxIter) {
            long sum = 0;
            double ci = -1.2 + 2.4 * y / height;
            for (int x = 0; x < width; x++) {
                double cr = -2.0 + 3.0 * x / width, zr = 0, zi = 0;
                int n = 0;
                do {
                    double t = zr * zr - zi * zi + cr;
                    zi = 2 * zr * zi + ci;
                    zr = t;
                    if (++n >= maxIter)
                        break;
                } while (zr * zr + zi * zi <= 4.0);
                sum += n;
            }
            return sum;
        }

        public void run() {
            long end = System.nanoTime() + millis * 1_000_000L;
            int y = 0;
            while (System.nanoTime() < end) {
                checksum += mandelbrot(y, 400, 300, 500);
                y = (y + 1) % 300;
                rows++;
            }
        }
    }

    /** Allocation-bound: a fixed number of Records at one site. */
    static final class Allocator implements Runnable {
        final int count;
        long chars;
        Allocator(int count) { this.count = count; }

        static Record makeRecord(int i) {
            char[] scratch = new char[24];
            int n = Integer.toString(i).length();
            for (int k = 0; k < scratch.length; k++)
                scratch[k] = (char) ('a' + (i + k) % 26);
            String name = new StringBuilder(32).append("record-").append(i).append('-')
                    .append(scratch, 0, 8 - n % 4).toString();
            byte[] payload = new byte[16 + i % 48];
            payload[0] = (byte) i;
            return new Record(i, name, payload);
        }

        public void run() {
            for (int i = 0; i < count; i++) {
                Record r = makeRecord(i);
                chars += r.name.length();
                synchronized (KEPT) {
                    KEPT.add(r);
                }
                LEDGER.record();
            }
        }
    }

    /** HashMap churn: a seeded sequence of puts and removes. */
    static final class Churner implements Runnable {
        final int ops;
        int size;
        Churner(int ops) { this.ops = ops; }

        public void run() {
            Map<Integer, Long> map = new HashMap<>();
            long seed = 42;
            for (int i = 0; i < ops; i++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                int key = 1000 + (int) ((seed >>> 33) % 5000);
                if ((seed & 0x300) == 0)
                    map.remove(key);
                else
                    map.merge(key, 1L, Long::sum);
                if (i % 1000 == 999)
                    LEDGER.audit();
            }
            size = map.size();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 40_000;
        long crunchMs = args.length > 1 ? Long.parseLong(args[1]) : 2_000;
        int ops = 120_000;
        long t0 = System.nanoTime();
        ThreadGroup group = new ThreadGroup("demo-workers");
        Cruncher c = new Cruncher(crunchMs);
        Allocator a = new Allocator(records);
        Churner h = new Churner(ops);
        Thread[] ts = {new Thread(group, c, "cruncher"), new Thread(group, a, "allocator"),
                       new Thread(group, h, "churner")};
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        int kept;
        synchronized (KEPT) {
            kept = KEPT.size();
        }
        sink = c.checksum + a.chars;
        System.out.printf("DemoApp: done in %.2f s: cruncher %d rows (checksum %d), allocator %d DemoApp$Record objects (kept %d), churner %d map operations (final size %d)%n",
                (System.nanoTime() - t0) / 1e9, c.rows, c.checksum, records, kept, ops, h.size);
    }
}
