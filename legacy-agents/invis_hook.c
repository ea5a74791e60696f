/* invis_hook.c — a JDK 1.3-style tracer/profiler that looks for the shim in everything it
 * sees (tests/it/methods/invis_hook.sh, workload tests/java/InvisHook.java).
 *
 * Enabled in JVM_OnLoad: CLASS_LOAD, THREAD_START, THREAD_END, METHOD_ENTRY,
 * COMPILED_METHOD_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN.
 *
 * Whatever the JVM does for itself must not reach the agent: HotSpot hid its internal
 * threads, and had no probe class. The agent learns the id of the class
 * java.lang.JvmpiShimHook (if the JVM has one) through JNI at JVM_INIT_DONE (FindClass +
 * jobject2jobjectID), and then fails on:
 *   - a CLASS_LOAD of that id, or of any class whose name mentions JvmpiShim;
 *   - a method of that class (GetMethodClass) in METHOD_ENTRY, COMPILED_METHOD_LOAD, or a
 *     frame of GetCallTrace: on the entering thread inside every 8th METHOD_ENTRY handler
 *     (the top frame must be the method entered), and from the sampler system thread,
 *     which suspends every known thread, traces it and resumes it, every 2 ms;
 *   - a THREAD_START or THREAD_END of a thread named like the shim ("shim" in any case);
 *   - the id anywhere in the bytes of a HEAP_DUMP (levels 0, 1 and 2, requested in the
 *     JVM_SHUT_DOWN handler, as HPROF wrote its dump at exit) or of the OBJECT_DUMP of each
 *     class the level-2 dump holds; and a thread in a dump (the env of a JAVA_FRAME,
 *     JNI_LOCAL or NATIVE_STACK root, or of a trace) that had no THREAD_START.
 * INVIS_HOOK_HEX=1 in the environment prints the bytes around a hit.
 * Output: "invis_hook: FAIL ..." per violation; "invis_hook: hook id=..." and at the end
 * "invis_hook: done entries=E traced=T samples=S compiled=C dumps=D objdumps=O fails=F".
 */
#define _GNU_SOURCE
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define KIT_NAME "invis_hook"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 20
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static jobjectID hook_id;
static volatile int shutting;
static volatile long entries, traced, samples, compiled, dumps, objdumps;

/* ---- threads (under lock) ---- */
#define MAXTHR 4096
static JNIEnv *thr_env[MAXTHR];
static int thr_live[MAXTHR];
static int nthr;

static int thread_known(JNIEnv *env)
{
    int k = 0;
    jvmpi->RawMonitorEnter(lock);
    for (int i = 0; i < nthr && !k; i++)
        k = thr_env[i] == env;
    jvmpi->RawMonitorExit(lock);
    return k;
}

/* ---- classes (under lock) ---- */
#define MAXCLS 65536
static jobjectID cls_id[MAXCLS];
static char *cls_name[MAXCLS];
static int ncls;

static void on_class_load(JVMPI_Event *ev)
{
    const char *n = ev->u.class_load.class_name ? ev->u.class_load.class_name : "?";
    if ((hook_id != NULL && ev->u.class_load.class_id == hook_id) || strstr(n, "JvmpiShim") ||
        strcasestr(n, "jvmpishim"))
        FAIL("CLASS_LOAD of the shim's class %s id=%p", n, (void *)ev->u.class_load.class_id);
    jvmpi->RawMonitorEnter(lock);
    if (ncls < MAXCLS && n[0] != '[') { /* array classes have no OBJECT_DUMP of their own */
        cls_name[ncls] = strdup(n);
        cls_id[ncls++] = ev->u.class_load.class_id;
    }
    jvmpi->RawMonitorExit(lock);
}

static void check_method(jmethodID m, const char *where)
{
    if (m == NULL || hook_id == NULL)
        return;
    jobjectID c = jvmpi->GetMethodClass(m);
    if (c == hook_id)
        FAIL("%s: a method of java.lang.JvmpiShimHook (%p)", where, (void *)m);
}

static void check_trace(JVMPI_CallTrace *t, const char *where)
{
    for (int i = 0; i < t->num_frames; i++)
        check_method(t->frames[i].method_id, where);
}

