/* report.h — the migration report's counters (counters.c), which every layer bumps: the
 * agent's misuse, the kinds of trouble report_note() counts, bad ids, the activity and time
 * of each thread around NotifyEvent and the JVMPI functions, and the functions the report
 * writer (report/report.h, a layer above the areas) reads them back with. */
#ifndef JVMPISHIM_REPORT_H
#define JVMPISHIM_REPORT_H

#include "core/shim.h"

#include <time.h>

/* The agent misused a function (bad id, wrong thread, ...): log "agent N: <message>" at
 * `level` and remember it for the report (per call site: a count and the first message). */
void report_misuse(struct instance *inst, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same for a refused id (ids_bad below): the summary counts it by its kind. */
void report_misuse_id(struct instance *inst, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The agent made a call that HotSpot answered the same way (DisableEvent of a number that
 * is no event, of an event this JVM cannot give and the agent never had): logged at info,
 * counted in the report as harmless, no alarm. */
void report_harmless(struct instance *inst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- what went wrong: counters any module can bump ----
 * report_note(REP_ID_STALE, "jobjectID2jobject(%p): its object is no longer alive", id)
 * counts one occurrence of a kind and keeps the first example (formatted only once: later
 * calls cost one relaxed atomic add and one load). report_note_ns() also adds a duration
 * (a wait for a definition) to the kind's total and maximum. Cheap enough for rare paths;
 * never call them per method event. Safe from any thread, with or without a JNIEnv. */
enum report_kind {
    REP_ID_GARBAGE,       /* an id the shim never issued (object, thread, method, class) */
    REP_ID_STALE,         /* an id whose object, thread or class is gone */
    REP_ID_WRONG_KIND,    /* an id of another kind (a thread id where an object id belongs) */
    REP_DEFINITION_WAIT,  /* an event waited for the definition of an id it names */
    REP_EVENT_HELD,       /* an event held back (start gate, GC gate, ordering) */
    REP_EVENT_DEDUP,      /* an event dropped as a duplicate of one already delivered */
    REP_HELD_DIED,        /* an object died while its OBJECT_ALLOC was held: both dropped */
    REP_NATIVE_BOUND,     /* a Java native method bound to code in the agent library */
    REP_VIRTUAL_THREAD,   /* a virtual thread ran: its events carry its carrier's env_id */
    REP_CALL_NO_WAIT,     /* a JVMPI call went on without waiting for another thread */
    REP_SHIM_WARNING,     /* a warning the shim logged (not the agent's misuse) */
    REP_KIND_COUNT
};
void report_note(enum report_kind kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_note_ns(enum report_kind kind, uint64_t ns, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t report_count(enum report_kind kind);

/* ---- per-thread activity and time ----
 * The event being delivered or the JVMPI function being served on this thread, for the
 * crash record, and the time spent there. Only while some agent asked for a report
 * (report_timing). Each thread keeps its own counts and sums (struct report_times: no
 * shared counter on the event path). Timing is sampled: of each (agent, event type) and
 * (agent, function) on a thread, the first 8 and then one in 16 are timed, so a method
 * event pays for two clock reads only once in 16; the report scales each thread's timed
 * sum by its count. Used by event_post() around NotifyEvent and by the JVMPI trampolines. */
struct report_times {
    _Atomic uint64_t ev_n[SHIM_MAX_INSTANCES][SHIM_NUM_EVENTS];     /* deliveries */
    _Atomic uint64_t ev_timed[SHIM_MAX_INSTANCES][SHIM_NUM_EVENTS]; /* of them timed */
    _Atomic uint64_t ev_ns[SHIM_MAX_INSTANCES][SHIM_NUM_EVENTS];    /* their time */
    _Atomic uint64_t fn_n[SHIM_MAX_INSTANCES][SHIM_NUM_FUNCTIONS];
    _Atomic uint64_t fn_timed[SHIM_MAX_INSTANCES][SHIM_NUM_FUNCTIONS];
    _Atomic uint64_t fn_ns[SHIM_MAX_INSTANCES][SHIM_NUM_FUNCTIONS];
    _Atomic int owned;
    struct report_times *next;
};
struct report_tl {
    int16_t slot;            /* instance of the activity, -1 none */
    int16_t event;           /* JVMPI event being delivered, -1 none */
    int16_t fn;              /* JVMPI function being served, -1 none */
    int16_t pad;
    struct report_times *times; /* this thread's sums, NULL until its first timed call */
};
extern _Thread_local struct report_tl report_tl;
extern bool report_timing; /* some agent asked for a report: activity and time are kept */

struct report_times *report_times_claim(void);

static inline uint64_t report_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Count one more in *n (this thread is its only writer); true if this one is timed. */
static inline bool report_sample(_Atomic uint64_t *n)
{
    uint64_t c = atomic_load_explicit(n, memory_order_relaxed);
    atomic_store_explicit(n, c + 1, memory_order_relaxed);
    return c < 8 || (c & 15) == 0;
}
static inline void report_add(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v, memory_order_relaxed);
}

/* Saved activity, and the start time (0: not timed). */
struct report_saved { int16_t slot, event, fn; uint64_t t0; };

static inline struct report_times *report_times_self(void)
{
    struct report_times *t = report_tl.times;
    return t != NULL ? t : report_times_claim();
}

/* Around NotifyEvent (fn false, i = the event type) or a JVMPI function the agent called
 * (fn true, i = the function's index); slot and i in range. One pair serves both, so that
 * what a crash record reads (report_tl) is saved and restored the same way for each. */
static inline struct report_saved report_begin_at(bool fn, int slot, int i)
{
    struct report_saved s = {-1, -1, -1, 0};
    if (__builtin_expect(report_timing, 0)) {
        s.slot = report_tl.slot;
        s.event = report_tl.event;
        s.fn = report_tl.fn;
        report_tl.slot = (int16_t)slot;
        if (!fn)
            report_tl.event = (int16_t)i;
        report_tl.fn = fn ? (int16_t)i : -1;
        struct report_times *t = report_times_self();
        if (t != NULL && report_sample(fn ? &t->fn_n[slot][i] : &t->ev_n[slot][i]))
            s.t0 = report_now();
    }
    return s;
}
static inline void report_end_at(struct report_saved s, bool fn, int slot, int i)
{
    if (__builtin_expect(report_timing, 0)) {
        if (s.t0 != 0) {
            uint64_t ns = report_now() - s.t0;
            struct report_times *t = report_tl.times;
            report_add(fn ? &t->fn_timed[slot][i] : &t->ev_timed[slot][i], 1);
            report_add(fn ? &t->fn_ns[slot][i] : &t->ev_ns[slot][i], ns);
        }
        report_tl.slot = s.slot;
        report_tl.event = s.event;
        report_tl.fn = s.fn;
    }
}
static inline struct report_saved report_event_begin(int slot, int ev) { return report_begin_at(false, slot, ev); }
static inline void report_event_end(struct report_saved s, int slot, int ev) { report_end_at(s, false, slot, ev); }
static inline struct report_saved report_fn_begin(int slot, int fn) { return report_begin_at(true, slot, fn); }
static inline void report_fn_end(struct report_saved s, int slot, int fn) { report_end_at(s, true, slot, fn); }

#include "core/ids.h"
int report_kind_of_bad_id(int kind); /* the report's kind of a bad id (IDS_BAD_*), or -1 */
/* One refused id: counted in the migration report by kind (the first example kept) and
 * logged, as a warning the first time per kind and agent, then at info level. */
#define ids_bad(inst, kind, ...)                                                          \
    do {                                                                                  \
        int ids_k_ = (kind);                                                              \
        if (report_kind_of_bad_id(ids_k_) >= 0)                                                 \
            report_note((enum report_kind)report_kind_of_bad_id(ids_k_), __VA_ARGS__);          \
        report_misuse_id((inst), ids_bad_level((inst), ids_k_), __VA_ARGS__);             \
    } while (0)

/* ---- read back by the report writer (report/) ----
 * Atomic loads only, no lock: a crash handler writes the report. What a note, a kind or a
 * row means for the agent's output: it will change it, it may, or it is harmless (counted,
 * no alarm). The summary ranks by it. */
enum report_rank { RANK_HARMLESS, RANK_MAY, RANK_WILL };
const char *report_kind_name(enum report_kind kind);
enum report_rank report_kind_rank(enum report_kind kind);
/* The durations report_note_ns() added to the kind: their sum, and the longest in *max. */
uint64_t report_kind_ns(enum report_kind kind, uint64_t *max);
const char *report_kind_first(enum report_kind kind);  /* the first example, or NULL */
/* One call site's misuse: the count and the first message. */
struct report_misuse_note {
    const char *site;       /* the format string: one call site */
    _Atomic uint64_t count;
    enum report_rank rank;  /* RANK_HARMLESS: answered as HotSpot did; RANK_WILL: a rejected
                             * id, summed up by its kind; else RANK_MAY */
    char first[240];        /* the first message from that site */
};
/* Agent slot's notes (*notes, the count returned), and how many more sites were dropped. */
int report_misuse_notes(int slot, const struct report_misuse_note **notes);
uint64_t report_misuse_dropped(int slot);
/* The time in the agent's handlers of event ev and in the shim serving function fn: each
 * thread's sampled sum scaled to all its calls, summed over threads. */
uint64_t report_event_ns(int slot, int ev);
uint64_t report_fn_ns(int slot, int fn);
/* May a signal handler read this thread's report_tl (its first touch may allocate)? */
bool report_tl_readable(void);

#endif
