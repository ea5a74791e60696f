/* checker.c — a JDK 1.3-style JVMPI agent that enables every event and checks each one live.
 *
 * For tests/it/lifecycle/stress.sh (workload tests/java/Stress.java). In JVM_OnLoad it enables
 * every event the shim delivers except INSTRUCTION_START (the defining events THREAD_START,
 * CLASS_LOAD, ARENA_NEW and OBJECT_ALLOC first: an id is promised to be defined before use
 * only while its defining event is on), and holds every event to the JVMPI contract in the
 * handler, as it arrives:
 *  - ids are defined before use: the env_id of every event names a thread whose THREAD_START
 *    came and whose THREAD_END has not; every object id (ENTRY2 receivers, monitor objects,
 *    JNI reference objects, thread objects) is one an OBJECT_ALLOC or a CLASS_LOAD (a class
 *    is its mirror) announced and no OBJECT_FREE or CLASS_UNLOAD took back; every class id
 *    is one a CLASS_LOAD defined and no CLASS_UNLOAD removed; every method id is listed by
 *    the CLASS_LOAD of a class still loaded (COMPILED_METHOD_UNLOAD may come after it);
 *  - per thread, METHOD_EXITs never outnumber METHOD_ENTRYs, and at THREAD_END the depth is
 *    0 (threads running before JVM_INIT_DONE may hold frames entered before the events were
 *    on: their depth is reported, not judged); at JVM_SHUT_DOWN, entries minus exits equals
 *    the depth the live threads hold, so no event went astray;
 *  - OBJECT_FREE only for a live id, only between GC_START and GC_FINISH; GC_START and
 *    GC_FINISH alternate (balanced, never nested); ARENA_NEW once, before the first
 *    OBJECT_ALLOC; no CLASS_LOAD twice for a live class; no THREAD_START twice for a live
 *    thread; OBJECT_MOVE and ARENA_DELETE never;
 *  - every frame of GetCallTrace (taken of live threads from the toggler thread) names a
 *    method a CLASS_LOAD listed, and no native method shows up twice in a row;
 *  - JVM_INIT_DONE and JVM_SHUT_DOWN once each; no event after JVM_SHUT_DOWN, nor on another
 *    thread while it runs; no event of a type never enabled. A system thread
 *    "checker-toggler" disables and re-enables ten types in turn (METHOD_ENTRY2, the Java and
 *    raw monitor events, CLASS_LOAD_HOOK). An event already in flight when DisableEvent
 *    returns may still arrive (the shim checks the mask before it builds and delivers an
 *    event), but a thread has at most one in flight per type: a second event of that type
 *    on the same thread while it is disabled is a violation ("late" counts the first).
 * What the shim documents or cannot help is told apart, counted and printed, not judged:
 *  - ids used by events before JVM_INIT_DONE, while the start-up replay is still announcing
 *    what exists, are checked at JVM_INIT_DONE instead: every one must have been defined by
 *    an event by then (one that only a request explains is a violation). HotSpot's own
 *    start-up order had objects announced before their classes, so the use may come first;
 *  - a thread's own THREAD_START is its first event: when it names a Thread object no
 *    OBJECT_ALLOC announced yet (a thread attached through JNI), that object's OBJECT_ALLOC
 *    follows; the checker asks for it with RequestEvent(OBJECT_ALLOC) and counts it. Any
 *    other unknown object id is a violation, reported with what RequestEvent(CLASS_LOAD) or
 *    RequestEvent(OBJECT_ALLOC) find behind it ("unannounced_objects" counts those);
 *  - Java monitor events on a thread after its THREAD_END, on that same thread (the VM
 *    notifies joiners under the Thread object's lock after JVMTI's ThreadEnd), and
 *    JVM_SHUT_DOWN on the exiting thread right after its THREAD_END ("after_thread_end").
 *    Both are HotSpot's own order (reference-behavior.md, THREAD_END): it posted THREAD_END
 *    after Thread.exit() and before ensure_join, which locks the Thread object to notify
 *    joiners (a contended lock there posted monitor events), and the thread that ran
 *    before_exit got its THREAD_END there, before JVM_SHUT_DOWN.
 * Thread records live in JVMPI thread-local storage (and a table, to catch a lost one), set
 * at THREAD_START and freed at THREAD_END; the tables are striped hash maps that shrink as
 * ids die, so the agent's own memory follows what is alive.
 *
 * Two more system threads contend on a raw monitor ("checker-raw-A/B") and one makes JNI
 * global and weak global references ("checker-jniref"), so that those events happen too.
 * At JVM_SHUT_DOWN it prints "checker: count TYPE checked=N late=L after_thread_end=A
 * unannounced_objects=U" for every type, the depths of the live threads, the table sizes,
 * the counts above and "checker: violations=N"; the first 100 violations are printed as
 * "checker: VIOLATION ...". Options: "debug" (names behind unknown ids, the start-up event
 * order on stderr), "noentry2" (leave METHOD_ENTRY2 off, to measure what it costs).
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "checker"
#include "kit/out.h"
#include "kit/checked.h"

static volatile long violations;
static volatile int init_done;
/* One broken rule: counted; the first 100 printed, marked if before JVM_INIT_DONE. */
static void VIOLATION(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void VIOLATION(const char *fmt, ...)
{
    if (__sync_add_and_fetch(&violations, 1) > 100)
        return;
    char line[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("VIOLATION%s %s", init_done ? "" : " (start-up)", line);
}

static const char *const names[JVMPI_MAX_EVENT_TYPE_VAL + 1] = {
    [1] = "METHOD_ENTRY", [2] = "METHOD_ENTRY2", [3] = "METHOD_EXIT", [4] = "OBJECT_ALLOC",
    [5] = "OBJECT_FREE", [6] = "OBJECT_MOVE", [7] = "COMPILED_METHOD_LOAD",
    [8] = "COMPILED_METHOD_UNLOAD", [9] = "INSTRUCTION_START", [33] = "THREAD_START",
    [34] = "THREAD_END", [35] = "CLASS_LOAD_HOOK", [37] = "HEAP_DUMP",
    [38] = "JNI_GLOBALREF_ALLOC", [39] = "JNI_GLOBALREF_FREE", [40] = "JNI_WEAK_GLOBALREF_ALLOC",
    [41] = "JNI_WEAK_GLOBALREF_FREE", [42] = "CLASS_LOAD", [43] = "CLASS_UNLOAD",
    [44] = "DATA_DUMP_REQUEST", [45] = "DATA_RESET_REQUEST", [46] = "JVM_INIT_DONE",
    [47] = "JVM_SHUT_DOWN", [48] = "ARENA_NEW", [49] = "ARENA_DELETE", [50] = "OBJECT_DUMP",
    [51] = "RAW_MONITOR_CONTENDED_ENTER", [52] = "RAW_MONITOR_CONTENDED_ENTERED",
    [53] = "RAW_MONITOR_CONTENDED_EXIT", [54] = "MONITOR_CONTENDED_ENTER",
    [55] = "MONITOR_CONTENDED_ENTERED", [56] = "MONITOR_CONTENDED_EXIT", [57] = "MONITOR_WAIT",
    [58] = "MONITOR_WAITED", [59] = "MONITOR_DUMP", [60] = "GC_START", [61] = "GC_FINISH",
};
#define NTYPES (JVMPI_MAX_EVENT_TYPE_VAL + 1)
static const char *tname(int t)
{
    return t >= 0 && t < NTYPES && names[t] ? names[t] : "?";
}

/* ---- striped hash maps: key (never 0 or 1) -> value ---- */

#define NSTRIPE 64
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)
struct stripe {
    pthread_mutex_t mu;
    uintptr_t *keys, *vals;
    size_t cap, count, used; /* used = count + tombstones */
};
struct smap {
    struct stripe s[NSTRIPE];
};

static uint64_t mix(uintptr_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static void smap_init(struct smap *m)
{
    for (int i = 0; i < NSTRIPE; i++)
        pthread_mutex_init(&m->s[i].mu, NULL);
}

/* Rebuild s with room for its live entries (drops tombstones; shrinks too). */
static int stripe_rehash(struct stripe *s, size_t want)
{
    size_t cap = 16;
    while (cap < want * 2)
        cap *= 2;
    uintptr_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return 0;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->keys[i] > TOMB) {
            size_t j = (size_t)(mix(s->keys[i]) >> 8) & (cap - 1);
            while (k[j] != EMPTY)
                j = (j + 1) & (cap - 1);
            k[j] = s->keys[i];
            v[j] = s->vals[i];
        }
    free(s->keys);
    free(s->vals);
    s->keys = k;
    s->vals = v;
    s->cap = cap;
    s->used = s->count;
    return 1;
}

/* Slot of key in s, or (size_t)-1. Caller holds s->mu. */
static size_t stripe_find(struct stripe *s, uintptr_t key)
{
    if (s->cap == 0)
        return (size_t)-1;
    size_t j = (size_t)(mix(key) >> 8) & (s->cap - 1);
    for (size_t n = 0; n < s->cap; n++, j = (j + 1) & (s->cap - 1)) {
        if (s->keys[j] == EMPTY)
            return (size_t)-1;
        if (s->keys[j] == key)
            return j;
    }
    return (size_t)-1;
}

static struct stripe *stripe_of(struct smap *m, uintptr_t key)
{
    return &m->s[mix(key) & (NSTRIPE - 1)];
}

/* Insert or replace; returns 1 if the key was already there (old value in *old). */
static int smap_put(struct smap *m, uintptr_t key, uintptr_t val, uintptr_t *old)
{
    struct stripe *s = stripe_of(m, key);
    pthread_mutex_lock(&s->mu);
    size_t j = stripe_find(s, key);
    if (j != (size_t)-1) {
        if (old)
            *old = s->vals[j];
        s->vals[j] = val;
        pthread_mutex_unlock(&s->mu);
        return 1;
    }
    if ((s->used + 1) * 10 >= s->cap * 7 && !stripe_rehash(s, s->count + 1)) {
        pthread_mutex_unlock(&s->mu);
        say("FAIL out of memory in a table");
        return 0;
    }
    j = (size_t)(mix(key) >> 8) & (s->cap - 1);
    while (s->keys[j] > TOMB)
        j = (j + 1) & (s->cap - 1);
    if (s->keys[j] == EMPTY)
        s->used++;
    s->keys[j] = key;
    s->vals[j] = val;
    s->count++;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static int smap_get(struct smap *m, uintptr_t key, uintptr_t *val)
{
    struct stripe *s = stripe_of(m, key);
    pthread_mutex_lock(&s->mu);
    size_t j = stripe_find(s, key);
    if (j != (size_t)-1 && val)
        *val = s->vals[j];
    pthread_mutex_unlock(&s->mu);
    return j != (size_t)-1;
}

static int smap_del(struct smap *m, uintptr_t key, uintptr_t *val)
{
    struct stripe *s = stripe_of(m, key);
    pthread_mutex_lock(&s->mu);
    size_t j = stripe_find(s, key);
    if (j != (size_t)-1) {
        if (val)
            *val = s->vals[j];
        s->keys[j] = TOMB;
        s->count--;
        /* Shrink when mostly empty, so memory follows what is alive. */
        if (s->cap > 64 && s->count * 8 < s->cap)
            stripe_rehash(s, s->count);
    }
    pthread_mutex_unlock(&s->mu);
    return j != (size_t)-1;
}

static size_t smap_count(struct smap *m, size_t *cap)
{
    size_t n = 0, c = 0;
    for (int i = 0; i < NSTRIPE; i++) {
        pthread_mutex_lock(&m->s[i].mu);
        n += m->s[i].count;
        c += m->s[i].cap;
        pthread_mutex_unlock(&m->s[i].mu);
    }
    if (cap)
        *cap = c;
    return n;
}

/* ---- state ---- */

struct trec {
    JNIEnv *env;
    char name[48];
    long depth, min_depth, entries, exits;
    int pre;                    /* THREAD_START came before JVM_INIT_DONE */
    int late_gen[NTYPES];       /* toggled types: the disable generation of a late event */
};

static struct smap objects;     /* live object id -> 1 */
static struct smap classes;     /* live class id -> 1 */
static struct smap methods;     /* method id -> class id (kept after unload) */
static struct smap threads;     /* live env -> struct trec * */
static struct smap jnirefs;     /* live JNI (weak) global ref -> 1 */
static struct smap freed;       /* option debug: freed object id -> event count at the free */
static int opt_debug;
static struct smap class_names; /* option debug: class id -> its name, and method id -> name */
static const char *debug_name(uintptr_t key)
{
    uintptr_t v = 0;
    return opt_debug && smap_get(&class_names, key, &v) ? (const char *)v : "?";
}

static volatile long counts[NTYPES], late[NTYPES];
static volatile int enabled_type[NTYPES];
static volatile int shut_down, arena_seen, in_gc;
static volatile long gc_overlaps, handlers_running;
static volatile long undefined_env_null;
static volatile long pre_threads_nonzero;
static pthread_t gc_thread;

/* Types the toggler switches off and on; tog_gen counts disables. */
static const jint toggled[] = {
    JVMPI_EVENT_METHOD_ENTRY2, JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
    JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, JVMPI_EVENT_MONITOR_CONTENDED_EXIT,
    JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED, JVMPI_EVENT_CLASS_LOAD_HOOK,
    JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
    JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT};
#define NTOGGLED ((int)(sizeof toggled / sizeof toggled[0]))
static volatile int tog_disabled[NTYPES], tog_gen[NTYPES];
static volatile long toggles;

static JVMPI_RawMonitor raw_contended;

/* ---- checks ---- */

/* Threads whose THREAD_END came, newest last: the JVM's own exit path still runs Java
 * monitor code on them after JVMTI's ThreadEnd (joiners are notified under the Thread
 * object's lock), and such an event names an env that is no longer defined. */
#define NENDED 256
static struct {
    JNIEnv *env;
    pthread_t self;
} ended_ring[NENDED];
static unsigned ended_next;
static pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long after_end[NTYPES];

static void ended_note(JNIEnv *env)
{
    pthread_mutex_lock(&ended_lock);
    ended_ring[ended_next % NENDED].env = env;
    ended_ring[ended_next % NENDED].self = pthread_self();
    ended_next++;
    pthread_mutex_unlock(&ended_lock);
}

/* Is this the thread that ended with env, still running its exit path? */
static int ended_here(JNIEnv *env)
{
    int found = 0;
    pthread_mutex_lock(&ended_lock);
    for (unsigned i = 0; i < NENDED && !found; i++)
        found = ended_ring[i].env == env && pthread_equal(ended_ring[i].self, pthread_self());
    pthread_mutex_unlock(&ended_lock);
    return found;
}

static __thread jobjectID tl_alloc_class;

static struct trec *thread_of(JNIEnv *env, int t)
{
    if (env == NULL) {
        __sync_add_and_fetch(&undefined_env_null, 1);
        VIOLATION("%s with env_id NULL", tname(t));
        return NULL;
    }
    struct trec *r = jvmpi->GetThreadLocalStorage(env);
    if (r != NULL && r->env == env)
        return r;
    uintptr_t v = 0;
    /* JVM_SHUT_DOWN comes on the exiting thread right after its THREAD_END, as on HotSpot. */
    if ((t == JVMPI_EVENT_MONITOR_CONTENDED_ENTER || t == JVMPI_EVENT_MONITOR_CONTENDED_ENTERED ||
         t == JVMPI_EVENT_MONITOR_CONTENDED_EXIT || t == JVMPI_EVENT_JVM_SHUT_DOWN) &&
        !smap_get(&threads, (uintptr_t)env, NULL) && ended_here(env)) {
        __sync_add_and_fetch(&after_end[t], 1);
        return NULL;
    }
    if (smap_get(&threads, (uintptr_t)env, &v))
        VIOLATION("%s on thread %s (%p): GetThreadLocalStorage gave %p, not its record",
                  tname(t), ((struct trec *)v)->name, (void *)env, (void *)r);
    else
        VIOLATION("%s with env_id %p: no THREAD_START for it (or it ended%s)", tname(t),
                  (void *)env, ended_here(env) ? ": its THREAD_END came on this thread" : "");
    if (opt_debug && t == JVMPI_EVENT_OBJECT_ALLOC)
        say("debug: allocation of class %s after THREAD_END", debug_name((uintptr_t)tl_alloc_class));
    return (struct trec *)v;
}

/* An id no event defined may still name a class: the mirror of an array class. JVMTI
 * reports no allocation for those mirrors (the VM makes them while it holds a lock under
 * which it samples nothing), and the shim announces an array class only when it is named as
 * a class. Ask, as an agent may: RequestEvent(CLASS_LOAD, id) defines it if it is a class. */
static __thread int tl_requested_array;
static volatile long array_mirrors, class_mirrors, startup_deferred, startup_resolved;
static struct smap requested_ids; /* ids the agent had to request: the real event may follow */
static struct smap pending;     /* ids used before JVM_INIT_DONE and not yet defined */

static int defined_on_request(jobjectID id)
{
    tl_requested_array = 0;
    if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id) != JVMPI_SUCCESS)
        return 0;
    /* A class: an array class, or one used as an object before it was prepared (its
     * CLASS_LOAD, from ClassPrepare, may then follow). */
    smap_put(&requested_ids, (uintptr_t)id, 1, NULL);
    __sync_add_and_fetch(tl_requested_array ? &array_mirrors : &class_mirrors, 1);
    return 1;
}

