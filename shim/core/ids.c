/* ids.c — jobjectIDs: one opaque id per object, held as the object's JVMTI tag.
 *
 * JVMPI ids were raw oops that moved with GC (hence OBJECT_MOVE). Here the id lives in the
 * object's tag (layout in ids.h): stable for the object's life, so OBJECT_MOVE is never
 * needed, and there is no per-object side table — the JVM's tag map is the table. Ids are
 * multiples of 8 counted from a base (they look like aligned pointers to agents that hash
 * them), never reused, so an id seen after its object died is detectably stale. Class ids
 * are the ids of their java.lang.Class objects; classes and threads also have side tables
 * in their modules.
 *
 * Tagging an untagged object is GetTag + SetTag, which JVMTI does not make atomic; two
 * threads tagging the same object at once would both set a tag. A small lock makes the
 * check-then-set atomic. It is held only across these two tag-map calls, which neither
 * block on other Java threads nor call back into the shim, so it cannot deadlock (a thread
 * waiting on it sits in native code and does not hold up a safepoint); and, as every lock
 * held across a JVMTI call, inside a critical section (shim_crit_begin), so that no thread
 * an agent suspends stops while it holds it.
 */
#include "core/ids.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define ID_STEP 8
#define ID_BASE ((jlong)0x10000 * ID_STEP)

static pthread_mutex_t tag_lock = PTHREAD_MUTEX_INITIALIZER;

#ifndef IDS_32
static _Atomic jlong next_tag = ID_BASE; /* the next serial (id bits only) */

/* The id space is 41 bits: more than two trillion objects before it could wrap. */
static inline jlong issue_id(void)
{
    return atomic_fetch_add(&next_tag, ID_STEP);
}

/* The serial an id was issued at: on x86-64 the id itself. */
static inline jlong id_serial(jlong id)
{
    return id;
}

jlong ids_next(void)
{
    return atomic_load(&next_tag);
}
#else
/* i386: 2^29 ids, reissued in a later epoch when no live object holds them (idspace.h);
 * the worker runs the pass that collects the live ids. JVMPISHIM_ID_START=0xN (a
 * debugging aid) starts the ids at N, so that a test reaches the wrap in a short run. */
#include "core/idspace.h"
#include "core/worker.h"

static struct idspace space;
static pthread_once_t space_once = PTHREAD_ONCE_INIT;

static void space_init(void)
{
    const char *e = getenv("JVMPISHIM_ID_START");
    int64_t start = e != NULL ? (int64_t)strtoull(e, NULL, 0) : ID_BASE;
    idspace_init(&space, 32, (uint32_t)ID_BASE, start);
    if (e != NULL)
        log_info("ids: JVMPISHIM_ID_START: the first id is %#llx",
                 (unsigned long long)atomic_load(&space.next));
}

struct live_ids {
    uint32_t *v;
    size_t n, cap;
    bool oom;
};

static jint JNICALL collect_id(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)class_tag;
    (void)size;
    (void)length;
    struct live_ids *l = ud;
    uint32_t id = (uint32_t)(*tag_ptr & TAG_ID_MASK);
    if (id == 0 || l->oom)
        return l->oom ? JVMTI_VISIT_ABORT : 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1 << 16;
        uint32_t *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            l->oom = true;
            return JVMTI_VISIT_ABORT;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = id;
    return 0;
}

/* On the worker: one pass over the shim's tagged objects, for the next epoch's set. */
static void space_pass(JNIEnv *jni, void *arg)
{
    (void)jni;
    (void)arg;
    struct live_ids l = {0};
    int64_t began = idspace_pass_begin(&space);
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = collect_id;
    bool ok = jvmti_ok_at((*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, JVMTI_HEAP_FILTER_UNTAGGED,
                                                               NULL, &hc, &l),
                          LOG_ERROR, "IterateThroughHeap to collect the live object ids before "
                                     "the 32-bit id space wraps") && !l.oom;
    if (ok)
        ok = idspace_pass_end(&space, began, l.v, l.n);
    free(l.v);
    if (ok)
        log_info("ids: the 32-bit id space wraps soon: %zu ids are live and will not be "
                 "reissued (epoch %lld)", l.n, (long long)(began >> 32) + 1);
    else
        log_error("ids: the live ids could not be collected before the 32-bit id space "
                  "wraps: objects first named after the wrap get the id NULL");
}

