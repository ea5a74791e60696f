/* bvcount.c — a JDK 1.3-style counting agent with a table per thread (bench/vthreads.sh).
 *
 * THREAD_START makes the thread's record and puts it in the thread's JVMPI thread-local
 * storage; METHOD_ENTRY and METHOD_EXIT count in the record of their env_id
 * (GetThreadLocalStorage on every event, as such profilers did); THREAD_END adds the record
 * to the totals under the agent's raw monitor and frees it. At each GC_FINISH it prints the
 * process's malloc in use; at JVM_SHUT_DOWN the totals:
 *   bvcount-mem: gc=N malloc_in_use=BYTES
 *   bvcount: threads=N ended=N entries=N exits=N orphans=N
 * (orphans: method events whose env_id had no record). Option "nomethods": only the thread
 * and GC events, for measuring what is kept per thread.
 */
#include <jvmpi.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;

struct rec {
    long long entries, exits;
};
static long long threads, ended, entries, exits, orphans, gcs;

static void notify(JVMPI_Event *e)
{
    struct rec *r;
    switch (e->event_type) {
    case JVMPI_EVENT_THREAD_START:
        r = calloc(1, sizeof *r);
        jvmpi->SetThreadLocalStorage(e->u.thread_start.thread_env_id, r);
        jvmpi->RawMonitorEnter(lock);
        threads++;
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_THREAD_END:
        r = jvmpi->GetThreadLocalStorage(e->env_id);
        jvmpi->SetThreadLocalStorage(e->env_id, NULL);
        jvmpi->RawMonitorEnter(lock);
        ended++;
        if (r != NULL) {
            entries += r->entries;
            exits += r->exits;
        }
        jvmpi->RawMonitorExit(lock);
        free(r);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
        r = jvmpi->GetThreadLocalStorage(e->env_id);
        if (r == NULL) {
            jvmpi->RawMonitorEnter(lock);
            orphans++;
            jvmpi->RawMonitorExit(lock);
        } else if (e->event_type == JVMPI_EVENT_METHOD_ENTRY) {
            r->entries++;
        } else {
            r->exits++;
        }
        break;
    case JVMPI_EVENT_GC_FINISH: {
        struct mallinfo2 mi = mallinfo2();
        printf("bvcount-mem: gc=%lld malloc_in_use=%zu\n", ++gcs, mi.uordblks + mi.hblkhd);
        fflush(stdout);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        /* Threads still running keep their counts: the workload's have all ended. */
        printf("bvcount: threads=%lld ended=%lld entries=%lld exits=%lld orphans=%lld\n", threads,
               ended, entries, exits, orphans);
        fflush(stdout);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bvcount: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("bvcount");
    jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_GC_START,
                 JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_METHOD_ENTRY,
                 JVMPI_EVENT_METHOD_EXIT};
    int n = (int)(sizeof ev / sizeof ev[0]);
    if (options != NULL && strstr(options, "nomethods") != NULL)
        n -= 2;
    for (int i = 0; i < n; i++)
        if (jvmpi->EnableEvent(ev[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "bvcount: EnableEvent(%d) failed\n", (int)ev[i]);
            return JNI_ERR;
        }
    return JNI_OK;
}
