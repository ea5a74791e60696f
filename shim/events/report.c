/* report.c — the migration report: should the user worry, what a legacy agent used, how
 * faithfully it was served, what went wrong, where the time went, and how the run ended.
 *
 * "Can I run my old profiler here, and what will differ?" The summary comes first and ranks
 * what it found: what will change the agent's output (a crash, an event the agent enabled
 * that this JVM cannot give, ids rejected), what may (rows whose weight says agents of
 * some kinds notice the difference, the agent's other misuse, the shim's warnings), and
 * what is harmless, counted without alarm (calls HotSpot answered the same way, such as
 * DisableEvent of a number that is no event; differences agents do not notice; costs).
 * Then, for each JVMPI function the agent called and each event it enabled or requested,
 * the counts, the status and weight and the one line from the fidelity table (fidelity.c,
 * the same text as docs/mapping.md's), the warnings (one line per call site with its
 * count and first message), the counters other modules bump through report_note(), and
 * the time spent in the agent's handlers and in the shim.
 *
 * The report is written as the run goes: at report_begin (VMInit or attach), after
 * JVM_INIT_DONE and every few seconds (a checkpoint, which says so), and at the end, whose
 * last line is "end of report". A run killed by SIGKILL or a timeout leaves the last
 * checkpoint. All of the text goes through an async-signal-safe writer (write(2), no lock,
 * no allocation; the counters are atomics and the notes are published with a release
 * store), so that a crash handler can rewrite the report as it stood at the crash.
 *
 * Signals. report_begin chains handlers in front of the JVM's (installed before VMInit):
 *  - SIGTERM, SIGINT: the handler only notes the signal and calls the JVM's handler, which
 *    runs the JVM's shutdown; VMDeath then writes the report, which says so once. Where
 *    the JVM installed none (-Xrs), the report is finished there, and the signal's default
 *    action follows.
 *  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: HotSpot uses SIGSEGV itself (safepoint polls,
 *    implicit null checks, stack banging), so the handler first decides from the pc alone,
 *    against address ranges computed beforehand, whether the signal is the agent's: pc in
 *    the agent library, or in the shim, or in libc at a near-NULL address while the thread
 *    is delivering an event or serving a JVMPI function (SIGABRT: any pc while it is). Any
 *    other signal goes straight to the JVM's handler, with no side effect (not even a
 *    thread-local read, whose first touch on a thread may allocate). For the agent's, the
 *    report is rewritten with the crash record (signal, one attribution used by the summary
 *    too, the symbol by dladdr or, for abort() and libc, the agent's return address found
 *    on the stack, and what follows: the JVM's handler, which on HotSpot writes hs_err, or,
 *    for SIGABRT, which the JVM does not handle, the default action and no hs_err), then
 *    the previous handler runs: the exit status stays the JVM's.
 * With libjsig preloaded the JVM keeps its handlers and calls others only for signals it
 * does not want itself, and expects them to handle those: the shim then installs no handler
 * and the report says so. -Xcheck:jni makes HotSpot warn once that these handlers changed.
 *
 * The counters live in struct instance and are bumped on the call paths (interface.c,
 * events.c); deliveries are counted per thread stripe, so the hot path shares no cache line.
 * Time is summed per thread (struct report_times, claimed on a thread's first timed call
 * and handed to another thread when it ends), and only while some agent asked for a report.
 * The misuse notes are a small fixed table per agent written under notes_lock (a leaf;
 * misuse is never on a hot path); report_note's kinds are atomic counters with a first
 * example kept once.
 */
#include "core/api.h"
#include "core/fidelity.h"
#include "events/events.h"
#include "events/report.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_NOTES 48
#define CHECKPOINT_SECONDS 2

/* What a note, a kind or a row means for the agent's output: it will change it, it may, or
 * it is harmless (counted, no alarm). The summary ranks by it. */
enum rank { RANK_HARMLESS, RANK_MAY, RANK_WILL };

struct misuse_note {
    const char *site;       /* the format string: one call site */
    _Atomic uint64_t count;
    enum rank rank;         /* RANK_HARMLESS: answered as HotSpot did; RANK_WILL: a rejected
                             * id, summed up by its kind; else RANK_MAY */
    char first[240];        /* the first message from that site */
};

/* Written under notes_lock; read without it by the report (a crash handler cannot take a
 * lock): a note is filled before nnotes publishes it (release). */
static struct misuse_note notes[SHIM_MAX_INSTANCES][MAX_NOTES];
static _Atomic int nnotes[SHIM_MAX_INSTANCES];
static _Atomic uint64_t notes_dropped[SHIM_MAX_INSTANCES];
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int written;
static time_t started;
static uint64_t started_mono;

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
    enum rank rank;
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

/* log.c calls this for every warning it prints; the agent's misuse (log_misuse) is counted
 * apart. */
static void on_shim_warning(const char *line)
{
    report_note(REP_SHIM_WARNING, "%s", line);
}

static void note_misuse(struct instance *inst, enum rank rank, const char *fmt, const char *msg)
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

static void misuse_v(struct instance *inst, int level, enum rank rank, const char *fmt, va_list ap)
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
static bool tl_readable(void)
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

static uint64_t event_ns(int slot, int ev)
{
    uint64_t n = 0;
    for (struct report_times *t = atomic_load(&all_times); t != NULL; t = t->next)
        n += scaled(&t->ev_n[slot][ev], &t->ev_timed[slot][ev], &t->ev_ns[slot][ev]);
    return n;
}

static uint64_t fn_ns(int slot, int fn)
{
    uint64_t n = 0;
    for (struct report_times *t = atomic_load(&all_times); t != NULL; t = t->next)
        n += scaled(&t->fn_n[slot][fn], &t->fn_timed[slot][fn], &t->fn_ns[slot][fn]);
    return n;
}

/* ---- an async-signal-safe writer ----
 * The whole report is written through it, by the checkpoint thread, at the end, and from
 * a crash handler: only write(2), no lock, no allocation, no stdio. */

struct w {
    int fd;
    size_t n;
    bool failed;
    char b[1024];
};