static jlong issue_id(void)
{
    pthread_once(&space_once, space_init);
    bool ask = false;
    uint32_t id = idspace_issue(&space, &ask);
    if (ask && !worker_submit(space_pass, NULL))
        log_error("ids: no worker to collect the live ids before the 32-bit id space wraps");
    if (id == 0) {
        static _Atomic bool said;
        if (!atomic_exchange(&said, true))
            log_error("ids: the 32-bit id space is used up and the pass that frees ids of "
                      "dead objects has not ended: objects first named now get the id NULL");
    }
    return (jlong)id;
}

static inline jlong id_serial(jlong id)
{
    pthread_once(&space_once, space_init);
    return idspace_serial(&space, (uint32_t)id);
}

jlong ids_next(void)
{
    pthread_once(&space_once, space_init);
    return atomic_load(&space.next);
}
#endif

jlong ids_first(void)
{
    return ID_BASE;
}

bool ids_plausible(jobjectID id)
{
    jlong t = ids_tag(id);
    if (t < ID_BASE || (t & ~TAG_ID_MASK) != 0)
        return false;
    jlong s = id_serial(t);
    return s != 0 && s < ids_next();
}

jobjectID ids_peek(jobject obj)
{
    jlong tag = 0;
    if (obj == NULL)
        return NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag), LOG_DEBUG,
                     "GetTag, peeking at an object's jobjectID"))
        return NULL;
    return ids_from_tag(tag);
}

jobjectID ids_of(JNIEnv *jni, jobject obj)
{
    (void)jni;
    if (obj == NULL)
        return NULL;
    jlong tag = 0;
    jvmtiError err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err != JVMTI_ERROR_NONE) {
        jvmti_ok_at(err, LOG_WARN, "GetTag of an object to give it a jobjectID");
        return NULL;
    }
    if (tag != 0)
        return ids_from_tag(tag);
    shim_crit_begin();
    pthread_mutex_lock(&tag_lock);
    err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err == JVMTI_ERROR_NONE && tag == 0) {
        tag = issue_id();
        err = (*g_shim.jvmti)->SetTag(g_shim.jvmti, obj, tag);
        if (err != JVMTI_ERROR_NONE)
            tag = 0;
    }
    pthread_mutex_unlock(&tag_lock);
    shim_crit_end();
    if (err != JVMTI_ERROR_NONE)
        jvmti_ok_at(err, LOG_WARN, "tagging an object to give it a jobjectID");
    return ids_from_tag(tag);
}

jobjectID ids_claim_allocated(JNIEnv *jni, jobject obj, jlong size_bytes, jlong *tag_out)
{
    (void)jni;
    jlong tag = 0;
    bool claimed = false;
    shim_crit_begin();
    pthread_mutex_lock(&tag_lock);
    jvmtiError err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err == JVMTI_ERROR_NONE && !(tag & TAG_ALLOCATED)) {
        jlong t = tag == 0 ? ids_new_tag(size_bytes, TAG_ALLOCATED)
                           : ids_retag(tag, size_bytes, TAG_ALLOCATED);
        err = (*g_shim.jvmti)->SetTag(g_shim.jvmti, obj, t);
        if (err == JVMTI_ERROR_NONE) {
            tag = t;
            claimed = true;
        }
    }
    pthread_mutex_unlock(&tag_lock);
    shim_crit_end();
    if (err != JVMTI_ERROR_NONE)
        jvmti_ok_at(err, LOG_WARN, "tagging an object to announce its allocation");
    *tag_out = claimed ? tag : 0;
    return ids_from_tag(tag);
}

jlong ids_new_tag(jlong size_bytes, jlong flags)
{
    jlong words = (size_bytes + 7) / 8;
    if (words > TAG_SIZE_MAX_WORDS)
        words = 0; /* too large for the tag: memory/alloc.c keeps its size aside */
    return issue_id() | flags | (jlong)((uint64_t)words << TAG_SIZE_SHIFT);
}

