/* memory.c — OBJECT_ALLOC / OBJECT_FREE / OBJECT_MOVE, ARENA_NEW / ARENA_DELETE,
 * GC_START / GC_FINISH brackets (the gate they close is events/gate.c).
 *
 * OBJECT_ALLOC: JVMTI SampledObjectAlloc with a sampling interval of 0 reports every
 * object the heap really allocates (TLAB fast paths and VM-internal allocations included;
 * allocations C2 removed by escape analysis never exist and are not reported). A thread
 * picks its next sample point only when it takes a sample, from the interval in force, and
 * a TLAB gets a sample end only when it is filled while the event is on. So the interval is
 * 0 from Agent_OnLoad on, and the JVMTI event is held on from there until every JVM_OnLoad
 * has returned (the event is not delivered before the live phase, so this costs nothing
 * before VMInit): every TLAB filled from the live phase on has a sample end. The one thread
 * older than Agent_OnLoad, main (JDK 17 keeps the 512 KiB point it picked when it was made:
 * measured, its first 5000 allocations were missed), is primed at VMInit: it allocates a
 * few 64 KiB arrays until it takes a sample, which picks its next point at interval 0. So
 * an agent that enables OBJECT_ALLOC in JVM_OnLoad (the common case) sees every
 * allocation with no collection forced. Enabling it later, or after the event was off, or
 * when attached to a running JVM, forces one collection (hidden from the agent, as HotSpot
 * hid the one it ran on enabling) that retires every TLAB, so each thread's very next
 * allocation is seen. Each object gets its tag then: the
 * id, the "allocation posted" flag and its size (ids.h), so nothing else is stored.
 * Objects that existed when the agent enabled OBJECT_ALLOC in JVM_OnLoad are announced at
 * start-up from a heap walk, as HotSpot did.
 *
 * OBJECT_FREE and the GC bracket: JVMTI's ObjectFree arrives on the Service Thread after the
 * GC, in a context that may not call JNI. JVMPI promises frees between GC_START and
 * GC_FINISH, and agents lock in GC_START and unlock in GC_FINISH. So the shim synthesizes
 * the bracket after each real collection on its worker thread: it collects JVMTI's pending
 * frees, closes the GC gate, posts GC_START, the OBJECT_FREEs it holds, and GC_FINISH with
 * the statistics of the tracked heap, and opens the gate again. Every tagged object that
 * dies gets its OBJECT_FREE: the shim tags an object only to hand its id out (ids.h).
 * HotSpot posted a collection's frees during it, before anything later; agents write their
 * figures in dump, DATA_DUMP_REQUEST and JVM_SHUT_DOWN handlers. So before those, the
 * thread about to post them posts the brackets still owed itself (memory_deliver_frees),
 * and the worker's task for that collection finds nothing left to do.
 *
 * The gate (events/gate.c) gives JVMPI's "GC is disabled while an event carrying ids runs"
 * its meaning: event deliveries and DisableGC spans are regions; a bracket waits for
 * regions to drain and holds new ones back (except on the worker itself). DisableGC holds a
 * bracket back for as long as it lasts. If event regions do not drain within
 * GC_GATE_WAIT_MS (an agent may hold its own lock in a region that another region waits
 * for), the bracket opens the gate, lets them run, and tries again; a thread held at the
 * gate waits at most a second. So no arrangement of agent locks can deadlock on it. (JVMPI-suspended threads are not regions:
 * with ids that never move, a suspended thread needs no GC held back.) No shim mutex is
 * held across any call into the agent or the VM.
 *
 * OBJECT_MOVE is never posted: ids are tags and never change (EnableEvent succeeds). One
 * arena, id 1 "Java heap", is announced with ARENA_NEW before any event names it; it never
 * goes away, so ARENA_DELETE is never posted.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#define ARENA_ID 1
#define ARENA_NAME "Java heap"

/* Tracked heap: objects whose OBJECT_ALLOC was posted and that have not been freed.
 * Counted per stripe slot (an allocating thread uses the slot of its JNIEnv) so that
 * threads allocating at once share no cache line; only GC_FINISH sums the slots. */
static struct live_slot {
    _Atomic jlong objects, bytes;
    char pad[64 - 2 * sizeof(jlong)];
} live[STRIPES];

