/** Workload of tests/it/methods/invis_hook.sh: 8 threads start at once and call small methods in a
 *  loop (so they get compiled, and the agent's sampler catches them in the method probes)
 *  for the given number of milliseconds. Prints "InvisHook: calls=N". */
public class InvisHook {
    static volatile long sink;

    static int leaf(int i) { return i * 31 + 7; }
    int virt(int i) { return leaf(i) ^ (i >>> 3); }
    static long loop(InvisHook h, long until) {
        long n = 0;
        do {
            for (int i = 0; i < 1000; i++) sink += h.virt(i);
            n += 1000;
        } while (System.nanoTime() < until || n < 50_000);
        return n;
    }

    public static void main(String[] args) throws Exception {
        long ms = Long.parseLong(args[0]);
        long until = System.nanoTime() + ms * 1_000_000L;
        long[] counts = new long[8];
        Thread[] ts = new Thread[8];
        for (int t = 0; t < ts.length; t++) {
            final int id = t;
            ts[t] = new Thread(() -> counts[id] = loop(new InvisHook(), until), "hook-worker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long n = 0;
        for (long c : counts) n += c;
        System.out.println("InvisHook: calls=" + n);
    }
}
