/* bcalls.c — the JVMPI calls agents make around every event, timed against their native floor.
 *
 * A JDK 1.3-style JVMPI agent (JVM_OnLoad, GetEnv(JVMPI_VERSION_1), a NotifyEvent switch,
 * jvmpi.h, libc and pthreads). It collects method ids and class ids from CLASS_LOAD, and in
 * its JVM_INIT_DONE handler (on the main thread, before main runs) times, side by side in
 * the same process, round after round with the order alternating:
 *   rawmon     RawMonitorEnter+Exit on one monitor, uncontended, against pthread_mutex_lock+
 *              unlock (goal: raw <= 2 x mutex + 10 ns)
 *   contend1   8 threads each taking one shared monitor (and incrementing a counter inside)
 *              against the same with one pthread mutex (goal: raw / mutex <= 1.5)
 *   contend8   8 threads each on a monitor of its own, against 8 mutexes (goal <= 1.5)
 *   contend1work  contend1 with a busy loop of 100 iterations inside, so that threads
 *              find the lock taken more often and sleep: the blocking paths, not the calls
 *   gmc        GetMethodClass over 512 method ids, round robin (goal: <= 50 ns a call)
 *   cputime    GetCurrentThreadCpuTime against clock_gettime(CLOCK_THREAD_CPUTIME_ID)
 *   tracer     what a tracer does per method event: RawMonitorEnter, GetMethodClass,
 *              GetCurrentThreadCpuTime, RawMonitorExit, against pthread_mutex_lock,
 *              clock_gettime, pthread_mutex_unlock (goal: <= 2x)
 *   enable     EnableEvent+DisableEvent of every event type, one at a time: from the main
 *              thread here (idle), from a thread of the agent's own the JVM does not know
 *              (pthread), and from a system thread while main runs Java (busy, which prints
 *              "bcalls: done" last). Goal: <= 1 ms a call for the events that need neither
 *              a collection nor a retransformation ("heavy": timed in idle only, no goal)
 * Single-threaded loops are timed in thread CPU time, contention in wall time. Each
 * measurement prints one line
 *   BCALLS name=N jvmpi_ns=A native_ns=B ratio=R range=LO..HI goal=met|missed
 * with medians over the rounds (ratio: the median of the per-round ratios). Mutual
 * exclusion and the answers are checked as it goes: a line "bcalls: FAIL ..." if not.
 *
 * Options (after the library path): rounds=N (default 9), quick (a tenth of the
 * iterations), noswitch (no EnableEvent timing), only=NAME+NAME (those measurements only).
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static JVMPI_Interface *jvmpi;
static int rounds = 9;
static long scale = 1;          /* iterations divided by this ("quick") */
static int failures;
static const char *only;        /* only=NAME+NAME: run those measurements only */
static int no_switch;

#define MAX_MIDS 512
static jmethodID mids[MAX_MIDS];
static jobjectID mid_class[MAX_MIDS];
static int n_mids;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The calling thread's CPU time: single-threaded loops are timed with it, so that the time
 * other processes take the CPU away (this machine is shared) does not count. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fail(const char *what)
{
    printf("bcalls: FAIL %s\n", what);
    failures++;
}

/* ---- uncontended pairs ---- */

static JVMPI_RawMonitor mon;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile long inside;

static double time_raw_pairs(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        jvmpi->RawMonitorEnter(mon);
        inside++;
        jvmpi->RawMonitorExit(mon);
    }
    return (cpu_ns() - t0) / n;
}

static double time_mutex_pairs(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        inside++;
        pthread_mutex_unlock(&mu);
    }
    return (cpu_ns() - t0) / n;
}

/* Runs a(n) and b(n) in each round, alternating which goes first; prints the line. */
static void compare(const char *name, double (*a)(long), double (*b)(long), long n,
                    double goal_ratio, double goal_add_ns)
{
    if (only != NULL && strstr(only, name) == NULL)
        return;
    double *va = calloc((size_t)rounds, sizeof *va), *vb = calloc((size_t)rounds, sizeof *vb);
    double *vr = calloc((size_t)rounds, sizeof *vr);
    a(n / 10); /* warm up */
    b(n / 10);
    for (int r = 0; r < rounds; r++) {
        if (r % 2) {
            vb[r] = b(n);
            va[r] = a(n);
        } else {
            va[r] = a(n);
            vb[r] = b(n);
        }
        vr[r] = va[r] / vb[r];
    }
    double ma = median(va, rounds), mb = median(vb, rounds), mr = median(vr, rounds);
    double lo = vr[0], hi = vr[rounds - 1]; /* vr sorted by median() */
    printf("BCALLS name=%s jvmpi_ns=%.1f native_ns=%.1f ratio=%.3f range=%.3f..%.3f", name, ma,
           mb, mr, lo, hi);
    /* A goal of the form "<= R x native + A ns" on the medians; without A, on the median
     * of the per-round ratios. */
    if (goal_ratio > 0 && goal_add_ns > 0)
        printf(" goal=%s", ma <= goal_ratio * mb + goal_add_ns ? "met" : "missed");
    else if (goal_ratio > 0)
        printf(" goal=%s", mr <= goal_ratio ? "met" : "missed");
    printf("\n");
    fflush(stdout);
    free(va);
    free(vb);
    free(vr);
}

