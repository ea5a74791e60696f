/* methods.c — posting METHOD_ENTRY / METHOD_ENTRY2 / METHOD_EXIT and INSTRUCTION_START,
 * COMPILED_METHOD_LOAD / UNLOAD, and the start-up of the methods area.
 *
 * Method events come from one of two sources, chosen at start-up (methods_module_init):
 * the probes of rewritten classes (bci.c: methods=bci, the default, where the JVM can
 * retransform), or JVMTI MethodEntry / MethodExit (the callbacks here), which fire on the
 * executing thread for every method including native ones but keep the thread interpreted
 * (docs/performance.md has the measured cost). Both post through this file: ENTRY2 (with
 * the receiver's id, NULL for static methods) before ENTRY when both are enabled, as
 * HotSpot did; exits balance entries per thread, a frame popped by an exception included.
 * A rewritten constructor's entry events wait until its receiver can be named (below).
 *
 * COMPILED_METHOD_LOAD comes from JVMTI CompiledMethodLoad: code address and size, and a
 * line table built from the address-location map (offsets from code_begin, line of the
 * outermost method's bci: inlined code is attributed to the caller's line, as HotSpot did).
 * Enabling it replays methods compiled earlier (GenerateEvents). COMPILED_METHOD_UNLOAD
 * carries the method id, and also the code address in the slot where COMPILED_METHOD_LOAD
 * kept it, for agents that read it there.
 *
 * Before any of these events the method's class is announced (definition before use); a
 * small per-method cache (methods_lock, leaf) remembers which methods have been.
 *
 * One COMPILED_METHOD_LOAD per compiled body and agent: JVMTI posts CompiledMethodLoad to
 * every environment when any environment calls GenerateEvents (measured on JDK 17 and 25),
 * so another JVMTI agent's replay, or the shim's own for an agent that enables the event
 * late, would repeat bodies an agent already has. A table of the bodies posted, keyed by
 * (jmethodID, code address), with one bit per instance (bodies_lock, leaf), drops the
 * repeats; CompiledMethodUnload removes the body.
 *
 * The module init also registers methods/ with the layers below it, which ask through
 * upcalls: threads/ for the stack snapshots it keeps with held events (calltrace.c),
 * classes/ for the probe class it hides, and the switchboard for the flush of deferred
 * constructor entries.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "events/events.h"
#include "memory/memory.h"
#include "methods/bci.h"
#include "methods/calltrace.h"
#include "methods/methods.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct method_rec {
    jmethodID method;       /* key */
    bool is_static;
    bool plumbing;          /* the JDK's virtual-thread plumbing (threads/vthreads.c) */
    uint32_t announced;     /* instances for which the class went out */
    UT_hash_handle hh;
};

static struct method_rec *methods;
static pthread_rwlock_t methods_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Per-thread direct-mapped cache in front of the table: method events are the hottest
 * path and must not share a lock's cache line. Records are never freed, so a cached
 * pointer stays valid. */
#define MCACHE 256
static _Thread_local struct method_rec **tl_mcache; /* MCACHE slots (shim_thread_block) */

static inline unsigned mslot(jmethodID m)
{
    return (unsigned)(((uintptr_t)m >> 3) * 2654435761u) % MCACHE;
}

static struct method_rec *method_rec_slow(JNIEnv *jni, jmethodID m);

/* Is m a method of the JDK's virtual-thread plumbing? JVMTI method events only: with
 * methods=bci those classes are not rewritten (bci.c). */
static bool method_is_plumbing(jmethodID m)
{
    jclass c = NULL;
    char *sig = NULL;
    bool yes = false;
    if (jvmti_ok_at((*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, m, &c), LOG_DEBUG,
                    "GetMethodDeclaringClass: is the method virtual-thread plumbing?") &&
        jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, c, &sig, NULL), LOG_DEBUG,
                    "GetClassSignature: is the method virtual-thread plumbing?") &&
        sig[0] == 'L') {
        size_t n = strlen(sig);
        sig[n - 1] = '\0'; /* "Ljava/lang/VirtualThread;" -> "java/lang/VirtualThread" */
        yes = vthreads_plumbing_class(sig + 1);
    }
    jvmti_free(g_shim.jvmti, sig);
    JNIEnv *jni = shim_current_jni();
    if (c != NULL && jni != NULL)
        (*jni)->DeleteLocalRef(jni, c);
    return yes;
}

