/* recv_late.c — a JDK 1.3-style tracer that switches CLASS_LOAD on late, from a handler
 * (tests/it/methods/recv_late.sh, workload tests/java/RecvLate.java).
 *
 * At JVM_OnLoad it enables METHOD_ENTRY2 and JVM_SHUT_DOWN only. Phase 1, the "ensure
 * defined" idiom without class names: every receiver it has not seen is asked for at once
 * with RequestEvent(OBJECT_ALLOC), under the agent's lock, from the ENTRY2 handler, and the
 * answer's class_id is kept (is_array JVMPI_NORMAL_OBJECT only). Once 8 receivers have been
 * named `after` times each (option after=N, default 1000: the workload's, named again and
 * again), the ENTRY2 handler calls EnableEvent(CLASS_LOAD), as tracers did when their user
 * asked for class names. Phase 2:
 * the specification promises an id's defining event before any event that uses it, while
 * the defining event is enabled; so every later ENTRY2 whose receiver was known in phase 1
 * must come after the CLASS_LOAD of that receiver's class (JVMPI's "definition before use",
 * the shim's announcement on next use). The workload's receivers are of classes that do not
 * declare the method called (RecvLate$R1..R4 calling RecvLate$Base.work), so that it is the
 * receiver, not the method, that needs its class announced.
 *
 * An ENTRY2 built on another thread while the switch was made may reach the handler after
 * it: each thread's first ENTRY2 after the switch is not judged.
 *
 * Checked (FAIL lines, first 5 per kind):
 *   unannounced  phase 2: an ENTRY2 names a receiver whose class had no CLASS_LOAD yet
 *   request      RequestEvent(OBJECT_ALLOC) for a receiver failed or named another object
 * Prints at JVM_SHUT_DOWN:
 *   recv_late: summary phase1=P checked=C workload_checked=W classes=K workload_classes=N
 *              receivers=R fails=F [kind=n ...]
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "recv_late"
#include "kit/out.h"
#include "kit/jvm.h"
#include "kit/checked.h"
#include "kit/pmap.h"

enum { F_UNANNOUNCED, F_REQUEST, NFAIL };
static const char *fail_name[NFAIL] = {"unannounced", "request"};
static volatile int fail_counts[NFAIL];

static JVMPI_RawMonitor lock;
static long switch_after = 1000;  /* ENTRY2s of one receiver that make it hot */
#define HOT_TO_SWITCH 8
static int late;                  /* CLASS_LOAD enabled (under lock) */
static long phase1, checked, workload_checked, n_classes, n_workload_classes;

/* ---- the agent's tables (kit/pmap.h), under lock ------------------------------------- */
/* A receiver's record: its class_id (NULL: not a plain object) and how often it was named. */
struct recv {
    jobjectID class_id;
    long count;
};
static struct pmap receivers;   /* obj_id -> struct recv */
static struct pmap classes;     /* class_id -> "w" (the workload's receiver classes) or "" */
static struct pmap threads;     /* env_id -> "": had an ENTRY2 since the switch */
static long n_receivers, n_hot;

static int first_since_switch(JNIEnv *env)
{
    if (pm_get(&threads, env, NULL))
        return 0;
    pm_put(&threads, env, "");
    return 1;
}

/* The OBJECT_ALLOC a request is answering (set under lock around the request). */
static jobjectID asking;
static jobjectID asked_class;
static int asked_kind = -1;

static void on_entry2(JVMPI_Event *ev)
{
    jobjectID o = ev->u.method_entry2.obj_id;
    if (o == NULL)
        return;
    jvmpi->RawMonitorEnter(lock);
    struct recv *r = NULL;
    if (!pm_get(&receivers, o, (void **)&r) && !late) {
        /* New receiver: ensure it is defined. */
        asking = o;
        asked_class = NULL;
        asked_kind = -1;
        if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, o) != JVMPI_SUCCESS || asked_kind < 0)
            FAILK(F_REQUEST, "RequestEvent(OBJECT_ALLOC, %p) failed or posted nothing", (void *)o);
        asking = NULL;
        if ((r = calloc(1, sizeof *r)) != NULL) {
            r->class_id = asked_kind == JVMPI_NORMAL_OBJECT ? asked_class : NULL;
            pm_put(&receivers, o, r);
            n_receivers++;
        }
    }
    if (!late) {
        phase1++;
        if (r != NULL && ++r->count == switch_after && ++n_hot == HOT_TO_SWITCH) {
            late = 1;
            jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
            say("CLASS_LOAD enabled once %d receivers had %ld ENTRY2s each, %ld receivers known",
                HOT_TO_SWITCH, switch_after, n_receivers);
        }
    } else if (r != NULL && r->class_id != NULL && !first_since_switch(ev->env_id)) {
        const char *kind = NULL;
        checked++;
        if (!pm_get(&classes, r->class_id, (void **)&kind))
            FAILK(F_UNANNOUNCED, "ENTRY2 names receiver %p of class %p, whose CLASS_LOAD has not "
                                 "come since CLASS_LOAD was enabled", (void *)o, (void *)r->class_id);
        else if (kind[0] == 'w')
            workload_checked++;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_class_load(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    if (!pm_get(&classes, ev->u.class_load.class_id, NULL)) {
        const char *name = ev->u.class_load.class_name;
        int work = name != NULL && strncmp(name, "RecvLate$R", 10) == 0;
        pm_put(&classes, ev->u.class_load.class_id, work ? "w" : "");
        n_classes++;
        n_workload_classes += work;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_object_alloc(JVMPI_Event *ev)
{
    /* Only requested ones are enabled to come: OBJECT_ALLOC stays off. */
    if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
        return;
    if (ev->u.obj_alloc.obj_id != asking) {
        FAILK(F_REQUEST, "requested OBJECT_ALLOC for %p names %p", (void *)asking,
              (void *)ev->u.obj_alloc.obj_id);
        return;
    }
    asked_class = ev->u.obj_alloc.class_id;
    asked_kind = ev->u.obj_alloc.is_array;
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY2:
        on_entry2(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_object_alloc(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        char kinds[256] = "";
        size_t used = 0;
        for (int k = 0; k < NFAIL; k++)
            if (fail_counts[k] > 0 && used < sizeof kinds)
                used += (size_t)snprintf(kinds + used, sizeof kinds - used, " %s=%d", fail_name[k],
                                         fail_counts[k]);
        jvmpi->RawMonitorEnter(lock);
        say("summary phase1=%ld checked=%ld workload_checked=%ld classes=%ld workload_classes=%ld "
            "receivers=%ld fails=%d%s", phase1, checked, workload_checked, n_classes,
            n_workload_classes, n_receivers, g_fails, kinds);
        jvmpi->RawMonitorExit(lock);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    if (options != NULL && strncmp(options, "after=", 6) == 0)
        switch_after = atol(options + 6);
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("recv_late lock");
    static const jint events[] = {JVMPI_EVENT_METHOD_ENTRY2, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(events, NELEMS(events), 0);
    say("loaded");
    return JNI_OK;
}