/* A live object that no OBJECT_ALLOC announced. Seen: objects that Java code the shim runs
 * inside a JVMTI callback allocates (reflection that links a class, the Thread object of a
 * CreateSystemThread called from a handler) — JVMTI samples no allocation nested in one of
 * its own callbacks — and, on JDK 25, MemberNames of java.lang.invoke. RequestEvent(
 * OBJECT_ALLOC, id) is how an agent learns an object it was not told about: counted, per
 * type of the event that named it, and reported; not a violation. */
static volatile long unannounced[NTYPES], announced_later;
static __thread jmethodID tl_method; /* option debug: the method of the event being checked */
static int announced_on_request(jobjectID id, int t)
{
    if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id) != JVMPI_SUCCESS)
        return 0;
    smap_put(&requested_ids, (uintptr_t)id, 1, NULL);
    if (__sync_add_and_fetch(&unannounced[t], 1) <= 3 || opt_debug)
        say("note: %s named object %p, which no OBJECT_ALLOC had announced: requested%s%s",
            tname(t), (void *)id, opt_debug ? " by " : "",
            opt_debug ? debug_name((uintptr_t)tl_method) : "");
    return 1;
}

static __thread int tl_own_start;          /* THREAD_START posted on its own thread */
static volatile long own_thread_objects;    /* such a THREAD_START named an unannounced object */

