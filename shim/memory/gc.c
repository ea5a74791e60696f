/* gc.c — OBJECT_FREE and the GC_START / GC_FINISH brackets that carry them (the gate they
 * close is events/gate.c).
 *
 * JVMTI's ObjectFree arrives on the Service Thread after the GC, in a context that may not
 * call JNI. JVMPI promises frees between GC_START and GC_FINISH, and agents lock in
 * GC_START and unlock in GC_FINISH. So the shim synthesizes the bracket after each real
 * collection on its worker thread: it collects JVMTI's pending frees, closes the GC gate,
 * posts GC_START, the OBJECT_FREEs it holds, and GC_FINISH with the statistics of the
 * tracked heap (internal.h), and opens the gate again. Every tagged object that dies gets
 * its OBJECT_FREE: the shim tags an object only to hand its id out (ids.h). HotSpot posted
 * a collection's frees during it, before anything later; agents write their figures in
 * dump, DATA_DUMP_REQUEST and JVM_SHUT_DOWN handlers. So before those, the thread about to
 * post them posts the brackets still owed itself (memory_deliver_frees), and the worker's
 * task for that collection finds nothing left to do. The collection alloc.c runs to retire
 * TLABs gets no bracket.
 *
 * The gate (events/gate.c) gives JVMPI's "GC is disabled while an event carrying ids runs"
 * its meaning: event deliveries and DisableGC spans are regions; a bracket waits for
 * regions to drain and holds new ones back (except on the worker itself). DisableGC holds a
 * bracket back for as long as it lasts. If event regions do not drain within
 * GC_GATE_WAIT_MS (an agent may hold its own lock in a region that another region waits
 * for), the bracket opens the gate, lets them run, and tries again; a thread held at the
 * gate waits at most a second. So no arrangement of agent locks can deadlock on it.
 * (JVMPI-suspended threads are not regions: with ids that never move, a suspended thread
 * needs no GC held back.) No shim mutex is held across any call into the agent or the VM.
 *
 * Also here: the OBJECT_ALLOCs an attaching thread holds until its THREAD_START (a bracket
 * must not free such an object first), and the heap capacity GC_FINISH reports, read
 * through a Runtime method made callable at VMInit (memory_preload).
 */
#include "classes/classes.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/internal.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

static _Atomic bool in_hidden_gc;           /* the collection the shim runs itself */

void mem_hidden_collection(void)
{
    atomic_store(&in_hidden_gc, true); /* ForceGarbageCollection is synchronous */
    jvmti_ok_at((*g_shim.jvmti)->ForceGarbageCollection(g_shim.jvmti), LOG_WARN,
                "ForceGarbageCollection to retire TLABs for OBJECT_ALLOC");
    atomic_store(&in_hidden_gc, false);
}

/* Frees waiting for the next bracket; free_total counts every free ever queued, so that a
 * wait can tell whether one came while it waited (free_n falls when a bracket takes them). */
static jlong *free_ids;
static size_t free_n, free_cap, free_cap_peak, free_total;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

void mem_free_queue_bytes(size_t *now, size_t *peak)
{
    pthread_mutex_lock(&free_lock);
    *now = free_cap * sizeof(jlong);
    *peak = free_cap_peak * sizeof(jlong);
    pthread_mutex_unlock(&free_lock);
}

/* ---- frees and the bracket ---- */

static void queue_free(jlong id)
{
    pthread_mutex_lock(&free_lock);
    if (free_n == free_cap) {
        size_t cap = free_cap ? free_cap * 2 : 4096;
        jlong *p = realloc(free_ids, cap * sizeof *p);
        if (p == NULL) {
            pthread_mutex_unlock(&free_lock);
            log_error("out of memory queueing OBJECT_FREE: a free is lost");
            return;
        }
        free_ids = p;
        free_cap = cap;
        if (cap > free_cap_peak)
            free_cap_peak = cap;
    }
    free_ids[free_n++] = id;
    free_total++;
    pthread_mutex_unlock(&free_lock);
}

