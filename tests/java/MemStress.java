/** MemStress [THREADS] [MS] [exit]: workload of tests/it/memory/mem_lock.sh. THREADS threads
 *  (default 8) allocate small objects and arrays for MS milliseconds (default 2000), keeping
 *  a ring of recent ones so that some survive young collections, while main calls
 *  System.gc() every 200 ms. Prints "MemStress: threads=T allocated=A gcs=G" and exits 0.
 *  With "exit" the threads are daemons that never stop: main allocates a batch of 200,000
 *  objects first, drops them at the end, calls System.gc() and returns while the threads
 *  still allocate (the VM must exit, with frees of the batch pending). */
public class MemStress {
    static final class Node {
        Object ref;
        long v;
        Node(Object ref, long v) { this.ref = ref; this.v = v; }
    }

    static final int BATCH = 200_000;
    static Object[] batch;

    public static void main(String[] args) throws Exception {
        int nt = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        boolean exitWhileAllocating = args.length > 2 && args[2].equals("exit");
        if (exitWhileAllocating) {
            batch = new Object[BATCH];
            for (int i = 0; i < BATCH; i++)
                batch[i] = new Node(null, i);
        }
        long end = System.nanoTime() + ms * 1_000_000L;
        long[] counts = new long[nt];
        Thread[] ts = new Thread[nt];
        for (int t = 0; t < nt; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                Object[] ring = new Object[1024];
                long n = 0;
                while (exitWhileAllocating || System.nanoTime() < end) {
                    for (int i = 0; i < 256; i++, n++) {
                        Object o = (n % 7 == 0) ? new int[(int) (n % 50)] : (n % 11 == 0) ? new Object[3] : new Node(ring[(int) (n % 1024)], n);
                        ring[(int) (n % 1024)] = o;
                    }
                }
                counts[id] = n;
            }, "mem-stress-" + t);
            ts[t].setDaemon(exitWhileAllocating);
            ts[t].start();
        }
        int gcs = 0;
        while (System.nanoTime() < end) {
            Thread.sleep(200);
            System.gc();
            gcs++;
        }
        if (exitWhileAllocating) {
            batch = null;
            System.gc();
            System.out.println("MemStress: threads=" + nt + " exiting while they allocate, gcs=" + (gcs + 1));
            return;
        }
        long total = 0;
        for (int t = 0; t < nt; t++) {
            ts[t].join();
            total += counts[t];
        }
        System.out.println("MemStress: threads=" + nt + " allocated=" + total + " gcs=" + gcs);
    }
}