static void w_flush(struct w *w)
{
    size_t off = 0;
    while (off < w->n && !w->failed) {
        ssize_t k = write(w->fd, w->b + off, w->n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            w->failed = true;
        else
            off += (size_t)k;
    }
    w->n = 0;
}
static void w_c(struct w *w, char c)
{
    if (w->n == sizeof w->b)
        w_flush(w);
    w->b[w->n++] = c;
}
static void w_s(struct w *w, const char *s)
{
    while (s != NULL && *s != '\0')
        w_c(w, *s++);
}
static int u_digits(char *d, uint64_t v) /* reversed */
{
    int i = 0;
    do {
        d[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return i;
}
static void w_u(struct w *w, uint64_t v)
{
    char d[24];
    for (int i = u_digits(d, v); i > 0; i--)
        w_c(w, d[i - 1]);
}
static void w_x(struct w *w, uint64_t v)
{
    char d[24];
    int i = 0;
    do {
        d[i++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    w_s(w, "0x");
    for (; i > 0; i--)
        w_c(w, d[i - 1]);
}
/* s padded with spaces to width (left-aligned), or right-aligned. */
static void w_pad(struct w *w, const char *s, int width, bool right)
{
    int len = (int)strlen(s);
    if (right)
        for (int i = len; i < width; i++)
            w_c(w, ' ');
    w_s(w, s);
    if (!right)
        for (int i = len; i < width; i++)
            w_c(w, ' ');
}
/* v / 10^scale with `decimals` digits after the point (rounded), as text in out[32]. */
static const char *dec(char *out, uint64_t v, int scale, int decimals)
{
    uint64_t p = 1, q = 1;
    for (int i = 0; i < scale - decimals; i++)
        p *= 10;
    for (int i = 0; i < decimals; i++)
        q *= 10;
    uint64_t r = (v + p / 2) / p; /* in units of 10^-decimals */
    char d[24];
    int n = 0, k = u_digits(d, r / q);
    while (k > 0)
        out[n++] = d[--k];
    if (decimals > 0) {
        out[n++] = '.';
        uint64_t f = r % q;
        for (int i = decimals - 1; i >= 0; i--) {
            uint64_t m = 1;
            for (int j = 0; j < i; j++)
                m *= 10;
            out[n++] = (char)('0' + (f / m) % 10);
        }
    }
    out[n] = '\0';
    return out;
}
static const char *utoa(char *out, uint64_t v)
{
    return dec(out, v, 0, 0);
}
static void w_pad_u(struct w *w, uint64_t v, int width)
{
    char b[32];
    w_pad(w, utoa(b, v), width, true);
}

/* Local time as text without localtime (it may take a lock): the UTC offset is read once
 * at start. */
static long utc_offset;
static void stamp(char *out, time_t t)
{
    int64_t x = (int64_t)t + utc_offset;
    int64_t days = x >= 0 ? x / 86400 : -((-x + 86399) / 86400);
    int64_t sec = x - days * 86400;
    /* days since 1970-01-01 to a civil date (H. Hinnant's algorithm) */
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    int64_t f[6] = {y, m, d, sec / 3600, sec / 60 % 60, sec % 60};
    const char sep[6] = {'-', '-', ' ', ':', ':', '\0'};
    int n = 0;
    for (int i = 0; i < 6; i++) {
        int width = i == 0 ? 4 : 2;
        char dg[24];
        int k = u_digits(dg, (uint64_t)(f[i] < 0 ? 0 : f[i]));
        for (int j = k; j < width; j++)
            out[n++] = '0';
        while (k > 0)
            out[n++] = dg[--k];
        if (sep[i] != '\0')
            out[n++] = sep[i];
    }
    out[n] = '\0';
}

/* ---- the report text ---- */

static uint64_t delivered(const struct instance *inst, int t)
{
    uint64_t n = events_delivered(inst->slot, t);
    for (int i = 0; i < STRIPES; i++)
        n += atomic_load_explicit(&inst->delivered[i].n[t], memory_order_relaxed);
    return n;
}

static uint64_t fn_calls(const struct instance *inst, int fn)
{
    uint64_t c = 0;
    for (int i = 0; i < STRIPES; i++)
        c += atomic_load_explicit(&inst->calls[i].n[fn], memory_order_relaxed);
    return c;
}

/* The status of event t on this JVM now: the table's, unless the switchboard found the
 * event unavailable here (a refused capability) or it is not delivered at all. */
static enum fidelity event_status(int t, const char **how)
{
    const struct fidelity_row *r = fidelity_event(t);
    const struct event_row *row = events_row(t);
    *how = r ? r->how : "JVMPI defines no such event";
    if (r == NULL)
        return FID_UNAVAILABLE;
    if (row != NULL && row->kind == EVK_UNAVAILABLE) {
        *how = row->why ? row->why : "this JVM refused the capability it needs";
        return FID_UNAVAILABLE;
    }
    if (row != NULL && row->kind == EVK_LATER && r->status != FID_UNAVAILABLE) {
        *how = "not delivered by this version of the shim";
        return FID_UNAVAILABLE;
    }
    return r->status;
}

/* An event the agent enabled that this JVM cannot give (EnableEvent answered
 * NOT_AVAILABLE for a real event the agent could have had on HotSpot). */
static bool enabled_unavailable(const struct instance *inst, int t)
{
    const struct event_row *row = events_row(t);
    if (atomic_load(&inst->enable_refused[t]) == 0 || row == NULL || row->name == NULL ||
        row->kind == EVK_REQUEST_ONLY)
        return false;
    const char *how;
    return event_status(t, &how) == FID_UNAVAILABLE;
}

static void sysprop(char *out, size_t n, const char *name)
{
    char *v = NULL;
    out[0] = '\0';
    if (g_shim.jvmti != NULL &&
        (*g_shim.jvmti)->GetSystemProperty(g_shim.jvmti, name, &v) == JVMTI_ERROR_NONE && v) {
        snprintf(out, n, "%s", v);
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)v);
    }
}

/* Per agent with report=PATH: the file, open from report_begin to the end (a crash handler
 * rewrites it), and what the header says, read once. */
static int rep_fd[SHIM_MAX_INSTANCES] = {-1, -1, -1, -1};
static bool rep_open_failed[SHIM_MAX_INSTANCES];
static char jvm_line[400];
static const char *signals_note = "";
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: file writes only */
static _Atomic int end_signal;   /* SIGTERM/SIGINT noted by the handler, else 0 */
static _Atomic int crash_signal; /* a crash the shim recorded (the JVM may have survived it) */
static _Atomic int crash_claimed; /* the crash record is written (or being written) */
static _Atomic int rewriting;     /* a report file is being truncated and rewritten */
static int unhandled_end;         /* SIGTERM/SIGINT with no JVM handler (-Xrs): no shutdown */

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
    }
}

static const char *fn_name_safe(int fn)
{
    return fn >= 0 && fn < FN_COUNT ? jvmpi_fn_names[fn] : "?";
}

/* What the crash handler found, for the text (filled before it is written). */
static struct crash_info {
    int sig, si_code;
    uintptr_t addr, pc;
    int in_slot;           /* pc in this agent's library, else -1 */
    bool in_shim;
    int slot, ev, fn;      /* this thread's activity */
    uintptr_t caller;      /* an agent return address found on the stack, or 0 */
    bool jvm_handler;      /* the JVM handles this signal (else its default action follows) */
    const char *sym, *obj; /* dladdr of the pc (or of caller), if it was safe to ask */
    uintptr_t sym_off;
} crash;

/* The one attribution of the crash, used by the summary and the crash record. */
static void w_crash_where(struct w *w)
{
    const struct crash_info *c = &crash;
    if (c->in_slot >= 0) {
        const struct instance *ci = &g_shim.inst[c->in_slot];
        w_s(w, "the code of agent ");
        w_u(w, (uint64_t)c->in_slot);
        w_s(w, "'s library (");
        w_s(w, ci->resolved_path ? ci->resolved_path : ci->opts.legacy);
        w_s(w, ")");
    } else if (c->in_shim) {
        w_s(w, "libjvmpishim.so (a fault of the shim, or of an argument the agent passed)");
    } else if (c->sig == SIGABRT) {
        w_s(w, "abort(), called by agent ");
        w_u(w, (uint64_t)c->slot);
        w_s(w, c->caller ? "'s code (an assert or its own abort)" : " or by a library it called");
    } else {
        w_s(w, "a library function that agent ");
        w_u(w, (uint64_t)c->slot);
        w_s(w, c->caller ? " called (with a bad argument?)" : " or a library it called was running");
    }
    if (c->slot >= 0 && c->ev >= 0) {
        w_s(w, ", during its handler of event ");
        w_u(w, (uint64_t)c->ev);
        w_s(w, " ");
        w_s(w, event_name(c->ev));
        if (c->fn >= 0) {
            w_s(w, ", inside the JVMPI function ");
            w_s(w, fn_name_safe(c->fn));
            w_s(w, " it called");
        }
    } else if (c->slot >= 0 && c->fn >= 0) {
        w_s(w, ", inside the JVMPI function ");
        w_s(w, fn_name_safe(c->fn));
        w_s(w, " it called");
    } else {
        w_s(w, ", on a thread delivering no JVMPI event (a thread of the agent's own?)");
    }
}

/* What follows the crash, from the handler that was there before the shim's: said as it
 * is, no more. */
static void w_crash_next(struct w *w)
{
    if (crash.jvm_handler) {
        w_s(w, "the JVM's own handler for ");
        w_s(w, sig_name(crash.sig));
        w_s(w, " runs next (HotSpot then writes its hs_err_pid<pid>.log error report, where "
               "-XX:ErrorFile and the working directory allow, and aborts)");
    } else {
        w_s(w, "the JVM has no handler for ");
        w_s(w, sig_name(crash.sig));
        w_s(w, ": the signal's default action ends the process now, with no hs_err file "
               "(a core dump, if core dumps are enabled)");
    }
}

/* ---- the summary: ranked by what it means for the agent's output ---- */

struct tally {
    int will, may;
    uint64_t harmless;
};

static void tally_of(const struct instance *inst, struct tally *t)
{
    memset(t, 0, sizeof *t);
    int s = inst->slot;
    if (atomic_load(&crash_signal) != 0 || unhandled_end != 0)
        t->will++;
    for (int e = 0; e < SHIM_NUM_EVENTS; e++) {
        if (enabled_unavailable(inst, e))
            t->will++;
        if (atomic_load(&inst->request_failed[e]) > 0 && fidelity_event(e) != NULL &&
            events_row(e) != NULL && events_row(e)->kind != EVK_ON &&
            events_row(e)->kind != EVK_REQUEST_ONLY)
            t->will++;
    }
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = atomic_load(&kinds[k].count);
        if (c == 0)
            continue;
        if (kind_info[k].rank == RANK_WILL)
            t->will++;
        else if (kind_info[k].rank == RANK_MAY)
            t->may++;
        else
            t->harmless += c;
    }
    int n = atomic_load_explicit(&nnotes[s], memory_order_acquire);
    for (int i = 0; i < n; i++) {
        if (notes[s][i].rank == RANK_HARMLESS)
            t->harmless += atomic_load(&notes[s][i].count);
        else if (notes[s][i].rank == RANK_MAY)
            t->may++;
    }
    for (int fn = 0; fn < FN_COUNT; fn++) {
        const struct fidelity_row *r = fidelity_function(jvmpi_fn_names[fn]);
        if (fn_calls(inst, fn) == 0 || r == NULL || r->status != FID_DIFFERS)
            continue;
        if (r->weight == FW_MAY)
            t->may++;
        else
            t->harmless++;
    }
    for (int e = 0; e < SHIM_NUM_EVENTS; e++) {
        const struct fidelity_row *r = fidelity_event(e);
        if (r == NULL || r->status != FID_DIFFERS ||
            (delivered(inst, e) == 0 && atomic_load(&inst->enable_calls[e]) -
                                                atomic_load(&inst->enable_refused[e]) == 0))
            continue;
        if (r->weight == FW_MAY)
            t->may++;
        else
            t->harmless++;
    }
}

