/* racer.c — a JDK 1.3-style JVMPI agent that races the end of the VM.
 *
 * For tests/it/lifecycle/shutdown_races.sh, with the workload tests/java/Race.java (threads
 * "race-N" that call, allocate and lock in an endless loop). It enables THREAD_START/END,
 * METHOD_ENTRY/EXIT, OBJECT_ALLOC and CLASS_LOAD, keeps one record per thread in JVMPI
 * thread-local storage plus a table of them under a raw monitor, and spends `slow`
 * microseconds in every handler on a race thread, so that when the VM goes down the race
 * threads are in the middle of an event. Its JVM_SHUT_DOWN handler frees every record and
 * the table, poisons the memory and marks the agent dead, as agents of that era did. From
 * then on a handler entered on any thread is a violation, and so is a handler entered on
 * another thread while JVM_SHUT_DOWN runs, except the answer to a request that thread made
 * before the handler returned (HotSpot answered calls until disengage()); so is a handler
 * still running elsewhere when JVM_SHUT_DOWN begins (the shim drains deliveries in flight
 * first).
 *
 * daemons=N starts N system threads that call JVMPI without pause (RawMonitorEnter/Exit,
 * GetCallTrace of a race thread, GetCurrentThreadCpuTime, RequestEvent of THREAD_START and
 * CLASS_LOAD) before, during and after JVM_SHUT_DOWN. After the handler has returned their
 * calls must never come back (the shim parks them). That is checked without any clock: the
 * agent's atexit() handler, which runs once the VM is certainly past JVM_SHUT_DOWN, raises a
 * flag and waits `atexit` ms; a call that began with the flag up and returned is a
 * violation, as is an event delivered after it (this also covers ProfilerExit, which posts
 * no JVM_SHUT_DOWN).
 *
 * pexit=handler:N calls ProfilerExit(N) from a METHOD_ENTRY handler on race-0 once it has
 * had `after` events; pexit=thread:N from a system thread once the race threads have had
 * `after` events in all; pexit=shutdown:N from inside the JVM_SHUT_DOWN handler.
 *
 * Output: "racer: ..." lines on stdout, flushed at once; "racer: VIOLATION ..." for every
 * broken rule, "racer: FAIL ..." when the agent itself could not do its part. Each line is
 * repeated on stderr with the ms since JVM_OnLoad, to see where a slow run spent its time.
 * Options (comma-separated): slow=US (200), daemons=N (0), hold=MS (100, time the
 * JVM_SHUT_DOWN handler runs before it frees), atexit=MS (300), after=N (2000),
 * pexit=handler|thread|shutdown:CODE.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIT_MONOTONIC
#include "kit/jvm.h"

static int opt_slow = 200, opt_daemons, opt_hold = 100, opt_atexit = 300, opt_after = 2000;
static int pexit_where; /* 0 none, 1 handler, 2 thread, 3 shutdown */
static int pexit_code;

static long long t0_ms;

/* One line on stdout; with the ms since JVM_OnLoad on stderr, to see where a run spends
 * its time. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("racer: %s\n", line);
    fflush(stdout);
    fprintf(stderr, "racer: +%lld ms %.60s\n", now_ms() - t0_ms, line);
}

static volatile long violations;
#define VIOLATION(...)                                                                  \
    do {                                                                                \
        __sync_add_and_fetch(&violations, 1);                                           \
        say("VIOLATION " __VA_ARGS__);                                                  \
    } while (0)

static void spin_us(int us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* ---- the agent's state, freed and poisoned at JVM_SHUT_DOWN ---- */

struct trec {
    JNIEnv *env;
    char name[40];
    int race;           /* a "race-N" thread */
    int index;          /* N */
    long events;
};

#define MAXREC 4096
static JVMPI_RawMonitor g_mon;      /* guards g_recs / g_nrecs */
static struct trec **g_recs;        /* NULL once freed */
static int g_nrecs;

enum { LIVE, SHUTTING, DEAD };

/* g_phase when this daemon's RequestEvent began (-1: none under way). HotSpot answered a
 * call on the calling thread until disengage(), after the JVM_SHUT_DOWN handler: a request
 * made during the handler is answered on its own thread, and one under way when the
 * handler returns may still be; one begun after it must park. */
