/* invis_gc.c — a JDK 1.3-style JVMPI heap profiler with HPROF's one global lock
 * (tests/it/memory/invis_gc.sh, workload tests/java/InvisGc.java).
 *
 * Enabled in JVM_OnLoad: OBJECT_ALLOC, OBJECT_FREE, GC_START, GC_FINISH, CLASS_LOAD,
 * THREAD_START, THREAD_END, JVM_INIT_DONE, JVM_SHUT_DOWN.
 *
 * The lock discipline of the HPROF family (agent-idioms.md): one raw monitor, "_invis_lock".
 * GC_START enters it and GC_FINISH leaves it, so nothing changes the tables during a
 * collection; OBJECT_ALLOC, OBJECT_FREE, CLASS_LOAD, THREAD_START and THREAD_END handlers
 * enter it too. This relies on two things the JVM promised: no OBJECT_ALLOC, CLASS_LOAD or
 * THREAD_START on the thread that posts the bracket between its GC_START and GC_FINISH (the
 * tables would change under the collection), and the bracket thread never waiting for a
 * thread that is blocked on the lock.
 *
 * RunGC is called by the agent: once from the CLASS_LOAD handler of the workload's marker
 * class InvisGcMark (outside the lock, as a handler that forces a collection would), and
 * twice from the system thread "invis-gc", started at JVM_INIT_DONE, when that handler
 * tells it to. A second system thread, "invis-watchdog", looks every 100 ms at the threads
 * waiting for the lock; one that has waited more than 5 s is a FAIL ("blocked"). Every
 * lock acquisition also measures its own wait: more than 3 s is a FAIL.
 *
 * After every GC_FINISH the number of brackets so far is written to the file given as the
 * agent option (status=PATH), which the workload polls until every collection it counted
 * has had its bracket.
 *
 * Output: "invis_gc: FAIL ..." per violation; at JVM_SHUT_DOWN
 *   "invis_gc: shutdown brackets=B rungc=M allocs=A frees=R classes=C
 *    threads=T max_wait_ms=W fails=N".
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "invis_gc"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 20
#define KIT_MONOTONIC
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock, sys_mon;
static char status_path[1024];


/* ---- the global lock, with the waits watched ---------------------------------------- */

#define NSLOT 64
static volatile long long wait_since[NSLOT];   /* 0: free slot */
static volatile const char *wait_what[NSLOT];
static volatile long long max_wait;

static void lock_enter(const char *what)
{
    int slot = -1;
    for (int i = 0; i < NSLOT && slot < 0; i++)
        if (__sync_bool_compare_and_swap(&wait_since[i], 0, -1))
            slot = i;
    long long t0 = now_ms();
    if (slot >= 0) {
        wait_what[slot] = what;
        wait_since[slot] = t0;
    }
    jvmpi->RawMonitorEnter(lock);
    long long w = now_ms() - t0;
    if (slot >= 0)
        wait_since[slot] = 0;
    if (w > max_wait)
        max_wait = w;
    if (w > 3000)
        FAIL("blocked %s handler waited %lld ms for the global lock", what, w);
}
static void lock_exit(void) { jvmpi->RawMonitorExit(lock); }

static void watchdog(void *arg)
{
    (void)arg;
    int reported = 0;
    for (;;) {
        usleep(100 * 1000);
        long long now = now_ms();
        for (int i = 0; i < NSLOT; i++) {
            long long s = wait_since[i];
            if (s > 0 && now - s > 5000 && !reported) {
                reported = 1;
                FAIL("blocked watchdog: a %s handler has waited %lld ms for the global lock",
                     (const char *)wait_what[i], now - s);
            }
        }
    }
}

/* ---- the bracket state (under the lock) -------------------------------------------- */

static int in_gc;
static JNIEnv *gc_env;          /* the thread that posted GC_START */
static int brackets, allocs, frees, classes, threads;
static volatile int rungc_done;
static int sys_go;

