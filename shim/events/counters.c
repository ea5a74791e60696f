/* counters.c — what the migration report counts, kept where every layer can bump it: the
 * agent's misuse per call site, the kinds of trouble report_note() counts, and the time
 * each thread spends in the agent's handlers and in the JVMPI functions it serves.
 *
 * The areas below the report writer (report/) count here, so the counters sit with the
 * switchboard, which every area may use; the writer reads them back through the functions
 * at the end of this file. Everything the writer reads is an atomic, or a note published
 * with a release store after it was filled, so that a crash handler can read it without a
 * lock.
 *
 * The misuse notes are a small fixed table per agent written under notes_lock (a leaf;
 * misuse is never on a hot path); report_note's kinds are atomic counters with a first
 * example kept once. Time is summed per thread (struct report_times, claimed on a thread's
 * first timed call and handed to another thread when it ends), and only while some agent
 * asked for a report (report_timing, set by the writer when it starts).
 */
#include "core/api.h"
#include "events/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_NOTES 48

/* Written under notes_lock; read without it by the report (a crash handler cannot take a
 * lock): a note is filled before nnotes publishes it (release). */
static struct report_misuse_note notes[SHIM_MAX_INSTANCES][MAX_NOTES];
static _Atomic int nnotes[SHIM_MAX_INSTANCES];
static _Atomic uint64_t notes_dropped[SHIM_MAX_INSTANCES];
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;

_Thread_local struct report_tl report_tl = {
    .slot = -1, .event = -1, .fn = -1};
bool report_timing;

/* ---- report_note: kinds of trouble, counted, with the first example ---- */

struct kind_note {
    _Atomic uint64_t count, ns_sum, ns_max;
    _Atomic int claimed, ready;
    char first[240];
};
static struct kind_note kinds[REP_KIND_COUNT];
static const struct {
    const char *name;
    enum report_rank rank;
} kind_info[REP_KIND_COUNT] = {
    [REP_ID_GARBAGE] = {"ids rejected: garbage (never issued)", RANK_WILL},
    [REP_ID_STALE] = {"ids rejected: stale (object, thread or class gone)", RANK_WILL},
    [REP_ID_WRONG_KIND] = {"ids rejected: wrong kind", RANK_WILL},
    [REP_DEFINITION_WAIT] = {"waits for a definition", RANK_HARMLESS},
    [REP_EVENT_HELD] = {"events held back", RANK_HARMLESS},
    [REP_EVENT_DEDUP] = {"events de-duplicated", RANK_HARMLESS},
    [REP_HELD_DIED] = {"objects of attaching threads that died before their THREAD_START "
                       "(neither OBJECT_ALLOC nor OBJECT_FREE posted)", RANK_HARMLESS},
    [REP_NATIVE_BOUND] = {"Java natives bound to the agent library", RANK_HARMLESS},
    [REP_VIRTUAL_THREAD] = {"virtual threads seen", RANK_MAY},
    [REP_CALL_NO_WAIT] = {"JVMPI calls that went on without waiting for another thread's "
                          "event handler (what they left comes from that thread)", RANK_HARMLESS},
    [REP_SHIM_WARNING] = {"warnings logged by the shim", RANK_MAY},
};

static void note_v(enum report_kind k, uint64_t ns, bool timed, const char *fmt, va_list ap)
{
    if ((unsigned)k >= REP_KIND_COUNT)
        return;
    struct kind_note *n = &kinds[k];
    atomic_fetch_add_explicit(&n->count, 1, memory_order_relaxed);
    if (timed) {
        atomic_fetch_add_explicit(&n->ns_sum, ns, memory_order_relaxed);
        uint64_t m = atomic_load_explicit(&n->ns_max, memory_order_relaxed);
        while (ns > m && !atomic_compare_exchange_weak(&n->ns_max, &m, ns))
            ;
    }
    if (atomic_load_explicit(&n->claimed, memory_order_relaxed) || atomic_exchange(&n->claimed, 1))
        return;
    vsnprintf(n->first, sizeof n->first, fmt, ap);
    atomic_store_explicit(&n->ready, 1, memory_order_release);
}

void report_note(enum report_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(kind, 0, false, fmt, ap);
    va_end(ap);
}

void report_note_ns(enum report_kind kind, uint64_t ns, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(kind, ns, true, fmt, ap);
    va_end(ap);
}

uint64_t report_count(enum report_kind kind)
{
    return (unsigned)kind < REP_KIND_COUNT ? atomic_load(&kinds[kind].count) : 0;
}

static void note_misuse(struct instance *inst, enum report_rank rank, const char *fmt, const char *msg)
{
    if (inst->opts.report_file == NULL)
        return;
    pthread_mutex_lock(&notes_lock);
    int s = inst->slot, n = atomic_load_explicit(&nnotes[s], memory_order_relaxed), i;
    for (i = 0; i < n; i++)
        if (notes[s][i].site == fmt)
            break;
    if (i < n) {
        atomic_fetch_add_explicit(&notes[s][i].count, 1, memory_order_relaxed);
    } else if (n < MAX_NOTES) {
        notes[s][i].site = fmt;
        notes[s][i].rank = rank;
        atomic_store_explicit(&notes[s][i].count, 1, memory_order_relaxed);
        snprintf(notes[s][i].first, sizeof notes[s][i].first, "%s", msg);
        atomic_store_explicit(&nnotes[s], n + 1, memory_order_release);
    } else {
        atomic_fetch_add_explicit(&notes_dropped[s], 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&notes_lock);
}

static void misuse_v(struct instance *inst, int level, enum report_rank rank, const char *fmt, va_list ap)
{
    char msg[240];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_level_now >= level)
        log_misuse(level, "agent %d: %s", inst->slot, msg);
    note_misuse(inst, rank, fmt, msg);
}

