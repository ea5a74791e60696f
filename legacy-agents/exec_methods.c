/* exec_methods.c — a JDK 1.3-style JVMPI agent that checks METHOD_ENTRY, METHOD_ENTRY2 and
 * METHOD_EXIT (tests/it/methods/exec_methods.sh, workload tests/java/ExecMethods.java with
 * ExecTarget.java and ExecThrow.java).
 *
 * Options (one word): both | entry | entry2
 *   both    METHOD_ENTRY2, METHOD_ENTRY and METHOD_EXIT enabled in JVM_OnLoad
 *   entry   METHOD_ENTRY and METHOD_EXIT only (no ENTRY2 may arrive)
 *   entry2  METHOD_ENTRY2 and METHOD_EXIT only (no ENTRY may arrive)
 * Always enabled: CLASS_LOAD (method ids -> names), THREAD_START, THREAD_END,
 * JVM_INIT_DONE, JVM_SHUT_DOWN.
 *
 * Per thread (SetThreadLocalStorage / GetThreadLocalStorage) the agent keeps a shadow stack
 * of the methods entered and not yet exited, and checks live (FAIL lines, first 5 per kind,
 * "exec_methods: fails KIND=N" in the report):
 *   order    with ENTRY and ENTRY2 both on, every invocation is ENTRY2(m) then ENTRY(m), with
 *            nothing in between on that thread; no EXIT between them
 *   env      env_id is the JNIEnv of the thread the handler runs on
 *   nest     an EXIT is for the innermost open frame (the shadow stack's top)
 *   negative an EXIT with no open frame, on a thread that cannot have frames older than the
 *            agent: main (empty stack at JVM_INIT_DONE) and threads started after
 *            JVM_INIT_DONE ("strict" threads). Threads that existed at JVM_INIT_DONE
 *            (Reference Handler, ...) may return from frames entered before the events were
 *            live: counted as unmatched_exits, no failure.
 *   recv_static  ENTRY2 of a static method of the workload with an obj_id
 *   recv_inst    ENTRY2 of ExecTarget.inst with obj_id NULL, or another id than the first
 *   no_thread    a method event of a thread announced by no THREAD_START before
 *   mode     an event of a type this mode did not enable
 * In the METHOD_ENTRY (entry2 mode: ENTRY2) handler of ExecMethods.checkReceiver (main) it
 * reads the static field ExecMethods.target through JNI (class via jobjectID2jobject of the
 * class id from CLASS_LOAD) and prints jobject2jobjectID of it next to the ids ENTRY2 gave for
 * inst(), ExecTarget.<init> and Object.hashCode called from ExecMethods.natives().
 * At JVM_SHUT_DOWN it prints, per watched method and thread (main | worker = "exec-worker" |
 * other), the counts of ENTRY2 / ENTRY / EXIT:
 *   exec_methods: method <Class.name(sig)> thread=<T> entry2=.. entry=.. exit=..
 *   exec_methods: native <Class.name(sig)> from=ExecMethods.natives thread=<T> entry2=.. entry=.. exit=..
 * (the natives counted only when called from ExecMethods.natives: the shadow stack's top),
 * the exception-path depth check, one line per thread seen and the totals.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_RawMonitor lock;
static char mode[16] = "both";
static int want_entry = 1, want_entry2 = 1;

enum { F_ORDER, F_ENV, F_NEST, F_NEGATIVE, F_RECV_STATIC, F_RECV_INST, F_NO_THREAD, F_MODE,
       F_OTHER, NFAIL };
static const char *fail_name[NFAIL] = {"order", "env", "nest", "negative", "recv_static",
                                       "recv_inst", "no_thread", "mode", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "exec_methods"
#define KIT_LINE 2048
#define FAIL(...) FAILK(F_OTHER, __VA_ARGS__)
#include "kit/out.h"
#include "kit/checked.h"

/* ---- watched methods: jmethodID -> record (insert-only open addressing) -------------- */

enum { C_MAIN, C_WORKER, C_OTHER, NCAT };
static const char *cat_name[NCAT] = {"main", "worker", "other"};