static inline struct method_rec *method_rec(JNIEnv *jni, jmethodID m)
{
    struct method_rec **c = tl_mcache;
    if (__builtin_expect(c == NULL, 0) &&
        (c = tl_mcache = shim_thread_block(&tl_mcache, MCACHE * sizeof *c)) == NULL)
        return method_rec_slow(jni, m);
    struct method_rec *r = c[mslot(m)];
    if (r != NULL && r->method == m)
        return r;
    r = method_rec_slow(jni, m);
    if (r != NULL)
        c[mslot(m)] = r;
    return r;
}

static struct method_rec *method_rec_slow(JNIEnv *jni, jmethodID m)
{
    struct method_rec *r;
    pthread_rwlock_rdlock(&methods_lock);
    HASH_FIND_PTR(methods, &m, r);
    pthread_rwlock_unlock(&methods_lock);
    if (r != NULL)
        return r;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->method = m;
    classes_note_methods(&m, 1);
    jint mods = 0;
    jvmti_ignore((*g_shim.jvmti)->GetMethodModifiers(g_shim.jvmti, m, &mods),
                 "GetMethodModifiers: the method is then taken as an instance method");
    r->is_static = (mods & 0x0008) != 0;
    r->plumbing = vthreads_on() && !bci_available() && method_is_plumbing(m);
    if (jni != NULL && events_any(JVMPI_EVENT_CLASS_LOAD)) {
        classes_method_announced(jni, m);
        r->announced = g_shim.ninst == 1;
    }
    struct method_rec *old;
    pthread_rwlock_wrlock(&methods_lock);
    HASH_FIND_PTR(methods, &m, old);
    if (old == NULL)
        HASH_ADD_PTR(methods, method, r);
    pthread_rwlock_unlock(&methods_lock);
    if (old != NULL) {
        free(r);
        r = old;
    }
    return r;
}

/* Make sure the class of m went out to agents that enabled CLASS_LOAD. */
static struct method_rec *method_announced(JNIEnv *jni, jmethodID m)
{
    struct method_rec *r = method_rec(jni, m);
    if (r != NULL && !r->announced && jni != NULL && events_any(JVMPI_EVENT_CLASS_LOAD)) {
        classes_method_announced(jni, m);
        /* With several agents, one may enable CLASS_LOAD later: ask every time then
         * (classes_method_announced is cheap once a class went out to everyone). */
        r->announced = g_shim.ninst == 1;
    }
    return r;
}

/* To every instance that enabled the event; with snap, GetCallTrace in the handler answers
 * from it (calltrace.h). */
static void post_all(const JVMPI_Event *ev, const struct calltrace_snap *snap)
{
    if (snap == NULL) {
        event_post_all(ev);
        return;
    }
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (!event_on(inst, t))
            continue;
        JVMPI_Event copy = *ev;
        event_post_held(inst, &copy, snap);
    }
}

static void post_entry(JNIEnv *jni, jmethodID m, jobject self, bool have_self, jint local_depth,
                       const struct calltrace_snap *snap);

void methods_post_entry(JNIEnv *jni, jmethodID m, jobject self, bool have_self, jint local_depth)
{
    post_entry(jni, m, self, have_self, local_depth, NULL);
}

static void post_entry(JNIEnv *jni, jmethodID m, jobject self, bool have_self, jint local_depth,
                       const struct calltrace_snap *snap)
{
    /* The probes and callbacks serve entries and exits alike: nothing to do (nor to
     * announce) for an entry no agent wants. */
    bool e2 = events_any(JVMPI_EVENT_METHOD_ENTRY2), e1 = events_any(JVMPI_EVENT_METHOD_ENTRY);
    if (!e1 && !e2)
        return;
    struct method_rec *r = method_announced(jni, m);
    JVMPI_Event ev;
    if (e2) {
        jobjectID recv = NULL;
        jobject got = NULL;
        int hand = ids_hand_open(); /* the receiver is at hand for requests from the handler */
        if (!have_self && r != NULL && !r->is_static &&
            jvmti_ok_at((*g_shim.jvmti)->GetLocalInstance(g_shim.jvmti, NULL, local_depth, &got),
                        LOG_DEBUG, "GetLocalInstance for METHOD_ENTRY2's receiver"))
            self = got;
        if (self != NULL && r != NULL && !r->is_static)
            recv = memory_id_announced(jni, self);
        event_init(&ev, JVMPI_EVENT_METHOD_ENTRY2, jni);
        ev.u.method_entry2.method_id = m;
        ev.u.method_entry2.obj_id = recv;
        post_all(&ev, snap);
        ids_hand_close(hand);
        if (got != NULL)
            (*jni)->DeleteLocalRef(jni, got);
    }
    if (e1) {
        event_init(&ev, JVMPI_EVENT_METHOD_ENTRY, jni);
        ev.u.method.method_id = m;
        post_all(&ev, snap);
    }
}

