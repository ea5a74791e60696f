/* threads.c — the thread registry (JNIEnv* <-> java.lang.Thread), thread-local storage,
 * thread CPU time and CreateSystemThread.
 *
 * JVMPI names a thread by its JNIEnv*, constant for the thread's life. JVMTI hands a
 * thread's JNIEnv only to callbacks running on that thread, yet the shim must name threads
 * that existed before the agent (Reference Handler, Finalizer, Signal Dispatcher, ...). The
 * JVM itself maps a java.lang.Thread to its native thread through the field Thread.eetop
 * (the JavaThread*), and a JavaThread holds its JNIEnv at a fixed offset. The shim measures
 * that offset on the VMInit thread (its JNIEnv minus its eetop), applies it to the threads
 * that already exist, and checks it against the JNIEnv every ThreadStart callback brings;
 * if a check ever fails, the mapping is no longer used and a warning says so.
 *
 * Records are keyed by JNIEnv* (uthash under reg_lock) and refcounted, so a lookup from
 * another thread never uses a record freed by ThreadEnd. The calling thread's own record is
 * cached in a thread-local pointer: TLS get/set on the current thread take no lock. A
 * virtual thread's record is keyed by its own env_id and reached, while it is mounted, from
 * its carrier's thread-local shim_vthread_env (vthreads.c).
 *
 * THREAD_START and THREAD_END are posted here too, with definition before use: an event
 * that names a thread the agent has not heard of first announces it, and a thread attaching
 * through JNI, whose Thread object is still being built, has its events held until its
 * THREAD_START can name it.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"
#include "threads/cputime.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

/* Registered by the areas above threads/ at start-up (threads.h). */
static struct calltrace_snap *(*up_snap_take)(const struct calltrace_snap *at);
static void (*up_snap_free)(struct calltrace_snap *s);
static void (*up_owner_ending)(JNIEnv *env);

void threads_set_snapshots(struct calltrace_snap *(*take)(const struct calltrace_snap *at),
                           void (*release)(struct calltrace_snap *s))
{
    up_snap_take = take;
    up_snap_free = release;
}

void threads_set_owner_ending(void (*fn)(JNIEnv *env))
{
    up_owner_ending = fn;
}

static struct thread_rec *by_env;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct thread_rec *tl_self;
static _Thread_local bool tl_ended; /* ThreadEnd came for this thread: it has no id any more */
static char ended_mark; /* its address, in JVMTI thread-local storage: "ThreadEnd came" */

static void announce(JNIEnv *jni, struct thread_rec *r, jint type_flags);
static void post_thread_end(JNIEnv *jni, struct thread_rec *r);
static void flush_held(void);
static void threads_announce_self_now(JNIEnv *env);
static void announce_worker(JNIEnv *env);
/* Events held back while the thread's Thread object is built (see threads_hold_event). */
#define HELD_MAX 65536
struct held {
    struct instance *inst;
    JVMPI_Event ev;
    struct calltrace_snap *trace;   /* the stack the event happened at (methods/ made it) */
};
static _Thread_local struct held *tl_held;
static _Thread_local size_t tl_held_n, tl_held_cap;
static bool hidden_thread(JNIEnv *jni, struct thread_rec *r);

static jfieldID fid_eetop;
static jfieldID fid_name;   /* Thread.name, if this JVM has it (a thread being attached) */
static intptr_t env_offset;
static _Atomic bool offset_ok;

static void rec_free(JNIEnv *jni, struct thread_rec *r)
{
    if (jni != NULL) {
        if (r->ref != NULL)
            (*jni)->DeleteGlobalRef(jni, r->ref);
        if (r->wait_obj != NULL)
            (*jni)->DeleteGlobalRef(jni, r->wait_obj);
    }
    pthread_mutex_destroy(&r->wait_lock);
    free(r->group_name);
    free(r->parent_name);
    if (r->jni_table != NULL)
        vthreads_record_freed();
    free(r);
}

struct thread_rec *threads_acquire(JNIEnv *env)
{
    if (env == NULL)
        return NULL;
    struct thread_rec *r = tl_self;
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL && vt == env)
        r = vthreads_rec(vt); /* mounted here: it cannot end meanwhile */
    if (r != NULL && r->env == env) {
        atomic_fetch_add(&r->refs, 1);
        return r;
    }
    pthread_mutex_lock(&reg_lock);
    HASH_FIND_PTR(by_env, &env, r);
    if (r != NULL)
        atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&reg_lock);
    return r;
}

void threads_release(struct thread_rec *r)
{
    if (r != NULL && atomic_fetch_sub(&r->refs, 1) == 1)
        rec_free(shim_current_jni(), r);
}

/* Insert a record for (env, thread) unless one exists. Returns the record, acquired. */
static struct thread_rec *rec_insert(JNIEnv *jni, JNIEnv *env, jthread t, bool *created)
{
    struct thread_rec *r;
    *created = false;
    pthread_mutex_lock(&reg_lock);
    HASH_FIND_PTR(by_env, &env, r);
    if (r != NULL) {
        atomic_fetch_add(&r->refs, 1);
        pthread_mutex_unlock(&reg_lock);
        return r;
    }
    pthread_mutex_unlock(&reg_lock);

