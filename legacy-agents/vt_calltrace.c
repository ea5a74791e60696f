/* vt_calltrace.c — a JDK 1.3-style sampling profiler that walks stacks with GetCallTrace: its
 * own thread's inside events, and other threads' after SuspendThread from a sampler thread
 * (tests/it/threads/vthreads_calltrace.sh, workload tests/java/VtWork.java).
 *
 * Enabled: THREAD_START, THREAD_END, METHOD_ENTRY, METHOD_EXIT, CLASS_LOAD, JVM_INIT_DONE,
 * JVM_SHUT_DOWN. Methods are known by the ids CLASS_LOAD gave (one global lock around the
 * agent's tables). THREAD_START makes the thread's record: in the agent's table by
 * thread_env_id and in SetThreadLocalStorage(thread_env_id).
 *
 * VtWork's method structure gives what a stack must look like: workers run
 * VtWork$Task.run -> VtWork.body -> one of the middle methods (sleepy, locked, synced,
 * waiting, reading) -> VtWork.leaf, each calling the next directly; above a middle method
 * there may be JDK frames (where it blocks), below Task.run only the thread's own start-up
 * frames, never the carrier's (ForkJoinPool, ForkJoinWorkerThread, CarrierThread).
 *  - In METHOD_ENTRY of VtWork.leaf: GetCallTrace(env_id of the event, 64) must give leaf,
 *    a middle method, body, Task.run on top, in that order, and no carrier frame below; and
 *    GetThreadLocalStorage(env_id) the record of that env ("self" checks).
 *  - A sampler thread (CreateSystemThread at JVM_INIT_DONE) wakes every 2 ms and, holding
 *    the agent's lock (so no sampled thread can end meanwhile), takes up to 8 workers that
 *    are inside Task.run (between the METHOD_ENTRY and METHOD_EXIT of Task.run), in turn:
 *    SuspendThread, GetThreadStatus (one of RUNNABLE, MONITOR_WAIT, CONDVAR_WAIT),
 *    GetThreadLocalStorage (the record of that env), GetCallTrace(env, 128), ResumeThread.
 *    The trace must hold Task.run, the workload frames on it must follow the structure
 *    above, and no carrier frame may lie below Task.run. Samples whose top workload frame is
 *    a middle method under JDK frames are counted as "blocked" (a virtual thread there is
 *    unmounted: sleeping, parked on the lock or the pipe, waiting).
 * FAIL lines (the first 5 of each kind) as they happen. At JVM_SHUT_DOWN:
 *   vt_calltrace: thread name=N leaf=..   one per worker: its self-checked leaf entries
 *   vt_calltrace: blocked sleepy=.. locked=.. synced=.. waiting=.. reading=..
 *   vt_calltrace: statuses runnable=.. monitor_wait=.. condvar_wait=..   (of the samples)
 *   vt_calltrace: summary ...
 *   vt_calltrace: fails KIND=N            for every kind
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_SELF, F_SELF_TLS, F_STATUS, F_TLS, F_EMPTY, F_NORUN, F_CHAIN, F_CARRIER, F_OTHER,
       NFAIL };
static const char *fail_name[NFAIL] = {"self", "self_tls", "status", "tls", "empty", "no_run",
                                       "chain", "carrier", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "vt_calltrace"
#define KIT_LINE 4096
#define FAIL(...) FAILK(F_OTHER, __VA_ARGS__)
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

/* ---- methods ---------------------------------------------------------------------------- */

enum { R_NONE, R_RUN, R_BODY, R_SLEEPY, R_LOCKED, R_SYNCED, R_WAITING, R_READING, R_LEAF, NROLE };
static const char *role_name[NROLE] = {"-", "run", "body", "sleepy", "locked", "synced",
                                       "waiting", "reading", "leaf"};
#define IS_MIDDLE(r) ((r) >= R_SLEEPY && (r) <= R_READING)

struct meth {
    const char *cls, *name;
    int role, carrier;
};
static struct pmap methods; /* method id -> struct meth; under lock */
static int roles_seen;

static void learn_class(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if (cn == NULL)
        return;
    char *cls = strdup(cn);
    int task = strcmp(cn, "VtWork$Task") == 0, work = strcmp(cn, "VtWork") == 0;
    int carrier = strncmp(cn, "java.util.concurrent.ForkJoin", 29) == 0 ||
                  strcmp(cn, "jdk.internal.misc.CarrierThread") == 0;
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *mm = &ev->u.class_load.methods[i];
        struct meth *m = calloc(1, sizeof *m);
        m->cls = cls;
        m->name = strdup(mm->method_name ? mm->method_name : "?");
        m->carrier = carrier;
        if (task && strcmp(m->name, "run") == 0)
            m->role = R_RUN;
        for (int k = R_BODY; work && k < NROLE; k++)
            if (strcmp(m->name, role_name[k]) == 0)
                m->role = k;
        roles_seen += m->role != R_NONE;
        pm_put(&methods, mm->method_id, m);
    }
}

