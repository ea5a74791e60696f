/* attach.c — a JDK 1.3-style JVMPI agent for loading into a running JVM.
 *
 * jvmpi.h, JVM_OnLoad, GetEnv, NotifyEvent, libc only. In JVM_OnLoad it enables THREAD_START,
 * THREAD_END, CLASS_LOAD, OBJECT_ALLOC, JVM_INIT_DONE and JVM_SHUT_DOWN and tries
 * METHOD_ENTRY (printing each return code), then counts, separately before and after
 * JVM_INIT_DONE: threads by name, CLASS_LOAD of AttachTarget's classes, OBJECT_ALLOC of
 * AttachTarget$AttachKept / $AttachLate (by class id from CLASS_LOAD), and checks that every
 * OBJECT_ALLOC names a class it was told about ("attach: FAIL ..." otherwise).
 * Prints "attach: ..." lines on stdout (the target's stdout).
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>

#define MAXC 8192
static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static int init_done;
static jobjectID classes[MAXC];
static int nclasses;
static jobjectID kept_id, late_id;
static long kept_before, kept_after, late_after, allocs_before, allocs_after, unknown_class;
static int early_before, late_thread_after, main_before, target_class_before;

static int known(jobjectID c)
{
    int i;
    for (i = 0; i < nclasses; i++)
        if (classes[i] == c)
            return 1;
    return 0;
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name;
        if (n == NULL)
            break;
        if (!init_done && strcmp(n, "attach-early") == 0) early_before = 1;
        if (!init_done && strcmp(n, "main") == 0) main_before = 1;
        if (init_done && strcmp(n, "attach-late") == 0) late_thread_after = 1;
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *n = ev->u.class_load.class_name;
        jvmpi->RawMonitorEnter(lock);
        if (nclasses < MAXC)
            classes[nclasses++] = ev->u.class_load.class_id;
        if (n != NULL && strcmp(n, "AttachTarget$AttachKept") == 0) kept_id = ev->u.class_load.class_id;
        if (n != NULL && strcmp(n, "AttachTarget$AttachLate") == 0) late_id = ev->u.class_load.class_id;
        if (n != NULL && strcmp(n, "AttachTarget") == 0 && !init_done) target_class_before = 1;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC: {
        jobjectID c = ev->u.obj_alloc.class_id;
        jvmpi->RawMonitorEnter(lock);
        if (c != NULL && !known(c))
            unknown_class++;
        if (init_done) {
            allocs_after++;
            if (c != NULL && c == kept_id) kept_after++;
            if (c != NULL && c == late_id) late_after++;
        } else {
            allocs_before++;
            if (c != NULL && c == kept_id) kept_before++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        printf("attach: init done: threads main=%d attach-early=%d; AttachTarget loaded=%d; "
               "objects replayed=%ld AttachKept=%ld\n", main_before, early_before,
               target_class_before, allocs_before, kept_before);
        fflush(stdout);
        init_done = 1;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("attach: shut down: attach-late thread=%d AttachLate=%ld AttachKept after=%ld "
               "allocs after=%ld unknown classes=%ld\n", late_thread_after, late_after, kept_after,
               allocs_after, unknown_class);
        if (unknown_class)
            printf("attach: FAIL %ld OBJECT_ALLOC events named a class never announced\n",
                   unknown_class);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    printf("attach: JVM_OnLoad options=%s\n", options ? options : "(null)");
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_attach_lock");
    printf("attach: enable THREAD_START=%d CLASS_LOAD=%d OBJECT_ALLOC=%d METHOD_ENTRY=%d\n",
           (int)jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL),
           (int)jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL),
           (int)jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL),
           (int)jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL));
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    fflush(stdout);
    return JNI_OK;
}