static void live_add(int slot, jlong objects, jlong bytes)
{
    atomic_fetch_add_explicit(&live[slot].objects, objects, memory_order_relaxed);
    atomic_fetch_add_explicit(&live[slot].bytes, bytes, memory_order_relaxed);
}

static void live_sum(jlong *objects, jlong *bytes)
{
    jlong o = 0, b = 0;
    for (int i = 0; i < STRIPES; i++) {
        o += atomic_load_explicit(&live[i].objects, memory_order_relaxed);
        b += atomic_load_explicit(&live[i].bytes, memory_order_relaxed);
    }
    *objects = o;
    *bytes = b;
}
static _Atomic uint32_t arena_announced;    /* bit per instance */
static _Atomic bool in_hidden_gc;           /* the collection the shim runs itself */
/* The start-up sweep against allocation callbacks: see may_be_swept(). */
static _Atomic unsigned sweep_gen;          /* odd while a sweep runs; +2 per sweep */
#define SWEEP_RECHECKS 64
static _Thread_local struct {
    unsigned gen, left;
} tl_sweep;
static _Atomic bool sampling_on;
/* The JVMTI allocation event has been on since the live phase began and main is primed:
 * enabling OBJECT_ALLOC needs no collection (the top of this file). */
static _Atomic bool sampling_continuous;
static _Atomic bool sampling_held;          /* held on until JVM_OnLoad returns */
static _Thread_local int tl_priming;        /* 1 while priming, 2 once it took a sample */
/* OBJECT_ALLOC was on at start-up (the replay announced what existed) and has stayed on: every
 * object then either got its OBJECT_ALLOC or is one JVMTI never reported. */
static _Atomic bool alloc_complete;

/* Sizes too large for the tag (rare), by id. */
struct big_size {
    jlong id;
    jlong size;
    UT_hash_handle hh;
};
static struct big_size *big_sizes;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;

/* Frees waiting for the next bracket; free_total counts every free ever queued, so that a
 * wait can tell whether one came while it waited (free_n falls when a bracket takes them). */
static jlong *free_ids;
static size_t free_n, free_cap, free_cap_peak, free_total;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- arenas ---- */

static void announce_arena(JNIEnv *jni)
{
    uint32_t all = (1u << g_shim.ninst) - 1;
    if ((atomic_load(&arena_announced) & all) == all)
        return;
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        uint32_t bit = 1u << i;
        if (atomic_fetch_or(&arena_announced, bit) & bit)
            continue;
        JVMPI_Event ev;
        event_init(&ev, JVMPI_EVENT_ARENA_NEW, jni);
        ev.u.new_arena.arena_id = ARENA_ID;
        ev.u.new_arena.arena_name = ARENA_NAME;
        if (!event_post(inst, &ev))
            atomic_fetch_and(&arena_announced, ~bit); /* not enabled yet: tell it later */
    }
}

/* ---- OBJECT_ALLOC ---- */

/* Post OBJECT_ALLOC; true if some agent got it. */
static bool post_alloc(JNIEnv *jni, struct instance *only, jint flags, jobject obj,
                       jclass cls, jlong size, jobjectID id)
{
    jint is_array = JVMPI_NORMAL_OBJECT;
    jobjectID class_id = NULL;
    if (cls != NULL)
        classes_alloc_info(jni, cls, &is_array, &class_id);
    if (class_id == id) {
        /* java.lang.Class's own Class object, the one object that is its own class. HotSpot
         * never announced it unrequested (it lived with the classes, which its start-up
         * sweep did not announce as objects: an allocation-site profiler that asks
         * RequestEvent(CLASS_LOAD, class_id) for every NORMAL_OBJECT's unknown class_id
         * would have crashed on it), and asked for, gave it class_id NULL, so that an agent
         * that asks for each unknown class_id by RequestEvent(OBJECT_ALLOC) reaches the end
         * of the chain. The shim does both. */
        if (!(flags & JVMPI_REQUESTED_EVENT))
            return false;
        class_id = NULL;
        is_array = JVMPI_NORMAL_OBJECT;
    }
    announce_arena(jni);
    /* The new object is at hand for requests from the handler (jobjectID2jobject,
     * OBJECT_DUMP of the object just announced). */
    int hand = ids_hand_open();
    ids_hand(id, obj);
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_OBJECT_ALLOC | flags, jni);
    ev.u.obj_alloc.arena_id = ARENA_ID;
    ev.u.obj_alloc.class_id = class_id;
    ev.u.obj_alloc.is_array = is_array;
    ev.u.obj_alloc.size = size > 0x7fffffff ? 0x7fffffff : (jint)size;
    ev.u.obj_alloc.obj_id = id;
    bool any;
    if (only != NULL)
        any = event_post(only, &ev);
    else if (g_shim.ninst == 1)
        any = event_post(&g_shim.inst[0], &ev); /* the one agent: no copy needed */
    else {
        any = false;
        for (int i = 0; i < g_shim.ninst; i++) {
            if (!event_on(&g_shim.inst[i], JVMPI_EVENT_OBJECT_ALLOC))
                continue;
            JVMPI_Event copy = ev; /* each agent gets its own, unscribbled copy */
            any |= event_post(&g_shim.inst[i], &copy);
        }
    }
    ids_hand_close(hand);
    return any;
}

