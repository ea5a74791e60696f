/* usage.c — a JDK 1.3-style JVMPI agent with a known, counted use of the interface.
 *
 * The migration report (report=PATH) must list exactly what an agent used. This agent
 * makes a fixed number of calls and prints how many events of each kind it received, so
 * a test can hold the report's counts against the agent's own. jvmpi.h, JVM_OnLoad,
 * GetEnv, NotifyEvent, libc only; observations on stdout prefixed "usage: ".
 *
 * JVM_OnLoad: EnableEvent(THREAD_START, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN) once each;
 * EnableEvent(INSTRUCTION_START) (unavailable), EnableEvent(12) (no such event).
 * JVM_INIT_DONE: GetCurrentThreadCpuTime x7, jobjectID2jobject(garbage) x3,
 * RawMonitorEnter(NULL) x2, RequestEvent(HEAP_DUMP, level 0) x1; with option exit=N,
 * ProfilerExit(N) at the end of the handler.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static int opt_exit = -1;
static volatile long n_thread_start, n_class_load, n_heap_dump;

static void notify(JVMPI_Event *ev)
{
    int i;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
        n_thread_start++;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        n_class_load++;
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        n_heap_dump++;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        JVMPI_HeapDumpArg arg;
        jlong t = 0;
        for (i = 0; i < 7; i++)
            t += jvmpi->GetCurrentThreadCpuTime() > 0;
        for (i = 0; i < 3; i++)
            if (jvmpi->jobjectID2jobject((jobjectID)(size_t)0x5a5a5a58) != NULL)
                printf("usage: FAIL garbage id resolved\n");
        for (i = 0; i < 2; i++)
            jvmpi->RawMonitorEnter(NULL);
        arg.heap_dump_level = JVMPI_DUMP_LEVEL_0;
        printf("usage: heap dump rc=%d\n", (int)jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg));
        printf("usage: init done, cpu time positive %d of 7\n", (int)t);
        fflush(stdout);
        if (opt_exit >= 0)
            jvmpi->ProfilerExit(opt_exit);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("usage: shut down: thread_start=%ld class_load=%ld heap_dump=%ld\n", n_thread_start,
               n_class_load, n_heap_dump);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && strncmp(options, "exit=", 5) == 0)
        opt_exit = atoi(options + 5);
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    printf("usage: INSTRUCTION_START rc=%d, 12 rc=%d\n",
           (int)jvmpi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL),
           (int)jvmpi->EnableEvent(12, NULL));
    fflush(stdout);
    return JNI_OK;
}