/* From ObjectFree: the tracked heap loses the object, and its id is queued for the next
 * bracket. */
static void memory_on_free(jlong tag)
{
    if ((tag & TAG_ID_MASK) == 0)
        return; /* TAG_SHIM_OWN: never handed out */
    /* A class's mirror: its death is the class's unload (CLASS_UNLOAD), never OBJECT_FREE,
     * but an announced mirror leaves the tracked heap like any object. */
    bool mirror = classes_on_free(tag);
    jlong size = tag_size_bytes(tag);
    jlong id = tag & TAG_ID_MASK;
    /* The tracked heap (GC_FINISH's figures) holds what OBJECT_ALLOC announced, a request
     * answered from a dump's facts included (facts.c). */
    if (!(tag & TAG_ALLOCATED)) {
        size = mem_facts_claimed_size(id);
        if (size > 0 && tag_size_bytes(ids_retag(id, size, 0)) == 0)
            mem_big_size_take(id); /* too large for a tag: the claim kept it aside */
    }
    else if (size == 0)
        size = mem_big_size_take(id);
    if (size >= 0)
        mem_live_add(stripe_index(), -1, -size);
    /* Every tag the shim sets names an id it handed to an agent (an event, a dump, a
     * function's result: ids.h), so every tagged object that dies gets its OBJECT_FREE,
     * whether OBJECT_ALLOC, jobject2jobjectID, a request, a dump, an ENTRY2 receiver, a
     * monitor event or GetThreadObject named it first. */
    if (mirror || !events_any(JVMPI_EVENT_OBJECT_FREE))
        return;
    queue_free(id);
}

/* ObjectFree callbacks running now (on the Service Thread, or on a thread whose heap walk
 * purged dead tags): collect_frees waits until none runs. */
static _Atomic int frees_inflight;

static void JNICALL cb_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    atomic_fetch_add(&frees_inflight, 1);
    memory_on_free(tag);
    atomic_fetch_sub(&frees_inflight, 1);
}

static jint JNICALL abort_walk(jvmtiHeapReferenceKind kind,
                               const jvmtiHeapReferenceInfo *info, jlong class_tag,
                               jlong referrer_class_tag, jlong size, jlong *tag_ptr,
                               jlong *referrer_tag_ptr, jint length, void *user_data)
{
    (void)kind; (void)info; (void)class_tag; (void)referrer_class_tag; (void)size;
    (void)tag_ptr; (void)referrer_tag_ptr; (void)length; (void)user_data;
    return JVMTI_VISIT_ABORT;
}

/* Make JVMTI post the ObjectFree events it still holds for the last collection, on this
 * thread, now: a heap walk purges the dead tags first and posts their frees on its thread,
 * unless the Service Thread got there first (aborting the walk at the first reference keeps
 * it cheap). The walk scans and rehashes the whole tag map at a safepoint (about 130 ms per
 * bracket with 4 M tagged objects on JDK 17), so a bracket walks only when the Service
 * Thread has posted nothing for it (await_collection_frees). Re-setting the ObjectFree
 * event mode also flushes them on JDK 17 and 25, but deadlocks on both (the flushing
 * thread waits for the Service Thread without a safepoint check while the Service Thread
 * waits for a safepoint). A tag-map query takes 25-210 ms with the tag map locked
 * (allocating threads wait for it in SetTag) and was measured not to make JVMTI post them:
 * the same frees reached the same brackets without it. */