static void object_defined(jobjectID id, int t, const char *what)
{
    uintptr_t when = 0;
    /* A class's mirror is an object whose id CLASS_LOAD defines. */
    if (id == NULL || smap_get(&objects, (uintptr_t)id, NULL) ||
        smap_get(&classes, (uintptr_t)id, NULL))
        return;
    /* Before JVM_INIT_DONE the start-up replay is still announcing what exists: the promise
     * is that it is all announced by then (checked at JVM_INIT_DONE). */
    if (!init_done) {
        if (!smap_put(&pending, (uintptr_t)id, (uintptr_t)t, NULL))
            __sync_add_and_fetch(&startup_deferred, 1);
        return;
    }
    /* A thread's own THREAD_START is its first event; its Thread object, when no
     * OBJECT_ALLOC named it yet (a thread attached through JNI), is announced right after. */
    if (t == JVMPI_EVENT_THREAD_START && tl_own_start && announced_on_request(id, t)) {
        __sync_add_and_fetch(&own_thread_objects, 1);
        return;
    }
    /* Anything else no event defined breaks the promise; say what a request finds. */
    if (defined_on_request(id)) {
        VIOLATION("%s: %s %p: a class mirror no OBJECT_ALLOC or CLASS_LOAD announced", tname(t),
                  what, (void *)id);
        return;
    }
    if (announced_on_request(id, t)) {
        VIOLATION("%s: %s %p: a live object no OBJECT_ALLOC announced", tname(t), what, (void *)id);
        return;
    }
    if (opt_debug && smap_get(&freed, (uintptr_t)id, &when))
        VIOLATION("%s: %s %p was freed (at event %lu)", tname(t), what, (void *)id,
                  (unsigned long)when);
    else
        VIOLATION("%s: %s %p was never announced by OBJECT_ALLOC%s", tname(t), what, (void *)id,
                  opt_debug ? "" : ", or was freed");
}

