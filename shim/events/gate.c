/* gate.c — the GC gate: no synthesized GC bracket overlaps an event handler or DisableGC.
 *
 * JVMPI delivered events "with GC disabled", and DisableGC held collections back. The shim
 * synthesizes GC_START / OBJECT_FREE / GC_FINISH (memory/memory.c), so it keeps the same
 * promise with a gate: event deliveries (events.c) and DisableGC spans are regions,
 * counted per stripe; a bracket closes the gate, waits for the regions to drain and holds
 * new ones back (except on the thread posting it and on the worker). If regions do not
 * drain within GC_GATE_WAIT_MS (an agent may hold its own lock in a region that another
 * region waits for), the bracket gives up, opens the gate, and tries again; a thread held
 * at the gate waits at most a second, and a thread inside a JVMPI call is never held (its
 * caller may hold the lock the bracket's handlers need). So no arrangement of agent locks
 * can deadlock on it.
 * It lives with the switchboard because every delivery passes through it; memory/ posts the
 * brackets. gate_lock is level 2 of the lock order in core/shim.h.
 */
#include "core/worker.h"
#include "events/events.h"

#include <pthread.h>
#include <time.h>

static _Atomic bool bracket_open;           /* between GC_START and GC_FINISH */
static _Atomic int inline_waiters;          /* threads waiting to post a bracket inline */

bool gc_bracket_open(void)
{
    return atomic_load(&bracket_open);
}

void gc_bracket_set_open(bool open)
{
    atomic_store(&bracket_open, open);
}

static struct striped gate_regions;
static _Atomic int gc_disable_depth;        /* DisableGC regions of all agents */
static _Atomic bool gate_closing;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;

static _Thread_local int tl_region_depth;
static _Thread_local bool tl_posting_bracket; /* this thread is posting a GC bracket */

void gc_gate_enter_at(int slot)
{
    /* Nested regions (an event inside a handler, DisableGC around events) just count. */
    if (tl_region_depth++ > 0)
        return;
    for (int round = 0;; round++) {
        striped_add_at(&gate_regions, slot, 1);
        if (!atomic_load(&gate_closing) || worker_is_self() || tl_posting_bracket || round > 0 ||
            shim_in_call())
            return;
        /* A bracket is being set up: step back and wait for it, but not forever: this
         * thread may hold an agent lock the bracket's handlers need. Never inside a JVMPI
         * call (DisableGC, or an event a call posts): the caller may hold the lock the
         * bracket's GC_START handler waits for, and a call waits for no other thread's
         * handler (shim.h); the bracket waits for this region instead, which ends with the
         * call. */
        striped_add_at(&gate_regions, slot, -1);
        pthread_mutex_lock(&gate_lock);
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 1;
        pthread_mutex_lock(&gate_lock);
        while (atomic_load(&gate_closing))
            if (pthread_cond_timedwait(&gate_cond, &gate_lock, &deadline) != 0)
                break;
        pthread_mutex_unlock(&gate_lock);
    }
}

void gc_gate_exit_at(int slot)
{
    if (--tl_region_depth > 0)
        return;
    striped_add_at(&gate_regions, slot, -1);
    if (atomic_load(&gate_closing)) {
        pthread_mutex_lock(&gate_lock);
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
    }
}

static void gc_gate_enter(void)
{
    gc_gate_enter_at(stripe_index());
}

static void gc_gate_exit(void)
{
    gc_gate_exit_at(stripe_index());
}

void gc_disable_enter(void)
{
    atomic_fetch_add(&gc_disable_depth, 1);
    gc_gate_enter();
}

void gc_disable_exit(void)
{
    gc_gate_exit();
    atomic_fetch_sub(&gc_disable_depth, 1);
}

bool gc_gate_active(void)
{
    return events_any(JVMPI_EVENT_GC_START) || events_any(JVMPI_EVENT_OBJECT_FREE);
}

/* Close the gate: wait (bounded) until no region is open but the caller's own (own: 1 if
 * the caller is inside one). yield: give up at once for a thread waiting to post inline. */
bool gc_gate_close(long own, bool yield)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += GC_GATE_WAIT_MS * 1000000L;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&gate_lock);
    atomic_store(&gate_closing, true);
    bool ok = true;
    while (striped_sum(&gate_regions) > own) {
        /* The worker steps back for a thread that wants to post a bracket inline: that
         * thread may sit in a region (a handler asking for a dump) that would never drain. */
        if (yield && atomic_load(&inline_waiters) > 0) {
            ok = false;
            break;
        }
        if (pthread_cond_timedwait(&gate_cond, &gate_lock, &deadline) != 0 &&
            striped_sum(&gate_regions) > own) {
            ok = false;
            break;
        }
    }
    if (!ok) {
        atomic_store(&gate_closing, false);
        pthread_cond_broadcast(&gate_cond);
    }
    pthread_mutex_unlock(&gate_lock);
    return ok;
}

bool gc_gate_close_now(long own)
{
    pthread_mutex_lock(&gate_lock);
    atomic_store(&gate_closing, true);
    bool drained = striped_sum(&gate_regions) <= own;
    pthread_mutex_unlock(&gate_lock);
    return drained;
}

void gc_gate_open(void)
{
    pthread_mutex_lock(&gate_lock);
    atomic_store(&gate_closing, false);
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

bool gc_disabled(void)
{
    return atomic_load(&gc_disable_depth) > 0;
}

int gc_gate_in_region(void)
{
    return tl_region_depth > 0 ? 1 : 0;
}

bool gc_gate_posting(void)
{
    return tl_posting_bracket;
}

void gc_gate_set_posting(bool posting)
{
    tl_posting_bracket = posting;
}

bool gc_gate_inline_waiting(void)
{
    return atomic_load(&inline_waiters) > 0;
}

void gc_gate_inline_begin(void)
{
    atomic_fetch_add(&inline_waiters, 1);
    /* A worker closing the gate for its bracket looks at inline_waiters while it waits. */
    pthread_mutex_lock(&gate_lock);
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

void gc_gate_inline_end(void)
{
    atomic_fetch_sub(&inline_waiters, 1);
}