/* Under lock. */
static int role_of(jmethodID id)
{
    struct meth *m = pm_find(&methods, id);
    return m ? m->role : R_NONE;
}

/* ---- threads ---------------------------------------------------------------------------- */

struct thr {
    JNIEnv *env;
    char name[80];
    int ended, in_run;
    long leaf_checks, samples;
};
#define MAXT 8192
static struct thr *T[MAXT];
static int nT;
static struct pmap live; /* env -> live record; under lock */
static volatile int stop;
static long samples, samples_workload, samples_blocked, blocked_by[NROLE], sample_rounds;
static long self_checks, statuses[4];

/* Is this trace shaped as VtWork's structure allows? Under lock. Returns 0 if so, else
 * the failure kind, with the reason in why; *has_run and *blocked_role describe it. */
static int judge(JVMPI_CallFrame *f, int n, char *why, size_t wn, int *has_run, int *blocked_role)
{
    *has_run = 0;
    *blocked_role = R_NONE;
    int w = 0;
    while (w < n && role_of(f[w].method_id) == R_NONE)
        w++;
    if (w == n) {
        snprintf(why, wn, "no frame of VtWork$Task.run in %d frames", n);
        return F_NORUN;
    }
    int r = role_of(f[w].method_id), k = w;
    /* the chain leaf? middle? body? run, directly adjacent */
    static const int order[] = {R_LEAF, -1 /* middle */, R_BODY, R_RUN};
    int step = r == R_LEAF ? 0 : IS_MIDDLE(r) ? 1 : r == R_BODY ? 2 : 3;
    for (; step < 4; step++, k++) {
        int got = k < n ? role_of(f[k].method_id) : -1;
        int ok = order[step] == -1 ? IS_MIDDLE(got) : got == order[step];
        if (!ok) {
            snprintf(why, wn, "frame %d is %s, expected %s (top workload frame %d: %s)", k,
                     got < 0 ? "missing" : role_name[got],
                     order[step] == -1 ? "a middle method" : role_name[order[step]], w,
                     role_name[r]);
            return got < 0 || step == 3 ? F_NORUN : F_CHAIN;
        }
    }
    *has_run = 1;
    if (IS_MIDDLE(r) && w > 0)
        *blocked_role = r;
    for (; k < n; k++) {
        struct meth *m = pm_find(&methods, f[k].method_id);
        if (m != NULL && m->carrier) {
            snprintf(why, wn, "frame %d below Task.run is the carrier's %s.%s", k, m->cls, m->name);
            return F_CARRIER;
        }
        if (m != NULL && m->role != R_NONE) {
            snprintf(why, wn, "frame %d below Task.run is VtWork's %s", k, role_name[m->role]);
            return F_CHAIN;
        }
    }
    return 0;
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL)
        return;
    struct thr *t = calloc(1, sizeof *t);
    t->env = env;
    snprintf(t->name, sizeof t->name, "%s", S(ev->u.thread_start.thread_name));
    jvmpi->SetThreadLocalStorage(env, t);
    jvmpi->RawMonitorEnter(lock);
    if (nT < MAXT)
        T[nT++] = t;
    else
        FAIL("more than %d threads", MAXT);
    pm_put(&live, env, t);
    jvmpi->RawMonitorExit(lock);
}

static void on_thread_end(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    struct thr *t = pm_find(&live, ev->env_id);
    if (t != NULL) {
        t->ended = 1;
        t->in_run = 0;
        pm_put(&live, ev->env_id, NULL);
    }
    jvmpi->RawMonitorExit(lock);
}

/* METHOD_ENTRY of VtWork.leaf: the thread's own trace, and its storage. */
static void self_check(JVMPI_Event *ev)
{
    JVMPI_CallFrame f[64];
    JVMPI_CallTrace tr;
    tr.env_id = ev->env_id;
    tr.frames = f;
    tr.num_frames = 0;
    jvmpi->GetCallTrace(&tr, 64);
    struct thr *tls = jvmpi->GetThreadLocalStorage(ev->env_id);
    char why[512];
    int has_run, blocked;
    jvmpi->RawMonitorEnter(lock);
    self_checks++;
    struct thr *t = pm_find(&live, ev->env_id);
    if (tls != t)
        FAILK(F_SELF_TLS, "in leaf on env %p: GetThreadLocalStorage gives %p ('%s'), the "
              "table's live thread is '%s'", (void *)ev->env_id, (void *)tls,
              tls ? tls->name : "", t ? t->name : "(none)");
    int k = judge(f, tr.num_frames, why, sizeof why, &has_run, &blocked);
    if (k == 0 && (tr.num_frames < 4 || role_of(f[0].method_id) != R_LEAF)) {
        snprintf(why, sizeof why, "the top frame is %s, not leaf",
                 tr.num_frames ? role_name[role_of(f[0].method_id)] : "missing");
        k = F_SELF;
    }
    if (k != 0)
        FAILK(k == F_CARRIER ? F_CARRIER : F_SELF, "own trace in leaf of '%s' (%d frames): %s",
              t ? t->name : "?", (int)tr.num_frames, why);
    if (t != NULL)
        t->leaf_checks++;
    jvmpi->RawMonitorExit(lock);
}