static void class_defined(jobjectID id, int t, const char *what)
{
    if (id != NULL && !smap_get(&classes, (uintptr_t)id, NULL))
        VIOLATION("%s: %s %p has no CLASS_LOAD, or was unloaded", tname(t), what, (void *)id);
}

static void method_defined(jmethodID m, int t, int may_be_unloaded)
{
    uintptr_t cls = 0;
    if (m == NULL || !smap_get(&methods, (uintptr_t)m, &cls)) {
        VIOLATION("%s: method %p is in no CLASS_LOAD", tname(t), (void *)m);
        if (opt_debug && m != NULL) {
            jobjectID c = jvmpi->GetMethodClass(m);
            JNIEnv *jni = NULL;
            char text[300] = "?";
            (*g_jvm)->GetEnv(g_jvm, (void **)&jni, JNI_VERSION_1_2);
            if (jni != NULL && c != NULL && (*jni)->PushLocalFrame(jni, 16) == JNI_OK) {
                jclass k = (jclass)jvmpi->jobjectID2jobject(c);
                jobject rm = k ? (*jni)->ToReflectedMethod(jni, k, m, JNI_FALSE) : NULL;
                jclass oc = (*jni)->FindClass(jni, "java/lang/Object");
                jmethodID ts = (*jni)->GetMethodID(jni, oc, "toString", "()Ljava/lang/String;");
                jstring str = rm ? (jstring)(*jni)->CallObjectMethod(jni, rm, ts) : NULL;
                const char *u = str ? (*jni)->GetStringUTFChars(jni, str, NULL) : NULL;
                if (u != NULL) {
                    snprintf(text, sizeof text, "%s", u);
                    (*jni)->ReleaseStringUTFChars(jni, str, u);
                }
                (*jni)->ExceptionClear(jni);
                (*jni)->PopLocalFrame(jni, NULL);
            }
            say("debug: its class %p is %s; the method is %s", (void *)c, debug_name((uintptr_t)c), text);
        }
        return;
    }
    if (!may_be_unloaded && !smap_get(&classes, cls, NULL))
        VIOLATION("%s: method %p of class %p, which was unloaded", tname(t), (void *)m,
                  (void *)cls);
}