void report_misuse(struct instance *inst, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    misuse_v(inst, level, RANK_MAY, fmt, ap);
    va_end(ap);
}

void report_misuse_id(struct instance *inst, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    misuse_v(inst, level, RANK_WILL, fmt, ap);
    va_end(ap);
}

void report_harmless(struct instance *inst, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    misuse_v(inst, LOG_INFO, RANK_HARMLESS, fmt, ap);
    va_end(ap);
}

/* ---- time, summed per thread ---- */

static _Atomic(struct report_times *) all_times;
static pthread_key_t times_key;
static pthread_once_t times_once = PTHREAD_ONCE_INIT;
static _Atomic bool times_key_made;

static void times_release(void *p)
{
    struct report_times *t = p;
    report_tl.times = NULL;
    atomic_store(&t->owned, 0);
}

static void times_key_init(void)
{
    if (pthread_key_create(&times_key, times_release) == 0)
        atomic_store(&times_key_made, true);
}

/* May the signal handler read this thread's report_tl? The shim is dlopened, so its
 * thread-locals live in dynamic TLS, which glibc allocates (malloc) on a thread's first
 * touch: from a handler, on a thread that aborted inside malloc (heap corruption) or in
 * the JVM's abort() after hs_err, that would deadlock on the malloc lock and hang the JVM
 * instead of letting it die. A thread that claimed its report_times has touched its TLS
 * (report_tl.times) and set times_key; pthread_getspecific only reads the thread
 * descriptor (glibc: no lock, no allocation). A thread in an event or a JVMPI function
 * has claimed (report_event_begin / report_fn_begin). */
bool report_tl_readable(void)
{
    return atomic_load(&times_key_made) && pthread_getspecific(times_key) != NULL;
}

struct report_times *report_times_claim(void)
{
    pthread_once(&times_once, times_key_init);
    struct report_times *t;
    for (t = atomic_load(&all_times); t != NULL; t = t->next) {
        int free_ = 0;
        if (atomic_load(&t->owned) == 0 && atomic_compare_exchange_strong(&t->owned, &free_, 1))
            break;
    }
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL)
            return NULL;
        atomic_store(&t->owned, 1);
        struct report_times *head = atomic_load(&all_times);
        do
            t->next = head;
        while (!atomic_compare_exchange_weak(&all_times, &head, t));
    }
    report_tl.times = t;
    pthread_setspecific(times_key, t);
    return t;
}

/* A thread's sampled sum scaled to all its calls, summed over threads. */
static uint64_t scaled(_Atomic uint64_t *n, _Atomic uint64_t *timed, _Atomic uint64_t *ns)
{
    uint64_t tm = atomic_load_explicit(timed, memory_order_relaxed);
    if (tm == 0)
        return 0;
    return (uint64_t)((double)atomic_load_explicit(ns, memory_order_relaxed) *
                      (double)atomic_load_explicit(n, memory_order_relaxed) / (double)tm);
}

uint64_t report_event_ns(int slot, int ev)
{
    uint64_t n = 0;
    for (struct report_times *t = atomic_load(&all_times); t != NULL; t = t->next)
        n += scaled(&t->ev_n[slot][ev], &t->ev_timed[slot][ev], &t->ev_ns[slot][ev]);
    return n;
}

uint64_t report_fn_ns(int slot, int fn)
{
    uint64_t n = 0;
    for (struct report_times *t = atomic_load(&all_times); t != NULL; t = t->next)
        n += scaled(&t->fn_n[slot][fn], &t->fn_timed[slot][fn], &t->fn_ns[slot][fn]);
    return n;
}

/* ---- read back by the report writer ---- */

const char *report_kind_name(enum report_kind kind)
{
    return (unsigned)kind < REP_KIND_COUNT ? kind_info[kind].name : "?";
}

enum report_rank report_kind_rank(enum report_kind kind)
{
    return (unsigned)kind < REP_KIND_COUNT ? kind_info[kind].rank : RANK_HARMLESS;
}

uint64_t report_kind_ns(enum report_kind kind, uint64_t *max)
{
    if ((unsigned)kind >= REP_KIND_COUNT) {
        *max = 0;
        return 0;
    }
    uint64_t sum = atomic_load(&kinds[kind].ns_sum);
    *max = atomic_load(&kinds[kind].ns_max);
    return sum;
}

const char *report_kind_first(enum report_kind kind)
{
    if ((unsigned)kind >= REP_KIND_COUNT || !atomic_load_explicit(&kinds[kind].ready, memory_order_acquire))
        return NULL;
    return kinds[kind].first;
}

int report_misuse_notes(int slot, const struct report_misuse_note **out)
{
    *out = notes[slot];
    return atomic_load_explicit(&nnotes[slot], memory_order_acquire);
}

uint64_t report_misuse_dropped(int slot)
{
    return atomic_load(&notes_dropped[slot]);
}

/* The migration report's kind of a bad id (core/ids.h), or -1. */
int report_kind_of_bad_id(int kind)
{
    switch (kind) {
    case IDS_BAD_NULL:
    case IDS_BAD_GARBAGE: return REP_ID_GARBAGE;
    case IDS_BAD_DEAD: return REP_ID_STALE;
    case IDS_BAD_KIND: return REP_ID_WRONG_KIND;
    default: return -1; /* the shim's own failure (no index), not the agent's id */
    }
}