static void w_plural(struct w *w, uint64_t n, const char *one, const char *many)
{
    w_u(w, n);
    w_s(w, " ");
    w_s(w, n == 1 ? one : many);
}

static void write_summary(struct w *w, const struct instance *inst)
{
    struct tally t;
    tally_of(inst, &t);
    int s = inst->slot;
    w_s(w, "\nsummary: ");
    if (t.will > 0) {
        w_s(w, "PROBLEMS: ");
        w_plural(w, (uint64_t)t.will, "thing will", "things will");
        w_s(w, " change the agent's output; ");
    } else {
        w_s(w, "no problems: nothing will change the agent's output; ");
    }
    w_plural(w, (uint64_t)t.may, "difference may", "differences may");
    w_s(w, " (agents of some kinds notice ");
    w_s(w, t.may == 1 ? "it" : "them");
    w_s(w, "); ");
    w_u(w, t.harmless);
    w_s(w, " harmless (counted, no alarm)\n");

    /* will change */
    int cs = atomic_load(&crash_signal);
    if (cs != 0) {
        w_s(w, "  will change: the run crashed with ");
        w_s(w, sig_name(cs));
        w_s(w, " in ");
        w_crash_where(w);
        w_s(w, " (crash record below)\n");
    }
    if (unhandled_end != 0) {
        w_s(w, "  will change: the run was ended by ");
        w_s(w, sig_name(unhandled_end));
        w_s(w, ", for which the JVM had no handler (-Xrs?): no shutdown hooks ran and the "
               "agent got no JVM_SHUT_DOWN, so it wrote nothing it writes at exit\n");
    }
    for (int e = 0; e < SHIM_NUM_EVENTS; e++) {
        if (!enabled_unavailable(inst, e))
            continue;
        const char *how;
        event_status(e, &how);
        uint64_t enr = atomic_load(&inst->enable_refused[e]);
        w_s(w, "  will change: the agent enabled ");
        w_s(w, events_row(e)->name);
        w_s(w, ", which this JVM cannot give (");
        w_plural(w, enr, "EnableEvent call", "EnableEvent calls");
        w_s(w, " answered JVMPI_NOT_AVAILABLE): ");
        w_s(w, how);
        w_s(w, "\n");
    }
    for (int e = 0; e < SHIM_NUM_EVENTS; e++) {
        uint64_t f = atomic_load(&inst->request_failed[e]);
        const struct event_row *row = events_row(e);
        if (f == 0 || fidelity_event(e) == NULL || row == NULL || row->kind == EVK_ON ||
            row->kind == EVK_REQUEST_ONLY)
            continue;
        w_s(w, "  will change: ");
        w_plural(w, f, "RequestEvent", "RequestEvents");
        w_s(w, " of ");
        w_s(w, row->name);
        w_s(w, " refused: this JVM cannot give it\n");
    }
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = atomic_load(&kinds[k].count);
        if (c == 0 || kind_info[k].rank != RANK_WILL)
            continue;
        w_s(w, "  will change: ");
        w_s(w, kind_info[k].name);
        w_s(w, ": ");
        w_u(w, c);
        w_s(w, " (the agent got JVMPI_FAIL or NULL for them; the first is under What happened)\n");
    }
    /* may change */
    for (int fn = 0; fn < FN_COUNT; fn++) {
        const struct fidelity_row *r = fidelity_function(jvmpi_fn_names[fn]);
        uint64_t c = fn_calls(inst, fn);
        if (c == 0 || r == NULL || r->status != FID_DIFFERS || r->weight != FW_MAY)
            continue;
        w_s(w, "  may change:  ");
        w_s(w, r->name);
        w_s(w, " (");
        w_plural(w, c, "call", "calls");
        w_s(w, "): ");
        w_s(w, r->how);
        w_s(w, "\n");
    }
    for (int e = 0; e < SHIM_NUM_EVENTS; e++) {
        const struct fidelity_row *r = fidelity_event(e);
        uint64_t dl = delivered(inst, e);
        if (r == NULL || r->status != FID_DIFFERS || r->weight != FW_MAY ||
            (dl == 0 && atomic_load(&inst->enable_calls[e]) - atomic_load(&inst->enable_refused[e]) == 0))
            continue;
        w_s(w, "  may change:  ");
        w_s(w, r->name);
        w_s(w, " (");
        w_plural(w, dl, "delivered", "delivered");
        w_s(w, "): ");
        w_s(w, r->how);
        w_s(w, "\n");
    }
    int n = atomic_load_explicit(&nnotes[s], memory_order_acquire);
    for (int i = 0; i < n; i++) {
        if (notes[s][i].rank != RANK_MAY)
            continue;
        w_s(w, "  may change:  the agent's misuse, ");
        w_plural(w, atomic_load(&notes[s][i].count), "time", "times");
        w_s(w, ": ");
        w_s(w, notes[s][i].first);
        w_s(w, "\n");
    }
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = atomic_load(&kinds[k].count);
        if (c == 0 || kind_info[k].rank != RANK_MAY)
            continue;
        w_s(w, "  may change:  ");
        w_s(w, kind_info[k].name);
        w_s(w, ": ");
        w_u(w, c);
        if (atomic_load_explicit(&kinds[k].ready, memory_order_acquire)) {
            w_s(w, "; first: ");
            w_s(w, kinds[k].first);
        }
        w_s(w, "\n");
    }
    /* harmless: counted */
    uint64_t same = 0, rows = 0, info = 0;
    for (int i = 0; i < n; i++)
        if (notes[s][i].rank == RANK_HARMLESS)
            same += atomic_load(&notes[s][i].count);
    for (int k = 0; k < REP_KIND_COUNT; k++)
        if (kind_info[k].rank == RANK_HARMLESS)
            info += atomic_load(&kinds[k].count);
    rows = t.harmless - same - info;
    if (t.harmless > 0) {
        w_s(w, "  harmless:    ");
        bool sep = false;
        if (same > 0) {
            w_plural(w, same, "call", "calls");
            w_s(w, " answered as HotSpot answered them (Warnings)");
            sep = true;
        }
        if (rows > 0) {
            w_s(w, sep ? "; " : "");
            w_plural(w, rows, "difference", "differences");
            w_s(w, " in what the agent used that agents do not notice (rows marked harmless)");
            sep = true;
        }
        if (info > 0) {
            w_s(w, sep ? "; " : "");
            w_plural(w, info, "note", "notes");
            w_s(w, " of costs and facts under What happened (events held back, waits, natives "
                   "bound: no difference in what the agent sees)");
        }
        w_s(w, "\n");
    }
}

