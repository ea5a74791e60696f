/* rec_tracer.c — a JDK 1.3-style tracer that uses much of JVMPI at once, to be recorded
 * (tests/it/lifecycle/record_diff.sh, workload tests/java/RecordWork.java).
 *
 * Enabled in JVM_OnLoad: THREAD_START, THREAD_END, CLASS_LOAD, METHOD_ENTRY, METHOD_EXIT,
 * OBJECT_ALLOC, OBJECT_FREE, GC_START, GC_FINISH, COMPILED_METHOD_LOAD,
 * COMPILED_METHOD_UNLOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. Like the tracers and allocation
 * profilers of the time, it keeps a table of classes (from CLASS_LOAD) under a raw monitor,
 * takes the call trace (depth 4) of every allocation, names the class of each compiled
 * method (GetMethodClass), counts per thread in thread-local storage, reads the thread's CPU
 * time at each entry, and holds its lock from GC_START to GC_FINISH. It makes no call from
 * a thread of its own, so what it does follows from the program's events alone.
 * At JVM_SHUT_DOWN: "rec_tracer: done classes=C entries=E exits=X allocs=A frees=F gcs=G
 * compiled=K".
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "rec_tracer"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static long nclasses, nentries, nexits, nallocs, nfrees, ngcs, ncompiled;

struct cls {
    jobjectID id;
    char *name;
    struct cls *next;
};
#define NB 4096
static struct cls *classes[NB];
static unsigned slot_of(jobjectID id) { return (unsigned)(((size_t)id >> 3) * 2654435761u) % NB; }

static struct cls *find(jobjectID id)
{
    for (struct cls *c = classes[slot_of(id)]; c != NULL; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

struct per_thread {
    long depth, entries;
};

static struct per_thread *mine(JNIEnv *env)
{
    struct per_thread *t = jvmpi->GetThreadLocalStorage(env);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        jvmpi->SetThreadLocalStorage(env, t);
    }
    return t;
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        jvmpi->RawMonitorEnter(lock);
        if (find(ev->u.class_load.class_id) == NULL) {
            struct cls *c = malloc(sizeof *c);
            c->id = ev->u.class_load.class_id;
            c->name = strdup(ev->u.class_load.class_name);
            c->next = classes[slot_of(c->id)];
            classes[slot_of(c->id)] = c;
            nclasses++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_THREAD_START:
        mine(ev->u.thread_start.thread_env_id);
        break;
    case JVMPI_EVENT_THREAD_END: {
        struct per_thread *t = jvmpi->GetThreadLocalStorage(ev->env_id);
        jvmpi->SetThreadLocalStorage(ev->env_id, NULL);
        free(t);
        break;
    }
    case JVMPI_EVENT_METHOD_ENTRY: {
        struct per_thread *t = mine(ev->env_id);
        t->depth++;
        t->entries++;
        (void)jvmpi->GetCurrentThreadCpuTime();
        __sync_add_and_fetch(&nentries, 1);
        break;
    }
    case JVMPI_EVENT_METHOD_EXIT:
        mine(ev->env_id)->depth--;
        __sync_add_and_fetch(&nexits, 1);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC: {
        JVMPI_CallFrame frames[4];
        JVMPI_CallTrace trace;
        trace.env_id = ev->env_id;
        trace.frames = frames;
        jvmpi->GetCallTrace(&trace, 4);
        jvmpi->RawMonitorEnter(lock);
        nallocs++;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_OBJECT_FREE:
        nfrees++; /* under the lock taken at GC_START */
        break;
    case JVMPI_EVENT_GC_START:
        jvmpi->RawMonitorEnter(lock);
        ngcs++;
        break;
    case JVMPI_EVENT_GC_FINISH:
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: {
        jobjectID cid = jvmpi->GetMethodClass(ev->u.compiled_method_load.method_id);
        jvmpi->RawMonitorEnter(lock);
        if (find(cid) == NULL)
            FAIL("COMPILED_METHOD_LOAD of a method whose class %p had no CLASS_LOAD", (void *)cid);
        ncompiled++;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("done classes=%ld entries=%ld exits=%ld allocs=%ld frees=%ld gcs=%ld compiled=%ld fails=%d",
            nclasses, nentries, nexits, nallocs, nfrees, ngcs, ncompiled, g_fails);
        break;
    default:
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
    lock = jvmpi->RawMonitorCreate("rec_tracer lock");
    static const jint events[] = {
        JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_CLASS_LOAD,
        JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_METHOD_EXIT, JVMPI_EVENT_OBJECT_ALLOC,
        JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START, JVMPI_EVENT_GC_FINISH,
        JVMPI_EVENT_COMPILED_METHOD_LOAD, JVMPI_EVENT_COMPILED_METHOD_UNLOAD,
        JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS)
            say("EnableEvent(%d) failed", (int)events[i]);
    say("loaded");
    return JNI_OK;
}
