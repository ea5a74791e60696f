/* bdump.c — a JDK 1.3-style JVMPI agent that takes a level-2 heap dump on SIGQUIT.
 *
 * Enables DATA_DUMP_REQUEST (which the VM sends when the process gets SIGQUIT, as HotSpot
 * did on Ctrl-\). On each one it calls RequestEvent(JVMPI_EVENT_HEAP_DUMP, level 2); the
 * dump is built and delivered to NotifyEvent before RequestEvent returns, so the time
 * around that call (CLOCK_MONOTONIC) is the whole cost of the dump as the agent sees it.
 * The HEAP_DUMP handler only records end - begin and num_traces. It prints
 *   DUMP_MS <ms> BYTES <n> TRACES <t> LEVEL <l> RC <rc>  (the dump)
 * then takes a second level-2 dump of the same heap (its objects all have ids by then):
 *   DUMP2_MS <ms> BYTES <n> RC <rc>
 * jvmpi.h and libc only, as agents of the era were.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <time.h>

static JVMPI_Interface *jvmpi;
static long long dump_bytes = -1;
static int dump_traces = -1;
static int dump_level = -1;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void notify(JVMPI_Event *event)
{
    switch (event->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_HEAP_DUMP:
        dump_bytes = (long long)(event->u.heap_dump.end - event->u.heap_dump.begin);
        dump_traces = event->u.heap_dump.num_traces;
        dump_level = event->u.heap_dump.dump_level;
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST: {
        JVMPI_HeapDumpArg arg;
        arg.heap_dump_level = JVMPI_DUMP_LEVEL_2;
        dump_bytes = -1;
        dump_traces = -1;
        dump_level = -1;
        double t0 = now_ms();
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
        double t1 = now_ms();
        printf("DUMP_MS %.1f BYTES %lld TRACES %d LEVEL %d RC %d\n", t1 - t0, dump_bytes,
               dump_traces, dump_level, (int)rc);
        fflush(stdout);
        /* A second dump of the same heap: every object has its id (tag) already. */
        jint rc2 = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
        double t2 = now_ms();
        printf("DUMP2_MS %.1f BYTES %lld RC %d\n", t2 - t1, dump_bytes, (int)rc2);
        fflush(stdout);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bdump: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bdump: EnableEvent(DATA_DUMP_REQUEST) failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
