// AttachTarget — a running program for attach tests: a JVMPI agent is loaded into it late
// (jcmd JVMTI.agent_load). It creates KEEP instances of AttachKept before the attach and
// holds them, starts a worker thread "attach-early" before, and after the attach (when the
// file named by args[0] appears) starts "attach-late", allocates LATE instances of
// AttachLate, then exits.
import java.nio.file.*;
import java.util.*;

public class AttachTarget {
    static final int KEEP = 5000, LATE = 3000;
    static final List<Object> kept = new ArrayList<>();
    static volatile boolean stop;

    static class AttachKept { int v; AttachKept(int v) { this.v = v; } }
    static class AttachLate { long v; AttachLate(long v) { this.v = v; } }

    public static void main(String[] args) throws Exception {
        Path go = Paths.get(args[0]);
        for (int i = 0; i < KEEP; i++) kept.add(new AttachKept(i));
        Thread early = new Thread(() -> {
            while (!stop) { try { Thread.sleep(5); } catch (InterruptedException e) { return; } }
        }, "attach-early");
        early.start();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.currentTimeMillis() + 60_000;
        while (!Files.exists(go)) {
            if (System.currentTimeMillis() > deadline) { System.out.println("timeout waiting for " + go); System.exit(2); }
            Thread.sleep(20);
        }
        Thread late = new Thread(() -> {
            List<Object> l = new ArrayList<>();
            for (int i = 0; i < LATE; i++) l.add(new AttachLate(i));
            System.out.println("late allocated " + l.size());
        }, "attach-late");
        late.start();
        late.join();
        stop = true;
        early.join();
        System.out.println("kept " + kept.size());
        System.out.println("done");
    }
}
