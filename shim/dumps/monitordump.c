/* monitordump.c — RequestEvent(MONITOR_DUMP): the JVMPI monitor dump, byte-exact.
 *
 * Format (spec §4.4, reference-behavior.md §4.5), ids and JNIEnv* native, counts u4
 * big-endian:
 *   JVMPI_MONITOR_JAVA  jobjectID object, JNIEnv* owner, u4 entry count,
 *                       u4 n, JNIEnv*[n] waiting to enter, u4 m, JNIEnv*[m] waiting to be notified
 *   JVMPI_MONITOR_RAW   char* name, JVMPI_RawMonitor id, JNIEnv* owner, u4 entry count,
 *                       u4 n, JNIEnv*[n], u4 m, JNIEnv*[m]
 * "Entry count" follows HotSpot: the number of threads waiting to enter plus those waiting
 * to be notified (CVM used the owner's recursion count instead).
 *
 * Java monitors are found from the threads: what each owns (GetOwnedMonitorInfo), what each
 * blocked thread waits to enter (GetCurrentContendedMonitor, only for threads JVMTI says
 * are BLOCKED_ON_MONITOR_ENTER: JDK 17 also names the lock of a thread in Object.wait),
 * and what each thread in Object.wait waits on (recorded by the shim at MonitorWait: JDK 25
 * answers NULL there). The monitor usage is then derived from these per-thread facts
 * rather than from GetObjectMonitorUsage, whose lists differ between JDK 17 and 25. Other
 * threads are held still (world_hold) while the facts are gathered: one snapshot. Raw
 * monitors come from the shim's own registry: those owned or with threads waiting.
 *
 * Unlike HotSpot (which left them unset), num_traces/traces and threads_status describe
 * every live thread, in the same order.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/dumpbuf.h"
#include "core/dumpcheck.h"
#include "core/ids.h"
#include "dumps/internal.h"
#include "dumps/world.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"
#include "monitors/rawmon.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <string.h>

#define TRACE_DEPTH 64

struct tfacts {
    JNIEnv *env;
    jthread thread;
    jint state;
    jobject *owned;
    jint n_owned;
    jobject contended;      /* waiting to enter */
    jobject waiting_on;     /* in Object.wait */
};

struct mon {
    jobject obj;
    JNIEnv *owner;
};

static void add_mon(JNIEnv *jni, struct mon **v, size_t *n, size_t *cap, jobject o, JNIEnv *owner)
{
    if (o == NULL)
        return;
    for (size_t i = 0; i < *n; i++)
        if ((*jni)->IsSameObject(jni, (*v)[i].obj, o)) {
            if (owner != NULL)
                (*v)[i].owner = owner;
            return;
        }
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        struct mon *p = realloc(*v, c * sizeof *p);
        if (p == NULL)
            return;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = (struct mon){o, owner};
}