/* Special methods, by role. */
enum { W_NONE, W_HIT, W_INST, W_INIT, W_NANO, W_HASH, W_CURTHR, W_TOP, W_MID, W_THROWER,
       W_NATIVES, W_CHECKRECV, W_THROWLOOP };

struct mrec {
    char *name;             /* "Class.method(sig)" */
    int role;
    int is_static;          /* known static (workload's static methods); -1 unknown */
    volatile long entry[NCAT], entry2[NCAT], exit[NCAT];
    volatile long nat_entry[NCAT], nat_entry2[NCAT], nat_exit[NCAT]; /* from natives() */
};

#define WCAP 4096 /* power of two */
static jmethodID wkeys[WCAP];
static struct mrec *wvals[WCAP];
static struct mrec *roles[W_THROWLOOP + 1];

static size_t hash_ptr(const void *p)
{
    unsigned long long x = (unsigned long long)(size_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (WCAP - 1);
}

static struct mrec *watched(jmethodID m)
{
    if (m == NULL)
        return NULL;
    for (size_t i = hash_ptr(m), n = 0; n < WCAP; i = (i + 1) & (WCAP - 1), n++) {
        jmethodID k = __atomic_load_n(&wkeys[i], __ATOMIC_ACQUIRE);
        if (k == m)
            return __atomic_load_n(&wvals[i], __ATOMIC_ACQUIRE);
        if (k == NULL)
            return NULL;
    }
    return NULL;
}

/* Under lock (CLASS_LOAD handler). */
static void watch(jmethodID m, const char *cls, const char *name, const char *sig)
{
    if (m == NULL || watched(m) != NULL)
        return;
    struct mrec *r = calloc(1, sizeof *r);
    size_t len = strlen(cls) + strlen(name) + strlen(sig) + 2;
    r->name = malloc(len);
    snprintf(r->name, len, "%s.%s%s", cls, name, sig);
    r->is_static = -1;
    struct { const char *c, *n, *s; int role, st; } tab[] = {
        {"ExecTarget", "hit", "(I)V", W_HIT, 1},
        {"ExecTarget", "inst", "(I)V", W_INST, 0},
        {"ExecTarget", "<init>", "(I)V", W_INIT, 0},
        {"java.lang.System", "nanoTime", "()J", W_NANO, 1},
        {"java.lang.Object", "hashCode", "()I", W_HASH, 0},
        {"java.lang.Thread", "currentThread", "()Ljava/lang/Thread;", W_CURTHR, 1},
        {"ExecThrow", "top", "(I)I", W_TOP, 1},
        {"ExecThrow", "mid", "(I)I", W_MID, 1},
        {"ExecThrow", "thrower", "(I)I", W_THROWER, 1},
        {"ExecMethods", "natives", "()J", W_NATIVES, 1},
        {"ExecMethods", "checkReceiver", "()V", W_CHECKRECV, 1},
        {"ExecMethods", "throwLoop", "()I", W_THROWLOOP, 1},
        {"ExecMethods", "main", "([Ljava/lang/String;)V", W_NONE, 1},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(cls, tab[i].c) && !strcmp(name, tab[i].n) && !strcmp(sig, tab[i].s)) {
            r->role = tab[i].role;
            r->is_static = tab[i].st;
            if (r->role != W_NONE)
                roles[r->role] = r;
        }
    for (size_t i = hash_ptr(m), n = 0; n < WCAP; i = (i + 1) & (WCAP - 1), n++)
        if (wkeys[i] == NULL) {
            __atomic_store_n(&wvals[i], r, __ATOMIC_RELEASE);
            __atomic_store_n(&wkeys[i], m, __ATOMIC_RELEASE);
            return;
        }
    FAIL("watched-method table full");
}

/* ---- per-thread state ------------------------------------------------------------------ */

struct tstate {
    JNIEnv *env;
    char name[64];
    int cat;
    int strict;             /* no frames older than the agent's view: negative depth = FAIL */
    int lazy;               /* created by a method event, not THREAD_START */
    jmethodID *stack;
    int depth, cap, max_depth;
    jmethodID pending2;     /* ENTRY2 seen, its ENTRY not yet (both mode) */
    long n_entry, n_entry2, n_exit, unmatched_exits, negative;
    int ended, end_depth;
    int top_d0;             /* depth below ExecThrow.top at its first entry; -1 none yet */
    long top_calls, top_varied;
    struct tstate *next;
};
static struct tstate *all_threads;
static volatile int init_done;
static JNIEnv *main_env;
static jobjectID execmethods_cid;
static volatile long lazy_threads, unrequested_thread_starts;

static struct tstate *tstate_new(JNIEnv *env, const char *name, int strict, int lazy)
{
    struct tstate *t = calloc(1, sizeof *t);
    t->env = env;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "?");
    t->cat = strcmp(t->name, "exec-worker") == 0 ? C_WORKER : C_OTHER;
    t->strict = strict;
    t->lazy = lazy;
    t->top_d0 = -1;
    t->cap = 256;
    t->stack = malloc(sizeof *t->stack * (size_t)t->cap);
    jvmpi->SetThreadLocalStorage(env, t);
    jvmpi->RawMonitorEnter(lock);
    t->next = all_threads;
    all_threads = t;
    jvmpi->RawMonitorExit(lock);
    return t;
}

