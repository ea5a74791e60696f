/** DumpDefiner: workload of tests/it/dumps/dump_definer.sh (agent legacy-agents/dump_definer.c).
 *
 *  A loader thread waits until the agent sets DumpDefiner.armed, then defines
 *  DumpDefiner$Late. Main loads DumpDefiner$Go: the agent's CLASS_LOAD handler for Go takes
 *  the agent's lock, arms the loader, waits until Late's CLASS_LOAD handler has started on
 *  the loader thread (which then waits for that lock) and asks for a heap dump, still
 *  holding the lock. Ground truth: "DumpDefiner: ..." lines. */
public class DumpDefiner {
    static class Go {}
    static class Late {}

    static volatile boolean armed;

    public static void main(String[] args) throws Exception {
        Thread loader = new Thread(() -> {
            while (!armed)
                Thread.onSpinWait();
            try {
                Class.forName("DumpDefiner$Late");
            } catch (ClassNotFoundException e) {
                throw new RuntimeException(e);
            }
        }, "late-loader");
        loader.start();
        Class.forName("DumpDefiner$Go");
        loader.join();
        System.out.println("DumpDefiner: done");
    }
}
