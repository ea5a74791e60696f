/** Misuse MS: the application under the bad-input matrix (tests/it/lifecycle/bad_input.sh). The
 *  misuse agent runs its cases on its own system thread and then sets the system property
 *  misuse.done through JNI; main waits for it (at most MS ms), checks that the VM still runs
 *  Java code normally (a small computation whose result is known), prints
 *  "misuse app: done sum=N" and returns, so the VM shuts down the ordinary way. Exits 2 if
 *  the property never comes. */
public class Misuse {
    public static void main(String[] args) throws InterruptedException {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 120000;
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.getProperty("misuse.done") == null) {
            if (System.nanoTime() > end) {
                System.out.println("misuse app: timeout waiting for misuse.done");
                System.exit(2);
            }
            Thread.sleep(10);
        }
        long sum = 0;
        for (int i = 1; i <= 1000; i++)
            sum += i;
        System.out.println("misuse app: done sum=" + sum);
    }
}
