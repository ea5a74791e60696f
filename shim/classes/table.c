/* table.c — the class table: a record per class (its id, a weak reference, what has been
 * announced), looked up by id or through a per-thread cache; OBJECT_ALLOC's class
 * conventions; CLASS_UNLOAD.
 *
 * Records are keyed by the class's id (its tag) under class_lock, a leaf held for table
 * edits and lookups only. A record lives until its class's CLASS_UNLOAD has been delivered,
 * so a pointer from a lookup by class stays valid for the caller's event; a lookup by id
 * (a request, whose class may be unloading meanwhile) takes a reference of its own.
 *
 * CLASS_UNLOAD: JVMTI has no class-unload event, but a class's mirror dies with it, so the
 * mirror's tag comes back in ObjectFree. ObjectFree may not call JNI, so the unload is
 * queued for the shim's worker thread, which posts it; a CLASS_LOAD request for that id
 * inside the handler is answered from the info kept for classes of non-boot loaders (only
 * those can unload). The record is dropped after the handler returns.
 */
#include "classes/internal.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

/* Registered by methods/ (classes.h). */
static void (*up_on_unload)(void);

void classes_set_on_unload(void (*on_unload)(void))
{
    up_on_unload = on_unload;
}

static struct class_rec *by_tag;
static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;

/* CLASS_UNLOAD needs the payload of every class that may unload saved before it goes: the
 * classes prepared while it was off (that may unload) are counted, and the count at the
 * last walk of the loaded classes is kept, plus one (0: no walk yet). */
_Atomic uint64_t prepared_unsaved;
static _Atomic uint64_t unload_walked_at;

static struct class_rec *rec_find(jlong tag)
{
    struct class_rec *r;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    pthread_mutex_unlock(&class_lock);
    return r;
}

/* The record of class id tag with a reference the caller drops with rec_release, or NULL:
 * for lookups by id, whose class may be unloading meanwhile. */
struct class_rec *rec_acquire(jlong tag)
{
    struct class_rec *r;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r != NULL)
        atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&class_lock);
    return r;
}

void rec_release(JNIEnv *jni, struct class_rec *r)
{
    if (r == NULL || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    if (r->ref != NULL && jni != NULL)
        (*jni)->DeleteWeakGlobalRef(jni, r->ref);
    info_free(atomic_load(&r->saved));
    free(r);
}

/* The record of cls, created (and the class tagged) on first sight. Records live until
 * their class unloads, so the pointer stays valid for the caller's event. */
struct class_rec *rec_of(JNIEnv *jni, jclass cls)
{
    jobjectID id = ids_of_kept(jni, cls);
    if (id == NULL)
        return NULL;
    jlong tag = ids_tag(id);
    struct class_rec *r = rec_find(tag);
    if (r != NULL)
        return r;
    struct class_rec *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->tag = tag;
    n->refs = 1;
    n->ref = (*jni)->NewWeakGlobalRef(jni, cls);
    jobject loader = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &loader),
                 "GetClassLoader for a new class record: taken for a boot class, which "
                 "never unloads, if it fails");
    n->may_unload = loader != NULL;
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r == NULL) {
        HASH_ADD(hh, by_tag, tag, sizeof n->tag, n);
        r = n;
        n = NULL;
    }
    pthread_mutex_unlock(&class_lock);
    if (n != NULL) {
        (*jni)->DeleteWeakGlobalRef(jni, n->ref);
        free(n);
    }
    return r;
}

/* Keep the CLASS_LOAD payload of a class that can unload, for CLASS_UNLOAD handlers. */
void ensure_saved(JNIEnv *jni, struct class_rec *r, jclass cls)
{
    if (!r->may_unload || atomic_load(&r->saved) != NULL || cls == NULL)
        return;
    struct class_info *ci = info_build(jni, cls), *none = NULL;
    if (ci != NULL && !atomic_compare_exchange_strong(&r->saved, &none, ci))
        info_free(ci);
}

