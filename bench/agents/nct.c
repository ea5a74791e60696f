/* nct.c — a native JVMTI agent doing bct.c's job: the fair port of a JVMPI CPU sampler.
 *
 * ThreadStart collects the workload's threads (global references); an agent thread
 * (RunAgentThread at VMInit) waits for "ctbench-go" and then, each tick, suspends the
 * threads, takes GetStackTrace(thread, 0, 64) of each and maps every frame's location to a
 * line through line tables it caches per method (fetched once with GetLineNumberTable,
 * sorted, looked up by binary search; -3 for a native method, -1 without a table, as JVMPI
 * numbered them), then resumes the threads. Only one thread uses the cache, so it takes no
 * lock: what a hand-written port would do. Timing, ticks and output are bct.c's:
 *   BENCH CallTrace threads=T ticks=K traces=N elapsed_ms=E cpu_ms=C ns_per_trace=X
 *   CTFRAMES <thread> n=<frames> <class.method:line> ...
 *   nct: traces=N frames=F short=S unstable=U sig=HEX
 * Names are resolved after the timed part (GetMethodName, GetClassSignature). The JVM is
 * ended with System.exit(0).
 */
#include <jvmti.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 64
#define MAX_TARGETS 64
#define WARM 200
#define TICKS 4000

static jvmtiEnv *jvmti;
static jrawMonitorID lock;
static int go;

struct frame { jmethodID method; jint line; };
struct target {
    jthread ref;
    char name[64];
    int parked;
    int have_first;
    struct frame first[DEPTH];
    jint first_n;
};
static struct target targets[MAX_TARGETS];
static int ntargets;

/* the per-method line cache */
struct lines { jmethodID id; jint n; jvmtiLineNumberEntry *t; };
static struct lines *cache;
static size_t cache_cap, cache_n;

static size_t hash_ptr(const void *p)
{
    unsigned long long x = (unsigned long long)(size_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return (size_t)x;
}

static int by_start(const void *a, const void *b)
{
    const jvmtiLineNumberEntry *x = a, *y = b;
    return x->start_location < y->start_location ? -1 : x->start_location > y->start_location;
}

static struct lines *lines_of(jmethodID m)
{
    if ((cache_n + 1) * 2 > cache_cap) {
        size_t cap = cache_cap ? cache_cap * 2 : 1024;
        struct lines *t = calloc(cap, sizeof *t);
        if (t == NULL)
            return NULL;
        for (size_t i = 0; i < cache_cap; i++)
            if (cache[i].id != NULL) {
                size_t j = hash_ptr(cache[i].id) & (cap - 1);
                while (t[j].id != NULL) j = (j + 1) & (cap - 1);
                t[j] = cache[i];
            }
        free(cache);
        cache = t;
        cache_cap = cap;
    }
    size_t j = hash_ptr(m) & (cache_cap - 1);
    while (cache[j].id != NULL) {
        if (cache[j].id == m)
            return &cache[j];
        j = (j + 1) & (cache_cap - 1);
    }
    struct lines *l = &cache[j];
    l->id = m;
    cache_n++;
    jboolean native = JNI_FALSE;
    (*jvmti)->IsMethodNative(jvmti, m, &native);
    if (native) {
        l->n = -3;
    } else if ((*jvmti)->GetLineNumberTable(jvmti, m, &l->n, &l->t) == JVMTI_ERROR_NONE) {
        qsort(l->t, (size_t)l->n, sizeof *l->t, by_start);
    } else {
        l->n = 0;
    }
    return l;
}

static jint line_of(jmethodID m, jlocation loc)
{
    struct lines *l = lines_of(m);
    if (l == NULL || l->n == 0)
        return -1;
    if (l->n < 0)
        return -3;
    jint lo = 0, hi = l->n - 1, found = -1;
    while (lo <= hi) {
        jint mid = (lo + hi) / 2;
        if (l->t[mid].start_location <= loc) { found = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    return found < 0 ? -1 : l->t[found].line_number;
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

/* "class.method" with the class name dotted, as JVMPI's CLASS_LOAD gave it */
static void method_name(jmethodID m, char *out, size_t len)
{
    char *mn = NULL, *cs = NULL;
    jclass c = NULL;
    snprintf(out, len, "?");
    if ((*jvmti)->GetMethodName(jvmti, m, &mn, NULL, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetMethodDeclaringClass(jvmti, m, &c) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, c, &cs, NULL) != JVMTI_ERROR_NONE) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)mn);
        return;
    }
    size_t n = strlen(cs);
    char *p = cs;
    if (n >= 2 && cs[0] == 'L' && cs[n - 1] == ';') { cs[n - 1] = 0; p = cs + 1; }
    for (char *q = p; *q; q++)
        if (*q == '/') *q = '.';
    snprintf(out, len, "%s.%s", p, mn);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)mn);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)cs);
}

