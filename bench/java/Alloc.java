/* Alloc — many small objects, most short-lived, some kept.
 *
 *   java Alloc [OBJECTS]          (default 4,000,000)
 *
 * Every object is stored (so escape analysis cannot remove it and an allocation agent sees
 * each one): into a short ring of 1,024 slots (dies young) and every 16th also into a long
 * ring of 65,536 slots (survives a few collections). Prints
 *   BENCH Alloc objects=N elapsed_ms=T cpu_ms=C result=R
 * with T measured inside Java around the loop and C the main thread's CPU time over it.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Alloc {
    static final class Node {
        final int v;
        final Node prev;
        Node(int v, Node prev) { this.v = v; this.prev = prev; }
    }

    public static void main(String[] args) {
        int objects = args.length > 0 ? Integer.parseInt(args[0]) : 4_000_000;
        Node[] shortRing = new Node[1024];
        Node[] longRing = new Node[65536];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sum = 0;
        long c0 = mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < objects; i++) {
            Node n = new Node(i, shortRing[(i - 1) & 1023]);
            shortRing[i & 1023] = n;
            if ((i & 15) == 0)
                longRing[(i >>> 4) & 65535] = n;
            sum += n.v;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        long cpu = (mx.getCurrentThreadCpuTime() - c0) / 1_000_000L;
        long kept = 0;
        for (Node n : longRing)
            if (n != null)
                kept++;
        System.out.println("BENCH Alloc objects=" + objects + " elapsed_ms=" + ms + " cpu_ms=" + cpu + " result=" + (sum + kept));
    }
}
