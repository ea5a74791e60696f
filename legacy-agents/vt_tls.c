/* vt_tls.c — a JDK 1.3-style thread-centric profiler: its table of per-thread records, each
 * kept in JVMPI thread-local storage (tests/it/threads/vthreads_tls.sh, workload
 * tests/java/VtWork.java).
 *
 * Enabled: THREAD_START, THREAD_END, METHOD_ENTRY, METHOD_EXIT, MONITOR_CONTENDED_ENTER,
 * MONITOR_CONTENDED_ENTERED, MONITOR_CONTENDED_EXIT, MONITOR_WAIT, MONITOR_WAITED,
 * CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN.
 * THREAD_START makes the thread's record, puts it in the agent's table (by thread_env_id,
 * the latest record of each env) and in SetThreadLocalStorage(thread_env_id). Every later
 * event reads its record with GetThreadLocalStorage(env_id) alone, as profilers did to avoid
 * a lock per event, and the agent checks (FAIL lines, the first 5 of each kind; counts in
 * the summary):
 *   no_record   no record: an event on an env that THREAD_START never announced, or whose
 *               storage was lost
 *   other_env   the record of another env
 *   reused      the record of a thread that has ended (storage that followed a reused env)
 *   stale_start a new thread's env already holding a record at its THREAD_START
 *   table       (workload methods, monitor events, CLASS_LOAD: under the agent's lock) the
 *               table's record for env_id is not the one in thread-local storage
 *   set         GetThreadLocalStorage right after SetThreadLocalStorage gives another value
 *   cpu_back    GetCurrentThreadCpuTime, read in every workload-method event and in the
 *               monitor events posted on the thread itself (all but CONTENDED_EXIT), smaller
 *               than the thread's previous reading (a thread's CPU time never goes back)
 *   waits       at THREAD_END of a worker: the MONITOR_WAITs, or the MONITOR_WAITEDs, that
 *               came while it was inside VtWork.waiting (which calls Object.wait once) differ
 *               from its calls of waiting; or its contended ENTERs from its ENTEREDs
 * Not failures, counted: MONITOR_CONTENDED_* on an env after its thread's THREAD_END and
 * before a new THREAD_START for it (HotSpot posted THREAD_END before the exiting thread
 * took its Thread object's lock to notify joiners: a contended enter could follow; the
 * storage then holds the ended record or nothing), and waits outside VtWork.waiting (the
 * JVM's own, e.g. for a class another thread initializes).
 * Per record: the entries of VtWork's methods, the monitor events, where VtWork$Once loaded.
 * At JVM_SHUT_DOWN:
 *   vt_tls: thread name=N body=.. sleepy=.. locked=.. synced=.. waiting=.. reading=.. leaf=..
 *       one per worker (a record that entered VtWork$Task.run), in VtWork's own format;
 *   vt_tls: CLASS_LOAD VtWork$Once on=NAME
 *   vt_tls: summary ...
 *   vt_tls: fails KIND=N       for every kind
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_NOREC, F_OTHER_ENV, F_REUSED, F_STALE, F_TABLE, F_SET, F_CPU, F_WAITS, F_OTHER, NFAIL };
static const char *fail_name[NFAIL] = {"no_record", "other_env", "reused", "stale_start", "table",
                                       "set", "cpu_back", "waits", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "vt_tls"
#define KIT_LINE 2048
#define FAIL(...) FAILK(F_OTHER, __VA_ARGS__)
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

/* ---- VtWork's methods, by role ---------------------------------------------------------- */

enum { R_NONE, R_RUN, R_BODY, R_SLEEPY, R_LOCKED, R_SYNCED, R_WAITING, R_READING, R_LEAF, NROLE };
static const char *role_name[NROLE] = {"-", "run", "body", "sleepy", "locked", "synced",
                                       "waiting", "reading", "leaf"};
/* method id -> role: written under lock by CLASS_LOAD, read without it (ids are announced
 * before they can be run, and a slot once written keeps its key) */
#define RCAP 256
static jmethodID rkeys[RCAP];
static int rvals[RCAP];

static size_t rslot(jmethodID m)
{
    unsigned long long x = (unsigned long long)(size_t)m;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (RCAP - 1);
}

static int role_of(jmethodID m)
{
    for (size_t i = rslot(m), n = 0; n < RCAP; i = (i + 1) & (RCAP - 1), n++) {
        jmethodID k = __atomic_load_n(&rkeys[i], __ATOMIC_ACQUIRE);
        if (k == m)
            return __atomic_load_n(&rvals[i], __ATOMIC_ACQUIRE);
        if (k == NULL)
            return R_NONE;
    }
    return R_NONE;
}

static void learn_class(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    int task = cn && strcmp(cn, "VtWork$Task") == 0;
    if (cn == NULL || (!task && strcmp(cn, "VtWork") != 0))
        return;
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        int r = R_NONE;
        if (task && strcmp(m->method_name, "run") == 0)
            r = R_RUN;
        for (int k = R_BODY; !task && k < NROLE; k++)
            if (strcmp(m->method_name, role_name[k]) == 0)
                r = k;
        if (r == R_NONE || role_of(m->method_id) != R_NONE)
            continue;
        size_t s = rslot(m->method_id);
        while (rkeys[s] != NULL)
            s = (s + 1) & (RCAP - 1);
        __atomic_store_n(&rvals[s], r, __ATOMIC_RELEASE);
        __atomic_store_n(&rkeys[s], m->method_id, __ATOMIC_RELEASE);
    }
}

