/* bct.c — a JDK 1.3-style JVMPI CPU sampler timing GetCallTrace (depth 64), for the
 * calltrace scenario (workload bench/java/CallTrace.java).
 *
 * Written the way samplers of that era were: CLASS_LOAD builds a method-id -> name table,
 * THREAD_START collects the threads, and a thread made with CreateSystemThread does the
 * sampling, each tick suspending the workload's threads, taking their traces and resuming
 * them. Only the GetCallTrace calls are timed (CLOCK_MONOTONIC and the sampler's thread CPU
 * clock around the block of calls for one tick), so suspension, which the shim and a native
 * agent pay alike, does not dilute the comparison. WARM ticks fill the caches first; TICKS
 * ticks are timed (environment BENCH_CT_TICKS overrides the default). At the end it prints
 *   BENCH CallTrace threads=T ticks=K traces=N elapsed_ms=E cpu_ms=C ns_per_trace=X
 *   CTFRAMES <thread> n=<frames> <class.method:line> ...   (one line per parked thread)
 *   bct: traces=N frames=F short=S unstable=U sig=HEX
 * and ends the JVM with ProfilerExit(0). short counts traces of fewer than 64 frames (every
 * thread is deeper than that); unstable counts traces of a parked thread that differ from its
 * first one; sig is an FNV-1a hash of the CTFRAMES lines, which the native agent (nct.c) must
 * reproduce.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 64
#define MAX_TARGETS 64
#define WARM 200
#define TICKS 4000

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static int go;

struct target {
    JNIEnv *env;
    char name[64];
    int parked;
    int have_first;
    JVMPI_CallFrame first[DEPTH];
    jint first_n;
};
static struct target targets[MAX_TARGETS];
static int ntargets;

/* method id -> "class.method" (open addressing; filled from CLASS_LOAD under lock) */
struct mname { jmethodID id; char *name; };
static struct mname *names;
static size_t names_cap, names_n;

static size_t hash_ptr(const void *p)
{
    unsigned long long x = (unsigned long long)(size_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return (size_t)x;
}

static void names_put(jmethodID id, char *name)
{
    if ((names_n + 1) * 2 > names_cap) {
        size_t cap = names_cap ? names_cap * 2 : 4096;
        struct mname *t = calloc(cap, sizeof *t);
        if (t == NULL) { free(name); return; }
        for (size_t i = 0; i < names_cap; i++)
            if (names[i].id != NULL) {
                size_t j = hash_ptr(names[i].id) & (cap - 1);
                while (t[j].id != NULL) j = (j + 1) & (cap - 1);
                t[j] = names[i];
            }
        free(names);
        names = t;
        names_cap = cap;
    }
    size_t j = hash_ptr(id) & (names_cap - 1);
    while (names[j].id != NULL && names[j].id != id) j = (j + 1) & (names_cap - 1);
    if (names[j].id == NULL) names_n++; else free(names[j].name);
    names[j].id = id;
    names[j].name = name;
}

static const char *names_get(jmethodID id)
{
    if (names_cap == 0) return "?";
    size_t j = hash_ptr(id) & (names_cap - 1);
    while (names[j].id != NULL) {
        if (names[j].id == id) return names[j].name;
        j = (j + 1) & (names_cap - 1);
    }
    return "?";
}

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct target *)a)->name, ((const struct target *)b)->name);
}

