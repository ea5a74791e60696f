/* mem_gc.c — a JDK 1.3-style JVMPI agent for OBJECT_FREE, GC_START / GC_FINISH, DisableGC /
 * EnableGC, OBJECT_MOVE and ARENA_DELETE (tests/it/memory/mem_free.sh with tests/java/MemFree.java,
 * tests/it/memory/mem_lock.sh with tests/java/MemStress.java).
 *
 * Options: free | stress (default free). In stress mode every 40,000th OBJECT_ALLOC handler
 * sleeps 250 ms holding the lock (slower than the shim waits for handlers to drain).
 * Enabled in JVM_OnLoad: OBJECT_ALLOC, OBJECT_FREE, GC_START, GC_FINISH, ARENA_NEW,
 * OBJECT_MOVE, ARENA_DELETE, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN.
 *
 * Locking as the JVMPI spec tells agents to do it: one raw monitor guards the object table;
 * OBJECT_ALLOC handlers (on every allocating thread) take it briefly; GC_START enters it and
 * GC_FINISH exits it, so the OBJECT_FREE handlers in between run with it held and take no
 * lock. That is the arrangement that must not deadlock. OBJECT_ALLOC handlers on other
 * threads that found a bracket open (and so waited for GC_FINISH) are counted:
 * allocs_waiting_for_bracket (informational: the shim holds deliveries back while a bracket
 * is open, so this is normally 0).
 *
 * Checked live (FAIL lines, counted per kind; the first 5 of each printed):
 *   GC_START/GC_FINISH alternate (no nesting, no FINISH without START); OBJECT_FREE only
 *   between them and on the thread that posted GC_START; OBJECT_FREE only for an id that
 *   OBJECT_ALLOC reported (the start-up replay included), never twice, never for a
 *   MemFree$Keep (reachable to the end); no id reported by OBJECT_ALLOC twice;
 *   GC_FINISH: used_objects > 0, used_object_space > 0, total_object_space >=
 *   used_object_space; no OBJECT_MOVE, no ARENA_DELETE; in the DisableGC window (free mode)
 *   no GC_START and no OBJECT_FREE.
 * Free mode prints one line per GC ("gc n=.. frees=.. used_objects=..") and, in the MemFree
 * marker handlers, "before ...", "after ...", "window ...", "done ..." with the counts per
 * class (drop/keep/late allocated and freed). DisableGC and EnableGC are called on the
 * agent's own system thread, at the request of the GcOff / GcOn handlers.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KIT_NAME "mem_gc"
#define KIT_LINE 2048
#include "kit/out.h"
#include "kit/checked.h"
#define KIT_PMAP_FIRST (1 << 16)
#include "kit/pmap.h"

static JVMPI_RawMonitor lock, sync_mon;
static int stress;

enum { F_NESTED_START, F_FINISH_NO_START, F_FREE_OUTSIDE, F_FREE_OTHER_THREAD, F_FREE_UNKNOWN,
       F_FREE_TWICE, F_FREE_KEEP, F_ALLOC_TWICE, F_GC_INFO, F_MOVE, F_ARENA_DELETE,
       F_START_DISABLED, F_FREE_DISABLED, F_OTHER, NFAIL };
static const char *fail_name[NFAIL] = {
    "gc_start_nested", "gc_finish_without_start", "free_outside_gc", "free_other_thread",
    "free_unknown_id", "free_twice", "free_of_live_object", "alloc_twice", "gc_info",
    "object_move", "arena_delete", "gc_start_while_disabled", "free_while_disabled", "other"};
static volatile int fail_counts[NFAIL];

/* ---- state (under lock) -------------------------------------------------------------- */

enum { C_OTHER, C_DROP, C_KEEP, C_LATE, NCAT };
#define ST_LIVE 1
#define ST_FREED 2
#define VAL(cat, st) ((uintptr_t)(cat) << 2 | (st))

