/* vt_jnienv.c — a JDK 1.2-style agent that makes JNI calls through the event's env_id, the
 * JNIEnv * JVMPI declared it to be (tests/it/threads/vthreads_jni.sh, workload
 * tests/java/VtWork.java).
 *
 * Enabled: THREAD_START, THREAD_END, METHOD_ENTRY, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN.
 * NotifyEvent gets no other env, so in its handlers the agent casts env_id to JNIEnv * and
 * calls JNI through it, as agents written for JDK 1.2 did:
 *  - in every THREAD_START posted on the new thread (env_id == thread_env_id), and
 *  - in every METHOD_ENTRY of VtWork.leaf,
 * it asks, all through (*env_id)->...: PushLocalFrame; the thread object
 * (jobjectID2jobject(GetThreadObject(env_id)), under DisableGC); GetObjectClass of it and
 * CallObjectMethod(getName); FindClass(java/lang/Thread) and
 * CallStaticObjectMethod(currentThread), which must be IsSameObject with the thread object
 * (JNI through env_id acts on the thread the event is about); where the JVM has
 * Thread.isVirtual (looked up once, through JVM_INIT_DONE's env_id), CallBooleanMethod of
 * it; no Java exception may be left pending; PopLocalFrame. The name must be THREAD_START's
 * thread_name (at THREAD_START also GetThreadObject(env_id) == thread_id). FAIL lines, the
 * first 5 of each kind. The agent's table (by env_id, under one lock) keeps THREAD_START's
 * name and the per-thread counts.
 * At JVM_SHUT_DOWN:
 *   vt_jnienv: thread name=N leaf=L virtual=V    one per thread that entered leaf: its
 *       checked leaf entries and what isVirtual said (1, 0, or - where the JVM has none)
 *   vt_jnienv: summary ...
 *   vt_jnienv: fails KIND=N                       for every kind
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_NOTHREAD, F_OBJECT, F_NAME, F_CURRENT, F_EXCEPTION, F_FRAME, F_UNKNOWN_ENV, F_OTHER,
       NFAIL };
static const char *fail_name[NFAIL] = {"no_thread_object", "thread_id", "name", "current",
                                       "exception", "local_frame", "unknown_env", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "vt_jnienv"
#define KIT_LINE 2048
#define FAIL(...) FAILK(F_OTHER, __VA_ARGS__)
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;
static struct pmap leafs; /* method id of VtWork.leaf -> 1; under lock */

struct thr {
    JNIEnv *env;
    char name[80];
    int ended, is_virtual; /* 1, 0, or -1: the JVM has no Thread.isVirtual */
    long leaf_checks;
    struct thr *next;
};
static struct thr *all;
static struct pmap live; /* env -> live record; under lock */
static long start_checks, leaf_checks, virtual_checks;
/* Thread.isVirtual, looked up once at JVM_INIT_DONE (method ids stay valid, as agents
 * relied on); NULL on a JVM without it. */
static jmethodID is_virtual;

/* The JNI calls, through env (the event's env_id). Returns isVirtual (1/0, -1 unknown) or
 * -2 when the checks could not run; the thread's name goes to got. */
static int jni_look(JNIEnv *env, const char *what, const char *want, jobjectID want_id,
                    char *got, size_t gn)
{
    int virt = -2;
    snprintf(got, gn, "?");
    if ((*env)->PushLocalFrame(env, 16) != 0) {
        FAILK(F_FRAME, "%s: PushLocalFrame through env_id %p failed", what, (void *)env);
        return -2;
    }
    jvmpi->DisableGC();
    jobjectID tid = jvmpi->GetThreadObject(env);
    jobject obj = tid ? jvmpi->jobjectID2jobject(tid) : NULL;
    jvmpi->EnableGC();
    if (want_id != NULL && tid != want_id)
        FAILK(F_OBJECT, "%s '%s': GetThreadObject(env_id) = %p, THREAD_START's thread_id = %p",
              what, want, (void *)tid, (void *)want_id);
    if (obj == NULL) {
        FAILK(F_NOTHREAD, "%s '%s': no thread object for env_id %p", what, want, (void *)env);
        (*env)->PopLocalFrame(env, NULL);
        return -2;
    }
    jclass cls = (*env)->GetObjectClass(env, obj);
    jmethodID getName = cls ? (*env)->GetMethodID(env, cls, "getName", "()Ljava/lang/String;") : NULL;
    jstring js = getName ? (jstring)(*env)->CallObjectMethod(env, obj, getName) : NULL;
    const char *s = js ? (*env)->GetStringUTFChars(env, js, NULL) : NULL;
    snprintf(got, gn, "%s", s ? s : "(null)");
    if (s)
        (*env)->ReleaseStringUTFChars(env, js, s);
    if (s == NULL || strcmp(got, want) != 0)
        FAILK(F_NAME, "%s: getName() through env_id gives '%s', THREAD_START said '%s'", what,
              got, want);
    jclass tc = (*env)->FindClass(env, "java/lang/Thread");
    jmethodID cur = tc ? (*env)->GetStaticMethodID(env, tc, "currentThread", "()Ljava/lang/Thread;")
                       : NULL;
    jobject me = cur ? (*env)->CallStaticObjectMethod(env, tc, cur) : NULL;
    if (me == NULL || !(*env)->IsSameObject(env, me, obj))
        FAILK(F_CURRENT, "%s '%s': Thread.currentThread() through env_id is %s the thread "
              "object of env_id", what, want, me ? "not" : "NULL, not");
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        FAILK(F_EXCEPTION, "%s '%s': a Java exception is pending after the JNI calls", what, want);
    }
    if (is_virtual == NULL) {
        virt = -1;
    } else {
        virt = (*env)->CallBooleanMethod(env, obj, is_virtual) ? 1 : 0;
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            FAILK(F_EXCEPTION, "%s '%s': isVirtual() threw", what, want);
        }
    }
    (*env)->PopLocalFrame(env, NULL);
    return virt;
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL)
        return;
    struct thr *t = calloc(1, sizeof *t);
    t->env = env;
    t->is_virtual = -2;
    snprintf(t->name, sizeof t->name, "%s", S(ev->u.thread_start.thread_name));
    jvmpi->RawMonitorEnter(lock);
    t->next = all;
    all = t;
    pm_put(&live, env, t);
    jvmpi->RawMonitorExit(lock);
    if (ev->env_id != env || (ev->event_type & JVMPI_REQUESTED_EVENT))
        return; /* the start-up replay and requests come on another thread */
    char got[96];
    jni_look(ev->env_id, "THREAD_START", t->name, ev->u.thread_start.thread_id, got, sizeof got);
    jvmpi->RawMonitorEnter(lock);
    start_checks++;
    jvmpi->RawMonitorExit(lock);
}

