/* alloc.c — OBJECT_ALLOC: the JVMTI sampling it rests on, the first use of an object JVMTI
 * never reported, RequestEvent(OBJECT_ALLOC), and ARENA_NEW for the one arena.
 *
 * JVMTI SampledObjectAlloc with a sampling interval of 0 reports every object the heap
 * really allocates (TLAB fast paths and VM-internal allocations included; allocations C2
 * removed by escape analysis never exist and are not reported). A thread picks its next
 * sample point only when it takes a sample, from the interval in force, and a TLAB gets a
 * sample end only when it is filled while the event is on. So the interval is 0 from
 * Agent_OnLoad on, and the JVMTI event is held on from there until every JVM_OnLoad has
 * returned (the event is not delivered before the live phase, so this costs nothing before
 * VMInit): every TLAB filled from the live phase on has a sample end. The one thread older
 * than Agent_OnLoad, main (JDK 17 keeps the 512 KiB point it picked when it was made:
 * measured, its first 5000 allocations were missed), is primed at VMInit: it allocates a
 * few 64 KiB arrays until it takes a sample, which picks its next point at interval 0. So
 * an agent that enables OBJECT_ALLOC in JVM_OnLoad (the common case) sees every allocation
 * with no collection forced. Enabling it later, or after the event was off, or when
 * attached to a running JVM, forces one collection (hidden from the agent, as HotSpot hid
 * the one it ran on enabling: gc.c) that retires every TLAB, so each thread's very next
 * allocation is seen. Each object gets its tag then: the id, the "allocation posted" flag
 * and its size (ids.h), so nothing else is stored but the sizes too large for a tag.
 * Objects that existed when the agent enabled OBJECT_ALLOC in JVM_OnLoad are announced at
 * start-up from a heap walk (memory.c), as HotSpot did; memory_announce_tags posts them.
 *
 * One arena, id 1 "Java heap", is announced with ARENA_NEW before any event names it.
 */
#include "classes/classes.h"
#include "core/ids.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/internal.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <uthash.h>

#define ARENA_ID 1
#define ARENA_NAME "Java heap"

struct mem_live_slot mem_live[STRIPES];

static _Atomic uint32_t arena_announced;    /* bit per instance */
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

jlong mem_big_size_take(jlong id)
{
    struct big_size *b;
    pthread_mutex_lock(&big_lock);
    HASH_FIND(hh, big_sizes, &id, sizeof id, b);
    if (b != NULL)
        HASH_DEL(big_sizes, b);
    pthread_mutex_unlock(&big_lock);
    if (b == NULL)
        return 0;
    jlong size = b->size;
    free(b);
    return size;
}

size_t mem_big_sizes(size_t *bytes)
{
    pthread_mutex_lock(&big_lock);
    size_t n = HASH_COUNT(big_sizes);
    *bytes = n * sizeof(struct big_size);
    if (big_sizes != NULL)
        *bytes += sizeof(UT_hash_table) + big_sizes->hh.tbl->num_buckets * sizeof(UT_hash_bucket);
    pthread_mutex_unlock(&big_lock);
    return n;
}

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
    mem_live_add(slot, 1, size);
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
 * lookup that misses (the most expensive kind), so it is kept to these few callbacks. */
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

void mem_sweep_begin(void)
{
    atomic_fetch_add(&sweep_gen, 1); /* odd: callbacks read tags from now on */
}

void mem_sweep_end(void)
{
    atomic_fetch_add(&sweep_gen, 1); /* even: each thread checks its next few callbacks */
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
        jvmti_ignore((*jvmti)->GetTag(jvmti, obj, &tag),
                     "GetTag of a new object: unread, it is taken as untagged and tagged now");
    if (tag == 0) {
        tag = ids_new_tag(size, TAG_ALLOCATED);
        if (!jvmti_ok_at((*jvmti)->SetTag(jvmti, obj, tag), LOG_DEBUG,
                         "SetTag of a new object (its OBJECT_ALLOC is not posted)"))
            return;
    } else if (tag & TAG_ALLOCATED) {
        return; /* the start-up sweep reported it while this callback was on its way */
    } else {
        tag = ids_retag(tag, size, TAG_ALLOCATED);
        jvmti_ignore((*jvmti)->SetTag(jvmti, obj, tag),
                     "SetTag adding the allocated flag: the id is the same either way");
    }
    track(tag, size, stripe_of(jni));
    if (!post_alloc(jni, NULL, 0, obj, cls, size, ids_from_tag(tag)) && shim_quiet()) {
        /* JVM_SHUT_DOWN began while this callback ran, and no agent got the event: the id
         * was never handed out, so the object must not get an OBJECT_FREE at exit. */
        jvmti_ignore((*jvmti)->SetTag(jvmti, obj, 0),
                     "SetTag(0) of an object no agent heard of, as JVM_SHUT_DOWN begins");
        mem_live_add(stripe_of(jni), -1, -size);
    }
}