static struct tstate *tstate_of(JNIEnv *env)
{
    struct tstate *t = jvmpi->GetThreadLocalStorage(env);
    if (t == NULL) {
        __sync_add_and_fetch(&lazy_threads, 1);
        FAILK(F_NO_THREAD, "method event on thread env %p before its THREAD_START", (void *)env);
        t = tstate_new(env, "(no THREAD_START)", 0, 1);
    }
    return t;
}

static void push(struct tstate *t, jmethodID m)
{
    if (t->depth == t->cap) {
        t->cap *= 2;
        t->stack = realloc(t->stack, sizeof *t->stack * (size_t)t->cap);
    }
    t->stack[t->depth++] = m;
    if (t->depth > t->max_depth)
        t->max_depth = t->depth;
}

static const char *mname(jmethodID m)
{
    struct mrec *r = watched(m);
    return r ? r->name : "(not watched)";
}

/* ---- receivers --------------------------------------------------------------------------- */

static jobjectID inst_recv, init_recv, hash_recv, jni_recv;
static long inst_recv_changes, hash_recv_other;
static int jni_checked;

static void check_receiver(JNIEnv *jni)
{
    if (jni_checked++)
        return;
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 16) != 0) {
        FAIL("checkReceiver: no JNIEnv");
        return;
    }
    jvmpi->DisableGC();
    jclass cls = execmethods_cid ? (jclass)jvmpi->jobjectID2jobject(execmethods_cid) : NULL;
    jfieldID f = cls ? (*jni)->GetStaticFieldID(jni, cls, "target", "LExecTarget;") : NULL;
    if (f == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("checkReceiver: cannot reach ExecMethods.target (class %p)", (void *)cls);
    } else {
        jobject o = (*jni)->GetStaticObjectField(jni, cls, f);
        jni_recv = o ? jvmpi->jobject2jobjectID(o) : NULL;
    }
    jvmpi->EnableGC();
    (*jni)->PopLocalFrame(jni, NULL);
}

/* ---- method events ------------------------------------------------------------------------ */

static void check_env(JVMPI_Event *ev, const char *what)
{
    JNIEnv *cur = current_env();
    if (ev->env_id != cur)
        FAILK(F_ENV, "%s of %s: env_id %p, but the handler runs on env %p", what,
              mname(ev->u.method.method_id), (void *)ev->env_id, (void *)cur);
}

/* A frame opens (at METHOD_ENTRY, or at METHOD_ENTRY2 in entry2 mode): push it; the depth
 * below ExecThrow.top must be the same at every call; ExecMethods.checkReceiver triggers the
 * receiver check. */