static void on_leaf(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    struct thr *t = pm_find(&live, ev->env_id);
    char want[80];
    snprintf(want, sizeof want, "%s", t ? t->name : "");
    jvmpi->RawMonitorExit(lock);
    if (t == NULL) {
        FAILK(F_UNKNOWN_ENV, "METHOD_ENTRY of leaf on env %p, which no THREAD_START announced",
              (void *)ev->env_id);
        return;
    }
    char got[96];
    int v = jni_look(ev->env_id, "METHOD_ENTRY of leaf", want, NULL, got, sizeof got);
    jvmpi->RawMonitorEnter(lock);
    leaf_checks++;
    t->leaf_checks++;
    if (v >= -1 && t->is_virtual == -2)
        t->is_virtual = v;
    else if (v >= -1 && v != t->is_virtual)
        FAIL("'%s': isVirtual() was %d, now %d", t->name, t->is_virtual, v);
    virtual_checks += v == 1;
    jvmpi->RawMonitorExit(lock);
}

static void report(void)
{
    jvmpi->RawMonitorEnter(lock);
    int threads = 0, virt = 0;
    for (struct thr *t = all; t != NULL; t = t->next) {
        if (t->leaf_checks == 0)
            continue;
        threads++;
        virt += t->is_virtual == 1;
        if (t->is_virtual == -1)
            say("thread name=%s leaf=%ld virtual=-", t->name, t->leaf_checks);
        else
            say("thread name=%s leaf=%ld virtual=%d", t->name, t->leaf_checks, t->is_virtual);
    }
    say("summary leaf_threads=%d virtual_threads=%d start_checks=%ld leaf_checks=%ld "
        "virtual_leaf_checks=%ld fails=%d", threads, virt, start_checks, leaf_checks,
        virtual_checks, g_fails);
    for (int k = 0; k < NFAIL; k++)
        say("fails %s=%d", fail_name[k], fail_counts[k]);
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY: {
        jvmpi->RawMonitorEnter(lock);
        int leaf = pm_find(&leafs, ev->u.method.method_id) != NULL;
        jvmpi->RawMonitorExit(lock);
        if (leaf)
            on_leaf(ev);
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END: {
        jvmpi->RawMonitorEnter(lock);
        struct thr *t = pm_find(&live, ev->env_id);
        if (t != NULL) {
            t->ended = 1;
            pm_put(&live, ev->env_id, NULL);
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->u.class_load.class_name && strcmp(ev->u.class_load.class_name, "VtWork") == 0) {
            jvmpi->RawMonitorEnter(lock);
            for (jint i = 0; i < ev->u.class_load.num_methods; i++)
                if (strcmp(ev->u.class_load.methods[i].method_name, "leaf") == 0)
                    pm_put(&leafs, ev->u.class_load.methods[i].method_id, (void *)1);
            jvmpi->RawMonitorExit(lock);
        }
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        JNIEnv *env = ev->env_id;
        jclass tc = (*env)->FindClass(env, "java/lang/Thread");
        is_virtual = tc ? (*env)->GetMethodID(env, tc, "isVirtual", "()Z") : NULL;
        (*env)->ExceptionClear(env); /* NoSuchMethodError: a JVM without virtual threads */
        if (tc)
            (*env)->DeleteLocalRef(env, tc);
        say("init Thread.isVirtual %s", is_virtual ? "found" : "not on this JVM");
        break;
    }
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
    lock = jvmpi->RawMonitorCreate("_vt_jnienv_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
                              JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_METHOD_ENTRY};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
