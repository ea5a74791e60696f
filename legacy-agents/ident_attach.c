/* ident_attach.c — a JDK 1.3-style thread-centric profiler with its own Java helper
 * natives (tests/it/threads/ident_attach.sh, workload tests/java/IdentAttach.java).
 *
 * Thread-centric: everything is keyed by env_id from THREAD_START. After JVM_INIT_DONE an
 * event from an env whose THREAD_START was not delivered (or whose THREAD_END was) is
 * dropped and counted as a failure. Enabled: THREAD_START, THREAD_END, OBJECT_ALLOC,
 * JVM_INIT_DONE, JVM_SHUT_DOWN, and with the option "methods" METHOD_ENTRY and METHOD_EXIT
 * (per-thread call counts; on the attached threads every METHOD_ENTRY also takes the
 * thread's own GetCallTrace, whose top frame must be the method entered, as on HotSpot,
 * which posted the event on entry: also for the entries made while the JVM built the
 * thread's Thread object, before its THREAD_START). Every THREAD_START is printed with its name, group and parent
 * group; one with an empty or NULL name is a failure (HotSpot posted it once the thread's
 * Thread object existed). With the option "frees" OBJECT_FREE is enabled too, and every
 * allocated id is kept in a table, as heap profilers kept their object tables: an
 * OBJECT_FREE of an id that no OBJECT_ALLOC announced is a failure (JVMPI: an object's
 * OBJECT_ALLOC comes before any event naming it).
 *
 * The agent's own natives, for the workload class IdentAttach, which declares them `native`
 * and never calls System.loadLibrary (HotSpot looked natives up in -Xrun libraries too):
 *  - IdentAttach.attach(n, group): n pthreads of the agent attach at once through the
 *    JavaVM that JVM_OnLoad got, with JavaVMAttachArgs naming them "ident-attach-K" in
 *    `group`; each calls IdentAttach.fromNative(k) and detaches. Returns how many attached.
 *  - IdentAttach.hello(who): a String made by the agent.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "ident_attach"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 19
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static int init_done, with_methods, with_frees;
static long frees, frees_unknown;
static long unknown_env, events_after_init, nameless;


/* ---- objects, by id (caller holds lock): an open-addressing table ---- */

#define OBJ_SLOTS (1 << 20)
static jobjectID *objs;
static long nobjs;

static unsigned long obj_hash(jobjectID id)
{
    return ((unsigned long)id * 0x9E3779B97F4A7C15ul) >> 44; /* 20 bits */
}
static void obj_add(jobjectID id)
{
    if (nobjs >= OBJ_SLOTS - 1024)
        return; /* full: the test's workload stays far below */
    unsigned long h = obj_hash(id);
    while (objs[h] != NULL && objs[h] != id)
        h = (h + 1) & (OBJ_SLOTS - 1);
    if (objs[h] == NULL)
        nobjs++;
    objs[h] = id;
}
/* Remove id; 0 if it was not there. Backward-shift deletion keeps the probe chains. */
static int obj_remove(jobjectID id)
{
    unsigned long h = obj_hash(id);
    while (objs[h] != NULL && objs[h] != id)
        h = (h + 1) & (OBJ_SLOTS - 1);
    if (objs[h] == NULL)
        return 0;
    unsigned long i = h, j = h;
    for (;;) {
        j = (j + 1) & (OBJ_SLOTS - 1);
        if (objs[j] == NULL)
            break;
        unsigned long k = obj_hash(objs[j]);
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            objs[i] = objs[j];
            i = j;
        }
    }
    objs[i] = NULL;
    nobjs--;
    return 1;
}

/* ---- threads, by env (caller holds lock) ---- */

struct thr {
    JNIEnv *env;
    char name[128];
    long allocs, entries, exits, traced;
    struct thr *next;
};
static struct thr *threads;

static struct thr *find(JNIEnv *env)
{
    for (struct thr *t = threads; t; t = t->next)
        if (t->env == env)
            return t;
    return NULL;
}

static struct thr *known(JVMPI_Event *ev, const char *what)
{
    struct thr *t = find(ev->env_id);
    if (t == NULL && init_done) {
        unknown_env++;
        FAIL("%s from env %p, which had no THREAD_START: dropped", what, (void *)ev->env_id);
    }
    return t;
}

