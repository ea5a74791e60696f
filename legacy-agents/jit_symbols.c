/* jit_symbols.c — a JDK 1.3-style JIT-symbol agent: every compiled body is looked up.
 *
 * For tests/it/methods/jit_symbols.sh (workload tests/java/CovPair.java: 8 threads loading
 * classes).
 * Written the way JIT-symbol and sampling agents were (agent-idioms.md): CLASS_LOAD fills a
 * table of class ids (with the class name); COMPILED_METHOD_LOAD asks GetMethodClass for the
 * method's class and looks the class id up in that table to name the symbol. A miss is an
 * assertion failure: the agent prints what it missed and calls abort(), as such agents did
 * (they wrote symbol files and could not name code they had no class for). NULL from
 * GetMethodClass is a miss too.
 * Prints "jit_symbols: loaded", and at JVM_SHUT_DOWN
 *   jit_symbols: summary classes=N compiled=C startup=S named=M
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "jit_symbols"
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static volatile int init_done;
static long nclasses, ncompiled, nstartup, nnamed;

struct centry {
    jobjectID id;
    char *name;
    struct centry *next;
};
#define NB 16384
static struct centry *ctab[NB];
static unsigned h(jobjectID id) { return (unsigned)(((size_t)id >> 3) * 2654435761u) % NB; }

static const char *class_name(jobjectID id)
{
    for (struct centry *e = ctab[h(id)]; e; e = e->next)
        if (e->id == id)
            return e->name;
    return NULL;
}

static void on_class_load(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    if (class_name(ev->u.class_load.class_id) == NULL) {
        struct centry *e = malloc(sizeof *e);
        e->id = ev->u.class_load.class_id;
        e->name = strdup(ev->u.class_load.class_name);
        e->next = ctab[h(e->id)];
        ctab[h(e->id)] = e;
        nclasses++;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_compiled(JVMPI_Event *ev)
{
    jmethodID m = ev->u.compiled_method_load.method_id;
    jobjectID cid = jvmpi->GetMethodClass(m);
    jvmpi->RawMonitorEnter(lock);
    ncompiled++;
    if (!init_done)
        nstartup++;
    const char *name = cid ? class_name(cid) : NULL;
    if (name == NULL) {
        say("ASSERT COMPILED_METHOD_LOAD of method %p: GetMethodClass gave %p, which no "
            "CLASS_LOAD defined (%s)", (void *)m, (void *)cid,
            init_done ? "live" : "before JVM_INIT_DONE");
        fflush(stdout);
        abort();
    }
    nnamed++;
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD: on_class_load(ev); break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: on_compiled(ev); break;
    case JVMPI_EVENT_JVM_INIT_DONE: init_done = 1; break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        say("summary classes=%ld compiled=%ld startup=%ld named=%ld", nclasses, ncompiled,
            nstartup, nnamed);
        jvmpi->RawMonitorExit(lock);
        break;
    default: break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        say("FAIL GetEnv(JVMPI_VERSION_1)");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("jit_symbols lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("loaded");
    return JNI_OK;
}