enum text_mode { TEXT_CHECKPOINT, TEXT_FINAL, TEXT_CRASH };

/* The report of one agent. */
static void write_text(struct w *w, const struct instance *inst, const char *how_ended, enum text_mode mode)
{
    char t0[32], t1[32], b[32], b2[32];
    stamp(t0, started);
    stamp(t1, time(NULL));
    uint64_t wall = report_now() - started_mono;
    int s = inst->slot;

    w_s(w, "jvmpishim migration report\nagent:    ");
    w_s(w, inst->resolved_path ? inst->resolved_path : inst->opts.legacy);
    w_s(w, " (agent ");
    w_u(w, (uint64_t)s);
    w_s(w, "; ");
    w_plural(w, (uint64_t)g_shim.ninst, "agent", "agents");
    w_s(w, " in this JVM)\noptions:  ");
    if (inst->opts.agent_options != NULL) {
        w_s(w, "\"");
        w_s(w, inst->opts.agent_options);
        w_s(w, "\"\n");
    } else {
        w_s(w, "(none: JVM_OnLoad got NULL)\n");
    }
    w_s(w, "JVM:      ");
    w_s(w, jvm_line);
    w_s(w, "\nrun:      ");
    const char *att = g_shim.attached ? " (the shim was attached to a running JVM)" : "";
    if (mode == TEXT_CHECKPOINT) {
        w_s(w, "started ");
        w_s(w, t0);
        w_s(w, "; still running at ");
        w_s(w, t1);
        w_s(w, " (");
        w_s(w, how_ended);
        w_s(w, "). This is a checkpoint: the final report ends with an \"end of report\" "
               "line; without one, the run did not end normally (killed, e.g. by SIGKILL or a "
               "timeout)");
        w_s(w, att);
    } else {
        w_s(w, t0);
        w_s(w, " to ");
        w_s(w, t1);
        w_s(w, ", ended by ");
        w_s(w, how_ended);
        w_s(w, att);
    }
    w_s(w, "\n");
    if (signals_note[0] != '\0') {
        w_s(w, "signals:  ");
        w_s(w, signals_note);
        w_s(w, "\n");
    }

    write_summary(w, inst);

    if (mode == TEXT_CRASH) {
        const struct crash_info *c = &crash;
        w_s(w, "\n*** crash: ");
        w_s(w, sig_name(c->sig));
        w_s(w, " (signal ");
        w_u(w, (uint64_t)c->sig);
        w_s(w, ", si_code ");
        if (c->si_code < 0) /* sent, not a fault: SI_TKILL (-6) for abort() */
            w_s(w, "-");
        w_u(w, (uint64_t)(c->si_code < 0 ? -(int64_t)c->si_code : c->si_code));
        w_s(w, ", address ");
        w_x(w, c->addr);
        w_s(w, ") at pc ");
        w_x(w, c->pc);
        w_s(w, "\ncrash in: ");
        w_crash_where(w);
        w_s(w, "\ncrash symbol: ");
        if (c->sym != NULL) {
            w_s(w, c->sym);
            w_s(w, "+");
            w_x(w, c->sym_off);
            w_s(w, c->caller ? " (the agent's frame that called it, from a return address on "
                               "the stack)" : " (the nearest exported symbol)");
        } else {
            w_s(w, "(no exported symbol)");
        }
        w_s(w, " in ");
        w_s(w, c->obj != NULL ? c->obj : "(unknown object)");
        w_s(w, "\ncrash next: ");
        w_crash_next(w);
        w_s(w, "\nThe counts, warnings and problems in this report are as they stood at the "
               "crash.\n");
    }

    w_s(w, "\nstatus: exact = as on JDK 1.4 (HotSpot 1.4.2); differs = served, with the\n"
           "difference an agent may notice (weight: may = agents of some kinds notice it,\n"
           "harmless = agents do not); unavailable = not served on this JVM, and why.\n"
           "docs/mapping.md has the same one line and the full text for every row.\n");

    w_s(w, "\nJVMPI functions called\n  ");
    w_pad(w, "function", 26, false);
    w_s(w, " ");
    w_pad(w, "calls", 12, true);
    w_s(w, "  ");
    w_pad(w, "status", 11, false);
    w_s(w, " ");
    w_pad(w, "weight", 8, false);
    w_s(w, " how\n");
    for (int fn = 0; fn < FN_COUNT; fn++) {
        uint64_t c = fn_calls(inst, fn);
        if (c == 0)
            continue;
        const struct fidelity_row *r = fidelity_function(jvmpi_fn_names[fn]);
        enum fidelity st = r ? r->status : FID_DIFFERS;
        w_s(w, "  ");
        w_pad(w, jvmpi_fn_names[fn], 26, false);
        w_s(w, " ");
        w_pad_u(w, c, 12);
        w_s(w, "  ");
        w_pad(w, fidelity_name(st), 11, false);
        w_s(w, " ");
        w_pad(w, r ? fidelity_weight_name(r->weight) : "-", 8, false);
        w_s(w, " ");
        w_s(w, r ? r->how : "");
        w_s(w, "\n");
    }

    w_s(w, "\nJVMPI events asked for (EnableEvent / RequestEvent) and delivered\n  ");
    w_pad(w, "event", 30, false);
    const char *heads[] = {"enable", "refused", "request", "failed"};
    for (int i = 0; i < 4; i++) {
        w_s(w, " ");
        w_pad(w, heads[i], 8, true);
    }
    w_s(w, " ");
    w_pad(w, "delivered", 12, true);
    w_s(w, "  ");
    w_pad(w, "status", 11, false);
    w_s(w, " ");
    w_pad(w, "weight", 8, false);
    w_s(w, " how\n");
    bool any_event = false;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        uint64_t v[4] = {atomic_load(&inst->enable_calls[t]), atomic_load(&inst->enable_refused[t]),
                         atomic_load(&inst->request_calls[t]), atomic_load(&inst->request_failed[t])};
        uint64_t dl = delivered(inst, t);
        if (v[0] == 0 && v[2] == 0 && dl == 0)
            continue;
        any_event = true;
        const char *how;
        enum fidelity st = event_status(t, &how);
        const struct fidelity_row *r = fidelity_event(t);
        const struct event_row *row = events_row(t);
        char name[48];
        size_t k = 0;
        utoa(name, (uint64_t)t);
        k = strlen(name);
        name[k++] = ' ';
        const char *nm = row && row->name ? row->name : "(unused)";
        for (size_t j = 0; nm[j] != '\0' && k < sizeof name - 1; j++)
            name[k++] = nm[j];
        name[k] = '\0';
        w_s(w, "  ");
        w_pad(w, name, 30, false);
        for (int i = 0; i < 4; i++) {
            w_s(w, " ");
            w_pad_u(w, v[i], 8);
        }
        w_s(w, " ");
        w_pad_u(w, dl, 12);
        w_s(w, "  ");
        w_pad(w, fidelity_name(st), 11, false);
        w_s(w, " ");
        w_pad(w, r && st == FID_DIFFERS ? fidelity_weight_name(r->weight) : "-", 8, false);
        w_s(w, " ");
        w_s(w, how);
        w_s(w, "\n");
    }
    if (!any_event)
        w_s(w, "  (none)\n");

    w_s(w, "\nWarnings (the agent's calls this JVM answered otherwise than asked)\n");
    int nwarn = 0;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        if (!enabled_unavailable(inst, t))
            continue;
        const char *how;
        event_status(t, &how);
        uint64_t enr = atomic_load(&inst->enable_refused[t]);
        nwarn++;
        w_s(w, "  - asked for ");
        w_s(w, events_row(t)->name);
        w_s(w, " (");
        w_plural(w, enr, "EnableEvent call", "EnableEvent calls");
        w_s(w, " answered JVMPI_NOT_AVAILABLE): not available: ");
        w_s(w, how);
        w_s(w, "\n");
    }
    int n = atomic_load_explicit(&nnotes[s], memory_order_acquire);
    for (int i = 0; i < n; i++, nwarn++) {
        uint64_t c = atomic_load(&notes[s][i].count);
        w_s(w, "  - ");
        w_plural(w, c, "time", "times");
        w_s(w, ": ");
        w_s(w, notes[s][i].first);
        if (c > 1)
            w_s(w, " (the first of them)");
        if (notes[s][i].rank == RANK_HARMLESS)
            w_s(w, " [harmless: HotSpot gave the same answer]");
        w_s(w, "\n");
    }
    uint64_t dropped = atomic_load(&notes_dropped[s]);
    if (dropped > 0) {
        w_s(w, "  - and ");
        w_u(w, dropped);
        w_s(w, " more from other call sites\n");
    }
    if (nwarn == 0)
        w_s(w, "  (none)\n");

    /* What went wrong in this JVM (all agents): report_note's kinds. */
    w_s(w, "\nWhat happened (all agents in this JVM; count, then the first example)\n");
    bool any_kind = false;
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = atomic_load(&kinds[k].count);
        if (c == 0)
            continue;
        any_kind = true;
        w_s(w, "  - ");
        w_s(w, kind_info[k].name);
        w_s(w, ": ");
        w_u(w, c);
        uint64_t sum = atomic_load(&kinds[k].ns_sum);
        if (sum > 0) {
            w_s(w, ", ");
            w_s(w, dec(b, sum, 6, 3));
            w_s(w, " ms in all, longest ");
            w_s(w, dec(b2, atomic_load(&kinds[k].ns_max), 6, 3));
            w_s(w, " ms");
        }
        if (atomic_load_explicit(&kinds[k].ready, memory_order_acquire)) {
            w_s(w, "; first: ");
            w_s(w, kinds[k].first);
        }
        w_s(w, "\n");
    }
    int cs = atomic_load(&crash_signal);
    if (cs != 0 && mode != TEXT_CRASH) {
        w_s(w, "  - ");
        w_s(w, sig_name(cs));
        w_s(w, " in the agent's code was recorded; the JVM survived it\n");
    }
    if (!any_kind && (cs == 0 || mode == TEXT_CRASH))
        w_s(w, "  (nothing)\n");

    /* Where the time went: wall time in the agent's handlers per event type, and in the
     * shim serving the agent's JVMPI calls (calls made from handlers are inside both). */
    w_s(w, "\nTime (wall clock, summed over threads, sampled: the first 8 and 1 in 16 after "
           "them timed, per thread; the run so far: ");
    w_s(w, dec(b, wall, 9, 3));
    w_s(w, " s)\n  ");
    w_pad(w, "agent handler of event", 30, false);
    w_s(w, " ");
    w_pad(w, "delivered", 12, true);
    w_s(w, " ");
    w_pad(w, "ms", 12, true);
    w_s(w, " ");
    w_pad(w, "us/event", 12, true);
    w_s(w, "\n");
    uint64_t tot_ev = 0, tot_fn = 0;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        uint64_t ns = event_ns(s, t), dl = delivered(inst, t);
        if (ns == 0 && dl == 0)
            continue;
        tot_ev += ns;
        char name[48];
        utoa(name, (uint64_t)t);
        size_t k = strlen(name);
        name[k++] = ' ';
        const char *nm = event_name(t);
        for (size_t j = 0; nm[j] != '\0' && k < sizeof name - 1; j++)
            name[k++] = nm[j];
        name[k] = '\0';
        w_s(w, "  ");
        w_pad(w, name, 30, false);
        w_s(w, " ");
        w_pad_u(w, dl, 12);
        w_s(w, " ");
        w_pad(w, dec(b, ns, 6, 3), 12, true);
        w_s(w, " ");
        w_pad(w, dec(b2, dl ? ns * 100 / dl : 0, 5, 2), 12, true);
        w_s(w, "\n");
    }
    w_s(w, "  ");
    w_pad(w, "shim serving JVMPI function", 30, false);
    w_s(w, " ");
    w_pad(w, "calls", 12, true);
    w_s(w, " ");
    w_pad(w, "ms", 12, true);
    w_s(w, " ");
    w_pad(w, "us/call", 12, true);
    w_s(w, "\n");
    for (int fn = 0; fn < FN_COUNT; fn++) {
        uint64_t ns = fn_ns(s, fn), c = fn_calls(inst, fn);
        if (c == 0)
            continue;
        tot_fn += ns;
        w_s(w, "  ");
        w_pad(w, jvmpi_fn_names[fn], 30, false);
        w_s(w, " ");
        w_pad_u(w, c, 12);
        w_s(w, " ");
        w_pad(w, dec(b, ns, 6, 3), 12, true);
        w_s(w, " ");
        w_pad(w, dec(b2, ns * 100 / c, 5, 2), 12, true);
        w_s(w, "\n");
    }
    struct rusage ru;
    uint64_t cpu_us = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_sec * 1000000u +
                 (uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec;
    w_s(w, "  in the agent's handlers: ");
    w_s(w, dec(b, tot_ev, 6, 3));
    w_s(w, " ms; in the shim serving its JVMPI calls: ");
    w_s(w, dec(b2, tot_fn, 6, 3));
    w_s(w, " ms; process CPU time: ");
    w_s(w, dec(b, cpu_us, 6, 3));
    w_s(w, " s\n");
    if (mode == TEXT_FINAL) {
        w_s(w, "end of report (the run ended by ");
        w_s(w, how_ended);
        w_s(w, ")\n");
    }
}