/* A toggled type arriving while disabled: one in-flight event per thread is allowed. */
static void check_toggle(struct trec *r, int t)
{
    if (!tog_disabled[t])
        return;
    __sync_synchronize();
    int g = tog_gen[t];
    if (r == NULL)
        return;
    if (r->late_gen[t] == g)
        VIOLATION("a second %s on thread %s after DisableEvent(%s) had returned", tname(t),
                  r->name, tname(t));
    else {
        r->late_gen[t] = g;
        __sync_add_and_fetch(&late[t], 1);
    }
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL) {
        VIOLATION("THREAD_START with thread_env_id NULL");
        return;
    }
    struct trec *r = calloc(1, sizeof *r);
    if (r == NULL)
        return;
    r->env = env;
    snprintf(r->name, sizeof r->name, "%s",
             ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
    r->pre = !init_done;
    uintptr_t old = 0;
    if (smap_put(&threads, (uintptr_t)env, (uintptr_t)r, &old)) {
        VIOLATION("THREAD_START for %s (%p): a live thread %s has that env", r->name, (void *)env,
                  ((struct trec *)old)->name);
        free((struct trec *)old);
    }
    jvmpi->SetThreadLocalStorage(env, r);
    /* After the record: checking the thread object may request an event on this thread. */
    tl_own_start = ev->env_id == env;
    object_defined(ev->u.thread_start.thread_id, JVMPI_EVENT_THREAD_START, "thread object");
    tl_own_start = 0;
}

static volatile long ended_depth_sum; /* depth of ended threads that did not end at 0 */

static void on_thread_end(JVMPI_Event *ev, struct trec *r)
{
    if (r == NULL)
        return;
    __sync_add_and_fetch(&ended_depth_sum, r->depth);
    if (r->depth != 0) {
        if (r->pre) {
            __sync_add_and_fetch(&pre_threads_nonzero, 1);
            say("note: thread %s, running before JVM_INIT_DONE, ended at depth %ld (min %ld)",
                r->name, r->depth, r->min_depth);
        } else {
            VIOLATION("thread %s ended at depth %ld (%ld entries, %ld exits)", r->name, r->depth,
                      r->entries, r->exits);
        }
    }
    smap_del(&threads, (uintptr_t)ev->env_id, NULL);
    jvmpi->SetThreadLocalStorage(ev->env_id, NULL);
    ended_note(ev->env_id);
    memset(r, 0xdd, sizeof *r);
    free(r);
}

static void on_class_load(JVMPI_Event *ev, int requested)
{
    jobjectID id = ev->u.class_load.class_id;
    if (requested)
        tl_requested_array = ev->u.class_load.class_name != NULL && ev->u.class_load.class_name[0] == '[';
    if (id == NULL) {
        VIOLATION("CLASS_LOAD of %s with class_id NULL", ev->u.class_load.class_name);
        return;
    }
    if (smap_put(&classes, (uintptr_t)id, 1, NULL) && !requested) {
        if (smap_del(&requested_ids, (uintptr_t)id, NULL)) {
            __sync_add_and_fetch(&announced_later, 1); /* the agent had asked for it first */
        } else {
            struct trec *r = jvmpi->GetThreadLocalStorage(ev->env_id);
            VIOLATION("CLASS_LOAD of %s on %s: class %p was already loaded",
                      ev->u.class_load.class_name, r ? r->name : "?", (void *)id);
        }
    }
    for (int i = 0; i < ev->u.class_load.num_methods; i++) {
        smap_put(&methods, (uintptr_t)ev->u.class_load.methods[i].method_id, (uintptr_t)id, NULL);
        if (opt_debug) {
            char buf[300];
            snprintf(buf, sizeof buf, "%s.%s%s", ev->u.class_load.class_name,
                     ev->u.class_load.methods[i].method_name,
                     ev->u.class_load.methods[i].method_signature);
            smap_put(&class_names, (uintptr_t)ev->u.class_load.methods[i].method_id,
                     (uintptr_t)strdup(buf), NULL);
        }
    }
    if (opt_debug)
        smap_put(&class_names, (uintptr_t)id, (uintptr_t)strdup(ev->u.class_load.class_name), NULL);
}

static void on_class_unload(JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_unload.class_id;
    if (!smap_del(&classes, (uintptr_t)id, NULL))
        VIOLATION("CLASS_UNLOAD of %p: not a loaded class", (void *)id);
    /* The mirror's death is reported as CLASS_UNLOAD, not OBJECT_FREE. */
    smap_del(&objects, (uintptr_t)id, NULL);
}

