/* mem_jniref.c — a JDK 1.3-style JVMPI agent for JNI_GLOBALREF_ALLOC / FREE and
 * JNI_WEAK_GLOBALREF_ALLOC / FREE, and for JNI GetJavaVM (tests/it/memory/mem_jniref.sh).
 *
 * Enabled in JVM_OnLoad: the four JNI reference events, CLASS_LOAD, THREAD_START,
 * THREAD_END, JVM_INIT_DONE, JVM_SHUT_DOWN (so the shim builds its class and thread tables,
 * with its own references, while the events are on). Every JNI reference event is recorded.
 *
 * In the JVM_INIT_DONE handler, with the JNIEnv of event->env_id, the agent makes 10
 * Strings and for each: NewGlobalRef, NewWeakGlobalRef, then DeleteGlobalRef,
 * DeleteWeakGlobalRef. Each call must post exactly one event of its type on this thread
 * before it returns, with ref_id = the reference and (ALLOC) obj_id = jobject2jobjectID of
 * the String (taken with GC disabled). Printed per type:
 *   mem_jniref: ours TYPE made=10 events=.. matched=.. (events posted during the calls with
 *               the right ref_id, obj_id and env_id)
 * Then it disables the four events and makes/deletes one more of each: no event
 * ("disabled events=0"). Then JNI GetJavaVM: GetEnv(JVMPI_VERSION_1) on the JavaVM it
 * returns must succeed and give the same interface ("getjavavm ...").
 * At JVM_SHUT_DOWN: "foreign TYPE=N" counts of events not caused by the agent (JDK
 * libraries may make a few; the shim's own references must not appear), and the number of
 * classes announced, for scale.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "mem_jniref"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 20
#include "kit/out.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

#define T0 JVMPI_EVENT_JNI_GLOBALREF_ALLOC
static const char *type_name[4] = {"GLOBALREF_ALLOC", "GLOBALREF_FREE", "WEAK_GLOBALREF_ALLOC",
                                    "WEAK_GLOBALREF_FREE"};

/* The last event of each type on the agent's own thread while it makes references (under
 * lock), and counts. */
static struct {
    long count;
    jobject ref;
    jobjectID obj;
    JNIEnv *env;
} last[4];
static long foreign[4];       /* events while the agent was not making references */
static volatile int making;   /* 1 while the INIT_DONE handler makes/deletes references */
static JNIEnv *making_env;
static long classes_seen, threads_seen;

static void on_ref_event(JVMPI_Event *ev)
{
    int t = (ev->event_type & ~JVMPI_REQUESTED_EVENT) - T0;
    int is_alloc = t == 0 || t == 2;
    jvmpi->RawMonitorEnter(lock);
    if (!making || ev->env_id != making_env) {
        foreign[t]++;
    } else {
        last[t].count++;
        last[t].env = ev->env_id;
        if (is_alloc) {
            last[t].ref = ev->u.jni_globalref_alloc.ref_id;
            last[t].obj = ev->u.jni_globalref_alloc.obj_id;
        } else {
            last[t].ref = ev->u.jni_globalref_free.ref_id;
            last[t].obj = NULL;
        }
    }
    jvmpi->RawMonitorExit(lock);
    if (is_alloc && (ev->u.jni_globalref_alloc.ref_id == NULL ||
                     ev->u.jni_globalref_alloc.obj_id == NULL))
        FAIL("%s with ref_id %p obj_id %p", type_name[t],
             (void *)ev->u.jni_globalref_alloc.ref_id, (void *)ev->u.jni_globalref_alloc.obj_id);
    if (!is_alloc && ev->u.jni_globalref_free.ref_id == NULL)
        FAIL("%s with ref_id NULL", type_name[t]);
}

struct outcome {
    int events, matched;
};

/* Did exactly one event of type t arrive since `before`, with these fields? */
static void judge(int t, long before, jobject ref, jobjectID obj, JNIEnv *env, struct outcome *o)
{
    jvmpi->RawMonitorEnter(lock);
    long n = last[t].count - before;
    int ok = n == 1 && last[t].ref == ref && last[t].env == env &&
             ((t == 1 || t == 3) || last[t].obj == obj);
    jobject got_ref = last[t].ref;
    jobjectID got_obj = last[t].obj;
    JNIEnv *got_env = last[t].env;
    jvmpi->RawMonitorExit(lock);
    o->events += (int)n;
    if (ok)
        o->matched++;
    else
        FAIL("%s: %ld events during the call; last ref_id %p (want %p) obj_id %p (want %p) "
             "env_id %p (want %p)", type_name[t], n, (void *)got_ref, (void *)ref,
             (void *)got_obj, (void *)obj, (void *)got_env, (void *)env);
}

static long count_of(int t)
{
    jvmpi->RawMonitorEnter(lock);
    long n = last[t].count;
    jvmpi->RawMonitorExit(lock);
    return n;
}

#define NREF 10

