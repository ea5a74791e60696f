/* hprof_monitor.c — monitor=y: contention and wait times, MONITOR TIME, MONITOR DUMP.
 *
 * MONITOR_CONTENDED_ENTER (and RAW_MONITOR_CONTENDED_ENTER) on the blocked thread notes the
 * time, the thread's trace and the monitor: for a Java monitor the class of its object,
 * found in HPROF's object table or, for an object HPROF never saw allocated, by asking the
 * VM (RequestEvent(OBJECT_ALLOC, object)); for a raw monitor its name. ..._ENTERED charges
 * the time blocked (wall clock: a blocked thread uses no CPU) to the (trace, monitor)
 * pair. MONITOR_WAIT / MONITOR_WAITED do the same for Object.wait, with the time waited
 * that the VM measures (MONITOR_WAITED's timeout). The CONTENDED_EXIT events carry nothing
 * HPROF needs beyond a count. The per-thread state lives in the thread's record, reached
 * through thread-local storage; only the shared tables need data_lock.
 *
 * MONITOR_DUMP, requested at each dump, gives every thread's trace and status and every
 * monitor in use; the dump buffer is parsed here (the format of spec section 4.4).
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_JAVA, K_RAW, K_WAIT };

struct mstat {
    int kind;
    struct trace *trace;
    struct cls *cls;        /* K_JAVA, K_WAIT (NULL: sleep) */
    const char *raw;        /* K_RAW */
    unsigned hash;
    struct mstat *next;
    long count;
    long long ns;
};
static struct mstat **stats, **mbuckets;
static size_t nstats, cap_stats, nmbuckets;
static long long total_ns[3];
static long contended_exits;

struct rname {
    struct rname *next;
    char s[];
};
static struct rname *rnames;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Raw monitor names, interned (the event's copy is the VM's). Holding data_lock. */
static const char *raw_name(const char *s)
{
    if (s == NULL)
        s = "";
    for (struct rname *r = rnames; r != NULL; r = r->next)
        if (strcmp(r->s, s) == 0)
            return r->s;
    size_t n = strlen(s);
    struct rname *r = malloc(sizeof *r + n + 1);
    if (r == NULL)
        return "";
    memcpy(r->s, s, n + 1);
    r->next = rnames;
    rnames = r;
    return r->s;
}

static struct mstat *mstat_get(int kind, struct trace *t, struct cls *c, const char *raw)
{
    uint64_t x = ((uint64_t)(uintptr_t)t * 31u + (uint64_t)(uintptr_t)c + (uint64_t)(uintptr_t)raw) *
                     0x9e3779b97f4a7c15ULL + (uint64_t)kind;
    unsigned h = (unsigned)(x ^ (x >> 32));
    if (nmbuckets > 0)
        for (struct mstat *m = mbuckets[h & (nmbuckets - 1)]; m != NULL; m = m->next)
            if (m->kind == kind && m->trace == t && m->cls == c && m->raw == raw)
                return m;
    if (!grow_array(&stats, &cap_stats, nstats + 1, sizeof *stats))
        return NULL;
    struct mstat *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->kind = kind;
    m->trace = t;
    m->cls = c;
    m->raw = raw;
    m->hash = h;
    stats[nstats++] = m;
    size_t before = nmbuckets;
    if (nstats > nmbuckets) {
        size_t nb = nmbuckets ? nmbuckets * 2 : 256;
        struct mstat **b = calloc(nb, sizeof *b);
        if (b != NULL) {
            for (size_t i = 0; i < nstats; i++) {
                stats[i]->next = b[stats[i]->hash & (nb - 1)];
                b[stats[i]->hash & (nb - 1)] = stats[i];
            }
            free(mbuckets);
            mbuckets = b;
            nmbuckets = nb;
        }
    }
    if (nmbuckets == 0) {
        nstats--;
        free(m);
        return NULL;
    }
    if (nmbuckets == before) {
        m->next = mbuckets[h & (nmbuckets - 1)];
        mbuckets[h & (nmbuckets - 1)] = m;
    }
    return m;
}

static void charge(int kind, struct trace *t, struct cls *c, const char *raw, long long ns)
{
    LOCK();
    struct mstat *m = t ? mstat_get(kind, t, c, raw) : NULL;
    if (m != NULL) {
        m->count++;
        m->ns += ns;
        total_ns[kind] += ns;
    }
    UNLOCK();
}

static struct trace *here(JNIEnv *env, struct thr *t)
{
    int depth = opt.depth > 0 ? opt.depth : 1;
    JVMPI_CallFrame f[depth];
    int n = trace_capture(env, f, opt.depth);
    LOCK();
    struct trace *tr = trace_intern(f, n, t);
    UNLOCK();
    return tr;
}