static void notify(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    if (init_done)
        events_after_init++;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START: {
        JNIEnv *env = ev->u.thread_start.thread_env_id;
        const char *name = ev->u.thread_start.thread_name;
        if (find(env) != NULL)
            FAIL("second THREAD_START for env %p (%s)", (void *)env, S(name));
        if (name == NULL || name[0] == '\0') {
            nameless++;
            FAIL("THREAD_START for env %p with %s name (group %s)", (void *)env,
                 name ? "an empty" : "a NULL", S(ev->u.thread_start.group_name));
        }
        struct thr *t = calloc(1, sizeof *t);
        t->env = env;
        snprintf(t->name, sizeof t->name, "%s", S(name));
        t->next = threads;
        threads = t;
        say("start name=%s group=%s parent=%s%s", S(name), S(ev->u.thread_start.group_name),
            S(ev->u.thread_start.parent_name), ev->env_id == env ? "" : " (posted on another thread)");
        break;
    }
    case JVMPI_EVENT_THREAD_END: {
        struct thr *t = known(ev, "THREAD_END");
        if (t != NULL) {
            say("end name=%s allocs=%ld entries=%ld exits=%ld traced=%ld", t->name, t->allocs,
                t->entries, t->exits, t->traced);
            struct thr **p = &threads;
            while (*p != t)
                p = &(*p)->next;
            *p = t->next;
            free(t);
        }
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC: {
        struct thr *t = known(ev, "OBJECT_ALLOC");
        if (t)
            t->allocs++;
        if (with_frees)
            obj_add(ev->u.obj_alloc.obj_id);
        break;
    }
    case JVMPI_EVENT_OBJECT_FREE:
        frees++;
        if (!obj_remove(ev->u.obj_free.obj_id)) {
            frees_unknown++;
            FAIL("OBJECT_FREE of %p, which no OBJECT_ALLOC announced", (void *)ev->u.obj_free.obj_id);
        }
        break;
    case JVMPI_EVENT_METHOD_ENTRY: {
        struct thr *t = known(ev, "METHOD_ENTRY");
        if (t)
            t->entries++;
        if (t && strncmp(t->name, "ident-attach-", 13) == 0) {
            JVMPI_CallFrame frames[8];
            JVMPI_CallTrace tr = {ev->env_id, 0, frames};
            jvmpi->GetCallTrace(&tr, 8);
            t->traced++;
            if (tr.num_frames < 1 || frames[0].method_id != ev->u.method.method_id)
                FAIL("METHOD_ENTRY on %s (entry %ld): GetCallTrace gives %d frames, top %p, "
                     "not the method entered %p", t->name, t->entries, (int)tr.num_frames,
                     tr.num_frames > 0 ? (void *)frames[0].method_id : NULL,
                     (void *)ev->u.method.method_id);
        }
        break;
    }
    case JVMPI_EVENT_METHOD_EXIT: {
        struct thr *t = known(ev, "METHOD_EXIT");
        if (t)
            t->exits++;
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        init_done = 1;
        say("init done");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (with_frees)
            say("frees=%ld frees_unknown=%ld", frees, frees_unknown);
        say("summary events=%ld unknown_env=%ld nameless=%ld fails=%d", events_after_init,
            unknown_env, nameless, g_fails);
        break;
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- the agent's natives for IdentAttach ---- */

#define MAXN 64
static jobject attach_group;             /* global ref */
static jclass attach_class;              /* global ref */
static pthread_barrier_t attach_barrier;
static int attached_ok;

static void *attach_main(void *arg)
{
    int k = (int)(long)arg;
    char name[64];
    snprintf(name, sizeof name, "ident-attach-%d", k);
    JavaVMAttachArgs args;
    args.version = JNI_VERSION_1_2;
    args.name = name;
    args.group = attach_group;
    pthread_barrier_wait(&attach_barrier); /* all attach at once */
    JNIEnv *env = NULL;
    if ((*g_jvm)->AttachCurrentThread(g_jvm, (void **)&env, &args) != JNI_OK || env == NULL) {
        say("FAIL AttachCurrentThread(%s) failed", name);
        return NULL;
    }
    jmethodID m = (*env)->GetStaticMethodID(env, attach_class, "fromNative", "(I)V");
    if (m != NULL)
        (*env)->CallStaticVoidMethod(env, attach_class, m, (jint)k);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
    }
    jstring s = (*env)->NewStringUTF(env, name); /* one more allocation on this thread */
    (*env)->DeleteLocalRef(env, s);
    __sync_add_and_fetch(&attached_ok, 1);
    (*g_jvm)->DetachCurrentThread(g_jvm);
    return NULL;
}

JNIEXPORT jint JNICALL Java_IdentAttach_attach(JNIEnv *env, jclass cls, jint n, jobject group)
{
    if (n > MAXN)
        n = MAXN;
    attach_group = (*env)->NewGlobalRef(env, group);
    attach_class = (*env)->NewGlobalRef(env, cls);
    attached_ok = 0;
    pthread_barrier_init(&attach_barrier, NULL, (unsigned)n);
    pthread_t t[MAXN];
    for (int k = 0; k < n; k++)
        pthread_create(&t[k], NULL, attach_main, (void *)(long)k);
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    pthread_barrier_destroy(&attach_barrier);
    (*env)->DeleteGlobalRef(env, attach_group);
    (*env)->DeleteGlobalRef(env, attach_class);
    return attached_ok;
}

JNIEXPORT jstring JNICALL Java_IdentAttach_hello(JNIEnv *env, jclass cls, jstring who)
{
    (void)cls;
    const char *w = who ? (*env)->GetStringUTFChars(env, who, NULL) : NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "ident_attach greets %s", w ? w : "nobody");
    if (w)
        (*env)->ReleaseStringUTFChars(env, who, w);
    return (*env)->NewStringUTF(env, buf);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    with_methods = options != NULL && strstr(options, "methods") != NULL;
    with_frees = options != NULL && strstr(options, "frees") != NULL;
    if (with_frees && (objs = calloc(OBJ_SLOTS, sizeof *objs)) == NULL)
        return JNI_ERR;
    lock = jvmpi->RawMonitorCreate("ident_attach");
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    if (with_methods) {
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    }
    if (with_frees)
        jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_FREE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("loaded%s%s", with_methods ? " (with method events)" : "", with_frees ? " (with OBJECT_FREE)" : "");
    return JNI_OK;
}