static void on_init_done_threads(void);
static void check_pending(void);
static void report(void);
static volatile int shutting;
static pthread_t shut_thread;

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    if (t < 0 || t >= NTYPES) {
        VIOLATION("event type %d", t);
        return;
    }
    __sync_add_and_fetch(&counts[t], 1);
    __sync_add_and_fetch(&handlers_running, 1);
    if (shut_down)
        VIOLATION("%s after JVM_SHUT_DOWN", tname(t));
    else if (shutting && !pthread_equal(pthread_self(), shut_thread))
        VIOLATION("%s on another thread while JVM_SHUT_DOWN runs", tname(t));
    if (t == JVMPI_EVENT_JVM_SHUT_DOWN) {
        if (shutting)
            VIOLATION("JVM_SHUT_DOWN twice");
        shut_thread = pthread_self();
        __sync_synchronize();
        shutting = 1;
    }
    if (!requested && !enabled_type[t])
        VIOLATION("%s, a type never enabled", tname(t));
    if (in_gc && t != JVMPI_EVENT_OBJECT_FREE && t != JVMPI_EVENT_GC_FINISH &&
        !pthread_equal(pthread_self(), gc_thread))
        __sync_add_and_fetch(&gc_overlaps, 1);

    struct trec *r = NULL;
    if (t == JVMPI_EVENT_OBJECT_ALLOC) {
        tl_alloc_class = ev->u.obj_alloc.class_id;
        }
    if (t != JVMPI_EVENT_THREAD_START)
        r = thread_of(ev->env_id, t);
    if (opt_debug && !init_done)
        fprintf(stderr, "checker: start-up event %s%s on %s\n", tname(t), requested ? " (requested)" : "",
                r ? r->name : "?");
    if (!requested)
        check_toggle(r, t);

    switch (t) {
    case JVMPI_EVENT_THREAD_START:
        if (!requested)
            on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev, r);
        r = NULL;
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        method_defined(ev->u.method.method_id, t, 0);
        if (r != NULL) {
            r->depth++;
            r->entries++;
        }
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        tl_method = ev->u.method_entry2.method_id;
        method_defined(ev->u.method_entry2.method_id, t, 0);
        object_defined(ev->u.method_entry2.obj_id, t, "receiver");
        if (opt_debug && ev->u.method_entry2.obj_id != NULL &&
            !smap_get(&objects, (uintptr_t)ev->u.method_entry2.obj_id, NULL) &&
            !smap_get(&classes, (uintptr_t)ev->u.method_entry2.obj_id, NULL))
            say("debug: receiver %p of %s on %s", (void *)ev->u.method_entry2.obj_id,
                debug_name((uintptr_t)ev->u.method_entry2.method_id), r ? r->name : "?");
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        method_defined(ev->u.method.method_id, t, 0);
        if (r != NULL) {
            r->depth--;
            r->exits++;
            if (r->depth < r->min_depth)
                r->min_depth = r->depth;
            if (r->depth < 0 && !r->pre)
                VIOLATION("thread %s: METHOD_EXIT at depth %ld (more exits than entries)",
                          r->name, r->depth + 1);
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (!arena_seen)
            VIOLATION("OBJECT_ALLOC before ARENA_NEW");
        if (ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT || ev->u.obj_alloc.is_array == JVMPI_CLASS)
            class_defined(ev->u.obj_alloc.class_id, t, "class");
        if (ev->u.obj_alloc.obj_id == NULL)
            VIOLATION("OBJECT_ALLOC with obj_id NULL");
        else if (smap_put(&objects, (uintptr_t)ev->u.obj_alloc.obj_id, 1, NULL) && !requested) {
            /* A thread's own Thread object, named by the THREAD_START the shim posts on its
             * first event, can be that event: then its OBJECT_ALLOC comes second. */
            if (smap_del(&requested_ids, (uintptr_t)ev->u.obj_alloc.obj_id, NULL))
                __sync_add_and_fetch(&announced_later, 1);
            else
                VIOLATION("OBJECT_ALLOC of %p: already live", (void *)ev->u.obj_alloc.obj_id);
        }
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        if (!in_gc)
            VIOLATION("OBJECT_FREE outside GC_START/GC_FINISH");
        if (!smap_del(&objects, (uintptr_t)ev->u.obj_free.obj_id, NULL))
            VIOLATION("OBJECT_FREE of %p: not a live object", (void *)ev->u.obj_free.obj_id);
        if (opt_debug)
            smap_put(&freed, (uintptr_t)ev->u.obj_free.obj_id, (uintptr_t)counts[t], NULL);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
    case JVMPI_EVENT_ARENA_DELETE:
        VIOLATION("%s: the shim never moves ids nor deletes its arena", tname(t));
        break;
    case JVMPI_EVENT_ARENA_NEW:
        if (ev->u.new_arena.arena_id != 1 || arena_seen)
            VIOLATION("ARENA_NEW id %d (seen before: %d)", (int)ev->u.new_arena.arena_id, arena_seen);
        arena_seen = 1;
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        method_defined(ev->u.compiled_method_load.method_id, t, 0);
        if (ev->u.compiled_method_load.code_addr == NULL || ev->u.compiled_method_load.code_size <= 0)
            VIOLATION("COMPILED_METHOD_LOAD without code");
        break;
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        method_defined(ev->u.compiled_method_unload.method_id, t, 1);
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK: {
        const unsigned char *d = ev->u.class_load_hook.class_data;
        if (d == NULL || ev->u.class_load_hook.class_data_len < 10 || d[0] != 0xCA || d[1] != 0xFE ||
            d[2] != 0xBA || d[3] != 0xBE)
            VIOLATION("CLASS_LOAD_HOOK without a class file");
        break; /* new_class_data is preset to class_data: the class loads unchanged */
    }
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev, requested);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        object_defined(ev->u.jni_globalref_alloc.obj_id, t, "referent");
        if (smap_put(&jnirefs, (uintptr_t)ev->u.jni_globalref_alloc.ref_id, 1, NULL))
            VIOLATION("%s: reference %p already live", tname(t), (void *)ev->u.jni_globalref_alloc.ref_id);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        /* References made before VMInit, or by the VM without the JNI table, are not seen. */
        if (!smap_del(&jnirefs, (uintptr_t)ev->u.jni_globalref_free.ref_id, NULL))
            __sync_add_and_fetch(&late[0], 1);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        if (ev->u.raw_monitor.id != raw_contended || ev->u.raw_monitor.name == NULL ||
            strcmp(ev->u.raw_monitor.name, "checker_contended") != 0)
            VIOLATION("%s for monitor %p \"%s\": not the one the agent contends on", tname(t),
                      (void *)ev->u.raw_monitor.id, ev->u.raw_monitor.name ? ev->u.raw_monitor.name : "");
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        object_defined(ev->u.monitor.object, t, "lock object");
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        object_defined(ev->u.monitor_wait.object, t, "wait object");
        break;
    case JVMPI_EVENT_GC_START:
        if (in_gc)
            VIOLATION("GC_START inside a GC bracket");
        gc_thread = pthread_self();
        if (handlers_running > 1)
            __sync_add_and_fetch(&gc_overlaps, 1);
        in_gc = 1;
        break;
    case JVMPI_EVENT_GC_FINISH:
        if (!in_gc)
            VIOLATION("GC_FINISH without GC_START");
        if (ev->u.gc_info.used_objects < 0 || ev->u.gc_info.total_object_space <= 0)
            VIOLATION("GC_FINISH used_objects=%lld total=%lld", (long long)ev->u.gc_info.used_objects,
                      (long long)ev->u.gc_info.total_object_space);
        in_gc = 0;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (init_done)
            VIOLATION("JVM_INIT_DONE twice");
        check_pending();
        init_done = 1;
        on_init_done_threads(); /* JVMPI allows CreateSystemThread from here on */
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
    case JVMPI_EVENT_DATA_RESET_REQUEST:
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        break; /* handled after the bookkeeping below */
    default:
        VIOLATION("unexpected event type %s (%d)", tname(t), t);
        break;
    }
    __sync_sub_and_fetch(&handlers_running, 1);
    if (t == JVMPI_EVENT_JVM_SHUT_DOWN) {
        report();
        shut_down = 1;
    }
}