/* ---- id -> object ----
 *
 * JVMTI answers object -> tag in O(1) (GetTag) but tag -> object only by GetObjectsWithTags,
 * which walks every entry of the tag map (and compares each with every tag asked for), so
 * one lookup costs the whole map. Two tables answer instead, each in O(1):
 *
 * 1. Objects at hand. An event that hands out ids of objects the shim holds references to
 *    (a METHOD_ENTRY2 receiver, a monitor object, the object of an OBJECT_ALLOC) opens a scope (ids_hand_open) around
 *    building and delivering it, and records each (id, local ref) in a per-thread array.
 *    The refs live until the scope closes, which is after the delivery, so a request made
 *    by the agent inside its handler ("ensure defined": RequestEvent(OBJECT_ALLOC) for a
 *    receiver not seen before) finds the object there. No memory per object, no lock.
 *    The array and its scope functions are inline in ids.h (the allocation path uses them).
 * 2. The index: id -> JNI weak global reference, built in one pass over the heap when an id
 *    is asked for that neither the at-hand array nor the current index covers. A second
 *    JVMTI environment, whose tag map is private to this pass, tags every object with 1;
 *    one GetObjectsWithTags(1) then returns every object, and GetTag in the main
 *    environment names each one's id. The index covers every id issued before the pass
 *    began (`covered`): an id below that which is not in the index belongs to an object
 *    that was dead at the pass, so it is rejected in O(1), as are ids the shim never
 *    issued. An id issued later triggers the next pass, which reuses the weak references of
 *    the objects it already had. So "dump, then ask about each" pays one pass (about the
 *    cost of the dump's own walk) for every id of the dump, and stale ids cost one pass in
 *    all, not one per id.
 *
 * Memory: the at-hand array is 16 entries per thread; the index costs about 40 bytes per
 * live object while it exists (16-byte slots at most half full, and the JNI weak handle),
 * and only once an agent has asked for an id not at hand; a pass needs 32 bytes per object
 * more while it runs (the ids it read, and the same sorted by table region).
 *
 * One window is not closed: a thread that took a serial (fetch_add) before a pass began but
 * had not set the tag when the pass read the main environment's tags leaves its object out
 * of that pass; asked for before the next pass, that id would be answered as dead. Taking a
 * serial and setting the tag are consecutive calls in native code on the tagging thread
 * (the allocation callback, ids_of), and the pass reads the tags after a safepoint-length
 * heap iteration and a GetObjectsWithTags, so the tagging thread would have to stall across
 * both.
 */

_Thread_local struct ids_hand_entry *ids_tl_hand;
_Thread_local int ids_tl_hand_n, ids_tl_hand_depth;
/* The at-hand array lives outside static TLS (shim.h, shim_thread_block). */
struct ids_hand_entry *ids_hand_block(void)
{
    if (ids_tl_hand == NULL)
        ids_tl_hand = shim_thread_block(&ids_tl_hand, IDS_HAND_MAX * sizeof *ids_tl_hand);
    return ids_tl_hand;
}

/* The index: open addressing on the id, key 0 = empty, at most half full. Key and
 * reference side by side, so that a probe touches one line. */
struct idx_entry {
    jlong key;
    jweak ref;
};
static pthread_mutex_t idx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    struct idx_entry *tab;
    size_t cap, n;
    jlong covered;          /* every id below this was issued before the last pass */
    jvmtiEnv *scan;         /* the pass's own environment (tags private to it) */
    uint64_t passes;
} idx;

static inline size_t idx_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id >> 3) * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
}

static jweak *idx_find(struct idx_entry *tab, size_t cap, jlong id)
{
    if (cap == 0)
        return NULL;
    for (size_t i = idx_slot(id, cap);; i = (i + 1) & (cap - 1)) {
        if (tab[i].key == id)
            return &tab[i].ref;
        if (tab[i].key == 0)
            return NULL;
    }
}

/* The pass's own tags: 1 an object to index, 2 a loaded class or primitive type, 3
 * java.lang.Class. The iteration skips objects whose class is untagged here: a class this
 * run has not loaded. */