static void flush_frees(void)
{
    /* Not while the VM ends: a safepoint then can deadlock HotSpot (core/state.c,
     * shim_exit_near); the frees still come, from the JVM's own flush before VMDeath. */
    if (shim_exit_near()) {
        log_debug("GC bracket: no heap walk to collect frees, the VM is ending");
        return;
    }
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_reference_callback = abort_walk;
    /* Filtering untagged objects out spares the walk HotSpot's escape barrier: without a
     * filter or an initial object, FollowReferences first reallocates every scalar-replaced
     * object of every thread (EscapeBarrier::deoptimize_objects_all_threads) while all other
     * threads wait, and posts SampledObjectAlloc for each on this thread. Measured on JDK 25:
     * a thread suspended inside that barrier (an agent's sampler suspending this worker) made
     * every JVMTI call of every other thread wait for it for ever, the ResumeThread that
     * would have ended it included. */
    jvmti_ok_at((*g_shim.jvmti)->FollowReferences(g_shim.jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL,
                                                  NULL, &hc, NULL),
                LOG_INFO, "FollowReferences to collect pending ObjectFree events");
}

/* ---- OBJECT_ALLOCs held on an attaching thread ----
 * threads.c holds an attaching thread's events (its OBJECT_ALLOCs among them) in a
 * thread-local queue until its THREAD_START. A collection's bracket in that window would
 * post the OBJECT_FREE of such an object before its OBJECT_ALLOC. So the held ones are
 * listed here (rare: only attaching threads, while their Thread object is built), and the
 * bracket, for a free whose allocation is still held by every agent, drops the free and
 * marks the object dead, so the allocation is dropped too; for one being posted right now
 * (or posted to some agents and held for others), it keeps the free for the next bracket.
 * held_lock is a leaf; held_count lets the bracket skip the lookup when nothing is held. */
struct held_alloc {
    jlong id;
    uint32_t held_mask;   /* instances whose OBJECT_ALLOC is held */
    uint32_t posted_mask; /* instances it was posted to from the hold */
    int posting;          /* posts in progress */
    bool died;            /* its free came while it was held by every agent */
    UT_hash_handle hh;
};
static struct held_alloc *held_allocs;
static _Atomic size_t held_count;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static void held_remove_if_done(struct held_alloc *e)
{
    if (e->held_mask == 0 && e->posting == 0) {
        HASH_DEL(held_allocs, e);
        free(e);
        atomic_fetch_sub(&held_count, 1);
    }
}

bool memory_alloc_held(struct instance *inst, jobjectID id)
{
    jlong key = ids_tag(id) & TAG_ID_MASK;
    struct held_alloc *e;
    pthread_mutex_lock(&held_lock);
    HASH_FIND(hh, held_allocs, &key, sizeof key, e);
    if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->id = key;
        HASH_ADD(hh, held_allocs, id, sizeof e->id, e);
        atomic_fetch_add(&held_count, 1);
    }
    if (e != NULL)
        e->held_mask |= 1u << inst->slot;
    pthread_mutex_unlock(&held_lock);
    return e != NULL;
}

bool memory_alloc_release_begin(struct instance *inst, jobjectID id)
{
    jlong key = ids_tag(id) & TAG_ID_MASK;
    struct held_alloc *e;
    bool post = true;
    pthread_mutex_lock(&held_lock);
    HASH_FIND(hh, held_allocs, &key, sizeof key, e);
    if (e != NULL) {
        e->held_mask &= ~(1u << inst->slot);
        if (e->died)
            post = false;
        else
            e->posting++;
        held_remove_if_done(e);
    }
    pthread_mutex_unlock(&held_lock);
    return post;
}

void memory_alloc_release_end(struct instance *inst, jobjectID id)
{
    jlong key = ids_tag(id) & TAG_ID_MASK;
    struct held_alloc *e;
    pthread_mutex_lock(&held_lock);
    HASH_FIND(hh, held_allocs, &key, sizeof key, e);
    if (e != NULL) {
        e->posting--;
        e->posted_mask |= 1u << inst->slot;
        held_remove_if_done(e);
    }
    pthread_mutex_unlock(&held_lock);
}

/* The bracket's frees, ids[0..n): those whose OBJECT_ALLOC is still held are taken out
 * (dropped, or moved to *later for the next bracket). Returns the new n. */
