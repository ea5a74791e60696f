/* report.c — the migration report: what a legacy agent used, and how faithfully it was served.
 *
 * "Can I run my old profiler here, and what will differ?" At exit the shim writes, for each
 * agent started with report=PATH, the JVMPI functions it called (with counts), the events it
 * enabled or requested (with the answer, and how many were delivered), and for each of those
 * whether this JVM serves it exactly, differently (how) or not at all (why), from the
 * fidelity table (fidelity.c, held to docs/mapping.md by a unit test) and the event
 * switchboard's run-time view (capabilities this JVM refused). Then the warnings: events
 * asked for but unavailable, and the agent's misuse (stale ids, unknown threads, bad
 * arguments), one line per call site with its count and first message.
 *
 * The counters live in struct instance and are bumped on the call paths (interface.c,
 * events.c); deliveries are counted per thread stripe, so the hot path shares no cache line.
 * The misuse notes are a small fixed table per agent under notes_lock (a leaf; misuse is
 * never on a hot path). Writing happens once, at JVM_SHUT_DOWN, ProfilerExit or a refused
 * start, after the agent has been told everything.
 */
#include "api.h"
#include "events.h"
#include "fidelity.h"
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_NOTES 48

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

void report_misuse(struct instance *inst, int level, const char *fmt, ...)
{
    char msg[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_level_now >= level)
        log_msg(level, "agent %d: %s", inst->slot, msg);
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

static uint64_t delivered(struct instance *inst, int t)
{
    uint64_t n = events_delivered(inst->slot, t);
    for (int i = 0; i < STRIPES; i++)
        n += atomic_load_explicit(&inst->delivered[i].n[t], memory_order_relaxed);
    return n;
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

static void write_one(struct instance *inst, const char *how_ended)
{
    FILE *f = fopen(inst->opts.report_file, "w");
    if (f == NULL) {
        log_error("agent %d: report=%s: cannot write the migration report: %s", inst->slot,
                  inst->opts.report_file, strerror(errno));
        return;
    }
    char vm[160], ver[96], vendor[96], t0[32], t1[32];
    sysprop(vm, sizeof vm, "java.vm.name");
    sysprop(ver, sizeof ver, "java.vm.version");
    sysprop(vendor, sizeof vendor, "java.vm.vendor");
    stamp(t0, sizeof t0, started);
    stamp(t1, sizeof t1, time(NULL));

    int nexact = 0, ndiff = 0, nunav = 0, nwarn = 0;
    fprintf(f, "jvmpishim migration report\n");
    fprintf(f, "agent:    %s (agent %d; %d agent%s in this JVM)\n",
            inst->resolved_path ? inst->resolved_path : inst->opts.legacy, inst->slot,
            g_shim.ninst, g_shim.ninst == 1 ? "" : "s");
    if (inst->opts.agent_options != NULL)
        fprintf(f, "options:  \"%s\"\n", inst->opts.agent_options);
    else
        fprintf(f, "options:  (none: JVM_OnLoad got NULL)\n");
    fprintf(f, "JVM:      %s %s (%s), JVMTI %d.%d\n", vm, ver, vendor,
            (g_shim.jvmti_version >> 16) & 0x0fff, (g_shim.jvmti_version >> 8) & 0xff);
    fprintf(f, "run:      %s to %s, ended by %s%s\n", t0, t1, how_ended,
            g_shim.attached ? " (the shim was attached to a running JVM)" : "");
    fprintf(f, "\nstatus: exact = as on JDK 1.4 (HotSpot 1.4.2); differs = served, with the\n"
               "difference an agent may notice; unavailable = not served on this JVM, and why.\n"
               "docs/mapping.md has the full text for every row.\n");

    fprintf(f, "\nJVMPI functions called\n");
    fprintf(f, "  %-26s %12s  %-11s %s\n", "function", "calls", "status", "how");
    for (int fn = 0; fn < FN_COUNT; fn++) {
        uint64_t c = 0;
        for (int i = 0; i < STRIPES; i++)
            c += atomic_load_explicit(&inst->calls[i].n[fn], memory_order_relaxed);
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

    fprintf(f, "\nsummary: %d exact, %d differ, %d unavailable of what the agent used; %d warning%s\n",
            nexact, ndiff, nunav, nwarn, nwarn == 1 ? "" : "s");
    if (fclose(f) != 0)
        log_error("agent %d: report=%s: writing the migration report failed: %s", inst->slot,
                  inst->opts.report_file, strerror(errno));
    else
        log_info("agent %d: migration report written to %s", inst->slot, inst->opts.report_file);
}

void report_write_all(const char *how)
{
    if (atomic_exchange(&written, 1))
        return;
    for (int i = 0; i < g_shim.ninst; i++)
        if (g_shim.inst[i].opts.report_file != NULL)
            write_one(&g_shim.inst[i], how);
}

__attribute__((constructor)) static void report_start_clock(void)
{
    started = time(NULL);
}