#define SCAN_OBJECT 1
#define SCAN_CLASS IDS_SCAN_CLASS
#define SCAN_CLASS_CLASS IDS_SCAN_CLASS_CLASS

static jint JNICALL mark_all(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                             void *user_data)
{
    (void)size; (void)length; (void)user_data;
    /* A Class object not tagged as a class before is none: a mirror a failed definition
     * left, or a dormant one of the CDS archive. */
    if (*tag_ptr == 0 && class_tag != SCAN_CLASS_CLASS)
        *tag_ptr = SCAN_OBJECT;
    return 0;
}

/* Before a pass: every loaded class, the primitive types and java.lang.Class get their tag
 * in the pass's environment. Objects of any other class, and Class objects that are no
 * class, are dormant objects of the CDS archive (their class was never loaded in this run)
 * or what a failed definition left: their class metadata is not there, and a JNI reference
 * to one (GetObjectsWithTags makes one per object) makes it a root that the collector's
 * next marking walks into, crashing in ClassLoaderData::oops_do (measured, JDK 17, a class
 * loading storm with concurrent cycles). They never had an id. */
bool ids_scan_tag_classes(JNIEnv *jni, jvmtiEnv *scan)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs), LOG_WARN,
                     "GetLoadedClasses before indexing object ids"))
        return false;
    jclass cc = (*jni)->FindClass(jni, "java/lang/Class");
    for (jint i = 0; i < n; i++) {
        jlong t = cc != NULL && (*jni)->IsSameObject(jni, cs[i], cc) ? SCAN_CLASS_CLASS : SCAN_CLASS;
        jvmti_ignore((*scan)->SetTag(scan, cs[i], t),
                     "SetTag of a loaded class for an index pass: its objects are then not indexed");
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
    jobject prims[IDS_NPRIMS];
    ids_primitive_mirrors(jni, prims);
    for (int i = 0; i < IDS_NPRIMS; i++)
        if (prims[i] != NULL) {
            jvmti_ignore((*scan)->SetTag(scan, prims[i], SCAN_CLASS),
                         "SetTag of a primitive type for an index pass: its id is then not indexed");
            (*jni)->DeleteLocalRef(jni, prims[i]);
        }
    if (cc)
        (*jni)->DeleteLocalRef(jni, cc);
    return true;
}

/* The heads of the CDS archive's dormant subgraphs: an object of a loaded class (an
 * Object[], a HashMap) that holds objects of a class this run never loaded. IterateThroughHeap
 * visits the head and its class has a tag, so a pass tags it and GetObjectsWithTags makes a
 * reference to it with the collector's keep-alive; without more, G1's marking then walked into
 * the objects of the class without a loader and crashed (JDK 17). dumps/archive.c loads those
 * classes before any agent runs, which makes the subgraphs ordinary objects to the collector:
 * no tag could tell the heads from the program's garbage (tags put on them at VMInit are
 * cleared by G1's next cycle, which counts them dead, though they stay in the heap). */
void ids_primitive_mirrors(JNIEnv *jni, jobject out[IDS_NPRIMS])
{
    static const char *const boxes[IDS_NPRIMS] = {
        "java/lang/Boolean", "java/lang/Byte",  "java/lang/Character", "java/lang/Short", "java/lang/Integer",
        "java/lang/Long",    "java/lang/Float", "java/lang/Double",    "java/lang/Void"};
    for (int i = 0; i < IDS_NPRIMS; i++) {
        jclass b = (*jni)->FindClass(jni, boxes[i]);
        jfieldID f = b ? (*jni)->GetStaticFieldID(jni, b, "TYPE", "Ljava/lang/Class;") : NULL;
        out[i] = f ? (*jni)->GetStaticObjectField(jni, b, f) : NULL;
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        if (b)
            (*jni)->DeleteLocalRef(jni, b);
    }
}

/* A heap pass's environment is its own: if JVMTI cannot drop it, nothing else uses it. */
static void drop_scan_env(jvmtiEnv *scan)
{
    jvmti_ignore((*scan)->DisposeEnvironment(scan),
                 "DisposeEnvironment of a heap pass's own environment: nothing else uses it");
}

