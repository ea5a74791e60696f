/* thrctl.c — JVMPI thread control: SuspendThread, ResumeThread and their list forms,
 * GetThreadStatus, ThreadHasRun.
 *
 * Suspension is JVMTI SuspendThread / SuspendThreadList on the thread the JNIEnv names,
 * after holding the thread's guard (shim.h): no thread is left suspended inside a section of
 * the shim that holds a lock, which the caller (a sampler asking GetCallTrace next) would
 * wait on for ever; a thread that stays in one for about 100 ms is left running.
 * HotSpot's rules are kept: NULL, unknown or exiting threads and the calling thread itself
 * are ignored (hprof expects to keep running), suspension does not nest, and the list
 * forms report 0, 10 (invalid thread) or 14 (already suspended) per entry. The shim only
 * resumes threads JVMPI suspended, so it never undoes a java.lang.Thread.suspend.
 *
 * GetThreadStatus maps JVMTI thread state: blocked on monitor entry -> MONITOR_WAIT;
 * Object.wait, LockSupport.park and Thread.sleep -> CONDVAR_WAIT (HotSpot said RUNNABLE
 * for sleep; a sleeping thread waits on a timed condition, and samplers must not count
 * it as running); otherwise RUNNABLE; plus the INTERRUPTED bit and the SUSPENDED bit for
 * a suspension JVMPI did not make. As the spec says, a thread JVMPI suspended keeps the
 * status it had when suspended. Agent threads blocked in a shim raw monitor report
 * MONITOR_WAIT / CONDVAR_WAIT as HotSpot did for its own raw monitors.
 *
 * ThreadHasRun measures: the thread's CPU time at each JVMPI suspension is compared with
 * the one at the previous suspension.
 */
#include "core/api.h"
#include "core/worker.h"
#include "events/report.h"
#include "threads/threads.h"

#include <stdlib.h>

#define RESULT_INVALID_THREAD 10  /* JVMDI_ERROR_INVALID_THREAD, as HotSpot answered */
#define RESULT_SUSPENDED 14       /* JVMDI_ERROR_THREAD_SUSPENDED */

/* JVMTI has no CPU time for a virtual thread (JVMTI_ERROR_UNSUPPORTED_OPERATION on JDK
 * 25): the shim's own count of its carriers' time stands in (vthreads.c). */
static jlong cpu_of(struct thread_rec *r)
{
    if (r->jni_table != NULL)
        return vthreads_cpu(r);
    jlong ns = -1;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadCpuTime(g_shim.jvmti, r->ref, &ns), LOG_DEBUG,
                     "GetThreadCpuTime (the CPU time is -1)"))
        return -1;
    return ns;
}

static jint status_now(struct thread_rec *r)
{
    int raw = atomic_load(&r->raw_state);
    jint st = 0;
    if (r->ref == NULL ||
        !jvmti_ok_at((*g_shim.jvmti)->GetThreadState(g_shim.jvmti, r->ref, &st), LOG_DEBUG,
                     "GetThreadState (the status is the shim's own)"))
        return raw ? raw : JVMPI_THREAD_RUNNABLE;
    jint s;
    if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        s = JVMPI_THREAD_MONITOR_WAIT;
    else if (st & (JVMTI_THREAD_STATE_IN_OBJECT_WAIT | JVMTI_THREAD_STATE_PARKED |
                   JVMTI_THREAD_STATE_SLEEPING))
        s = JVMPI_THREAD_CONDVAR_WAIT;
    else
        s = raw ? raw : JVMPI_THREAD_RUNNABLE;
    if (st & JVMTI_THREAD_STATE_INTERRUPTED)
        s |= JVMPI_THREAD_INTERRUPTED;
    if ((st & JVMTI_THREAD_STATE_SUSPENDED) && !r->jvmpi_suspended)
        s |= JVMPI_THREAD_SUSPENDED;
    return s;
}

jint jvmpi_GetThreadStatus(struct instance *inst, JNIEnv *env)
{
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadStatus(NULL): RUNNABLE");
        return JVMPI_THREAD_RUNNABLE;
    }
    if (threads_env_is_current(env))
        threads_self();
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL) {
        report_misuse(inst, LOG_INFO, "GetThreadStatus(%p): no such thread: RUNNABLE",
                                      (void *)env);
        return JVMPI_THREAD_RUNNABLE; /* HotSpot's answer for an unknown env */
    }
    /* JVMTI reads no thread state for a caller the VM does not know: say so, rather than
     * pass off the fallback as the thread's state. */
    if (!r->jvmpi_suspended && shim_current_jni() == NULL)
        report_misuse(inst, LOG_WARN, "GetThreadStatus(%p) from a thread the JVM does not "
                      "know: its state cannot be read; RUNNABLE", (void *)env);
    jint s = r->jvmpi_suspended ? r->status_at_suspend : status_now(r);
    threads_release(r);
    return s;
}

