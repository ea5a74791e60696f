import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/** ExitCensus [KEPT] [DROPPED]: the workload of tests/it/dumps/dump_unreachable.sh (agent
 *  legacy-agents/exit_census.c, a memory profiler that counts a heap dump by class in its
 *  JVM_SHUT_DOWN handler). It makes KEPT (3000) ExitCensusKept, reachable to the end through
 *  the static array KEEP, and DROPPED (7000) ExitCensusDropped in a chain held only by the
 *  static DROP, which it then clears: they are unreachable when main returns, and with a
 *  young generation far larger than what the program allocates (the test gives -Xmn), no
 *  collection happens before the JVM exits. The collectors' counts (GarbageCollectorMXBean,
 *  summed) are printed before the objects are made, right after the drop, and in a shutdown
 *  hook (the last Java code before JVM_SHUT_DOWN), so the test knows whether a collection
 *  could have freed the dropped objects:
 *    ExitCensus: kept=K dropped=D gcs_start=A gcs_after_drop=B
 *    ExitCensus: done
 *    ExitCensus: gcs_at_exit=C */
public class ExitCensus {
    static ExitCensusKept[] KEEP;
    static ExitCensusDropped DROP;

    static long gcs() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
            n += Math.max(0, b.getCollectionCount());
        return n;
    }

    static void makeKept(int n) {
        KEEP = new ExitCensusKept[n];
        ExitCensusKept prev = null;
        for (int i = 0; i < n; i++)
            KEEP[i] = prev = new ExitCensusKept(i, prev);
    }

    static void makeDropped(int n) {
        ExitCensusDropped prev = null;
        for (int i = 0; i < n; i++)
            prev = new ExitCensusDropped(i, prev);
        DROP = prev;
    }

    public static void main(String[] args) {
        int kept = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int dropped = args.length > 1 ? Integer.parseInt(args[1]) : 7000;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("ExitCensus: gcs_at_exit=" + gcs())));
        long g0 = gcs();
        makeKept(kept);
        makeDropped(dropped);
        DROP = null;
        long g1 = gcs();
        System.out.println("ExitCensus: kept=" + kept + " dropped=" + dropped + " gcs_start=" + g0
                + " gcs_after_drop=" + g1);
        System.out.println("ExitCensus: done");
    }
}