jvmtiEnv *ids_scan_env(void)
{
    jvmtiEnv *scan = NULL;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    if ((*g_shim.vm)->GetEnv(g_shim.vm, (void **)&scan, JVMTI_VERSION_1_2) != JNI_OK || scan == NULL) {
        log_warn("ids: no second JVMTI environment for a heap pass");
        return NULL;
    }
    if (!jvmti_ok_at((*scan)->AddCapabilities(scan, &caps), LOG_WARN,
                     "AddCapabilities(can_tag_objects) for a heap pass")) {
        drop_scan_env(scan);
        return NULL;
    }
    return scan;
}

/* An object of the pass and its id, between GetTag and the insertion. */
struct idx_pending {
    jlong id;
    jobject obj;
};
/* One pass: rebuild the index from every object in the heap. Under idx_lock. The lock is
 * held across the heap iteration (a safepoint operation): threads waiting for it wait in
 * native code, so they do not hold up the safepoint, and nothing the pass calls takes a
 * shim lock. */
static bool idx_rebuild(JNIEnv *jni)
{
    jvmtiEnv *scan = idx.scan;
    if (scan == NULL && (scan = idx.scan = ids_scan_env()) == NULL)
        return false;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    jlong covered = ids_next();
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = mark_all;
    if ((*jni)->PushLocalFrame(jni, 32) != JNI_OK)
        return false;
    bool tagged = ids_scan_tag_classes(jni, scan);
    (*jni)->PopLocalFrame(jni, NULL);
    if (!tagged || !jvmti_ok_at((*scan)->IterateThroughHeap(scan, JVMTI_HEAP_FILTER_CLASS_UNTAGGED,
                                                            NULL, &hc, NULL),
                                LOG_WARN, "IterateThroughHeap to index object ids")) {
        drop_scan_env(scan);
        idx.scan = NULL;
        return false;
    }
    struct timespec ta, tb;
    clock_gettime(CLOCK_MONOTONIC, &ta);
    jlong wanted[3] = {SCAN_OBJECT, SCAN_CLASS, SCAN_CLASS_CLASS};
    jint n = 0;
    jobject *objs = NULL;
    /* GetObjectsWithTags makes a local reference per object: in a frame of their own, all
     * dropped at once by PopLocalFrame. */
    if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
        drop_scan_env(scan);
        idx.scan = NULL;
        return false;
    }
    jvmtiError err = (*scan)->GetObjectsWithTags(scan, 3, wanted, &n, &objs, NULL);
    /* Untag: dropping the pass's environment drops its whole tag map at once. */
    drop_scan_env(scan);
    idx.scan = NULL;
    if (!jvmti_ok_at(err, LOG_WARN, "GetObjectsWithTags to index object ids")) {
        (*jni)->PopLocalFrame(jni, NULL);
        return false;
    }
    clock_gettime(CLOCK_MONOTONIC, &tb);
    size_t cap = 64;
    while (cap < (size_t)n * 2)
        cap <<= 1;
    struct idx_entry *tab = shim_table_alloc(cap * sizeof *tab);
    struct idx_pending *pend = malloc(((size_t)n + 1) * sizeof *pend);
    struct idx_pending *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    if (tab == NULL || pend == NULL || sorted == NULL) {
        free(pend);
        jvmti_free(g_shim.jvmti, objs);
        goto out_of_memory;
    }
    /* The objects come in the order of the tag map, random in their ids: sorted by the table
     * region they go to first (shim_sort_by_region; the probe was 90 % of the shim's own time
     * in a pass), at 1 M objects on JDK 17 the GetTag and weak-reference phase took 275 ms
     * instead of 330. */
    size_t np = 0;
    for (jint i = 0; i < n; i++) {
        jlong t = 0;
        jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, objs[i], &t),
                     "GetTag of an object the walk just tagged: 0 leaves it out of the index");
        jlong id = t & TAG_ID_MASK;
        if (id != 0 && !(t & TAG_KEPT)) /* kept ids resolve through the kept table */
            pend[np++] = (struct idx_pending){id, objs[i]};
    }
    jvmti_free(g_shim.jvmti, objs);
    bool sorted_ok = shim_sort_by_region(sorted, pend, np, sizeof *pend, cap, idx_slot);
    free(pend);
    if (!sorted_ok)
        goto out_of_memory;
    size_t count = 0;
    for (size_t i = 0; i < np; i++) {
        jlong id = sorted[i].id;
        jweak *old = idx_find(idx.tab, idx.cap, id);
        jweak w = NULL;
        if (old != NULL && *old != NULL
#ifdef IDS_32
            /* i386 reissues the id of a dead object after a wrap */
            && (*jni)->IsSameObject(jni, *old, sorted[i].obj)
#endif
        ) {
            w = *old;       /* the same object (ids are never reused): keep its ref */
            *old = NULL;
        } else {
            w = (*jni)->NewWeakGlobalRef(jni, sorted[i].obj);
        }
        if (w != NULL) {
            size_t k = idx_slot(id, cap);
            while (tab[k].key != 0)
                k = (k + 1) & (cap - 1);
            tab[k] = (struct idx_entry){id, w};
            count++;
        }
    }
    free(sorted);
    (*jni)->PopLocalFrame(jni, NULL);
    for (size_t i = 0; i < idx.cap; i++)
        if (idx.tab[i].ref != NULL)
            (*jni)->DeleteWeakGlobalRef(jni, idx.tab[i].ref);
    shim_table_free(idx.tab, idx.cap * sizeof *idx.tab);
    idx.tab = tab;
    idx.cap = cap;
    idx.n = count;
    idx.covered = covered;
    idx.passes++;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* The pass's environment had a tag-map entry per object, each a small block of the C
     * heap (JDK 25 mallocs them one by one): dropping it left a million free blocks in
     * malloc's fast bins, and the next large allocation in that arena merges them all first
     * (glibc's malloc_consolidate: 250 ms after a pass over 1 M objects, paid by whatever
     * comes next, e.g. a FollowReferences's mark bitmap in the next class OBJECT_DUMP).
     * malloc_trim merges them now, as part of the pass, and gives the pages back. */
    struct timespec tt = t1;
#ifdef __GLIBC__
    malloc_trim(0);
    clock_gettime(CLOCK_MONOTONIC, &tt);
#endif
#define MS(a, b) (((b).tv_sec - (a).tv_sec) * 1e3 + ((b).tv_nsec - (a).tv_nsec) / 1e6)
    log_info("ids: index pass %llu: %zu objects with ids (%d in the heap) in %.0f ms (heap "
             "iteration %.0f, GetObjectsWithTags %.0f, tags and weak refs %.0f, malloc_trim "
             "%.0f)", (unsigned long long)idx.passes, count, (int)n, MS(t0, tt), MS(t0, ta),
             MS(ta, tb), MS(tb, t1), MS(t1, tt));
    return true;

out_of_memory: /* the local references GetObjectsWithTags made are dropped with their frame */
    shim_table_free(tab, cap * sizeof *tab);
    free(sorted);
    (*jni)->PopLocalFrame(jni, NULL);
    log_warn("ids: out of memory indexing %d objects", (int)n);
    return false;
}