/* ---- constructors: METHOD_ENTRY2 when `this` can be named ----
 *
 * Before its super(...)/this(...) call a constructor's `this` is uninitialized: the
 * verifier lets no probe pass it, and JVMTI GetLocalInstance, which can read it, is a VM
 * operation that stops every thread (a safepoint per call on JDK 17 and 25, measured). So
 * the entry events of a constructor wait on a per-thread stack, in groups: one group per
 * object, since a constructor entered right after a superCall probe continues the chain of
 * the one below it. The probe after the innermost super(...)/this(...) returns (or
 * Object.<init>'s entry, whose `this` is initialized) names the object of the top group and
 * posts the stack, bottom first. Anything else posted on the thread meanwhile (a method
 * called to compute super's arguments, an allocation, a throw) posts the stack first, with
 * each waiting entry's receiver read from its frame (ctor_receivers_from_frames). Pending
 * entries belong to
 * frames still on the stack, consecutive from the top except for frames without probes, so
 * the frames are found by method, from the top. */
#define CTOR_PENDING_MAX 64
struct ctor_pending {
    jmethodID method;
    uint32_t group;
};
static _Thread_local struct ctor_pending *tl_ctor; /* CTOR_PENDING_MAX (shim_thread_block) */
static _Thread_local uint32_t tl_ctor_group;   /* groups handed out on this thread */
static _Thread_local bool tl_super_call;       /* a superCall probe ran, no entry since */

/* The receivers of pending[0..n) whose recv[] is still NULL, from their frames. Frames are
 * matched from the top: the last pending entry is the shallowest frame of its method. */
static void ctor_receivers_from_frames(const struct ctor_pending *p, int n, jobject *recv)
{
    enum { MAXF = 512 };
    jvmtiFrameInfo frames[MAXF];
    jint count = 0;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetStackTrace(g_shim.jvmti, NULL, 0, MAXF, frames, &count),
                     LOG_WARN, "reading the stack for the receivers of constructors' METHOD_ENTRY2"))
        return;
    int j = n - 1;
    for (jint d = 0; d < count && j >= 0; d++) {
        if (frames[d].method != p[j].method)
            continue;
        if (recv[j] == NULL) {
            if (log_level_now >= LOG_DEBUG) {
                char *mn = NULL, *cn = NULL;
                jclass dc = NULL;
                jvmti_ignore((*g_shim.jvmti)->GetMethodName(g_shim.jvmti, p[j].method, &mn,
                                                            NULL, NULL),
                             "GetMethodName for a debug line: the name is then \"?\"");
                jvmti_ignore((*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, p[j].method,
                                                                      &dc),
                             "GetMethodDeclaringClass for a debug line: the class is then \"?\"");
                if (dc != NULL)
                    jvmti_ignore((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, dc, &cn, NULL),
                                 "GetClassSignature for a debug line: the class is then \"?\"");
                log_debug("METHOD_ENTRY2 of %s.%s: receiver read from its frame (an event came "
                          "before its super(...) call)", cn ? cn : "?", mn ? mn : "?");
                jvmti_free(g_shim.jvmti, mn);
                jvmti_free(g_shim.jvmti, cn);
            }
            jobject o = NULL;
            if (jvmti_ok_at((*g_shim.jvmti)->GetLocalInstance(g_shim.jvmti, NULL, d, &o),
                            LOG_DEBUG, "GetLocalInstance for a constructor's receiver"))
                recv[j] = o;
        }
        j--;
    }
}

