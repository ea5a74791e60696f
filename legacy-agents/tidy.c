/* tidy.c — a JDK 1.3-style JVMPI agent that runs correctly and makes the harmless calls of
 * its time: it switches every event number off before it enables its own, and off again at
 * shutdown.
 *
 * Agents were written against a table of event numbers, not a list of events: many cleared
 * the whole range 0..JVMPI_MAX_EVENT_TYPE_VAL in a loop in JVM_OnLoad, unused numbers (10,
 * 36, ...), request-only dumps and events they never enabled included, and did it again at
 * JVM_SHUT_DOWN. HotSpot answered JVMPI_NOT_AVAILABLE for the numbers that are no event and
 * for the dumps, and SUCCESS for the rest; nothing changed. The migration report must count
 * these calls as harmless and not raise an alarm (in an attached JVM too, where
 * MONITOR_DUMP cannot be had and was never enabled).
 *
 * Then it counts THREAD_START and CLASS_LOAD and prints the counts at JVM_SHUT_DOWN.
 * jvmpi.h, JVM_OnLoad, GetEnv, NotifyEvent, libc only; observations on stdout prefixed
 * "tidy: ".
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static long n_thread_start, n_class_load, n_not_available;

static void all_off(void)
{
    int i;
    for (i = 0; i <= JVMPI_MAX_EVENT_TYPE_VAL; i++)
        if (jvmpi->DisableEvent(i, NULL) == JVMPI_NOT_AVAILABLE)
            n_not_available++;
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
        n_thread_start++;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        n_class_load++;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        printf("tidy: live\n");
        fflush(stdout);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        all_off();
        printf("tidy: shut down thread_start=%ld class_load=%ld not_available=%ld\n",
               n_thread_start, n_class_load, n_not_available);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    all_off();
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