/* JVM_INIT_DONE: every id used during start-up must be defined by now. */
static void check_pending(void)
{
    for (int i = 0; i < NSTRIPE; i++) {
        struct stripe *st = &pending.s[i];
        for (;;) {
            uintptr_t id = 0, t = 0;
            pthread_mutex_lock(&st->mu);
            for (size_t j = 0; j < st->cap && id == 0; j++)
                if (st->keys[j] > TOMB) {
                    id = st->keys[j];
                    t = st->vals[j];
                }
            pthread_mutex_unlock(&st->mu);
            if (id == 0)
                break;
            smap_del(&pending, id, NULL);
            /* HotSpot's own start-up order announced objects before their classes, so a use
             * before JVM_INIT_DONE may precede its definition; but the start-up events must
             * define it by then: an id only a request can explain was never announced. */
            if (smap_get(&objects, id, NULL) || smap_get(&classes, id, NULL))
                __sync_add_and_fetch(&startup_resolved, 1);
            else if (defined_on_request((jobjectID)id))
                VIOLATION("%s before JVM_INIT_DONE named %p, a class mirror no CLASS_LOAD or "
                          "OBJECT_ALLOC had announced by JVM_INIT_DONE", tname((int)t), (void *)id);
            else if (announced_on_request((jobjectID)id, (int)t))
                VIOLATION("%s before JVM_INIT_DONE named %p, a live object no OBJECT_ALLOC had "
                          "announced by JVM_INIT_DONE", tname((int)t), (void *)id);
            else
                VIOLATION("%s before JVM_INIT_DONE named object %p, still not announced at "
                          "JVM_INIT_DONE", tname((int)t), (void *)id);
        }
    }
}

/* ---- system threads ---- */

static JNIEnv *jni_env(void)
{
    JNIEnv *e = NULL;
    (*g_jvm)->GetEnv(g_jvm, (void **)&e, JNI_VERSION_1_2);
    return e;
}

static void sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

/* GetCallTrace of some live thread: every frame's method must be one a CLASS_LOAD listed
 * (the shim announces the classes of a trace before it returns it). */
static volatile long traces_taken, frames_checked;
static void check_a_trace(unsigned pick)
{
    JNIEnv *env = NULL;
    struct stripe *st = &threads.s[pick % NSTRIPE];
    pthread_mutex_lock(&st->mu);
    for (size_t j = 0; j < st->cap && env == NULL; j++)
        if (st->keys[j] > TOMB)
            env = (JNIEnv *)st->keys[j];
    pthread_mutex_unlock(&st->mu);
    if (env == NULL)
        return;
    JVMPI_CallFrame frames[64];
    JVMPI_CallTrace tr = {env, 0, frames};
    jvmpi->GetCallTrace(&tr, 64);
    __sync_add_and_fetch(&traces_taken, 1);
    for (jint i = 0; i < tr.num_frames; i++) {
        uintptr_t cls = 0;
        __sync_add_and_fetch(&frames_checked, 1);
        if (!smap_get(&methods, (uintptr_t)frames[i].method_id, &cls))
            VIOLATION("GetCallTrace frame %d of %p: method %p is in no CLASS_LOAD", (int)i,
                      (void *)env, (void *)frames[i].method_id);
        /* A native does not call itself: the same method twice, native on top, is a wrapper
         * of the shim's shown beside the native it wraps. */
        if (i + 1 < tr.num_frames && frames[i].lineno == -3 &&
            frames[i + 1].method_id == frames[i].method_id)
            VIOLATION("GetCallTrace frames %d and %d of %p: native method %p twice", (int)i,
                      (int)i + 1, (void *)env, (void *)frames[i].method_id);
    }
}

/* Disable one toggled type, wait, enable it again; round robin. */
static void toggler(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !shut_down; i++) {
        int t = toggled[i % NTOGGLED];
        if (!enabled_type[t])
            continue;
        if (jvmpi->DisableEvent(t, NULL) != JVMPI_SUCCESS)
            say("FAIL DisableEvent(%s)", tname(t));
        tog_gen[t]++;
        __sync_synchronize();
        tog_disabled[t] = 1;
        sleep_ms(60);
        tog_disabled[t] = 0;
        __sync_synchronize();
        if (jvmpi->EnableEvent(t, NULL) != JVMPI_SUCCESS)
            say("FAIL EnableEvent(%s)", tname(t));
        __sync_add_and_fetch(&toggles, 1);
        for (unsigned k = 0; k < 8; k++)
            check_a_trace(i * 8 + k);
        sleep_ms(40);
    }
}

/* Two threads contend on one raw monitor: RAW_MONITOR_CONTENDED_* events. */
static void raw_contender(void *arg)
{
    (void)arg;
    while (!shut_down) {
        jvmpi->RawMonitorEnter(raw_contended);
        usleep(300);
        jvmpi->RawMonitorExit(raw_contended);
        usleep(200);
    }
}