jobjectID classes_register(JNIEnv *jni, jclass cls)
{
    struct class_rec *r = cls ? rec_of(jni, cls) : NULL;
    return r ? ids_from_tag(r->tag) : NULL;
}

/* HotSpot's OBJECT_ALLOC conventions: an instance names its class (NORMAL_OBJECT); an
 * object array names its ELEMENT class with is_array = JVMPI_CLASS; a primitive array has
 * is_array = its type code (JVMPI_BOOLEAN..JVMPI_LONG, the newarray codes) and no class. */
static const struct { char sig; jint code; } prim_codes[] = {
    {'Z', JVMPI_BOOLEAN}, {'C', JVMPI_CHAR},  {'F', JVMPI_FLOAT}, {'D', JVMPI_DOUBLE},
    {'B', JVMPI_BYTE},    {'S', JVMPI_SHORT}, {'I', JVMPI_INT},   {'J', JVMPI_LONG},
};

jint classes_type_code(char sig)
{
    for (size_t i = 0; i < sizeof prim_codes / sizeof prim_codes[0]; i++)
        if (prim_codes[i].sig == sig)
            return prim_codes[i].code;
    return JVMPI_CLASS;
}

/* Per-thread cache class tag -> record for the allocation path (no class_lock there).
 * Records live until their class unloads, and a dead class's tag is never seen again. */
#define CCACHE_BITS 6
#define CCACHE (1u << CCACHE_BITS)
/* Fibonacci hashing of the id, as memory/alloc.c's table of receivers: ids are drawn among
 * all objects' and can come in strides, which the low bits alone fold onto a few slots (the
 * receivers of one workload were 256 ids apart and took two slots of 64 that way; the class
 * ids measured so far were 8 apart, which the low bits spread too). */
static inline unsigned ccache_slot_of(jlong id)
{
    return (unsigned)(((uint64_t)id * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - CCACHE_BITS));
}
struct ccache_slot {
    jlong id;                   /* compared before the record is touched: a record freed
                                   at unload is only reachable through its own, dead id */
    struct class_rec *r;
};
static _Thread_local struct ccache_slot *tl_ccache; /* CCACHE slots (shim_thread_block) */

/* In front of it, the class this thread allocated most, held by the thread's own weak
 * reference: IsSameObject against it is one JNI call, where reading the class's tag takes
 * the tag-map lock and walks a hash chain of the whole tag map (profiled on JDK 17: a
 * quarter of what the shim added per allocation). A class takes the place only when two
 * allocations of it in a row missed, so a thread alternating between classes does not
 * churn weak references; it is dropped at ThreadEnd. A live class that matches cannot
 * have had its record freed (that happens only after the class unloads), and the id is
 * checked against tl_ccache before the record is used. */
static _Thread_local struct {
    jweak ref;
    jlong id;
    jlong missed;               /* id of the last class that missed, 0 after a hit */
} tl_mru;

struct class_rec *rec_of_cached(JNIEnv *jni, jclass cls)
{
    if (__builtin_expect(tl_ccache == NULL, 0) &&
        (tl_ccache = shim_thread_block(&tl_ccache, CCACHE * sizeof *tl_ccache)) == NULL)
        return rec_of(jni, cls);
    if (tl_mru.ref != NULL && (*jni)->IsSameObject(jni, cls, tl_mru.ref)) {
        unsigned k = ccache_slot_of(tl_mru.id);
        if (tl_ccache[k].id == tl_mru.id) {
            tl_mru.missed = 0;
            return tl_ccache[k].r;
        }
    }
    jlong tag = 0;
    struct class_rec *r = NULL;
    if (jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, cls, &tag), LOG_DEBUG,
                    "GetTag of a class for the per-thread class cache") && tag != 0) {
        jlong id = tag & TAG_ID_MASK;
        unsigned k = ccache_slot_of(id);
        if (tl_ccache[k].id == id)
            r = tl_ccache[k].r;
    }
    if (r == NULL) {
        r = rec_of(jni, cls);
        if (r == NULL)
            return NULL;
        unsigned k = ccache_slot_of(r->tag);
        tl_ccache[k].id = r->tag;
        tl_ccache[k].r = r;
    }
    if (tl_mru.missed != r->tag) {
        tl_mru.missed = r->tag;
        return r;
    }
    jweak w = (*jni)->NewWeakGlobalRef(jni, cls);
    if (w != NULL) {
        if (tl_mru.ref != NULL)
            (*jni)->DeleteWeakGlobalRef(jni, tl_mru.ref);
        tl_mru.ref = w;
        tl_mru.id = r->tag;
    }
    tl_mru.missed = 0;
    return r;
}