static void track(jlong tag, jlong size, int slot)
{
    live_add(slot, 1, size);
    if (tag_size_bytes(tag) == 0 && size > 0) {
        struct big_size *b = malloc(sizeof *b);
        if (b != NULL) {
            b->id = tag & TAG_ID_MASK;
            b->size = size;
            pthread_mutex_lock(&big_lock);
            HASH_ADD(hh, big_sizes, id, sizeof b->id, b);
            pthread_mutex_unlock(&big_lock);
        }
    }
}

/* Might the start-up sweep have tagged (and reported) the object of this callback?
 * A thread's allocation callback can start late: the JVM leaves the VM for the callback,
 * the sweep's safepoint may run right then, and the sweep finds the new object first. So
 * a callback reads the tag first while a sweep runs, and for each thread's first
 * SWEEP_RECHECKS callbacks after one (a thread's callbacks run in allocation order, and
 * the JVM may deliver a few allocations it collected inside the VM in one batch). Every
 * later callback is for an object allocated after the sweep, which nothing else can have
 * tagged: it takes the SetTag alone, as a native agent would. The tag read is a tag-map
 * lookup that misses (the most expensive kind): before, it was made for every allocation
 * during the two seconds after the sweep. */
static bool may_be_swept(void)
{
    unsigned g = atomic_load_explicit(&sweep_gen, memory_order_acquire);
    if (g == 0)
        return false; /* no sweep ever ran */
    if (g & 1)
        return true;
    if (tl_sweep.gen != g) {
        tl_sweep.gen = g;
        tl_sweep.left = SWEEP_RECHECKS;
        return true;
    }
    if (tl_sweep.left > 0) {
        tl_sweep.left--;
        return true;
    }
    return false;
}

static void JNICALL cb_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                     jobject obj, jclass cls, jlong size)
{
    if (tl_priming) {
        tl_priming = 2;
        return;
    }
    if (shim_quiet() || shim_own_java())
        return;
    (void)thread;
    if (!events_any(JVMPI_EVENT_OBJECT_ALLOC))
        return;
    /* A new object: no other thread can have tagged it, so no lock is needed; only the
     * start-up sweep may have reached it first. */
    jlong tag = 0;
    if (may_be_swept())
        (*jvmti)->GetTag(jvmti, obj, &tag);
    if (tag == 0) {
        tag = ids_new_tag(size, TAG_ALLOCATED);
        if ((*jvmti)->SetTag(jvmti, obj, tag) != JVMTI_ERROR_NONE)
            return;
    } else if (tag & TAG_ALLOCATED) {
        return; /* the start-up sweep reported it while this callback was on its way */
    } else {
        tag = ids_retag(tag, size, TAG_ALLOCATED);
        (*jvmti)->SetTag(jvmti, obj, tag);
    }
    track(tag, size, stripe_of(jni));
    if (!post_alloc(jni, NULL, 0, obj, cls, size, ids_from_tag(tag)) && shim_quiet()) {
        /* JVM_SHUT_DOWN began while this callback ran, and no agent got the event: the id
         * was never handed out, so the object must not get an OBJECT_FREE at exit. */
        (*jvmti)->SetTag(jvmti, obj, 0);
        live_add(stripe_of(jni), -1, -size);
    }
}

