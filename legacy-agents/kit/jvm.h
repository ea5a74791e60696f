/* kit/jvm.h — the VM, the JVMPI interface and the small JNI chores of a test agent.
 *
 * An agent keeps the JavaVM from JVM_OnLoad (g_jvm) and the interface from GetEnv
 * (jvmpi), finds the JNIEnv of the thread it runs on, reads the wall clock, and talks to
 * the workload through system properties (the workload waits for a property the agent
 * sets, or the agent reads one the workload set). Nothing here prints: an agent with its
 * own output may use it without kit/out.h.
 */
#ifndef KIT_JVM_H
#define KIT_JVM_H

#include <jvmpi.h>

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef KIT_FN
#define KIT_FN static __attribute__((unused))
#define KIT_VAR static __attribute__((unused))
#endif

KIT_VAR JavaVM *g_jvm;
KIT_VAR JVMPI_Interface *jvmpi;

/* The JNIEnv of this thread, or NULL on a thread the VM does not know. JVMPI hands an
 * env to most events but not to every callback (system threads, dump requests). */
KIT_FN JNIEnv *current_env(void)
{
    JNIEnv *e = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&e, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    return e;
}

/* Milliseconds for deadlines and waits; KIT_MONOTONIC for an agent that must not see the
 * wall clock step (the default is gettimeofday, as on the JDK 1.3 platforms). */
#ifdef KIT_MONOTONIC
KIT_FN long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#else
KIT_FN long long now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}
#endif

/* System.getProperty(name) as a malloc'd string, or NULL when unset. */
KIT_FN char *get_property(JNIEnv *jni, const char *name)
{
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID gp = (*jni)->GetStaticMethodID(jni, sys, "getProperty",
                                             "(Ljava/lang/String;)Ljava/lang/String;");
    jstring k = (*jni)->NewStringUTF(jni, name);
    jstring v = (jstring)(*jni)->CallStaticObjectMethod(jni, sys, gp, k);
    char *r = NULL;
    if (v != NULL) {
        const char *s = (*jni)->GetStringUTFChars(jni, v, NULL);
        r = strdup(s);
        (*jni)->ReleaseStringUTFChars(jni, v, s);
        (*jni)->DeleteLocalRef(jni, v);
    }
    (*jni)->DeleteLocalRef(jni, k);
    (*jni)->DeleteLocalRef(jni, sys);
    return r;
}

/* System.setProperty(name, value): the workload polls it to know the agent got this far. */
KIT_FN void set_property(JNIEnv *jni, const char *name, const char *value)
{
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID sp = (*jni)->GetStaticMethodID(jni, sys, "setProperty",
                                             "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;");
    jstring k = (*jni)->NewStringUTF(jni, name), v = (*jni)->NewStringUTF(jni, value);
    jobject old = (*jni)->CallStaticObjectMethod(jni, sys, sp, k, v);
    if (old)
        (*jni)->DeleteLocalRef(jni, old);
    (*jni)->DeleteLocalRef(jni, k);
    (*jni)->DeleteLocalRef(jni, v);
    (*jni)->DeleteLocalRef(jni, sys);
}

#endif
