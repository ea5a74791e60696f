/* bmethods.c — a JDK 1.3-style JVMPI agent counting METHOD_ENTRY and METHOD_EXIT.
 *
 * Enables both events in JVM_OnLoad, counts them with atomic increments and prints the
 * counts at JVM_SHUT_DOWN:
 *   bmethods: entries=N exits=M
 */
#include <jvmpi.h>

#include <stdio.h>

static JVMPI_Interface *jvmpi;
static volatile long long entries, exits;

static void notify(JVMPI_Event *event)
{
    switch (event->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY:
        __sync_fetch_and_add(&entries, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        __sync_fetch_and_add(&exits, 1);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("bmethods: entries=%lld exits=%lld\n", entries, exits);
        fflush(stdout);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bmethods: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bmethods: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