static __thread int call_phase = -1;
static volatile int g_phase = LIVE;
static pthread_t g_shut_thread;
static volatile int g_exit_marker;  /* set by the atexit handler: the VM is past shutdown */
static volatile int g_inflight, g_race_inflight;
static volatile long race_events, daemon_calls, daemon_calls_during, daemon_calls_after_marker;
static volatile int mid_event_at_exit = -1;
static volatile int pexit_called;
static jmethodID mid_about;         /* Race.aboutToExit, from its CLASS_LOAD */
static jobjectID main_thread_id, string_class_id;

static const char *event_name(jint t)
{
    switch (t) {
    case JVMPI_EVENT_METHOD_ENTRY: return "METHOD_ENTRY";
    case JVMPI_EVENT_METHOD_EXIT: return "METHOD_EXIT";
    case JVMPI_EVENT_OBJECT_ALLOC: return "OBJECT_ALLOC";
    case JVMPI_EVENT_THREAD_START: return "THREAD_START";
    case JVMPI_EVENT_THREAD_END: return "THREAD_END";
    case JVMPI_EVENT_CLASS_LOAD: return "CLASS_LOAD";
    case JVMPI_EVENT_JVM_INIT_DONE: return "JVM_INIT_DONE";
    case JVMPI_EVENT_JVM_SHUT_DOWN: return "JVM_SHUT_DOWN";
    default: return "other";
    }
}

/* ---- daemons: JVMPI calls through the end of the VM ---- */

/* A call that began once the process was exiting must not have come back. */
static void came_back(int began_after, const char *fn)
{
    if (began_after) {
        __sync_add_and_fetch(&daemon_calls_after_marker, 1);
        VIOLATION("%s, called after the VM was past JVM_SHUT_DOWN, returned", fn);
    }
}

static void daemon_main(void *arg)
{
    (void)arg;
    JVMPI_CallFrame frames[16];
    unsigned pick = 0;
    for (;;) {
        int after = g_exit_marker;
        jvmpi->RawMonitorEnter(g_mon);
        came_back(after, "RawMonitorEnter");
        JNIEnv *target = NULL;
        if (g_recs != NULL) { /* NULL once the shutdown handler freed the table */
            for (int k = 0; k < g_nrecs && target == NULL; k++) {
                struct trec *r = g_recs[(pick + (unsigned)k) % (unsigned)g_nrecs];
                if (r->race)
                    target = r->env;
            }
            pick++;
        }
        jvmpi->RawMonitorExit(g_mon);
        came_back(after, "RawMonitorExit");
        if (target != NULL) {
            JVMPI_CallTrace t = {target, 0, frames};
            jvmpi->GetCallTrace(&t, 16);
            came_back(after, "GetCallTrace");
        }
        (void)jvmpi->GetCurrentThreadCpuTime();
        came_back(after, "GetCurrentThreadCpuTime");
        call_phase = g_phase;
        (void)jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, main_thread_id);
        came_back(after, "RequestEvent(THREAD_START)");
        call_phase = g_phase;
        (void)jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, string_class_id);
        came_back(after, "RequestEvent(CLASS_LOAD)");
        call_phase = -1;
        __sync_add_and_fetch(&daemon_calls, 1);
        if (g_phase == SHUTTING)
            __sync_add_and_fetch(&daemon_calls_during, 1);
        usleep(200);
    }
}

static void exiter_main(void *arg)
{
    (void)arg;
    while (race_events < opt_after)
        usleep(1000);
    say("exiter calling ProfilerExit(%d) after %ld race events", pexit_code, race_events);
    pexit_called = 1;
    jvmpi->ProfilerExit(pexit_code);
    say("FAIL ProfilerExit returned on the exiter thread");
}

static void at_exit(void)
{
    /* Runs in exit(), after the VM's JVM_SHUT_DOWN (or ProfilerExit) is complete. */
    g_exit_marker = 1;
    __sync_synchronize();
    long before = daemon_calls;
    usleep((useconds_t)opt_atexit * 1000);
    say("atexit daemon_calls=%ld during_shutdown=%ld after_exit_began=%ld (calls completed in "
        "%d ms of exit: %ld) violations=%ld", daemon_calls, daemon_calls_during,
        daemon_calls_after_marker, opt_atexit, daemon_calls - before, violations);
}

