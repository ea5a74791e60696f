/** ExecMethods: workload of tests/it/methods/exec_methods.sh (agent legacy-agents/exec_methods.c).
 *
 *  On main, in this order:
 *    one ExecTarget (the receiver; kept in the static field `target`)
 *    N calls of static ExecTarget.hit(int)
 *    M calls of target.inst(int)               -- same receiver every time
 *    checkReceiver()   the agent, in its METHOD_ENTRY handler of this method, reads `target`
 *                      through JNI and compares jobject2jobjectID(target) with the obj_id
 *                      METHOD_ENTRY2 gave for inst()
 *    natives()         K calls each of System.nanoTime(), target.hashCode() (the native
 *                      Object.hashCode) and Thread.currentThread(), all made from natives(),
 *                      and K of Adler32.update(int), which calls the native Adler32.update(II)I
 *    throwLoop()       T calls of ExecThrow.top, each ending in an exception thrown by
 *                      ExecThrow.thrower and caught here
 *    ExecCtor.loop(C)  C constructions of each of four kinds that throw before `this` is
 *                      initialized (see ExecCtor)
 *  then a thread "exec-worker" runs throwLoop() and WN calls of hit, and ends.
 *  The ground truth is printed as "ExecMethods: ..." lines. */
public class ExecMethods {
    static final java.util.zip.Adler32 adler = new java.util.zip.Adler32();
    static final int N = 100000, M = 50000, K = 1000, T = 1000, WN = 10000, C = 100;
    static ExecTarget target;
    static volatile long sink;
    static volatile int workerCaught;

    public static void main(String[] args) throws Exception {
        target = new ExecTarget(7);
        for (int i = 0; i < N; i++)
            ExecTarget.hit(i);
        for (int i = 0; i < M; i++)
            target.inst(i);
        checkReceiver();
        sink = natives();
        int caught = throwLoop();
        int ctorCaught = ExecCtor.loop(C);
        Thread w = new Thread(() -> {
            workerCaught = throwLoop();
            for (int i = 0; i < WN; i++)
                ExecTarget.hit(i);
        }, "exec-worker");
        w.start();
        w.join();
        System.out.println("ExecMethods: main hit=" + N + " inst=" + M + " natives=" + K
                + " caught=" + caught);
        System.out.println("ExecMethods: worker hit=" + WN + " caught=" + workerCaught);
        System.out.println("ExecMethods: ctors each=" + C + " caught=" + ctorCaught);
        System.out.println("ExecMethods: sacc=" + ExecTarget.sacc + " acc=" + target.acc);
        System.out.println("ExecMethods: done");
    }

    /** Marker: the agent checks the receiver id in this method's METHOD_ENTRY. */
    static void checkReceiver() {
    }

    static long natives() {
        long s = 0;
        for (int i = 0; i < K; i++) {
            s += System.nanoTime();
            s += target.hashCode();
            if (Thread.currentThread() == null)
                s++;
            adler.update(i); // calls the native Adler32.update(II)I, of a class loaded late
        }
        return s;
    }

    static int throwLoop() {
        int caught = 0;
        for (int i = 0; i < T; i++) {
            try {
                ExecThrow.top(i);
            } catch (IllegalStateException e) {
                caught++;
            }
        }
        return caught;
    }
}