/* Validate one env for suspension: the record (acquired) or NULL with *result set. */
static struct thread_rec *target(struct instance *inst, JNIEnv *env, const char *fn,
                                 jint *result)
{
    *result = RESULT_INVALID_THREAD;
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "%s(NULL): ignored", fn);
        return NULL;
    }
    /* Also the carrier of the calling virtual thread: suspending it stops the caller. */
    if (threads_env_is_self(env)) {
        log_debug("agent %d: %s(self): ignored, as HotSpot did", inst->slot, fn);
        return NULL;
    }
    /* The shim's worker: an agent knows its env from the THREAD_START before the events it
     * posts (a GC bracket, OBJECT_FREE, CLASS_UNLOAD). It serves the JVM's heap walks and the
     * agent's brackets; stopped inside a JVM heap walk it would stop every thread (see
     * memory/gc.c, flush_frees), so it is left running, as HotSpot's internal threads were. */
    if (env == worker_env()) {
        *result = 0; /* as for a thread left running inside a shim section (thread_list) */
        log_debug("agent %d: %s(the shim's worker thread): left running", inst->slot, fn);
        return NULL;
    }
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL || r->ref == NULL || r->ended) {
        report_misuse(inst, LOG_INFO, "%s(%p): no such live thread; ignored", fn, (void *)env);
        threads_release(r);
        return NULL;
    }
    *result = 0;
    return r;
}

static void note_suspended(struct thread_rec *r, jint status_before)
{
    jlong now = cpu_of(r);
    pthread_mutex_lock(&r->wait_lock); /* suspension fields: several agent threads may call */
    r->has_run = r->cpu_at_suspend == 0 || now < 0 || now != r->cpu_at_suspend;
    r->cpu_at_suspend = now < 0 ? 0 : now;
    r->status_at_suspend = status_before;
    r->jvmpi_suspended = true;
    pthread_mutex_unlock(&r->wait_lock);
}

/* Atomically clear the JVMPI-suspended mark; true if it was set (the caller resumes). */
static bool take_suspended(struct thread_rec *r)
{
    pthread_mutex_lock(&r->wait_lock);
    bool was = r->jvmpi_suspended;
    r->jvmpi_suspended = false;
    pthread_mutex_unlock(&r->wait_lock);
    return was;
}

void jvmpi_SuspendThread(struct instance *inst, JNIEnv *env)
{
    jint res;
    struct thread_rec *r = target(inst, env, "SuspendThread", &res);
    if (r == NULL)
        return;
    if (!r->jvmpi_suspended && threads_hold_guard(r)) {
        jint before = status_now(r);
        jvmtiError err = (*g_shim.jvmti)->SuspendThread(g_shim.jvmti, r->ref);
        if (err == JVMTI_ERROR_NONE) {
            note_suspended(r, before);
        } else {
            threads_release_guard(r);
            if (err == JVMTI_ERROR_THREAD_SUSPENDED || err == JVMTI_ERROR_THREAD_NOT_ALIVE)
                jvmti_ignore(err, "SuspendThread of a thread suspended otherwise or ended: "
                                  "JVMPI suspended nothing");
            else
                jvmti_ok_at(err, LOG_WARN, "SuspendThread");
        }
    }
    threads_release(r);
}

void jvmpi_ResumeThread(struct instance *inst, JNIEnv *env)
{
    jint res;
    struct thread_rec *r = target(inst, env, "ResumeThread", &res);
    if (r == NULL)
        return;
    if (take_suspended(r)) {
        jvmtiError err = (*g_shim.jvmti)->ResumeThread(g_shim.jvmti, r->ref);
        if (err == JVMTI_ERROR_THREAD_NOT_SUSPENDED || err == JVMTI_ERROR_THREAD_NOT_ALIVE)
            jvmti_ignore(err, "ResumeThread of a thread resumed otherwise or ended: "
                              "nothing is left to resume");
        else
            jvmti_ok_at(err, LOG_WARN, "ResumeThread");
        threads_release_guard(r);
    }
    threads_release(r);
}

