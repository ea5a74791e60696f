/** MemLive: workload of tests/it/memory/mem_live.sh (agent legacy-agents/mem_live.c, an HPROF-style
 *  live-object counter).
 *
 *  L MemLive$Marker objects stay reachable to the end. Three times K more are allocated,
 *  dropped and collected (System.gc()), and right after each collection something asks the
 *  agent for figures:
 *    DumpNow   loaded on main right after the first System.gc(): the agent's CLASS_LOAD
 *              handler requests a level-0 HEAP_DUMP at once;
 *    SIGQUIT   sent by the program to itself (kill -QUIT) right after the second
 *              System.gc(): the agent's
 *              DATA_DUMP_REQUEST handler requests a level-0 HEAP_DUMP (the
 *              program waits until the agent sets MemLive.dumped, at most 60 s);
 *    exit      main returns right after the third System.gc(): the agent prints its live
 *              count of MemLive$Marker in its JVM_SHUT_DOWN handler.
 *  Each time the agent's live count must be exactly L. Ground truth: "MemLive: ..." lines. */
public class MemLive {
    static class Marker { int v; Marker(int v) { this.v = v; } }
    static class DumpNow {}

    static final int L = 300, K = 5000;
    static Object[] keep;
    static volatile boolean dumped;

    static void churn() {
        Object[] drop = new Object[K];
        for (int i = 0; i < K; i++)
            drop[i] = new Marker(i);
        drop = null;
    }

    public static void main(String[] args) throws Exception {
        keep = new Object[L];
        for (int i = 0; i < L; i++)
            keep[i] = new Marker(-i);
        System.out.println("MemLive: keep=" + L + " churn=" + K);
        churn();
        System.gc();
        Class.forName("MemLive$DumpNow");
        System.out.println("MemLive: phase dump done");
        churn();
        System.gc();
        Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(ProcessHandle.current().pid()))
                .inheritIO().start();
        kill.waitFor();
        for (int i = 0; i < 6000 && !dumped; i++)
            Thread.sleep(10);
        System.out.println("MemLive: phase sigquit dumped=" + dumped);
        churn();
        System.gc();
        System.out.println("MemLive: exiting keep=" + keep.length);
    }
}
