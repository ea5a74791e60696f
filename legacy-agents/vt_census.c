/* vt_census.c — a JDK 1.3-style thread-centric profiler: a table per thread, kept in the
 * thread's JVMPI thread-local storage from its THREAD_START to its THREAD_END
 * (tests/it/threads/vthreads_modes.sh, workload tests/java/VtCensus.java).
 *
 * Enabled: THREAD_START, THREAD_END, METHOD_ENTRY, METHOD_EXIT, GC_START, GC_FINISH,
 * JVM_SHUT_DOWN. Per thread (keyed by env_id, as such profilers were): a record made at its
 * THREAD_START with its name, its method depth and entry count, freed at its THREAD_END.
 * Counted: threads started and ended per name family (vc-*, vm-*, other), method events
 * from an env_id with no record (a thread never started, or ended), exits at depth 0, the
 * most threads alive at once. Printed: the THREAD_START of vc-0 with its group and parent and
 * whether it came on that thread; at each GC_FINISH the threads alive and the process's
 * malloc in use (the memory the JVM and the shim keep); a summary at JVM_SHUT_DOWN.
 */
#include <jvmpi.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "vt_census"
#include "kit/out.h"
#include "kit/checked.h"

enum { FAM_VC, FAM_VM, FAM_OTHER, NFAM };

struct trec {
    char name[64];
    int fam;
    long depth, entries;
};

static JVMPI_RawMonitor lock;
static long starts[NFAM], ends[NFAM], entries[NFAM];
static long unknown_env, unbalanced, alive, max_alive, gcs;

static int family(const char *name)
{
    if (name != NULL && strncmp(name, "vc-", 3) == 0)
        return FAM_VC;
    if (name != NULL && strncmp(name, "vm-", 3) == 0)
        return FAM_VM;
    return FAM_OTHER;
}

static void thread_start(JVMPI_Event *e)
{
    JNIEnv *env = e->u.thread_start.thread_env_id;
    if (jvmpi->GetThreadLocalStorage(env) != NULL)
        FAIL("THREAD_START for %s, whose env_id already has a record", S(e->u.thread_start.thread_name));
    struct trec *t = calloc(1, sizeof *t);
    if (t == NULL)
        return;
    snprintf(t->name, sizeof t->name, "%s", S(e->u.thread_start.thread_name));
    t->fam = family(e->u.thread_start.thread_name);
    jvmpi->SetThreadLocalStorage(env, t);
    jvmpi->RawMonitorEnter(lock);
    starts[t->fam]++;
    if (++alive > max_alive)
        max_alive = alive;
    jvmpi->RawMonitorExit(lock);
    if (strcmp(t->name, "vc-0") == 0)
        say("THREAD_START name=%s group=%s parent=%s on_itself=%s", t->name,
            S(e->u.thread_start.group_name), S(e->u.thread_start.parent_name),
            e->env_id == env ? "yes" : "no");
}

static void thread_end(JVMPI_Event *e)
{
    struct trec *t = jvmpi->GetThreadLocalStorage(e->env_id);
    if (t == NULL) {
        FAIL("THREAD_END for %s: no record for its env_id", S(e->u.thread_start.thread_name));
        return;
    }
    jvmpi->SetThreadLocalStorage(e->env_id, NULL);
    jvmpi->RawMonitorEnter(lock);
    ends[t->fam]++;
    entries[t->fam] += t->entries;
    alive--;
    jvmpi->RawMonitorExit(lock);
    free(t);
}

static void method(JVMPI_Event *e, int entry)
{
    struct trec *t = jvmpi->GetThreadLocalStorage(e->env_id);
    if (t == NULL) {
        jvmpi->RawMonitorEnter(lock);
        unknown_env++;
        jvmpi->RawMonitorExit(lock);
        return;
    }
    if (entry) {
        t->depth++;
        t->entries++;
    } else if (t->depth == 0) {
        jvmpi->RawMonitorEnter(lock);
        unbalanced++;
        jvmpi->RawMonitorExit(lock);
    } else {
        t->depth--;
    }
}

static void notify(JVMPI_Event *e)
{
    switch (e->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
        thread_start(e);
        break;
    case JVMPI_EVENT_THREAD_END:
        thread_end(e);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        method(e, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        method(e, 0);
        break;
    case JVMPI_EVENT_GC_START:
        break;
    case JVMPI_EVENT_GC_FINISH: {
        struct mallinfo2 mi = mallinfo2();
        say("gc %ld alive=%ld malloc_in_use=%zu", ++gcs, alive, mi.uordblks + mi.hblkhd);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("summary vc_starts=%ld vc_ends=%ld vm_starts=%ld vm_ends=%ld other_starts=%ld "
            "vc_entries=%ld unknown_env=%ld unbalanced=%ld max_alive=%ld fails=%d",
            starts[FAM_VC], ends[FAM_VC], starts[FAM_VM], ends[FAM_VM], starts[FAM_OTHER],
            entries[FAM_VC], unknown_env, unbalanced, max_alive, g_fails);
        break;
    }
}

/* Options: "nomethods" leaves METHOD_ENTRY/EXIT off, "nothreads" THREAD_START/END (what
 * the shim keeps per virtual thread, measured without the agent's own tables). */
JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("vt_census");
    static const jint ev[] = {JVMPI_EVENT_GC_START, JVMPI_EVENT_GC_FINISH,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    static const jint threads[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END};
    static const jint methods[] = {JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_METHOD_EXIT};
    enable_events(ev, NELEMS(ev), 0);
    if (options == NULL || strstr(options, "nothreads") == NULL)
        enable_events(threads, NELEMS(threads), 0);
    if (options == NULL || strstr(options, "nomethods") == NULL)
        enable_events(methods, NELEMS(methods), 0);
    return JNI_OK;
}
