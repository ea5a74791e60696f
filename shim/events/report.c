/* report.c — the migration report: what a legacy agent used, how faithfully it was served,
 * what went wrong, where the time went, and how the run ended.
 *
 * "Can I run my old profiler here, and what will differ?" For each agent started with
 * report=PATH the shim writes the JVMPI functions it called (with counts and the time the
 * shim spent serving them), the events it enabled or requested (with the answer, how many
 * were delivered and the time its handlers took), and for each whether this JVM serves it
 * exactly, differently (how) or not at all (why), from the fidelity table (fidelity.c, held
 * to docs/mapping.md by a unit test) and the event switchboard's run-time view. Then what
 * went wrong: events asked for but unavailable, the agent's misuse (one line per call site
 * with its count and first message), and the counters other modules bump through
 * report_note() (ids rejected by kind, waits for definitions, held-back and duplicate
 * events, natives bound into the agent, virtual threads, the shim's warnings).
 *
 * The report is written as the run goes: a header when the agents start (report_begin, at
 * VMInit or attach), a checkpoint after JVM_INIT_DONE and every few seconds, the final text
 * at the end, whose last line is "end of report". A run killed by SIGKILL or a timeout
 * leaves the last checkpoint, which says that the run had not ended when it was written.
 *
 * Signals. report_begin chains handlers in front of the JVM's (installed before VMInit):
 *  - SIGTERM, SIGINT: the handler only notes the signal and calls the JVM's handler, which
 *    starts the JVM's shutdown; VMDeath then writes the report, which names the signal.
 *    Where the JVM installed none (-Xrs), the report is finished there, with write(2), and
 *    the signal's default action follows.
 *  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: HotSpot uses SIGSEGV itself (safepoint polls,
 *    implicit null checks, stack banging), so the handler first decides from the pc alone,
 *    against address ranges computed beforehand, whether the signal is the agent's: pc in
 *    the agent library, or in the shim, or in libc at a near-NULL address while the thread
 *    is delivering an event or serving a JVMPI function (SIGABRT: any pc while it is). Any
 *    other signal goes straight to the JVM's handler, with no side effect (not even a
 *    thread-local read, whose first touch on a thread may allocate). For the agent's,
 *    the crash record (signal, address, library, symbol by dladdr, the event or function of
 *    this thread) and the counts so far are appended with write(2) to the report file
 *    opened beforehand, then the JVM's handler runs: hs_err and the exit status stay the
 *    JVM's.
 * With libjsig preloaded the JVM keeps its handlers and calls others only for signals it
 * does not want itself, and expects them to handle those: the shim then installs no handler
 * and the report says so. -Xcheck:jni makes HotSpot warn once that these handlers changed.
 *
 * The counters live in struct instance and are bumped on the call paths (interface.c,
 * events.c); deliveries are counted per thread stripe, so the hot path shares no cache line.
 * Time is summed per thread (struct report_times, claimed on a thread's first timed call
 * and handed to another thread when it ends), and only while some agent asked for a report.
 * The misuse notes are a small fixed table per agent under notes_lock (a leaf; misuse is
 * never on a hot path); report_note's kinds are atomic counters with a first example kept
 * once.
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

struct misuse_note {
    const char *site;       /* the format string: one call site */
    uint64_t count;
    char first[240];        /* the first message from that site */
};