static void thread_list(struct instance *inst, jint n, JNIEnv **list, jint *results,
                        bool suspend)
{
    const char *fn = suspend ? "SuspendThreadList" : "ResumeThreadList";
    if (n <= 0 || list == NULL || results == NULL) {
        report_misuse(inst, LOG_INFO, "%s(%d, %p, %p): nothing to do", fn, (int)n,
                                      (void *)list, (void *)results);
        return;
    }
    struct thread_rec **recs = calloc((size_t)n, sizeof *recs);
    jthread *ts = calloc((size_t)n, sizeof *ts);
    jint *idx = calloc((size_t)n, sizeof *idx);
    jint *before = calloc((size_t)n, sizeof *before);
    jvmtiError *errs = calloc((size_t)n, sizeof *errs);
    if (!recs || !ts || !idx || !before || !errs) {
        log_error("agent %d: %s: out of memory", inst->slot, fn);
        goto out;
    }
    jint m = 0;
    for (jint i = 0; i < n; i++) {
        recs[i] = target(inst, list[i], fn, &results[i]);
        if (recs[i] == NULL)
            continue;
        if (suspend && recs[i]->jvmpi_suspended) {
            results[i] = RESULT_SUSPENDED;
            continue;
        }
        if (!suspend && !take_suspended(recs[i]))
            continue; /* HotSpot: 0 for a thread that was not suspended */
        /* A thread that stays inside a section of the shim holding a lock is left running
         * (0, as HotSpot answered for threads it did not suspend): the caller could
         * otherwise wait on that lock for ever (shim.h, shim_guard). */
        if (suspend && !threads_hold_guard(recs[i]))
            continue;
        if (suspend)
            before[i] = status_now(recs[i]);
        ts[m] = recs[i]->ref;
        idx[m++] = i;
    }
    if (m > 0) {
        jvmtiError err = suspend
            ? (*g_shim.jvmti)->SuspendThreadList(g_shim.jvmti, m, ts, errs)
            : (*g_shim.jvmti)->ResumeThreadList(g_shim.jvmti, m, ts, errs);
        if (!jvmti_ok_at(err, LOG_WARN, fn))
            for (jint k = 0; k < m; k++)
                errs[k] = err;
        for (jint k = 0; k < m; k++) {
            jint i = idx[k];
            if (!suspend || errs[k] != JVMTI_ERROR_NONE)
                threads_release_guard(recs[i]); /* resumed, or not suspended after all */
            if (errs[k] == JVMTI_ERROR_NONE) {
                if (suspend)
                    note_suspended(recs[i], before[i]);
            } else if (errs[k] == JVMTI_ERROR_THREAD_SUSPENDED) {
                results[i] = RESULT_SUSPENDED;
            } else if (errs[k] != JVMTI_ERROR_THREAD_NOT_SUSPENDED) {
                results[i] = RESULT_INVALID_THREAD;
            }
        }
    }
out:
    if (recs)
        for (jint i = 0; i < n; i++)
            threads_release(recs[i]);
    free(recs);
    free(ts);
    free(idx);
    free(before);
    free(errs);
}

void jvmpi_SuspendThreadList(struct instance *inst, jint n, JNIEnv **list, jint *results)
{
    thread_list(inst, n, list, results, true);
}

void jvmpi_ResumeThreadList(struct instance *inst, jint n, JNIEnv **list, jint *results)
{
    thread_list(inst, n, list, results, false);
}

jboolean jvmpi_ThreadHasRun(struct instance *inst, JNIEnv *env)
{
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "ThreadHasRun(NULL): JNI_FALSE");
        return JNI_FALSE;
    }
    if (threads_env_is_self(env))
        return JNI_TRUE; /* it is running now */
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL || r->ref == NULL) {
        report_misuse(inst, LOG_INFO, "ThreadHasRun(%p): no such thread: JNI_FALSE",
                                      (void *)env);
        threads_release(r);
        return JNI_FALSE;
    }
    jboolean ran;
    if (r->jvmpi_suspended) {
        ran = r->has_run ? JNI_TRUE : JNI_FALSE;
    } else {
        jlong now = cpu_of(r);
        if (now < 0 && shim_current_jni() == NULL)
            report_misuse(inst, LOG_WARN, "ThreadHasRun(%p) from a thread the JVM does not "
                          "know: its CPU time cannot be read; JNI_TRUE", (void *)env);
        ran = (r->cpu_at_suspend == 0 || now != r->cpu_at_suspend) ? JNI_TRUE : JNI_FALSE;
    }
    threads_release(r);
    return ran;
}