    /* Global ref made outside the lock (a JNI call); then insert, re-checking. */
    struct thread_rec *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->env = env;
    pthread_mutex_init(&n->wait_lock, NULL);
    n->ref = t ? (*jni)->NewGlobalRef(jni, t) : NULL;
    atomic_store(&n->refs, 2); /* the registry's and the caller's */
    pthread_mutex_lock(&reg_lock);
    HASH_FIND_PTR(by_env, &env, r);
    if (r == NULL) {
        HASH_ADD_PTR(by_env, env, n);
        r = n;
        n = NULL;
        *created = true;
    } else {
        atomic_fetch_add(&r->refs, 1);
    }
    pthread_mutex_unlock(&reg_lock);
    if (n != NULL)
        rec_free(jni, n);
    return r;
}

void threads_add(struct thread_rec *r)
{
    pthread_mutex_lock(&reg_lock);
    HASH_ADD_PTR(by_env, env, r);
    pthread_mutex_unlock(&reg_lock);
}

static void rec_remove(struct thread_rec *r)
{
    bool was_in = false;
    pthread_mutex_lock(&reg_lock);
    struct thread_rec *cur;
    HASH_FIND_PTR(by_env, &r->env, cur);
    if (cur == r) {
        HASH_DEL(by_env, r);
        r->ended = true;
        was_in = true;
    }
    pthread_mutex_unlock(&reg_lock);
    if (was_in)
        threads_release(r); /* the registry's reference */
}

static JNIEnv *env_from_eetop(JNIEnv *jni, jthread t)
{
    if (!atomic_load(&offset_ok) || t == NULL)
        return NULL;
    jlong eetop = (*jni)->GetLongField(jni, t, fid_eetop);
    if (eetop == 0)
        return NULL; /* not started, or terminated */
    return (JNIEnv *)(intptr_t)((intptr_t)eetop + env_offset);
}

JNIEnv *threads_env_of(JNIEnv *jni, jthread t)
{
    JNIEnv *env = env_from_eetop(jni, t);
    if (env != NULL || t == NULL || !vthreads_on())
        return env;
    /* A virtual thread (no eetop): its record is in its JVMTI thread-local storage, where a
     * platform thread has nothing or the mark ThreadEnd left (vthreads.c). */
    void *p = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadLocalStorage(g_shim.jvmti, t, &p), LOG_DEBUG,
                     "GetThreadLocalStorage of a thread without eetop (no id)") ||
        p == NULL || p == &ended_mark)
        return NULL;
    return (JNIEnv *)((char *)p + offsetof(struct thread_rec, jni_table));
}

/* After its ThreadEnd a native thread may detach and attach again: the launcher's main
 * thread comes back as DestroyJavaVM, with its JNIEnv often at the same address, and on
 * JDK 25 runs Java code before that thread's ThreadStart. That is a new Java thread; its
 * JVMTI thread-local storage no longer holds the mark ThreadEnd left. */
static bool reattached(void)
{
    void *mark = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadLocalStorage(g_shim.jvmti, NULL, &mark),
                     LOG_DEBUG, "GetThreadLocalStorage after ThreadEnd (taken as not back)") ||
        mark == &ended_mark)
        return false;
    tl_ended = false;
    return true;
}

/* The current thread's record, made on first use (a thread attached through JNI, or
 * main before its ThreadStart arrives). */
struct thread_rec *threads_self(void)
{
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL)
        return vthreads_rec(vt);
    if (tl_self != NULL)
        return tl_self;
    if (tl_ended && !reattached())
        return NULL;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return NULL;
    jthread t = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetCurrentThread(g_shim.jvmti, &t),
                 "GetCurrentThread: the record is made without its Thread object");
    bool created;
    struct thread_rec *r = rec_insert(jni, jni, t, &created);
    if (t != NULL)
        (*jni)->DeleteLocalRef(jni, t);
    if (r != NULL) {
        tl_self = r;
        threads_release(r); /* tl_self borrows the registry's reference */
    }
    return r;
}

/* JVMTI ThreadStart, on the new thread: its record, and its THREAD_START. */
static void threads_on_start(JNIEnv *jni, jthread t)
{
    shim_set_current_jni(jni);
    tl_ended = false;
    /* Check the eetop mapping against the truth this callback brings. */
    JNIEnv *calc = env_from_eetop(jni, t);
    if (calc != NULL && calc != jni) {
        atomic_store(&offset_ok, false);
        log_warn("thread registry: JNIEnv computed from Thread.eetop (%p) differs from the "
                 "real one (%p); threads that existed before the agent keep their ids, but "
                 "no new ids are computed this way", (void *)calc, (void *)jni);
    }
    bool created;
    struct thread_rec *r = rec_insert(jni, jni, t, &created);
    if (r == NULL)
        return;
    tl_self = r;
    threads_release(r);
    /* JVMTI also posts ThreadStart for main after VMInit: the announced bits make the
     * replayed THREAD_START the only one. */
    if (atomic_load(&g_shim.phase) >= PHASE_STARTING && !hidden_thread(jni, r))
        announce(jni, r, 0);
    flush_held(); /* an attached thread's events from while its Thread object was built */
}