/* ---- the sampler ---- */
static void sampler(void *arg)
{
    (void)arg;
    JNIEnv *envs[256];
    JVMPI_CallFrame frames[32];
    while (!shutting) {
        int n = 0;
        jvmpi->RawMonitorEnter(lock);
        for (int i = 0; i < nthr && n < 256; i++)
            if (thr_live[i])
                envs[n++] = thr_env[i];
        jvmpi->RawMonitorExit(lock);
        JNIEnv *self = NULL;
        (*g_jvm)->GetEnv(g_jvm, (void **)&self, JNI_VERSION_1_2);
        for (int i = 0; i < n && !shutting; i++) {
            if (envs[i] == self)
                continue;
            jvmpi->SuspendThread(envs[i]);
            JVMPI_CallTrace t = {envs[i], 0, frames};
            jvmpi->GetCallTrace(&t, 32);
            jvmpi->ResumeThread(envs[i]);
            check_trace(&t, "sampler GetCallTrace");
            __sync_add_and_fetch(&samples, 1);
        }
        usleep(2000);
    }
}

/* ---- dumps ---- */
static unsigned char *dump_copy;
static size_t dump_len;
static int dump_level;

static void scan_for_hook(const unsigned char *p, size_t n, const char *what)
{
    if (hook_id == NULL)
        return;
    for (size_t i = 0; i + sizeof(void *) <= n; i++)
        if (memcmp(p + i, &hook_id, sizeof hook_id) == 0) {
            FAIL("%s: the id of java.lang.JvmpiShimHook at offset %zu (of %zu)", what, i, n);
            if (getenv("INVIS_HOOK_HEX"))
                for (size_t j = i >= 48 ? i - 48 : 0; j < n && j < i + 16; j++)
                    printf("%02x%s", p[j], j + 1 == i ? " | " : " ");
            return;
        }
}

/* Roots of a level-1/2 dump come first; look at those that name a thread. */
static void check_roots(const unsigned char *p, size_t n, const char *what)
{
    const size_t P = sizeof(void *);
    size_t off = 0;
    while (off < n) {
        int ty = p[off++];
        JNIEnv *env = NULL;
        switch (ty) {
        case JVMPI_GC_ROOT_UNKNOWN: case JVMPI_GC_ROOT_STICKY_CLASS: case JVMPI_GC_ROOT_MONITOR_USED:
            off += P; continue;
        case JVMPI_GC_ROOT_JNI_GLOBAL: case JVMPI_GC_ROOT_THREAD_OBJ:
            off += 2 * P; continue;
        case JVMPI_GC_ROOT_NATIVE_STACK: case JVMPI_GC_ROOT_THREAD_BLOCK:
            memcpy(&env, p + off + P, P); off += 2 * P; break;
        case JVMPI_GC_ROOT_JNI_LOCAL: case JVMPI_GC_ROOT_JAVA_FRAME:
            memcpy(&env, p + off + P, P); off += 2 * P + 4; break;
        default:
            return; /* the first object record: roots are done */
        }
        if (off <= n && env != NULL && !thread_known(env))
            FAIL("%s: root type %d names thread %p, which had no THREAD_START", what, ty, (void *)env);
    }
}

/* CLASS_DUMP ids of a level-2 dump, for OBJECT_DUMP: a record of type 0x20 whose id is a
 * class the agent knows (matched against the CLASS_LOAD table, not parsed). */
static void object_dumps(void)
{
    jobjectID ids[MAXCLS];
    int n;
    jvmpi->RawMonitorEnter(lock);
    n = ncls;
    memcpy(ids, cls_id, sizeof ids[0] * (size_t)n);
    jvmpi->RawMonitorExit(lock);
    jvmpi->DisableGC();
    for (int i = 0; i < n; i += n / 200 + 1) {
        dump_len = 0;
        if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, ids[i]) == JVMPI_SUCCESS) {
            char what[300];
            objdumps++;
            snprintf(what, sizeof what, "OBJECT_DUMP of class %s", cls_name[i]);
            scan_for_hook(dump_copy, dump_len, what);
        }
    }
    jvmpi->EnableGC();
}

