/* interface.c — one JVMPI_Interface per legacy agent, built from per-slot trampolines.
 *
 * JVMPI functions carry no context, yet several agents may run at once, each with its own
 * event mask, TLS and NotifyEvent. So each slot gets its own set of functions with the
 * exact JVMPI signatures; each one counts the call (for the migration report), applies the
 * shutdown rule (lifecycle_call_allowed), marks the thread as inside a JVMPI call while the
 * call runs (shim_call_depth: inside one the shim waits for no other thread's handler),
 * records the call and its result (record=) and hands its instance to the shared
 * implementation jvmpi_<Name>() in the module that owns that area.
 *
 * Agents call some of these around every event (a raw monitor pair, GetMethodClass, the
 * CPU time), so a call costs what HotSpot's did only if the trampoline adds next to
 * nothing: the count is a plain store into a stripe of counters the calling thread has to
 * itself (claimed on its first call, given back when it exits; threads beyond the stripes
 * share stripe 0 and add atomically), the call depth a thread-local increment, and only
 * when the report times calls, the agent's calls are recorded or the JVM has shut down does
 * a call take the long way (slow<S>_<Name>).
 */
#include "core/api.h"
#include "events/record.h"
#include "events/report.h"
#include "face/face.h"

#include <string.h>

/* The calling thread's stripe of call counters: 0 until its first call, then 1..STRIPES-1
 * (its own) or -1 (none was free: stripe 0, shared, atomic adds). */
static _Thread_local int tl_call_stripe;
static _Atomic bool stripe_taken[STRIPES];
static pthread_key_t stripe_key;
static pthread_once_t stripe_once = PTHREAD_ONCE_INIT;
static bool stripe_key_ok;

static void stripe_give_back(void *p)
{
    int s = (int)(intptr_t)p;
    tl_call_stripe = -1; /* calls from later destructors of this thread: shared stripe */
    atomic_store_explicit(&stripe_taken[s], false, memory_order_release);
}

static void stripe_key_make(void)
{
    stripe_key_ok = pthread_key_create(&stripe_key, stripe_give_back) == 0;
}

static __attribute__((noinline)) void count_call_slow(struct instance *inst, enum jvmpi_fn fn)
{
    if (tl_call_stripe == 0) {
        tl_call_stripe = -1;
        pthread_once(&stripe_once, stripe_key_make);
        for (int s = 1; s < STRIPES && stripe_key_ok; s++) {
            bool free_ = false;
            if (!atomic_load_explicit(&stripe_taken[s], memory_order_relaxed) &&
                atomic_compare_exchange_strong_explicit(&stripe_taken[s], &free_, true,
                                                        memory_order_acquire,
                                                        memory_order_relaxed)) {
                if (pthread_setspecific(stripe_key, (void *)(intptr_t)s) == 0)
                    tl_call_stripe = s;
                else
                    atomic_store(&stripe_taken[s], false);
                break;
            }
        }
    }
    if (tl_call_stripe > 0) {
        _Atomic uint64_t *c = &inst->calls[tl_call_stripe].n[fn];
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&inst->calls[0].n[fn], 1, memory_order_relaxed);
    }
}

static inline void count_call(struct instance *inst, enum jvmpi_fn fn)
{
    int s = tl_call_stripe;
    if (__builtin_expect(s > 0, 1)) {
        /* Only this thread writes this stripe: no locked instruction. */
        _Atomic uint64_t *c = &inst->calls[s].n[fn];
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    } else {
        count_call_slow(inst, fn);
    }
}

/* Calls take the long way while the report times them or once the JVM has shut down. */
static inline bool call_watched(void)
{
    return __builtin_expect(report_timing, 0) ||
           __builtin_expect(atomic_load_explicit(&g_shim.phase, memory_order_acquire) >= PHASE_DEAD, 0);
}

/* The shutdown rule: false when the call must not run (after shutdown, on the thread that
 * shut down; other threads park inside). */
static inline bool call_allowed(enum jvmpi_fn fn)
{
    /* ProfilerExit keeps working after shutdown, as under HotSpot's disengage(). */
    if (__builtin_expect(atomic_load_explicit(&g_shim.phase, memory_order_acquire) >= PHASE_DEAD, 0) &&
        fn != FN_ProfilerExit)
        return lifecycle_call_allowed(jvmpi_fn_names[fn]);
    return true;
}

/* Result of a refused call: JVMPI_FAIL / JNI_ERR for jint, -1 for a time, else 0/NULL. */
#define REFUSED(ret) _Generic((ret)0, jint: (ret)JVMPI_FAIL, jlong: (ret)-1, default: (ret)0)

#define TRAMP_X(S, ret, name, params, args)                                                  \
    static __attribute__((noinline)) ret slow##S##_##name IMPL_##name                         \
    {                                                                                          \
        if (!call_allowed(FN_##name))                                                          \
            return REFUSED(ret);                                                               \
        struct report_saved rs_ = report_fn_begin(S, FN_##name);                               \
        RECORD_CALL(S, name, args);                                                            \
        shim_call_depth++;                                                                     \
        ret r_ = jvmpi_##name args;                                                            \
        shim_call_depth--;                                                                     \
        RECORD_RET_X(S, name, r_, args);                                                       \
        report_fn_end(rs_, S, FN_##name);                                                      \
        return r_;                                                                             \
    }                                                                                          \
    static ret slot##S##_##name params                                                         \
    {                                                                                          \
        struct instance *inst = &g_shim.inst[S];                                               \
        count_call(inst, FN_##name);                                                           \
        if (call_watched() || __builtin_expect(record_on[S], 0))                               \
            return slow##S##_##name args;                                                      \
        shim_call_depth++;                                                                     \
        ret r_ = jvmpi_##name args;                                                            \
        shim_call_depth--;                                                                     \
        return r_;                                                                             \
    }
#define TRAMP_V(S, name, params, args)                                                       \
    static __attribute__((noinline)) void slow##S##_##name IMPL_##name                        \
    {                                                                                          \
        if (!call_allowed(FN_##name))                                                          \
            return;                                                                            \
        struct report_saved rs_ = report_fn_begin(S, FN_##name);                               \
        RECORD_CALL(S, name, args);                                                            \
        shim_call_depth++;                                                                     \
        jvmpi_##name args;                                                                     \
        shim_call_depth--;                                                                     \
        RECORD_RET_V(S, name, args);                                                           \
        report_fn_end(rs_, S, FN_##name);                                                      \
    }                                                                                          \
    static void slot##S##_##name params                                                        \
    {                                                                                          \
        struct instance *inst = &g_shim.inst[S];                                               \
        count_call(inst, FN_##name);                                                           \
        if (call_watched() || __builtin_expect(record_on[S], 0)) {                             \
            slow##S##_##name args;                                                             \
        } else {                                                                               \
            shim_call_depth++;                                                                 \
            jvmpi_##name args;                                                                 \
            shim_call_depth--;                                                                 \
        }                                                                                      \
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