/* JVMTI ThreadEnd, on the ending thread: its THREAD_END, and its record out. */
static void threads_on_end(JNIEnv *jni, jthread t)
{
    (void)t;
    struct thread_rec *r = tl_self;
    if (r == NULL || r->env != jni) {
        pthread_mutex_lock(&reg_lock);
        HASH_FIND_PTR(by_env, &jni, r);
        pthread_mutex_unlock(&reg_lock);
    }
    if (r != NULL) {
        if (tl_held_n > 0)
            threads_announce_self_now(jni); /* held events, never after THREAD_END */
        post_thread_end(jni, r);
        tl_self = NULL;
        shim_tl_guard = NULL;
        rec_remove(r);
    }
    tl_self = NULL;
    shim_tl_guard = NULL;
    tl_ended = true;
    jvmti_ignore((*g_shim.jvmti)->SetThreadLocalStorage(g_shim.jvmti, NULL, &ended_mark),
                 "SetThreadLocalStorage marking ThreadEnd: unmarked, a thread that attaches "
                 "again is taken as new the same way");
    shim_set_current_jni(NULL);
}

jint threads_init_live(JNIEnv *jni)
{
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    fid_eetop = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
    if (fid_eetop == NULL) {
        (*jni)->ExceptionClear(jni);
        log_warn("thread registry: java.lang.Thread has no eetop field on this JVM: threads "
                 "started before the agent get an id only once they run an event");
    }
    fid_name = tc ? (*jni)->GetFieldID(jni, tc, "name", "Ljava/lang/String;") : NULL;
    if (fid_name == NULL)
        (*jni)->ExceptionClear(jni);
    jthread self = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetCurrentThread(g_shim.jvmti, &self),
                 "GetCurrentThread at VMInit: no eetop offset, no Thread object for main");
    if (fid_eetop != NULL && self != NULL) {
        jlong eetop = (*jni)->GetLongField(jni, self, fid_eetop);
        if (eetop != 0) {
            env_offset = (intptr_t)jni - (intptr_t)eetop;
            atomic_store(&offset_ok, true);
        }
    }
    bool created;
    struct thread_rec *me = rec_insert(jni, jni, self, &created);
    if (me != NULL) {
        tl_self = me;
        threads_release(me);
    }

    /* Threads that started before us: learn their JNIEnv. Those that already told us
     * (ThreadStart callbacks in the start phase) check the offset instead. */
    jint n = 0;
    jthread *all = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetAllThreads(g_shim.jvmti, &n, &all),
                  "GetAllThreads at VMInit"))
        return JNI_ERR;
    int learned = 0;
    for (jint i = 0; i < n; i++) {
        JNIEnv *env = env_from_eetop(jni, all[i]);
        if (env != NULL) {
            struct thread_rec *r = rec_insert(jni, env, all[i], &created);
            if (r != NULL && !created && r->ref != NULL &&
                !(*jni)->IsSameObject(jni, r->ref, all[i])) {
                atomic_store(&offset_ok, false);
                log_warn("thread registry: Thread.eetop mapping disagrees with a known "
                         "thread; not used");
            }
            if (r != NULL && created) {
                learned++;
                /* It may have ended between GetAllThreads and the insert. */
                jint st = 0;
                jvmti_ignore((*g_shim.jvmti)->GetThreadState(g_shim.jvmti, all[i], &st),
                             "GetThreadState at VMInit: unread, the thread is taken as ended");
                if (!(st & JVMTI_THREAD_STATE_ALIVE))
                    rec_remove(r);
            }
            threads_release(r);
        }
        (*jni)->DeleteLocalRef(jni, all[i]);
    }
    jvmti_free(g_shim.jvmti, all);
    if (self != NULL)
        (*jni)->DeleteLocalRef(jni, self);
    log_debug("thread registry: %d threads known at VMInit (%d learned through eetop)",
              (int)HASH_COUNT(by_env), learned);
    return JNI_OK;
}

static size_t snapshot(JNIEnv *jni, struct thread_snap **out, bool with_worker)
{
    pthread_mutex_lock(&reg_lock);
    size_t n = HASH_COUNT(by_env), i = 0;
    struct thread_rec **v = calloc(n ? n : 1, sizeof *v);
    struct thread_rec *r, *tmp;
    JNIEnv *hidden = with_worker ? NULL : worker_env(); /* not in the dumps */
    if (v != NULL)
        HASH_ITER(hh, by_env, r, tmp) {
            if (hidden != NULL && r->env == hidden)
                continue;
            atomic_fetch_add(&r->refs, 1);
            v[i++] = r;
        }
    pthread_mutex_unlock(&reg_lock);
    struct thread_snap *s = calloc(i ? i : 1, sizeof *s);
    for (size_t k = 0; k < i; k++) {
        if (s != NULL) {
            s[k].env = v[k]->env;
            s[k].thread = v[k]->ref ? (*jni)->NewLocalRef(jni, v[k]->ref) : NULL;
        }
        threads_release(v[k]);
    }
    free(v);
    *out = s;
    return s ? i : 0;
}