static void entered(struct tstate *t, jmethodID m, JNIEnv *env)
{
    int d_before = t->depth;
    push(t, m);
    struct mrec *r = watched(m);
    if (r == NULL)
        return;
    if (r->role == W_TOP) {
        t->top_calls++;
        if (t->top_d0 < 0)
            t->top_d0 = d_before;
        else if (d_before != t->top_d0)
            t->top_varied++;
    }
    if (r->role == W_CHECKRECV)
        check_receiver(env);
}

static void on_entry2(JVMPI_Event *ev)
{
    jmethodID m = ev->u.method_entry2.method_id;
    jobjectID obj = ev->u.method_entry2.obj_id;
    if (!want_entry2)
        FAILK(F_MODE, "METHOD_ENTRY2 of %s in mode %s", mname(m), mode);
    check_env(ev, "METHOD_ENTRY2");
    struct tstate *t = tstate_of(ev->env_id);
    t->n_entry2++;
    jmethodID caller = t->depth > 0 ? t->stack[t->depth - 1] : NULL;
    if (want_entry) {
        if (t->pending2 != NULL)
            FAILK(F_ORDER, "thread %s: METHOD_ENTRY2 of %s while the ENTRY2 of %s still waits "
                  "for its METHOD_ENTRY", t->name, mname(m), mname(t->pending2));
        t->pending2 = m;
    } else {
        entered(t, m, ev->env_id); /* entry2 mode: this event opens the frame */
    }
    struct mrec *r = watched(m);
    if (r == NULL)
        return;
    __atomic_add_fetch(&r->entry2[t->cat], 1, __ATOMIC_RELAXED);
    struct mrec *cr = watched(caller);
    if (cr != NULL && cr->role == W_NATIVES)
        __atomic_add_fetch(&r->nat_entry2[t->cat], 1, __ATOMIC_RELAXED);
    if (r->is_static == 1 && obj != NULL)
        FAILK(F_RECV_STATIC, "METHOD_ENTRY2 of static %s with obj_id %p, expected NULL",
              r->name, (void *)obj);
    if (r->role == W_INST) {
        jvmpi->RawMonitorEnter(lock);
        if (obj == NULL)
            FAILK(F_RECV_INST, "METHOD_ENTRY2 of %s with obj_id NULL", r->name);
        else if (inst_recv == NULL)
            inst_recv = obj;
        else if (obj != inst_recv && inst_recv_changes++ < 5)
            FAILK(F_RECV_INST, "METHOD_ENTRY2 of %s: obj_id %p, earlier %p (same receiver)",
                  r->name, (void *)obj, (void *)inst_recv);
        jvmpi->RawMonitorExit(lock);
    } else if (r->role == W_INIT && t->cat == C_MAIN) {
        init_recv = obj;
    } else if (r->role == W_HASH && cr != NULL && cr->role == W_NATIVES) {
        if (hash_recv == NULL)
            hash_recv = obj;
        else if (obj != hash_recv)
            hash_recv_other++;
    }
}

static void on_entry(JVMPI_Event *ev)
{
    jmethodID m = ev->u.method.method_id;
    if (!want_entry)
        FAILK(F_MODE, "METHOD_ENTRY of %s in mode %s", mname(m), mode);
    check_env(ev, "METHOD_ENTRY");
    struct tstate *t = tstate_of(ev->env_id);
    t->n_entry++;
    if (want_entry2) {
        if (t->pending2 != m)
            FAILK(F_ORDER, "thread %s: METHOD_ENTRY of %s, but the last METHOD_ENTRY2 was %s",
                  t->name, mname(m), t->pending2 ? mname(t->pending2) : "none (consumed)");
        t->pending2 = NULL;
    }
    jmethodID caller = t->depth > 0 ? t->stack[t->depth - 1] : NULL;
    entered(t, m, ev->env_id);
    struct mrec *r = watched(m);
    if (r == NULL)
        return;
    __atomic_add_fetch(&r->entry[t->cat], 1, __ATOMIC_RELAXED);
    struct mrec *cr = watched(caller);
    if (cr != NULL && cr->role == W_NATIVES)
        __atomic_add_fetch(&r->nat_entry[t->cat], 1, __ATOMIC_RELAXED);
}

