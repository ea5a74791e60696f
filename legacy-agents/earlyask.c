/* earlyask.c — the JNI library of a profiler's Java helper (legacy-agents/withhelper.c), loaded
 * by System.loadLibrary("earlyask") while the VM is still starting: its JNI_OnLoad asks the
 * JavaVM for JVMPI, sets NotifyEvent and enables THREAD_START and JVM_INIT_DONE, so the start-up
 * replay tells it the threads that exist and then JVM_INIT_DONE comes, as to an agent that
 * enabled them in JVM_OnLoad (tests/it/lifecycle/client_early.sh).
 * Lines start with "earlyask: "; violations are "earlyask: FAIL ...".
 */
#include <jvmpi.h>

#include <string.h>

#define KIT_NAME "earlyask"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;
static int init_done, threads_before, main_before;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START:
        if (!init_done) {
            threads_before++;
            main_before += ev->u.thread_start.thread_name != NULL &&
                           strcmp(ev->u.thread_start.thread_name, "main") == 0;
        }
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        init_done++;
        say("JVM_INIT_DONE threads_before=%d main_before=%d", threads_before, main_before);
        break;
    default:
        FAIL("event %d it did not enable", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        say("GetEnv(JVMPI_VERSION_1) in JNI_OnLoad refused");
        return JNI_VERSION_1_2;
    }
    jvmpi->NotifyEvent = notify_event;
    if (jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS)
        FAIL("EnableEvent in JNI_OnLoad");
    say("onload version=0x%x", (unsigned)jvmpi->version);
    return JNI_VERSION_1_2;
}
