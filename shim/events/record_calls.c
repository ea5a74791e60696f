/* record_calls.c — record=PATH: the JVMPI calls an agent made, as a CALL record when the
 * trampoline (face/interface.c) is entered and a RET record when it returns, each with the
 * arguments and results jvmpitrace needs to print and check the call (core/recfmt.h).
 *
 * One function per JVMPI function, generated for the families that share a shape. A call
 * names the method and class ids it passes or gets back (record.c) before its record, so
 * the file speaks in names; lists longer than LIST_MAX are recorded by their count alone.
 */
#include "events/record_int.h"

static struct rslot *call_begin(int slot, int code, size_t bound)
{
    stream_check(slot);
    return rec_begin(slot, code, bound);
}

#define V REC_VARINT_MAX
#define CALL(fn, bound)                                                                    \
    struct rslot *ss = call_begin(inst->slot, REC_CALL + FN_##fn, (bound));                \
    if (ss == NULL)                                                                        \
        return;                                                                            \
    struct rec_enc *e __attribute__((unused)) = &ss->enc
#define RET(fn, bound)                                                                     \
    struct rslot *ss = call_begin(inst->slot, REC_RET + FN_##fn, (bound));                 \
    if (ss == NULL)                                                                        \
        return;                                                                            \
    struct rec_enc *e __attribute__((unused)) = &ss->enc
#define DONE rec_end(ss)
/* Lists longer than this are recorded as NULL with their count: a garbage count. */
#define LIST_MAX 65536

void record_call_EnableEvent(struct instance *inst, jint t, void *arg)
{
    CALL(EnableEvent, 2 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    DONE;
}
void record_ret_EnableEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(EnableEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_DisableEvent(struct instance *inst, jint t, void *arg)
{
    CALL(DisableEvent, 2 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    DONE;
}
void record_ret_DisableEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(DisableEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_RequestEvent(struct instance *inst, jint t, void *arg)
{
    jint level = t == JVMPI_EVENT_HEAP_DUMP && arg != NULL ? ((JVMPI_HeapDumpArg *)arg)->heap_dump_level : -1;
    CALL(RequestEvent, 3 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    rec_put_i(e, level);
    DONE;
}
void record_ret_RequestEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(RequestEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    CALL(GetCallTrace, 3 * V);
    rec_put_p(e, trace);
    rec_put_t(e, trace != NULL ? trace->env_id : NULL);
    rec_put_i(e, depth);
    DONE;
}
void record_ret_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    jint n = trace != NULL ? trace->num_frames : 0;
    jint k = trace != NULL && trace->frames != NULL && n >= 0 ? (n < depth ? n : depth) : -1;
    if (k > LIST_MAX)
        k = -1;
    for (jint i = 0; i < k; i++)
        name_method(inst->slot, trace->frames[i].method_id);
    RET(GetCallTrace, V + V + (k > 0 ? (size_t)k * 2 * V : 0));
    rec_put_i(e, n);
    if (k < 0) {
        rec_put_u(e, 0);
    } else {
        rec_put_u(e, (uint64_t)k + 1);
        for (jint i = 0; i < k; i++) {
            rec_put_i(e, trace->frames[i].lineno);
            rec_put_m(e, trace->frames[i].method_id);
        }
    }
    DONE;
}
void record_call_ProfilerExit(struct instance *inst, jint code)
{
    record_note_profiler_exit(code);
    CALL(ProfilerExit, V);
    rec_put_i(e, code);
    DONE;
}
void record_ret_ProfilerExit(struct instance *inst, jint code)
{
    (void)code;
    RET(ProfilerExit, 0);
    DONE;
}
void record_call_RawMonitorCreate(struct instance *inst, char *name)
{
    CALL(RawMonitorCreate, rec_s_bound(name));
    rec_put_s(e, name);
    DONE;
}
void record_ret_RawMonitorCreate(JVMPI_RawMonitor r, struct instance *inst, char *name)
{
    (void)name;
    RET(RawMonitorCreate, V);
    rec_put_p(e, r);
    DONE;
}

#define MONITOR_FN(fn)                                                                     \
    void record_call_##fn(struct instance *inst, JVMPI_RawMonitor m)                       \
    {                                                                                      \
        CALL(fn, V);                                                                       \
        rec_put_p(e, m);                                                                   \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, JVMPI_RawMonitor m)                        \
    {                                                                                      \
        (void)m;                                                                           \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
MONITOR_FN(RawMonitorEnter)
MONITOR_FN(RawMonitorExit)
MONITOR_FN(RawMonitorNotifyAll)
MONITOR_FN(RawMonitorDestroy)

void record_call_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor m, jlong ms)
{
    CALL(RawMonitorWait, 2 * V);
    rec_put_p(e, m);
    rec_put_i(e, ms);
    DONE;
}
void record_ret_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor m, jlong ms)
{
    (void)m, (void)ms;
    RET(RawMonitorWait, 0);
    DONE;
}
void record_call_GetCurrentThreadCpuTime(struct instance *inst)
{
    CALL(GetCurrentThreadCpuTime, 0);
    DONE;
}
void record_ret_GetCurrentThreadCpuTime(jlong r, struct instance *inst)
{
    RET(GetCurrentThreadCpuTime, V);
    rec_put_i(e, r);
    DONE;
}

#define ENV_FN_V(fn)                                                                       \
    void record_call_##fn(struct instance *inst, JNIEnv *env)                              \
    {                                                                                      \
        CALL(fn, V);                                                                       \
        rec_put_t(e, env);                                                                 \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, JNIEnv *env)                               \
    {                                                                                      \
        (void)env;                                                                         \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
ENV_FN_V(SuspendThread)
ENV_FN_V(ResumeThread)

void record_call_GetThreadStatus(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadStatus, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadStatus(jint r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadStatus, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_ThreadHasRun(struct instance *inst, JNIEnv *env)
{
    CALL(ThreadHasRun, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_ThreadHasRun(jboolean r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(ThreadHasRun, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_CreateSystemThread(struct instance *inst, char *name, jint prio, void (*f)(void *))
{
    CALL(CreateSystemThread, rec_s_bound(name) + 2 * V);
    rec_put_s(e, name);
    rec_put_i(e, prio);
    rec_put_p(e, (void *)(uintptr_t)f);
    DONE;
}
void record_ret_CreateSystemThread(jint r, struct instance *inst, char *name, jint prio,
                                   void (*f)(void *))
{
    (void)name, (void)prio, (void)f;
    RET(CreateSystemThread, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_SetThreadLocalStorage(struct instance *inst, JNIEnv *env, void *ptr)
{
    CALL(SetThreadLocalStorage, 2 * V);
    rec_put_t(e, env);
    rec_put_p(e, ptr);
    DONE;
}
void record_ret_SetThreadLocalStorage(struct instance *inst, JNIEnv *env, void *ptr)
{
    (void)env, (void)ptr;
    RET(SetThreadLocalStorage, 0);
    DONE;
}
void record_call_GetThreadLocalStorage(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadLocalStorage, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadLocalStorage(void *r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadLocalStorage, V);
    rec_put_p(e, r);
    DONE;
}

#define VOID_FN(fn)                                                                        \
    void record_call_##fn(struct instance *inst)                                           \
    {                                                                                      \
        CALL(fn, 0);                                                                       \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst)                                            \
    {                                                                                      \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
VOID_FN(DisableGC)
VOID_FN(EnableGC)
VOID_FN(RunGC)

void record_call_GetThreadObject(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadObject, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadObject(jobjectID r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadObject, V);
    rec_put_o(e, r);
    DONE;
}
void record_call_GetMethodClass(struct instance *inst, jmethodID m)
{
    name_method(inst->slot, m);
    CALL(GetMethodClass, V);
    rec_put_m(e, m);
    DONE;
}
void record_ret_GetMethodClass(jobjectID r, struct instance *inst, jmethodID m)
{
    (void)m;
    record_name_class(inst->slot, r);
    RET(GetMethodClass, V);
    rec_put_o(e, r);
    DONE;
}
void record_call_jobjectID2jobject(struct instance *inst, jobjectID id)
{
    CALL(jobjectID2jobject, V);
    rec_put_o(e, id);
    DONE;
}
void record_ret_jobjectID2jobject(jobject r, struct instance *inst, jobjectID id)
{
    (void)id;
    RET(jobjectID2jobject, V);
    rec_put_p(e, r);
    DONE;
}
void record_call_jobject2jobjectID(struct instance *inst, jobject ref)
{
    CALL(jobject2jobjectID, V);
    rec_put_p(e, ref);
    DONE;
}
void record_ret_jobject2jobjectID(jobjectID r, struct instance *inst, jobject ref)
{
    (void)ref;
    RET(jobject2jobjectID, V);
    rec_put_o(e, r);
    DONE;
}

static void put_env_list(struct rec_enc *e, jint n, JNIEnv **list)
{
    if (list == NULL || n < 0 || n > LIST_MAX) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++)
        rec_put_t(e, list[i]);
}

static void put_int_list(struct rec_enc *e, jint n, const jint *list)
{
    if (list == NULL || n < 0 || n > LIST_MAX) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++)
        rec_put_i(e, list[i]);
}

static size_t list_bound(jint n) { return V + (n > 0 && n <= LIST_MAX ? (size_t)n * V : 0); }

#define THREAD_LIST_FN(fn)                                                                 \
    void record_call_##fn(struct instance *inst, jint n, JNIEnv **list, jint *results)     \
    {                                                                                      \
        (void)results;                                                                     \
        CALL(fn, V + list_bound(n));                                                       \
        rec_put_i(e, n);                                                                   \
        put_env_list(e, n, list);                                                          \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, jint n, JNIEnv **list, jint *results)      \
    {                                                                                      \
        (void)list;                                                                        \
        RET(fn, list_bound(n));                                                            \
        put_int_list(e, list != NULL ? n : -1, results);                                   \
        DONE;                                                                              \
    }
THREAD_LIST_FN(SuspendThreadList)
THREAD_LIST_FN(ResumeThreadList)

#undef CALL
#undef RET
#undef DONE
#undef V
