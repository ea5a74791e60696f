/* vt_tracer.c — a JDK 1.3-style shadow-stack tracer: a stack per env_id from METHOD_ENTRY and
 * METHOD_EXIT (tests/it/threads/vthreads_trace.sh, workload tests/java/VtWork.java).
 *
 * Enabled: THREAD_START, THREAD_END, METHOD_ENTRY, METHOD_EXIT, CLASS_LOAD, JVM_INIT_DONE,
 * JVM_SHUT_DOWN. One global lock around every event, as tracers of the time had.
 * THREAD_START creates the thread's record and its empty stack, keyed by thread_env_id in
 * the agent's own table (not thread-local storage); METHOD_ENTRY pushes the method,
 * METHOD_EXIT pops it. Counted, per record and in total:
 *   mismatches     an EXIT whose method is not the top of its env's stack (the agent then
 *                  unwinds to the method if it is deeper in the stack, as trace readers did)
 *   empty_exits    an EXIT on an empty stack of a thread that started after JVM_INIT_DONE, or
 *                  of main (empty at JVM_INIT_DONE): it cannot have older frames
 *   old_exits      the same on a thread that existed before the agent (Reference Handler,
 *                  ...): frames entered before the events were on; no failure
 *   unstarted      events on an env_id with no THREAD_START (or after its THREAD_END)
 *   dup_starts     a THREAD_START for an env_id whose thread has not ended
 *   end_open       a THREAD_END of a thread that started after JVM_INIT_DONE with frames
 *                  still on its stack
 * and per record the entries and exits of VtWork's methods (Task.run, body, the five
 * middle methods, leaf), looked up by the method ids CLASS_LOAD gave. "FAIL" lines (the
 * first 5 of each kind) as they happen.
 * At JVM_SHUT_DOWN, for the test:
 *   vt_tracer: thread name=N body=.. sleepy=.. locked=.. synced=.. waiting=.. reading=.. leaf=..
 *       one per worker (a record that entered VtWork$Task.run), in VtWork's own format;
 *   vt_tracer: worker-group group=G parent=P count=N   (THREAD_START's names of the workers)
 *   vt_tracer: other name=N strict=S ended=E entries=.. exits=.. mismatches=.. empty_exits=..
 *       old_exits=.. workload_events=..               one per non-worker thread
 *   vt_tracer: summary ...
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_MISMATCH, F_EMPTY, F_UNSTARTED, F_DUP, F_END, F_OTHER, NFAIL };
static const char *fail_name[NFAIL] = {"mismatch", "empty_exit", "unstarted", "dup_start",
                                       "end", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "vt_tracer"
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
static struct pmap roles; /* method id -> (void *)role */
static int roles_seen;

static void learn_class(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if (cn == NULL)
        return;
    int task = strcmp(cn, "VtWork$Task") == 0;
    if (!task && strcmp(cn, "VtWork") != 0)
        return;
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        int r = R_NONE;
        if (task && strcmp(m->method_name, "run") == 0)
            r = R_RUN;
        for (int k = R_BODY; !task && k < NROLE; k++)
            if (strcmp(m->method_name, role_name[k]) == 0)
                r = k;
        if (r != R_NONE) {
            pm_put(&roles, m->method_id, (void *)(long)r);
            roles_seen++;
        }
    }
}

static int role_of(jmethodID m)
{
    return (int)(long)pm_find(&roles, m);
}

/* ---- threads ---------------------------------------------------------------------------- */

struct thr {
    JNIEnv *env;
    char name[80], group[80], parent[80];
    int strict, ended;
    jmethodID *stack;
    int depth, cap, end_depth;
    long entries, exits, mismatches, empty_exits, old_exits;
    long wl_entry[NROLE], wl_exit[NROLE];
    struct thr *next;
};
static struct thr *all;
static struct pmap live; /* env -> live record (NULL once ended) */
static int init_done, nthreads;
static long unstarted, null_env, dup_starts, unknown_ends, end_open;