static void make_refs(JNIEnv *env)
{
    if ((*env)->PushLocalFrame(env, 64) != 0) {
        FAIL("PushLocalFrame failed");
        return;
    }
    jvmpi->RawMonitorEnter(lock);
    making_env = env;
    making = 1;
    jvmpi->RawMonitorExit(lock);

    jobject objs[NREF];
    jobjectID ids[NREF];
    jobject g[NREF];
    jweak w[NREF];
    struct outcome o[4];
    memset(o, 0, sizeof o);
    for (int i = 0; i < NREF; i++) {
        char s[32];
        snprintf(s, sizeof s, "mem_jniref-%d", i);
        objs[i] = (*env)->NewStringUTF(env, s);
        jvmpi->DisableGC();
        ids[i] = jvmpi->jobject2jobjectID(objs[i]);
        jvmpi->EnableGC();
        if (ids[i] == NULL)
            FAIL("jobject2jobjectID of String %d gave NULL", i);
    }
    for (int i = 0; i < NREF; i++) {
        long b = count_of(0);
        g[i] = (*env)->NewGlobalRef(env, objs[i]);
        judge(0, b, g[i], ids[i], env, &o[0]);
        b = count_of(2);
        w[i] = (*env)->NewWeakGlobalRef(env, objs[i]);
        judge(2, b, w[i], ids[i], env, &o[2]);
    }
    for (int i = 0; i < NREF; i++) {
        long b = count_of(1);
        (*env)->DeleteGlobalRef(env, g[i]);
        judge(1, b, g[i], NULL, env, &o[1]);
        b = count_of(3);
        (*env)->DeleteWeakGlobalRef(env, w[i]);
        judge(3, b, w[i], NULL, env, &o[3]);
    }
    for (int t = 0; t < 4; t++)
        say("ours %s made=%d events=%d matched=%d", type_name[t], NREF, o[t].events,
            o[t].matched);

    /* Disabled: no events. */
    for (int t = 0; t < 4; t++)
        if (jvmpi->DisableEvent(T0 + t, NULL) != JVMPI_SUCCESS)
            FAIL("DisableEvent(%s) failed", type_name[t]);
    long before[4];
    for (int t = 0; t < 4; t++)
        before[t] = count_of(t);
    jobject g1 = (*env)->NewGlobalRef(env, objs[0]);
    jweak w1 = (*env)->NewWeakGlobalRef(env, objs[0]);
    (*env)->DeleteGlobalRef(env, g1);
    (*env)->DeleteWeakGlobalRef(env, w1);
    long n = 0;
    for (int t = 0; t < 4; t++)
        n += count_of(t) - before[t];
    say("disabled events=%ld", n);
    for (int t = 0; t < 4; t++)
        jvmpi->EnableEvent(T0 + t, NULL);

    jvmpi->RawMonitorEnter(lock);
    making = 0;
    jvmpi->RawMonitorExit(lock);
    (*env)->PopLocalFrame(env, NULL);
}

static void check_getjavavm(JNIEnv *env)
{
    JavaVM *vm = NULL;
    jint rc = (*env)->GetJavaVM(env, &vm);
    void *p = NULL;
    jint rc2 = vm ? (*vm)->GetEnv(vm, &p, JVMPI_VERSION_1) : -99;
    void *e = NULL;
    jint rc3 = vm ? (*vm)->GetEnv(vm, &e, JNI_VERSION_1_2) : -99;
    say("getjavavm rc=%d getenv_jvmpi_rc=%d same_interface=%d getenv_jni_rc=%d same_env=%d "
        "same_vm_as_onload=%d", (int)rc, (int)rc2, p == (void *)jvmpi, (int)rc3, e == (void *)env,
        vm == g_jvm);
}

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (t) {
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        on_ref_event(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        __sync_add_and_fetch(&classes_seen, 1);
        break;
    case JVMPI_EVENT_THREAD_START:
        __sync_add_and_fetch(&threads_seen, 1);
        break;
    case JVMPI_EVENT_THREAD_END:
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        jvmpi->RawMonitorEnter(lock);
        say("init_done foreign_before GLOBALREF_ALLOC=%ld WEAK_GLOBALREF_ALLOC=%ld classes=%ld",
            foreign[0], foreign[2], classes_seen);
        jvmpi->RawMonitorExit(lock);
        make_refs(ev->env_id);
        check_getjavavm(ev->env_id);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        for (int i = 0; i < 4; i++)
            say("foreign %s=%ld", type_name[i], foreign[i]);
        say("shutdown classes=%ld threads=%ld fails=%d", classes_seen, threads_seen, g_fails);
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        FAIL("unexpected event %d", t);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_mem_jniref_lock");
    static const jint evs[] = {JVMPI_EVENT_JNI_GLOBALREF_ALLOC, JVMPI_EVENT_JNI_GLOBALREF_FREE,
                               JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC,
                               JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, JVMPI_EVENT_CLASS_LOAD,
                               JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                               JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(evs, NELEMS(evs), 1);
    say("loaded");
    return JNI_OK;
}