static size_t frees_after_held(jlong *ids, size_t n, jlong **later, size_t *nlater)
{
    *later = NULL;
    *nlater = 0;
    if (atomic_load(&held_count) == 0)
        return n;
    size_t out = 0, dropped = 0;
    pthread_mutex_lock(&held_lock);
    for (size_t i = 0; i < n; i++) {
        struct held_alloc *e;
        HASH_FIND(hh, held_allocs, &ids[i], sizeof ids[i], e);
        if (e == NULL) {
            ids[out++] = ids[i];
        } else if (e->posting > 0 || e->posted_mask != 0) {
            jlong *p = realloc(*later, (*nlater + 1) * sizeof *p);
            if (p != NULL) {
                *later = p;
                p[(*nlater)++] = ids[i];
            }
        } else {
            e->died = true;
            dropped++;
        }
    }
    pthread_mutex_unlock(&held_lock);
    if (dropped > 0)
        report_note(REP_HELD_DIED, "an object allocated by a thread attaching through JNI died "
                                     "before its THREAD_START: neither its OBJECT_ALLOC nor its "
                                     "OBJECT_FREE posted (%zu in one collection)", dropped);
    return out;
}

/* Runtime.getRuntime() and totalMemory(), resolved and called once at VMInit before any
 * agent listens (memory_preload), so that a bracket reads the heap capacity without loading
 * or linking anything: the bracket's thread must post nothing between GC_START and
 * GC_FINISH (and the worker, being the shim's own, posts nothing of its own anyway). */
static jobject runtime_obj;     /* global ref */
static jmethodID runtime_total;