/* Start-up: objects that already exist, from one heap walk. */
struct sweep {
    jlong *tags;        /* (tag, class tag, size) triples */
    size_t n, cap;
};

/* Heap fillers: the dead space the JVM formats as objects of its own classes (JDK 25:
 * jdk.internal.vm.FillerObject and the FillerElement array, whose element class is `int`).
 * A heap walk reports them; they are no Java objects and HotSpot's heap had none, so the
 * start-up announcement skips them. Their class tags, found among the loaded classes. */
static jlong filler_tags[4];
static int filler_n;

static bool is_filler(jlong class_tag)
{
    for (int i = 0; i < filler_n; i++)
        if (filler_tags[i] == (class_tag & TAG_ID_MASK))
            return true;
    return false;
}

static jint JNICALL sweep_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                             void *user_data)
{
    (void)length;
    struct sweep *s = user_data;
    if ((class_tag != 0 && is_filler(class_tag)) || *tag_ptr == TAG_SHIM_OWN)
        return 0;
    if (*tag_ptr & TAG_ALLOCATED)
        return 0; /* already reported live (allocated while the shim started up) */
    if (*tag_ptr == 0)
        *tag_ptr = ids_new_tag(size, TAG_ALLOCATED);
    else
        *tag_ptr = ids_retag(*tag_ptr, size, TAG_ALLOCATED); /* same id, now with its size */
    if (s->n + 3 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 3 * 65536;
        jlong *t = realloc(s->tags, cap * sizeof *t);
        if (t == NULL)
            return JVMTI_VISIT_ABORT;
        s->tags = t;
        s->cap = cap;
    }
    s->tags[s->n++] = *tag_ptr;
    s->tags[s->n++] = class_tag;
    s->tags[s->n++] = size;
    return 0;
}

static void tag_loaded_classes(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses for the start-up OBJECT_ALLOC sweep"))
        return;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        /* A class record (not just a tag): the sweep names each object's class through it.
         * Definition before use: agents with CLASS_LOAD hear of every instance class first
         * (as in the class replay); arrays only get a record. */
        jint st = 0;
        (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st);
        char *sig = NULL;
        if (filler_n < 4 && (*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cs[i], &sig, NULL) ==
                                JVMTI_ERROR_NONE) {
            bool filler = strncmp(sig, "Ljdk/internal/vm/Filler", 23) == 0 ||
                          strncmp(sig, "[Ljdk/internal/vm/Filler", 24) == 0;
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
            if (filler) {
                jobjectID fid = classes_register(jni, cs[i]);
                if (fid != NULL)
                    filler_tags[filler_n++] = ids_tag(fid);
                (*jni)->DeleteLocalRef(jni, cs[i]);
                continue;
            }
        }
        /* Every Class object is announced below: an agent may ask CLASS_LOAD for any of them
         * from its handler, inside a JVMPI call, where a class could not be linked
         * (classes/announce.c, announce()). So those not yet linked are linked here, at
         * start-up, as the class replay links them (HotSpot's CLASS_LOAD needed no
         * linking). */
        if (!(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE |
                    JVMTI_CLASS_STATUS_ERROR))) {
            classes_prepare(jni, cs[i]);
            classes_id_announced(jni, cs[i]);
        } else {
            classes_register(jni, cs[i]);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)cs);
}

void memory_replay(JNIEnv *jni)
{
    if (!events_any(JVMPI_EVENT_OBJECT_ALLOC))
        return;
    /* Classes first get ids, so every object's class tag names a class. */
    tag_loaded_classes(jni);
    struct sweep s = {0};
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = sweep_cb;
    atomic_fetch_add(&sweep_gen, 1); /* odd: callbacks read tags from now on */
    jvmtiError err = (*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, 0, NULL, &hc, &s);
    atomic_fetch_add(&sweep_gen, 1); /* even: each thread checks its next few callbacks */
    if (!jvmti_ok(err, "IterateThroughHeap for the start-up OBJECT_ALLOC sweep")) {
        free(s.tags);
        return;
    }
    memory_announce_tags(jni, s.tags, s.n / 3);
    atomic_store(&alloc_complete, true);
    log_debug("start-up replay: %zu objects", s.n / 3);
    free(s.tags);
}