size_t threads_snapshot(JNIEnv *jni, struct thread_snap **out)
{
    return snapshot(jni, out, false);
}

bool threads_env_is_current(JNIEnv *env)
{
    return env != NULL && env == shim_current_env();
}

bool threads_env_is_self(JNIEnv *env)
{
    return env != NULL && (env == shim_current_jni() || env == shim_vthread_env);
}

void jvmpi_SetThreadLocalStorage(struct instance *inst, JNIEnv *env, void *ptr)
{
    struct thread_rec *r;
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "SetThreadLocalStorage(NULL env): ignored");
        return;
    }
    /* The calling thread's own storage, the common case (a profiler sets it in its
     * THREAD_START or on every event), found as GetThreadLocalStorage finds it: no lookup
     * of the current JNIEnv. */
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL && vt == env) {
        vthreads_rec(vt)->tls[inst->slot] = ptr;
        return;
    }
    r = tl_self;
    if (r != NULL && r->env == env) {
        r->tls[inst->slot] = ptr;
        return;
    }
    if (threads_env_is_current(env)) {
        r = threads_self();
        if (r != NULL)
            r->tls[inst->slot] = ptr;
        return;
    }
    r = threads_acquire(env);
    if (r == NULL) {
        report_misuse(inst, LOG_INFO, "SetThreadLocalStorage(%p): no such thread; ignored",
                                      (void *)env);
        return;
    }
    r->tls[inst->slot] = ptr;
    threads_release(r);
}

void *jvmpi_GetThreadLocalStorage(struct instance *inst, JNIEnv *env)
{
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadLocalStorage(NULL env): NULL");
        return NULL;
    }
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL && vt == env)
        return vthreads_rec(vt)->tls[inst->slot];
    struct thread_rec *r = tl_self;
    if (r != NULL && r->env == env)
        return r->tls[inst->slot];
    r = threads_acquire(env);
    if (r == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadLocalStorage(%p): no such thread; NULL",
                                      (void *)env);
        return NULL;
    }
    void *p = r->tls[inst->slot];
    threads_release(r);
    return p;
}

jlong jvmpi_GetCurrentThreadCpuTime(struct instance *inst)
{
    (void)inst;
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL)
        return vthreads_cpu(vthreads_rec(vt));
    /* Works on every thread, Java or not, in every phase (JVMTI's needs a live Java thread):
     * the thread's own clock, read in user space where the kernel allows it (cputime.c). */
    return (jlong)cputime_now();
}

/* ---- CreateSystemThread ---- */

struct sys_start {
    void (*f)(void *);
    int slot;
};

static void JNICALL system_thread_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    struct sys_start s = *(struct sys_start *)arg;
    free(arg);
    shim_set_current_jni(jni);
    threads_self();
    s.f(NULL); /* HotSpot called f(NULL), whatever the header's prototype suggests */
}

jint jvmpi_CreateSystemThread(struct instance *inst, char *name, jint priority,
                              void (*f)(void *))
{
    if (atomic_load(&g_shim.phase) < PHASE_LIVE) {
        report_misuse(inst, LOG_WARN,
                      "CreateSystemThread(\"%s\") before JVM_INIT_DONE: JNI_ERR (JVMPI "
                      "allows it only once the VM is initialised)", name ? name : "");
        return JNI_ERR;
    }
    if (priority != JVMPI_MINIMUM_PRIORITY && priority != JVMPI_NORMAL_PRIORITY &&
        priority != JVMPI_MAXIMUM_PRIORITY) {
        report_misuse(inst, LOG_WARN,
                      "CreateSystemThread(\"%s\", priority %d): JVMPI accepts only 1, 5 "
                      "or 10: JNI_ERR", name ? name : "", (int)priority);
        return JNI_ERR;
    }
    if (f == NULL) {
        report_misuse(inst, LOG_WARN,
                      "CreateSystemThread(\"%s\") with a NULL function: JNI_ERR", name ? name : "");
        return JNI_ERR;
    }
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL &&
        (*g_shim.vm)->AttachCurrentThreadAsDaemon(g_shim.vm, (void **)&jni, NULL) != JNI_OK) {
        log_error("agent %d: CreateSystemThread: cannot attach the calling thread", inst->slot);
        return JNI_ERR;
    }
    if ((*jni)->PushLocalFrame(jni, 8) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        return JNI_ERR;
    }
    jint rc = JNI_ERR;
    bool known_caller = shim_current_jni() != NULL;
    jthread t = shim_new_system_thread(jni, name ? name : "JVMPI system thread");
    /* JVMTI samples no allocation made inside its callbacks, and agents often call this
     * from an event handler: announce the Thread object here, on its creator, where HotSpot
     * posted its OBJECT_ALLOC, so the new thread's THREAD_START names a defined object. */
    if (t != NULL && known_caller)
        memory_id_announced(jni, t);
    struct sys_start *s = malloc(sizeof *s);
    if (t != NULL && s != NULL) {
        s->f = f;
        s->slot = inst->slot;
        /* RunAgentThread makes it a daemon; JVMPI priorities 1/5/10 are Java's. */
        if (jvmti_ok((*g_shim.jvmti)->RunAgentThread(g_shim.jvmti, t, system_thread_main, s,
                                                     priority),
                     "CreateSystemThread: RunAgentThread")) {
            rc = JNI_OK;
            s = NULL;
        }
    } else {
        log_error("agent %d: CreateSystemThread(\"%s\"): cannot create the Thread object",
                  inst->slot, name ? name : "");
    }
    free(s);
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

