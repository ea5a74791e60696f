/* unload_race.c — a JDK 1.3-style JVMPI agent that asks about classes while they unload
 * (tests/it/classes/unload_race.sh, workload tests/java/UnloadRace.java).
 *
 * Enabled: CLASS_LOAD, CLASS_UNLOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. Every class id of
 * IdentUnloadee that CLASS_LOAD names is kept. From JVM_INIT_DONE a thread of the agent's
 * own (CreateSystemThread) asks RequestEvent(CLASS_LOAD, id) for those ids round and
 * round until shutdown, as a class browser refreshing its view would, while the workload
 * makes the classes unload. Each answer is JVMPI_SUCCESS with one REQUESTED CLASS_LOAD of
 * that id named IdentUnloadee (the class, or the copy kept for its CLASS_UNLOAD), or
 * JVMPI_FAIL with no event (gone). The CLASS_UNLOAD handler sets the system property
 * unload.race.unloads to the count so far (JNI), which the workload waits for.
 * Prints at JVM_SHUT_DOWN:
 *   unload_race: summary loads=L unloads=U requests=R answered=A refused=F wrong=W
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "unload_race"
#define KIT_LINE 512
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;

#define MAXIDS 4096
static jobjectID ids[MAXIDS];
static volatile int nids;
static volatile int loads, unloads, stopping;
static volatile long requests, answered, refused, wrong;

/* The request in flight on the asking thread (one thread asks). */
static jobjectID asked;
static int events_for_ask;

static void set_unloads_property(int n)
{
    JNIEnv *env = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&env, JNI_VERSION_1_2) != JNI_OK || env == NULL)
        return;
    jclass sys = (*env)->FindClass(env, "java/lang/System");
    jmethodID set = sys ? (*env)->GetStaticMethodID(env, sys, "setProperty",
                                                    "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;")
                        : NULL;
    if (set != NULL) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", n);
        jstring k = (*env)->NewStringUTF(env, "unload.race.unloads");
        jstring v = (*env)->NewStringUTF(env, buf);
        jobject old = (*env)->CallStaticObjectMethod(env, sys, set, k, v);
        if (old)
            (*env)->DeleteLocalRef(env, old);
        (*env)->DeleteLocalRef(env, k);
        (*env)->DeleteLocalRef(env, v);
    }
    if ((*env)->ExceptionCheck(env))
        (*env)->ExceptionClear(env);
    if (sys)
        (*env)->DeleteLocalRef(env, sys);
}

static void asker(void *arg)
{
    (void)arg;
    while (!stopping) {
        int n = nids;
        for (int i = 0; i < n && !stopping; i++) {
            asked = ids[i];
            events_for_ask = 0;
            jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, ids[i]);
            __sync_add_and_fetch(&requests, 1);
            if (rc == JVMPI_SUCCESS && events_for_ask == 1)
                __sync_add_and_fetch(&answered, 1);
            else if (rc == JVMPI_FAIL && events_for_ask == 0)
                __sync_add_and_fetch(&refused, 1);
            else if (__sync_add_and_fetch(&wrong, 1) <= 5)
                say("FAIL RequestEvent(CLASS_LOAD, %p): rc=%d with %d events", (void *)ids[i],
                    (int)rc, events_for_ask);
            asked = NULL;
        }
    }
}

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (t) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *cn = ev->u.class_load.class_name;
        if (ev->event_type & JVMPI_REQUESTED_EVENT) {
            if (asked == NULL)
                break; /* another thread's request: none here */
            events_for_ask++;
            if (ev->u.class_load.class_id != asked || cn == NULL || strcmp(cn, "IdentUnloadee") != 0)
                if (__sync_add_and_fetch(&wrong, 1) <= 5)
                    say("FAIL requested CLASS_LOAD for %p names %p (%s)", (void *)asked,
                        (void *)ev->u.class_load.class_id, cn ? cn : "NULL");
            break;
        }
        if (cn != NULL && strcmp(cn, "IdentUnloadee") == 0) {
            jvmpi->RawMonitorEnter(lock);
            if (nids < MAXIDS)
                ids[nids++] = ev->u.class_load.class_id;
            loads++;
            jvmpi->RawMonitorExit(lock);
        }
        break;
    }
    case JVMPI_EVENT_CLASS_UNLOAD: {
        int n = __sync_add_and_fetch(&unloads, 1);
        set_unloads_property(n);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("unload_race asker", JVMPI_NORMAL_PRIORITY, asker) != JNI_OK)
            say("FAIL CreateSystemThread");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        stopping = 1;
        say("summary loads=%d unloads=%d requests=%ld answered=%ld refused=%ld wrong=%ld", loads,
            unloads, requests, answered, refused, wrong);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        say("FAIL GetEnv(JVMPI_VERSION_1)");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("unload_race lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_UNLOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