/* ---- the per-thread records ------------------------------------------------------------- */

#define MAGIC 0x7e5d0c01u
struct rec {
    unsigned magic;
    JNIEnv *env;
    char name[80];
    int ended, in_waiting;
    long wl[NROLE];
    long events, mon_wait, mon_waited, cont_enter, cont_entered, cont_exit, stray_waits;
    jlong cpu_last;
    struct rec *next;
};
static struct rec *all;
static struct pmap table; /* env -> its latest record, ended or not; under lock */
static int nrecs;
static volatile long checked, after_end;
static char once_on[96] = "(no CLASS_LOAD of VtWork$Once)";

/* The record of this event's thread, from thread-local storage, checked; NULL if unusable.
 * with_table: also compare with the table (takes the lock); monitor: a CONTENDED event,
 * which may come on a thread after its THREAD_END (counted in after_end, NULL returned). */
static struct rec *rec_of(JVMPI_Event *ev, const char *what, int with_table, int monitor)
{
    struct rec *r = jvmpi->GetThreadLocalStorage(ev->env_id), *t = NULL;
    __sync_add_and_fetch(&checked, 1);
    if (with_table || monitor) {
        jvmpi->RawMonitorEnter(lock);
        t = pm_find(&table, ev->env_id);
        jvmpi->RawMonitorExit(lock);
        if (monitor && t != NULL && t->ended && (r == NULL || r == t)) {
            __sync_add_and_fetch(&after_end, 1);
            return NULL;
        }
    }
    if (r == NULL) {
        FAILK(F_NOREC, "%s on env %p: GetThreadLocalStorage gives no record", what,
              (void *)ev->env_id);
        return NULL;
    }
    if (r->magic != MAGIC) {
        FAILK(F_OTHER, "%s on env %p: GetThreadLocalStorage gives %p, not a record", what,
              (void *)ev->env_id, (void *)r);
        return NULL;
    }
    if (r->env != ev->env_id)
        FAILK(F_OTHER_ENV, "%s on env %p: its storage holds the record of env %p ('%s')", what,
              (void *)ev->env_id, (void *)r->env, r->name);
    if (r->ended)
        FAILK(F_REUSED, "%s on env %p: its storage holds the record of '%s', which has ended",
              what, (void *)ev->env_id, r->name);
    if (with_table && t != r)
        FAILK(F_TABLE, "%s on env %p: storage holds '%s', the table's record is '%s'", what,
              (void *)ev->env_id, r->name, t ? t->name : "(none)");
    return r;
}

static void cpu_check(struct rec *r, const char *what)
{
    jlong c = jvmpi->GetCurrentThreadCpuTime();
    if (c < r->cpu_last)
        FAILK(F_CPU, "%s on '%s': GetCurrentThreadCpuTime %lld ns, earlier %lld ns", what,
              r->name, (long long)c, (long long)r->cpu_last);
    else
        r->cpu_last = c;
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    const char *name = ev->u.thread_start.thread_name;
    if (env == NULL) {
        FAIL("THREAD_START %s with thread_env_id NULL", S(name));
        return;
    }
    struct rec *old = jvmpi->GetThreadLocalStorage(env);
    if (old != NULL)
        FAILK(F_STALE, "THREAD_START '%s' on env %p: its storage already holds %p ('%s')",
              S(name), (void *)env, (void *)old,
              old->magic == MAGIC ? old->name : "not a record");
    struct rec *r = calloc(1, sizeof *r);
    r->magic = MAGIC;
    r->env = env;
    snprintf(r->name, sizeof r->name, "%s", S(name));
    jvmpi->SetThreadLocalStorage(env, r);
    if (jvmpi->GetThreadLocalStorage(env) != r)
        FAILK(F_SET, "THREAD_START '%s': GetThreadLocalStorage right after "
              "SetThreadLocalStorage gives another value", r->name);
    jvmpi->RawMonitorEnter(lock);
    struct rec *was = pm_find(&table, env);
    if (was != NULL && !was->ended)
        FAIL("THREAD_START '%s' for env %p, whose thread '%s' has not ended", r->name,
             (void *)env, was->name);
    pm_put(&table, env, r);
    r->next = all;
    all = r;
    nrecs++;
    jvmpi->RawMonitorExit(lock);
}

static void on_thread_end(JVMPI_Event *ev)
{
    struct rec *r = rec_of(ev, "THREAD_END", 1, 0);
    if (r == NULL)
        return;
    if (r->wl[R_RUN] > 0 &&
        (r->mon_wait != r->wl[R_WAITING] || r->mon_waited != r->wl[R_WAITING] ||
         r->cont_enter != r->cont_entered))
        FAILK(F_WAITS, "worker '%s': %ld calls of waiting, in them %ld MONITOR_WAIT and %ld "
              "MONITOR_WAITED; %ld CONTENDED_ENTER, %ld CONTENDED_ENTERED", r->name,
              r->wl[R_WAITING], r->mon_wait, r->mon_waited, r->cont_enter, r->cont_entered);
    jvmpi->RawMonitorEnter(lock);
    r->ended = 1;
    jvmpi->RawMonitorExit(lock);
}