void memory_preload(JNIEnv *jni)
{
    jclass rt = (*jni)->FindClass(jni, "java/lang/Runtime");
    jmethodID get = rt ? (*jni)->GetStaticMethodID(jni, rt, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
    jmethodID total = rt ? (*jni)->GetMethodID(jni, rt, "totalMemory", "()J") : NULL;
    jobject r = get ? (*jni)->CallStaticObjectMethod(jni, rt, get) : NULL;
    if ((*jni)->ExceptionCheck(jni)) { /* JNI allows no other call with one pending */
        (*jni)->ExceptionClear(jni);
        r = NULL;
    }
    if (r && total) {
        (*jni)->CallLongMethod(jni, r, total); /* links it now */
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        else {
            runtime_obj = (*jni)->NewGlobalRef(jni, r);
            runtime_total = total;
        }
    }
    if (runtime_obj == NULL)
        log_warn("GC_FINISH: Runtime.totalMemory() is not callable; total_object_space will be 0");
    if (r)
        (*jni)->DeleteLocalRef(jni, r);
    if (rt)
        (*jni)->DeleteLocalRef(jni, rt);
}

static jlong heap_capacity(JNIEnv *jni)
{
    if (runtime_obj == NULL)
        return 0;
    jlong v = (*jni)->CallLongMethod(jni, runtime_obj, runtime_total);
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    return v;
}

static size_t frees_queued(void)
{
    pthread_mutex_lock(&free_lock);
    size_t n = free_n;
    pthread_mutex_unlock(&free_lock);
    return n;
}

static size_t frees_received(void)
{
    pthread_mutex_lock(&free_lock);
    size_t n = free_total;
    pthread_mutex_unlock(&free_lock);
    return n;
}

/* Take in the frees JVMTI still holds for the collections that have finished. The Service
 * Thread posts them, on JDK 17 as on 25, some 10-50 ms after the collection (measured on
 * the allocs bench: 10.5 and 46 ms on JDK 17). So: walk first if asked (flush_frees, once
 * await_collection_frees has waited in vain), then wait until 10 ms pass without a new free
 * and with no ObjectFree callback running; while none has come during this wait, wait up to
 * FIRST_FREE_MS for the first (bounded: 20 rounds of 10 ms). */
#define FIRST_FREE_MS 60
static void collect_frees(bool walk)
{
    size_t at_start = frees_queued(), rx_start = frees_received();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (walk)
        flush_frees();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t after_flush = frees_queued();
    for (int i = 0; i < 20; i++) {
        size_t before = frees_queued();
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        size_t now = frees_queued();
        bool quiet = now == before && atomic_load(&frees_inflight) == 0;
        /* A free queued before this wait (one that came late for the last bracket) is not
         * this collection's: the first of those is still awaited. */
        if (quiet && (frees_received() > rx_start || walk || (i + 1) * 10 >= FIRST_FREE_MS))
            break;
    }
    log_debug("GC bracket: %zu frees queued before the flush, %zu after it (%ld us), %zu after "
              "the quiet wait", at_start, after_flush,
              (long)((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000),
              frees_queued());
}

/* The frees of the collections that have finished, for a bracket about to be posted. The
 * Service Thread posts them after the collection, so they are awaited first. If none came,
 * either nothing tagged died or the Service Thread has not begun (a loaded machine can hold
 * it back past the wait, and the bracket would then go out empty, its frees one bracket
 * late: after a dump the agent asked for meanwhile), and the walk makes JVMTI hand over what
 * it still holds, on this thread. Never the walk first: a walk right after a collection,
 * while the Service Thread posts its frees, is what deadlocks HotSpot if the VM ends
 * meanwhile by System.exit (core/state.c, shim_exit_near). */
static void await_collection_frees(void)
{
    size_t rx = frees_received();
    collect_frees(false);
    if (frees_received() == rx)
        collect_frees(true);
}

/* ---- who posts a bracket ----
 * One bracket at a time: the worker's after a collection, or one posted inline by
 * memory_deliver_frees() on a thread about to give an agent something that comes after a
 * collection (a dump it asked for, DATA_DUMP_REQUEST, JVM_SHUT_DOWN). gc_owed counts the
 * collections whose bracket nobody has posted yet: each bracket takes one, so an agent
 * still sees one bracket per collection, whichever thread posts it, and the worker's task
 * for a collection whose bracket went out inline finds nothing to do. br_lock is a leaf,
 * never held across a call into the agent or the VM. */
static pthread_mutex_t br_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t br_cond = PTHREAD_COND_INITIALIZER;
static bool br_busy;
static _Atomic int gc_owed;

/* Wait (at most timeout_ms; unbounded if negative) until no bracket is being posted, and
 * claim the right to post one. */
static bool bracket_acquire(int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    if (timeout_ms >= 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        deadline.tv_sec += deadline.tv_nsec / 1000000000L;
        deadline.tv_nsec %= 1000000000L;
    }
    bool ok = true;
    pthread_mutex_lock(&br_lock);
    while (br_busy) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&br_cond, &br_lock);
        } else if (pthread_cond_timedwait(&br_cond, &br_lock, &deadline) != 0 && br_busy) {
            ok = false;
            break;
        }
    }
    if (ok)
        br_busy = true;
    pthread_mutex_unlock(&br_lock);
    return ok;
}

static void bracket_release(void)
{
    pthread_mutex_lock(&br_lock);
    br_busy = false;
    pthread_cond_broadcast(&br_cond);
    pthread_mutex_unlock(&br_lock);
}

/* May this thread post now? Until JVM_SHUT_DOWN, any; during it, only the thread that
 * delivers it (everything else is dropped then). */
static bool may_post_bracket(void)
{
    int phase = atomic_load(&g_shim.phase);
    return phase < PHASE_SHUTTING ||
           (phase == PHASE_SHUTTING && pthread_equal(pthread_self(), g_shim.shutdown_thread));
}

/* Post one bracket, the caller holding the right to: close the gate (except for the
 * caller's own region, if it is inside a handler), then GC_START, every queued free and
 * GC_FINISH, on this thread; it accounts for one collection. The worker (yield) gives up
 * before GC_START if a thread waits to post inline, and returns false. */
