/* btracer.c — a JDK 1.3-style JVMPI method tracer: per-method call counts and CPU time.
 *
 * What tracers of the era did on every METHOD_ENTRY and METHOD_EXIT (agent-idioms.md,
 * "Tracers"): take the agent's one lock (a raw monitor), ask GetMethodClass for the
 * method's class, read GetCurrentThreadCpuTime, update the thread's shadow stack (its
 * record through GetThreadLocalStorage) and the per-method table, and let go. At
 * JVM_SHUT_DOWN it prints
 *   btracer: entries=N exits=M methods=K classes=C class_loads=L
 * (classes: methods whose class GetMethodClass named; CLASS_LOAD is on, as a tracer's class
 * table needs it).
 * With the option "native" the same agent makes those calls natively instead, the floor
 * the JVMPI calls are measured against: a pthread mutex, clock_gettime(CLOCK_THREAD_
 * CPUTIME_ID), a __thread record, and no class lookup (nothing native answers it). The
 * events come through the shim in both modes, so the ratio of the two runs is what the
 * JVMPI calls cost over their native floor.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TABLE 65536 /* methods, open addressing */
#define DEPTH 256

static JVMPI_Interface *jvmpi;
static int native_mode;
static JVMPI_RawMonitor lock;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static struct method {
    jmethodID id;
    jobjectID cls;
    long long calls;
    jlong cpu;
} table[TABLE];
static long long entries, exits, n_methods, class_loads;

struct thread_rec {
    int depth;
    jmethodID stack[DEPTH];
    jlong start[DEPTH];
};
static __thread struct thread_rec *native_rec;

static struct method *method_of(jmethodID id)
{
    unsigned long h = ((unsigned long)id * 0x9E3779B97F4A7C15ul) >> 48;
    for (;; h = (h + 1) & (TABLE - 1)) {
        if (table[h].id == id)
            return &table[h];
        if (table[h].id == NULL) {
            table[h].id = id;
            n_methods++;
            return &table[h];
        }
    }
}

static jlong cpu_native(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (jlong)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct thread_rec *rec_of(JNIEnv *env)
{
    struct thread_rec *r = native_mode ? native_rec : jvmpi->GetThreadLocalStorage(env);
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (native_mode)
            native_rec = r;
        else
            jvmpi->SetThreadLocalStorage(env, r);
    }
    return r;
}

static void on_method(JNIEnv *env, jmethodID id, int entry)
{
    struct thread_rec *r = rec_of(env);
    if (r == NULL)
        return;
    if (native_mode)
        pthread_mutex_lock(&mutex);
    else
        jvmpi->RawMonitorEnter(lock);
    jobjectID cls = native_mode ? NULL : jvmpi->GetMethodClass(id);
    jlong now = native_mode ? cpu_native() : jvmpi->GetCurrentThreadCpuTime();
    struct method *m = method_of(id);
    m->cls = cls;
    if (entry) {
        entries++;
        m->calls++;
        if (r->depth < DEPTH) {
            r->stack[r->depth] = id;
            r->start[r->depth] = now;
        }
        r->depth++;
    } else {
        exits++;
        if (r->depth > 0 && --r->depth < DEPTH && r->stack[r->depth] == id)
            m->cpu += now - r->start[r->depth];
    }
    if (native_mode)
        pthread_mutex_unlock(&mutex);
    else
        jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY:
        on_method(ev->env_id, ev->u.method.method_id, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method(ev->env_id, ev->u.method.method_id, 0);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        class_loads++; /* the class table of a real tracer would be filled here */
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        long long classes = 0;
        for (int i = 0; i < TABLE; i++)
            classes += table[i].id != NULL && table[i].cls != NULL;
        printf("btracer: entries=%lld exits=%lld methods=%lld classes=%lld class_loads=%lld\n",
               entries, exits, n_methods, classes, class_loads);
        fflush(stdout);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "btracer: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    native_mode = options != NULL && strstr(options, "native") != NULL;
    lock = jvmpi->RawMonitorCreate("btracer lock");
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "btracer: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