/* ---- events ---- */

static void on_thread_start(JVMPI_Event *ev)
{
    struct trec *r = calloc(1, sizeof *r);
    if (r == NULL)
        return;
    r->env = ev->u.thread_start.thread_env_id;
    const char *n = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "";
    snprintf(r->name, sizeof r->name, "%s", n);
    r->race = strncmp(n, "race-", 5) == 0;
    r->index = r->race ? atoi(n + 5) : -1;
    if (strcmp(n, "main") == 0)
        main_thread_id = ev->u.thread_start.thread_id;
    jvmpi->SetThreadLocalStorage(r->env, r);
    jvmpi->RawMonitorEnter(g_mon);
    if (g_recs != NULL && g_nrecs < MAXREC)
        g_recs[g_nrecs++] = r;
    jvmpi->RawMonitorExit(g_mon);
}

static void on_class_load(JVMPI_Event *ev)
{
    if (ev->u.class_load.class_name == NULL || strcmp(ev->u.class_load.class_name, "Race") != 0)
        return;
    for (int i = 0; i < ev->u.class_load.num_methods; i++)
        if (strcmp(ev->u.class_load.methods[i].method_name, "aboutToExit") == 0)
            mid_about = ev->u.class_load.methods[i].method_id;
}

static void on_work_event(JVMPI_Event *ev, jint type)
{
    struct trec *r = jvmpi->GetThreadLocalStorage(ev->env_id);
    if (r == NULL)
        return;
    r->events++;
    if (type == JVMPI_EVENT_METHOD_ENTRY && mid_about != NULL &&
        ev->u.method.method_id == mid_about)
        mid_event_at_exit = g_race_inflight;
    if (!r->race)
        return;
    __sync_add_and_fetch(&g_race_inflight, 1);
    __sync_add_and_fetch(&race_events, 1);
    if (pexit_where == 1 && r->index == 0 && type == JVMPI_EVENT_METHOD_ENTRY &&
        r->events >= opt_after && !pexit_called) {
        pexit_called = 1;
        say("calling ProfilerExit(%d) in a METHOD_ENTRY handler on %s after %ld events "
            "(race threads in a handler: %d)", pexit_code, r->name, r->events, g_race_inflight);
        jvmpi->ProfilerExit(pexit_code);
        say("FAIL ProfilerExit returned in the handler");
    }
    spin_us(opt_slow);
    __sync_sub_and_fetch(&g_race_inflight, 1);
}

static void on_init_done(void)
{
    JNIEnv *jni = NULL;
    (*g_jvm)->GetEnv(g_jvm, (void **)&jni, JNI_VERSION_1_2);
    jclass sc = jni ? (*jni)->FindClass(jni, "java/lang/String") : NULL;
    string_class_id = sc ? jvmpi->jobject2jobjectID(sc) : NULL;
    if (main_thread_id == NULL || string_class_id == NULL)
        say("FAIL no id for main (%p) or String (%p)", (void *)main_thread_id,
            (void *)string_class_id);
    for (int i = 0; i < opt_daemons; i++) {
        char name[32];
        snprintf(name, sizeof name, "racer-daemon-%d", i);
        if (jvmpi->CreateSystemThread(name, JVMPI_NORMAL_PRIORITY, daemon_main) != JNI_OK)
            say("FAIL CreateSystemThread(%s)", name);
    }
    if (pexit_where == 2 &&
        jvmpi->CreateSystemThread("racer-exiter", JVMPI_NORMAL_PRIORITY, exiter_main) != JNI_OK)
        say("FAIL CreateSystemThread(racer-exiter)");
    say("JVM_INIT_DONE daemons=%d", opt_daemons);
}