/* JNI global and weak global references: JNI_*GLOBALREF_* events. */
static void jniref_maker(void *arg)
{
    (void)arg;
    JNIEnv *jni = jni_env();
    while (!shut_down && jni != NULL) {
        (*jni)->PushLocalFrame(jni, 8);
        jstring s = (*jni)->NewStringUTF(jni, "checker");
        jobject g = (*jni)->NewGlobalRef(jni, s);
        jweak w = (*jni)->NewWeakGlobalRef(jni, s);
        (*jni)->DeleteGlobalRef(jni, g);
        (*jni)->DeleteWeakGlobalRef(jni, w);
        (*jni)->PopLocalFrame(jni, NULL);
        sleep_ms(20);
    }
}

static void on_init_done_threads(void)
{
    raw_contended = jvmpi->RawMonitorCreate("checker_contended");
    const char *n[] = {"checker-toggler", "checker-raw-A", "checker-raw-B", "checker-jniref"};
    void (*f[])(void *) = {toggler, raw_contender, raw_contender, jniref_maker};
    for (int i = 0; i < 4; i++)
        if (jvmpi->CreateSystemThread((char *)n[i], JVMPI_NORMAL_PRIORITY, f[i]) != JNI_OK)
            say("FAIL CreateSystemThread(%s)", n[i]);
}

/* ---- the end ---- */

/* Threads still alive at JVM_SHUT_DOWN whose depth is not 0: named, with why. */
static void report_depths(void)
{
    long sum = 0;
    for (int i = 0; i < NSTRIPE; i++) {
        struct stripe *st = &threads.s[i];
        pthread_mutex_lock(&st->mu);
        for (size_t j = 0; j < st->cap; j++) {
            if (st->keys[j] <= TOMB)
                continue;
            struct trec *r = (struct trec *)st->vals[j];
            sum += r->depth;
            if (r->depth != 0)
                say("depth at JVM_SHUT_DOWN: thread %s depth=%ld min=%ld entries=%ld exits=%ld%s",
                    r->name, r->depth, r->min_depth, r->entries, r->exits,
                    r->pre ? " (running before JVM_INIT_DONE)" : "");
        }
        pthread_mutex_unlock(&st->mu);
    }
    /* Every entry and exit went to some thread's depth: what the live threads hold is what
     * the totals differ by (an entry or exit on no known thread would break this). */
    say("depth of the live threads=%ld entries-exits=%ld", sum,
        counts[JVMPI_EVENT_METHOD_ENTRY] - counts[JVMPI_EVENT_METHOD_EXIT] - ended_depth_sum);
}

static void report(void)
{
    report_depths();
    for (int t = 1; t < NTYPES; t++)
        if (names[t] != NULL && (enabled_type[t] || counts[t] || t == JVMPI_EVENT_INSTRUCTION_START))
            say("count %s checked=%ld late=%ld after_thread_end=%ld unannounced_objects=%ld",
                names[t], counts[t], late[t], after_end[t], unannounced[t]);
    size_t cap;
    size_t no = smap_count(&objects, &cap);
    say("tables objects=%zu (slots %zu) classes=%zu methods=%zu threads=%zu jnirefs=%zu",
        no, cap, smap_count(&classes, NULL), smap_count(&methods, NULL),
        smap_count(&threads, NULL), smap_count(&jnirefs, NULL));
    say("GetCallTrace traces=%ld frames checked=%ld", traces_taken, frames_checked);
    say("toggles=%ld gc_overlaps=%ld unmatched_ref_frees=%ld pre_threads_nonzero_depth=%ld",
        toggles, gc_overlaps, late[0], pre_threads_nonzero);
    say("ids the agent requested that the real OBJECT_ALLOC or CLASS_LOAD announced afterwards=%ld "
        "(own Thread objects named by a thread's first event=%ld)", announced_later,
        own_thread_objects);
    say("start-up ids used before their announcement=%ld (all announced by JVM_INIT_DONE: %ld); "
        "class mirrors used as objects before any CLASS_LOAD, defined on request: array "
        "classes=%ld other classes=%ld", startup_deferred, startup_resolved, array_mirrors,
        class_mirrors);
    say("violations=%ld", violations);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    opt_debug = options != NULL && strstr(options, "debug") != NULL;
    int no_entry2 = options != NULL && strstr(options, "noentry2") != NULL; /* measurements */
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    smap_init(&objects);
    smap_init(&classes);
    smap_init(&methods);
    smap_init(&threads);
    smap_init(&jnirefs);
    smap_init(&freed);
    smap_init(&class_names);
    smap_init(&pending);
    smap_init(&requested_ids);

    jvmpi->NotifyEvent = notify;
    int n = 0;
    /* The defining events first: an id is promised to be defined before use only while its
     * defining event is enabled. */
    static const int first[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_CLASS_LOAD,
                                JVMPI_EVENT_ARENA_NEW, JVMPI_EVENT_OBJECT_ALLOC};
    int order[NTYPES], no = 0;
    for (int i = 0; i < 4; i++)
        order[no++] = first[i];
    for (int t = 1; t < NTYPES; t++)
        if (t != first[0] && t != first[1] && t != first[2] && t != first[3])
            order[no++] = t;
    for (int i = 0; i < no; i++) {
        int t = order[i];
        if (names[t] == NULL || t == JVMPI_EVENT_INSTRUCTION_START || t == JVMPI_EVENT_HEAP_DUMP ||
            (no_entry2 && t == JVMPI_EVENT_METHOD_ENTRY2) ||
            t == JVMPI_EVENT_OBJECT_DUMP || t == JVMPI_EVENT_MONITOR_DUMP)
            continue;
        enabled_type[t] = 1; /* before: its first event may come at once */
        jint rc = jvmpi->EnableEvent(t, NULL);
        if (rc != JVMPI_SUCCESS) {
            enabled_type[t] = 0;
            say("FAIL EnableEvent(%s) rc=%d", names[t], (int)rc);
        } else {
            n++;
        }
    }
    say("JVM_OnLoad enabled %d event types", n);
    return JNI_OK;
}
