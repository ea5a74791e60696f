/* interface.c — one JVMPI_Interface per legacy agent, built from per-slot trampolines.
 *
 * JVMPI functions carry no context, yet several agents may run at once, each with its own
 * event mask, TLS and NotifyEvent. So each slot gets its own set of functions with the
 * exact JVMPI signatures; each one counts the call (for the migration report), applies the
 * shutdown rule (lifecycle_call_allowed), records the call and its result (record=) and
 * hands its instance to the shared implementation jvmpi_<Name>() in the module that owns
 * that area.
 */
#include "core/api.h"
#include "events/record.h"
#include "events/report.h"
#include "face/face.h"

#include <string.h>

/* Per-call bookkeeping shared by every trampoline: returns false when the call must not
 * run (after shutdown, on the thread that shut down; other threads park inside). */
static inline bool enter_call(struct instance *inst, enum jvmpi_fn fn)
{
    atomic_fetch_add_explicit(&inst->calls[stripe_index()].n[fn], 1, memory_order_relaxed);
    /* ProfilerExit keeps working after shutdown, as under HotSpot's disengage(). */
    if (__builtin_expect(atomic_load_explicit(&g_shim.phase, memory_order_acquire) >= PHASE_DEAD, 0) &&
        fn != FN_ProfilerExit)
        return lifecycle_call_allowed(jvmpi_fn_names[fn]);
    return true;
}

/* Result of a refused call: JVMPI_FAIL / JNI_ERR for jint, -1 for a time, else 0/NULL. */
#define REFUSED(ret) _Generic((ret)0, jint: (ret)JVMPI_FAIL, jlong: (ret)-1, default: (ret)0)

#define TRAMP_X(S, ret, name, params, args)                                                  \
    static ret slot##S##_##name params                                                         \
    {                                                                                          \
        struct instance *inst = &g_shim.inst[S];                                               \
        if (!enter_call(inst, FN_##name))                                                      \
            return REFUSED(ret);                                                                   \
        struct report_saved rs_ = report_fn_begin(S, FN_##name);                               \
        RECORD_CALL(S, name, args);                                                            \
        ret r_ = jvmpi_##name args;                                                            \
        RECORD_RET_X(S, name, r_, args);                                                       \
        report_fn_end(rs_, S, FN_##name);                                                      \
        return r_;                                                                             \
    }
#define TRAMP_V(S, name, params, args)                                                       \
    static void slot##S##_##name params                                                        \
    {                                                                                          \
        struct instance *inst = &g_shim.inst[S];                                               \
        if (!enter_call(inst, FN_##name))                                                      \
            return;                                                                            \
        struct report_saved rs_ = report_fn_begin(S, FN_##name);                               \
        RECORD_CALL(S, name, args);                                                            \
        jvmpi_##name args;                                                                     \
        RECORD_RET_V(S, name, args);                                                           \
        report_fn_end(rs_, S, FN_##name);                                                      \
    }

#define DEFINE_SLOT(S)                                                                       \
    JVMPI_FUNCTIONS(SLOT_X_##S, SLOT_V_##S)                                                    \
    static const JVMPI_Interface slot##S##_table = {                                           \
        .version = JVMPI_VERSION_1_2,                                                          \
        .NotifyEvent = NULL,                                                                   \
        JVMPI_FUNCTIONS(SLOT_INIT_X_##S, SLOT_INIT_V_##S)};

#define SLOT_X_0(r, n, p, a) TRAMP_X(0, r, n, p, a)
#define SLOT_V_0(n, p, a) TRAMP_V(0, n, p, a)
#define SLOT_X_1(r, n, p, a) TRAMP_X(1, r, n, p, a)
#define SLOT_V_1(n, p, a) TRAMP_V(1, n, p, a)
#define SLOT_X_2(r, n, p, a) TRAMP_X(2, r, n, p, a)
#define SLOT_V_2(n, p, a) TRAMP_V(2, n, p, a)
#define SLOT_X_3(r, n, p, a) TRAMP_X(3, r, n, p, a)
#define SLOT_V_3(n, p, a) TRAMP_V(3, n, p, a)
#define SLOT_INIT_X_0(r, n, p, a) .n = slot0_##n,
#define SLOT_INIT_V_0(n, p, a) .n = slot0_##n,
#define SLOT_INIT_X_1(r, n, p, a) .n = slot1_##n,
#define SLOT_INIT_V_1(n, p, a) .n = slot1_##n,
#define SLOT_INIT_X_2(r, n, p, a) .n = slot2_##n,
#define SLOT_INIT_V_2(n, p, a) .n = slot2_##n,
#define SLOT_INIT_X_3(r, n, p, a) .n = slot3_##n,
#define SLOT_INIT_V_3(n, p, a) .n = slot3_##n,

DEFINE_SLOT(0)
DEFINE_SLOT(1)
DEFINE_SLOT(2)
DEFINE_SLOT(3)

_Static_assert(SHIM_MAX_INSTANCES == 4, "add DEFINE_SLOT lines for more instances");

static const JVMPI_Interface *const slot_tables[SHIM_MAX_INSTANCES] = {
    &slot0_table, &slot1_table, &slot2_table, &slot3_table};

void interface_init(struct instance *inst)
{
    inst->iface = *slot_tables[inst->slot];
    record_open(inst);
}