static void JNICALL sampler(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
    (void)env; (void)arg;
    (*jvmti)->RawMonitorEnter(jvmti, lock);
    while (!go)
        (*jvmti)->RawMonitorWait(jvmti, lock, 0);
    int n = ntargets;
    (*jvmti)->RawMonitorExit(jvmti, lock);

    const char *e = getenv("BENCH_CT_TICKS");
    int ticks = e != NULL && atoi(e) > 0 ? atoi(e) : TICKS;
    static jvmtiFrameInfo fi[MAX_TARGETS][DEPTH];
    static struct frame frames[MAX_TARGETS][DEPTH];
    jint nf[MAX_TARGETS];
    long long el = 0, cpu = 0, traces = 0, nframes = 0, shortc = 0, unstable = 0;
    for (int k = -WARM; k < ticks; k++) {
        for (int i = 0; i < n; i++)
            (*jvmti)->SuspendThread(jvmti, targets[i].ref);
        long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < n; i++) {
            nf[i] = 0;
            if ((*jvmti)->GetStackTrace(jvmti, targets[i].ref, 0, DEPTH, fi[i], &nf[i]) != JVMTI_ERROR_NONE)
                nf[i] = 0;
            for (jint f = 0; f < nf[i]; f++) {
                frames[i][f].method = fi[i][f].method;
                frames[i][f].line = line_of(fi[i][f].method, fi[i][f].location);
            }
        }
        long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < n; i++)
            (*jvmti)->ResumeThread(jvmti, targets[i].ref);
        if (k < 0)
            continue;
        el += t1 - t0;
        cpu += c1 - c0;
        for (int i = 0; i < n; i++) {
            struct target *t = &targets[i];
            traces++;
            nframes += nf[i];
            if (nf[i] < DEPTH)
                shortc++;
            if (!t->parked)
                continue;
            if (!t->have_first) {
                memcpy(t->first, frames[i], sizeof t->first);
                t->first_n = nf[i];
                t->have_first = 1;
            } else if (t->first_n != nf[i] ||
                       memcmp(t->first, frames[i], sizeof(struct frame) * (size_t)nf[i]) != 0) {
                unstable++;
            }
        }
    }
    printf("BENCH CallTrace threads=%d ticks=%d traces=%lld elapsed_ms=%lld cpu_ms=%lld ns_per_trace=%lld\n",
           n, ticks, traces, el / 1000000, cpu / 1000000, traces ? el / traces : 0);
    qsort(targets, (size_t)n, sizeof targets[0], by_name);
    unsigned long long sig = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        struct target *t = &targets[i];
        if (!t->parked)
            continue;
        char line[16384], nm[512];
        int len = snprintf(line, sizeof line, "CTFRAMES %s n=%d", t->name, (int)t->first_n);
        for (int f = 0; f < t->first_n && len < (int)sizeof line - 1; f++) {
            method_name(t->first[f].method, nm, sizeof nm);
            len += snprintf(line + len, sizeof line - (size_t)len, " %s:%d", nm, (int)t->first[f].line);
        }
        printf("%s\n", line);
        for (const char *p = line; *p; p++) {
            sig ^= (unsigned char)*p;
            sig *= 1099511628211ULL;
        }
    }
    printf("nct: traces=%lld frames=%lld short=%lld unstable=%lld sig=%016llx\n",
           traces, nframes, shortc, unstable, sig);
    fflush(stdout);
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID ex = sys ? (*jni)->GetStaticMethodID(jni, sys, "exit", "(I)V") : NULL;
    if (ex != NULL)
        (*jni)->CallStaticVoidMethod(jni, sys, ex, 0);
}

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env;
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &ti) != JVMTI_ERROR_NONE || ti.name == NULL)
        return;
    if (strncmp(ti.name, "ctbench-", 8) == 0) {
        (*jvmti)->RawMonitorEnter(jvmti, lock);
        if (strcmp(ti.name, "ctbench-go") == 0) {
            go = 1;
            (*jvmti)->RawMonitorNotifyAll(jvmti, lock);
        } else if (!go && ntargets < MAX_TARGETS) {
            struct target *t = &targets[ntargets++];
            t->ref = (*jni)->NewGlobalRef(jni, thread);
            snprintf(t->name, sizeof t->name, "%s", ti.name);
            t->parked = strncmp(ti.name, "ctbench-parked-", 15) == 0;
        }
        (*jvmti)->RawMonitorExit(jvmti, lock);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ti.name);
    if (ti.thread_group) (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (ti.context_class_loader) (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env; (void)thread;
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "ctbench sampler");
    jthread t = init ? (*jni)->NewObject(jni, tc, init, name) : NULL;
    if (t == NULL || (*jvmti)->RunAgentThread(jvmti, t, sampler, NULL, JVMTI_THREAD_MAX_PRIORITY) != JVMTI_ERROR_NONE)
        fprintf(stderr, "nct: cannot start the sampler thread\n");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_suspend = 1;
    caps.can_get_line_numbers = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "nct: AddCapabilities failed\n");
        return JNI_ERR;
    }
    if ((*jvmti)->CreateRawMonitor(jvmti, "nct lock", &lock) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.ThreadStart = on_thread_start;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
    return JNI_OK;
}