/* ---- objects JVMTI never reported, announcements and requests ---- */

/* Objects this thread named lately whose class every listening agent had been told about
 * (direct-mapped by id): naming one again skips the class (GetObjectClass, the class's
 * record and its check, DeleteLocalRef: about half of what METHOD_ENTRY2 cost the shim,
 * docs/performance.md, *Delivering one event*), as receivers repeat from call to call. An
 * object's class never changes and stays loaded while the object lives, and an agent's
 * "announced" bit, once set, stays; an entry holds only while no agent has switched
 * CLASS_LOAD (classes_announce_gen), no instance was added (ninst) and, on i386, the id
 * epoch has not turned (an id is reissued to another object only in a later epoch). */
#define SEEN_BITS 6
#define SEEN_SLOTS (1u << SEEN_BITS)
struct seen_slot {
    jlong id;
    uint64_t gen;
    int64_t epoch;
    int ninst;
};
static _Thread_local struct seen_slot *tl_seen; /* SEEN_SLOTS slots (shim_thread_block) */

static inline int64_t id_epoch(void)
{
#ifdef IDS_32
    return (int64_t)(ids_next() >> 32);
#else
    return 0; /* ids are never reissued */
#endif
}

/* Fibonacci hashing: the objects a thread names were tagged among others, so their ids can
 * come in strides, which the low bits alone fold onto a few slots (a workload's four
 * receivers, 256 ids apart, took two slots of 64 that way). */
static inline struct seen_slot *seen_slot_of(jlong id)
{
    return &tl_seen[((uint64_t)id * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - SEEN_BITS)];
}

static bool seen_fresh(jlong id)
{
    if (tl_seen == NULL)
        return false;
    const struct seen_slot *e = seen_slot_of(id);
    return e->id == id && e->gen == classes_announce_gen() && e->ninst == g_shim.ninst &&
           e->epoch == id_epoch();
}

static void seen_note(jlong id, uint64_t gen, int ninst, int64_t epoch)
{
    if (__builtin_expect(tl_seen == NULL, 0) &&
        (tl_seen = shim_thread_block(&tl_seen, SEEN_SLOTS * sizeof *tl_seen)) == NULL)
        return;
    struct seen_slot *e = seen_slot_of(id);
    e->id = id;
    e->gen = gen;
    e->ninst = ninst;
    e->epoch = epoch;
}

/* Definition before use for objects JVMTI never reported: an event about to name obj
 * first announces its class and, while OBJECT_ALLOC has been on since start-up, the object
 * itself, on the current thread. JVMTI samples no allocation made while one of its
 * callbacks runs on the thread (the shim's own reflection in an event, a Thread made by
 * CreateSystemThread in a handler, MemberNames on JDK 25), and makes mirrors of classes
 * without sampling them; on HotSpot every one of these got an OBJECT_ALLOC when it was
 * allocated. The common case, an object this thread named lately, costs one GetTag. */