static void JNICALL cb_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
    (void)jvmti;
    threads_on_start(jni, t);
}

static void JNICALL cb_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
    (void)jvmti;
    threads_on_end(jni, t);
    classes_thread_end(jni);
}

void threads_module_callbacks(jvmtiEventCallbacks *cb)
{
    cb->ThreadStart = cb_thread_start;
    cb->ThreadEnd = cb_thread_end;
}

jint threads_module_enable(void)
{
    /* Always on: the registry must know every thread, whatever the agent enabled. */
    if (!jvmti_ok((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                           JVMTI_EVENT_THREAD_START, NULL),
                  "enabling ThreadStart") ||
        !jvmti_ok((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                           JVMTI_EVENT_THREAD_END, NULL),
                  "enabling ThreadEnd"))
        return JNI_ERR;
    return JNI_OK;
}

/* ---- THREAD_START / THREAD_END ---- */

struct tnames {
    char *name, *group, *parent;
};

static void tnames_free(struct tnames *n)
{
    jvmti_free(g_shim.jvmti, n->name);
    jvmti_free(g_shim.jvmti, n->group);
    jvmti_free(g_shim.jvmti, n->parent);
}

/* Thread name, its group's name and the name of the group's parent (NULL for "system",
 * which has none), as HotSpot filled thread_start. */
static void tnames_get(JNIEnv *jni, jthread t, struct tnames *n)
{
    memset(n, 0, sizeof *n);
    if (t == NULL)
        return;
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, t, &ti), LOG_DEBUG,
                     "GetThreadInfo for a thread event's names (posted without them)"))
        return;
    n->name = ti.name;
    if (ti.thread_group != NULL) {
        jvmtiThreadGroupInfo gi;
        memset(&gi, 0, sizeof gi);
        if (jvmti_ok_at((*g_shim.jvmti)->GetThreadGroupInfo(g_shim.jvmti, ti.thread_group, &gi),
                        LOG_DEBUG, "GetThreadGroupInfo for a thread event's group name")) {
            n->group = gi.name;
            if (gi.parent != NULL) {
                jvmtiThreadGroupInfo pi;
                memset(&pi, 0, sizeof pi);
                if (jvmti_ok_at((*g_shim.jvmti)->GetThreadGroupInfo(g_shim.jvmti, gi.parent,
                                                                    &pi),
                                LOG_DEBUG, "GetThreadGroupInfo for a thread event's parent "
                                           "group name")) {
                    n->parent = pi.name;
                    if (pi.parent)
                        (*jni)->DeleteLocalRef(jni, pi.parent);
                }
                (*jni)->DeleteLocalRef(jni, gi.parent);
            }
        }
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    }
    if (ti.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
}