/* ---- the kept table: id -> weak reference, for ids handed out with the object at hand ----
 *
 * An id a class, a thread, a monitor event, a receiver, a JNI reference or
 * jobject2jobjectID hands out is resolvable from then on without a heap pass: its object
 * was at hand, so a JNI weak global reference to it goes into this table, and the tag gets
 * TAG_KEPT (set once, under tag_lock, by the thread that inserts), so later hand-outs of
 * the same object cost nothing more than the GetTag they made anyway. Ids of objects
 * announced by OBJECT_ALLOC or named by a dump are not kept (a weak reference per
 * allocation would cost the allocation path a JNI call and about 40 bytes per live object):
 * the index answers those, one pass per dump. Sixteen shards by id, each open addressing
 * at most half full; before a shard grows it drops the entries whose object died (a cleared
 * weak reference), so the table holds about two entries per live kept object at most,
 * whether or not OBJECT_FREE is on. The shard locks are leaves, held across JNI calls, so
 * inside a critical section (shim.h). */
#define KEPT_SHARDS 16
static struct kept_shard {
    pthread_mutex_t lock;
    jlong *keys;
    jweak *refs;
    size_t cap, n;
} kept[KEPT_SHARDS] = {[0 ... KEPT_SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};

static struct kept_shard *kept_shard(jlong id)
{
    return &kept[((uint64_t)id >> 3) & (KEPT_SHARDS - 1)];
}

static inline size_t kept_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id >> 7) * 0x9E3779B97F4A7C15ULL >> 22) & (cap - 1);
}

