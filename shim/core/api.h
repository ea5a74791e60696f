/* api.h — the shared implementations behind each instance's JVMPI_Interface.
 *
 * interface.c generates, per instance slot, functions with the exact JVMPI signatures that
 * pass the instance to these. One X-macro list (JVMPI_FUNCTIONS) drives the trampolines,
 * the call counters of the migration report and the names in log lines.
 */
#ifndef JVMPISHIM_API_H
#define JVMPISHIM_API_H

#include "core/shim.h"

/* X(ret, Name, (JVMPI parameters), (implementation arguments)) / V(...) for void, in table
 * order. The argument lists start with `inst`, the trampoline's instance. */
#define JVMPI_FUNCTIONS(X, V)                                                                     \
    X(jint, EnableEvent, (jint event_type, void *arg), (inst, event_type, arg))                         \
    X(jint, DisableEvent, (jint event_type, void *arg), (inst, event_type, arg))                        \
    X(jint, RequestEvent, (jint event_type, void *arg), (inst, event_type, arg))                        \
    V(GetCallTrace, (JVMPI_CallTrace * trace, jint depth), (inst, trace, depth))                        \
    V(ProfilerExit, (jint code), (inst, code))                                                          \
    X(JVMPI_RawMonitor, RawMonitorCreate, (char *name), (inst, name))                                   \
    V(RawMonitorEnter, (JVMPI_RawMonitor m), (inst, m))                                                 \
    V(RawMonitorExit, (JVMPI_RawMonitor m), (inst, m))                                                  \
    V(RawMonitorWait, (JVMPI_RawMonitor m, jlong ms), (inst, m, ms))                                    \
    V(RawMonitorNotifyAll, (JVMPI_RawMonitor m), (inst, m))                                             \
    V(RawMonitorDestroy, (JVMPI_RawMonitor m), (inst, m))                                               \
    X(jlong, GetCurrentThreadCpuTime, (void), (inst))                                                 \
    V(SuspendThread, (JNIEnv * env), (inst, env))                                                       \
    V(ResumeThread, (JNIEnv * env), (inst, env))                                                        \
    X(jint, GetThreadStatus, (JNIEnv * env), (inst, env))                                               \
    X(jboolean, ThreadHasRun, (JNIEnv * env), (inst, env))                                              \
    X(jint, CreateSystemThread, (char *name, jint priority, void (*f)(void *)), (inst, name, priority, f)) \
    V(SetThreadLocalStorage, (JNIEnv * env, void *ptr), (inst, env, ptr))                               \
    X(void *, GetThreadLocalStorage, (JNIEnv * env), (inst, env))                                       \
    V(DisableGC, (void), (inst))                                                                      \
    V(EnableGC, (void), (inst))                                                                       \
    V(RunGC, (void), (inst))                                                                          \
    X(jobjectID, GetThreadObject, (JNIEnv * env), (inst, env))                                          \
    X(jobjectID, GetMethodClass, (jmethodID mid), (inst, mid))                                          \
    X(jobject, jobjectID2jobject, (jobjectID id), (inst, id))                                           \
    X(jobjectID, jobject2jobjectID, (jobject ref), (inst, ref))                                         \
    V(SuspendThreadList, (jint n, JNIEnv * *list, jint * results), (inst, n, list, results))            \
    V(ResumeThreadList, (jint n, JNIEnv * *list, jint * results), (inst, n, list, results))

/* Index of each function, for counters. */
enum jvmpi_fn {
#define FN_ENUM_X(ret, name, params, args) FN_##name,
#define FN_ENUM_V(name, params, args) FN_##name,
    JVMPI_FUNCTIONS(FN_ENUM_X, FN_ENUM_V)
#undef FN_ENUM_X
#undef FN_ENUM_V
    FN_COUNT
};
extern const char *const jvmpi_fn_names[FN_COUNT];
_Static_assert(FN_COUNT == SHIM_NUM_FUNCTIONS, "shim.h SHIM_NUM_FUNCTIONS out of date");

/* The implementations: jvmpi_<Name>(struct instance *inst, <JVMPI parameters>). */
#define DECL_X(ret, name, params, args) ret jvmpi_##name IMPL_##name;
#define DECL_V(name, params, args) void jvmpi_##name IMPL_##name;

#define IMPL_EnableEvent (struct instance * inst, jint event_type, void *arg)
#define IMPL_DisableEvent (struct instance * inst, jint event_type, void *arg)
#define IMPL_RequestEvent (struct instance * inst, jint event_type, void *arg)
#define IMPL_GetCallTrace (struct instance * inst, JVMPI_CallTrace * trace, jint depth)
#define IMPL_ProfilerExit (struct instance * inst, jint code)
#define IMPL_RawMonitorCreate (struct instance * inst, char *name)
#define IMPL_RawMonitorEnter (struct instance * inst, JVMPI_RawMonitor m)
#define IMPL_RawMonitorExit (struct instance * inst, JVMPI_RawMonitor m)
#define IMPL_RawMonitorWait (struct instance * inst, JVMPI_RawMonitor m, jlong ms)
#define IMPL_RawMonitorNotifyAll (struct instance * inst, JVMPI_RawMonitor m)
#define IMPL_RawMonitorDestroy (struct instance * inst, JVMPI_RawMonitor m)
#define IMPL_GetCurrentThreadCpuTime (struct instance * inst)
#define IMPL_SuspendThread (struct instance * inst, JNIEnv * env)
#define IMPL_ResumeThread (struct instance * inst, JNIEnv * env)
#define IMPL_GetThreadStatus (struct instance * inst, JNIEnv * env)
#define IMPL_ThreadHasRun (struct instance * inst, JNIEnv * env)
#define IMPL_CreateSystemThread (struct instance * inst, char *name, jint priority, void (*f)(void *))
#define IMPL_SetThreadLocalStorage (struct instance * inst, JNIEnv * env, void *ptr)
#define IMPL_GetThreadLocalStorage (struct instance * inst, JNIEnv * env)
#define IMPL_DisableGC (struct instance * inst)
#define IMPL_EnableGC (struct instance * inst)
#define IMPL_RunGC (struct instance * inst)
#define IMPL_GetThreadObject (struct instance * inst, JNIEnv * env)
#define IMPL_GetMethodClass (struct instance * inst, jmethodID mid)
#define IMPL_jobjectID2jobject (struct instance * inst, jobjectID id)
#define IMPL_jobject2jobjectID (struct instance * inst, jobject ref)
#define IMPL_SuspendThreadList (struct instance * inst, jint n, JNIEnv * *list, jint * results)
#define IMPL_ResumeThreadList (struct instance * inst, jint n, JNIEnv * *list, jint * results)

JVMPI_FUNCTIONS(DECL_X, DECL_V)

#endif
