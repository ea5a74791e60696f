/** ExecHot [late]: workload of tests/it/methods/exec_compiled.sh (agent
 *  legacy-agents/exec_compiled.c).
 *  Calls spin(int) in a loop for SPIN_MS (long enough for C1 and C2 to compile it), prints
 *  "ExecHot: spun ...", then stops calling it and loads the marker ExecHot$Spun on main. In
 *  mode "late" the agent's system thread enables COMPILED_METHOD_LOAD only then (spin is
 *  compiled already and no longer running: only the replay can report it) and sets the
 *  property jvmpishim.exec.cml, which main waits for. System.gc() twice (compiled code may be
 *  unloaded), then the marker ExecHot$Done: the agent prints its summary.
 *  tests/it/methods/exec_compiled.sh reads spin's first and last source lines from the markers
 *  SPIN-FIRST / SPIN-LAST below: keep them on the first and last statement. */
public class ExecHot {
    static class Spun {}
    static class Done {}

    static final long SPIN_MS = 3000;

    static long spin(int n) {
        long acc = n; // SPIN-FIRST
        for (int i = 0; i < n; i++) {
            acc = acc * 31 + i;
            acc ^= acc >>> 7;
        }
        return acc; // SPIN-LAST
    }

    public static void main(String[] args) throws Exception {
        boolean late = args.length > 0 && args[0].equals("late");
        long end = System.nanoTime() + SPIN_MS * 1_000_000L;
        long calls = 0, r = 0;
        while (System.nanoTime() < end) {
            r += spin(10000);
            calls++;
        }
        System.out.println("ExecHot: spun calls=" + calls + " ms=" + SPIN_MS + " r=" + r);
        Class.forName("ExecHot$Spun");
        if (late) {
            long limit = System.nanoTime() + 20_000_000_000L;
            while (System.getProperty("jvmpishim.exec.cml") == null) {
                if (System.nanoTime() > limit) {
                    System.out.println("ExecHot: timeout waiting for jvmpishim.exec.cml");
                    System.exit(3);
                }
                Thread.sleep(10);
            }
        }
        System.gc();
        System.gc();
        Class.forName("ExecHot$Done");
        System.out.println("ExecHot: done");
    }
}
