/* world.c — stop the world for a dump: every other live thread suspended, every thread
 * traced.
 *
 * HotSpot built its dumps at a safepoint; the shim suspends the other threads with one
 * SuspendThreadList, so the heap walk and the monitor facts are one snapshot. Each thread's
 * guard (shim.h) is taken before it is suspended, so no thread stops inside a section of
 * the shim that holds a lock the dump then needs; a thread whose guard cannot be had is
 * left running. Threads an agent had suspended stay suspended: only those world_hold
 * suspended are resumed.
 */
#include "core/api.h"
#include "dumps/world.h"
#include "methods/calltrace.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <string.h>

bool world_hold(JNIEnv *jni, struct world *w, jint depth)
{
    memset(w, 0, sizeof *w);
    threads_self();
    w->n = threads_snapshot(jni, &w->snap);
    size_t n = w->n ? w->n : 1;
    jthread *susp = calloc(n, sizeof *susp);
    jvmtiError *serr = calloc(n, sizeof *serr);
    size_t *idx = calloc(n, sizeof *idx);
    w->traces = calloc(n, sizeof *w->traces);
    w->frames = calloc(n * (size_t)depth, sizeof *w->frames);
    w->held = calloc(n, sizeof *w->held);
    w->recs = calloc(n, sizeof *w->recs);
    bool ok = susp && serr && idx && w->traces && w->frames && w->held && w->recs;
    if (ok) {
        jint ns = 0;
        /* Each thread's guard first (shim.h): none stops inside a section of the shim that
         * holds a lock the dump then needs. */
        for (size_t i = 0; i < w->n; i++)
            if (w->snap[i].thread != NULL && !threads_env_is_self(w->snap[i].env) &&
                (w->recs[i] = threads_acquire(w->snap[i].env)) != NULL) {
                if (!threads_hold_guard(w->recs[i])) {
                    threads_release(w->recs[i]);
                    w->recs[i] = NULL;
                    continue;
                }
                idx[ns] = i;
                susp[ns++] = w->snap[i].thread;
            }
        if (ns > 0)
            jvmti_ok_at((*g_shim.jvmti)->SuspendThreadList(g_shim.jvmti, ns, susp, serr),
                        LOG_DEBUG, "SuspendThreadList to hold the threads for a dump");
        /* Each thread's own result: one that ended or was suspended already is not held. */
        for (jint k = 0; k < ns; k++) {
            w->held[idx[k]] = serr[k] == JVMTI_ERROR_NONE;
            if (!w->held[idx[k]]) {
                threads_release_guard(w->recs[idx[k]]);
                threads_release(w->recs[idx[k]]);
                w->recs[idx[k]] = NULL;
            }
        }
        for (size_t i = 0; i < w->n; i++) {
            w->traces[i].env_id = w->snap[i].env;
            w->traces[i].frames = &w->frames[i * (size_t)depth];
            if (w->snap[i].thread != NULL)
                w->traces[i].num_frames = calltrace_fill(jni, w->snap[i].thread,
                                                         w->traces[i].frames, depth);
        }
    }
    free(susp);
    free(serr);
    free(idx);
    return ok;
}

void world_resume(struct world *w)
{
    for (size_t i = 0; w->held && i < w->n; i++)
        if (w->held[i]) {
            jvmti_ignore((*g_shim.jvmti)->ResumeThread(g_shim.jvmti, w->snap[i].thread),
                         "ResumeThread after a dump: a thread that ended needs none");
            w->held[i] = false;
            threads_release_guard(w->recs[i]);
            threads_release(w->recs[i]);
            w->recs[i] = NULL;
        }
}

void world_free(JNIEnv *jni, struct world *w)
{
    world_resume(w);
    for (size_t i = 0; i < w->n; i++)
        if (w->snap[i].thread)
            (*jni)->DeleteLocalRef(jni, w->snap[i].thread);
    free(w->snap);
    free(w->traces);
    free(w->frames);
    free(w->held);
    free(w->recs);
    memset(w, 0, sizeof *w);
}