static void post_thread_event(JNIEnv *jni, struct instance *inst, jint type,
                              struct thread_rec *r)
{
    struct tnames n;
    tnames_get(jni, r->ref, &n);
    /* THREAD_END carries THREAD_START's payload (HotSpot did); the group may be gone by
     * now, so the names THREAD_START gave are kept. A virtual thread's group is the JDK's
     * own for them, which stays: nothing is kept for it. */
    pthread_mutex_lock(&r->wait_lock);
    if (n.group != NULL && r->group_name == NULL && r->jni_table == NULL) {
        r->group_name = strdup(n.group);
        r->parent_name = n.parent ? strdup(n.parent) : NULL;
    }
    const char *group = n.group ? n.group : r->group_name;
    const char *parent = n.group ? n.parent : r->parent_name;
    pthread_mutex_unlock(&r->wait_lock);
    /* A thread's own THREAD_START is its first event: its Thread object, if no OBJECT_ALLOC
     * named it yet (a thread attached through JNI: the VM allocates that object without
     * sampling it), is announced right after it rather than before, on a thread not yet
     * started. Any other thread's object is announced first. */
    bool own_start = r->env == shim_current_env() &&
                     (type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_THREAD_START;
    /* The worker's THREAD_START names the worker, whoever posts it: at exit the exiting
     * thread posts it (announce_worker), which may have had its THREAD_END already. */
    JNIEnv *named = jni;
    if (!own_start && r->env != NULL && r->env == worker_env() &&
        (type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_THREAD_START) {
        named = r->env;
        own_start = true;
    }
    JVMPI_Event ev;
    event_init(&ev, type, named);
    ev.u.thread_start.thread_name = n.name;
    ev.u.thread_start.group_name = (char *)group;
    ev.u.thread_start.parent_name = (char *)parent;
    ev.u.thread_start.thread_id = r->ref == NULL ? NULL
                                  : own_start ? ids_of_kept(jni, r->ref)
                                              : memory_id_announced(jni, r->ref);
    ev.u.thread_start.thread_env_id = r->env;
    event_post(inst, &ev);
    if (own_start && r->ref != NULL)
        memory_id_announced(jni, r->ref);
    tnames_free(&n);
}

/* The shim's own thread is hidden, as HotSpot hid its internal threads: no THREAD_START
 * at its start nor in the replay. Only an event it posts itself (a GC bracket, OBJECT_FREE,
 * CLASS_UNLOAD), or the bracket the exiting thread posts in its name, announces it, through
 * threads_announce_self, so that no event names a thread the agent was never told of. */
static bool hidden_thread(JNIEnv *jni, struct thread_rec *r)
{
    return (r->env != NULL && r->env == worker_env()) || worker_is_thread(jni, r->ref);
}

/* Post THREAD_START for r to every instance that enabled it and has not had it. */
static void announce(JNIEnv *jni, struct thread_rec *r, jint type_flags)
{
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        uint32_t bit = 1u << i;
        if (!event_on(inst, JVMPI_EVENT_THREAD_START) || (atomic_load(&r->announced) & bit))
            continue;
        if (!(atomic_fetch_or(&r->claimed, bit) & bit)) {
            post_thread_event(jni, inst, JVMPI_EVENT_THREAD_START | type_flags, r);
            atomic_fetch_or(&r->announced, bit);
        }
    }
}

/* ---- a thread attaching through JNI ----
 * AttachCurrentThread makes the JavaThread, then its Thread object, whose constructor runs
 * Java code on the new thread (allocations, method events) before JVMTI's ThreadStart. A
 * THREAD_START then would carry an empty name and no group. HotSpot posted THREAD_START
 * once the Thread object existed, with its name and group. So while the current thread's
 * Thread object has no group yet (the constructor has not run), its events are held back
 * (copies, in order, thread-local) and posted right after its THREAD_START: at its
 * ThreadStart, or at its first event once the object is built. Only events whose payload
 * holds no pointer into memory the shim frees after the post are held (ids, numbers); for
 * any other kind, or past HELD_MAX events, the thread is announced at once, with its
 * Thread object as it stands.
 * Each held event carries the thread's trace of its moment: GetCallTrace in its handler
 * answers with that (calltrace.h), since the thread has moved on by the time it is posted. */

static bool under_construction(struct thread_rec *r)
{
    if (atomic_load(&g_shim.phase) < PHASE_LIVE || r->ref == NULL || r->jni_table != NULL)
        return false;
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, r->ref, &ti), LOG_DEBUG,
                     "GetThreadInfo: is the Thread object still being built (taken as not)"))
        return false;
    JNIEnv *jni = shim_current_jni();
    /* No group yet (JDK 17 sets group then name), or no name yet (JDK 25 sets its field
     * holder, group included, first). The field Thread.name is looked for, not assumed. */
    bool building = ti.thread_group == NULL;
    if (!building && fid_name != NULL) {
        jobject nm = (*jni)->GetObjectField(jni, r->ref, fid_name);
        building = nm == NULL;
        if (nm != NULL)
            (*jni)->DeleteLocalRef(jni, nm);
    }
    jvmti_free(g_shim.jvmti, ti.name);
    if (ti.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (ti.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
    return building;
}

/* An event of the current thread while its Thread object is being built (a thread
 * attaching through JNI): kept with the thread's trace at this moment (trace, if the event
 * was held before and has one, else taken now), and posted after its THREAD_START with
 * that trace for GetCallTrace in its handler. False if it cannot be kept (then the caller
 * announces the thread and posts at once). The events layer calls it (module init). */
static bool threads_hold_event(struct instance *inst, const JVMPI_Event *ev,
                               const struct calltrace_snap *trace)
{
    switch (ev->event_type) { /* unrequested only */
    case JVMPI_EVENT_OBJECT_ALLOC:
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_INSTRUCTION_START:
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        break;
    default:
        return false;
    }
    if (tl_held_n == tl_held_cap) {
        if (tl_held_cap >= HELD_MAX)
            return false;
        size_t cap = tl_held_cap ? tl_held_cap * 2 : 64;
        struct held *h = realloc(tl_held, cap * sizeof *h);
        if (h == NULL)
            return false;
        tl_held = h;
        tl_held_cap = cap;
    }
    /* Known to the GC bracket, which must not post its OBJECT_FREE first (memory/gc.c). */
    if (ev->event_type == JVMPI_EVENT_OBJECT_ALLOC && !memory_alloc_held(inst, ev->u.obj_alloc.obj_id))
        return false;
    struct held *h = &tl_held[tl_held_n];
    h->inst = inst;
    h->ev = *ev;
    /* Delivered later, when the thread has moved on: an agent that traces the thread in
     * the handler (a profiler's METHOD_ENTRY or OBJECT_ALLOC site) must see the stack of
     * now, with the entered or allocating method on top, as HotSpot posted it. */
    h->trace = up_snap_take != NULL ? up_snap_take(trace) : NULL;
    tl_held_n++;
    return true;
}

/* Post what this thread held back, in order (its THREAD_START has been posted). */
static void flush_held(void)
{
    while (tl_held_n > 0) {
        struct held *h = tl_held;
        size_t n = tl_held_n;
        tl_held = NULL;
        tl_held_n = tl_held_cap = 0;
        for (size_t i = 0; i < n; i++) {
            if (h[i].ev.event_type != JVMPI_EVENT_OBJECT_ALLOC) {
                event_post_held(h[i].inst, &h[i].ev, h[i].trace);
            } else if (memory_alloc_release_begin(h[i].inst, h[i].ev.u.obj_alloc.obj_id)) {
                event_post_held(h[i].inst, &h[i].ev, h[i].trace);
                memory_alloc_release_end(h[i].inst, h[i].ev.u.obj_alloc.obj_id);
            } /* else it died while held: its OBJECT_FREE was dropped as well */
            if (up_snap_free != NULL)
                up_snap_free(h[i].trace);
        }
        free(h);
    }
}

/* The record of env if it names the calling JVMPI thread, else NULL. */
static struct thread_rec *self_for(JNIEnv *env)
{
    JNIEnv *vt = shim_vthread_env;
    if (vt != NULL)
        return env == vt ? vthreads_rec(vt) : NULL;
    struct thread_rec *r = tl_self;
    if (r == NULL || r->env != env) {
        if (env == NULL || env != shim_current_jni())
            return NULL;
        r = threads_self();
    }
    return r;
}

/* The agents that have THREAD_START on: only they are told of a thread (announce), so only
 * their bits say whether it was. With a mask of every agent, a thread whose THREAD_START one
 * agent never wants looked unannounced for ever, and its events were held back and flushed
 * again in a loop at its THREAD_END (JDK 17 clears the thread's group before ThreadEnd, so
 * it looked under construction). */
static uint32_t start_wanted(void)
{
    uint32_t on = 0;
    for (int i = 0; i < g_shim.ninst; i++)
        if (event_on(&g_shim.inst[i], JVMPI_EVENT_THREAD_START))
            on |= 1u << i;
    return on;
}

/* Definition before use: make sure every instance that enabled THREAD_START has been told
 * about the calling thread, if env names it (the event's env_id). Cheap when it has (a
 * thread-local check). False while the thread's Thread object is still being built (its
 * THREAD_START could not name it yet): the caller holds its event back with
 * threads_hold_event. The events layer calls it (module init). */
static bool threads_announce_self(JNIEnv *env)
{
    struct thread_rec *r = self_for(env);
    if (r == NULL) {
        /* The one event the shim posts on one thread naming another: the GC bracket at
         * exit, posted by the exiting thread in the worker's name (memory/gc.c). A worker
         * that posted no bracket before was never announced: now, from here. */
        if (env != NULL && env == worker_env())
            announce_worker(env);
        return true;
    }
    uint32_t all = start_wanted();
    if ((atomic_load(&r->announced) & all) == all)
        return true;
    if (under_construction(r))
        return false;
    announce(shim_current_jni(), r, 0);
    flush_held();
    return true;
}

/* THREAD_START of the shim's worker, posted on the calling thread for the agents that have
 * not had it (the worker is hidden otherwise: hidden_thread). */
static void announce_worker(JNIEnv *env)
{
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL)
        return;
    uint32_t all = start_wanted();
    if ((atomic_load(&r->announced) & all) != all && !r->end_posted)
        announce(shim_current_jni(), r, 0);
    threads_release(r);
}