void on_monitor_event(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT || type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT) {
        LOCK();
        contended_exits++;
        UNLOCK();
        return;
    }
    struct thr *t = thr_get(ev->env_id);
    if (t == NULL)
        return;
    switch (type) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        t->mon_cls = object_class(ev->u.monitor.object, 1);
        t->mon_raw = NULL;
        t->mon_trace = here(ev->env_id, t);
        t->contending = 1;
        t->mon_t0 = now_ns(); /* last: what came before is HPROF's cost, not the wait */
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
        LOCK();
        t->mon_raw = raw_name(ev->u.raw_monitor.name);
        UNLOCK();
        t->mon_cls = NULL;
        t->mon_trace = here(ev->env_id, t);
        t->contending = 1;
        t->mon_t0 = now_ns();
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
        if (t->contending) {
            t->contending = 0;
            charge(t->mon_raw ? K_RAW : K_JAVA, t->mon_trace, t->mon_cls, t->mon_raw,
                   now_ns() - t->mon_t0);
        }
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        t->wait_cls = ev->u.monitor_wait.object ? object_class(ev->u.monitor_wait.object, 1) : NULL;
        t->wait_trace = here(ev->env_id, t);
        t->waiting = 1;
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        if (t->waiting) {
            t->waiting = 0;
            charge(K_WAIT, t->wait_trace, t->wait_cls, NULL,
                   (long long)ev->u.monitor_wait.timeout * 1000000LL);
        }
        break;
    default:
        break;
    }
}

static int by_time(const void *a, const void *b)
{
    const struct mstat *x = *(struct mstat *const *)a, *y = *(struct mstat *const *)b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->trace->serial < y->trace->serial ? -1 : x->trace->serial > y->trace->serial;
}

static void write_table(const char *title, int wait)
{
    struct mstat **ms = malloc((nstats ? nstats : 1) * sizeof *ms);
    if (ms == NULL)
        return;
    size_t n = 0;
    long long total = wait ? total_ns[K_WAIT] : total_ns[K_JAVA] + total_ns[K_RAW];
    for (size_t i = 0; i < nstats; i++)
        if ((stats[i]->kind == K_WAIT) == wait && stats[i]->count > 0)
            ms[n++] = stats[i];
    qsort(ms, n, sizeof *ms, by_time);
    io_printf("%s BEGIN (total = %lld ms) %s\n", title, total / 1000000, io_date());
    io_printf("rank   self  accum   count trace monitor\n");
    double accum = 0;
    for (size_t i = 0; i < n; i++) {
        struct mstat *m = ms[i];
        double self = total > 0 ? 100.0 * (double)m->ns / (double)total : 0.0;
        if (self / 100.0 < opt.cutoff)
            break;
        accum += self;
        char what[1200];
        if (m->kind == K_RAW)
            snprintf(what, sizeof what, "%s (raw)", m->raw);
        else if (m->cls != NULL)
            snprintf(what, sizeof what, "%s (Java)", m->cls->disp);
        else
            snprintf(what, sizeof what, wait ? "<sleep>" : "<unknown> (Java)");
        io_printf("%4zu %5.2f%% %5.2f%% %7ld %5u %s\n", i + 1, self, accum, m->count,
                  m->trace->serial, what);
    }
    io_printf("%s END\n", title);
    free(ms);
}

/* MONITOR TIME and MONITOR WAIT TIME. Holding data_lock; traces already written. */
void monitor_time_write(void)
{
    if (!opt.monitor || opt.binary)
        return;
    write_table("MONITOR TIME", 0);
    write_table("MONITOR WAIT TIME", 1);
}

void monitor_reset(void)
{
    for (size_t i = 0; i < nstats; i++) {
        stats[i]->count = 0;
        stats[i]->ns = 0;
    }
    memset(total_ns, 0, sizeof total_ns);
    contended_exits = 0;
}

/* ---- MONITOR_DUMP ---- */

struct mcur {
    const unsigned char *p;
    size_t len, off;
    int bad;
};

static void *rd_ptr(struct mcur *c)
{
    void *v = NULL;
    if (c->bad || c->len - c->off < sizeof v) {
        c->bad = 1;
        return NULL;
    }
    memcpy(&v, c->p + c->off, sizeof v); /* ids and pointers are native in dumps */
    c->off += sizeof v;
    return v;
}

static uint32_t rd_u4(struct mcur *c)
{
    if (c->bad || c->len - c->off < 4) {
        c->bad = 1;
        return 0;
    }
    const unsigned char *q = c->p + c->off;
    c->off += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

static void write_env_list(const char *what, struct mcur *c)
{
    uint32_t n = rd_u4(c);
    io_printf("\t%s:", what);
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        JNIEnv *e = rd_ptr(c);
        io_printf("%s thread %u", i ? "," : "", thread_serial_of(e));
    }
    io_printf("\n");
}