static void write_status(int n)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", status_path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    fprintf(f, "%d\n", n);
    fclose(f);
    rename(tmp, status_path);
}

/* An event that changes the tables: never inside a bracket on the bracket's thread. */
static void table_event(const char *what, JNIEnv *env, int *counter)
{
    lock_enter(what);
    if (in_gc && env == gc_env)
        FAIL("%s on the bracket thread %p between GC_START and GC_FINISH", what, (void *)env);
    (*counter)++;
    lock_exit();
}

static void run_gc(const char *from)
{
    jvmpi->RunGC();
    __sync_add_and_fetch(&rungc_done, 1);
    say("RunGC from %s", from);
}

static void gc_thread(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(sys_mon);
    while (!sys_go)
        jvmpi->RawMonitorWait(sys_mon, 0);
    jvmpi->RawMonitorExit(sys_mon);
    run_gc("system thread");
    run_gc("system thread");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_GC_START:
        lock_enter("GC_START"); /* held until GC_FINISH */
        if (in_gc)
            FAIL("GC_START inside a bracket");
        in_gc = 1;
        gc_env = ev->env_id;
        break;
    case JVMPI_EVENT_GC_FINISH: {
        if (!in_gc)
            FAIL("GC_FINISH without GC_START");
        else if (ev->env_id != gc_env)
            FAIL("GC_FINISH on %p, GC_START on %p", (void *)ev->env_id, (void *)gc_env);
        in_gc = 0;
        gc_env = NULL;
        int n = ++brackets;
        lock_exit();
        write_status(n);
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC:
        table_event("OBJECT_ALLOC", ev->env_id, &allocs);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        /* inside the bracket: the lock is already ours (entered in GC_START) */
        lock_enter("OBJECT_FREE");
        if (!in_gc)
            FAIL("OBJECT_FREE outside a bracket");
        frees++;
        lock_exit();
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *n = ev->u.class_load.class_name;
        table_event("CLASS_LOAD", ev->env_id, &classes);
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT) && n && strcmp(n, "InvisGcMark") == 0) {
            run_gc("CLASS_LOAD handler");
            jvmpi->RawMonitorEnter(sys_mon);
            sys_go = 1;
            jvmpi->RawMonitorNotifyAll(sys_mon);
            jvmpi->RawMonitorExit(sys_mon);
        }
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        table_event("THREAD_START", ev->env_id, &threads);
        break;
    case JVMPI_EVENT_THREAD_END:
        lock_enter("THREAD_END");
        lock_exit();
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("invis-gc", JVMPI_NORMAL_PRIORITY, gc_thread) != JNI_OK)
            FAIL("CreateSystemThread invis-gc");
        if (jvmpi->CreateSystemThread("invis-watchdog", JVMPI_NORMAL_PRIORITY, watchdog) != JNI_OK)
            FAIL("CreateSystemThread invis-watchdog");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        lock_enter("JVM_SHUT_DOWN");
        say("shutdown brackets=%d rungc=%d allocs=%d frees=%d classes=%d "
            "threads=%d max_wait_ms=%lld fails=%d", brackets, rungc_done, allocs,
            frees, classes, threads, max_wait, g_fails);
        lock_exit();
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    if (options == NULL || strncmp(options, "status=", 7) != 0) {
        fprintf(stderr, "invis_gc: usage: status=PATH\n");
        return JNI_ERR;
    }
    snprintf(status_path, sizeof status_path, "%s", options + 7);
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_invis_lock");
    sys_mon = jvmpi->RawMonitorCreate("_invis_sys");
    static const jint ev[] = {
        JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START,
        JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START,
        JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (jvmpi->EnableEvent(ev[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "invis_gc: EnableEvent(%d) failed\n", (int)ev[i]);
            return JNI_ERR;
        }
    write_status(0);
    return JNI_OK;
}
