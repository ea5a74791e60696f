/** IdentTrace: workload of the ident_calltrace test (legacy-agents/ident_calltrace.c).
 *  Lines marked LINE:<tag> are looked up by the test script; Java also prints the stacks it
 *  sees itself (Thread.getStackTrace) as ground truth.
 *   - ident-short: a thread that starts and ends first (its env must trace to 0 frames).
 *   - ident-spinner: spins in spin() on one line, called from Spinner.run().
 *   - ident-sleeper: sleeps in nap().
 *   - main: `new IdentTrigger()` at LINE:trigger (the agent traces main in that CLASS_LOAD
 *     handler), then loads IdentTrace$Go, whose CLASS_LOAD handler wakes the agent's tracer
 *     thread and waits until it has done its checks. */
public class IdentTrace {
    static class Go {}

    static volatile boolean stop;
    static volatile long counter;

    static void spin() {
        while (!stop) counter++; // LINE:spin
    }

    static class Spinner extends Thread {
        Spinner() {
            super("ident-spinner");
            setDaemon(true);
        }

        public void run() {
            spin(); // LINE:spinner-run
        }
    }

    static void nap() {
        try {
            while (!stop) Thread.sleep(60_000); // LINE:nap
        } catch (InterruptedException e) {
            // stop
        }
    }

    static void printStack(String who, Thread t) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            if (sb.length() > 0)
                sb.append(' ');
            sb.append(e.getClassName()).append('.').append(e.getMethodName()).append(':')
                    .append(e.isNativeMethod() ? -3 : e.getLineNumber());
        }
        System.out.println("IdentTrace: java " + who + " " + sb);
    }

    public static void main(String[] args) throws Exception {
        Thread shortLived = new Thread(() -> { }, "ident-short");
        shortLived.start();
        shortLived.join();
        Spinner spinner = new Spinner();
        Thread sleeper = new Thread(IdentTrace::nap, "ident-sleeper");
        sleeper.setDaemon(true);
        spinner.start();
        sleeper.start();
        while (counter == 0 || sleeper.getState() != Thread.State.TIMED_WAITING)
            Thread.sleep(5);
        printStack("spinner", spinner);
        printStack("sleeper", sleeper);
        new IdentTrigger(); // LINE:trigger
        Class.forName("IdentTrace$Go"); // LINE:go
        printStack("spinner-after", spinner);
        stop = true;
        sleeper.interrupt();
        spinner.join();
        sleeper.join();
        System.out.println("IdentTrace: done counter>0=" + (counter > 0));
    }
}