/* Replace the file's content with this agent's report (the fd stays the same file, for the
 * crash handler). Called with write_lock held. */
static void write_one(struct instance *inst, const char *how, bool final)
{
    int s = inst->slot;
    int fd = rep_fd[s];
    if (fd < 0)
        return;
    /* Dekker with the crash handler (both seq_cst): either it sees `rewriting` and waits
     * for this rewrite to end, or this sees crash_claimed and leaves its record alone. */
    atomic_store(&rewriting, 1);
    if (atomic_load(&crash_claimed)) {
        atomic_store(&rewriting, 0);
        return;
    }
    struct w w = {.fd = fd};
    bool ok = ftruncate(fd, 0) == 0;
    if (ok) {
        write_text(&w, inst, how, final ? TEXT_FINAL : TEXT_CHECKPOINT);
        w_flush(&w);
        ok = !w.failed;
    }
    int err = errno;
    atomic_store(&rewriting, 0);
    if (!ok)
        log_error("agent %d: report=%s: writing the migration report failed: %s", s,
                  inst->opts.report_file, strerror(err));
    else if (final)
        log_info("agent %d: migration report written to %s", s, inst->opts.report_file);
}

/* Open the file (O_APPEND: each rewrite, after ftruncate, starts at the beginning). A
 * failure is an error naming the path; the program runs on. */