static struct thr *live_of(JNIEnv *env)
{
    return pm_find(&live, env);
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    const char *name = ev->u.thread_start.thread_name;
    if (env == NULL) {
        FAIL("THREAD_START %s with thread_env_id NULL", S(name));
        return;
    }
    struct thr *old = live_of(env);
    if (old != NULL) {
        dup_starts++;
        FAILK(F_DUP, "THREAD_START '%s' for env %p, whose thread '%s' has not ended", S(name),
              (void *)env, old->name);
        old->ended = 1;
    }
    struct thr *t = calloc(1, sizeof *t);
    t->env = env;
    snprintf(t->name, sizeof t->name, "%s", S(name));
    snprintf(t->group, sizeof t->group, "%s", S(ev->u.thread_start.group_name));
    snprintf(t->parent, sizeof t->parent, "%s", S(ev->u.thread_start.parent_name));
    t->strict = init_done;
    t->cap = 64;
    t->stack = malloc(sizeof *t->stack * (size_t)t->cap);
    t->next = all;
    all = t;
    nthreads++;
    pm_put(&live, env, t);
}

static void on_thread_end(JVMPI_Event *ev)
{
    struct thr *t = live_of(ev->env_id);
    if (t == NULL) {
        unknown_ends++;
        FAILK(F_END, "THREAD_END '%s' on env %p with no live THREAD_START",
              S(ev->u.thread_start.thread_name), (void *)ev->env_id);
        return;
    }
    t->ended = 1;
    t->end_depth = t->depth;
    if (t->strict && t->depth != 0) {
        end_open++;
        FAILK(F_END, "THREAD_END of '%s' with %d frames still on its stack", t->name, t->depth);
    }
    pm_put(&live, ev->env_id, NULL);
}

/* The record of an event's env, or NULL (counted) when no THREAD_START named it. */
static struct thr *thread_of(JVMPI_Event *ev, const char *what)
{
    if (ev->env_id == NULL) {
        null_env++;
        return NULL;
    }
    struct thr *t = live_of(ev->env_id);
    if (t == NULL) {
        unstarted++;
        FAILK(F_UNSTARTED, "%s on env %p, which no THREAD_START announced (or already ended)",
              what, (void *)ev->env_id);
    }
    return t;
}

static void on_method_entry(JVMPI_Event *ev)
{
    struct thr *t = thread_of(ev, "METHOD_ENTRY");
    if (t == NULL)
        return;
    jmethodID m = ev->u.method.method_id;
    if (t->depth == t->cap) {
        t->cap *= 2;
        t->stack = realloc(t->stack, sizeof *t->stack * (size_t)t->cap);
    }
    t->stack[t->depth++] = m;
    t->entries++;
    t->wl_entry[role_of(m)]++;
}

static void on_method_exit(JVMPI_Event *ev)
{
    struct thr *t = thread_of(ev, "METHOD_EXIT");
    if (t == NULL)
        return;
    jmethodID m = ev->u.method.method_id;
    int r = role_of(m);
    t->exits++;
    t->wl_exit[r]++;
    if (t->depth == 0) {
        if (t->strict) {
            t->empty_exits++;
            FAILK(F_EMPTY, "thread '%s': METHOD_EXIT (%s %p) on an empty stack", t->name,
                  role_name[r], (void *)m);
        } else {
            t->old_exits++;
        }
        return;
    }
    if (t->stack[t->depth - 1] == m) {
        t->depth--;
        return;
    }
    t->mismatches++;
    FAILK(F_MISMATCH, "thread '%s': METHOD_EXIT of %s %p, but the top of its stack is %s %p "
          "(depth %d)", t->name, role_name[r], (void *)m, role_name[role_of(t->stack[t->depth - 1])],
          (void *)t->stack[t->depth - 1], t->depth);
    for (int d = t->depth - 2; d >= 0; d--)
        if (t->stack[d] == m) {
            t->depth = d;
            break;
        }
}

/* ---- the report ------------------------------------------------------------------------- */

static long wl_events(struct thr *t)
{
    long n = 0;
    for (int r = R_RUN; r < NROLE; r++)
        n += t->wl_entry[r] + t->wl_exit[r];
    return n;
}

