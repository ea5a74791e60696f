// cxx_onload.cc — a minimal C++ JVMPI agent, written the way JDK 1.2-1.4 C++ agents were:
// <jvmpi.h> included normally (not inside extern "C"), JVM_OnLoad defined inside the agent's own
// extern "C" block, and the C++ JavaVM member-function syntax for GetEnv. It proves that such an
// agent compiles and links against include/jvmpi.h.
//
// Prints "cxx_onload: init done" on JVMPI_EVENT_JVM_INIT_DONE and "cxx_onload: shut down" on
// JVMPI_EVENT_JVM_SHUT_DOWN.
#include <stdio.h>

#include <jvmpi.h>

static JVMPI_Interface *jvmpi;

static void notify_event(JVMPI_Event *event)
{
    switch (event->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        printf("cxx_onload: init done\n");
        fflush(stdout);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("cxx_onload: shut down\n");
        fflush(stdout);
        break;
    default:
        break;
    }
}

extern "C" {

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (jvm->GetEnv((void **)&jvmpi, JVMPI_VERSION_1) < 0 || jvmpi == NULL) {
        fprintf(stderr, "cxx_onload: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify_event;
    if (jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "cxx_onload: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}

} // extern "C"
