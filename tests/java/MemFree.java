/** MemFree: workload of tests/it/memory/mem_free.sh (agent legacy-agents/mem_gc.c).
 *
 *  Allocates N MemFree$Drop (dropped later), K MemFree$Keep (reachable to the end) and N3
 *  MemFree$Late (dropped while the agent has GC disabled). Phases are opened by loading
 *  marker classes on main; the agent acts in their CLASS_LOAD handlers:
 *    Before   after one System.gc() with everything alive: the agent notes used_objects
 *    After    after dropping the N Drop objects and two System.gc() with sleeps: every Drop
 *             must have had its OBJECT_FREE, no Keep; used_objects fell by >= 0.9 N
 *    GcOff    the agent's own thread calls DisableGC (the handler waits for it); main then
 *             drops the Late objects, runs System.gc() and sleeps 1 s (or args[0] ms)
 *    GcOn     the agent's thread calls EnableGC: no GC_START / OBJECT_FREE came in between
 *    Done     after another sleep: every Late object has been freed
 *  Ground truth: "MemFree: ..." lines. */
public class MemFree {
    static class Drop { int v; Drop(int v) { this.v = v; } }
    static class Keep { int v; Keep(int v) { this.v = v; } }
    static class Late { int v; Late(int v) { this.v = v; } }
    static class Before {}
    static class After {}
    static class GcOff {}
    static class GcOn {}
    static class Done {}

    static final int N = 20000, K = 2000, N3 = 5000;
    static Object[] drop, keep, late;

    static void gc(long sleepMs) throws InterruptedException {
        System.gc();
        Thread.sleep(sleepMs);
    }

    public static void main(String[] args) throws Exception {
        long windowMs = args.length > 0 ? Long.parseLong(args[0]) : 1000;
        drop = new Object[N];
        keep = new Object[K];
        late = new Object[N3];
        for (int i = 0; i < N; i++)
            drop[i] = new Drop(i);
        for (int i = 0; i < K; i++)
            keep[i] = new Keep(i);
        for (int i = 0; i < N3; i++)
            late[i] = new Late(i);
        System.out.println("MemFree: allocated drop=" + N + " keep=" + K + " late=" + N3);
        gc(700);
        Class.forName("MemFree$Before");
        drop = null;
        System.out.println("MemFree: dropped drop=" + N);
        gc(300);
        gc(700);
        Class.forName("MemFree$After");
        Class.forName("MemFree$GcOff");
        late = null;
        System.out.println("MemFree: dropped late=" + N3);
        gc(windowMs);
        Class.forName("MemFree$GcOn");
        Thread.sleep(1500);
        Class.forName("MemFree$Done");
        System.out.println("MemFree: keep alive=" + keep.length);
        System.out.println("MemFree: done");
    }
}