/* ---- contention ---- */

#define NT 8
static JVMPI_RawMonitor mons[NT];
static pthread_mutex_t mus[NT];
static long counters[NT][8]; /* one cache line each */
static long per_thread;
static int use_raw, spread, work;
static pthread_barrier_t start_bar;

static void *contender(void *arg)
{
    int k = (int)(long)arg, m = spread ? k : 0;
    pthread_barrier_wait(&start_bar);
    for (long i = 0; i < per_thread; i++) {
        if (use_raw) {
            jvmpi->RawMonitorEnter(mons[m]);
            counters[m][0]++;
            for (volatile int w = 0; w < work; w++)
                ;
            jvmpi->RawMonitorExit(mons[m]);
        } else {
            pthread_mutex_lock(&mus[m]);
            counters[m][0]++;
            for (volatile int w = 0; w < work; w++)
                ;
            pthread_mutex_unlock(&mus[m]);
        }
    }
    return NULL;
}

static double contend(int raw, int spread_, long n)
{
    pthread_t t[NT];
    use_raw = raw;
    spread = spread_;
    per_thread = n;
    memset(counters, 0, sizeof counters);
    pthread_barrier_init(&start_bar, NULL, NT + 1);
    for (long k = 0; k < NT; k++)
        pthread_create(&t[k], NULL, contender, (void *)k);
    double t0 = now_ns(); /* before the barrier: the threads may finish before main runs again */
    pthread_barrier_wait(&start_bar);
    for (int k = 0; k < NT; k++)
        pthread_join(t[k], NULL);
    double ns = (now_ns() - t0) / ((double)n * NT);
    pthread_barrier_destroy(&start_bar);
    long total = 0;
    for (int k = 0; k < NT; k++)
        total += counters[k][0];
    if (total != n * NT) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s %s: counted %ld of %ld (mutual exclusion broken)",
                 raw ? "raw monitor" : "mutex", spread_ ? "contend8" : "contend1", total, n * NT);
        fail(msg);
    }
    return ns;
}

static double raw_one(long n) { work = 0; return contend(1, 0, n); }
static double mutex_one(long n) { work = 0; return contend(0, 0, n); }
static double raw_eight(long n) { work = 0; return contend(1, 1, n); }
static double mutex_eight(long n) { work = 0; return contend(0, 1, n); }
/* The same with some work inside (about what an agent's table update costs), so that more
 * threads find the lock taken and block: the futex paths rather than the calls. */
static double raw_one_work(long n) { work = 100; return contend(1, 0, n); }
static double mutex_one_work(long n) { work = 100; return contend(0, 0, n); }

/* ---- GetMethodClass, CPU time, the tracer's sequence ---- */

static volatile jobjectID sink_id;
static volatile jlong sink_t;

static double time_gmc(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        sink_id = jvmpi->GetMethodClass(mids[i % n_mids]);
    return (cpu_ns() - t0) / n;
}

static double time_nothing(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        sink_id = mid_class[i % n_mids];
    return (cpu_ns() - t0) / n;
}

static double time_cpu_jvmpi(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        sink_t = jvmpi->GetCurrentThreadCpuTime();
    return (cpu_ns() - t0) / n;
}

static jlong cpu_native(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (jlong)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double time_cpu_native(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        sink_t = cpu_native();
    return (cpu_ns() - t0) / n;
}

static double time_tracer_jvmpi(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        jvmpi->RawMonitorEnter(mon);
        sink_id = jvmpi->GetMethodClass(mids[i % n_mids]);
        sink_t = jvmpi->GetCurrentThreadCpuTime();
        jvmpi->RawMonitorExit(mon);
    }
    return (cpu_ns() - t0) / n;
}

static double time_tracer_native(long n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        sink_id = mid_class[i % n_mids];
        sink_t = cpu_native();
        pthread_mutex_unlock(&mu);
    }
    return (cpu_ns() - t0) / n;
}

/* ---- EnableEvent / DisableEvent ---- */

/* Every event type there is, enabled and disabled again, one at a time. Those whose switch
 * needs a retransformation of the loaded classes (method and instruction events) or may
 * run a collection (OBJECT_ALLOC) are "heavy": timed, but without a goal. */