void classes_thread_end(JNIEnv *jni)
{
    if (tl_mru.ref != NULL)
        (*jni)->DeleteWeakGlobalRef(jni, tl_mru.ref);
    tl_mru.ref = NULL;
    tl_mru.id = tl_mru.missed = 0;
}

bool classes_alloc_info(JNIEnv *jni, jclass cls, jint *is_array, jobjectID *class_id)
{
    struct class_rec *r = rec_of_cached(jni, cls);
    if (r == NULL)
        return false;
    if (!atomic_load_explicit(&r->alloc_known, memory_order_acquire)) {
        char *sig = NULL;
        jint kind = JVMPI_NORMAL_OBJECT;
        jobjectID cid = ids_from_tag(r->tag);
        if (jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL),
                        LOG_DEBUG, "GetClassSignature for OBJECT_ALLOC's is_array") &&
            sig[0] == '[') {
            kind = classes_type_code(sig[1]);
            cid = NULL;
            if (kind == JVMPI_CLASS) {
                /* The element class: java.lang.Class.getComponentType(). */
                jclass cc = (*jni)->GetObjectClass(jni, cls);
                jmethodID gct = (*jni)->GetMethodID(jni, cc, "getComponentType",
                                                    "()Ljava/lang/Class;");
                shim_own_java_begin();
                jobject elem = gct ? (*jni)->CallObjectMethod(jni, cls, gct) : NULL;
                shim_own_java_end();
                if ((*jni)->ExceptionCheck(jni))
                    (*jni)->ExceptionClear(jni);
                if (elem != NULL) {
                    /* An agent may ask CLASS_LOAD for the element class from its handler,
                     * inside a JVMPI call, where it could not be linked (announce()). */
                    classes_prepare(jni, elem);
                    cid = classes_id_announced(jni, elem);
                    (*jni)->DeleteLocalRef(jni, elem);
                }
                (*jni)->DeleteLocalRef(jni, cc);
            }
        } else {
            announce(jni, r, cls);
        }
        jvmti_free(g_shim.jvmti, sig);
        r->alloc_is_array = kind;
        r->alloc_class_id = cid;
        atomic_store_explicit(&r->alloc_known, true, memory_order_release);
    } else if (r->alloc_class_id != NULL &&
               (atomic_load(&r->announced) & ((1u << g_shim.ninst) - 1)) !=
                   ((1u << g_shim.ninst) - 1) &&
               r->alloc_is_array == JVMPI_NORMAL_OBJECT) {
        announce(jni, r, cls);
    }
    *is_array = r->alloc_is_array;
    *class_id = r->alloc_class_id;
    return true;
}

/* The class of a class id, as a local ref (NULL if unknown or unloaded). */
jclass classes_local_ref(JNIEnv *jni, jobjectID id)
{
    struct class_rec *r = rec_acquire(ids_tag(id));
    jclass c = r != NULL && !r->unloaded && r->ref != NULL ? (*jni)->NewLocalRef(jni, r->ref) : NULL;
    rec_release(jni, r);
    return c;
}

