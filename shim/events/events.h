/* events.h — the event switchboard (events.c) and the GC gate (gate.c), for the areas that
 * deliver events: which events an agent enabled, event_post and its variants (the only way
 * to an agent's NotifyEvent), the rows each area registers for its events (kind, JVMTI
 * needs, hooks), the functions the higher layers register for what the switchboard cannot
 * do itself (announcing threads, flushing deferred events, the mounted virtual thread),
 * and the regions no synthesized GC bracket may overlap. The migration report's counters
 * are events/report.h; the recording, events/record.h. */
#ifndef JVMPISHIM_EVENTS_H
#define JVMPISHIM_EVENTS_H

#include "core/shim.h"

/* Is event type t enabled by inst / by any instance? Lock-free. */
static inline bool event_on(const struct instance *inst, int t)
{
    return (atomic_load_explicit(&inst->enabled, memory_order_relaxed) >> t) & 1u;
}
/* How many instances have event t enabled: kept by EnableEvent / DisableEvent on each
 * bit's change, so that "any agent wants t?", asked several times per event on the hottest
 * paths, is one load instead of a walk over the instances' masks. */
extern _Atomic int events_enabled_n[SHIM_NUM_EVENTS];
static inline bool events_any(int t)
{
    return atomic_load_explicit(&events_enabled_n[t], memory_order_relaxed) != 0;
}
/* Count the events inst enabled before it was published (its slot now below ninst). */
void events_instance_published(const struct instance *inst);
/* Zero-fill ev, set type and env. */
void event_init(JVMPI_Event *ev, jint type, JNIEnv *env);
/* The one place that calls an agent's NotifyEvent. Holds no shim lock. Returns false if the
 * event was not delivered (agent did not enable it, shim shut down). */
bool event_post(struct instance *inst, JVMPI_Event *ev);
/* A stack snapshot (methods/calltrace.h); the switchboard only passes a pointer to one. */
struct calltrace_snap;
/* The snapshot GetCallTrace on this thread answers with, or NULL: set by event_post only
 * around the handler of a held event (a nested event's handler sees NULL). */
extern _Thread_local const struct calltrace_snap *calltrace_snap_now;
/* event_post for an event that happened earlier on this thread and was held back
 * (threads/threads.c): inside its handler GetCallTrace on this thread returns snap, the
 * stack the event happened at. */
bool event_post_held(struct instance *inst, JVMPI_Event *ev, const struct calltrace_snap *snap);
/* Post to every instance that enabled ev->event_type (each gets a fresh copy). */
void event_post_all(const JVMPI_Event *ev);
/* Events deferred on this thread (methods.c: a constructor's METHOD_ENTRY2 waits until its
 * receiver can be named). While the count is above 0, the next event posted on the thread
 * first calls the flush function set here, which posts them in their order. */
extern _Thread_local int events_deferred_n;
void events_set_deferred_flush(void (*flush)(void));
/* Deliveries between their phase check and their return, all threads (shutdown waits for
 * them); and deliveries of event t to instance slot so far (the migration report). */
long events_inflight(void);
uint64_t events_delivered(int slot, int t);
/* Startup gate: events from threads other than the init thread wait here until
 * JVM_INIT_DONE has been posted (HotSpot held them back the same way). */
void events_gate_wait(void);
const char *event_name(int t);

/* Definition before use of the thread an event names (threads/threads.c registers these in
 * its module init; the switchboard sits below threads/, so it asks through them). */
struct events_thread_upcalls {
    bool (*announce_self)(JNIEnv *jni);
    bool (*hold_event)(struct instance *inst, const JVMPI_Event *ev,
                       const struct calltrace_snap *snap);
    void (*announce_self_now)(JNIEnv *jni);
};
void events_set_thread_upcalls(const struct events_thread_upcalls *u);
/* The calling carrier now carries virtual thread vt (its env_id), or none (NULL): sets
 * shim_vthread_env and the copy event_post reads (threads/vthreads.c, at each mount and
 * unmount). */
void events_set_vthread(JNIEnv *vt);

#define EVENT_MAX_JVMTI 4

enum event_kind {
    EVK_LATER = 0,      /* defined by JVMPI, not delivered by this version of the shim */
    EVK_ON,             /* delivered */
    EVK_REQUEST_ONLY,   /* HEAP_DUMP, OBJECT_DUMP, MONITOR_DUMP: RequestEvent only */
    EVK_UNAVAILABLE     /* cannot be had on this JVM (why says so) */
};

struct event_row {
    const char *name;
    enum event_kind kind;
    const char *why;                        /* for EVK_UNAVAILABLE: one clause, "because ..." */
    jvmtiEvent jvmti[EVENT_MAX_JVMTI];      /* JVMTI events needed while enabled (0-terminated) */
    void (*on_change)(int t, bool any_enabled);     /* called after the mask changed */
    /* RequestEvent handler. Called only from a thread the JVM knows (jni: its JNIEnv): the
     * switchboard refuses the others once, for every row (events.c, request_event). */
    jint (*request)(struct instance *inst, JNIEnv *jni, void *arg);
    int warned, warned_request;
};

void events_init(void);
/* A module takes over row t (kind, JVMTI needs, hooks). Call before VMInit. */
void events_register(int t, const struct event_row *row);
void events_set_unavailable(int t, const char *why);
/* A JVMTI event the shim needs on whatever the agents enabled. Call before VMInit. */
void events_need_always(jvmtiEvent e);
/* Keep JVMTI event e on (hold) whatever the agents want, or let it follow them again. */
void events_hold_jvmti(jvmtiEvent e, bool hold);
const struct event_row *events_row(int t);

/* ---- the GC gate (gate.c) ---- */
#define GC_GATE_WAIT_MS 200
/* Regions during which no synthesized GC bracket may run (JVMPI's "GC disabled"). */
void gc_gate_enter_at(int slot);    /* slot: the caller's stripe slot */
void gc_gate_exit_at(int slot);
bool gc_gate_active(void);          /* any GC bracket possible at all? */
void gc_disable_enter(void);        /* DisableGC: a region that holds brackets back */
void gc_disable_exit(void);
bool gc_disabled(void);             /* some DisableGC region is open */
bool gc_bracket_open(void);         /* GC_START posted, GC_FINISH not yet */
void gc_bracket_set_open(bool open);
/* For the thread posting a bracket (memory.c): close the gate, waiting (GC_GATE_WAIT_MS)
 * until no region is open but the caller's own (own: gc_gate_in_region()); yield: give up
 * at once for a thread waiting to post inline. Then open it again. */
bool gc_gate_close(long own, bool yield);
/* The same without waiting: new regions are held back, and the result says whether the open
 * ones had drained (for a bracket posted inside a JVMPI call, which waits for no handler). */
bool gc_gate_close_now(long own);
void gc_gate_open(void);
int gc_gate_in_region(void);        /* 1 if this thread is inside a region */
bool gc_gate_posting(void);         /* this thread is posting a bracket */
void gc_gate_set_posting(bool posting);
/* A thread about to post a bracket inline (memory_deliver_frees): the worker steps back. */
bool gc_gate_inline_waiting(void);
void gc_gate_inline_begin(void);
void gc_gate_inline_end(void);

#endif
