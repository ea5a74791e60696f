/* lateuse.c — a JNI library, written as in 2002, that asks for JVMPI in JNI_OnLoad, on the
 * JavaVM it is handed, when System.loadLibrary("lateuse") loads it long after the JVM started
 * (tests/it/lifecycle/client_late.sh, workload tests/java/LateApp.java). It sets NotifyEvent,
 * creates a raw monitor that every handler holds, and enables THREAD_START/END, CLASS_LOAD,
 * METHOD_ENTRY, OBJECT_ALLOC, the MONITOR_CONTENDED_* and MONITOR_WAIT/WAITED events, GC_START/
 * FINISH and JVM_SHUT_DOWN. It keeps each thread's name in thread-local storage at
 * THREAD_START and checks it at THREAD_END; learns LateTarget's class id and work()'s method
 * id from CLASS_LOAD; counts work() entries and LateTarget allocations, and the monitor events
 * of the thread "late-worker"; prints a summary at JVM_SHUT_DOWN.
 * Lines start with "lateuse: "; violations are "lateuse: FAIL ...".
 */
#include <jvmpi.h>

#include <stdlib.h>
#include <string.h>

#define KIT_NAME "lateuse"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static jobjectID target_class;
static jmethodID work_mid;
static int n_class, n_entries, n_allocs, n_allocs_before_class, n_start, n_end, tls_ok, tls_bad;
static int n_center, n_centered, n_cexit, n_wait, n_waited, n_gcs, n_gcf, n_events;

struct tinfo {
    char name[64];
};

static int is_worker(JNIEnv *env)
{
    struct tinfo *t = jvmpi->GetThreadLocalStorage(env);
    return t != NULL && strcmp(t->name, "late-worker") == 0;
}

static void JNICALL notify_event(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    n_events++;
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START: {
        struct tinfo *t = calloc(1, sizeof *t);
        strncpy(t->name, ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "?",
                sizeof t->name - 1);
        jvmpi->SetThreadLocalStorage(ev->u.thread_start.thread_env_id, t);
        if (strcmp(t->name, "late-worker") == 0)
            n_start++;
        break;
    }
    case JVMPI_EVENT_THREAD_END: {
        struct tinfo *t = jvmpi->GetThreadLocalStorage(ev->env_id);
        if (t == NULL || strcmp(t->name, ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "?") != 0)
            tls_bad++;
        else
            tls_ok++;
        if (t != NULL && strcmp(t->name, "late-worker") == 0)
            n_end++;
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
        if (strcmp(ev->u.class_load.class_name, "LateTarget") == 0) {
            n_class++;
            target_class = ev->u.class_load.class_id;
            for (int i = 0; i < ev->u.class_load.num_methods; i++)
                if (strcmp(ev->u.class_load.methods[i].method_name, "work") == 0)
                    work_mid = ev->u.class_load.methods[i].method_id;
        }
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        if (work_mid != NULL && ev->u.method.method_id == work_mid)
            n_entries++;
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (target_class != NULL && ev->u.obj_alloc.class_id == target_class)
            n_allocs++;
        else if (target_class == NULL && is_worker(ev->env_id))
            n_allocs_before_class++;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        n_center += is_worker(ev->env_id);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        n_centered += is_worker(ev->env_id);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        n_cexit++;
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        n_wait += is_worker(ev->env_id);
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        n_waited += is_worker(ev->env_id);
        break;
    case JVMPI_EVENT_GC_START:
        n_gcs++;
        break;
    case JVMPI_EVENT_GC_FINISH:
        n_gcf++;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("summary start=%d end=%d class=%d entries=%d allocs=%d contended_enter=%d "
            "contended_entered=%d contended_exit=%d wait=%d waited=%d gc_start=%d gc_finish=%d "
            "tls_ok=%d tls_bad=%d events=%d fails=%d",
            n_start, n_end, n_class, n_entries, n_allocs, n_center, n_centered, n_cexit, n_wait,
            n_waited, n_gcs, n_gcf, tls_ok, tls_bad, n_events, g_fails);
        break;
    default:
        FAIL("event %d it did not enable", (int)ev->event_type);
    }
    jvmpi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    static const jint events[] = {
        JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_CLASS_LOAD,
        JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
        JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, JVMPI_EVENT_MONITOR_CONTENDED_EXIT,
        JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED, JVMPI_EVENT_GC_START,
        JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_JVM_SHUT_DOWN};
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("GetEnv(JVMPI_VERSION_1) in JNI_OnLoad refused");
        return JNI_VERSION_1_2;
    }
    jvmpi->NotifyEvent = notify_event;
    lock = jvmpi->RawMonitorCreate("lateuse_lock");
    for (unsigned i = 0; i < sizeof events / sizeof events[0]; i++) {
        jint rc = jvmpi->EnableEvent(events[i], NULL);
        if (rc != JVMPI_SUCCESS)
            FAIL("EnableEvent(%d) returned %d", (int)events[i], (int)rc);
    }
    say("onload version=0x%x", (unsigned)jvmpi->version);
    return JNI_VERSION_1_2;
}
