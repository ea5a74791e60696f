/* calltrace.c — GetCallTrace: JVMTI GetStackTrace plus a cached bci -> line lookup.
 *
 * Frames come top first with the JVMTI jmethodID (the same ids as CLASS_LOAD and method
 * events) and the JVMPI line number: -3 for native methods, -1 where the class has no line
 * table, else the line whose range holds the bci. HotSpot returned 0 frames for a thread
 * other than the caller unless the agent had suspended it; JVMTI can walk a running thread
 * safely, so the shim always returns its real stack. A virtual thread's env_id walks the
 * virtual thread, mounted or not; a carrier's, the carrier's own frames.
 *
 * Line tables are cached per method in a per-thread hash (a sampler thread, or each thread
 * that traces itself in an event, has its own): the lookup of a frame takes no lock, shares
 * no written cache line with other threads and allocates nothing once the method is known.
 * The price is one GetLineNumberTable per method per tracing thread. A global epoch
 * (calltrace_invalidate) empties every thread's cache at its next call: bumped when a class
 * is redefined or retransformed (its bcis and line tables change; methods=bci rewrites
 * classes when method events are switched) and when a class unloads (seen while
 * CLASS_UNLOAD is enabled). Old versions of redefined methods are never cached: their
 * jmethodIDs can be given to other methods once the JVM frees them. A method of a class
 * that unloaded unseen can only be met again if the JVM gives its id to another method;
 * a cache that outgrows CACHE_MAX methods is emptied too. Before a trace is returned, the
 * classes of its methods are announced to agents that enabled CLASS_LOAD, so a method id
 * in a trace is never unknown.
 *
 * An event held back and posted later (threads/threads.c) keeps a snapshot of the stack
 * it happened at (calltrace_snap_keep, registered with threads/ by methods.c), and
 * GetCallTrace on the current thread inside that event's handler answers from it
 * (calltrace_snap_now, set by the switchboard around the handler).
 */
#include "classes/classes.h"
#include "core/api.h"
#include "events/events.h"
#include "events/report.h"
#include "methods/bci.h"
#include "methods/calltrace.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <string.h>

struct line_entry {
    jlocation start;
    jint line;
};

/* One method as this thread cached it. Slots with method == NULL are free. */
struct method_lines {
    jmethodID method;           /* key */
    jmethodID current;          /* the id agents get (calltrace_current_version) */
    jint n;                     /* -3: native; 0: no table */
    bool announced;             /* its class went through classes_method_announced */
    bool obsolete;              /* an old version: never kept in a cache (lines_of) */
    struct line_entry *lines;   /* sorted by start */
};

struct lines_cache {
    unsigned epoch;             /* lines_epoch when this cache was (re)started */
    size_t cap, used;           /* cap: a power of two, or 0 */
    struct method_lines *slots;
};

#define CACHE_MAX 65536         /* methods per thread before the cache starts again */

static _Atomic unsigned lines_epoch;
static _Thread_local struct lines_cache *tl_cache;
static pthread_key_t cache_key;         /* only for its destructor, at thread exit */
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_clear(struct lines_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].lines);
    free(c->slots);
    c->slots = NULL;
    c->cap = c->used = 0;
}

static void cache_destroy(void *p)
{
    struct lines_cache *c = p;
    cache_clear(c);
    free(c);
    tl_cache = NULL;
}

static void cache_key_init(void)
{
    if (pthread_key_create(&cache_key, cache_destroy) != 0)
        log_warn("GetCallTrace: no thread-exit hook: line caches of ended threads are kept");
}

void calltrace_invalidate(void)
{
    atomic_fetch_add_explicit(&lines_epoch, 1, memory_order_release);
}

/* The calling thread's cache, emptied if a class changed since its last use. */
static struct lines_cache *cache_self(void)
{
    struct lines_cache *c = tl_cache;
    unsigned e = atomic_load_explicit(&lines_epoch, memory_order_acquire);
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        pthread_once(&cache_once, cache_key_init);
        pthread_setspecific(cache_key, c);
        c->epoch = e;
        tl_cache = c;
    } else if (c->epoch != e) {
        cache_clear(c);
        c->epoch = e;
    }
    return c;
}