/* Announce the current thread now, whatever its state, and post what was held back. */
static void threads_announce_self_now(JNIEnv *env)
{
    struct thread_rec *r = self_for(env);
    if (r == NULL)
        return;
    uint32_t all = start_wanted();
    if ((atomic_load(&r->announced) & all) != all)
        announce(shim_current_jni(), r, 0);
    flush_held();
}

void threads_announce(JNIEnv *jni, struct thread_rec *r)
{
    announce(jni, r, 0);
}

void threads_replay(JNIEnv *jni)
{
    if (!events_any(JVMPI_EVENT_THREAD_START))
        return;
    struct thread_rec **v = NULL;
    size_t n = 0;
    pthread_mutex_lock(&reg_lock);
    v = calloc(HASH_COUNT(by_env) + 1, sizeof *v);
    struct thread_rec *r, *tmp;
    if (v != NULL)
        HASH_ITER(hh, by_env, r, tmp) {
            atomic_fetch_add(&r->refs, 1);
            v[n++] = r;
        }
    pthread_mutex_unlock(&reg_lock);
    for (size_t i = 0; i < n; i++) {
        if (!v[i]->ended && !hidden_thread(jni, v[i]))
            announce(jni, v[i], 0);
        threads_release(v[i]);
    }
    free(v);
}