/* Post every pending entry, bottom first; the top group's receiver is top_self if given. */
static void ctor_flush(JNIEnv *jni, jobject top_self)
{
    int n = events_deferred_n;
    events_deferred_n = 0; /* what is posted below must not come here again */
    tl_super_call = false;
    if (n <= 0 || jni == NULL)
        return;
    struct ctor_pending p[CTOR_PENDING_MAX];
    memcpy(p, tl_ctor, sizeof *p * (size_t)n);
    jobject recv[CTOR_PENDING_MAX] = {0};
    jobject mine[CTOR_PENDING_MAX] = {0}; /* local refs made here */
    bool missing = false;
    for (int i = 0; i < n; i++) {
        if (top_self != NULL && p[i].group == p[n - 1].group)
            recv[i] = top_self;
        else
            missing = true;
    }
    if (missing) {
        ctor_receivers_from_frames(p, n, recv);
        for (int i = 0; i < n; i++)
            if (recv[i] != top_self)
                mine[i] = recv[i];
    }
    /* Each handler that traces its stack sees it from its constructor's frame down, as at
     * that constructor's entry, not the constructors it has called since. */
    for (int i = 0; i < n; i++) {
        struct calltrace_snap at = {0, NULL, p[i].method};
        post_entry(jni, p[i].method, recv[i], true, 0, &at);
    }
    for (int i = 0; i < n; i++)
        if (mine[i] != NULL)
            (*jni)->DeleteLocalRef(jni, mine[i]);
}

/* events.c: another event is about to be posted on this thread. */
static void ctor_flush_before_other(void)
{
    ctor_flush(shim_current_jni(), NULL);
}

void methods_ctor_enter(JNIEnv *jni, jmethodID m)
{
    if (!events_any(JVMPI_EVENT_METHOD_ENTRY2)) {
        tl_super_call = false;
        methods_post_entry(jni, m, NULL, false, 1); /* ENTRY only: no receiver needed */
        return;
    }
    if (events_deferred_n >= CTOR_PENDING_MAX)
        ctor_flush(jni, NULL); /* a chain deeper than the stack: read from the frames */
    if (__builtin_expect(tl_ctor == NULL, 0) &&
        (tl_ctor = shim_thread_block(&tl_ctor, CTOR_PENDING_MAX * sizeof *tl_ctor)) == NULL) {
        /* No stack to wait on: the receiver comes from the frame now. */
        struct ctor_pending one = {m, 0};
        jobject recv = NULL;
        tl_super_call = false;
        ctor_receivers_from_frames(&one, 1, &recv);
        struct calltrace_snap at = {0, NULL, m};
        post_entry(jni, m, recv, true, 0, &at);
        if (recv != NULL)
            (*jni)->DeleteLocalRef(jni, recv);
        return;
    }
    int n = events_deferred_n;
    uint32_t g = tl_super_call && n > 0 ? tl_ctor[n - 1].group : ++tl_ctor_group;
    tl_super_call = false;
    tl_ctor[n].method = m;
    tl_ctor[n].group = g;
    events_deferred_n = n + 1;
}

void methods_ctor_super_call(void)
{
    tl_super_call = true;
}

bool methods_ctor_super_called(void)
{
    return tl_super_call;
}

void methods_ctor_ready(JNIEnv *jni, jobject self)
{
    if (events_deferred_n == 0) {
        tl_super_call = false;
        return;
    }
    ctor_flush(jni, self);
}

void methods_post_exit(JNIEnv *jni, jmethodID m)
{
    if (!events_any(JVMPI_EVENT_METHOD_EXIT))
        return; /* an exit probe while only entries are wanted */
    method_announced(jni, m);
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_METHOD_EXIT, jni);
    ev.u.method.method_id = m;
    event_post_all(&ev);
}

void methods_post_instruction(JNIEnv *jni, jmethodID m, JVMPI_Event *ev)
{
    method_announced(jni, m);
    event_post_all(ev);
}

static void JNICALL cb_method_entry(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID m)
{
    (void)jvmti; (void)thread;
    if (shim_quiet() || shim_own_java())
        return;
    if (vthreads_on()) {
        struct method_rec *r = method_rec(jni, m);
        if (r != NULL && r->plumbing)
            return;
    }
    /* Inside a JVMTI callback the method's own frame is at depth 0. */
    methods_post_entry(jni, m, NULL, false, 0);
}

static void JNICALL cb_method_exit(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID m,
                                   jboolean by_exception, jvalue rv)
{
    (void)jvmti; (void)thread; (void)by_exception; (void)rv;
    if (shim_quiet() || shim_own_java())
        return;
    if (vthreads_on()) {
        struct method_rec *r = method_rec(jni, m);
        if (r != NULL && r->plumbing)
            return;
    }
    methods_post_exit(jni, m);
}

/* ---- compiled methods ---- */

struct body_key {
    jmethodID m;
    const void *addr;
};
struct body {
    struct body_key k;
    uint32_t posted;                /* instances that had its COMPILED_METHOD_LOAD */
    UT_hash_handle hh;
};
static struct body *bodies;
static pthread_mutex_t bodies_lock = PTHREAD_MUTEX_INITIALIZER;

