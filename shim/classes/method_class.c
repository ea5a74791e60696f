/* method_class.c — GetMethodClass: the method ids JVMTI may be given, and a lock-free
 * table of the answers given.
 */
#include "classes/internal.h"
#include "core/api.h"
#include "core/ids.h"
#include "events/events.h"
#include "events/report.h"

#include <stdlib.h>
#include <uthash.h>

/* ---- the method ids JVMTI may be given ----
 *
 * JVMTI dereferences a jmethodID unchecked (HotSpot: Method::checked_resolve_jmethod_id
 * reads through it), so a wild pointer from an agent kills the VM. GetMethodClass therefore
 * passes JVMTI only ids that are methods of a class the JVM loaded: a set of such ids. The
 * ids the shim hands out (CLASS_LOAD's lists, method events, call traces) go into it as they
 * are handed out, so the usual call is one lookup; an id that is not in it yet (one from
 * JNI's GetMethodID) makes the shim scan the loaded classes. An id of a class that has since unloaded
 * stays in the set: HotSpot keeps its slot, which then resolves to nothing, and JVMTI
 * answers INVALID_METHODID safely; the set also keeps the class id CLASS_LOAD gave with the
 * method, which GetMethodClass answers then. A rejected id goes into a small ring, so an agent that
 * repeats the same bad id does not pay for a scan each time. */
struct mid_rec {
    jmethodID mid;
    jlong class_tag;    /* its class's id as CLASS_LOAD gave it, 0 if not known */
    UT_hash_handle hh;
};
static struct mid_rec *known_mids;
static jmethodID bad_mids[16];
static unsigned bad_next;
static pthread_mutex_t mid_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf, like class_lock */

/* Is mid in the set? Takes mid_lock. */
static bool mid_known(jmethodID mid, bool *known_bad)
{
    struct mid_rec *r = NULL;
    pthread_mutex_lock(&mid_lock);
    HASH_FIND_PTR(known_mids, &mid, r);
    *known_bad = false;
    for (unsigned i = 0; r == NULL && i < sizeof bad_mids / sizeof bad_mids[0]; i++)
        *known_bad = *known_bad || bad_mids[i] == mid;
    pthread_mutex_unlock(&mid_lock);
    return r != NULL;
}

void note_methods_of(const jmethodID *ms, jint n, jlong class_tag)
{
    pthread_mutex_lock(&mid_lock);
    for (jint k = 0; k < n; k++) {
        struct mid_rec *r = NULL;
        HASH_FIND_PTR(known_mids, &ms[k], r);
        if (r == NULL && ms[k] != NULL && (r = malloc(sizeof *r)) != NULL) {
            r->mid = ms[k];
            r->class_tag = 0;
            HASH_ADD_PTR(known_mids, mid, r);
        }
        if (r != NULL && r->class_tag == 0)
            r->class_tag = class_tag;
    }
    pthread_mutex_unlock(&mid_lock);
}

void classes_note_methods(const jmethodID *ms, jint n)
{
    note_methods_of(ms, n, 0);
}

/* The class id noted for mid, or 0. */
static jlong mid_class(jmethodID mid)
{
    struct mid_rec *r = NULL;
    pthread_mutex_lock(&mid_lock);
    HASH_FIND_PTR(known_mids, &mid, r);
    jlong t = r != NULL ? r->class_tag : 0;
    pthread_mutex_unlock(&mid_lock);
    return t;
}

