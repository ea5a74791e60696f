/* events.c — the JVMPI event switchboard: EnableEvent / DisableEvent / RequestEvent, and
 * event_post(), the one place that calls an agent's NotifyEvent.
 *
 * Each JVMPI event number has a row in event_table: its name, whether the shim delivers it
 * (or it is request-only, unused, or not available on this JVM), the JVMTI events it needs
 * switched on, and optional hooks for side effects and for RequestEvent. An instance's
 * enabled set is one atomic 64-bit mask read without locks on every event; JVMTI event
 * modes follow the union of all instances' masks (sync_jvmti, lock-free with re-check).
 *
 * Return codes follow HotSpot 1.4.2 (reference-behavior.md §2): SUCCESS for delivered
 * events, NOT_AVAILABLE for unused numbers, out-of-range numbers and the request-only
 * dumps (37, 50, 59), never FAIL. Events not deliverable on this JVM answer NOT_AVAILABLE
 * with one warning naming the event.
 *
 * Each delivery is counted in flight (shutdown waits for those already past the phase
 * check) and as delivered (the migration report), in a record of the delivering thread's
 * own: no counter is shared between threads. With the membarrier system call registered,
 * the in-flight count is a plain store followed by a compiler barrier, and shutdown pays
 * for the ordering instead (an asymmetric Dekker pairing: the phase store, membarrier,
 * then the counts): a locked add and sub per event were a third of event_post's time.
 * Without membarrier the counts are atomic adds on the same per-thread records.
 *
 * The switchboard sits below the areas that post through it (shim/README.md): announcing
 * the thread an event names, or holding the event back until it can be, is threads/' work,
 * reached through the functions threads/ registers (events_set_thread_upcalls). An event
 * built on a carrier while a virtual thread is mounted there gets the virtual thread's
 * env_id here (shim_vthread_env), so no area need know about virtual threads.
 */
#include "core/api.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/record.h"
#include "events/report.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct event_row event_table[SHIM_NUM_EVENTS];

/* ---- per-thread delivery records ---- */

/* A thread's counts. Owned by one thread at a time (claimed on its first event, given back
 * when it exits, then reused by another): the only writer of its fields. Never freed, so
 * the sums stay complete. */
struct flight {
    _Atomic long inflight;
    JNIEnv *vt_env;     /* shim_vthread_env of the owning thread, beside the count it writes */
    _Atomic uint64_t delivered[SHIM_MAX_INSTANCES][SHIM_NUM_EVENTS];
    _Atomic int owned;
    struct flight *next;
};
static _Atomic(struct flight *) flights;
static _Thread_local struct flight *tl_flight;
static pthread_key_t flight_key;
static pthread_once_t flight_once = PTHREAD_ONCE_INIT;
static bool asym; /* membarrier registered: in-flight counts are plain stores */

static void flight_release(void *p)
{
    struct flight *f = p;
    tl_flight = NULL;
    f->vt_env = NULL;
    atomic_store(&f->owned, 0);
}

static void flight_key_init(void)
{
    pthread_key_create(&flight_key, flight_release);
}

static struct flight *flight_claim(void)
{
    pthread_once(&flight_once, flight_key_init);
    struct flight *f;
    for (f = atomic_load(&flights); f != NULL; f = f->next) {
        int free_ = 0;
        if (atomic_load(&f->owned) == 0 && atomic_compare_exchange_strong(&f->owned, &free_, 1))
            break;
    }
    if (f == NULL) {
        f = calloc(1, sizeof *f);
        if (f == NULL)
            return NULL;
        atomic_store(&f->owned, 1);
        struct flight *head = atomic_load(&flights);
        do
            f->next = head;
        while (!atomic_compare_exchange_weak(&flights, &head, f));
    }
    tl_flight = f;
    pthread_setspecific(flight_key, f); /* given back when the thread exits */
    return f;
}

static inline struct flight *flight_self(void)
{
    struct flight *f = tl_flight;
    return f != NULL ? f : flight_claim();
}