static struct pmap objects;   /* id -> (void *)VAL(category, state) */
static jobjectID cat_cid[NCAT];
static long allocs[NCAT], frees[NCAT];
static long total_allocs, total_frees, allocs_during_bracket, slow_handlers;
static int in_gc;
static pthread_t gc_thread;
static long gc_starts, gc_finishes, bracket_frees;
static jlong last_used_objects, last_used_space, last_total_space;
static long move_events, arena_delete_events, arena_new_events;
static long before_used = -1, before_gcs;
static volatile int window;      /* 1 between DisableGC returning and EnableGC being called */
static long window_starts, window_frees, window_late_frees;

static void on_alloc(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        return;
    jobjectID id = ev->u.obj_alloc.obj_id, cid = ev->u.obj_alloc.class_id;
    int cat = C_OTHER;
    if (cid != NULL && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT)
        for (int c = C_DROP; c < NCAT; c++)
            if (cat_cid[c] == cid)
                cat = c;
    /* Racy on purpose: did this handler (likely) have to wait for a bracket's GC_FINISH? */
    int bracket_open = in_gc && !pthread_equal(gc_thread, pthread_self());
    jvmpi->RawMonitorEnter(lock);
    if (bracket_open)
        allocs_during_bracket++;
    void **v = pm_ref(&objects, id);
    if (v != NULL)
        FAILK(F_ALLOC_TWICE, "OBJECT_ALLOC id %p reported again (already %s)", (void *)id,
              ((uintptr_t)*v & 3) == ST_LIVE ? "live" : "freed");
    else
        pm_put(&objects, id, (void *)VAL(cat, ST_LIVE));
    allocs[cat]++;
    total_allocs++;
    /* Stress: now and then a slow handler holding the lock (as agents that wrote their
     * tables to a file did), longer than the shim waits for handlers to drain. */
    if (stress && total_allocs % 40000 == 0) {
        struct timespec ts = {0, 250 * 1000000L};
        nanosleep(&ts, NULL);
        slow_handlers++;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_gc_start(void)
{
    jvmpi->RawMonitorEnter(lock); /* held until GC_FINISH */
    if (in_gc)
        FAILK(F_NESTED_START, "GC_START while the previous GC_START (%ld) has no GC_FINISH",
              gc_starts);
    if (window) {
        window_starts++;
        FAILK(F_START_DISABLED, "GC_START between DisableGC and EnableGC");
    }
    in_gc = 1;
    gc_thread = pthread_self();
    gc_starts++;
    bracket_frees = 0;
}

static void on_free(JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_free.obj_id;
    int held = in_gc && pthread_equal(gc_thread, pthread_self());
    if (!in_gc) {
        FAILK(F_FREE_OUTSIDE, "OBJECT_FREE id %p outside GC_START..GC_FINISH", (void *)id);
        jvmpi->RawMonitorEnter(lock);
    } else if (!held) {
        FAILK(F_FREE_OTHER_THREAD, "OBJECT_FREE id %p on a thread other than GC_START's",
              (void *)id);
        return; /* the lock is GC_START's: do not touch the table */
    }
    if (window) {
        window_frees++;
        FAILK(F_FREE_DISABLED, "OBJECT_FREE id %p between DisableGC and EnableGC", (void *)id);
    }
    void **v = pm_ref(&objects, id);
    if (v == NULL) {
        FAILK(F_FREE_UNKNOWN, "OBJECT_FREE id %p: OBJECT_ALLOC never reported it", (void *)id);
    } else if (((uintptr_t)*v & 3) == ST_FREED) {
        FAILK(F_FREE_TWICE, "OBJECT_FREE id %p: freed twice", (void *)id);
    } else {
        int cat = (int)((uintptr_t)*v >> 2);
        *v = (void *)VAL(cat, ST_FREED);
        frees[cat]++;
        if (cat == C_KEEP)
            FAILK(F_FREE_KEEP, "OBJECT_FREE id %p of a MemFree$Keep, which is still reachable",
                  (void *)id);
        if (cat == C_LATE && window)
            window_late_frees++;
    }
    total_frees++;
    bracket_frees++;
    if (!in_gc)
        jvmpi->RawMonitorExit(lock);
}

static void on_gc_finish(JVMPI_Event *ev)
{
    jlong uo = ev->u.gc_info.used_objects, us = ev->u.gc_info.used_object_space;
    jlong ts = ev->u.gc_info.total_object_space;
    if (!in_gc) {
        FAILK(F_FINISH_NO_START, "GC_FINISH without GC_START");
        return;
    }
    if (!pthread_equal(gc_thread, pthread_self()))
        FAILK(F_OTHER, "GC_FINISH on a thread other than GC_START's");
    if (uo <= 0 || us <= 0 || ts < us)
        FAILK(F_GC_INFO, "GC_FINISH used_objects=%lld used_object_space=%lld "
              "total_object_space=%lld", (long long)uo, (long long)us, (long long)ts);
    gc_finishes++;
    last_used_objects = uo;
    last_used_space = us;
    last_total_space = ts;
    in_gc = 0;
    if (!stress)
        say("gc n=%ld frees=%ld used_objects=%lld used_object_space=%lld total_object_space=%lld",
            gc_finishes, bracket_frees, (long long)uo, (long long)us, (long long)ts);
    jvmpi->RawMonitorExit(lock); /* entered in GC_START */
}

/* ---- DisableGC / EnableGC on the agent's own thread ----------------------------------- */

static volatile int gcctl_want, gcctl_done; /* 1 = disable, 2 = enable */

static void gcctl_thread(void *arg)
{
    (void)arg;
    for (int step = 1; step <= 2; step++) {
        jvmpi->RawMonitorEnter(sync_mon);
        while (gcctl_want < step)
            jvmpi->RawMonitorWait(sync_mon, 0);
        jvmpi->RawMonitorExit(sync_mon);
        if (step == 1) {
            jvmpi->DisableGC();
            window = 1;
            say("DisableGC returned");
        } else {
            window = 0;
            say("calling EnableGC");
            jvmpi->EnableGC();
        }
        jvmpi->RawMonitorEnter(sync_mon);
        gcctl_done = step;
        jvmpi->RawMonitorNotifyAll(sync_mon);
        jvmpi->RawMonitorExit(sync_mon);
    }
}

/* Called in a marker handler on main: ask the thread for step, wait (bounded) for it. */
static void gcctl(int step)
{
    jvmpi->RawMonitorEnter(sync_mon);
    gcctl_want = step;
    jvmpi->RawMonitorNotifyAll(sync_mon);
    for (int i = 0; i < 100 && gcctl_done < step; i++)
        jvmpi->RawMonitorWait(sync_mon, 100);
    int done = gcctl_done >= step;
    jvmpi->RawMonitorExit(sync_mon);
    if (!done)
        FAILK(F_OTHER, "the agent's thread did not %s GC within 10 s",
              step == 1 ? "disable" : "enable");
}

/* ---- phases ---------------------------------------------------------------------------- */

static void counts_line(const char *what)
{
    say("%s gcs=%ld used_objects=%lld drop_alloc=%ld drop_freed=%ld keep_alloc=%ld "
        "keep_freed=%ld late_alloc=%ld late_freed=%ld", what, gc_finishes,
        (long long)last_used_objects, allocs[C_DROP], frees[C_DROP], allocs[C_KEEP],
        frees[C_KEEP], allocs[C_LATE], frees[C_LATE]);
}

static void on_marker(const char *m)
{
    if (strcmp(m, "Before") == 0) {
        jvmpi->RawMonitorEnter(lock);
        before_used = last_used_objects;
        before_gcs = gc_finishes;
        counts_line("before");
        jvmpi->RawMonitorExit(lock);
    } else if (strcmp(m, "After") == 0) {
        jvmpi->RawMonitorEnter(lock);
        counts_line("after");
        say("after used_objects_drop=%lld gcs_since_before=%ld",
            (long long)(before_used - last_used_objects), gc_finishes - before_gcs);
        jvmpi->RawMonitorExit(lock);
    } else if (strcmp(m, "GcOff") == 0) {
        gcctl(1);
        jvmpi->RawMonitorEnter(lock);
        counts_line("gcoff");
        jvmpi->RawMonitorExit(lock);
    } else if (strcmp(m, "GcOn") == 0) {
        jvmpi->RawMonitorEnter(lock);
        long late_freed_before = frees[C_LATE];
        long starts = gc_starts;
        jvmpi->RawMonitorExit(lock);
        gcctl(2);
        say("window gc_starts=%ld frees=%ld late_freed=%ld (at GcOn: late_freed=%ld gc_starts=%ld)",
            window_starts, window_frees, window_late_frees, late_freed_before, starts);
    } else if (strcmp(m, "Done") == 0) {
        jvmpi->RawMonitorEnter(lock);
        counts_line("done");
        jvmpi->RawMonitorExit(lock);
    }
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if ((ev->event_type & JVMPI_REQUESTED_EVENT) || cn == NULL)
        return;
    if (strncmp(cn, "MemFree$", 8) != 0)
        return;
    const char *m = cn + 8;
    if (strcmp(m, "Drop") == 0)
        cat_cid[C_DROP] = ev->u.class_load.class_id;
    else if (strcmp(m, "Keep") == 0)
        cat_cid[C_KEEP] = ev->u.class_load.class_id;
    else if (strcmp(m, "Late") == 0)
        cat_cid[C_LATE] = ev->u.class_load.class_id;
    else {
        say("marker %s", m);
        on_marker(m);
    }
}

static void summary(const char *what)
{
    say("%s allocs=%ld frees=%ld gc_starts=%ld gc_finishes=%ld in_gc=%d keep_freed=%ld "
        "object_move=%ld arena_delete=%ld arena_new=%ld allocs_waiting_for_bracket=%ld "
        "slow_handlers=%ld fails=%d",
        what, total_allocs, total_frees, gc_starts, gc_finishes, in_gc, frees[C_KEEP],
        move_events, arena_delete_events, arena_new_events, allocs_during_bracket,
        slow_handlers, g_fails);
    for (int k = 0; k < NFAIL; k++)
        if (fail_counts[k])
            say("fails %s=%d", fail_name[k], fail_counts[k]);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_free(ev);
        break;
    case JVMPI_EVENT_GC_START:
        on_gc_start();
        break;
    case JVMPI_EVENT_GC_FINISH:
        on_gc_finish(ev);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
        __sync_add_and_fetch(&move_events, 1);
        FAILK(F_MOVE, "OBJECT_MOVE %p -> %p", (void *)ev->u.obj_move.obj_id,
              (void *)ev->u.obj_move.new_obj_id);
        break;
    case JVMPI_EVENT_ARENA_DELETE:
        __sync_add_and_fetch(&arena_delete_events, 1);
        FAILK(F_ARENA_DELETE, "ARENA_DELETE %d", (int)ev->u.delete_arena.arena_id);
        break;
    case JVMPI_EVENT_ARENA_NEW:
        __sync_add_and_fetch(&arena_new_events, 1);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("init_done allocs=%ld", total_allocs);
        if (!stress && jvmpi->CreateSystemThread("mem_gc-gcctl", JVMPI_NORMAL_PRIORITY,
                                                 gcctl_thread) != JNI_OK)
            FAILK(F_OTHER, "CreateSystemThread failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        summary("shutdown");
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        FAILK(F_OTHER, "unexpected event %d", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    stress = options != NULL && strcmp(options, "stress") == 0;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_mem_gc_lock");
    sync_mon = jvmpi->RawMonitorCreate("_mem_gc_sync");
    static const struct { jint ev; const char *name; } evs[] = {
        {JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD"},   {JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE"},
        {JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN"}, {JVMPI_EVENT_ARENA_NEW, "ARENA_NEW"},
        {JVMPI_EVENT_OBJECT_MOVE, "OBJECT_MOVE"}, {JVMPI_EVENT_ARENA_DELETE, "ARENA_DELETE"},
        {JVMPI_EVENT_GC_START, "GC_START"},       {JVMPI_EVENT_GC_FINISH, "GC_FINISH"},
        {JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE"}, {JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC"},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        say("enable %s rc=%d", evs[i].name, (int)jvmpi->EnableEvent(evs[i].ev, NULL));
    say("loaded mode=%s", stress ? "stress" : "free");
    return JNI_OK;
}