/* Definition before use for objects JVMTI never reported: an event about to name obj
 * first announces its class and, while OBJECT_ALLOC has been on since start-up, the object
 * itself, on the current thread. JVMTI samples no allocation made while one of its callbacks runs on the
 * thread (the shim's own reflection in an event, a Thread made by CreateSystemThread in a
 * handler, MemberNames on JDK 25), and makes mirrors of classes without sampling them; on
 * HotSpot every one of these got an OBJECT_ALLOC when it was allocated. The common case, an
 * object already announced, costs one GetTag. */
jobjectID memory_id_announced(JNIEnv *jni, jobject obj)
{
    if (obj == NULL)
        return NULL;
    jclass cls = (*jni)->GetObjectClass(jni, obj);
    classes_id_announced(jni, cls); /* its class, before the id is used */
    jobjectID id = NULL;
    /* Only while OBJECT_ALLOC has been on since start-up: then an object without the flag
     * is one JVMTI never reported. Enabled later, it may be an object that existed before
     * (HotSpot did not announce those either: agents ask with RequestEvent). Until
     * JVM_INIT_DONE the start-up replay announces what exists; announcing here too would put
     * events on threads whose THREAD_START the replay has not posted yet. */
    /* The object is at hand: its id is kept resolvable (ids_of_kept, core/ids.c). */
    if (!memory_alloc_complete()) {
        id = ids_of_kept(jni, obj);
    } else {
        jlong tag = 0;
        (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
        jlong ctag = 0;
        if (tag & TAG_ALLOCATED) {
            id = ids_from_tag(tag);
            ids_keep_tagged(jni, obj, tag);
        } else if (tag != 0 && (*g_shim.jvmti)->GetTag(g_shim.jvmti, cls, &ctag) ==
                                   JVMTI_ERROR_NONE && (ctag & TAG_ID_MASK) == (tag & TAG_ID_MASK)) {
            id = ids_from_tag(tag); /* java.lang.Class's own Class object: never unrequested */
            ids_keep_tagged(jni, obj, tag);
        } else {
            jlong size = 0;
            (*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, obj, &size);
            id = ids_claim_allocated(jni, obj, size, &tag);
            if (tag != 0) {
                track(tag, size, stripe_of(jni));
                post_alloc(jni, NULL, 0, obj, cls, size, id);
            }
            ids_of_kept(jni, obj);
        }
    }
    (*jni)->DeleteLocalRef(jni, cls);
    ids_hand(id, obj); /* at hand while the event that names it is delivered */
    return id;
}

bool memory_alloc_complete(void)
{
    return atomic_load(&alloc_complete) && events_any(JVMPI_EVENT_OBJECT_ALLOC) &&
           atomic_load(&g_shim.phase) >= PHASE_LIVE;
}

/* Objects an announcement (start-up or a dump's) has marked as announced and not yet
 * posted. The handlers of its first events may ask for one of the later ones with
 * RequestEvent(OBJECT_ALLOC) (an agent that requests the Class object of every class it
 * meets does): the request takes it out of the announcement, so it is announced once. One
 * set per announcement running, sorted ids and a taken flag each; pending_lock is a leaf. */
struct pending_set {
    jlong *ids;
    unsigned char *taken;
    size_t n;
    struct pending_set *next;
};
static struct pending_set *pending_sets;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_jlong(const void *a, const void *b)
{
    jlong x = *(const jlong *)a, y = *(const jlong *)b;
    return x < y ? -1 : x > y;
}

/* True if id was waiting in an announcement and is now taken out of it (by the caller). */
static bool pending_take(jlong id)
{
    bool took = false;
    pthread_mutex_lock(&pending_lock);
    for (struct pending_set *p = pending_sets; p != NULL && !took; p = p->next) {
        jlong *at = bsearch(&id, p->ids, p->n, sizeof *p->ids, cmp_jlong);
        if (at != NULL && !p->taken[at - p->ids]) {
            p->taken[at - p->ids] = 1;
            took = true;
        }
    }
    pthread_mutex_unlock(&pending_lock);
    return took;
}

void memory_announce_tags(JNIEnv *jni, const jlong *t, size_t n)
{
    struct pending_set ps = {0};
    if (n > 0) {
        ps.ids = malloc(n * sizeof *ps.ids);
        ps.taken = calloc(n, 1);
    }
    if (ps.ids != NULL && ps.taken != NULL) {
        for (size_t i = 0; i < n; i++)
            ps.ids[i] = t[3 * i] & TAG_ID_MASK;
        qsort(ps.ids, n, sizeof *ps.ids, cmp_jlong);
        ps.n = n;
        pthread_mutex_lock(&pending_lock);
        ps.next = pending_sets;
        pending_sets = &ps;
        pthread_mutex_unlock(&pending_lock);
    }
    for (size_t i = 0; i < n; i++, t += 3) {
        if (ps.n > 0 && !pending_take(t[0] & TAG_ID_MASK))
            continue; /* requested meanwhile: the agent has it */
        if ((t[0] & TAG_ID_MASK) == (t[1] & TAG_ID_MASK))
            continue; /* java.lang.Class's own Class object: only ever requested (post_alloc) */
        jobjectID cid = ids_from_tag(t[1]);
        (*jni)->PushLocalFrame(jni, 8);
        jclass cls = t[1] ? classes_local_ref(jni, cid) : NULL;
        track(t[0], t[2], stripe_of(jni));
        post_alloc(jni, NULL, 0, NULL, cls, t[2], ids_from_tag(t[0]));
        (*jni)->PopLocalFrame(jni, NULL);
    }
    if (ps.n > 0) {
        pthread_mutex_lock(&pending_lock);
        struct pending_set **pp = &pending_sets;
        while (*pp != &ps)
            pp = &(*pp)->next;
        *pp = ps.next;
        pthread_mutex_unlock(&pending_lock);
    }
    free(ps.ids);
    free(ps.taken);
}

static jint request_object_alloc(struct instance *inst, JNIEnv *jni, void *arg)
{
    jobjectID id = arg;
    const char *why = NULL;
    (*jni)->PushLocalFrame(jni, 8);
    jobject o = ids_resolve(jni, id, &why);
    jint rc = JVMPI_FAIL;
    if (o == NULL) {
        ids_bad(inst, ids_bad_kind(why), "RequestEvent(OBJECT_ALLOC, %p): %s: JVMPI_FAIL",
                (void *)id, why);
    } else {
        jlong size = 0, tag = 0;
        (*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, o, &size);
        jclass cls = (*jni)->GetObjectClass(jni, o);
        /* From now on the agent knows the object: mark it announced, so that neither the
         * start-up announcement nor a first use (memory_id_announced) announces it a
         * second time, and its death is an OBJECT_FREE, as on HotSpot. */
        ids_claim_allocated(jni, o, size, &tag);
        if (tag == 0 && pending_take(ids_tag(id)) && /* due in an announcement */
            !jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, o, &tag), LOG_WARN,
                         "GetTag of an object a requested OBJECT_ALLOC names"))
            tag = 0;
        if (tag != 0)
            track(tag, size, stripe_of(jni));
        post_alloc(jni, inst, JVMPI_REQUESTED_EVENT, o, cls, size, id);
        /* The other agents would have had it unrequested from the start-up announcement
         * (still ahead) or from its first use: they get it now instead. */
        if (tag != 0 && g_shim.ninst > 1 &&
            (atomic_load(&g_shim.phase) < PHASE_LIVE || memory_alloc_complete()))
            for (int i = 0; i < g_shim.ninst; i++)
                if (&g_shim.inst[i] != inst)
                    post_alloc(jni, &g_shim.inst[i], 0, o, cls, size, id);
        rc = JVMPI_SUCCESS;
    }
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

