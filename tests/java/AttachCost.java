// AttachCost — a running program for measuring what an attach costs it: it keeps N small
// objects (args[0]), then a ticker thread allocates a little every millisecond and records
// the longest gap between two ticks; when the file args[1] appears it prints that gap and
// the ticks since the start of the measurement ("ready PID" first, then "maxgap_ms G").
import java.nio.file.*;
import java.util.*;

public class AttachCost {
    static final List<Object> kept = new ArrayList<>();
    static volatile long maxGapNs;
    static volatile boolean stop;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path done = Paths.get(args[1]);
        for (int i = 0; i < n; i++) kept.add(new int[2]);
        Thread ticker = new Thread(() -> {
            long last = System.nanoTime();
            Object sink = null;
            while (!stop) {
                sink = new byte[16];
                try { Thread.sleep(1); } catch (InterruptedException e) { return; }
                long now = System.nanoTime();
                if (now - last > maxGapNs) maxGapNs = now - last;
                last = now;
            }
            if (sink == null) System.out.println("?");
        }, "ticker");
        ticker.start();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(500);
        maxGapNs = 0;
        long deadline = System.currentTimeMillis() + 600_000;
        while (!Files.exists(done) && System.currentTimeMillis() < deadline) Thread.sleep(20);
        stop = true;
        ticker.join();
        System.out.printf("maxgap_ms %.1f kept %d%n", maxGapNs / 1e6, kept.size());
    }
}