static void on_method(JVMPI_Event *ev, int entry)
{
    int role = role_of(ev->u.method.method_id);
    struct rec *r = rec_of(ev, entry ? "METHOD_ENTRY" : "METHOD_EXIT", role != R_NONE, 0);
    if (r == NULL)
        return;
    r->events++;
    if (role == R_NONE)
        return;
    if (entry)
        r->wl[role]++;
    if (role == R_WAITING)
        r->in_waiting += entry ? 1 : -1;
    cpu_check(r, entry ? "METHOD_ENTRY" : "METHOD_EXIT");
}

/* A monitor event: count it in the record of its thread. The CPU time is read in those
 * that HotSpot posted on the thread itself, not in CONTENDED_EXIT (JVMTI has no such event:
 * the owner's EXIT may be posted by the thread that entered next, with the owner's env_id). */
enum { M_WAIT, M_WAITED, M_ENTER, M_ENTERED, M_EXIT };
static void on_monitor(JVMPI_Event *ev, const char *what, int kind)
{
    struct rec *r = rec_of(ev, what, 1, kind >= M_ENTER);
    if (r == NULL)
        return;
    r->events++;
    long *n[] = {&r->mon_wait, &r->mon_waited, &r->cont_enter, &r->cont_entered, &r->cont_exit};
    if (kind <= M_WAITED && r->in_waiting <= 0)
        r->stray_waits++;
    else
        (*n[kind])++;
    if (kind != M_EXIT)
        cpu_check(r, what);
}

static void report(void)
{
    jvmpi->RawMonitorEnter(lock);
    int workers = 0, ended = 0;
    long w_wait = 0, w_waited = 0, w_enter = 0, w_entered = 0, o_wl = 0, stray = 0;
    for (struct rec *r = all; r != NULL; r = r->next) {
        if (r->wl[R_RUN] == 0) {
            for (int k = R_BODY; k < NROLE; k++)
                o_wl += r->wl[k];
            continue;
        }
        workers++;
        ended += r->ended;
        stray += r->stray_waits;
        w_wait += r->mon_wait;
        w_waited += r->mon_waited;
        w_enter += r->cont_enter;
        w_entered += r->cont_entered;
        say("thread name=%s body=%ld sleepy=%ld locked=%ld synced=%ld waiting=%ld reading=%ld "
            "leaf=%ld", r->name, r->wl[R_BODY], r->wl[R_SLEEPY], r->wl[R_LOCKED],
            r->wl[R_SYNCED], r->wl[R_WAITING], r->wl[R_READING], r->wl[R_LEAF]);
    }
    say("CLASS_LOAD VtWork$Once on=%s", once_on);
    say("summary records=%d workers=%d workers_ended=%d checked=%ld worker_monitor_wait=%ld "
        "worker_monitor_waited=%ld worker_contended_enter=%ld worker_contended_entered=%ld "
        "worker_stray_waits=%ld monitor_after_end=%ld nonworker_workload_entries=%ld fails=%d",
        nrecs, workers, ended, checked, w_wait, w_waited, w_enter, w_entered, stray, after_end,
        o_wl, g_fails);
    for (int k = 0; k < NFAIL; k++)
        say("fails %s=%d", fail_name[k], fail_counts[k]);
    jvmpi->RawMonitorExit(lock);
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
    case JVMPI_EVENT_MONITOR_WAIT:
        on_monitor(ev, "MONITOR_WAIT", M_WAIT);
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        on_monitor(ev, "MONITOR_WAITED", M_WAITED);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        on_monitor(ev, "MONITOR_CONTENDED_ENTER", M_ENTER);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        on_monitor(ev, "MONITOR_CONTENDED_ENTERED", M_ENTERED);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        on_monitor(ev, "MONITOR_CONTENDED_EXIT", M_EXIT);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *cn = ev->u.class_load.class_name;
        if (ev->event_type & JVMPI_REQUESTED_EVENT)
            break;
        jvmpi->RawMonitorEnter(lock);
        learn_class(ev);
        jvmpi->RawMonitorExit(lock);
        if (cn != NULL && strcmp(cn, "VtWork$Once") == 0) {
            struct rec *r = rec_of(ev, "CLASS_LOAD", 1, 0);
            snprintf(once_on, sizeof once_on, "%s", r ? r->name : "(no record)");
        }
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        rec_of(ev, "JVM_INIT_DONE", 1, 0);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        report();
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
    lock = jvmpi->RawMonitorCreate("_vt_tls_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
                              JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_METHOD_ENTRY,
                              JVMPI_EVENT_METHOD_EXIT, JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                              JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                              JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
                              JVMPI_EVENT_MONITOR_WAITED};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