static void open_report(struct instance *inst)
{
    int s = inst->slot;
    if (rep_fd[s] >= 0 || rep_open_failed[s] || inst->opts.report_file == NULL)
        return;
    int fd = open(inst->opts.report_file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        rep_open_failed[s] = true; /* said once */
        log_error("agent %d: report=%s: cannot write the migration report: %s", s,
                  inst->opts.report_file, strerror(errno));
        return;
    }
    rep_fd[s] = fd;
}

void report_checkpoint(const char *when)
{
    if (!report_timing)
        return;
    pthread_mutex_lock(&write_lock);
    if (!atomic_load(&written))
        for (int i = 0; i < g_shim.ninst; i++)
            if (rep_fd[i] >= 0)
                write_one(&g_shim.inst[i], when, false);
    pthread_mutex_unlock(&write_lock);
}

void report_write_all(const char *how)
{
    pthread_mutex_lock(&write_lock);
    if (atomic_exchange(&written, 1)) {
        pthread_mutex_unlock(&write_lock);
        return;
    }
    /* How the run ended, said once: the JVM's exit, or a signal it shut down on. */
    int sig = atomic_load(&end_signal);
    if (strcmp(how, "JVM_SHUT_DOWN") == 0)
        how = sig == SIGTERM ? "SIGTERM: the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN"
              : sig == SIGINT ? "SIGINT: the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN"
                              : "the JVM's exit (main returned or System.exit): the agent got JVM_SHUT_DOWN";
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (inst->opts.report_file == NULL)
            continue;
        if (jvm_line[0] == '\0') { /* a refused start before report_begin */
            char vm[160], ver[96], vendor[96];
            sysprop(vm, sizeof vm, "java.vm.name");
            sysprop(ver, sizeof ver, "java.vm.version");
            sysprop(vendor, sizeof vendor, "java.vm.vendor");
            snprintf(jvm_line, sizeof jvm_line, "%s %s (%s), JVMTI %d.%d", vm, ver, vendor,
                     (g_shim.jvmti_version >> 16) & 0x0fff, (g_shim.jvmti_version >> 8) & 0xff);
        }
        open_report(inst);
        write_one(inst, how, true);
    }
    pthread_mutex_unlock(&write_lock);
}

static void *checkpoint_loop(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {CHECKPOINT_SECONDS, 0};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (atomic_load(&written))
            return NULL;
        report_checkpoint("checkpoint");
    }
}

/* ---- signals ---- */

struct range {
    uintptr_t lo, hi;
};
static struct range agent_text[SHIM_MAX_INSTANCES], shim_text, libc_text;
static struct sigaction prev_act[NSIG];
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int end_sigs[] = {SIGTERM, SIGINT};

static inline bool in_range(const struct range *r, uintptr_t pc)
{
    return pc >= r->lo && pc < r->hi;
}

/* The executable segments of the object loaded at `base` (dli_fbase). */
struct find_text {
    uintptr_t base;
    struct range r;
};
static int find_text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_text *ft = data;
    uintptr_t first = 0;
    bool have_first = false;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && !have_first) {
            first = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            have_first = true;
        }
    if (!have_first || ((first & ~(uintptr_t)0xfff) != ft->base && info->dlpi_addr != ft->base))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ft->r.hi == 0 || lo < ft->r.lo)
            ft->r.lo = lo;
        if (hi > ft->r.hi)
            ft->r.hi = hi;
    }
    return 1;
}

static struct range text_of(const void *addr_in_object)
{
    Dl_info di;
    struct find_text ft = {0, {0, 0}};
    if (addr_in_object == NULL || dladdr(addr_in_object, &di) == 0 || di.dli_fbase == NULL)
        return ft.r;
    ft.base = (uintptr_t)di.dli_fbase;
    dl_iterate_phdr(find_text_cb, &ft);
    return ft.r;
}

/* A return address into agent `slot`'s library among the words just above the stack
 * pointer: the agent's frame that called abort() or a libc function. Reads at most 2 KiB
 * of this thread's own stack above sp, which holds the frames of the crash (a JVM thread's
 * stack holds far more above them). */