/* ---- frees and the bracket ---- */

static void queue_free(jlong id);

void memory_on_free(jlong tag)
{
    if ((tag & TAG_ID_MASK) == 0)
        return; /* TAG_SHIM_OWN: never handed out */
    /* A class's mirror: its death is the class's unload (CLASS_UNLOAD), never OBJECT_FREE,
     * but an announced mirror leaves the tracked heap like any object. */
    bool mirror = classes_on_free(tag);
    jlong size = tag_size_bytes(tag);
    jlong id = tag & TAG_ID_MASK;
    /* The tracked heap (GC_FINISH's figures) holds what OBJECT_ALLOC announced. */
    if (!(tag & TAG_ALLOCATED))
        size = -1;
    else if (size == 0) {
        struct big_size *b;
        pthread_mutex_lock(&big_lock);
        HASH_FIND(hh, big_sizes, &id, sizeof id, b);
        if (b != NULL)
            HASH_DEL(big_sizes, b);
        pthread_mutex_unlock(&big_lock);
        if (b != NULL) {
            size = b->size;
            free(b);
        }
    }
    if (size >= 0)
        live_add(stripe_index(), -1, -size);
    /* Every tag the shim sets names an id it handed to an agent (an event, a dump, a
     * function's result: ids.h), so every tagged object that dies gets its OBJECT_FREE,
     * whether OBJECT_ALLOC, jobject2jobjectID, a request, a dump, an ENTRY2 receiver, a
     * monitor event or GetThreadObject named it first. */
    if (mirror || !events_any(JVMPI_EVENT_OBJECT_FREE))
        return;
    queue_free(id);
}

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
 * bracket with 4 M tagged objects on JDK 17), so the worker's bracket walks only when the
 * Service Thread has posted nothing (gc_bracket); a bracket posted inline walks always: it
 * must not miss a free the Service Thread has not started on. Re-setting the ObjectFree
 * event mode also flushes them on JDK 17 and 25, but deadlocked on both (the flushing
 * thread waits for the Service Thread without a safepoint check while the Service Thread
 * waits for a safepoint). A tag-map query, used before, took 25-210 ms with the tag map
 * locked (allocating threads wait for it in SetTag) and was measured not to make JVMTI post
 * them: the same frees reached the same brackets without it. */
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
    live_sum(&ev.u.gc_info.used_objects, &ev.u.gc_info.used_object_space);
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
    /* In the GC: no JNI, no JVMTI. Only note it; the worker does the rest. */
    if (atomic_load(&in_hidden_gc))
        return;
    if (gc_gate_active()) {
        atomic_fetch_add(&gc_owed, 1);
        worker_submit(gc_bracket, NULL);
    }
}

