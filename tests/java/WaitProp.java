/** WaitProp NAME MS: waits until the system property NAME is set (a legacy agent sets it
 *  through JNI when its checks are done), for at most MS milliseconds. Prints
 *  "prop NAME=VALUE" and exits 0, or prints "timeout waiting for NAME" and exits 2. */
public class WaitProp {
    public static void main(String[] args) throws InterruptedException {
        String name = args[0];
        long ms = Long.parseLong(args[1]);
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            String v = System.getProperty(name);
            if (v != null) {
                System.out.println("prop " + name + "=" + v);
                return;
            }
            Thread.sleep(10);
        }
        System.out.println("timeout waiting for " + name);
        System.exit(2);
    }
}