static const char *const event_names[JVMPI_MAX_EVENT_TYPE_VAL + 1] = {
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

static int heavy(jint t)
{
    return t == JVMPI_EVENT_METHOD_ENTRY || t == JVMPI_EVENT_METHOD_ENTRY2 ||
           t == JVMPI_EVENT_METHOD_EXIT || t == JVMPI_EVENT_INSTRUCTION_START ||
           t == JVMPI_EVENT_OBJECT_ALLOC;
}

static void time_switching(const char *when)
{
    int per = scale > 1 ? 3 : 5;
    double light_worst = 0;
    const char *worst = "-";
    for (jint t = 1; t <= JVMPI_MAX_EVENT_TYPE_VAL; t++) {
        if (event_names[t] == NULL || t == JVMPI_EVENT_JVM_INIT_DONE ||
            (heavy(t) && strcmp(when, "idle") != 0))
            continue;
        double *v = calloc((size_t)per, sizeof *v);
        int served = 1;
        for (int r = 0; r < per && served; r++) {
            double t0 = now_ns();
            jint a = jvmpi->EnableEvent(t, NULL);
            jint b = jvmpi->DisableEvent(t, NULL);
            v[r] = (now_ns() - t0) / 2;
            served = a == JVMPI_SUCCESS;
            if (a != b) {
                char msg[96];
                snprintf(msg, sizeof msg, "EnableEvent/DisableEvent(%s): %d/%d", event_names[t],
                         (int)a, (int)b);
                fail(msg);
            }
        }
        if (served) {
            double m = median(v, per);
            printf("BCALLS name=enable_%s_%s jvmpi_ns=%.0f max_ns=%.0f heavy=%d\n", when,
                   event_names[t], m, v[per - 1], heavy(t));
            if (!heavy(t) && m > light_worst) {
                light_worst = m;
                worst = event_names[t];
            }
        }
        free(v);
    }
    printf("BCALLS name=enable_%s jvmpi_ns=%.0f worst=%s goal=%s\n", when, light_worst, worst,
           light_worst <= 1e6 ? "met" : "missed");
    fflush(stdout);
}

/* ---- driver ---- */

static void run_all(void)
{
    long big = 2000000 / scale, contended = 200000 / scale;
    mon = jvmpi->RawMonitorCreate("bcalls lock");
    char name[32];
    for (int k = 0; k < NT; k++) {
        snprintf(name, sizeof name, "bcalls lock %d", k);
        mons[k] = jvmpi->RawMonitorCreate(name);
        pthread_mutex_init(&mus[k], NULL);
    }
    compare("rawmon", time_raw_pairs, time_mutex_pairs, big, 2, 10);
    compare("contend1", raw_one, mutex_one, contended, 1.5, 0);
    compare("contend8", raw_eight, mutex_eight, contended, 1.5, 0);
    compare("contend1work", raw_one_work, mutex_one_work, contended / 4, 1.5, 0);
    if (n_mids == 0) {
        fail("no method ids from CLASS_LOAD");
    } else {
        for (int i = 0; i < n_mids; i++)
            if (jvmpi->GetMethodClass(mids[i]) != mid_class[i]) {
                fail("GetMethodClass answered another class id than CLASS_LOAD gave");
                break;
            }
        compare("gmc", time_gmc, time_nothing, big, 0, 0);
        compare("tracer", time_tracer_jvmpi, time_tracer_native, big, 2, 0);
    }
    compare("cputime", time_cpu_jvmpi, time_cpu_native, big / 4, 0, 0);
    if (!no_switch)
        time_switching("idle");
    for (int k = 0; k < NT; k++)
        jvmpi->RawMonitorDestroy(mons[k]);
    jvmpi->RawMonitorDestroy(mon);
}

/* Switching events from a thread of the agent's own, unknown to the JVM. */
static void *native_switching(void *arg)
{
    (void)arg;
    time_switching("pthread");
    return NULL;
}

/* Switching events while the program runs Java code (a system thread, main busy). */
static void live_switching(void *arg)
{
    (void)arg;
    if (!no_switch)
        time_switching("busy");
    pthread_t t;
    if (!no_switch) {
        pthread_create(&t, NULL, native_switching, NULL);
        pthread_join(t, NULL);
    }
    printf("bcalls: done failures=%d\n", failures);
    fflush(stdout);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        for (int i = 0; i < ev->u.class_load.num_methods && n_mids < MAX_MIDS; i++) {
            mids[n_mids] = ev->u.class_load.methods[i].method_id;
            mid_class[n_mids++] = ev->u.class_load.class_id;
        }
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        jvmpi->DisableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
        run_all();
        if (jvmpi->CreateSystemThread("bcalls switch", JVMPI_NORMAL_PRIORITY, live_switching) != JNI_OK)
            fail("CreateSystemThread");
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bcalls: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    if (options != NULL) {
        const char *r = strstr(options, "rounds=");
        if (r != NULL && atoi(r + 7) > 0)
            rounds = atoi(r + 7);
        if (strstr(options, "quick") != NULL)
            scale = 10;
        if ((only = strstr(options, "only=")) != NULL)
            only += 5;
        if (strstr(options, "noswitch") != NULL)
            no_switch = 1;

    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bcalls: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
