/** Sleep MS: sleeps MS milliseconds (in 50 ms steps, so signals are handled promptly), then
 *  prints "slept" and exits 0. */
public class Sleep {
    public static void main(String[] args) throws InterruptedException {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 1000;
        long end = System.nanoTime() + ms * 1_000_000L;
        System.out.println("sleeping " + ms);
        while (System.nanoTime() < end) {
            Thread.sleep(Math.max(1, Math.min(50, (end - System.nanoTime()) / 1_000_000L)));
        }
        System.out.println("slept");
    }
}
