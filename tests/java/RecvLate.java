/* RecvLate — receivers named again and again by METHOD_ENTRY2 (tests/it/methods/recv_late.sh).
 *
 *   java RecvLate [THREADS] [CALLS]      (defaults 4 and 60000)
 *
 * THREADS threads each call Base.work on four receivers of its own, one of each of the
 * classes R1..R4, which extend Base and do not override work: the class that declares the
 * method is not the receiver's. Prints "RecvLate: done threads=T calls=N sum=S".
 */
public class RecvLate {
    static class Base {
        long v;
        long work(int i) { v += i; return v; }
    }
    static final class R1 extends Base {}
    static final class R2 extends Base {}
    static final class R3 extends Base {}
    static final class R4 extends Base {}

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 60000;
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int k = t;
            ts[t] = new Thread(() -> {
                Base[] rs = {new R1(), new R2(), new R3(), new R4()};
                long s = 0;
                for (int i = 0; i < calls; i++)
                    s += rs[i & 3].work(i);
                sums[k] = s;
            }, "recv-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long sum = 0;
        for (long s : sums) sum += s;
        System.out.println("RecvLate: done threads=" + threads + " calls=" + calls + " sum=" + sum);
    }
}
