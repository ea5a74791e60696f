/** The class tests/java/Stress.java defines again and again, each time in a new class loader
 *  from these very bytes, runs, drops and lets the collector unload. */
public class StressPayload implements Runnable {
    private int n;

    public void run() {
        n += helper(n);
    }

    static int helper(int x) {
        return (x * 31) ^ 7;
    }
}