jobjectID memory_id_announced(JNIEnv *jni, jobject obj)
{
    if (obj == NULL)
        return NULL;
    bool complete = memory_alloc_complete();
    /* Read before the class is looked at: a CLASS_LOAD switched on meanwhile makes the
     * entry noted below stale, not one that looks fresh. */
    uint64_t gen = classes_announce_gen();
    int ninst = g_shim.ninst;
    int64_t epoch = id_epoch();
    jlong tag = 0;
    jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag),
                 "GetTag of an object an event names: unread, it is announced as new");
    /* Kept (its id resolves from the kept table) and, while objects are announced, posted:
     * nothing left to do but for the class, which the entry says was announced. */
    if ((tag & TAG_KEPT) && (!complete || (tag & TAG_ALLOCATED)) &&
        seen_fresh(tag & TAG_ID_MASK)) {
        jobjectID id = ids_from_tag(tag);
        ids_hand(id, obj);
        return id;
    }
    jclass cls = (*jni)->GetObjectClass(jni, obj);
    bool class_told = false;
    classes_id_announced_all(jni, cls, &class_told); /* its class, before the id is used */
    jobjectID id = NULL;
    /* Only while OBJECT_ALLOC has been on since start-up: then an object without the flag
     * is one JVMTI never reported. Enabled later, it may be an object that existed before
     * (HotSpot did not announce those either: agents ask with RequestEvent). Until
     * JVM_INIT_DONE the start-up replay announces what exists; announcing here too would put
     * events on threads whose THREAD_START the replay has not posted yet. */
    /* The object is at hand: its id is kept resolvable (ids_of_kept, core/ids.c). */
    if (!complete) {
        id = (tag & TAG_KEPT) ? ids_from_tag(tag) : ids_of_kept(jni, obj);
    } else {
        jlong ctag = 0;
        if (tag & TAG_ALLOCATED) {
            id = ids_from_tag(tag);
            ids_keep_tagged(jni, obj, tag);
        } else if (tag != 0 &&
                   jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, cls, &ctag), LOG_DEBUG,
                               "GetTag of the class of an object an event names") &&
                   (ctag & TAG_ID_MASK) == (tag & TAG_ID_MASK)) {
            id = ids_from_tag(tag); /* java.lang.Class's own Class object: never unrequested */
            ids_keep_tagged(jni, obj, tag);
        } else {
            jlong size = 0;
            jvmti_ignore((*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, obj, &size),
                         "GetObjectSize for OBJECT_ALLOC: unread, the size is 0");
            id = ids_claim_allocated(jni, obj, size, &tag);
            if (tag != 0) {
                track(tag, size, stripe_of(jni));
                post_alloc(jni, NULL, 0, obj, cls, size, id);
            }
            ids_of_kept(jni, obj);
        }
    }
    (*jni)->DeleteLocalRef(jni, cls);
    if (class_told && id != NULL)
        seen_note((jlong)(uintptr_t)id, gen, ninst, epoch);
    ids_hand(id, obj); /* at hand while the event that names it is delivered */
    return id;
}

void mem_alloc_now_complete(void)
{
    atomic_store(&alloc_complete, true);
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

/* RequestEvent(OBJECT_ALLOC) for an id the last heap dump listed, answered from what the
 * dump saw (facts.c) in O(1): no object, no heap pass. Not while an announcement is being
 * posted (its pending set decides who announces what) nor with several agents (the others
 * get it too, unrequested: that path needs the object). */
static bool request_from_facts(struct instance *inst, JNIEnv *jni, jobjectID id)
{
    if (g_shim.ninst > 1)
        return false;
    pthread_mutex_lock(&pending_lock);
    bool announcing = pending_sets != NULL;
    pthread_mutex_unlock(&pending_lock);
    jlong cid = 0, size = 0;
    bool claimed = false;
    if (announcing || !mem_facts_claim(ids_tag(id), &cid, &size, &claimed))
        return false;
    jclass cls = classes_local_ref(jni, ids_from_tag(cid));
    if (claimed)
        track(ids_retag(ids_tag(id), size, TAG_ALLOCATED), size, stripe_of(jni));
    post_alloc(jni, inst, JVMPI_REQUESTED_EVENT, NULL, cls, size, id);
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    return true;
}

static jint request_object_alloc(struct instance *inst, JNIEnv *jni, void *arg)
{
    jobjectID id = arg;
    const char *why = NULL;
    if (request_from_facts(inst, jni, id))
        return JVMPI_SUCCESS;
    (*jni)->PushLocalFrame(jni, 8);
    jobject o = ids_resolve(jni, id, &why);
    jint rc = JVMPI_FAIL;
    if (o == NULL) {
        ids_bad(inst, ids_bad_kind(why), "RequestEvent(OBJECT_ALLOC, %p): %s: JVMPI_FAIL",
                (void *)id, why);
    } else {
        jlong size = 0, tag = 0;
        jvmti_ignore((*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, o, &size),
                     "GetObjectSize for a requested OBJECT_ALLOC: unread, the size is 0");
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

/* ---- the JVMTI sampling (the top of this file) ---- */

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
        jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                              JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
                                                              NULL),
                    LOG_DEBUG, "enabling SampledObjectAlloc before retiring the TLABs");
        mem_hidden_collection();
    }
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
        jvmti_ignore((*g_shim.jvmti)->SetTag(g_shim.jvmti, a, TAG_SHIM_OWN),
                     "SetTag marking a priming array: unmarked, it is one more garbage array");
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

void mem_alloc_register(void)
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
}

void mem_alloc_callbacks(jvmtiEventCallbacks *cb)
{
    cb->SampledObjectAlloc = cb_sampled_alloc;
}