static struct misuse_note notes[SHIM_MAX_INSTANCES][MAX_NOTES];
static int nnotes[SHIM_MAX_INSTANCES];
static uint64_t notes_dropped[SHIM_MAX_INSTANCES];
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
    bool problem; /* counts as a problem in the summary line */
} kind_info[REP_KIND_COUNT] = {
    [REP_ID_GARBAGE] = {"ids rejected: garbage (never issued)", true},
    [REP_ID_STALE] = {"ids rejected: stale (object, thread or class gone)", true},
    [REP_ID_WRONG_KIND] = {"ids rejected: wrong kind", true},
    [REP_DEFINITION_WAIT] = {"waits for a definition", false},
    [REP_EVENT_HELD] = {"events held back", false},
    [REP_EVENT_DEDUP] = {"events de-duplicated", false},
    [REP_HELD_DIED] = {"objects of attaching threads that died before their THREAD_START "
                       "(neither OBJECT_ALLOC nor OBJECT_FREE posted)", false},
    [REP_NATIVE_BOUND] = {"Java natives bound to the agent library", false},
    [REP_VIRTUAL_THREAD] = {"virtual threads seen", false},
    [REP_SHIM_WARNING] = {"warnings logged by the shim", true},
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

void report_misuse(struct instance *inst, int level, const char *fmt, ...)
{
    char msg[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_level_now >= level)
        log_misuse(level, "agent %d: %s", inst->slot, msg);
    if (inst->opts.report_file == NULL)
        return;
    pthread_mutex_lock(&notes_lock);
    int s = inst->slot, i;
    for (i = 0; i < nnotes[s]; i++)
        if (notes[s][i].site == fmt)
            break;
    if (i < nnotes[s]) {
        notes[s][i].count++;
    } else if (nnotes[s] < MAX_NOTES) {
        notes[s][i].site = fmt;
        notes[s][i].count = 1;
        snprintf(notes[s][i].first, sizeof notes[s][i].first, "%s", msg);
        nnotes[s]++;
    } else {
        notes_dropped[s]++;
    }
    pthread_mutex_unlock(&notes_lock);
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

/* ---- the report text ---- */

static uint64_t delivered(struct instance *inst, int t)
{
    uint64_t n = events_delivered(inst->slot, t);
    for (int i = 0; i < STRIPES; i++)
        n += atomic_load_explicit(&inst->delivered[i].n[t], memory_order_relaxed);
    return n;
}

static uint64_t fn_calls(struct instance *inst, int fn)
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

static void stamp(char *out, size_t n, time_t t)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Per agent with report=PATH: the file, open from report_begin to the end (the crash path
 * appends to it with write(2)), and what the header says, read once. */
static int rep_fd[SHIM_MAX_INSTANCES] = {-1, -1, -1, -1};
static bool rep_open_failed[SHIM_MAX_INSTANCES];
static char jvm_line[400];
static const char *signals_note = "";
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: file writes only */
static _Atomic int end_signal;   /* SIGTERM/SIGINT noted by the handler, else 0 */
static _Atomic int crash_signal; /* a crash the shim recorded (the JVM may have survived it) */
static _Atomic int crash_claimed; /* the crash record is written (or being written) */
static _Atomic int rewriting;     /* write_one is truncating and rewriting a report file */

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

static void fmt_ms(char *out, size_t n, uint64_t ns)
{
    snprintf(out, n, "%.3f", (double)ns / 1e6);
}

/* The report of one agent as text; `final` false: a checkpoint of a run still going. */
static void write_text(FILE *f, struct instance *inst, const char *how_ended, bool final)
{
    char t0[32], t1[32];
    stamp(t0, sizeof t0, started);
    stamp(t1, sizeof t1, time(NULL));
    uint64_t wall = report_now() - started_mono;

    int nexact = 0, ndiff = 0, nunav = 0, nwarn = 0;
    fprintf(f, "jvmpishim migration report\n");
    fprintf(f, "agent:    %s (agent %d; %d agent%s in this JVM)\n",
            inst->resolved_path ? inst->resolved_path : inst->opts.legacy, inst->slot,
            g_shim.ninst, g_shim.ninst == 1 ? "" : "s");
    if (inst->opts.agent_options != NULL)
        fprintf(f, "options:  \"%s\"\n", inst->opts.agent_options);
    else
        fprintf(f, "options:  (none: JVM_OnLoad got NULL)\n");
    fprintf(f, "JVM:      %s\n", jvm_line);
    if (final)
        fprintf(f, "run:      %s to %s, ended by %s%s\n", t0, t1, how_ended,
                g_shim.attached ? " (the shim was attached to a running JVM)" : "");
    else
        fprintf(f, "run:      started %s; still running at %s (%s). This is a checkpoint: the "
                   "final report ends with an \"end of report\" line; without one, the run did "
                   "not end normally (killed, e.g. by SIGKILL or a timeout, or it crashed)%s\n",
                t0, t1, how_ended,
                g_shim.attached ? " (the shim was attached to a running JVM)" : "");
    if (signals_note[0] != '\0')
        fprintf(f, "signals:  %s\n", signals_note);
    fprintf(f, "\nstatus: exact = as on JDK 1.4 (HotSpot 1.4.2); differs = served, with the\n"
               "difference an agent may notice; unavailable = not served on this JVM, and why.\n"
               "docs/mapping.md has the full text for every row.\n");

    fprintf(f, "\nJVMPI functions called\n");
    fprintf(f, "  %-26s %12s  %-11s %s\n", "function", "calls", "status", "how");
    for (int fn = 0; fn < FN_COUNT; fn++) {
        uint64_t c = fn_calls(inst, fn);
        if (c == 0)
            continue;
        const struct fidelity_row *r = fidelity_function(jvmpi_fn_names[fn]);
        enum fidelity st = r ? r->status : FID_DIFFERS;
        nexact += st == FID_EXACT;
        ndiff += st == FID_DIFFERS;
        nunav += st == FID_UNAVAILABLE;
        fprintf(f, "  %-26s %12llu  %-11s %s\n", jvmpi_fn_names[fn], (unsigned long long)c,
                fidelity_name(st), r ? r->how : "");
    }

    fprintf(f, "\nJVMPI events asked for (EnableEvent / RequestEvent) and delivered\n");
    fprintf(f, "  %-30s %8s %8s %8s %8s %12s  %-11s %s\n", "event", "enable", "refused",
            "request", "failed", "delivered", "status", "how");
    bool any_event = false;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        uint64_t en = atomic_load(&inst->enable_calls[t]), enr = atomic_load(&inst->enable_refused[t]);
        uint64_t rq = atomic_load(&inst->request_calls[t]), rqf = atomic_load(&inst->request_failed[t]);
        uint64_t dl = delivered(inst, t);
        if (en == 0 && rq == 0 && dl == 0)
            continue;
        any_event = true;
        const char *how;
        enum fidelity st = event_status(t, &how);
        /* The events the switchboard posts unasked (JVM_INIT_DONE, ...) count as used only
         * if delivered. */
        nexact += st == FID_EXACT;
        ndiff += st == FID_DIFFERS;
        nunav += st == FID_UNAVAILABLE;
        const struct event_row *row = events_row(t);
        char name[40];
        snprintf(name, sizeof name, "%d %s", t, row && row->name ? row->name : "(unused)");
        fprintf(f, "  %-30s %8llu %8llu %8llu %8llu %12llu  %-11s %s\n", name,
                (unsigned long long)en, (unsigned long long)enr, (unsigned long long)rq,
                (unsigned long long)rqf, (unsigned long long)dl, fidelity_name(st), how);
    }
    if (!any_event)
        fprintf(f, "  (none)\n");

    fprintf(f, "\nWarnings\n");
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        uint64_t enr = atomic_load(&inst->enable_refused[t]);
        if (enr == 0)
            continue;
        const char *how;
        enum fidelity st = event_status(t, &how);
        const struct event_row *row = events_row(t);
        /* Unknown numbers and request-only events are the agent's mistakes: the misuse
         * notes below list those. */
        if (row == NULL || row->name == NULL || row->kind == EVK_REQUEST_ONLY ||
            st != FID_UNAVAILABLE)
            continue;
        nwarn++;
        fprintf(f, "  - asked for %s (%llu EnableEvent call%s answered JVMPI_NOT_AVAILABLE): "
                   "not available: %s\n", row->name, (unsigned long long)enr,
                enr == 1 ? "" : "s", how);
    }
    pthread_mutex_lock(&notes_lock);
    int s = inst->slot;
    for (int i = 0; i < nnotes[s]; i++, nwarn++)
        fprintf(f, "  - %llu time%s: %s%s\n", (unsigned long long)notes[s][i].count,
                notes[s][i].count == 1 ? "" : "s", notes[s][i].first,
                notes[s][i].count > 1 ? " (the first of them)" : "");
    if (notes_dropped[s] > 0)
        fprintf(f, "  - and %llu more from other call sites\n",
                (unsigned long long)notes_dropped[s]);
    pthread_mutex_unlock(&notes_lock);
    if (nwarn == 0)
        fprintf(f, "  (none)\n");

    /* What went wrong in this JVM (all agents): report_note's kinds. */
    fprintf(f, "\nWhat happened (all agents in this JVM; count, then the first example)\n");
    int nproblem_kinds = 0;
    char problems[400] = "";
    bool any_kind = false;
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = atomic_load(&kinds[k].count);
        if (c == 0)
            continue;
        any_kind = true;
        fprintf(f, "  - %s: %llu", kind_info[k].name, (unsigned long long)c);
        uint64_t sum = atomic_load(&kinds[k].ns_sum);
        if (sum > 0) {
            char a[32], b[32];
            fmt_ms(a, sizeof a, sum);
            fmt_ms(b, sizeof b, atomic_load(&kinds[k].ns_max));
            fprintf(f, ", %s ms in all, longest %s ms", a, b);
        }
        if (atomic_load_explicit(&kinds[k].ready, memory_order_acquire))
            fprintf(f, "; first: %s", kinds[k].first);
        fprintf(f, "\n");
        if (kind_info[k].problem) {
            nproblem_kinds++;
            size_t l = strlen(problems);
            snprintf(problems + l, sizeof problems - l, "%s%s", l ? ", " : "", kind_info[k].name);
        }
    }
    int cs = atomic_load(&crash_signal);
    if (cs != 0)
        fprintf(f, "  - %s in the agent's code was recorded (the crash record follows the text "
                   "it interrupted, if the run ended there)\n", sig_name(cs));
    if (!any_kind && cs == 0)
        fprintf(f, "  (nothing)\n");

    /* Where the time went: wall time in the agent's handlers per event type, and in the
     * shim serving the agent's JVMPI calls (calls made from handlers are inside both). */
    fprintf(f, "\nTime (wall clock, summed over threads, sampled: the first 8 and 1 in 16 "
               "after them timed, per thread; the run so far: %.3f s)\n", (double)wall / 1e9);
    fprintf(f, "  %-30s %12s %12s %12s\n", "agent handler of event", "delivered", "ms", "us/event");
    uint64_t tot_ev = 0, tot_fn = 0;
    for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
        uint64_t ns = event_ns(s, t), dl = delivered(inst, t);
        if (ns == 0 && dl == 0)
            continue;
        tot_ev += ns;
        char name[40], ms[32];
        snprintf(name, sizeof name, "%d %s", t, event_name(t));
        fmt_ms(ms, sizeof ms, ns);
        fprintf(f, "  %-30s %12llu %12s %12.2f\n", name, (unsigned long long)dl, ms,
                dl ? (double)ns / 1e3 / (double)dl : 0.0);
    }
    fprintf(f, "  %-30s %12s %12s %12s\n", "shim serving JVMPI function", "calls", "ms", "us/call");
    for (int fn = 0; fn < FN_COUNT; fn++) {
        uint64_t ns = fn_ns(s, fn), c = fn_calls(inst, fn);
        if (c == 0)
            continue;
        tot_fn += ns;
        char ms[32];
        fmt_ms(ms, sizeof ms, ns);
        fprintf(f, "  %-30s %12llu %12s %12.2f\n", jvmpi_fn_names[fn], (unsigned long long)c, ms,
                (double)ns / 1e3 / (double)c);
    }
    struct rusage ru;
    double cpu = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
              ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
    char a[32], b[32];
    fmt_ms(a, sizeof a, tot_ev);
    fmt_ms(b, sizeof b, tot_fn);
    fprintf(f, "  in the agent's handlers: %s ms; in the shim serving its JVMPI calls: %s ms; "
               "process CPU time: %.3f s\n", a, b, cpu);

    bool problem = nwarn > 0 || nproblem_kinds > 0 || cs != 0 || nunav > 0;
    fprintf(f, "\nsummary: %d exact, %d differ, %d unavailable of what the agent used; %d warning%s; %s",
            nexact, ndiff, nunav, nwarn, nwarn == 1 ? "" : "s",
            problem ? "PROBLEMS" : "no problems");
    if (problem) {
        const char *sep = ": ";
        if (cs != 0) {
            fprintf(f, "%s%s in the agent's code", sep, sig_name(cs));
            sep = ", ";
        }
        if (nunav > 0) {
            fprintf(f, "%s%d unavailable", sep, nunav);
            sep = ", ";
        }
        if (nwarn > 0) {
            fprintf(f, "%smisuse or unavailable events (Warnings)", sep);
            sep = ", ";
        }
        if (problems[0] != '\0')
            fprintf(f, "%s%s", sep, problems);
    }
    fprintf(f, "\n");
    if (final)
        fprintf(f, "end of report (the run ended by %s)\n", how_ended);
}

