/* record.h — record=PATH: everything an agent was given, written to a file as it happens
 * (record.c; the format is core/recfmt.h and docs/recording.md). */
#ifndef JVMPISHIM_RECORD_H
#define JVMPISHIM_RECORD_H

#include "core/api.h"

/* Is instance slot s recording? Read on every event and JVMPI call: one load. */
extern bool record_on[SHIM_MAX_INSTANCES];

/* Agent_OnLoad (face/interface.c, for an instance with record=): name its file, start the
 * writer thread. The file is opened and written by the writer, never by the threads that
 * record. At exit (atexit) everything recorded is written and the end block says how the
 * run ended. */
void record_open(struct instance *inst);

/* event_post (events.c), just before NotifyEvent and after it. */
void record_event(struct instance *inst, const JVMPI_Event *ev);
void record_event_done(struct instance *inst, const JVMPI_Event *ev);
#define RECORD_EVENT(inst, ev)                                                             \
    do {                                                                                   \
        if (__builtin_expect(record_on[(inst)->slot], 0))                                  \
            record_event((inst), (ev));                                                    \
    } while (0)
/* After the handler, only CLASS_LOAD_HOOK (what it returned) and JVM_SHUT_DOWN (that it
 * returned) are recorded. */
static inline bool record_wants_done(jint type)
{
    int t = type & ~JVMPI_REQUESTED_EVENT;
    return t == JVMPI_EVENT_CLASS_LOAD_HOOK || t == JVMPI_EVENT_JVM_SHUT_DOWN;
}
#define RECORD_EVENT_DONE(inst, ev)                                                        \
    do {                                                                                   \
        if (__builtin_expect(record_on[(inst)->slot], 0) && record_wants_done((ev)->event_type)) \
            record_event_done((inst), (ev));                                               \
    } while (0)

/* The JVMPI trampolines (face/interface.c): record_call_<Name>(inst, args...) when the agent
 * calls, record_ret_<Name>([result,] inst, args...) when the call returns. */
#define RECORD_UNPACK(...) __VA_ARGS__
#define RECORD_APPLY(m, a) m a
#define RECORD_DECL_X(ret, name, params, args)                                             \
    void record_call_##name IMPL_##name;                                                   \
    void record_ret_##name(ret result, RECORD_APPLY(RECORD_UNPACK, IMPL_##name));
#define RECORD_DECL_V(name, params, args)                                                  \
    void record_call_##name IMPL_##name;                                                   \
    void record_ret_##name IMPL_##name;
JVMPI_FUNCTIONS(RECORD_DECL_X, RECORD_DECL_V)
#undef RECORD_DECL_X
#undef RECORD_DECL_V
#define RECORD_CALL(S, name, args)                                                         \
    do {                                                                                   \
        if (__builtin_expect(record_on[S], 0))                                             \
            record_call_##name args;                                                       \
    } while (0)
#define RECORD_RET_X(S, name, result, args)                                                \
    do {                                                                                   \
        if (__builtin_expect(record_on[S], 0))                                             \
            record_ret_##name(result, RECORD_UNPACK args);                                 \
    } while (0)
#define RECORD_RET_V(S, name, args)                                                        \
    do {                                                                                   \
        if (__builtin_expect(record_on[S], 0))                                             \
            record_ret_##name args;                                                        \
    } while (0)

/* What events/ cannot name by itself, registered by a higher layer at start-up (modules.c):
 * a local reference to the class whose id an OBJECT_ALLOC names. */
void record_set_class_ref(jclass (*class_ref)(JNIEnv *jni, jobjectID id));

#endif