/* The instances among want that have not had this body yet; they are marked as having it. */
static uint32_t body_claim(jmethodID m, const void *addr, uint32_t want)
{
    struct body_key k;
    memset(&k, 0, sizeof k);
    k.m = m;
    k.addr = addr;
    pthread_mutex_lock(&bodies_lock);
    struct body *b = NULL;
    HASH_FIND(hh, bodies, &k, sizeof k, b);
    if (b == NULL && (b = calloc(1, sizeof *b)) != NULL) {
        b->k = k;
        HASH_ADD(hh, bodies, k, sizeof k, b);
    }
    uint32_t out = b != NULL ? want & ~b->posted : want;
    if (b != NULL)
        b->posted |= out;
    pthread_mutex_unlock(&bodies_lock);
    return out;
}

static void body_drop(jmethodID m, const void *addr)
{
    struct body_key k;
    memset(&k, 0, sizeof k);
    k.m = m;
    k.addr = addr;
    pthread_mutex_lock(&bodies_lock);
    struct body *b = NULL;
    HASH_FIND(hh, bodies, &k, sizeof k, b);
    if (b != NULL) {
        HASH_DEL(bodies, b);
        free(b);
    }
    pthread_mutex_unlock(&bodies_lock);
}

static void JNICALL cb_compiled_load(jvmtiEnv *jvmti, jmethodID m, jint code_size,
                                     const void *code_addr, jint map_length,
                                     const jvmtiAddrLocationMap *map, const void *compile_info)
{
    /* The probe class's natives are the shim's: HotSpot had no such methods. */
    if (shim_quiet() || bci_is_hook_method(m))
        return;
    (void)jvmti; (void)compile_info;
    uint32_t want = 0;
    for (int i = 0; i < g_shim.ninst; i++)
        if (event_on(&g_shim.inst[i], JVMPI_EVENT_COMPILED_METHOD_LOAD))
            want |= 1u << i;
    if (want == 0 || (want = body_claim(m, code_addr, want)) == 0)
        return; /* every agent that listens has this body already */
    JNIEnv *jni = shim_current_jni();
    jmethodID id = calltrace_current_version(m);
    method_announced(jni, id);
    JVMPI_Lineno *lines = NULL;
    jint n = 0;
    if (map_length > 0 && map != NULL) {
        lines = malloc(sizeof *lines * (size_t)map_length);
        for (jint i = 0; lines != NULL && i < map_length; i++) {
            if (map[i].location < 0)
                continue;
            jint line = calltrace_line(m, map[i].location);
            if (line < 0)
                continue; /* only entries with a known line (HotSpot left garbage here) */
            lines[n].offset = (jint)((const char *)map[i].start_address - (const char *)code_addr);
            lines[n].lineno = line;
            n++;
        }
    }
    for (int i = 0; i < g_shim.ninst; i++) {
        if (!(want & (1u << i)))
            continue;
        JVMPI_Event ev; /* each agent its own copy */
        event_init(&ev, JVMPI_EVENT_COMPILED_METHOD_LOAD, jni);
        ev.u.compiled_method_load.method_id = id; /* the lines above are the compiled version's */
        ev.u.compiled_method_load.code_addr = (void *)code_addr;
        ev.u.compiled_method_load.code_size = code_size;
        ev.u.compiled_method_load.lineno_table_size = n;
        ev.u.compiled_method_load.lineno_table = n ? lines : NULL;
        event_post(&g_shim.inst[i], &ev);
    }
    free(lines);
}

static void JNICALL cb_compiled_unload(jvmtiEnv *jvmti, jmethodID m, const void *code_addr)
{
    if (shim_quiet())
        return;
    (void)jvmti;
    body_drop(m, code_addr); /* the address may hold another body of it later */
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_COMPILED_METHOD_UNLOAD, shim_current_jni());
    ev.u.compiled_method_unload.method_id = calltrace_current_version(m);
    /* Where COMPILED_METHOD_LOAD had code_addr: some agents read it at unload. */
    ev.u.compiled_method_load.code_addr = (void *)code_addr;
    event_post_all(&ev);
}

void methods_replay(JNIEnv *jni)
{
    (void)jni;
    if (!events_any(JVMPI_EVENT_COMPILED_METHOD_LOAD))
        return;
    jvmti_ok_at((*g_shim.jvmti)->GenerateEvents(g_shim.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD),
                LOG_WARN, "GenerateEvents(CompiledMethodLoad) to replay compiled methods");
}

