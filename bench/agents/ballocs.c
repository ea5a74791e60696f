/* ballocs.c — a JDK 1.3-style JVMPI agent counting OBJECT_ALLOC, OBJECT_FREE and GCs.
 *
 * Enables OBJECT_ALLOC, OBJECT_FREE, GC_START and GC_FINISH in JVM_OnLoad, counts them
 * with atomic increments (and the allocated bytes) and prints at JVM_SHUT_DOWN:
 *   ballocs: allocs=N alloc_bytes=B frees=F gc_start=S gc_finish=E
 */
#include <jvmpi.h>

#include <stdio.h>

static JVMPI_Interface *jvmpi;
static volatile long long allocs, alloc_bytes, frees, gc_start, gc_finish;

static void notify(JVMPI_Event *event)
{
    switch (event->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        __sync_fetch_and_add(&allocs, 1);
        __sync_fetch_and_add(&alloc_bytes, (long long)event->u.obj_alloc.size);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        __sync_fetch_and_add(&frees, 1);
        break;
    case JVMPI_EVENT_GC_START:
        __sync_fetch_and_add(&gc_start, 1);
        break;
    case JVMPI_EVENT_GC_FINISH:
        __sync_fetch_and_add(&gc_finish, 1);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("ballocs: allocs=%lld alloc_bytes=%lld frees=%lld gc_start=%lld gc_finish=%lld\n",
               allocs, alloc_bytes, frees, gc_start, gc_finish);
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
        fprintf(stderr, "ballocs: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_FREE, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "ballocs: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
