/** ExecToggle: workload of tests/it/methods/exec_toggle.sh (agent legacy-agents/exec_toggle.c).
 *  METHOD_ENTRY / METHOD_EXIT are switched on and off mid-run by the agent's system thread.
 *  Main, in this order (marker classes are loaded on main; the agent acts in their
 *  CLASS_LOAD handlers, before Class.forName returns):
 *    phaseBefore()  B calls of before(int)   -- only here, before the events are on
 *    On             the agent wakes its system thread, which enables METHOD_EXIT and
 *                   METHOD_ENTRY and then sets the property jvmpishim.exec.on; main waits
 *                   for it
 *    phaseDuring()  D calls of during(int)   -- only here, while the events are on
 *    Off            the system thread disables them and sets jvmpishim.exec.off; main waits
 *    AfterOff       the agent notes that main saw the events off
 *    phaseAfter()   A calls of after(int)    -- only here, after the events are off
 *    Done           the agent prints its counts
 *  The ground truth is printed as "ExecToggle: ..." lines. */
public class ExecToggle {
    static class On {}
    static class Off {}
    static class AfterOff {}
    static class Done {}

    static final int B = 20000, D = 20000, A = 20000;
    static long acc;

    static void before(int i) { acc += i; }
    static void during(int i) { acc += i; }
    static void after(int i) { acc += i; }

    static void phaseBefore() { for (int i = 0; i < B; i++) before(i); }
    static void phaseDuring() { for (int i = 0; i < D; i++) during(i); }
    static void phaseAfter() { for (int i = 0; i < A; i++) after(i); }

    static void await(String prop) {
        long end = System.nanoTime() + 20_000_000_000L;
        while (System.getProperty(prop) == null) {
            if (System.nanoTime() > end) {
                System.out.println("ExecToggle: timeout waiting for " + prop);
                System.exit(3);
            }
            Thread.onSpinWait();
        }
    }

    public static void main(String[] args) throws Exception {
        phaseBefore();
        Class.forName("ExecToggle$On");
        await("jvmpishim.exec.on");
        phaseDuring();
        Class.forName("ExecToggle$Off");
        await("jvmpishim.exec.off");
        Class.forName("ExecToggle$AfterOff");
        phaseAfter();
        Class.forName("ExecToggle$Done");
        System.out.println("ExecToggle: before=" + B + " during=" + D + " after=" + A);
        System.out.println("ExecToggle: done");
    }
}