static jint monitordump_request(struct instance *inst, JNIEnv *jni, void *arg)
{
    (void)arg;
    jvmtiEnv *j = g_shim.jvmti;
    /* Frees of a collection that has finished come before anything later (HotSpot posted
     * them during the collection). */
    memory_deliver_frees(jni, false);
    if ((*jni)->PushLocalFrame(jni, 64) != JNI_OK)
        return JVMPI_FAIL;
    struct world world;
    bool held = world_hold(jni, &world, TRACE_DEPTH); /* the other threads stand still */
    size_t nt = world.n;
    struct tfacts *tf = calloc(nt ? nt : 1, sizeof *tf);
    jint *status = calloc(nt ? nt : 1, sizeof *status);
    struct mon *mons = NULL;
    size_t nm = 0, cm = 0;
    jint rc = JVMPI_FAIL;
    if (!held || !tf || !status)
        goto out;

    for (size_t i = 0; i < nt; i++) {
        struct tfacts *f = &tf[i];
        f->env = world.snap[i].env;
        f->thread = world.snap[i].thread;
        if (f->thread == NULL)
            continue;
        /* A thread that ended meanwhile has no state, owns nothing and waits for nothing. */
        jvmti_ignore((*j)->GetThreadState(j, f->thread, &f->state),
                     "GetThreadState for MONITOR_DUMP: a thread that ended has none");
        jvmti_ignore((*j)->GetOwnedMonitorInfo(j, f->thread, &f->n_owned, &f->owned),
                     "GetOwnedMonitorInfo for MONITOR_DUMP: a thread that ended owns none");
        if (f->state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
            jvmti_ignore((*j)->GetCurrentContendedMonitor(j, f->thread, &f->contended),
                         "GetCurrentContendedMonitor for MONITOR_DUMP: one that ended waits for none");
        struct thread_rec *r = threads_acquire(f->env);
        if (r != NULL) {
            shim_crit_begin(); /* a JNI call under a shim lock (shim.h) */
            pthread_mutex_lock(&r->wait_lock);
            if (r->wait_obj != NULL && (f->state & JVMTI_THREAD_STATE_IN_OBJECT_WAIT))
                f->waiting_on = (*jni)->NewLocalRef(jni, r->wait_obj);
            pthread_mutex_unlock(&r->wait_lock);
            shim_crit_end();
            threads_release(r);
        }
        status[i] = jvmpi_GetThreadStatus(inst, f->env);
        if (world.held[i])
            status[i] &= ~JVMPI_THREAD_SUSPENDED; /* the dump's own suspension */
    }
    world_resume(&world);

    /* The monitors: owned, entered-for and waited-on objects. */
    for (size_t i = 0; i < nt; i++) {
        for (jint k = 0; k < tf[i].n_owned; k++)
            add_mon(jni, &mons, &nm, &cm, tf[i].owned[k], tf[i].env);
        add_mon(jni, &mons, &nm, &cm, tf[i].contended, NULL);
        add_mon(jni, &mons, &nm, &cm, tf[i].waiting_on, NULL);
    }

    struct dumpbuf b;
    db_init(&b, 4096);
    JNIEnv **enter = calloc(nt ? nt : 1, sizeof *enter), **wait = calloc(nt ? nt : 1, sizeof *wait);
    for (size_t m = 0; m < nm && enter && wait; m++) {
        jint ne = 0, nw = 0;
        for (size_t i = 0; i < nt; i++) {
            if (tf[i].contended && (*jni)->IsSameObject(jni, tf[i].contended, mons[m].obj))
                enter[ne++] = tf[i].env;
            if (tf[i].waiting_on && (*jni)->IsSameObject(jni, tf[i].waiting_on, mons[m].obj))
                wait[nw++] = tf[i].env;
        }
        if (mons[m].owner == NULL && ne == 0 && nw == 0)
            continue;
        jclass c = (*jni)->GetObjectClass(jni, mons[m].obj);
        classes_id_announced(jni, c);
        (*jni)->DeleteLocalRef(jni, c);
        db_u1(&b, JVMPI_MONITOR_JAVA);
        db_ptr(&b, ids_of_kept(jni, mons[m].obj));
        db_ptr(&b, mons[m].owner);
        db_u4(&b, (uint32_t)(ne + nw));
        db_u4(&b, (uint32_t)ne);
        for (jint k = 0; k < ne; k++)
            db_ptr(&b, enter[k]);
        db_u4(&b, (uint32_t)nw);
        for (jint k = 0; k < nw; k++)
            db_ptr(&b, wait[k]);
    }
    free(enter);
    free(wait);

    struct rawmon_info *raw = NULL;
    size_t nr = rawmon_snapshot(&raw);
    for (size_t m = 0; m < nr; m++) {
        db_u1(&b, JVMPI_MONITOR_RAW);
        db_ptr(&b, raw[m].name);
        db_ptr(&b, raw[m].id);
        db_ptr(&b, raw[m].owner_env);
        db_u4(&b, (uint32_t)(raw[m].n_enter + raw[m].n_wait));
        db_u4(&b, (uint32_t)raw[m].n_enter);
        for (int k = 0; k < raw[m].n_enter; k++)
            db_ptr(&b, raw[m].enter_envs[k]);
        db_u4(&b, (uint32_t)raw[m].n_wait);
        for (int k = 0; k < raw[m].n_wait; k++)
            db_ptr(&b, raw[m].wait_envs[k]);
    }

    if (b.oom) {
        log_error("agent %d: RequestEvent(MONITOR_DUMP): out of memory building the dump: "
                  "JVMPI_FAIL", inst->slot);
    } else {
        if (g_shim.check_dumps) {
            size_t bad = 0;
            char msg[256];
            if (dump_walk_monitor(b.p, b.len, NULL, NULL, &bad, msg, sizeof msg) != 0)
                log_error("checkdumps: MONITOR_DUMP is malformed at offset %zu of %zu: %s", bad,
                          b.len, msg);
        }
        JVMPI_Event ev;
        event_init(&ev, JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT, jni);
        ev.u.monitor_dump.begin = (char *)b.p;
        ev.u.monitor_dump.end = (char *)b.p + b.len;
        ev.u.monitor_dump.num_traces = (jint)nt;
        ev.u.monitor_dump.traces = world.traces;
        ev.u.monitor_dump.threads_status = status;
        event_post(inst, &ev);
        rc = JVMPI_SUCCESS;
    }
    rawmon_snapshot_free(raw, nr);
    db_free(&b);
out:
    for (size_t i = 0; tf && i < nt; i++)
        if (tf[i].owned)
            jvmti_free(j, tf[i].owned);
    free(tf);
    free(status);
    free(mons);
    world_free(jni, &world);
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

void monitordump_module_init(void)
{
    struct event_row mdump = {.kind = EVK_REQUEST_ONLY, .request = monitordump_request};
    events_register(JVMPI_EVENT_MONITOR_DUMP, &mdump);
}