/* Enabling OBJECT_ALLOC: interval 0, and a collection to retire every TLAB so that each
 * thread's next allocation is sampled (JDK 17 keeps old sample points until then). */
static void alloc_changed(int t, bool any)
{
    (void)t;
    if (!any) {
        atomic_store(&alloc_complete, false);
        if (!atomic_load(&sampling_held))
            atomic_store(&sampling_continuous, false); /* the JVMTI event goes off */
    }
    if (any == atomic_load(&sampling_on))
        return;
    atomic_store(&sampling_on, any);
    if (any && atomic_load(&g_shim.phase) >= PHASE_STARTING &&
        !atomic_load(&sampling_continuous)) {
        /* The JVMTI event must be on before the collection retires the TLABs. */
        (*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                  JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
        atomic_store(&in_hidden_gc, true); /* ForceGarbageCollection is synchronous */
        jvmti_ok_at((*g_shim.jvmti)->ForceGarbageCollection(g_shim.jvmti), LOG_WARN,
                    "ForceGarbageCollection to retire TLABs for OBJECT_ALLOC");
        atomic_store(&in_hidden_gc, false);
    }
}

/* JVMPISHIM_MEMSTATS=1: one line on stderr at VMDeath with what the shim holds per
 * tracked object. The shim keeps no per-object table (the id, the "reported" flag and the
 * size live in the object's JVMTI tag, in the JVM's tag map); what it allocates in
 * proportion to objects is the queue of frees waiting for the next GC bracket and the
 * sizes too large for a tag. Those are counted here, with the process's malloc figure
 * (all arenas), which the benchmark compares with the native agent's at the same point. */
void memory_print_stats(void)
{
    const char *e = getenv("JVMPISHIM_MEMSTATS");
    if (e == NULL || e[0] == '\0' || e[0] == '0')
        return;
    jlong objects = 0, bytes = 0;
    live_sum(&objects, &bytes);
    pthread_mutex_lock(&free_lock);
    size_t queue = free_cap * sizeof(jlong), queue_peak = free_cap_peak * sizeof(jlong);
    pthread_mutex_unlock(&free_lock);
    pthread_mutex_lock(&big_lock);
    size_t nbig = HASH_COUNT(big_sizes);
    size_t big = nbig * sizeof(struct big_size);
    if (big_sizes != NULL)
        big += sizeof(UT_hash_table) + big_sizes->hh.tbl->num_buckets * sizeof(UT_hash_bucket);
    pthread_mutex_unlock(&big_lock);
    struct mallinfo2 mi = mallinfo2();
    size_t own = queue + big, own_peak = queue_peak + big;
    fprintf(stderr,
            "jvmpishim: memstats: live_objects=%lld live_bytes=%lld own_bytes=%zu "
            "own_peak_bytes=%zu own_peak_per_object=%.3f free_queue=%zu free_queue_peak=%zu "
            "large_sizes=%zu large_size_bytes=%zu malloc_in_use=%zu\n",
            (long long)objects, (long long)bytes, own, own_peak,
            objects > 0 ? (double)own_peak / (double)objects : 0.0, queue, queue_peak, nbig,
            big, mi.uordblks + mi.hblkhd);
}

void memory_onload(void)
{
    if (!g_shim.caps.can_generate_sampled_object_alloc_events)
        return;
    if (!jvmti_ok_at((*g_shim.jvmti)->SetHeapSamplingInterval(g_shim.jvmti, 0), LOG_WARN,
                     "SetHeapSamplingInterval(0) in Agent_OnLoad"))
        return;
    if (g_shim.attached)
        return; /* threads with old sample points and TLABs exist: enabling collects */
    atomic_store(&sampling_held, true);
    events_hold_jvmti(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, true);
    atomic_store(&sampling_continuous, true);
}

void memory_prime_sampling(JNIEnv *jni)
{
    if (!atomic_load(&sampling_held))
        return;
    /* 64 KiB arrays until this thread takes a sample (JDK 17: 4 of them, JDK 25: 1); each
     * is marked so that no event, sweep or free ever names it. */
    tl_priming = 1;
    int n = 0;
    for (; n < 256 && tl_priming == 1; n++) {
        jbyteArray a = (*jni)->NewByteArray(jni, 65536);
        if (a == NULL) {
            (*jni)->ExceptionClear(jni);
            break;
        }
        (*g_shim.jvmti)->SetTag(g_shim.jvmti, a, TAG_SHIM_OWN);
        (*jni)->DeleteLocalRef(jni, a);
    }
    bool primed = tl_priming == 2;
    tl_priming = 0;
    if (!primed) {
        atomic_store(&sampling_continuous, false);
        log_info("OBJECT_ALLOC: the main thread took no allocation sample in %d arrays of "
                 "64 KiB; enabling OBJECT_ALLOC will collect once to reset sample points", n);
    } else {
        log_debug("OBJECT_ALLOC: the main thread's sample point reset after %d arrays", n);
    }
}

void memory_onload_done(void)
{
    if (!atomic_exchange(&sampling_held, false))
        return;
    if (!events_any(JVMPI_EVENT_OBJECT_ALLOC))
        atomic_store(&sampling_continuous, false); /* the JVMTI event goes off now */
    events_hold_jvmti(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, false);
}

void memory_module_init(void)
{
    struct event_row alloc = {.kind = EVK_ON,
                              .jvmti = {JVMTI_EVENT_SAMPLED_OBJECT_ALLOC},
                              .on_change = alloc_changed,
                              .request = request_object_alloc};
    if (!g_shim.caps.can_generate_sampled_object_alloc_events) {
        alloc.kind = EVK_UNAVAILABLE;
        alloc.why = "because another agent holds the sampled-allocation capability (only one "
                    "JVMTI environment may have it)";
    }
    events_register(JVMPI_EVENT_OBJECT_ALLOC, &alloc);
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
    /* Ids never move and the one arena never goes away: these succeed and never come. */
    struct event_row never = {.kind = EVK_ON};
    events_register(JVMPI_EVENT_OBJECT_MOVE, &never);
    events_register(JVMPI_EVENT_ARENA_DELETE, &never);
    struct event_row arena = {.kind = EVK_ON};
    events_register(JVMPI_EVENT_ARENA_NEW, &arena);
}

void memory_module_callbacks(jvmtiEventCallbacks *cb)
{
    cb->SampledObjectAlloc = cb_sampled_alloc;
    cb->ObjectFree = cb_object_free;
    cb->GarbageCollectionStart = cb_gc_start;
    cb->GarbageCollectionFinish = cb_gc_finish;
}