/* ---- Class objects that are no class ----
 *
 * Not every java.lang.Class instance in the heap is a class. A definition that fails after
 * the JVM made its mirror (a second definition of one name in one loader, a LinkageError)
 * leaves that mirror in the heap, unreachable, pointing at class metadata the JVM has freed.
 * Heap iterations list it (a level-0 dump, and the unreached objects of levels 1 and 2), so
 * an agent may hold its id; any JVMTI or JNI class function given it reads the freed
 * metadata (GetClassLoader died on one with SIGSEGV at address 8, JDK 17 and 25). Its Java
 * fields and its identity are safe to read. So a Class object is taken for a class only if it
 * has a class record (made for classes the JVM named), is one of GetLoadedClasses, or is a
 * primitive type's mirror (Integer.TYPE and the others, read as static fields: JVMTI answers
 * those without metadata). The ids GetLoadedClasses named are kept, in a set rebuilt when a
 * Class object it does not cover is asked about; a Class object found to be no class is
 * remembered for a second (the last 64), so that asking about it again costs no rebuild. A
 * mirror made for a class still being defined on another thread is no class until its
 * definition completes: within that second it stays one. mirror_lock is a leaf. */
static pthread_mutex_t mirror_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    jlong *ids;             /* open addressing, at most half full, 0 = empty */
    size_t cap;
    jobject prims[IDS_NPRIMS]; /* global refs to the primitive types' mirrors */
    bool prims_read;
    jlong no_class[64];     /* Class objects found to be no class, since the last rebuild */
    unsigned n_no;
    double rebuilt_at;      /* CLOCK_MONOTONIC seconds */
} mirrors;

static size_t mirror_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

static bool mirror_known(jlong id)
{
    if (mirrors.cap == 0)
        return false;
    for (size_t i = mirror_slot(id, mirrors.cap); mirrors.ids[i] != 0; i = (i + 1) & (mirrors.cap - 1))
        if (mirrors.ids[i] == id)
            return true;
    return false;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The primitive types' mirrors, read once from the wrapper classes' TYPE fields (no Java
 * code runs: those classes are initialized long before any agent event). */
static void read_prims(JNIEnv *jni)
{
    jobject got[IDS_NPRIMS];
    ids_primitive_mirrors(jni, got);
    for (int i = 0; i < IDS_NPRIMS; i++) {
        jobject t = got[i];
        got[i] = t ? (*jni)->NewGlobalRef(jni, t) : NULL;
        if (t)
            (*jni)->DeleteLocalRef(jni, t);
    }
    pthread_mutex_lock(&mirror_lock);
    bool mine = !mirrors.prims_read;
    if (mine) {
        memcpy(mirrors.prims, got, sizeof got);
        mirrors.prims_read = true;
    }
    pthread_mutex_unlock(&mirror_lock);
    for (int i = 0; i < IDS_NPRIMS && !mine; i++)
        if (got[i])
            (*jni)->DeleteGlobalRef(jni, got[i]);
}

/* A new set from GetLoadedClasses; true if `mirror` is among them. */
static bool mirrors_rebuild(JNIEnv *jni, jobject mirror)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses, to tell a Class object from a class"))
        return false;
    size_t cap = 64;
    while (cap < 2 * (size_t)n + 2)
        cap *= 2;
    jlong *ids = calloc(cap, sizeof *ids);
    bool found = false;
    for (jint i = 0; i < n; i++) {
        if (!found && (*jni)->IsSameObject(jni, cs[i], mirror))
            found = true;
        jlong t = 0;
        jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, cs[i], &t),
                     "GetTag of a loaded class: untagged, it is looked for by identity again");
        t &= TAG_ID_MASK;
        if (ids != NULL && t != 0) {
            size_t k = mirror_slot(t, cap);
            while (ids[k] != 0 && ids[k] != t)
                k = (k + 1) & (cap - 1);
            ids[k] = t;
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
    pthread_mutex_lock(&mirror_lock);
    free(mirrors.ids);
    mirrors.ids = ids;
    mirrors.cap = ids != NULL ? cap : 0;
    mirrors.n_no = 0;
    mirrors.rebuilt_at = mono_s();
    pthread_mutex_unlock(&mirror_lock);
    return found;
}

