/* withhelper.c — a JDK 1.3-style JVMPI agent that ships a Java helper with a JNI library of its
 * own: in JVM_OnLoad it calls the helper class EarlyHelper (tests/java/EarlyHelper.java), whose
 * static initializer loads that library with System.loadLibrary("earlyask"); the library asks
 * the JavaVM for JVMPI itself, in its JNI_OnLoad, while the VM is still starting
 * (tests/it/lifecycle/client_early.sh). The agent itself only takes JVM_INIT_DONE.
 * Lines start with "withhelper: "; violations are "withhelper: FAIL ...".
 */
#include <jvmpi.h>

#define KIT_NAME "withhelper"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_JVM_INIT_DONE)
        say("JVM_INIT_DONE");
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    JNIEnv *env;
    (void)options;
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify_event;
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jclass c = (*env)->FindClass(env, "EarlyHelper");
    jmethodID m = c ? (*env)->GetStaticMethodID(env, c, "start", "()V") : NULL;
    if (m != NULL)
        (*env)->CallStaticVoidMethod(env, c, m);
    if (m == NULL || (*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        FAIL("EarlyHelper.start() in JVM_OnLoad");
    }
    say("onload helper started");
    return JNI_OK;
}