static uintptr_t agent_caller(const ucontext_t *uc, int slot)
{
#if defined(__x86_64__)
    uintptr_t sp = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
#elif defined(__aarch64__)
    uintptr_t sp = uc != NULL ? (uintptr_t)uc->uc_mcontext.sp : 0;
#else
    uintptr_t sp = 0;
    (void)uc;
#endif
    if (sp == 0 || slot < 0 || slot >= SHIM_MAX_INSTANCES || agent_text[slot].hi == 0)
        return 0;
    const uintptr_t *p = (const uintptr_t *)(sp & ~(uintptr_t)(sizeof(uintptr_t) - 1));
    for (int i = 0; i < 256; i++)
        if (in_range(&agent_text[slot], p[i]))
            return p[i];
    return 0;
}

/* Rewrite every report as it stands at the crash, with the crash record. */
static void write_crash_reports(void)
{
    for (int i = 0; i < g_shim.ninst; i++) {
        int fd = rep_fd[i];
        if (fd < 0)
            continue;
        struct w w = {.fd = fd};
        if (ftruncate(fd, 0) != 0)
            w_s(&w, "\n\n(the report could not be truncated: the crash record follows)\n");
        char how[64] = "a crash: ";
        size_t k = strlen(how);
        const char *sn = sig_name(crash.sig);
        for (size_t j = 0; sn[j] != '\0' && k < sizeof how - 1; j++)
            how[k++] = sn[j];
        how[k] = '\0';
        write_text(&w, &g_shim.inst[i], how, TEXT_CRASH);
        w_s(&w, "end of report (the run ended by ");
        w_s(&w, how);
        w_s(&w, ")\n");
        w_flush(&w);
    }
}

/* Hand the signal on to the handler that was there before (the JVM's). */
static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &prev_act[sig];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction != NULL) {
            p->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (p->sa_handler == SIG_IGN) {
        return;
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != NULL) {
        p->sa_handler(sig);
        return;
    }
    /* No handler before: the default action. A fault re-executes and dies on return;
     * a sent signal is raised again, pending until this handler returns. */
    struct sigaction d;
    memset(&d, 0, sizeof d);
    d.sa_handler = SIG_DFL;
    sigemptyset(&d.sa_mask);
    sigaction(sig, &d, NULL);
    if (si == NULL || si->si_code <= 0 || sig == SIGABRT)
        raise(sig);
}

static bool has_handler(int sig)
{
    const struct sigaction *p = &prev_act[sig];
    return (p->sa_flags & SA_SIGINFO) ? p->sa_sigaction != NULL
                                      : (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN &&
                                         p->sa_handler != NULL);
}

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
    /* Decide from the pc alone, before touching anything: most SIGSEGVs are the JVM's. */
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
#elif defined(__aarch64__)
    uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.pc : 0;
#else
    uintptr_t pc = 0; /* unknown here: only aborts in the agent's activity are recorded */
    (void)uc;
#endif
    int in_slot = -1;
    for (int i = 0; i < SHIM_MAX_INSTANCES; i++)
        if (agent_text[i].hi != 0 && in_range(&agent_text[i], pc))
            in_slot = i;
    bool in_shim = in_range(&shim_text, pc);
    bool ours = in_slot >= 0 || in_shim;
    /* This thread's activity is read only for signals that are crashes whoever caused them
     * (an abort, a near-NULL access in libc): a thread's first touch of a thread-local may
     * allocate, which the JVM's own signals (safepoint polls, implicit null checks in
     * compiled code, SafeFetch in libjvm) must never pay for. */
    int slot = -1, ev = -1, fn = -1;
    bool in_libc = in_range(&libc_text, pc);
    bool crash_anyway = sig == SIGABRT ||
                        ((sig == SIGSEGV || sig == SIGBUS) && in_libc && si != NULL &&
                         (uintptr_t)si->si_addr < 65536);
    if ((ours || crash_anyway) && tl_readable()) {
        slot = report_tl.slot;
        ev = report_tl.event;
        fn = report_tl.fn;
    }
    if (!ours && crash_anyway)
        ours = slot >= 0; /* abort(), strlen(NULL) and the like, from the agent */
    if (ours && !atomic_exchange(&crash_claimed, 1)) {
        atomic_store(&crash_signal, sig);
        /* A checkpoint rewriting the file would interleave with this text: wait for one in
         * progress (bounded: the crash may be on the writing thread itself); none starts
         * after crash_claimed. */
        for (int i = 0; i < 200 && atomic_load(&rewriting); i++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        crash.sig = sig;
        crash.si_code = si != NULL ? si->si_code : 0;
        crash.addr = si != NULL ? (uintptr_t)si->si_addr : 0;
        crash.pc = pc;
        crash.in_slot = in_slot;
        crash.in_shim = in_shim;
        crash.slot = slot;
        crash.ev = ev;
        crash.fn = fn;
        crash.jvm_handler = has_handler(sig);
        crash.caller = in_slot < 0 && !in_shim ? agent_caller(uc, slot) : 0;
        /* dladdr takes the dynamic loader's lock: not for a pc in libc or the loader,
         * where this thread may hold it; an agent's or the shim's code does not. */
        Dl_info di;
        uintptr_t at = crash.caller ? crash.caller - 1 : pc;
        if ((ours && (in_slot >= 0 || in_shim || crash.caller)) && dladdr((void *)at, &di) != 0) {
            crash.obj = di.dli_fname;
            if (di.dli_sname != NULL) {
                crash.sym = di.dli_sname;
                crash.sym_off = at + (crash.caller ? 1 : 0) - (uintptr_t)di.dli_saddr;
            }
        }
        write_crash_reports();
    }
    chain(sig, si, ucv);
}

static void on_end_signal(int sig, siginfo_t *si, void *uc)
{
    int zero = 0;
    atomic_compare_exchange_strong(&end_signal, &zero, sig);
    const struct sigaction *p = &prev_act[sig];
    if (!has_handler(sig) && p->sa_handler == SIG_DFL && !atomic_exchange(&written, 1) &&
        !atomic_exchange(&crash_claimed, 1)) {
        /* No JVM handler (-Xrs): the process dies now, without a shutdown. The report is
         * rewritten as it stands, as for a crash (no checkpoint starts after the claim). */
        for (int i = 0; i < 200 && atomic_load(&rewriting); i++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        unhandled_end = sig;
        const char *how = sig == SIGTERM ? "SIGTERM without a JVM shutdown" : "SIGINT without a JVM shutdown";
        for (int i = 0; i < g_shim.ninst; i++)
            if (rep_fd[i] >= 0) {
                struct w w = {.fd = rep_fd[i]};
                if (ftruncate(rep_fd[i], 0) != 0)
                    w_s(&w, "\n\n(the report could not be truncated: the final text follows)\n");
                write_text(&w, &g_shim.inst[i], how, TEXT_FINAL);
                w_flush(&w);
            }
    }
    chain(sig, si, uc);
}

static void install(int sig, void (*h)(int, siginfo_t *, void *))
{
    struct sigaction sa, old;
    if (sigaction(sig, NULL, &old) != 0)
        return;
    /* An ignored SIGINT (a background job) ends nothing: nothing to note. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_mask = old.sa_mask;
    sa.sa_flags = (old.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    prev_act[sig] = old;
    sigaction(sig, &sa, NULL);
}

void report_begin(void)
{
    bool any = false;
    for (int i = 0; i < g_shim.ninst; i++)
        any |= g_shim.inst[i].opts.report_file != NULL;
    if (!any)
        return;
    started_mono = report_now();
    char vm[160], ver[96], vendor[96];
    sysprop(vm, sizeof vm, "java.vm.name");
    sysprop(ver, sizeof ver, "java.vm.version");
    sysprop(vendor, sizeof vendor, "java.vm.vendor");
    snprintf(jvm_line, sizeof jvm_line, "%s %s (%s), JVMTI %d.%d", vm, ver, vendor,
             (g_shim.jvmti_version >> 16) & 0x0fff, (g_shim.jvmti_version >> 8) & 0xff);
    log_set_warn_hook(on_shim_warning);
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        open_report(inst);
        if (inst->dl != NULL && inst->jvm_onload != NULL)
            agent_text[i] = text_of((const void *)(uintptr_t)inst->jvm_onload);
    }
    shim_text = text_of((const void *)(uintptr_t)report_begin);
    libc_text = text_of((const void *)(uintptr_t)write);

    /* Handlers go in front of the JVM's, which are in place by VMInit. With libjsig the
     * JVM keeps its own and would treat a handler of ours as the application's, to be
     * called for signals it does not want and expected to handle them: none then. */
    if (dlsym(RTLD_DEFAULT, "JVM_begin_signal_setting") != NULL) {
        signals_note = "libjsig is preloaded: no crash record and no SIGTERM/SIGINT note "
                       "(the JVM's signal chaining would treat the shim's handlers as the "
                       "application's)";
    } else {
        for (size_t k = 0; k < sizeof crash_sigs / sizeof crash_sigs[0]; k++)
            install(crash_sigs[k], on_crash);
        for (size_t k = 0; k < sizeof end_sigs / sizeof end_sigs[0]; k++)
            install(end_sigs[k], on_end_signal);
        signals_note = "";
    }
    report_timing = true;
    report_checkpoint("the agents are starting");
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, checkpoint_loop, NULL) != 0)
        log_warn("report: no checkpoint thread: the report is written at the start and the end only");
    pthread_attr_destroy(&at);
}