static bool post_bracket(JNIEnv *jni, JNIEnv *env_id, bool yield)
{
    gc_gate_set_posting(true);
    /* Inside a JVMPI call (a dump the agent asked for, with its frees owed first): the
     * regions still open may be handlers waiting for a lock the caller holds, so the bracket
     * goes out at once, while they wait; ids never move, so none of them can name an object
     * freed here that its event did not hold alive. */
    if (shim_in_call() && !gc_gate_close_now(gc_gate_in_region()))
        log_debug("GC bracket posted inside a JVMPI call while other threads' handlers run");
    for (int tries = 0; !shim_in_call() && !gc_gate_close(gc_gate_in_region(), yield); tries++) {
        if (yield && gc_gate_inline_waiting()) {
            gc_gate_set_posting(false);
            return false;
        }
        if (tries == 10) {
            log_warn("GC bracket: event handlers or DisableGC regions did not drain for %d ms; "
                     "posting GC_START/GC_FINISH while they run", 10 * GC_GATE_WAIT_MS);
            break;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!may_post_bracket()) {
        gc_gate_open();
        gc_gate_set_posting(false);
        return true;
    }
    jlong *ids;
    size_t n;
    pthread_mutex_lock(&free_lock);
    ids = free_ids;
    n = free_n;
    free_ids = NULL;
    free_n = free_cap = 0;
    pthread_mutex_unlock(&free_lock);
    int owed = atomic_load(&gc_owed);
    while (owed > 0 && !atomic_compare_exchange_weak(&gc_owed, &owed, owed - 1))
        ;
    jlong *later;
    size_t nlater;
    n = frees_after_held(ids, n, &later, &nlater);
    for (size_t i = 0; i < nlater; i++) /* for the next bracket: their allocation first */
        queue_free(later[i]);
    free(later);

    JVMPI_Event ev;
    gc_bracket_set_open(true);
    event_init(&ev, JVMPI_EVENT_GC_START, env_id);
    event_post_all(&ev);
    for (size_t i = 0; i < n; i++) {
        event_init(&ev, JVMPI_EVENT_OBJECT_FREE, env_id);
        ev.u.obj_free.obj_id = ids_from_tag(ids[i]);
        event_post_all(&ev);
    }
    free(ids);
    event_init(&ev, JVMPI_EVENT_GC_FINISH, env_id);
    mem_live_sum(&ev.u.gc_info.used_objects, &ev.u.gc_info.used_object_space);
    ev.u.gc_info.total_object_space = heap_capacity(jni);
    event_post_all(&ev);
    gc_bracket_set_open(false);
    gc_gate_open();
    gc_gate_set_posting(false);
    return true;
}

/* The worker's task, one per collection. */
static void gc_bracket(JNIEnv *jni, void *arg)
{
    (void)arg;
    /* DisableGC holds the bracket back for as long as it lasts (HotSpot deferred the GC);
     * unlike event handlers, such a region does not wait for anything the bracket does. */
    while (gc_disabled() && !shim_quiet()) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (shim_quiet() || atomic_load(&gc_owed) == 0)
        return; /* its bracket was posted inline already */
    await_collection_frees();
    for (int round = 0; round < 100 && !shim_quiet(); round++) {
        /* A thread posting inline goes first: wait until it has (it may take this
         * collection's bracket with it). */
        while (gc_gate_inline_waiting() && !shim_quiet()) {
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (!bracket_acquire(-1))
            return;
        bool done = shim_quiet() || atomic_load(&gc_owed) == 0 || post_bracket(jni, jni, true);
        bracket_release();
        if (done)
            return;
    }
}

void memory_deliver_frees(JNIEnv *jni, bool at_exit)
{
    if (jni == NULL || !gc_gate_active() || gc_gate_posting())
        return; /* asked inside GC_START..GC_FINISH: this bracket comes first anyway */
    bool owed = atomic_load(&gc_owed) > 0;
    if (!owed && frees_queued() == 0 && !at_exit)
        return; /* the common case: one load and an uncontended lock */
    /* DisableGC holds frees back (as HotSpot's GC lock held the collection back). */
    bool disabled = gc_disabled();
    /* A worker still closing the gate for its bracket steps back (this thread may be in a
     * handler, whose region would keep that gate from closing); one already posting is
     * waited for, at most 2 s (its handlers may wait for a lock this thread holds). Said
     * before the wait for the collection's frees: the worker waits for the same frees, and
     * would otherwise take the bracket first, leaving a dump requested in a handler to go
     * ahead of them. */
    gc_gate_inline_begin();
    if (owed && !disabled)
        await_collection_frees();
    /* Inside a JVMPI call, a bracket being posted now is not waited for: its GC_START
     * handler may wait for a lock the caller holds (shim.h). Its frees then reach the agent
     * after what the call delivers, as if the collection were still running. */
    bool mine = bracket_acquire(shim_in_call() ? 0 : 2000);
    gc_gate_inline_end();
    if (!mine && shim_in_call()) {
        report_note(REP_CALL_NO_WAIT, "a dump requested while the worker posted a GC "
                    "bracket went ahead of that bracket's frees (the request waits for no "
                    "other thread's handler)");
        return;
    }
    if (!mine) {
        log_warn("a GC bracket did not end within 2 s: %s before it", at_exit ? "JVM_SHUT_DOWN"
                 : "an event that comes after the collection is posted");
        return;
    }
    /* One bracket per collection not yet bracketed; the first carries the queued frees
     * (frees that came late for a bracket already posted get one of their own). */
    /* At exit the bracket names the worker thread, which posts brackets otherwise and is
     * still alive: the exiting thread may already have had its THREAD_END (on JDK 25 the
     * launcher's main thread ends, then returns as DestroyJavaVM to end the VM). */
    JNIEnv *env_id = at_exit && worker_env() != NULL ? worker_env() : jni;
    for (int i = 0; i < 64 && !disabled && may_post_bracket() &&
                    (atomic_load(&gc_owed) > 0 || frees_queued() > 0); i++)
        post_bracket(jni, env_id, false);
    bracket_release();
}

static void JNICALL cb_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
}

static void JNICALL cb_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    mem_facts_gc_finished(); /* any collection, the hidden one too, may free what a dump saw */
    /* In the GC: no JNI, no JVMTI. Only note it; the worker does the rest. */
    if (atomic_load(&in_hidden_gc))
        return;
    if (gc_gate_active()) {
        atomic_fetch_add(&gc_owed, 1);
        worker_submit(gc_bracket, NULL);
    }
}

