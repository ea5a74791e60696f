/* HeapBig — a large live heap that waits to be dumped (the dump scenario).
 *
 *   java HeapBig [NODES [TRIGGER_FILE]]      (default 1,000,000 nodes, no trigger file)
 *
 * Builds NODES Node{Leaf leaf; Node next; int v} objects in one chain, each with its own
 * Leaf{long x}: 2 x NODES objects, all reachable from a static field. Calls System.gc()
 * so the dump sees a collected heap, prints
 *   BENCH HeapBig nodes=N objects=2N build_ms=T
 *   READY <pid>
 * and then waits, keeping the heap alive, until a line arrives on stdin or TRIGGER_FILE
 * exists (polled every 20 ms); then prints  DONE result=R  and exits 0. End of input on
 * stdin does not end the wait, so it can run with stdin from /dev/null.
 */
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;

public class HeapBig {
    static final class Leaf {
        long x;
        Leaf(long x) { this.x = x; }
    }

    static final class Node {
        Leaf leaf;
        Node next;
        int v;
        Node(int v, Leaf leaf, Node next) { this.v = v; this.leaf = leaf; this.next = next; }
    }

    static Node head;
    static volatile boolean released;

    public static void main(String[] args) throws Exception {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        File trigger = args.length > 1 ? new File(args[1]) : null;
        long t0 = System.nanoTime();
        Node h = null;
        for (int i = 0; i < nodes; i++)
            h = new Node(i, new Leaf(i * 7L), h);
        head = h;
        System.gc();
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        System.out.println("BENCH HeapBig nodes=" + nodes + " objects=" + (2L * nodes) + " build_ms=" + ms);
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();

        Thread in = new Thread(() -> {
            try {
                BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
                if (r.readLine() != null)
                    released = true;
            } catch (Exception e) {
                // no stdin: wait for the trigger file
            }
        }, "HeapBig-stdin");
        in.setDaemon(true);
        in.start();
        while (!released && (trigger == null || !trigger.exists()))
            Thread.sleep(20);

        long sum = 0;
        for (Node n = head; n != null; n = n.next)
            sum += n.v + n.leaf.x;
        System.out.println("DONE result=" + sum);
    }
}