__attribute__((constructor)) static void report_start_clock(void)
{
    started = time(NULL);
    started_mono = report_now();
    struct tm tm;
    if (localtime_r(&started, &tm) != NULL)
        utc_offset = tm.tm_gmtoff;
}

/* ---- virtual threads (JVMTI 21+), vthreads=carriers (threads/vthreads.c counts the rest) ----
 * A virtual thread has no JNIEnv of its own: the JVMPI events it causes carry the JNIEnv,
 * the env_id, of the carrier thread it is mounted on, so an agent sees its work as the
 * carrier's. The report counts the virtual threads that started. The shim is compiled
 * against JDK 17's jvmti.h, which names neither the capability (can_support_virtual_threads,
 * the bit after can_generate_sampled_object_alloc_events) nor the event
 * (JVMTI_EVENT_VIRTUAL_THREAD_START = 87, whose callback slot follows SampledObjectAlloc):
 * both are found from their neighbours; a JVM without them offers neither. */
#define VTHREAD_START_EVENT 87

static bool vthreads_cap;

bool report_vthreads_onload(void)
{
    vthreads_cap = shim_take_vthreads_capability();
    return vthreads_cap;
}

static void JNICALL on_vthread_start(jvmtiEnv *j, JNIEnv *jni, jthread vt)
{
    if (report_count(REP_VIRTUAL_THREAD) > 0) {
        report_note(REP_VIRTUAL_THREAD, "(not formatted)");
        return;
    }
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    bool named = (*j)->GetThreadInfo(j, vt, &ti) == JVMTI_ERROR_NONE;
    report_note(REP_VIRTUAL_THREAD, "virtual thread \"%s\", its events posted with the env_id "
                                    "of its carrier thread (vthreads=carriers; JNIEnv %p)",
                named && ti.name ? ti.name : "?", (void *)jni);
    if (named) {
        (*j)->Deallocate(j, (unsigned char *)ti.name);
        if (ti.thread_group != NULL)
            (*jni)->DeleteLocalRef(jni, ti.thread_group);
        if (ti.context_class_loader != NULL)
            (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
    }
}

void report_vthreads_callbacks(void **slot_87)
{
    if (vthreads_cap)
        *slot_87 = (void *)(uintptr_t)on_vthread_start;
}

void report_vthreads_enable(void)
{
    if (vthreads_cap)
        jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                             (jvmtiEvent)VTHREAD_START_EVENT, NULL),
                    LOG_WARN, "enabling VirtualThreadStart for the migration report");
}

/* ---- Java natives bound to the agent's code ----
 * Old agents often had Java helper classes whose natives they implemented and bound with
 * JNI RegisterNatives. JVMTI NativeMethodBind (only with report=) shows each bind; those
 * whose address is in an agent library are counted. */
static bool natives_cap;

bool report_natives_onload(void)
{
    jvmtiCapabilities want;
    memset(&want, 0, sizeof want);
    want.can_generate_native_method_bind_events = 1;
    natives_cap = (*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want) == JVMTI_ERROR_NONE;
    return natives_cap;
}

static void JNICALL on_native_bind(jvmtiEnv *j, JNIEnv *jni, jthread t, jmethodID m, void *addr,
                                   void **new_addr)
{
    (void)t;
    (void)new_addr;
    int slot = -1;
    for (int i = 0; i < SHIM_MAX_INSTANCES; i++)
        if (agent_text[i].hi != 0 && in_range(&agent_text[i], (uintptr_t)addr))
            slot = i;
    if (slot < 0)
        return;
    if (report_count(REP_NATIVE_BOUND) > 0) {
        report_note(REP_NATIVE_BOUND, "(not formatted)");
        return;
    }
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass c = NULL;
    /* Only the report's example line needs the names: a failure leaves a '?' there. */
    if (!jvmti_ok_at((*j)->GetMethodName(j, m, &name, &sig, NULL), LOG_DEBUG,
                     "report: GetMethodName of a native bound to the agent library"))
        name = sig = NULL;
    if (jvmti_ok_at((*j)->GetMethodDeclaringClass(j, m, &c), LOG_DEBUG,
                    "report: GetMethodDeclaringClass of a native bound to the agent library") &&
        c != NULL &&
        !jvmti_ok_at((*j)->GetClassSignature(j, c, &csig, NULL), LOG_DEBUG,
                     "report: GetClassSignature of a native bound to the agent library"))
        csig = NULL;
    Dl_info di;
    const char *sym = dladdr(addr, &di) != 0 && di.dli_sname != NULL ? di.dli_sname : "(no exported symbol)";
    report_note(REP_NATIVE_BOUND, "%s.%s%s bound to %s in the library of agent %d",
                csig ? csig : "?", name ? name : "?", sig ? sig : "", sym, slot);
    (*j)->Deallocate(j, (unsigned char *)name);
    (*j)->Deallocate(j, (unsigned char *)sig);
    (*j)->Deallocate(j, (unsigned char *)csig);
    if (c != NULL && jni != NULL)
        (*jni)->DeleteLocalRef(jni, c);
}

void report_natives_callbacks(jvmtiEventCallbacks *cb)
{
    if (natives_cap)
        cb->NativeMethodBind = on_native_bind;
}

void report_natives_enable(void)
{
    if (natives_cap)
        jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                             JVMTI_EVENT_NATIVE_METHOD_BIND, NULL),
                    LOG_WARN, "enabling NativeMethodBind for the migration report");
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
