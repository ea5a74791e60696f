/* text.c — the migration report's text: should the user worry, what a legacy agent used,
 * how faithfully it was served, what went wrong, where the time went, and how the run ended.
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
 * All of the text goes through an async-signal-safe writer (write(2), no lock, no
 * allocation, no stdio) and reads only atomics (events/report.h's counters, the counts in
 * struct instance) and what report.c set before, so that a crash handler can write it. The
 * times of day are formatted without localtime, which may take a lock.
 */
#include "core/api.h"
#include "core/fidelity.h"
#include "events/events.h"
#include "events/report.h"
#include "report/internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- the async-signal-safe writer ----
 * The whole report is written through it, by the checkpoint thread, at the end, and from
 * a crash handler. */

void w_flush(struct w *w)
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
void w_s(struct w *w, const char *s)
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

const char *sig_name(int sig)
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

/* The one attribution of the crash, used by the summary and the crash record. */
static void w_crash_where(struct w *w)
{
    const struct crash_info *c = &report_run.crash;
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
    if (report_run.crash.jvm_handler) {
        w_s(w, "the JVM's own handler for ");
        w_s(w, sig_name(report_run.crash.sig));
        w_s(w, " runs next (HotSpot then writes its hs_err_pid<pid>.log error report, where "
               "-XX:ErrorFile and the working directory allow, and aborts)");
    } else {
        w_s(w, "the JVM has no handler for ");
        w_s(w, sig_name(report_run.crash.sig));
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
    if (atomic_load(&report_run.crash_signal) != 0 || report_run.unhandled_end != 0)
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
        uint64_t c = report_count(k);
        if (c == 0)
            continue;
        if (report_kind_rank(k) == RANK_WILL)
            t->will++;
        else if (report_kind_rank(k) == RANK_MAY)
            t->may++;
        else
            t->harmless += c;
    }
    const struct report_misuse_note *notes;
    int n = report_misuse_notes(s, &notes);
    for (int i = 0; i < n; i++) {
        if (notes[i].rank == RANK_HARMLESS)
            t->harmless += atomic_load(&notes[i].count);
        else if (notes[i].rank == RANK_MAY)
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
    int cs = atomic_load(&report_run.crash_signal);
    if (cs != 0) {
        w_s(w, "  will change: the run crashed with ");
        w_s(w, sig_name(cs));
        w_s(w, " in ");
        w_crash_where(w);
        w_s(w, " (crash record below)\n");
    }
    if (report_run.unhandled_end != 0) {
        w_s(w, "  will change: the run was ended by ");
        w_s(w, sig_name(report_run.unhandled_end));
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
        uint64_t c = report_count(k);
        if (c == 0 || report_kind_rank(k) != RANK_WILL)
            continue;
        w_s(w, "  will change: ");
        w_s(w, report_kind_name(k));
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
    const struct report_misuse_note *notes;
    int n = report_misuse_notes(s, &notes);
    for (int i = 0; i < n; i++) {
        if (notes[i].rank != RANK_MAY)
            continue;
        w_s(w, "  may change:  the agent's misuse, ");
        w_plural(w, atomic_load(&notes[i].count), "time", "times");
        w_s(w, ": ");
        w_s(w, notes[i].first);
        w_s(w, "\n");
    }
    for (int k = 0; k < REP_KIND_COUNT; k++) {
        uint64_t c = report_count(k);
        if (c == 0 || report_kind_rank(k) != RANK_MAY)
            continue;
        w_s(w, "  may change:  ");
        w_s(w, report_kind_name(k));
        w_s(w, ": ");
        w_u(w, c);
        const char *first = report_kind_first(k);
        if (first != NULL) {
            w_s(w, "; first: ");
            w_s(w, first);
        }
        w_s(w, "\n");
    }
    /* harmless: counted */
    uint64_t same = 0, rows = 0, info = 0;
    for (int i = 0; i < n; i++)
        if (notes[i].rank == RANK_HARMLESS)
            same += atomic_load(&notes[i].count);
    for (int k = 0; k < REP_KIND_COUNT; k++)
        if (report_kind_rank(k) == RANK_HARMLESS)
            info += report_count(k);
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

/* The report of one agent. */
void write_text(struct w *w, const struct instance *inst, const char *how_ended, enum text_mode mode)
{
    char t0[32], t1[32], b[32], b2[32];
    stamp(t0, report_run.started);
    stamp(t1, time(NULL));
    uint64_t wall = report_now() - report_run.started_mono;
    int s = inst->slot;

    w_s(w, "jvmpishim migration report\nagent:    ");
    w_s(w, inst->resolved_path ? inst->resolved_path : inst->opts.legacy);
    w_s(w, " (agent ");
    w_u(w, (uint64_t)s);
    w_s(w, "; ");
    w_plural(w, (uint64_t)g_shim.ninst, "agent", "agents");
    w_s(w, " in this JVM)\n");
    if (inst->client) {
        /* A library of the program that asked the JavaVM for JVMPI itself (face/clients.c). */
        char ta[32];
        stamp(ta, (time_t)inst->asked.wall);
        w_s(w, "asked:    GetEnv(JVMPI_VERSION_*) from ");
        w_s(w, inst->asked.how != NULL ? inst->asked.how : "its code");
        w_s(w, " on thread \"");
        w_s(w, inst->asked.thread);
        w_s(w, "\" at ");
        w_s(w, ta);
        w_s(w, inst->asked.phase < PHASE_LIVE ? ", before JVM_INIT_DONE"
                                              : ", after JVM_INIT_DONE");
        w_s(w, " (a library of the program, not a legacy= agent: no JVM_OnLoad, no options; "
               "it missed the events of what happened before it asked)\n");
    } else if (inst->opts.agent_options != NULL) {
        w_s(w, "options:  ");
        w_s(w, "\"");
        w_s(w, inst->opts.agent_options);
        w_s(w, "\"\n");
    } else {
        w_s(w, "options:  (none: JVM_OnLoad got NULL)\n");
    }
    w_s(w, "JVM:      ");
    w_s(w, report_run.jvm_line);
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
    if (report_run.signals_note[0] != '\0') {
        w_s(w, "signals:  ");
        w_s(w, report_run.signals_note);
        w_s(w, "\n");
    }

    write_summary(w, inst);

    if (mode == TEXT_CRASH) {
        const struct crash_info *c = &report_run.crash;
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
    const struct report_misuse_note *notes;
    int n = report_misuse_notes(s, &notes);
    for (int i = 0; i < n; i++, nwarn++) {
        uint64_t c = atomic_load(&notes[i].count);
        w_s(w, "  - ");
        w_plural(w, c, "time", "times");
        w_s(w, ": ");
        w_s(w, notes[i].first);
        if (c > 1)
            w_s(w, " (the first of them)");
        if (notes[i].rank == RANK_HARMLESS)
            w_s(w, " [harmless: HotSpot gave the same answer]");
        w_s(w, "\n");
    }
    uint64_t dropped = report_misuse_dropped(s);
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
        uint64_t c = report_count(k);
        if (c == 0)
            continue;
        any_kind = true;
        w_s(w, "  - ");
        w_s(w, report_kind_name(k));
        w_s(w, ": ");
        w_u(w, c);
        uint64_t max, sum = report_kind_ns(k, &max);
        if (sum > 0) {
            w_s(w, ", ");
            w_s(w, dec(b, sum, 6, 3));
            w_s(w, " ms in all, longest ");
            w_s(w, dec(b2, max, 6, 3));
            w_s(w, " ms");
        }
        const char *first = report_kind_first(k);
        if (first != NULL) {
            w_s(w, "; first: ");
            w_s(w, first);
        }
        w_s(w, "\n");
    }
    int cs = atomic_load(&report_run.crash_signal);
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
        uint64_t ns = report_event_ns(s, t), dl = delivered(inst, t);
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
        uint64_t ns = report_fn_ns(s, fn), c = fn_calls(inst, fn);
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

/* The clock the text reads: the wall clock at load and the UTC offset, read once here
 * (localtime_r may take a lock; a crash handler formats times of day without it). */
__attribute__((constructor)) static void report_start_clock(void)
{
    report_run.started = time(NULL);
    report_run.started_mono = report_now();
    struct tm tm;
    if (localtime_r(&report_run.started, &tm) != NULL)
        utc_offset = tm.tm_gmtoff;
}