void mem_gc_register(void)
{
    struct event_row freer = {.kind = EVK_ON,
                              .jvmti = {JVMTI_EVENT_OBJECT_FREE,
                                        JVMTI_EVENT_GARBAGE_COLLECTION_FINISH}};
    if (!g_shim.caps.can_generate_object_free_events) {
        freer.kind = EVK_UNAVAILABLE;
        freer.why = "because the JVM refused the object-free capability";
    }
    events_register(JVMPI_EVENT_OBJECT_FREE, &freer);
    struct event_row gc = {.kind = EVK_ON,
                           .jvmti = {JVMTI_EVENT_GARBAGE_COLLECTION_START,
                                     JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
                                     JVMTI_EVENT_OBJECT_FREE}};
    if (!g_shim.caps.can_generate_garbage_collection_events) {
        gc.kind = EVK_UNAVAILABLE;
        gc.why = "because the JVM refused the garbage-collection capability";
    }
    events_register(JVMPI_EVENT_GC_START, &gc);
    events_register(JVMPI_EVENT_GC_FINISH, &gc);
}

void mem_gc_callbacks(jvmtiEventCallbacks *cb)
{
    cb->ObjectFree = cb_object_free;
    cb->GarbageCollectionStart = cb_gc_start;
    cb->GarbageCollectionFinish = cb_gc_finish;
}