bool classes_mirror_loaded(JNIEnv *jni, jobject mirror)
{
    if (mirror == NULL)
        return false;
    jlong t = 0;
    jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, mirror, &t),
                 "GetTag of a Class object: untagged, it is looked for among the loaded classes");
    t &= TAG_ID_MASK;
    if (t != 0 && rec_find(t) != NULL)
        return true;
    if (!mirrors.prims_read)
        read_prims(jni);
    for (int i = 0; i < IDS_NPRIMS; i++)
        if (mirrors.prims[i] != NULL && (*jni)->IsSameObject(jni, mirrors.prims[i], mirror))
            return true;
    bool known = false, refused = false;
    pthread_mutex_lock(&mirror_lock);
    if (t != 0) {
        known = mirror_known(t);
        for (unsigned i = 0; !known && i < mirrors.n_no && i < 64; i++)
            refused |= mirrors.no_class[i] == t;
        refused = refused && mono_s() - mirrors.rebuilt_at < 1.0;
    }
    pthread_mutex_unlock(&mirror_lock);
    if (known)
        return true;
    if (refused)
        return false;
    if (mirrors_rebuild(jni, mirror))
        return true;
    pthread_mutex_lock(&mirror_lock);
    if (t != 0)
        mirrors.no_class[mirrors.n_no++ % 64] = t;
    pthread_mutex_unlock(&mirror_lock);
    log_info("a Class object (id %#llx) is no loaded class (a failed definition's): read as "
             "an object, never as a class", (unsigned long long)t);
    return false;
}

/* ---- CLASS_UNLOAD ---- */

static void post_unload(JNIEnv *jni, void *arg)
{
    struct class_rec *r = arg;
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_CLASS_UNLOAD, jni);
    ev.u.class_unload.class_id = ids_from_tag(r->tag);
    event_post_all(&ev);
    pthread_mutex_lock(&class_lock);
    HASH_DEL(by_tag, r);
    pthread_mutex_unlock(&class_lock);
    rec_release(jni, r); /* the table's reference; a request reading it keeps its own */
}

bool classes_on_free(jlong tag)
{
    struct class_rec *r;
    tag &= TAG_ID_MASK;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r != NULL)
        r->unloaded = true;
    pthread_mutex_unlock(&class_lock);
    if (r == NULL)
        return false;
    if (up_on_unload != NULL)
        up_on_unload(); /* its methods' cached line tables */
    if (!worker_submit(post_unload, r))
        log_debug("class id %p unloaded after shutdown: no CLASS_UNLOAD", (void *)(intptr_t)tag);
    return true;
}

/* Tag the classes loaded before CLASS_UNLOAD was enabled, so their unloading is seen:
 * a walk of the loaded classes (0.1-2 ms for a few thousand). Classes prepared while it is
 * on save their info themselves, so an agent that switches it off and on again pays for
 * the walk again only if classes that may unload were prepared meanwhile. */
static void unload_walk(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses when CLASS_UNLOAD was enabled"))
        return;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        jobject loader = NULL;
        jvmti_ignore((*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cs[i], &loader),
                     "GetClassLoader when CLASS_UNLOAD was enabled: a class it fails for is "
                     "taken for a boot class, which never unloads");
        if (loader != NULL) {
            jint st = 0;
            struct class_rec *r = rec_of(jni, cs[i]);
            jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st),
                         "GetClassStatus when CLASS_UNLOAD was enabled: a class it fails for "
                         "is not saved (it is unloading, or not yet prepared)");
            if (r != NULL && (st & JVMTI_CLASS_STATUS_PREPARED))
                ensure_saved(jni, r, cs[i]);
            (*jni)->DeleteLocalRef(jni, loader);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
}

void unload_changed(int t, bool any)
{
    (void)t;
    if (!any || atomic_load(&g_shim.phase) < PHASE_STARTING)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return;
    /* Two agents enabling it at once may both walk: saving is idempotent. */
    uint64_t seen = atomic_load(&prepared_unsaved);
    if (atomic_load(&unload_walked_at) == seen + 1)
        return;
    unload_walk(jni);
    atomic_store(&unload_walked_at, seen + 1);
}