static void kept_place(jlong *keys, jweak *refs, size_t cap, jlong id, jweak w)
{
    size_t i = kept_slot(id, cap);
    while (keys[i] != 0)
        i = (i + 1) & (cap - 1);
    keys[i] = id;
    refs[i] = w;
}

/* Make room for one more entry: drop the dead ones, grow if the live ones need it. Under
 * the shard's lock. False if out of memory. */
static bool kept_room(JNIEnv *jni, struct kept_shard *k)
{
    if (2 * (k->n + 1) <= k->cap)
        return true;
    size_t live = 0;
    for (size_t i = 0; i < k->cap; i++) {
        if (k->keys[i] == 0)
            continue;
        if ((*jni)->IsSameObject(jni, k->refs[i], NULL)) {
            (*jni)->DeleteWeakGlobalRef(jni, k->refs[i]);
            k->keys[i] = 0;
            k->refs[i] = NULL;
        } else {
            live++;
        }
    }
    size_t cap = k->cap ? k->cap : 256;
    while (4 * (live + 1) > cap)
        cap *= 2;
    jlong *keys = calloc(cap, sizeof *keys);
    jweak *refs = calloc(cap, sizeof *refs);
    if (keys == NULL || refs == NULL) {
        free(keys);
        free(refs);
        return false;
    }
    for (size_t i = 0; i < k->cap; i++)
        if (k->keys[i] != 0)
            kept_place(keys, refs, cap, k->keys[i], k->refs[i]);
    free(k->keys);
    free(k->refs);
    k->keys = keys;
    k->refs = refs;
    k->cap = cap;
    k->n = live;
    return true;
}

static void kept_put(JNIEnv *jni, jlong id, jobject obj)
{
    struct kept_shard *k = kept_shard(id);
    jweak w = (*jni)->NewWeakGlobalRef(jni, obj);
    if (w == NULL)
        return;
    pthread_mutex_lock(&k->lock);
    bool ok = kept_room(jni, k);
    if (ok) {
        kept_place(k->keys, k->refs, k->cap, id, w);
        k->n++;
    }
    pthread_mutex_unlock(&k->lock);
    if (!ok) {
        (*jni)->DeleteWeakGlobalRef(jni, w);
        static bool warned;
        log_warn_once(&warned, "ids: out of memory keeping object ids: requests for them "
                      "will need a heap pass");
    }
}

/* A local ref for a kept id, or NULL (not kept, or its object died). */
static jobject kept_get(JNIEnv *jni, jlong id)
{
    struct kept_shard *k = kept_shard(id);
    jobject r = NULL;
    pthread_mutex_lock(&k->lock);
    if (k->cap > 0)
        for (size_t i = kept_slot(id, k->cap); k->keys[i] != 0; i = (i + 1) & (k->cap - 1))
            if (k->keys[i] == id) {
                r = (*jni)->NewLocalRef(jni, k->refs[i]);
                break;
            }
    pthread_mutex_unlock(&k->lock);
    return r;
}

void ids_keep_tagged(JNIEnv *jni, jobject obj, jlong tag)
{
    if (obj == NULL || (tag & TAG_KEPT) || (tag & TAG_ID_MASK) == 0 || jni == NULL)
        return;
    shim_crit_begin();
    pthread_mutex_lock(&tag_lock);
    jlong now = 0;
    /* Not kept (no error named above debug): the id still resolves, through the index. */
    bool mine = jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &now), LOG_DEBUG,
                            "GetTag, keeping an object's jobjectID") &&
                (now & TAG_ID_MASK) == (tag & TAG_ID_MASK) && !(now & TAG_KEPT) &&
                jvmti_ok_at((*g_shim.jvmti)->SetTag(g_shim.jvmti, obj, now | TAG_KEPT),
                            LOG_DEBUG, "SetTag, keeping an object's jobjectID");
    pthread_mutex_unlock(&tag_lock);
    if (mine)
        kept_put(jni, tag & TAG_ID_MASK, obj);
    shim_crit_end();
}