/* Adds every method id of every loaded class to the set (JVMTI calls outside the lock). */
static void mid_scan(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses to check a method id passed to GetMethodClass"))
        return;
    for (jint i = 0; i < n; i++) {
        jint nm = 0;
        jmethodID *ms = NULL;
        /* Arrays and primitive classes have no methods; a class not yet prepared answers
         * CLASS_NOT_PREPARED: neither is an error here. */
        jvmtiError err = (*g_shim.jvmti)->GetClassMethods(g_shim.jvmti, cs[i], &nm, &ms);
        if (err != JVMTI_ERROR_CLASS_NOT_PREPARED &&
            jvmti_ok_at(err, LOG_DEBUG, "GetClassMethods to check a method id passed to "
                                        "GetMethodClass")) {
            note_methods_of(ms, nm, ids_tag(ids_peek(cs[i])));
            jvmti_free(g_shim.jvmti, ms);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
}

static bool mid_valid(JNIEnv *jni, jmethodID mid)
{
    bool bad = false;
    if (mid_known(mid, &bad))
        return true;
    if (bad)
        return false;
    mid_scan(jni);
    if (mid_known(mid, &bad))
        return true;
    pthread_mutex_lock(&mid_lock);
    bad_mids[bad_next++ % (sizeof bad_mids / sizeof bad_mids[0])] = mid;
    pthread_mutex_unlock(&mid_lock);
    return false;
}

/* A method's class never changes, nor does the id CLASS_LOAD gave it, so the answers given
 * are kept in a table read without locks (method id -> class id, and which instances had
 * been told of the class by then): a tracer asks on every method event, and the full answer
 * (the id set under mid_lock, GetMethodDeclaringClass, the class record) costs several
 * times HotSpot's pointer chase. The table answers an instance only once that instance has
 * had the class's CLASS_LOAD, or has CLASS_LOAD off: definition before use is kept, and an
 * agent that enables CLASS_LOAD later still gets the class defined on its next ask.
 * Open addressing, entries only added (method ids are never reused), at most half full;
 * a full table is copied into one twice its size, and the old one is kept (readers may be
 * in it): all of them together take at most twice the last one's memory. mc_lock (a leaf)
 * serializes writers. */
struct mc_entry {
    _Atomic(jmethodID) mid;     /* published last: the fields below are set when it is */
    _Atomic(jobjectID) id;
    _Atomic uint32_t announced; /* bit per instance that had the CLASS_LOAD; only grows */
};
struct mc_table {
    struct mc_table *older;
    unsigned shift;             /* 64 - log2(size) */
    size_t size, used;
    struct mc_entry e[];
};
static _Atomic(struct mc_table *) mc_tab;
static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;

static inline size_t mc_slot(const struct mc_table *t, jmethodID mid)
{
    return (size_t)(((uint64_t)(uintptr_t)mid * 0x9E3779B97F4A7C15ull) >> t->shift);
}

static struct mc_entry *mc_find(struct mc_table *t, jmethodID mid)
{
    for (size_t i = mc_slot(t, mid);; i = (i + 1) & (t->size - 1)) {
        jmethodID k = atomic_load_explicit(&t->e[i].mid, memory_order_acquire);
        if (k == mid)
            return &t->e[i];
        if (k == NULL)
            return NULL;
    }
}

/* Into t, which has room (mc_lock held, or t not yet published). */
static void mc_add(struct mc_table *t, jmethodID mid, jobjectID id, uint32_t announced)
{
    size_t i = mc_slot(t, mid);
    while (atomic_load_explicit(&t->e[i].mid, memory_order_relaxed) != NULL)
        i = (i + 1) & (t->size - 1);
    atomic_store_explicit(&t->e[i].id, id, memory_order_relaxed);
    atomic_store_explicit(&t->e[i].announced, announced, memory_order_relaxed);
    atomic_store_explicit(&t->e[i].mid, mid, memory_order_release);
    t->used++;
}

static void mcache_put(jmethodID mid, jobjectID id, uint32_t announced)
{
    if (mid == NULL || id == NULL)
        return;
    pthread_mutex_lock(&mc_lock);
    struct mc_table *t = atomic_load_explicit(&mc_tab, memory_order_relaxed);
    struct mc_entry *e = t != NULL ? mc_find(t, mid) : NULL;
    if (e != NULL) {
        atomic_fetch_or(&e->announced, announced);
    } else if (t != NULL && 2 * (t->used + 1) <= t->size) {
        mc_add(t, mid, id, announced);
    } else {
        size_t size = t != NULL ? 2 * t->size : 1024;
        struct mc_table *n = calloc(1, sizeof *n + size * sizeof n->e[0]);
        if (n != NULL) {
            n->older = t;
            n->size = size;
            n->shift = 64 - (unsigned)__builtin_ctzll(size);
            for (size_t i = 0; t != NULL && i < t->size; i++) {
                jmethodID k = atomic_load_explicit(&t->e[i].mid, memory_order_relaxed);
                if (k != NULL)
                    mc_add(n, k, atomic_load(&t->e[i].id), atomic_load(&t->e[i].announced));
            }
            mc_add(n, mid, id, announced);
            atomic_store_explicit(&mc_tab, n, memory_order_release);
        }
    }
    pthread_mutex_unlock(&mc_lock);
}

static jobjectID method_class_slow(struct instance *inst, jmethodID mid)
{
    JNIEnv *jni = shim_current_jni();
    if (mid == NULL || jni == NULL) {
        report_misuse(inst, LOG_INFO, "GetMethodClass(%p)%s: NULL", (void *)mid,
                                      jni ? "" : " from a thread the JVM does not know");
        return NULL;
    }
    if (!mid_valid(jni, mid)) {
        report_misuse(inst, LOG_WARN, "GetMethodClass(%p): not a method id of any class the "
                      "JVM has loaded: NULL", (void *)mid);
        return NULL;
    }
    jclass cls = NULL;
    jvmtiError err = (*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, mid, &cls);
    jlong known = err == JVMTI_ERROR_INVALID_METHODID ? mid_class(mid) : 0;
    if (known != 0) {
        /* Its class has just unloaded (a sampler traced a frame of it, then asked): the id
         * CLASS_LOAD gave for it, which the agent knows, as HotSpot answered until the
         * class's CLASS_UNLOAD came. Nothing is left to announce. */
        log_info("GetMethodClass(%p): its class %p has unloaded: that id", (void *)mid,
                 (void *)(intptr_t)known);
        mcache_put(mid, ids_from_tag(known), UINT32_MAX);
        return ids_from_tag(known);
    }
    if (err != JVMTI_ERROR_NONE) {
        /* Name the id the agent passed: the usual cause is a stale or made-up one. The
         * failure is the agent's, so it goes to the misuse channel (the migration report
         * counts it apart), not through jvmti_ok_at, which counts the shim's warnings. */
        report_misuse(inst, LOG_WARN, "GetMethodClass(%p): GetMethodDeclaringClass: %s (%d): "
                      "NULL", (void *)mid, jvmti_error_name(err), (int)err);
        return NULL;
    }
    /* Definition before use: an agent that got the method id from JNI learns the class. */
    uint32_t announced;
    jobjectID id = id_announced(jni, cls, &announced);
    (*jni)->DeleteLocalRef(jni, cls);
    mcache_put(mid, id, announced);
    return id;
}

jobjectID jvmpi_GetMethodClass(struct instance *inst, jmethodID mid)
{
    struct mc_table *t = atomic_load_explicit(&mc_tab, memory_order_acquire);
    /* Only a thread the JVM knows gets an answer (the slow path says why not). */
    struct mc_entry *e = t != NULL && mid != NULL && shim_current_jni() != NULL ? mc_find(t, mid)
                                                                              : NULL;
    if (__builtin_expect(e != NULL, 1) &&
        ((atomic_load_explicit(&e->announced, memory_order_relaxed) >> inst->slot) & 1 ||
         !event_on(inst, JVMPI_EVENT_CLASS_LOAD)))
        return atomic_load_explicit(&e->id, memory_order_relaxed);
    return method_class_slow(inst, mid);
}