static void sampler(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(lock);
    while (!go)
        jvmpi->RawMonitorWait(lock, 0);
    int n = ntargets;
    jvmpi->RawMonitorExit(lock);

    const char *e = getenv("BENCH_CT_TICKS");
    int ticks = e != NULL && atoi(e) > 0 ? atoi(e) : TICKS;
    static JVMPI_CallFrame frames[MAX_TARGETS][DEPTH];
    JVMPI_CallTrace tr[MAX_TARGETS];
    long long el = 0, cpu = 0, traces = 0, nframes = 0, shortc = 0, unstable = 0;
    for (int k = -WARM; k < ticks; k++) {
        for (int i = 0; i < n; i++)
            jvmpi->SuspendThread(targets[i].env);
        long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < n; i++) {
            tr[i].env_id = targets[i].env;
            tr[i].frames = frames[i];
            tr[i].num_frames = 0;
            jvmpi->GetCallTrace(&tr[i], DEPTH);
        }
        long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < n; i++)
            jvmpi->ResumeThread(targets[i].env);
        if (k < 0)
            continue;
        el += t1 - t0;
        cpu += c1 - c0;
        for (int i = 0; i < n; i++) {
            struct target *t = &targets[i];
            traces++;
            nframes += tr[i].num_frames;
            if (tr[i].num_frames < DEPTH)
                shortc++;
            if (!t->parked)
                continue;
            if (!t->have_first) {
                memcpy(t->first, frames[i], sizeof t->first);
                t->first_n = tr[i].num_frames;
                t->have_first = 1;
            } else if (t->first_n != tr[i].num_frames ||
                       memcmp(t->first, frames[i], sizeof(JVMPI_CallFrame) * (size_t)t->first_n) != 0) {
                unstable++;
            }
        }
    }
    printf("BENCH CallTrace threads=%d ticks=%d traces=%lld elapsed_ms=%lld cpu_ms=%lld ns_per_trace=%lld\n",
           n, ticks, traces, el / 1000000, cpu / 1000000, traces ? el / traces : 0);
    qsort(targets, (size_t)n, sizeof targets[0], by_name);
    unsigned long long sig = 1469598103934665603ULL;
    jvmpi->RawMonitorEnter(lock);
    for (int i = 0; i < n; i++) {
        struct target *t = &targets[i];
        if (!t->parked)
            continue;
        char line[16384];
        int len = snprintf(line, sizeof line, "CTFRAMES %s n=%d", t->name, (int)t->first_n);
        for (int f = 0; f < t->first_n && len < (int)sizeof line - 1; f++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s:%d",
                            names_get(t->first[f].method_id), (int)t->first[f].lineno);
        printf("%s\n", line);
        for (const char *p = line; *p; p++) {
            sig ^= (unsigned char)*p;
            sig *= 1099511628211ULL;
        }
    }
    jvmpi->RawMonitorExit(lock);
    printf("bct: traces=%lld frames=%lld short=%lld unstable=%lld sig=%016llx\n",
           traces, nframes, shortc, unstable, sig);
    fflush(stdout);
    jvmpi->ProfilerExit(0);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *cn = ev->u.class_load.class_name ? ev->u.class_load.class_name : "?";
        jvmpi->RawMonitorEnter(lock);
        for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            size_t len = strlen(cn) + strlen(m->method_name) + 2;
            char *s = malloc(len);
            if (s != NULL) {
                snprintf(s, len, "%s.%s", cn, m->method_name);
                names_put(m->method_id, s);
            }
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_THREAD_START: {
        const char *nm = ev->u.thread_start.thread_name;
        if (nm == NULL || strncmp(nm, "ctbench-", 8) != 0)
            break;
        jvmpi->RawMonitorEnter(lock);
        if (strcmp(nm, "ctbench-go") == 0) {
            go = 1;
            jvmpi->RawMonitorNotifyAll(lock);
        } else if (!go && ntargets < MAX_TARGETS) {
            struct target *t = &targets[ntargets++];
            t->env = ev->u.thread_start.thread_env_id;
            snprintf(t->name, sizeof t->name, "%s", nm);
            t->parked = strncmp(nm, "ctbench-parked-", 15) == 0;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("ctbench sampler", JVMPI_MAXIMUM_PRIORITY, sampler) != JNI_OK)
            fprintf(stderr, "bct: CreateSystemThread failed\n");
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bct: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("bct lock");
    if (lock == NULL ||
        jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bct: set-up failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
