/* pending.c — JVMPI functions this version of the shim does not implement yet.
 *
 * Each answers the JVMPI "nothing done" value (0 frames, RUNNABLE, NULL) and warns once,
 * naming itself, so an agent keeps running and the user knows what is missing. The
 * identity work (thread control, call traces, object ids) replaces these.
 */
#include "api.h"

static int warned[SHIM_NUM_FUNCTIONS];

static void not_yet(enum jvmpi_fn fn)
{
    log_warn_once(&warned[fn], "%s is not implemented in this version of the shim: it does "
                  "nothing (see docs/mapping.md)", jvmpi_fn_names[fn]);
}

void jvmpi_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    (void)inst; (void)depth;
    not_yet(FN_GetCallTrace);
    if (trace != NULL)
        trace->num_frames = 0;
}
void jvmpi_SuspendThread(struct instance *inst, JNIEnv *env) { (void)inst; (void)env; not_yet(FN_SuspendThread); }
void jvmpi_ResumeThread(struct instance *inst, JNIEnv *env) { (void)inst; (void)env; not_yet(FN_ResumeThread); }
jint jvmpi_GetThreadStatus(struct instance *inst, JNIEnv *env) { (void)inst; (void)env; not_yet(FN_GetThreadStatus); return JVMPI_THREAD_RUNNABLE; }
jboolean jvmpi_ThreadHasRun(struct instance *inst, JNIEnv *env) { (void)inst; (void)env; not_yet(FN_ThreadHasRun); return JNI_TRUE; }
void jvmpi_DisableGC(struct instance *inst) { (void)inst; not_yet(FN_DisableGC); }
void jvmpi_EnableGC(struct instance *inst) { (void)inst; not_yet(FN_EnableGC); }
void jvmpi_RunGC(struct instance *inst) { (void)inst; not_yet(FN_RunGC); }
jobjectID jvmpi_GetThreadObject(struct instance *inst, JNIEnv *env) { (void)inst; (void)env; not_yet(FN_GetThreadObject); return NULL; }
jobjectID jvmpi_GetMethodClass(struct instance *inst, jmethodID mid) { (void)inst; (void)mid; not_yet(FN_GetMethodClass); return NULL; }
jobject jvmpi_jobjectID2jobject(struct instance *inst, jobjectID id) { (void)inst; (void)id; not_yet(FN_jobjectID2jobject); return NULL; }
jobjectID jvmpi_jobject2jobjectID(struct instance *inst, jobject ref) { (void)inst; (void)ref; not_yet(FN_jobject2jobjectID); return NULL; }
void jvmpi_SuspendThreadList(struct instance *inst, jint n, JNIEnv **list, jint *results) { (void)inst; (void)n; (void)list; (void)results; not_yet(FN_SuspendThreadList); }
void jvmpi_ResumeThreadList(struct instance *inst, jint n, JNIEnv **list, jint *results) { (void)inst; (void)n; (void)list; (void)results; not_yet(FN_ResumeThreadList); }