static void on_shut_down(void)
{
    g_shut_thread = pthread_self();
    g_phase = SHUTTING;
    __sync_synchronize();
    int others = g_inflight - 1;
    if (others > 0)
        VIOLATION("%d handlers still running on other threads when JVM_SHUT_DOWN began", others);
    say("JVM_SHUT_DOWN race_events=%ld mid_event_at_exit=%d", race_events, mid_event_at_exit);
    if (pexit_where == 3) {
        say("calling ProfilerExit(%d) in the JVM_SHUT_DOWN handler", pexit_code);
        pexit_called = 1;
        jvmpi->ProfilerExit(pexit_code);
        say("FAIL ProfilerExit returned in the JVM_SHUT_DOWN handler");
    }
    usleep((useconds_t)opt_hold * 1000); /* daemons keep calling meanwhile */
    jvmpi->RawMonitorEnter(g_mon);
    struct trec **recs = g_recs;
    int n = g_nrecs;
    g_recs = NULL;
    g_nrecs = 0;
    for (int i = 0; i < n; i++) {
        jvmpi->SetThreadLocalStorage(recs[i]->env, NULL);
        memset(recs[i], 0xdd, sizeof *recs[i]);
        free(recs[i]);
    }
    memset(recs, 0xdd, sizeof *recs * MAXREC);
    free(recs);
    jvmpi->RawMonitorExit(g_mon);
    say("JVM_SHUT_DOWN handler returns freed=%d daemon_calls_during=%ld violations=%ld", n,
        daemon_calls_during, violations);
    __sync_synchronize();
    g_phase = DEAD;
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    __sync_add_and_fetch(&g_inflight, 1);
    int ph = g_phase;
    if (g_exit_marker)
        VIOLATION("%s delivered after the VM was past shutdown", event_name(type));
    else if (ph == DEAD && !(requested && call_phase != DEAD && call_phase != -1))
        VIOLATION("%s delivered after the JVM_SHUT_DOWN handler returned", event_name(type));
    else if (ph == SHUTTING && !requested && !pthread_equal(pthread_self(), g_shut_thread))
        VIOLATION("%s delivered on another thread during JVM_SHUT_DOWN", event_name(type));
    if (ph != LIVE || g_exit_marker) {
        /* The agent's state is gone: touch nothing. */
        __sync_sub_and_fetch(&g_inflight, 1);
        return;
    }
    switch (type) {
    case JVMPI_EVENT_THREAD_START:
        if (!requested)
            on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        break; /* the record stays in the table until JVM_SHUT_DOWN frees them all */
    case JVMPI_EVENT_CLASS_LOAD:
        if (!requested)
            on_class_load(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_work_event(ev, type);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        on_shut_down();
        break;
    default:
        break;
    }
    __sync_sub_and_fetch(&g_inflight, 1);
}

static void parse_options(const char *options)
{
    if (options == NULL)
        return;
    char *copy = strdup(options), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (strncmp(t, "slow=", 5) == 0)
            opt_slow = atoi(t + 5);
        else if (strncmp(t, "daemons=", 8) == 0)
            opt_daemons = atoi(t + 8);
        else if (strncmp(t, "hold=", 5) == 0)
            opt_hold = atoi(t + 5);
        else if (strncmp(t, "atexit=", 7) == 0)
            opt_atexit = atoi(t + 7);
        else if (strncmp(t, "after=", 6) == 0)
            opt_after = atoi(t + 6);
        else if (strncmp(t, "pexit=handler:", 14) == 0)
            pexit_where = 1, pexit_code = atoi(t + 14);
        else if (strncmp(t, "pexit=thread:", 13) == 0)
            pexit_where = 2, pexit_code = atoi(t + 13);
        else if (strncmp(t, "pexit=shutdown:", 15) == 0)
            pexit_where = 3, pexit_code = atoi(t + 15);
    }
    free(copy);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    g_jvm = jvm;
    t0_ms = now_ms();
    parse_options(options);
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("FAIL GetEnv(JVMPI_VERSION_1) failed");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    g_mon = jvmpi->RawMonitorCreate("racer_table");
    g_recs = calloc(MAXREC, sizeof *g_recs);
    static const jint events[] = {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN,
                                  JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                                  JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_METHOD_ENTRY,
                                  JVMPI_EVENT_METHOD_EXIT, JVMPI_EVENT_OBJECT_ALLOC};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS)
            say("FAIL EnableEvent(%s)", event_name(events[i]));
    atexit(at_exit);
    say("JVM_OnLoad slow=%d daemons=%d hold=%d pexit=%d:%d", opt_slow, opt_daemons, opt_hold,
        pexit_where, pexit_code);
    return JNI_OK;
}