static void post_thread_end(JNIEnv *jni, struct thread_rec *r)
{
    if (r->end_posted || hidden_thread(jni, r))
        return;
    /* EXITs owed to contenders that have not woken yet come first: HotSpot posted them
     * at the release, on this thread, before its THREAD_END. */
    if (up_owner_ending != NULL)
        up_owner_ending(r->env);
    __atomic_store_n(&r->end_posted, true, __ATOMIC_RELEASE); /* read by contenders */
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (event_on(inst, JVMPI_EVENT_THREAD_END))
            post_thread_event(jni, inst, JVMPI_EVENT_THREAD_END, r); /* HotSpot's payload */
    }
}

void threads_post_end(JNIEnv *jni, struct thread_rec *r)
{
    post_thread_end(jni, r);
}

void threads_remove(struct thread_rec *r)
{
    rec_remove(r);
}

void threads_post_exiting_thread_end(JNIEnv *jni)
{
    struct thread_rec *r = threads_self(); /* a virtual thread's, if one calls exit */
    if (r != NULL && (r->env == jni || r->env == shim_vthread_env))
        post_thread_end(jni, r);
}

static jint request_thread_start(struct instance *inst, JNIEnv *jni, void *arg)
{
    jobjectID id = arg;
    if (id == NULL) {
        report_misuse(inst, LOG_WARN, "RequestEvent(THREAD_START, %p): NULL thread id: "
                                      "JVMPI_FAIL", (void *)id);
        return JVMPI_FAIL;
    }
    /* Registry scan: the thread whose object carries this id. The shim's worker too: an
     * agent that got its THREAD_START (before the first event it posted) may ask again. */
    struct thread_snap *snap = NULL;
    size_t n = snapshot(jni, &snap, true);
    JNIEnv *env = NULL;
    for (size_t i = 0; i < n; i++) {
        if (env == NULL && snap[i].thread != NULL && ids_peek(snap[i].thread) == id)
            env = snap[i].env;
        if (snap[i].thread)
            (*jni)->DeleteLocalRef(jni, snap[i].thread);
    }
    free(snap);
    struct thread_rec *tr = env ? threads_acquire(env) : NULL;
    if (tr == NULL) {
        report_misuse(inst, LOG_WARN, "RequestEvent(THREAD_START, %p): no live thread has this id: "
                                      "JVMPI_FAIL", (void *)id);
        return JVMPI_FAIL;
    }
    post_thread_event(jni, inst, JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT, tr);
    threads_release(tr);
    return JVMPI_SUCCESS;
}

jobjectID jvmpi_GetThreadObject(struct instance *inst, JNIEnv *env)
{
    JNIEnv *jni = shim_current_jni();
    if (env == NULL || jni == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadObject(%p)%s: NULL", (void *)env,
                                      jni ? "" : " from a thread the JVM does not know");
        return NULL;
    }
    if (threads_env_is_current(env))
        threads_self();
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadObject(%p): no such thread: NULL", (void *)env);
        return NULL;
    }
    jobjectID id = r->ref ? memory_id_announced(jni, r->ref) : NULL;
    threads_release(r);
    return id;
}

/* The calling thread's guard (shim.h): only a thread with a record can be named by an agent,
 * and so be suspended; a record is not made here (this runs inside the shim's sections). */
static struct shim_guard *guard_self(void)
{
    struct thread_rec *r = tl_self;
    JNIEnv *env = shim_current_jni();
    if ((r == NULL || r->env != env) && env != NULL) {
        pthread_mutex_lock(&reg_lock);
        HASH_FIND_PTR(by_env, &env, r);
        pthread_mutex_unlock(&reg_lock);
    }
    return r != NULL && r->env == env ? &r->guard : NULL;
}

bool threads_hold_guard(struct thread_rec *r)
{
    if (shim_guard_hold(&r->guard))
        return true;
    report_note(REP_CALL_NO_WAIT, "a thread the agent suspended stayed inside a section of the "
                "shim that holds a lock (about 100 ms): left running, so that the caller "
                "cannot wait on that lock");
    return false;
}

void threads_release_guard(struct thread_rec *r)
{
    shim_guard_release(&r->guard);
}

void threads_module_init(void)
{
    shim_guard_set_finder(guard_self);
    static const struct events_thread_upcalls up = {
        .announce_self = threads_announce_self,
        .hold_event = threads_hold_event,
        .announce_self_now = threads_announce_self_now,
    };
    events_set_thread_upcalls(&up);
    struct event_row start = {.kind = EVK_ON, .request = request_thread_start};
    events_register(JVMPI_EVENT_THREAD_START, &start);
    struct event_row end = {.kind = EVK_ON};
    events_register(JVMPI_EVENT_THREAD_END, &end);
}