static inline void flight_enter(struct flight *f)
{
    if (f == NULL) {
        striped_add(&g_shim.inflight, 1);
    } else if (asym) {
        atomic_store_explicit(&f->inflight,
                              atomic_load_explicit(&f->inflight, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the phase is read after this store */
    } else {
        atomic_fetch_add(&f->inflight, 1);
    }
}

static inline void flight_leave(struct flight *f)
{
    if (f == NULL)
        striped_add(&g_shim.inflight, -1);
    else if (asym)
        atomic_store_explicit(&f->inflight,
                              atomic_load_explicit(&f->inflight, memory_order_relaxed) - 1,
                              memory_order_release);
    else
        atomic_fetch_sub(&f->inflight, 1);
}

long events_inflight(void)
{
    /* Every thread runs a full barrier: an in-flight count stored before it is seen
     * below, and a thread that stores one after it sees the phase already changed. */
    if (asym)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    long n = striped_sum(&g_shim.inflight);
    for (struct flight *f = atomic_load(&flights); f != NULL; f = f->next)
        n += atomic_load(&f->inflight);
    return n;
}

uint64_t events_delivered(int slot, int t)
{
    uint64_t n = 0;
    for (struct flight *f = atomic_load(&flights); f != NULL; f = f->next)
        n += atomic_load_explicit(&f->delivered[slot][t], memory_order_relaxed);
    return n;
}

#define ROW(num, nm, k) [num] = {.name = nm, .kind = k}
static const struct event_row base_rows[SHIM_NUM_EVENTS] = {
    ROW(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY", EVK_LATER),
    ROW(JVMPI_EVENT_METHOD_ENTRY2, "METHOD_ENTRY2", EVK_LATER),
    ROW(JVMPI_EVENT_METHOD_EXIT, "METHOD_EXIT", EVK_LATER),
    ROW(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC", EVK_LATER),
    ROW(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE", EVK_LATER),
    ROW(JVMPI_EVENT_OBJECT_MOVE, "OBJECT_MOVE", EVK_LATER),
    ROW(JVMPI_EVENT_COMPILED_METHOD_LOAD, "COMPILED_METHOD_LOAD", EVK_LATER),
    ROW(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, "COMPILED_METHOD_UNLOAD", EVK_LATER),
    ROW(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START", EVK_LATER),
    ROW(JVMPI_EVENT_THREAD_START, "THREAD_START", EVK_LATER),
    ROW(JVMPI_EVENT_THREAD_END, "THREAD_END", EVK_LATER),
    ROW(JVMPI_EVENT_CLASS_LOAD_HOOK, "CLASS_LOAD_HOOK", EVK_LATER),
    ROW(JVMPI_EVENT_HEAP_DUMP, "HEAP_DUMP", EVK_REQUEST_ONLY),
    ROW(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, "JNI_GLOBALREF_ALLOC", EVK_LATER),
    ROW(JVMPI_EVENT_JNI_GLOBALREF_FREE, "JNI_GLOBALREF_FREE", EVK_LATER),
    ROW(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, "JNI_WEAK_GLOBALREF_ALLOC", EVK_LATER),
    ROW(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, "JNI_WEAK_GLOBALREF_FREE", EVK_LATER),
    ROW(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD", EVK_LATER),
    ROW(JVMPI_EVENT_CLASS_UNLOAD, "CLASS_UNLOAD", EVK_LATER),
    ROW(JVMPI_EVENT_DATA_DUMP_REQUEST, "DATA_DUMP_REQUEST", EVK_ON),
    ROW(JVMPI_EVENT_DATA_RESET_REQUEST, "DATA_RESET_REQUEST", EVK_ON),
    ROW(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE", EVK_ON),
    ROW(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN", EVK_ON),
    ROW(JVMPI_EVENT_ARENA_NEW, "ARENA_NEW", EVK_LATER),
    ROW(JVMPI_EVENT_ARENA_DELETE, "ARENA_DELETE", EVK_LATER),
    ROW(JVMPI_EVENT_OBJECT_DUMP, "OBJECT_DUMP", EVK_REQUEST_ONLY),
    ROW(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, "RAW_MONITOR_CONTENDED_ENTER", EVK_ON),
    ROW(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, "RAW_MONITOR_CONTENDED_ENTERED", EVK_ON),
    ROW(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, "RAW_MONITOR_CONTENDED_EXIT", EVK_ON),
    ROW(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, "MONITOR_CONTENDED_ENTER", EVK_LATER),
    ROW(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, "MONITOR_CONTENDED_ENTERED", EVK_LATER),
    ROW(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, "MONITOR_CONTENDED_EXIT", EVK_LATER),
    ROW(JVMPI_EVENT_MONITOR_WAIT, "MONITOR_WAIT", EVK_LATER),
    ROW(JVMPI_EVENT_MONITOR_WAITED, "MONITOR_WAITED", EVK_LATER),
    ROW(JVMPI_EVENT_MONITOR_DUMP, "MONITOR_DUMP", EVK_REQUEST_ONLY),
    ROW(JVMPI_EVENT_GC_START, "GC_START", EVK_LATER),
    ROW(JVMPI_EVENT_GC_FINISH, "GC_FINISH", EVK_LATER),
};

void events_register(int t, const struct event_row *row)
{
    const char *name = event_table[t].name;
    event_table[t] = *row;
    if (event_table[t].name == NULL)
        event_table[t].name = name;
}

void events_set_unavailable(int t, const char *why)
{
    event_table[t].kind = EVK_UNAVAILABLE;
    event_table[t].why = why;
}

void events_init(void)
{
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    asym = q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    log_debug("event delivery: in-flight counts %s", asym ? "with membarrier" : "atomic");
    memcpy(event_table, base_rows, sizeof event_table);
    event_table[JVMPI_EVENT_DATA_DUMP_REQUEST].jvmti[0] = JVMTI_EVENT_DATA_DUMP_REQUEST;
    event_table[JVMPI_EVENT_DATA_RESET_REQUEST].jvmti[0] = JVMTI_EVENT_DATA_DUMP_REQUEST;
}

const char *event_name(int t)
{
    if (t >= 0 && t < SHIM_NUM_EVENTS && event_table[t].name != NULL)
        return event_table[t].name;
    return "(no such event)";
}

const struct event_row *events_row(int t)
{
    return (t >= 0 && t < SHIM_NUM_EVENTS) ? &event_table[t] : NULL;
}

_Atomic int events_enabled_n[SHIM_NUM_EVENTS];

/* An instance counts once it is published (slot below ninst), as the walk over the
 * instances this replaces counted it: events an agent enables in its JVM_OnLoad, before
 * then, are added when it is published (events_instance_published). */
static void count_enabled(const struct instance *inst, int t, int d)
{
    if (inst->slot < __atomic_load_n(&g_shim.ninst, __ATOMIC_ACQUIRE))
        atomic_fetch_add(&events_enabled_n[t], d);
}

void events_instance_published(const struct instance *inst)
{
    uint64_t m = atomic_load(&inst->enabled);
    for (int t = 0; t < SHIM_NUM_EVENTS; t++)
        if ((m >> t) & 1u)
            atomic_fetch_add(&events_enabled_n[t], 1);
}

static jvmtiEvent always_on[8];
static int n_always;

void events_need_always(jvmtiEvent e)
{
    if (n_always < (int)(sizeof always_on / sizeof always_on[0]))
        always_on[n_always++] = e;
    jvmti_ok((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE, e, NULL),
             "enabling a JVMTI event the shim always needs");
}

static bool always(jvmtiEvent e)
{
    for (int i = 0; i < n_always; i++)
        if (always_on[i] == e)
            return true;
    return false;
}

/* JVMTI events an area keeps on for a while whatever the agents want (at most one). */
static _Atomic int held_event;

/* Does any instance want a JVMPI event that needs JVMTI event e (or is e always on)? */
static bool jvmti_event_wanted(jvmtiEvent e)
{
    if (always(e))
        return true;
    if (atomic_load(&held_event) == (int)e)
        return true;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        const struct event_row *r = &event_table[t];
        for (int k = 0; k < EVENT_MAX_JVMTI && r->jvmti[k] != 0; k++)
            if (r->jvmti[k] == e && events_any(t))
                return true;
    }
    return false;
}

/* Bring the mode of JVMTI event e in line with what the instances want. No lock: after
 * setting a mode we re-read what is wanted and go again if it changed meanwhile, so
 * concurrent enable/disable calls converge on the last wish. */
static void sync_one(jvmtiEvent e)
{
    if (always(e))
        return; /* on since start-up, and stays on */
    for (int tries = 0; tries < 100; tries++) {
        bool want = jvmti_event_wanted(e);
        if (!jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(
                             g_shim.jvmti, want ? JVMTI_ENABLE : JVMTI_DISABLE, e, NULL),
                         LOG_WARN, "switching a JVMTI event for an enabled JVMPI event"))
            break;
        if (jvmti_event_wanted(e) == want)
            break;
    }
}

/* The JVMTI events that t depends on. */
static void sync_jvmti(int t)
{
    const struct event_row *r = &event_table[t];
    for (int k = 0; k < EVENT_MAX_JVMTI && r->jvmti[k] != 0; k++)
        sync_one(r->jvmti[k]);
}

void events_hold_jvmti(jvmtiEvent e, bool hold)
{
    if (hold) {
        atomic_store(&held_event, (int)e);
        sync_one(e);
    } else {
        int expect = (int)e;
        if (atomic_compare_exchange_strong(&held_event, &expect, 0))
            sync_one(e);
    }
}

static jint check_type(struct instance *inst, jint t, const char *fn)
{
    if (t < 0 || t >= SHIM_NUM_EVENTS || event_table[t].name == NULL) {
        /* HotSpot answered the same: agents disabled unused numbers in loops. */
        report_harmless(inst, "%s(%d): no such JVMPI event: JVMPI_NOT_AVAILABLE", fn, (int)t);
        return JVMPI_NOT_AVAILABLE;
    }
    switch (event_table[t].kind) {
    case EVK_ON:
        return JVMPI_SUCCESS;
    case EVK_REQUEST_ONLY:
        report_harmless(inst, "%s(%s): a request-only event (use RequestEvent): "
                              "JVMPI_NOT_AVAILABLE", fn, event_table[t].name);
        return JVMPI_NOT_AVAILABLE;
    case EVK_UNAVAILABLE:
    case EVK_LATER:
        /* Disabling what could never be enabled changes nothing: no warning. */
        if (strcmp(fn, "DisableEvent") == 0) {
            report_harmless(inst, "DisableEvent(%s): not available on this JVM, so never "
                                  "enabled: JVMPI_NOT_AVAILABLE", event_table[t].name);
            return JVMPI_NOT_AVAILABLE;
        }
        if (!__atomic_exchange_n(&event_table[t].warned, 1, __ATOMIC_RELAXED))
            log_warn("%s: JVMPI_EVENT_%s is not available %s: JVMPI_NOT_AVAILABLE", fn,
                     event_table[t].name,
                     event_table[t].why ? event_table[t].why
                                        : "in this version of the shim (see docs/mapping.md)");
        return JVMPI_NOT_AVAILABLE;
    }
    return JVMPI_NOT_AVAILABLE;
}

/* Counters for the migration report, for event numbers JVMPI could mean. */
static void count_event_call(_Atomic uint64_t *calls, _Atomic uint64_t *refused, jint t, jint rc)
{
    if (t < 0 || t >= SHIM_NUM_EVENTS)
        return;
    atomic_fetch_add_explicit(&calls[t], 1, memory_order_relaxed);
    if (rc != JVMPI_SUCCESS)
        atomic_fetch_add_explicit(&refused[t], 1, memory_order_relaxed);
}

/* JVMTI will not switch event modes, nor run the collection that enabling OBJECT_ALLOC
 * starts, on a thread the VM does not know (JVMTI_ERROR_UNATTACHED_THREAD): the agent would
 * hear SUCCESS and never get the event. Such a caller (a pthread of the agent's own) is
 * attached as a daemon for the switch and detached afterwards, when the switch of t has
 * JVMTI work to do (an attach costs 0.05-2 ms: events the shim alone serves, or whose JVMTI
 * events are on for good, need none).
 * True if it was attached. */
static bool attach_for_switch(int t)
{
    JNIEnv *jni = NULL;
    bool jvmti_work = event_table[t].on_change != NULL;
    for (int k = 0; k < EVENT_MAX_JVMTI && event_table[t].jvmti[k] != 0; k++)
        jvmti_work = jvmti_work || !always(event_table[t].jvmti[k]);
    if (!jvmti_work)
        return false;
    if (g_shim.vm == NULL || shim_current_jni() != NULL)
        return false;
    return (*g_shim.vm)->AttachCurrentThreadAsDaemon(g_shim.vm, (void **)&jni, NULL) == JNI_OK;
}

jint jvmpi_EnableEvent(struct instance *inst, jint t, void *arg)
{
    (void)arg; /* JVMPI defines no argument for any event; HotSpot ignored it too */
    jint rc = check_type(inst, t, "EnableEvent");
    count_event_call(inst->enable_calls, inst->enable_refused, t, rc);
    if (rc != JVMPI_SUCCESS)
        return rc;
    uint64_t old = atomic_fetch_or(&inst->enabled, (uint64_t)1 << t);
    log_debug("agent %d: EnableEvent(%s)", inst->slot, event_table[t].name);
    if (!(old & ((uint64_t)1 << t))) {
        count_enabled(inst, t, 1); /* this call set the bit: counted once */
        bool attached = attach_for_switch(t);
        if (event_table[t].on_change != NULL)
            event_table[t].on_change(t, events_any(t));
        sync_jvmti(t);
        if (attached)
            (*g_shim.vm)->DetachCurrentThread(g_shim.vm);
    }
    return JVMPI_SUCCESS;
}

jint jvmpi_DisableEvent(struct instance *inst, jint t, void *arg)
{
    (void)arg;
    jint rc = check_type(inst, t, "DisableEvent");
    if (rc != JVMPI_SUCCESS)
        return rc;
    uint64_t old = atomic_fetch_and(&inst->enabled, ~((uint64_t)1 << t));
    log_debug("agent %d: DisableEvent(%s)", inst->slot, event_table[t].name);
    if (old & ((uint64_t)1 << t)) {
        count_enabled(inst, t, -1);
        bool attached = attach_for_switch(t);
        if (event_table[t].on_change != NULL)
            event_table[t].on_change(t, events_any(t));
        sync_jvmti(t);
        if (attached)
            (*g_shim.vm)->DetachCurrentThread(g_shim.vm);
    }
    return JVMPI_SUCCESS;
}

/* Set by post() when it refuses a requested event (shutdown): RequestEvent then fails. */
static _Thread_local bool tl_request_refused;

static jint request_event(struct instance *inst, jint t, void *arg);

jint jvmpi_RequestEvent(struct instance *inst, jint t, void *arg)
{
    tl_request_refused = false;
    jint rc = request_event(inst, t, arg);
    /* The answer could not be delivered (the VM is shutting down): the agent learns it
     * from the result rather than waiting for an event that never comes. */
    if (tl_request_refused && rc == JVMPI_SUCCESS) {
        report_misuse(inst, LOG_INFO, "RequestEvent(%s) while JVM_SHUT_DOWN is delivered on "
                                      "another thread: not delivered, JVMPI_FAIL", event_name(t));
        rc = JVMPI_FAIL;
    }
    count_event_call(inst->request_calls, inst->request_failed, t, rc);
    return rc;
}

static jint request_event(struct instance *inst, jint t, void *arg)
{
    bool in_range = t >= 0 && t < SHIM_NUM_EVENTS;
    /* A dump this JVM cannot build (capabilities missing after attach) has a handler but
     * is refused like an event without one. */
    bool dump = t == JVMPI_EVENT_HEAP_DUMP || t == JVMPI_EVENT_OBJECT_DUMP ||
                t == JVMPI_EVENT_MONITOR_DUMP;
    if (in_range && event_table[t].request != NULL &&
        !(dump && event_table[t].kind == EVK_UNAVAILABLE)) {
        /* Every request reads the JVM through JNI: a thread the JVM does not know (an agent
         * thread never attached) is refused here, in one place, for every row. */
        JNIEnv *jni = shim_current_jni();
        if (jni == NULL) {
            report_misuse(inst, LOG_WARN, "RequestEvent(%s) from a thread the JVM does not "
                                          "know: JVMPI_FAIL", event_table[t].name);
            return JVMPI_FAIL;
        }
        return event_table[t].request(inst, jni, arg);
    }
    if (in_range && event_table[t].name != NULL &&
        (dump || t == JVMPI_EVENT_OBJECT_ALLOC || t == JVMPI_EVENT_THREAD_START ||
         t == JVMPI_EVENT_CLASS_LOAD)) {
        if (!__atomic_exchange_n(&event_table[t].warned_request, 1, __ATOMIC_RELAXED))
            log_warn("RequestEvent: JVMPI_EVENT_%s is not available %s: JVMPI_NOT_AVAILABLE",
                     event_table[t].name,
                     event_table[t].why ? event_table[t].why
                                        : "in this version of the shim (see docs/mapping.md)");
        return JVMPI_NOT_AVAILABLE;
    }
    report_misuse(inst, LOG_INFO, "RequestEvent(%d): JVMPI defines no request for %s: "
                                  "JVMPI_NOT_AVAILABLE", (int)t, event_name(t));
    return JVMPI_NOT_AVAILABLE;
}

void event_init(JVMPI_Event *ev, jint type, JNIEnv *env)
{
    memset(ev, 0, sizeof *ev);
    ev->event_type = type;
    ev->env_id = env;
}

void events_gate_wait(void)
{
    if (atomic_load_explicit(&g_shim.phase, memory_order_acquire) >= PHASE_LIVE)
        return;
    if (pthread_equal(pthread_self(), g_shim.init_thread))
        return;
    /* Inside a JVMPI call (an agent thread asking before JVM_INIT_DONE): the replay's
     * handlers on the init thread may wait for a lock the caller holds. HotSpot held such
     * events back too, but a call waits for no other thread's handler (shim.h). */
    if (shim_in_call())
        return;
    uint64_t t0 = report_now();
    pthread_mutex_lock(&g_shim.life_lock);
    while (atomic_load(&g_shim.phase) < PHASE_LIVE)
        pthread_cond_wait(&g_shim.life_cond, &g_shim.life_lock);
    pthread_mutex_unlock(&g_shim.life_lock);
    report_note_ns(REP_EVENT_HELD, report_now() - t0,
                   "an event of a thread other than the start-up one held at the start gate "
                   "until JVM_INIT_DONE");
}

static bool post(struct instance *inst, JVMPI_Event *ev, const struct calltrace_snap *snap);

_Thread_local const struct calltrace_snap *calltrace_snap_now;

static struct events_thread_upcalls thread_up;

void events_set_thread_upcalls(const struct events_thread_upcalls *u)
{
    thread_up = *u;
}

void events_set_vthread(JNIEnv *vt)
{
    shim_vthread_env = vt;
    struct flight *f = flight_self();
    if (f != NULL)
        f->vt_env = vt;
}

bool event_post(struct instance *inst, JVMPI_Event *ev)
{
    return post(inst, ev, NULL);
}

bool event_post_held(struct instance *inst, JVMPI_Event *ev, const struct calltrace_snap *snap)
{
    return post(inst, ev, snap);
}

_Thread_local int events_deferred_n;
static void (*deferred_flush)(void);

void events_set_deferred_flush(void (*flush)(void))
{
    deferred_flush = flush;
}

static bool post(struct instance *inst, JVMPI_Event *ev, const struct calltrace_snap *snap)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    bool requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    /* Events that happened earlier on this thread and wait for a detail go first: the
     * agent sees this thread's events in the order they happened. Before this event's own
     * check: their handlers may take a while, and a DisableEvent that returns meanwhile must
     * stop this one. */
    if (__builtin_expect(events_deferred_n != 0, 0) && deferred_flush != NULL)
        deferred_flush();
    if (!requested && !event_on(inst, t))
        return false;
    struct flight *fl = flight_self();
    /* On a carrier that carries a virtual thread, what happens is the virtual thread's: an
     * event built with the carrier's JNIEnv names the virtual thread (threads/vthreads.c;
     * the thread's record holds a copy of shim_vthread_env, read here at no extra cost). */
    JNIEnv *vt = fl != NULL ? fl->vt_env : shim_vthread_env;
    if (__builtin_expect(vt != NULL, 0) && ev->env_id != NULL && ev->env_id == shim_current_jni())
        ev->env_id = vt;
    if (atomic_load_explicit(&g_shim.phase, memory_order_acquire) < PHASE_LIVE)
        events_gate_wait();
    /* Counted in flight before the phase is read, so that shutdown, having set the phase,
     * can wait for deliveries already past this check (see cb_vm_death). */
    /* Events from JVMTI callbacks carry the current thread's JNIEnv: no TLS lookup. */
    int slot = ev->env_id != NULL ? stripe_of(ev->env_id) : stripe_index();
    flight_enter(fl);
    int phase = asym ? atomic_load_explicit(&g_shim.phase, memory_order_relaxed)
                     : atomic_load(&g_shim.phase);
    /* A GC bracket that has begun is finished even if shutdown starts meanwhile: agents
     * lock in GC_START and unlock in GC_FINISH, and their shutdown handler needs the lock.
     * A requested event is the answer to a call the agent is making (its sampler, until its
     * JVM_SHUT_DOWN handler stops it): answered on the caller until that handler has
     * returned, as HotSpot answered calls until disengage() (reference-behavior.md, 5.1). */
    bool allowed = phase < PHASE_SHUTTING ||
                   (phase == PHASE_SHUTTING && (pthread_equal(pthread_self(), g_shim.shutdown_thread) ||
                                                requested ||
                                                (gc_bracket_open() && worker_is_self())));
    void (*notify)(JVMPI_Event *) = inst->iface.NotifyEvent;
    if (!allowed || notify == NULL) {
        /* During JVM_SHUT_DOWN only the shutting-down thread talks to the agent; after it,
         * or after ProfilerExit, nobody does. A request refused here fails (request_event). */
        flight_leave(fl);
        if (requested)
            tl_request_refused = true;
        return false;
    }
    /* Definition before use: the thread an event names is announced first; while that
     * thread's Thread object is still being built (JNI attach), its event waits for the
     * THREAD_START that can name it (threads.c). */
    if (t != JVMPI_EVENT_THREAD_START && t != JVMPI_EVENT_THREAD_END && ev->env_id != NULL &&
        event_on(inst, JVMPI_EVENT_THREAD_START) && thread_up.announce_self != NULL &&
        !thread_up.announce_self(ev->env_id)) {
        if (!requested && thread_up.hold_event(inst, ev, snap)) {
            flight_leave(fl);
            return true;
        }
        thread_up.announce_self_now(ev->env_id);
    }
    /* JVMPI delivers events "with GC disabled": no synthesized GC bracket overlaps a
     * handler. Requested events are calls the agent makes, possibly holding its own
     * locks: they pass, as HotSpot did not GC-lock most of them either. */
    bool region = !requested && gc_gate_active();
    if (region)
        gc_gate_enter_at(slot);
    /* The migration report's view: what this thread delivers (for a crash record), and
     * the handler's time; both only while a report was asked for. What the agent's handler
     * does is the agent's, not the shim's, even on the worker. */
    struct report_saved rs = report_event_begin(inst->slot, t);
    int own = shim_own_java_depth;
    shim_own_java_depth = 0;
    /* A held event's handler traces the stack the event happened at; any other handler,
     * a nested one included, the live stack. */
    const struct calltrace_snap *outer_snap = calltrace_snap_now;
    calltrace_snap_now = snap;
    RECORD_EVENT(inst, ev);
    notify(ev);
    RECORD_EVENT_DONE(inst, ev);
    calltrace_snap_now = outer_snap;
    shim_own_java_depth = own;
    report_event_end(rs, inst->slot, t);
    if (region)
        gc_gate_exit_at(slot);
    if (fl != NULL)
        atomic_store_explicit(&fl->delivered[inst->slot][t],
                              atomic_load_explicit(&fl->delivered[inst->slot][t],
                                                   memory_order_relaxed) + 1,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&inst->delivered[slot].n[t], 1, memory_order_relaxed);
    flight_leave(fl);
    return true;
}

void event_post_all(const JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (__atomic_load_n(&g_shim.ninst, __ATOMIC_ACQUIRE) == 1) {
        JVMPI_Event copy = *ev; /* the caller's stays unscribbled */
        post(&g_shim.inst[0], &copy, NULL);
        return;
    }
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (!event_on(inst, t))
            continue;
        JVMPI_Event copy = *ev; /* each agent gets its own, unscribbled copy */
        event_post(inst, &copy);
    }
}