static void compiled_load_changed(int t, bool any)
{
    (void)t;
    /* Enabled in JVM_OnLoad: replayed with the rest of the start-up world instead. */
    if (!any || atomic_load(&g_shim.phase) < PHASE_LIVE)
        return;
    /* Methods compiled before: replay them, so a JIT-symbol agent misses nothing. The JVMTI
     * event must be on first; jvmpi_EnableEvent (events/events.c, sync_jvmti) switches it after this hook, so do it here. */
    jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                          JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL),
                LOG_DEBUG, "SetEventNotificationMode(CompiledMethodLoad) before its replay");
    jvmti_ok_at((*g_shim.jvmti)->GenerateEvents(g_shim.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD),
                LOG_WARN, "GenerateEvents(CompiledMethodLoad) to replay compiled methods");
}

static void methods_module_init_jvmti(void);
static void compiled_module_init(void);

/* Bytecode instrumentation: the probes follow the event mask (bci.c). */
static void probes_changed(int t, bool any)
{
    (void)t; (void)any;
    bci_update();
}

void methods_module_init(void)
{
    threads_set_snapshots(calltrace_snap_keep, calltrace_snap_free);
    classes_set_probe_class(bci_hook_class);
    classes_set_on_unload(calltrace_invalidate);
    events_set_deferred_flush(ctor_flush_before_other);
    if (bci_available()) {
        struct event_row probe = {.kind = EVK_ON, .on_change = probes_changed};
        events_register(JVMPI_EVENT_METHOD_ENTRY, &probe);
        events_register(JVMPI_EVENT_METHOD_ENTRY2, &probe);
        events_register(JVMPI_EVENT_METHOD_EXIT, &probe);
        events_register(JVMPI_EVENT_INSTRUCTION_START, &probe);
    } else {
        methods_module_init_jvmti();
        events_set_unavailable(JVMPI_EVENT_INSTRUCTION_START,
                               "because class rewriting is off (methods=jvmti) or failed on "
                               "this JVM, and exact branch outcomes need it");
    }
    compiled_module_init();
}

/* Without class rewriting: JVMTI method events, which keep threads interpreted. */
static void methods_module_init_jvmti(void)
{
    struct event_row entry = {.kind = EVK_ON, .jvmti = {JVMTI_EVENT_METHOD_ENTRY}};
    struct event_row exitr = {.kind = EVK_ON, .jvmti = {JVMTI_EVENT_METHOD_EXIT}};
    if (!g_shim.caps.can_generate_method_entry_events) {
        entry.kind = EVK_UNAVAILABLE;
        entry.why = "because the JVM refused the method-entry capability";
    }
    if (!g_shim.caps.can_generate_method_exit_events) {
        exitr.kind = EVK_UNAVAILABLE;
        exitr.why = "because the JVM refused the method-exit capability";
    }
    events_register(JVMPI_EVENT_METHOD_ENTRY, &entry);
    events_register(JVMPI_EVENT_METHOD_ENTRY2, &entry);
    if (!g_shim.caps.can_access_local_variables)
        events_set_unavailable(JVMPI_EVENT_METHOD_ENTRY2,
                               "because the JVM refused local-variable access (receivers)");
    events_register(JVMPI_EVENT_METHOD_EXIT, &exitr);
}

static void compiled_module_init(void)
{
    struct event_row load = {.kind = EVK_ON,
                             .jvmti = {JVMTI_EVENT_COMPILED_METHOD_LOAD},
                             .on_change = compiled_load_changed};
    struct event_row unload = {.kind = EVK_ON, .jvmti = {JVMTI_EVENT_COMPILED_METHOD_UNLOAD}};
    if (!g_shim.caps.can_generate_compiled_method_load_events) {
        load.kind = unload.kind = EVK_UNAVAILABLE;
        load.why = unload.why = "because the JVM refused the compiled-method capability";
    }
    events_register(JVMPI_EVENT_COMPILED_METHOD_LOAD, &load);
    events_register(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, &unload);
}

void methods_module_callbacks(jvmtiEventCallbacks *cb)
{
    cb->MethodEntry = cb_method_entry;
    cb->MethodExit = cb_method_exit;
    cb->CompiledMethodLoad = cb_compiled_load;
    cb->CompiledMethodUnload = cb_compiled_unload;
}