static void on_method(JVMPI_Event *ev, int entry)
{
    jvmpi->RawMonitorEnter(lock);
    int r = role_of(ev->u.method.method_id);
    if (r == R_RUN) {
        struct thr *t = pm_find(&live, ev->env_id);
        if (t != NULL)
            t->in_run = entry;
    }
    jvmpi->RawMonitorExit(lock);
    if (entry && r == R_LEAF)
        self_check(ev);
}

/* ---- the sampler ------------------------------------------------------------------------ */

/* Under lock: suspend, look, resume one worker. */
static void sample(struct thr *t)
{
    JVMPI_CallFrame f[128];
    JVMPI_CallTrace tr;
    jvmpi->SuspendThread(t->env);
    jint st = jvmpi->GetThreadStatus(t->env);
    struct thr *tls = jvmpi->GetThreadLocalStorage(t->env);
    tr.env_id = t->env;
    tr.frames = f;
    tr.num_frames = 0;
    jvmpi->GetCallTrace(&tr, 128);
    jvmpi->ResumeThread(t->env);

    samples++;
    t->samples++;
    jint base = st & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
    if (base != JVMPI_THREAD_RUNNABLE && base != JVMPI_THREAD_MONITOR_WAIT &&
        base != JVMPI_THREAD_CONDVAR_WAIT)
        FAILK(F_STATUS, "suspended '%s': GetThreadStatus gives %#x, no JVMPI thread status",
              t->name, (unsigned)st);
    else
        statuses[base]++;
    if (tls != t)
        FAILK(F_TLS, "GetThreadLocalStorage(env of '%s') from the sampler gives %p ('%s')",
              t->name, (void *)tls, tls ? tls->name : "");
    if (tr.num_frames <= 0) {
        FAILK(F_EMPTY, "suspended '%s', inside Task.run: GetCallTrace gives %d frames", t->name,
              (int)tr.num_frames);
        return;
    }
    char why[512];
    int has_run, blocked;
    int k = judge(f, tr.num_frames, why, sizeof why, &has_run, &blocked);
    if (k != 0)
        FAILK(k, "suspended '%s', inside Task.run (%d frames): %s", t->name, (int)tr.num_frames,
              why);
    samples_workload += has_run;
    if (blocked != R_NONE) {
        samples_blocked++;
        blocked_by[blocked]++;
    }
}

static void sampler(void *arg)
{
    (void)arg;
    int cursor = 0;
    jvmpi->RawMonitorEnter(lock);
    while (!stop) {
        jvmpi->RawMonitorWait(lock, 2);
        if (stop)
            break;
        sample_rounds++;
        for (int n = 0, seen = 0; n < 8 && seen < nT; seen++) {
            cursor = (cursor + 1) % nT;
            struct thr *t = T[cursor];
            if (!t->ended && t->in_run) {
                sample(t);
                n++;
            }
        }
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- the report ------------------------------------------------------------------------- */

static void report(void)
{
    int workers = 0, sampled = 0;
    long leaf = 0;
    for (int i = 0; i < nT; i++) {
        struct thr *t = T[i];
        if (t->leaf_checks == 0)
            continue;
        workers++;
        sampled += t->samples > 0;
        leaf += t->leaf_checks;
        say("thread name=%s leaf=%ld", t->name, t->leaf_checks);
    }
    say("blocked sleepy=%ld locked=%ld synced=%ld waiting=%ld reading=%ld", blocked_by[R_SLEEPY],
        blocked_by[R_LOCKED], blocked_by[R_SYNCED], blocked_by[R_WAITING], blocked_by[R_READING]);
    say("statuses runnable=%ld monitor_wait=%ld condvar_wait=%ld", statuses[1], statuses[2],
        statuses[3]);
    say("summary threads=%d workers=%d workers_sampled=%d self_checks=%ld leaf_checks=%ld "
        "rounds=%ld samples=%ld samples_with_run=%ld samples_blocked=%ld roles=%d fails=%d", nT,
        workers, sampled, self_checks, leaf, sample_rounds, samples, samples_workload,
        samples_blocked, roles_seen, g_fails);
    for (int k = 0; k < NFAIL; k++)
        say("fails %s=%d", fail_name[k], fail_counts[k]);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY:
        on_method(ev, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method(ev, 0);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        jvmpi->RawMonitorEnter(lock);
        learn_class(ev);
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("vt_calltrace sampler", JVMPI_NORMAL_PRIORITY, sampler) !=
            JNI_OK)
            FAIL("CreateSystemThread(sampler) failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        stop = 1;
        jvmpi->RawMonitorNotifyAll(lock);
        report();
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        FAIL("event %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_vt_calltrace_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
                              JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_METHOD_ENTRY,
                              JVMPI_EVENT_METHOD_EXIT};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