/* Replace the file's content with this agent's report (the fd stays the same file, for the
 * crash path). Called with write_lock held. */
static void write_one(struct instance *inst, const char *how, bool final)
{
    int s = inst->slot;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return;
    write_text(m, inst, how, final);
    fclose(m);
    int fd = rep_fd[s];
    bool ok = false;
    /* Dekker with the crash handler (both seq_cst): either it sees `rewriting` and waits
     * for this rewrite to end, or this sees crash_claimed and leaves its record alone. */
    atomic_store(&rewriting, 1);
    if (atomic_load(&crash_claimed) && !final) {
        atomic_store(&rewriting, 0);
        free(buf);
        return;
    }
    if (fd >= 0 && ftruncate(fd, 0) == 0) {
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(fd, buf + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        ok = off == len;
    }
    atomic_store(&rewriting, 0);
    free(buf);
    if (!ok && fd >= 0)
        log_error("agent %d: report=%s: writing the migration report failed: %s", s,
                  inst->opts.report_file, strerror(errno));
    else if (ok && final)
        log_info("agent %d: migration report written to %s", s, inst->opts.report_file);
}

/* Open the file (O_APPEND: the crash path's writes land at the end whatever was written
 * before). A failure is an error naming the path; the program runs on. */
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
    char buf[200];
    int sig = atomic_load(&end_signal);
    if (sig != 0) {
        snprintf(buf, sizeof buf, "%s (the JVM ran its shutdown on it: %s)", sig_name(sig), how);
        how = buf;
    }
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

/* Async-signal-safe output: a string, a number. */
static void sw(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}
static void sw_num(int fd, uint64_t v, int base)
{
    char b[24];
    int i = sizeof b;
    b[--i] = '\0';
    do {
        b[--i] = "0123456789abcdef"[v % (unsigned)base];
        v /= (unsigned)base;
    } while (v != 0 && i > 0);
    if (base == 16)
        sw(fd, "0x");
    sw(fd, &b[i]);
}

static const char *fn_name_safe(int fn)
{
    return fn >= 0 && fn < FN_COUNT ? jvmpi_fn_names[fn] : "?";
}

/* What the report knows, to every report file, with write(2) only. */
static void write_crash(int sig, const siginfo_t *si, uintptr_t pc, int in_slot, bool in_shim,
                        int slot, int ev, int fn)
{
    for (int i = 0; i < g_shim.ninst; i++) {
        int fd = rep_fd[i];
        if (fd < 0)
            continue;
        sw(fd, "\n*** crash: ");
        sw(fd, sig_name(sig));
        sw(fd, " (signal ");
        sw_num(fd, (uint64_t)sig, 10);
        sw(fd, ", si_code ");
        if (si->si_code < 0) /* sent, not a fault: SI_TKILL (-6) for abort() */
            sw(fd, "-");
        sw_num(fd, (uint64_t)(si->si_code < 0 ? -(int64_t)si->si_code : si->si_code), 10);
        sw(fd, ", address ");
        sw_num(fd, (uint64_t)(uintptr_t)si->si_addr, 16);
        sw(fd, ") at pc ");
        sw_num(fd, pc, 16);
        sw(fd, "\ncrash in: ");
        if (in_slot >= 0) {
            sw(fd, "the legacy agent library of agent ");
            sw_num(fd, (uint64_t)in_slot, 10);
            sw(fd, ": ");
            const struct instance *ci = &g_shim.inst[in_slot];
            sw(fd, ci->resolved_path ? ci->resolved_path : ci->opts.legacy);
        } else if (in_shim) {
            sw(fd, "libjvmpishim.so itself (a fault of the shim, or of an argument the agent passed)");
        } else {
            sw(fd, "code outside the agent library (libc or another library) called while the agent was running");
        }
        sw(fd, "\ncrash during: ");
        if (slot >= 0 && ev >= 0) {
            sw(fd, "delivery of JVMPI event ");
            sw_num(fd, (uint64_t)ev, 10);
            sw(fd, " ");
            sw(fd, event_name(ev));
            sw(fd, " to agent ");
            sw_num(fd, (uint64_t)slot, 10);
            if (fn >= 0) {
                sw(fd, ", inside the JVMPI function ");
                sw(fd, fn_name_safe(fn));
                sw(fd, " it called");
            }
        } else if (slot >= 0 && fn >= 0) {
            sw(fd, "the JVMPI function ");
            sw(fd, fn_name_safe(fn));
            sw(fd, " called by agent ");
            sw_num(fd, (uint64_t)slot, 10);
        } else {
            sw(fd, "no JVMPI event or function on this thread (a thread of the agent's own?)");
        }
        sw(fd, "\n");
        /* The counts so far: atomics read without locks. */
        const struct instance *inst = &g_shim.inst[i];
        sw(fd, "counts at the crash (agent ");
        sw_num(fd, (uint64_t)i, 10);
        sw(fd, "):");
        for (int f = 0; f < FN_COUNT; f++) {
            uint64_t c = 0;
            for (int k = 0; k < STRIPES; k++)
                c += atomic_load_explicit(&inst->calls[k].n[f], memory_order_relaxed);
            if (c == 0)
                continue;
            sw(fd, " ");
            sw(fd, jvmpi_fn_names[f]);
            sw(fd, "=");
            sw_num(fd, c, 10);
        }
        for (int t = 0; t < SHIM_NUM_EVENTS; t++) {
            uint64_t c = delivered((struct instance *)inst, t);
            if (c == 0)
                continue;
            sw(fd, " ");
            sw(fd, event_name(t));
            sw(fd, "=");
            sw_num(fd, c, 10);
        }
        sw(fd, "\n");
    }
    /* dladdr last: it takes the dynamic loader's lock; if this thread crashed holding it,
     * what matters is written already. */
    Dl_info di;
    const char *sym = NULL, *obj = NULL;
    uintptr_t off = 0;
    if (dladdr((void *)pc, &di) != 0) {
        obj = di.dli_fname;
        if (di.dli_sname != NULL) {
            sym = di.dli_sname;
            off = pc - (uintptr_t)di.dli_saddr;
        }
    }
    for (int i = 0; i < g_shim.ninst; i++) {
        int fd = rep_fd[i];
        if (fd < 0)
            continue;
        sw(fd, "crash symbol: ");
        if (sym != NULL) {
            sw(fd, sym);
            sw(fd, "+");
            sw_num(fd, off, 16);
            sw(fd, " (the nearest exported symbol)");
        } else {
            sw(fd, "(no exported symbol)");
        }
        sw(fd, " in ");
        sw(fd, obj != NULL ? obj : "(unknown object)");
        sw(fd, "\nsummary: PROBLEMS: the run crashed with ");
        sw(fd, sig_name(sig));
        sw(fd, " in the agent's code; the JVM's own handler ran next (hs_err_pid<pid>.log, its exit status)\n"
               "end of report (the run ended by a crash: ");
        sw(fd, sig_name(sig));
        sw(fd, ")\n");
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
    bool crash_anyway = sig == SIGABRT ||
                        ((sig == SIGSEGV || sig == SIGBUS) && in_range(&libc_text, pc) && si != NULL &&
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
        /* A checkpoint rewriting the file (ftruncate, then the text) would erase a record
         * appended meanwhile: wait for one in progress (bounded: the crash may be on the
         * writing thread itself); none starts after crash_claimed. */
        for (int i = 0; i < 200 && atomic_load(&rewriting); i++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        write_crash(sig, si, pc, in_slot, in_shim, slot, ev, fn);
    }
    chain(sig, si, ucv);
}

static void on_end_signal(int sig, siginfo_t *si, void *uc)
{
    int zero = 0;
    atomic_compare_exchange_strong(&end_signal, &zero, sig);
    const struct sigaction *p = &prev_act[sig];
    bool jvm_handles = (p->sa_flags & SA_SIGINFO) ? p->sa_sigaction != NULL
                                                  : (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN);
    if (!jvm_handles && p->sa_handler == SIG_DFL && !atomic_exchange(&written, 1)) {
        /* No JVM handler (-Xrs): the process dies now, without a shutdown. */
        for (int i = 0; i < g_shim.ninst; i++)
            if (rep_fd[i] >= 0) {
                sw(rep_fd[i], "\nsummary: PROBLEMS: the run was ended by ");
                sw(rep_fd[i], sig_name(sig));
                sw(rep_fd[i], ", for which the JVM had no handler (-Xrs?): no shutdown, no JVM_SHUT_DOWN\n"
                              "end of report (the run ended by ");
                sw(rep_fd[i], sig_name(sig));
                sw(rep_fd[i], " without a JVM shutdown)\n");
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
    jvmtiCapabilities probe, want, pot;
    memset(&probe, 0, sizeof probe);
    probe.can_generate_sampled_object_alloc_events = 1;
    const unsigned char *pb = (const unsigned char *)&probe;
    size_t bit = (size_t)-1;
    for (size_t i = 0; i < sizeof probe * 8 && bit == (size_t)-1; i++)
        if (pb[i / 8] & (1u << (i % 8)))
            bit = i + 1;
    if (bit == (size_t)-1 || bit >= sizeof want * 8)
        return false;
    memset(&want, 0, sizeof want);
    ((unsigned char *)&want)[bit / 8] = (unsigned char)(1u << (bit % 8));
    if ((*g_shim.jvmti)->GetPotentialCapabilities(g_shim.jvmti, &pot) != JVMTI_ERROR_NONE ||
        !(((unsigned char *)&pot)[bit / 8] & (1u << (bit % 8))))
        return false; /* a JVM before JVMTI 21: no virtual threads */
    vthreads_cap = (*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want) == JVMTI_ERROR_NONE;
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