static inline size_t hash_method(jmethodID m)
{
    uint64_t x = (uint64_t)(uintptr_t)m;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static bool cache_grow(struct lines_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : 256;
    struct method_lines *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return false;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].method != NULL) {
            size_t j = hash_method(c->slots[i].method) & (cap - 1);
            while (t[j].method != NULL)
                j = (j + 1) & (cap - 1);
            t[j] = c->slots[i];
        }
    free(c->slots);
    c->slots = t;
    c->cap = cap;
    return true;
}

static int by_start(const void *a, const void *b)
{
    const struct line_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The method of cls named name (minus skip leading bytes) with signature sig, or NULL. */
static jmethodID method_named(jclass cls, const char *name, const char *sig)
{
    jvmtiEnv *jvmti = g_shim.jvmti;
    jmethodID cur = NULL;
    jint n = 0;
    jmethodID *all = NULL;
    if (!jvmti_ok_at((*jvmti)->GetClassMethods(jvmti, cls, &n, &all), LOG_DEBUG,
                     "GetCallTrace: GetClassMethods for a method's current version"))
        return NULL;
    for (jint i = 0; i < n && cur == NULL; i++) {
        char *nm = NULL, *sg = NULL;
        if (jvmti_ok_at((*jvmti)->GetMethodName(jvmti, all[i], &nm, &sg, NULL), LOG_DEBUG,
                        "GetCallTrace: GetMethodName for a method's current version") &&
            strcmp(nm, name) == 0 && strcmp(sg, sig) == 0)
            cur = all[i];
        jvmti_free(jvmti, nm);
        jvmti_free(jvmti, sg);
    }
    jvmti_free(jvmti, all);
    return cur;
}

/* The id agents know for the method JVMTI names m:
 *  - Frames and compiled code of a method that runs as it was before its class was
 *    rewritten for method events (methods=bci retransforms the classes loaded before
 *    JVM_OnLoad; a thread that was inside one keeps running the old code) belong to the
 *    obsolete version, whose jmethodID no CLASS_LOAD lists and no method event uses: the
 *    current version's id.
 *  - A native renamed by method-event instrumentation ("$$jvmpi$$name", bci.c; its frame
 *    and its compiled native wrapper carry that name): the method of the original name,
 *    the Java wrapper that CLASS_LOAD lists and method events report.
 * m itself if neither applies (or the other method cannot be found). */
jmethodID calltrace_current_version(jmethodID m)
{
    jvmtiEnv *jvmti = g_shim.jvmti;
    jboolean obsolete = JNI_FALSE;
    if (!jvmti_ok_at((*jvmti)->IsMethodObsolete(jvmti, m, &obsolete), LOG_DEBUG,
                     "GetCallTrace: IsMethodObsolete"))
        return m;
    jclass cls = NULL;
    char *name = NULL, *sig = NULL;
    jmethodID cur = NULL;
    if (jvmti_ok_at((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL), LOG_DEBUG,
                    "GetCallTrace: GetMethodName")) {
        bool renamed = strncmp(name, BCI_NATIVE_PREFIX, strlen(BCI_NATIVE_PREFIX)) == 0;
        if ((obsolete || renamed) &&
            jvmti_ok_at((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls), LOG_DEBUG,
                        "GetCallTrace: GetMethodDeclaringClass"))
            cur = method_named(cls, renamed ? name + strlen(BCI_NATIVE_PREFIX) : name, sig);
    }
    jvmti_free(jvmti, name);
    jvmti_free(jvmti, sig);
    JNIEnv *jni = shim_current_jni();
    if (cls != NULL && jni != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    return cur != NULL ? cur : m;
}

/* Fill a slot for m: JVMTI calls only, no lock (they do not call back into the shim). */
static void lines_fetch(struct method_lines *ml, jmethodID m)
{
    jvmtiEnv *jvmti = g_shim.jvmti;
    ml->method = m;
    ml->current = calltrace_current_version(m);
    classes_note_methods(&ml->current, 1);
    ml->n = 0;
    ml->lines = NULL;
    ml->announced = false;
    jboolean obsolete = JNI_FALSE;
    jvmti_ignore((*jvmti)->IsMethodObsolete(jvmti, m, &obsolete),
                 "GetCallTrace: IsMethodObsolete: the method is then cached as current");
    ml->obsolete = obsolete;
    jboolean native = JNI_FALSE;
    jvmti_ignore((*jvmti)->IsMethodNative(jvmti, m, &native),
                 "GetCallTrace: IsMethodNative: its line table says what it has");
    if (native) {
        ml->n = -3;
        return;
    }
    jint n = 0;
    jvmtiLineNumberEntry *t = NULL;
    /* ABSENT_INFORMATION (no line table) is the common failure: lines are then -1. */
    if (!jvmti_ok_at((*jvmti)->GetLineNumberTable(jvmti, m, &n, &t), LOG_DEBUG,
                     "GetCallTrace: GetLineNumberTable"))
        return;
    if (n > 0 && (ml->lines = malloc(sizeof *ml->lines * (size_t)n)) != NULL) {
        for (jint i = 0; i < n; i++) {
            ml->lines[i].start = t[i].start_location;
            ml->lines[i].line = t[i].line_number;
        }
        qsort(ml->lines, (size_t)n, sizeof *ml->lines, by_start);
        ml->n = n;
    }
    jvmti_free(jvmti, t);
}

/* The cached lines of m in c, fetched on a miss. The pointer is good until the next call
 * on this thread that can add to the cache (a CLASS_LOAD handler may trace too). An old
 * version of a method (code still running as it was before a redefinition) is filled into
 * *scratch instead and not kept: HotSpot frees an old version once no frame runs it, and
 * can then give its jmethodID to another method, with no event the shim would see. The
 * caller frees scratch->lines (scratch_done). */
static struct method_lines *lines_of(struct lines_cache *c, jmethodID m,
                                     struct method_lines *scratch)
{
    if (c->cap != 0) {
        size_t j = hash_method(m) & (c->cap - 1);
        for (; c->slots[j].method != NULL; j = (j + 1) & (c->cap - 1))
            if (c->slots[j].method == m)
                return &c->slots[j];
    }
    struct method_lines got;
    lines_fetch(&got, m);
    if (got.obsolete) {
        *scratch = got;
        return scratch;
    }
    if (c->used >= CACHE_MAX)
        cache_clear(c);
    if ((c->used + 1) * 2 > c->cap && !cache_grow(c)) {
        *scratch = got;
        return scratch;
    }
    size_t j = hash_method(m) & (c->cap - 1);
    while (c->slots[j].method != NULL)
        j = (j + 1) & (c->cap - 1);
    c->slots[j] = got;
    c->used++;
    return &c->slots[j];
}

static void scratch_done(struct method_lines *scratch)
{
    free(scratch->lines);
    scratch->lines = NULL;
}

static jint line_in(const struct method_lines *ml, jlocation bci)
{
    if (ml == NULL || ml->n == 0)
        return -1;
    if (ml->n < 0)
        return -3;
    /* The last entry whose start <= bci. */
    jint lo = 0, hi = ml->n - 1, found = -1;
    while (lo <= hi) {
        jint mid = (lo + hi) / 2;
        if (ml->lines[mid].start <= bci) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found < 0 ? -1 : ml->lines[found].line;
}

jint calltrace_line(jmethodID m, jlocation bci)
{
    struct lines_cache *c = cache_self();
    struct method_lines scratch = {0};
    jint line = line_in(c != NULL ? lines_of(c, m, &scratch) : NULL, bci);
    scratch_done(&scratch);
    return line;
}

/* Frames asked for up to this depth are fetched into a stack buffer: no allocation. */
#define STACK_FRAMES 128

/* Frames a deferred constructor entry may have above its own (the constructors it called,
 * a probe, a method run for super's arguments). */
#define FROM_EXTRA 64

static jint fill(JNIEnv *jni, jthread t, jmethodID from, JVMPI_CallFrame *frames, jint depth);

jint calltrace_fill(JNIEnv *jni, jthread t, JVMPI_CallFrame *frames, jint depth)
{
    return fill(jni, t, NULL, frames, depth);
}

/* The same for the current thread, from the shallowest frame of method `from` (the whole
 * stack if it is not among the top frames). */
static jint calltrace_fill_from(JNIEnv *jni, jmethodID from, JVMPI_CallFrame *frames, jint depth)
{
    return fill(jni, NULL, from, frames, depth);
}

/* Is the frame below a renamed native's, running method below, its Java wrapper (shown)?
 * The wrapper's frame may run the obsolete version of a class retransformed meanwhile
 * (methods=bci), whose id differs but which the agent knows as the same method: compare
 * the ids shown, or it would appear twice (the stress test's checker saw that on JDK 25). */
static bool wrapper_of(struct lines_cache *c, jmethodID below, jmethodID shown)
{
    if (below == shown)
        return true;
    if (c == NULL)
        return false;
    struct method_lines scratch = {0};
    struct method_lines *ml = lines_of(c, below, &scratch);
    bool same = ml != NULL && ml->current == shown;
    scratch_done(&scratch);
    return same;
}

static jint fill(JNIEnv *jni, jthread t, jmethodID from, JVMPI_CallFrame *frames, jint depth)
{
    /* One frame more than asked: a thread inside a method-event probe has the probe's
     * native frame on top, which is the shim's and is dropped; one more again for the Java
     * wrapper of a renamed native, which is not shown (below). */
    jint extra = 2 + (from != NULL ? FROM_EXTRA : 0);
    jvmtiFrameInfo buf[STACK_FRAMES + 2 + FROM_EXTRA];
    jvmtiFrameInfo *fi = depth <= STACK_FRAMES ? buf : malloc(sizeof *fi * ((size_t)depth + (size_t)extra));
    if (fi == NULL)
        return 0;
    jint n = 0;
    jvmtiError err = (*g_shim.jvmti)->GetStackTrace(g_shim.jvmti, t, 0, depth + extra, fi, &n);
    if (err != JVMTI_ERROR_NONE) {
        if (err != JVMTI_ERROR_THREAD_NOT_ALIVE)
            jvmti_ok_at(err, LOG_INFO, "GetCallTrace: GetStackTrace");
        n = 0;
    }
    jint skip = (n > 0 && bci_is_hook_method(fi[0].method)) ? 1 : 0;
    if (from != NULL) {
        for (jint i = skip; i < n && i < FROM_EXTRA + 1; i++)
            if (fi[i].method == from) {
                skip = i;
                break;
            }
    }
    n -= skip;
    bool announce = jni != NULL && events_any(JVMPI_EVENT_CLASS_LOAD);
    struct lines_cache *c = cache_self();
    jint out = 0;
    for (jint i = 0; i < n && out < depth; i++) {
        jvmtiFrameInfo *f = &fi[i + skip];
        /* ml is looked up for every frame and not kept: announcing below may run an
         * agent's CLASS_LOAD handler on this thread, which may trace and so change c. */
        struct method_lines scratch = {0};
        struct method_lines *ml = c != NULL ? lines_of(c, f->method, &scratch) : NULL;
        jmethodID shown = ml != NULL ? ml->current : f->method;
        frames[out].method_id = shown;
        frames[out].lineno = line_in(ml, f->location); /* the running version's */
        /* A renamed native's frame stands for the native the agent knows; the Java wrapper
         * right below it, the same method to the agent, is not shown twice. */
        bool renamed_native = ml != NULL && ml->n == -3 && shown != f->method;
        scratch_done(&scratch);
        if (announce && ml != NULL && !ml->announced) {
            ml->announced = g_shim.ninst == 1 && ml != &scratch; /* several agents: every time */
            classes_method_announced(jni, f->method);
            c = cache_self(); /* the same cache, emptied if a class changed meanwhile */
        }
        if (renamed_native && i + 1 < n && wrapper_of(c, fi[i + skip + 1].method, shown))
            i++;
        out++;
    }
    if (fi != buf)
        free(fi);
    return out;
}

struct calltrace_snap *calltrace_snap_keep(const struct calltrace_snap *at)
{
    struct calltrace_snap *s = malloc(sizeof *s);
    if (s == NULL)
        return NULL;
    s->n = 0;
    s->frames = NULL;
    s->from_method = NULL;
    if (at != NULL && at->from_method == NULL) {
        /* Kept before (an event held again): its frames, copied. */
        if (at->n > 0 && (s->frames = malloc(sizeof *at->frames * (size_t)at->n)) != NULL) {
            memcpy(s->frames, at->frames, sizeof *at->frames * (size_t)at->n);
            s->n = at->n;
        }
        return s;
    }
    jint count = 0;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetFrameCount(g_shim.jvmti, NULL, &count), LOG_DEBUG,
                     "GetFrameCount for a held event's stack snapshot") ||
        count <= 0 || (s->frames = malloc(sizeof *s->frames * (size_t)count)) == NULL)
        return s;
    /* No JNIEnv: nothing announced. */
    s->n = fill(NULL, NULL, at != NULL ? at->from_method : NULL, s->frames, count);
    if (s->n == 0) {
        free(s->frames);
        s->frames = NULL;
    }
    return s;
}

void calltrace_snap_free(struct calltrace_snap *s)
{
    if (s == NULL)
        return;
    free(s->frames);
    free(s);
}

/* GetCallTrace on the current thread inside a held event's handler: the frames taken when
 * the event happened, their classes announced first (definition before use). */
static jint snap_copy(JNIEnv *jni, const struct calltrace_snap *s, JVMPI_CallFrame *frames,
                      jint depth)
{
    jint n = s->n < depth ? s->n : depth;
    bool announce = events_any(JVMPI_EVENT_CLASS_LOAD);
    for (jint i = 0; i < n; i++) {
        if (announce)
            classes_method_announced(jni, s->frames[i].method_id);
        frames[i] = s->frames[i];
    }
    return n;
}

void jvmpi_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    if (trace == NULL) {
        report_misuse(inst, LOG_WARN, "GetCallTrace(NULL trace): ignored");
        return;
    }
    trace->num_frames = 0;
    if (depth <= 0) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(depth %d): no frames", (int)depth);
        return;
    }
    if (trace->frames == NULL) {
        report_misuse(inst, LOG_WARN, "GetCallTrace with trace->frames NULL: no frames");
        return;
    }
    JNIEnv *env = trace->env_id;
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(env_id NULL): no frames");
        return;
    }
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL) {
        report_misuse(inst, LOG_WARN,
                      "GetCallTrace from a thread the JVM does not know: no frames");
        return;
    }
    if (env == shim_current_env()) {
        const struct calltrace_snap *snap = calltrace_snap_now;
        trace->num_frames = snap == NULL ? calltrace_fill(jni, NULL, trace->frames, depth)
                            : snap->from_method != NULL
                                ? calltrace_fill_from(jni, snap->from_method, trace->frames, depth)
                                : snap_copy(jni, snap, trace->frames, depth);
        return;
    }
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL || r->ref == NULL) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(env_id %p): no such thread: no frames",
                                      (void *)env);
        threads_release(r);
        return;
    }
    trace->num_frames = calltrace_fill(jni, r->ref, trace->frames, depth);
    threads_release(r);
}