static void heap_dumps(void)
{
    for (int level = 0; level <= 2; level++) {
        JVMPI_HeapDumpArg a = {level};
        dump_len = 0;
        dump_level = level;
        if (jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &a) != JVMPI_SUCCESS) {
            FAIL("RequestEvent(HEAP_DUMP, level %d) failed", level);
            continue;
        }
    }
    object_dumps();
}

static void on_heap_dump(JVMPI_Event *ev)
{
    char what[64];
    snprintf(what, sizeof what, "HEAP_DUMP level %d", dump_level);
    const unsigned char *b = (const unsigned char *)ev->u.heap_dump.begin;
    size_t n = (size_t)((const char *)ev->u.heap_dump.end - (const char *)ev->u.heap_dump.begin);
    dumps++;
    scan_for_hook(b, n, what);
    if (dump_level > 0)
        check_roots(b, n, what);
    for (int i = 0; i < ev->u.heap_dump.num_traces; i++) {
        JVMPI_CallTrace *t = &ev->u.heap_dump.traces[i];
        if (!thread_known(t->env_id))
            FAIL("%s: a trace of thread %p, which had no THREAD_START", what, (void *)t->env_id);
        check_trace(t, what);
    }
}

/* ---- events ---- */
static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END: {
        const char *n = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "";
        int start = (ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_THREAD_START;
        if (strcasestr(n, "shim"))
            FAIL("%s of the shim's thread \"%s\"", start ? "THREAD_START" : "THREAD_END", n);
        JNIEnv *env = start ? ev->u.thread_start.thread_env_id : ev->env_id;
        jvmpi->RawMonitorEnter(lock);
        int i = 0;
        while (i < nthr && thr_env[i] != env)
            i++;
        if (i == nthr && nthr < MAXTHR)
            thr_env[nthr++] = env;
        if (i < MAXTHR)
            thr_live[i] = start;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_METHOD_ENTRY: {
        long k = __sync_add_and_fetch(&entries, 1);
        check_method(ev->u.method.method_id, "METHOD_ENTRY");
        if ((k & 7) == 0) {
            JVMPI_CallFrame frames[16];
            JVMPI_CallTrace t = {ev->env_id, 0, frames};
            jvmpi->GetCallTrace(&t, 16);
            __sync_add_and_fetch(&traced, 1);
            if (t.num_frames > 0 && t.frames[0].method_id != ev->u.method.method_id)
                FAIL("GetCallTrace in METHOD_ENTRY: top frame %p is not the method entered %p",
                     (void *)t.frames[0].method_id, (void *)ev->u.method.method_id);
            check_trace(&t, "GetCallTrace in METHOD_ENTRY");
        }
        break;
    }
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        __sync_add_and_fetch(&compiled, 1);
        check_method(ev->u.compiled_method_load.method_id, "COMPILED_METHOD_LOAD");
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        free(dump_copy);
        dump_len = (size_t)ev->u.object_dump.data_len;
        dump_copy = malloc(dump_len ? dump_len : 1);
        memcpy(dump_copy, ev->u.object_dump.data, dump_len);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        JNIEnv *jni = NULL;
        (*g_jvm)->GetEnv(g_jvm, (void **)&jni, JNI_VERSION_1_2);
        jclass c = (*jni)->FindClass(jni, "java/lang/JvmpiShimHook");
        if (c == NULL) {
            (*jni)->ExceptionClear(jni);
        } else {
            jvmpi->DisableGC();
            hook_id = jvmpi->jobject2jobjectID(c);
            jvmpi->EnableGC();
        }
        say("hook id=%p", (void *)hook_id);
        if (jvmpi->CreateSystemThread("invis-sampler", JVMPI_NORMAL_PRIORITY, sampler) != JNI_OK)
            FAIL("CreateSystemThread");
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shutting = 1;
        jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        heap_dumps();
        say("done entries=%ld traced=%ld samples=%ld compiled=%ld dumps=%ld objdumps=%ld fails=%d",
            entries, traced, samples, compiled, dumps, objdumps, g_fails);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_invis_hook_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
                              JVMPI_EVENT_THREAD_END, JVMPI_EVENT_METHOD_ENTRY,
                              JVMPI_EVENT_COMPILED_METHOD_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (jvmpi->EnableEvent(ev[i], NULL) != JVMPI_SUCCESS)
            say("EnableEvent(%d) not available", (int)ev[i]);
    return JNI_OK;
}