static void report(void)
{
    struct grp {
        char group[80], parent[80];
        int n;
    } g[16];
    int ng = 0, workers = 0, workers_ended = 0, workers_strict = 0;
    long unbalanced = 0, e = 0, x = 0, mm = 0, ee = 0, w_mm = 0, w_ee = 0, w_open = 0;
    for (struct thr *t = all; t != NULL; t = t->next) {
        e += t->entries;
        x += t->exits;
        mm += t->mismatches;
        ee += t->empty_exits;
        if (t->wl_entry[R_RUN] == 0) {
            say("other name=%s strict=%d ended=%d entries=%ld exits=%ld mismatches=%ld "
                "empty_exits=%ld old_exits=%ld workload_events=%ld", t->name, t->strict,
                t->ended, t->entries, t->exits, t->mismatches, t->empty_exits, t->old_exits,
                wl_events(t));
            continue;
        }
        workers++;
        workers_ended += t->ended;
        workers_strict += t->strict;
        w_mm += t->mismatches;
        w_ee += t->empty_exits;
        if (t->ended && t->end_depth != 0)
            w_open++;
        for (int r = R_RUN; r < NROLE; r++)
            if (t->wl_entry[r] != t->wl_exit[r]) {
                unbalanced++;
                FAIL("worker '%s': %ld entries of %s, %ld exits", t->name, t->wl_entry[r],
                     role_name[r], t->wl_exit[r]);
            }
        say("thread name=%s body=%ld sleepy=%ld locked=%ld synced=%ld waiting=%ld reading=%ld "
            "leaf=%ld", t->name, t->wl_entry[R_BODY], t->wl_entry[R_SLEEPY],
            t->wl_entry[R_LOCKED], t->wl_entry[R_SYNCED], t->wl_entry[R_WAITING],
            t->wl_entry[R_READING], t->wl_entry[R_LEAF]);
        int k;
        for (k = 0; k < ng; k++)
            if (!strcmp(g[k].group, t->group) && !strcmp(g[k].parent, t->parent))
                break;
        if (k == ng && ng < 16) {
            snprintf(g[k].group, sizeof g[k].group, "%s", t->group);
            snprintf(g[k].parent, sizeof g[k].parent, "%s", t->parent);
            g[k].n = 0;
            ng++;
        }
        if (k < ng)
            g[k].n++;
    }
    for (int k = 0; k < ng; k++)
        say("worker-group group=%s parent=%s count=%d", g[k].group, g[k].parent, g[k].n);
    say("summary threads=%d workers=%d workers_strict=%d workers_ended=%d workers_end_open=%ld "
        "worker_mismatches=%ld worker_empty_exits=%ld workload_unbalanced=%ld entries=%ld "
        "exits=%ld mismatches=%ld empty_exits=%ld unstarted=%ld null_env=%ld dup_starts=%ld "
        "unknown_ends=%ld end_open=%ld roles=%d fails=%d", nthreads, workers, workers_strict,
        workers_ended, w_open, w_mm, w_ee, unbalanced, e, x, mm, ee, unstarted, null_env,
        dup_starts, unknown_ends, end_open, roles_seen, g_fails);
    for (int k = 0; k < NFAIL; k++)
        if (fail_counts[k])
            say("fails %s=%d", fail_name[k], fail_counts[k]);
}

static void notify(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY:
        on_method_entry(ev);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method_exit(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        learn_class(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        struct thr *t = thread_of(ev, "JVM_INIT_DONE");
        if (t != NULL && t->depth == 0)
            t->strict = 1; /* main: every later frame is entered in the agent's view */
        say("init thread=%s depth=%d", t ? t->name : "?", t ? t->depth : -1);
        init_done = 1;
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        report();
        break;
    default:
        FAIL("event %d was never enabled", (int)ev->event_type);
    }
    jvmpi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_vt_tracer_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
                              JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_METHOD_ENTRY,
                              JVMPI_EVENT_METHOD_EXIT};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
