/** TraceRetrans: workload of the calltrace_retransform test (legacy-agents/trace_retrans.c).
 *  Thread "retrans-worker" calls work() over and over; work() spends its time in the loop
 *  on LINE:work. The agent samples the worker with GetCallTrace before, while and after
 *  METHOD_ENTRY is enabled, which (methods=bci) rewrites the classes and so moves every
 *  bci: the lines must stay LINE:work and LINE:call. main waits for the agent's verdict
 *  (the agent sets done through JNI) for at most 60 s. */
public class TraceRetrans {
    static volatile boolean stop;
    static volatile boolean done;
    static volatile long sink;

    static long work(long x) {
        x = x * 31 + 1; // LINE:w1
        for (int i = 0; i < 20000; i++) x = x * 31 + i; // LINE:work
        return x; // LINE:w3
    }

    static void loop() {
        long x = 0;
        while (!stop) {
            x = work(x); // LINE:call
        }
        sink = x;
    }

    public static void main(String[] args) throws Exception {
        Thread w = new Thread(TraceRetrans::loop, "retrans-worker");
        w.setDaemon(true);
        w.start();
        for (int i = 0; i < 6000 && !done; i++)
            Thread.sleep(10);
        stop = true;
        System.out.println("TraceRetrans: done=" + done);
    }
}