static void on_method_exit(JVMPI_Event *ev)
{
    jmethodID m = ev->u.method.method_id;
    check_env(ev, "METHOD_EXIT");
    struct tstate *t = tstate_of(ev->env_id);
    t->n_exit++;
    if (t->pending2 != NULL) {
        FAILK(F_ORDER, "thread %s: METHOD_EXIT of %s between METHOD_ENTRY2 and METHOD_ENTRY "
              "of %s", t->name, mname(m), mname(t->pending2));
        t->pending2 = NULL;
    }
    if (t->depth == 0) {
        if (t->strict) {
            t->negative++;
            FAILK(F_NEGATIVE, "thread %s: METHOD_EXIT of %s with no open frame (depth would "
                  "be negative)", t->name, mname(m));
        } else {
            t->unmatched_exits++;
        }
    } else {
        if (t->stack[t->depth - 1] != m)
            FAILK(F_NEST, "thread %s: METHOD_EXIT of %s (%p), but the innermost open frame is "
                  "%s (%p) at depth %d", t->name, mname(m), (void *)m,
                  mname(t->stack[t->depth - 1]), (void *)t->stack[t->depth - 1], t->depth);
        t->depth--;
    }
    struct mrec *r = watched(m);
    if (r == NULL)
        return;
    __atomic_add_fetch(&r->exit[t->cat], 1, __ATOMIC_RELAXED);
    struct mrec *cr = t->depth > 0 ? watched(t->stack[t->depth - 1]) : NULL;
    if (cr != NULL && cr->role == W_NATIVES)
        __atomic_add_fetch(&r->nat_exit[t->cat], 1, __ATOMIC_RELAXED);
    if (r->role == W_TOP && t->depth != t->top_d0)
        t->top_varied++;
}

/* ---- other events --------------------------------------------------------------------------- */

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if (cn == NULL)
        return;
    int all = strncmp(cn, "Exec", 4) == 0;
    const char *only = NULL;
    if (!strcmp(cn, "java.lang.System"))
        only = "nanoTime";
    else if (!strcmp(cn, "java.lang.Object"))
        only = "hashCode";
    else if (!strcmp(cn, "java.lang.Thread"))
        only = "currentThread";
    else if (!strcmp(cn, "java.util.zip.Adler32"))
        only = "update";
    if (!all && only == NULL)
        return;
    jvmpi->RawMonitorEnter(lock);
    if (!strcmp(cn, "ExecMethods"))
        execmethods_cid = ev->u.class_load.class_id;
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *mm = &ev->u.class_load.methods[i];
        if (mm->method_name == NULL || mm->method_signature == NULL)
            continue;
        if (all || !strcmp(mm->method_name, only))
            watch(mm->method_id, cn, mm->method_name, mm->method_signature);
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL)
        return;
    if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
        __sync_add_and_fetch(&unrequested_thread_starts, 1);
    if (jvmpi->GetThreadLocalStorage(env) != NULL)
        return;
    /* Started after JVM_INIT_DONE: it has no frame the agent did not see enter. */
    tstate_new(env, ev->u.thread_start.thread_name, init_done, 0);
}

static void on_thread_end(JVMPI_Event *ev)
{
    struct tstate *t = jvmpi->GetThreadLocalStorage(ev->env_id);
    if (t == NULL)
        return;
    t->ended = 1;
    t->end_depth = t->depth;
}