jobjectID ids_of_kept(JNIEnv *jni, jobject obj)
{
    if (obj == NULL)
        return NULL;
    jlong tag = 0;
    jvmtiError err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err != JVMTI_ERROR_NONE) {
        jvmti_ok_at(err, LOG_WARN, "GetTag of an object to give it a jobjectID");
        return NULL;
    }
    if (tag & TAG_KEPT)
        return ids_from_tag(tag);
    if (tag == 0) {
        ids_of(jni, obj); /* names its own failure */
        jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag),
                     "GetTag of the object ids_of just tagged: a tag of 0 keeps nothing");
    }
    ids_keep_tagged(jni, obj, tag);
    return ids_from_tag(tag);
}

static const char *const IDS_WHY_NULL = "NULL id";
static const char *const IDS_WHY_GARBAGE = "not an id the shim issued";
static const char *const IDS_WHY_DEAD = "its object is no longer alive";

jobject ids_resolve(JNIEnv *jni, jobjectID id, const char **why)
{
    *why = NULL;
    if (id == NULL) {
        *why = IDS_WHY_NULL;
        return NULL;
    }
    if (!ids_plausible(id)) {
        *why = IDS_WHY_GARBAGE;
        return NULL;
    }
    jlong want = ids_tag(id);
    for (int i = ids_tl_hand_n - 1; i >= 0 && ids_tl_hand != NULL; i--)
        if (ids_tl_hand[i].id == want)
            return (*jni)->NewLocalRef(jni, ids_tl_hand[i].ref);
    shim_crit_begin();
    jobject r = kept_get(jni, want);
    shim_crit_end();
    if (r != NULL)
        return r;
    shim_crit_begin();
    pthread_mutex_lock(&idx_lock);
    bool ok = id_serial(want) < idx.covered || idx_rebuild(jni);
    if (ok) {
        jweak *w = idx_find(idx.tab, idx.cap, want);
        if (w != NULL && *w != NULL)
            r = (*jni)->NewLocalRef(jni, *w);
    }
    pthread_mutex_unlock(&idx_lock);
    shim_crit_end();
    if (r == NULL)
        *why = ok ? IDS_WHY_DEAD : "the id index could not be built";
    return r;
}

/* ---- bad ids: one warning per kind, then a count ---- */

static const char *const bad_names[IDS_BAD_KINDS] = {
    "a NULL id", "an id the shim never issued (garbage or truncated)", "the id of a dead object",
    "an id of the wrong kind of object", "an id that could not be resolved"};
static _Atomic uint64_t bad_count[SHIM_MAX_INSTANCES][IDS_BAD_KINDS];

int ids_bad_kind(const char *why)
{
    return why == IDS_WHY_NULL ? IDS_BAD_NULL
           : why == IDS_WHY_GARBAGE ? IDS_BAD_GARBAGE
           : why == IDS_WHY_DEAD ? IDS_BAD_DEAD : IDS_BAD_OTHER;
}

int ids_bad_level(struct instance *inst, int kind)
{
    if (kind < 0 || kind >= IDS_BAD_KINDS)
        kind = IDS_BAD_OTHER;
    uint64_t c = atomic_fetch_add_explicit(&bad_count[inst->slot][kind], 1, memory_order_relaxed);
    if (c != 0)
        return LOG_INFO;
    if (log_level_now >= LOG_WARN)
        log_misuse(LOG_WARN, "agent %d: the next line is the first call with %s; the others are "
                             "logged at level info only, and their count at shutdown",
                             inst->slot, bad_names[kind]);
    return LOG_WARN;
}

void ids_bad_summary(void)
{
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
        for (int k = 0; k < IDS_BAD_KINDS; k++) {
            uint64_t c = atomic_load(&bad_count[s][k]);
            if (c > 1)
                log_misuse(LOG_WARN, "agent %d: %llu calls in all with %s were refused", s,
                         (unsigned long long)c, bad_names[k]);
        }
}
