/** MemHanded: workload of tests/it/memory/mem_handed.sh (agent legacy-agents/mem_handed.c, which
 *  enables OBJECT_FREE and GC_START/GC_FINISH but never OBJECT_ALLOC).
 *
 *  For each way an id reaches an agent, N objects whose ids the agent collects, then drops:
 *    jni      elements of Trigger.payload, through jobject2jobjectID, each then requested
 *             with RequestEvent(OBJECT_ALLOC) (trigger "jni");
 *    mon      MONITOR_WAIT objects: main waits 1 ms on each (between "mon" and "mon-end");
 *    entry2   METHOD_ENTRY2 receivers of Marker.touch() (between "entry2" and "entry2-end");
 *    dump1    instances of MemHanded$D1 in a level-1 HEAP_DUMP (trigger "dump1");
 *    dump2    instances of MemHanded$D2 in a level-2 HEAP_DUMP (trigger "dump2");
 *    dump0    every id of a level-0 HEAP_DUMP taken while N MemHanded$D0 lived (trigger
 *             "dump0"): at least N of them must be freed;
 *    odump    the elements of an array, named by the OBJECT_DUMP of that array (trigger
 *             "odump", whose payload is the array);
 *    mdump    monitors a thread holds (nested synchronized) while it asks for a MONITOR_DUMP
 *             (trigger "mdump" on that thread);
 *    thread   T threads that each wait on a trigger ("thread"): the agent calls
 *             GetThreadObject for the waiting thread's env and RequestEvent(THREAD_START)
 *             with that id; the threads end and are dropped.
 *  Keep objects (one per source) stay reachable. Then two System.gc() and exit: every
 *  dropped object must have had exactly one OBJECT_FREE by JVM_SHUT_DOWN.
 *  Triggers are Object.wait(1) on a MemHanded$Trigger whose phase field names the step. */
public class MemHanded {
    static class Marker { int v; Object child; Marker(int v) { this.v = v; } void touch() { v++; } }
    static class D0 { int v; D0(int v) { this.v = v; } }
    static class D1 { int v; D1(int v) { this.v = v; } }
    static class D2 { int v; D2(int v) { this.v = v; } }
    static class Trigger {
        final String phase;
        final Object payload;
        Trigger(String phase, Object payload) { this.phase = phase; this.payload = payload; }
    }

    static final int N = 200, T = 8, MD = 20;
    static Object keep;

    static void trigger(String phase, Object payload) throws InterruptedException {
        Trigger t = new Trigger(phase, payload);
        synchronized (t) {
            t.wait(1);
        }
    }

    static Marker[] markers(int n) {
        Marker[] m = new Marker[n];
        for (int i = 0; i < n; i++)
            m[i] = new Marker(i);
        return m;
    }

    static void holdAndDump(Object[] locks, int i) throws InterruptedException {
        if (i == locks.length) {
            trigger("mdump", null);
            return;
        }
        synchronized (locks[i]) {
            holdAndDump(locks, i + 1);
        }
    }

    /* In methods of their own, so that no local of main (an enhanced for's hidden array,
     * a variable a lambda captured) keeps these objects alive once they are dropped. */
    static void mdumpPhase() throws InterruptedException {
        final Marker[] held = markers(MD); // a thread holding MD monitors asks for the dump
        Thread h = new Thread(() -> {
            try { holdAndDump(held, 0); } catch (InterruptedException e) { }
        }, "memhanded-holder");
        h.start();
        h.join();
    }

    static void threadPhase() throws InterruptedException {
        Thread[] ts = new Thread[T];
        for (int i = 0; i < T; i++) {
            ts[i] = new Thread(() -> {
                try { trigger("thread", null); } catch (InterruptedException e) { }
            }, "memhanded-" + i);
            ts[i].start();
        }
        for (int i = 0; i < T; i++)
            ts[i].join();
    }

    public static void main(String[] args) throws Exception {
        Object[] kept = new Object[16];
        // jni
        Marker[] jni = markers(N);
        trigger("jni", jni);
        // mon
        Marker[] mon = markers(N);
        trigger("mon", null);
        for (int i = 0; i < N; i++)
            synchronized (mon[i]) { mon[i].wait(1); }
        trigger("mon-end", null);
        // entry2
        Marker[] e2 = markers(N);
        trigger("entry2", null);
        for (int i = 0; i < N; i++)
            e2[i].touch();
        trigger("entry2-end", null);
        // dumps
        Object[] d0 = new Object[N], d1 = new Object[N], d2 = new Object[N];
        for (int i = 0; i < N; i++) {
            d0[i] = new D0(i);
            d1[i] = new D1(i);
            d2[i] = new D2(i);
        }
        kept[0] = new D1(-1);
        kept[1] = new D2(-1);
        trigger("dump0", null);
        d0 = null;
        trigger("dump1", null);
        trigger("dump2", null);
        Marker[] od = markers(N);
        trigger("odump", od);
        mdumpPhase();
        threadPhase();
        kept[2] = jni[0]; // one of each stays reachable
        kept[3] = mon[0];
        kept[4] = e2[0];
        kept[5] = od[0];
        keep = kept;
        System.out.println("MemHanded: handed n=" + N + " mdump=" + MD + " threads=" + T);
        jni = mon = e2 = od = null;
        d1 = d2 = null;
        System.gc();
        Thread.sleep(200);
        System.gc();
        trigger("end", null);
        System.out.println("MemHanded: done");
    }
}