static const char *status_text(jint st, char *buf, size_t len)
{
    jint base = st & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
    const char *s = base == JVMPI_THREAD_RUNNABLE ? "R"
                    : base == JVMPI_THREAD_MONITOR_WAIT ? "MW"
                    : base == JVMPI_THREAD_CONDVAR_WAIT ? "CW" : "?";
    snprintf(buf, len, "%s%s%s", s, st & JVMPI_THREAD_SUSPENDED ? ",S" : "",
             st & JVMPI_THREAD_INTERRUPTED ? ",I" : "");
    return buf;
}

void on_monitor_dump(JVMPI_Event *ev)
{
    if (opt.binary)
        return; /* no binary form */
    const unsigned char *p = (const unsigned char *)ev->u.monitor_dump.begin;
    size_t len = p && ev->u.monitor_dump.end ? (size_t)(ev->u.monitor_dump.end - ev->u.monitor_dump.begin) : 0;
    jint nt = ev->u.monitor_dump.traces ? ev->u.monitor_dump.num_traces : 0;

    /* First, without the lock: the threads' traces and the monitors' classes, which may
     * need JVMPI calls (unknown methods, objects, threads). */
    struct trace **tt = nt > 0 ? calloc((size_t)nt, sizeof *tt) : NULL;
    for (jint i = 0; tt && i < nt; i++) {
        JVMPI_CallTrace *tr = &ev->u.monitor_dump.traces[i];
        int n = tr->num_frames < opt.depth ? tr->num_frames : opt.depth;
        if (n < 0)
            n = 0;
        JVMPI_CallFrame f[n > 0 ? n : 1];
        memcpy(f, tr->frames, (size_t)n * sizeof *f);
        trace_fix(f, n);
        struct thr *th = thr_get(tr->env_id);
        LOCK();
        tt[i] = trace_intern(f, n, th);
        UNLOCK();
    }
    struct mcur c = {p, len, 0, 0};
    while (c.off < c.len && !c.bad) { /* learn the objects' classes */
        int type = c.p[c.off++];
        if (type == JVMPI_MONITOR_JAVA) {
            object_class(rd_ptr(&c), 1);
        } else if (type == JVMPI_MONITOR_RAW) {
            rd_ptr(&c);
            rd_ptr(&c);
        } else {
            c.bad = 1;
            break;
        }
        rd_ptr(&c); /* owner */
        rd_u4(&c);
        uint32_t n1 = rd_u4(&c);
        for (uint32_t i = 0; i < n1 && !c.bad; i++)
            rd_ptr(&c);
        uint32_t n2 = rd_u4(&c);
        for (uint32_t i = 0; i < n2 && !c.bad; i++)
            rd_ptr(&c);
    }

    LOCK();
    trace_write_new();
    io_printf("MONITOR DUMP BEGIN\n");
    for (jint i = 0; tt && i < nt; i++) {
        char st[16];
        jint s = ev->u.monitor_dump.threads_status ? ev->u.monitor_dump.threads_status[i]
                                                   : JVMPI_THREAD_RUNNABLE;
        io_printf("    THREAD %u, trace %u, status: %s\n",
                  thread_serial_of(ev->u.monitor_dump.traces[i].env_id),
                  tt[i] ? tt[i]->serial : 0, status_text(s, st, sizeof st));
    }
    c.off = 0;
    c.bad = 0;
    while (c.off < c.len && !c.bad) {
        int type = c.p[c.off++];
        if (type == JVMPI_MONITOR_JAVA) {
            jobjectID obj = rd_ptr(&c);
            struct cls *k = NULL;
            object_info(obj, &k, NULL, NULL, NULL);
            io_printf("    MONITOR %s(%lx)\n", k ? k->disp : "<unknown>", (unsigned long)(uintptr_t)obj);
        } else if (type == JVMPI_MONITOR_RAW) {
            const char *name = rd_ptr(&c);
            void *id = rd_ptr(&c);
            io_printf("    RAW MONITOR \"%s\"(%p)\n", name ? name : "", id);
        } else {
            c.bad = 1;
            break;
        }
        JNIEnv *owner = rd_ptr(&c);
        uint32_t entries = rd_u4(&c);
        if (owner != NULL)
            io_printf("\towner: thread %u, entry count: %u\n", thread_serial_of(owner), entries);
        else
            io_printf("\towner: none, entry count: %u\n", entries);
        write_env_list("waiting to enter", &c);
        write_env_list("waiting to be notified", &c);
    }
    if (c.bad)
        io_printf("    (the monitor dump is malformed at byte %zu of %zu)\n", c.off, c.len);
    io_printf("MONITOR DUMP END\n");
    UNLOCK();
    free(tt);
}