static void report(void)
{
    jvmpi->RawMonitorEnter(lock);
    for (size_t i = 0; i < WCAP; i++) {
        struct mrec *r = wvals[i];
        if (wkeys[i] == NULL || r == NULL)
            continue;
        int nat = r->role == W_NANO || r->role == W_HASH || r->role == W_CURTHR;
        for (int c = 0; c < NCAT; c++) {
            if (nat)
                say("native %s from=ExecMethods.natives thread=%s entry2=%ld entry=%ld exit=%ld",
                    r->name, cat_name[c], r->nat_entry2[c], r->nat_entry[c], r->nat_exit[c]);
            else if (r->entry[c] || r->entry2[c] || r->exit[c] || r->role != W_NONE)
                say("method %s thread=%s entry2=%ld entry=%ld exit=%ld", r->name,
                    cat_name[c], r->entry2[c], r->entry[c], r->exit[c]);
        }
    }
    for (int role = W_HIT; role <= W_THROWLOOP; role++)
        if (roles[role] == NULL)
            say("FAIL no CLASS_LOAD named the method of role %d", role);
    say("receiver inst=%p distinct_changes=%ld init=%p jni=%p hashCode_from_natives=%p "
        "hashCode_other_ids=%ld inst_is_jni=%d init_is_jni=%d hash_is_jni=%d",
        (void *)inst_recv, inst_recv_changes, (void *)init_recv, (void *)jni_recv,
        (void *)hash_recv, hash_recv_other, inst_recv != NULL && inst_recv == jni_recv,
        init_recv != NULL && init_recv == jni_recv, hash_recv != NULL && hash_recv == jni_recv);
    long e = 0, e2 = 0, x = 0, neg = 0, ended_unbalanced = 0;
    for (struct tstate *t = all_threads; t != NULL; t = t->next) {
        e += t->n_entry;
        e2 += t->n_entry2;
        x += t->n_exit;
        neg += t->negative;
        if (t->ended && t->end_depth != 0)
            ended_unbalanced++;
        say("thread name=%s cat=%s strict=%d lazy=%d ended=%d depth=%d end_depth=%d "
            "max_depth=%d entry2=%ld entry=%ld exit=%ld unmatched_exits=%ld negative=%ld",
            t->name, cat_name[t->cat], t->strict, t->lazy, t->ended, t->depth,
            t->ended ? t->end_depth : -1, t->max_depth, t->n_entry2, t->n_entry, t->n_exit,
            t->unmatched_exits, t->negative);
        if (t->top_calls)
            say("exc thread=%s top_calls=%ld top_depth=%d varied=%ld", t->name, t->top_calls,
                t->top_d0, t->top_varied);
    }
    say("totals entry2=%ld entry=%ld exit=%ld negative=%ld ended_unbalanced=%ld "
        "lazy_threads=%ld fails=%d", e2, e, x, neg, ended_unbalanced, lazy_threads,
        g_fails);
    for (int k = 0; k < NFAIL; k++)
        if (fail_counts[k])
            say("fails %s=%d", fail_name[k], fail_counts[k]);
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY2:
        on_entry2(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        on_entry(ev);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method_exit(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        main_env = ev->env_id;
        struct tstate *t = tstate_of(ev->env_id);
        t->cat = C_MAIN;
        say("init thread=%s depth=%d pending2=%d", t->name, t->depth, t->pending2 != NULL);
        if (t->depth == 0 && t->pending2 == NULL)
            t->strict = 1; /* main: every later frame is entered in the agent's view */
        init_done = 1;
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        report();
        break;
    default:
        FAIL("unexpected event %d", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && *options)
        snprintf(mode, sizeof mode, "%s", options);
    if (!strcmp(mode, "entry"))
        want_entry2 = 0;
    else if (!strcmp(mode, "entry2"))
        want_entry = 0;
    else if (strcmp(mode, "both")) {
        say("FAIL unknown mode %s", mode);
        return JNI_ERR;
    }
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_exec_methods_lock");
    jint ev[8];
    int n = 0;
    ev[n++] = JVMPI_EVENT_CLASS_LOAD;
    ev[n++] = JVMPI_EVENT_THREAD_START;
    ev[n++] = JVMPI_EVENT_THREAD_END;
    ev[n++] = JVMPI_EVENT_JVM_INIT_DONE;
    ev[n++] = JVMPI_EVENT_JVM_SHUT_DOWN;
    if (want_entry2)
        ev[n++] = JVMPI_EVENT_METHOD_ENTRY2;
    if (want_entry)
        ev[n++] = JVMPI_EVENT_METHOD_ENTRY;
    ev[n++] = JVMPI_EVENT_METHOD_EXIT;
    enable_events(ev, n, 1);
    say("loaded mode=%s", mode);
    return JNI_OK;
}
