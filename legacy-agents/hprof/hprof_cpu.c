/* hprof_cpu.c — cpu=samples (a sampler thread) and cpu=times|old (method entry/exit times).
 *
 * cpu=samples: a daemon thread made with CreateSystemThread at JVM_INIT_DONE wakes every
 * HPROF_SAMPLE_MS ms (RawMonitorWait on cpu_lock, which is also how it is told to stop) and
 * takes one round of samples: for every other live thread that GetThreadStatus calls
 * runnable, it does SuspendThread, ThreadHasRun (a thread that has not run since its last
 * suspension is not counted: it did not use the CPU), GetCallTrace, ResumeThread, and
 * counts the trace. It holds no lock while a thread is suspended (see hprof.h), and it
 * leaves alone the thread that is inside a GC bracket, which holds data_lock.
 *
 * cpu=times and cpu=old: METHOD_ENTRY / METHOD_EXIT keep a shadow stack per thread in the
 * thread's record, which thread-local storage points at (SetThreadLocalStorage at
 * THREAD_START), so the hot path takes no lock until a method returns. Entry pushes the
 * method and the thread's CPU time (GetCurrentThreadCpuTime); exit pops it, charges the
 * elapsed time minus the callees' to the method and the elapsed time to its caller's
 * callee account. cpu=times keys the time and a call count by the trace formed by the top
 * depth= entries of the shadow stack (no line numbers: the events carry none);
 * cpu=old keys them by the (callee, caller) pair, the table of JDK 1.1's java -prof.
 * Exits of frames entered before the events were on find no entry and are ignored.
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>

/* ---- cpu=samples ---- */

enum { S_NONE, S_RUNNING, S_STOPPING, S_STOPPED };
static JVMPI_RawMonitor cpu_lock;
static int sampler_state;           /* under cpu_lock */
static long total_samples;          /* under data_lock */

struct victim {
    JNIEnv *env;
    struct thr *thr;
};

static void sampler(void *arg)
{
    (void)arg;
    JNIEnv *self = NULL;
    (*hprof_jvm)->GetEnv(hprof_jvm, (void **)&self, JNI_VERSION_1_2);
    int depth = opt.depth > 0 ? opt.depth : 1;
    JVMPI_CallFrame *f = malloc((size_t)depth * sizeof *f);
    struct victim *list = NULL;
    size_t cap = 0;
    for (;;) {
        jvmpi->RawMonitorEnter(cpu_lock);
        if (sampler_state == S_RUNNING)
            jvmpi->RawMonitorWait(cpu_lock, HPROF_SAMPLE_MS);
        int stop = sampler_state != S_RUNNING;
        jvmpi->RawMonitorExit(cpu_lock);
        if (stop || f == NULL)
            break;

        size_t n = 0;
        LOCK();
        if (grow_array(&list, &cap, nthreads, sizeof *list))
            for (size_t i = 0; i < nthreads; i++)
                if (threads[i]->live && threads[i]->env != self) {
                    list[n].env = threads[i]->env;
                    list[n++].thr = threads[i];
                }
        UNLOCK();

        for (size_t i = 0; i < n; i++) {
            JNIEnv *env = list[i].env;
            if (gc_bracket_holder(env))
                continue;
            jint st = jvmpi->GetThreadStatus(env) & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
            if (st != JVMPI_THREAD_RUNNABLE)
                continue;
            JVMPI_CallTrace tr;
            tr.env_id = env;
            tr.num_frames = 0;
            tr.frames = f;
            jvmpi->SuspendThread(env);
            if (jvmpi->ThreadHasRun(env))
                jvmpi->GetCallTrace(&tr, opt.depth);
            jvmpi->ResumeThread(env);
            if (tr.num_frames <= 0 || tr.num_frames > depth)
                continue;
            trace_fix(f, tr.num_frames);
            LOCK();
            struct trace *t = trace_intern(f, tr.num_frames, list[i].thr);
            if (t != NULL) {
                t->samples++;
                total_samples++;
            }
            UNLOCK();
        }
    }
    free(list);
    free(f);
    jvmpi->RawMonitorEnter(cpu_lock);
    sampler_state = S_STOPPED;
    jvmpi->RawMonitorNotifyAll(cpu_lock);
    jvmpi->RawMonitorExit(cpu_lock);
}

void cpu_start_sampler(void)
{
    if (opt.cpu != CPU_SAMPLES)
        return;
    cpu_lock = jvmpi->RawMonitorCreate("_hprof_cpu_lock");
    if (cpu_lock == NULL) {
        hprof_error("RawMonitorCreate failed: no CPU samples");
        return;
    }
    jvmpi->RawMonitorEnter(cpu_lock);
    sampler_state = S_RUNNING;
    jvmpi->RawMonitorExit(cpu_lock);
    if (jvmpi->CreateSystemThread("HPROF CPU profiler", JVMPI_MAXIMUM_PRIORITY, sampler) != JNI_OK) {
        hprof_error("CreateSystemThread failed: no CPU samples");
        jvmpi->RawMonitorEnter(cpu_lock);
        sampler_state = S_NONE;
        jvmpi->RawMonitorExit(cpu_lock);
    }
}

/* Tell the sampler to stop and wait for it, at most 2 s. */
void cpu_stop_sampler(void)
{
    if (cpu_lock == NULL)
        return;
    jvmpi->RawMonitorEnter(cpu_lock);
    int stopped = sampler_state != S_RUNNING;
    if (sampler_state == S_RUNNING) {
        sampler_state = S_STOPPING;
        jvmpi->RawMonitorNotifyAll(cpu_lock);
        for (int i = 0; i < 40 && sampler_state != S_STOPPED; i++)
            jvmpi->RawMonitorWait(cpu_lock, 50);
        stopped = sampler_state == S_STOPPED;
        if (!stopped)
            hprof_error("the CPU sampler did not stop within 2 s");
    }
    jvmpi->RawMonitorExit(cpu_lock);
    if (stopped) { /* nobody uses it any more */
        jvmpi->RawMonitorDestroy(cpu_lock);
        cpu_lock = NULL;
    }
}

/* ---- cpu=times / cpu=old ---- */

static long long total_self_ns;     /* cpu=times, under data_lock */
static long total_calls;

struct pair {                       /* cpu=old */
    jmethodID callee, caller;
    unsigned hash;
    struct pair *next;
    long count;
    long long ns;
};
static struct pair **pairs, **pbuckets;
static size_t npairs, cap_pairs, npbuckets;
static long long total_old_ns;

static struct pair *pair_get(jmethodID callee, jmethodID caller)
{
    uint64_t x = (uint64_t)(uintptr_t)callee * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)caller;
    unsigned h = (unsigned)(x ^ (x >> 31));
    if (npbuckets > 0)
        for (struct pair *p = pbuckets[h & (npbuckets - 1)]; p != NULL; p = p->next)
            if (p->callee == callee && p->caller == caller)
                return p;
    if (!grow_array(&pairs, &cap_pairs, npairs + 1, sizeof *pairs))
        return NULL;
    struct pair *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->callee = callee;
    p->caller = caller;
    p->hash = h;
    pairs[npairs++] = p;
    size_t before = npbuckets;
    if (npairs > npbuckets) {
        size_t nb = npbuckets ? npbuckets * 2 : 1024;
        struct pair **b = calloc(nb, sizeof *b);
        if (b != NULL) {
            for (size_t i = 0; i < npairs; i++) {
                pairs[i]->next = b[pairs[i]->hash & (nb - 1)];
                b[pairs[i]->hash & (nb - 1)] = pairs[i];
            }
            free(pbuckets);
            pbuckets = b;
            npbuckets = nb;
        }
    }
    if (npbuckets == 0) {
        npairs--;
        free(p);
        return NULL;
    }
    if (npbuckets == before) {
        p->next = pbuckets[h & (npbuckets - 1)];
        pbuckets[h & (npbuckets - 1)] = p;
    }
    return p;
}

void on_method_entry(JVMPI_Event *ev)
{
    struct thr *t = thr_get(ev->env_id);
    if (t == NULL)
        return;
    if (t->sp >= t->scap) {
        int cap = t->scap ? t->scap * 2 : 256;
        struct tframe *s = realloc(t->stack, (size_t)cap * sizeof *s);
        if (s == NULL)
            return;
        t->stack = s;
        t->scap = cap;
    }
    struct tframe *fr = &t->stack[t->sp++];
    fr->method = ev->u.method.method_id;
    fr->callee_ns = 0;
    fr->start_ns = jvmpi->GetCurrentThreadCpuTime();
}

void on_method_exit(JVMPI_Event *ev)
{
    jlong now = jvmpi->GetCurrentThreadCpuTime();
    struct thr *t = thr_get(ev->env_id);
    if (t == NULL)
        return;
    jmethodID mid = ev->u.method.method_id;
    int i = t->sp - 1;
    while (i >= 0 && t->stack[i].method != mid)
        i--;
    if (i < 0)
        return; /* entered before the events were on */
    struct tframe fr = t->stack[i];
    t->sp = i;
    long long elapsed = now - fr.start_ns, self = elapsed - fr.callee_ns;
    if (elapsed < 0)
        elapsed = 0;
    if (self < 0)
        self = 0;
    if (i > 0)
        t->stack[i - 1].callee_ns += elapsed;

    if (opt.cpu == CPU_TIMES) {
        int depth = opt.depth < i + 1 ? opt.depth : i + 1;
        JVMPI_CallFrame f[depth > 0 ? depth : 1];
        f[0].method_id = mid;
        f[0].lineno = -1;
        for (int k = 1; k < depth; k++) {
            f[k].method_id = t->stack[i - k].method;
            f[k].lineno = -1;
        }
        LOCK();
        struct trace *tr = trace_intern(f, depth, t);
        if (tr != NULL) {
            tr->calls++;
            tr->self_ns += self;
            total_self_ns += self;
            total_calls++;
        }
        UNLOCK();
    } else {
        LOCK();
        struct pair *p = pair_get(mid, i > 0 ? t->stack[i - 1].method : NULL);
        if (p != NULL) {
            p->count++;
            p->ns += elapsed;
            total_old_ns += self; /* each ns once: the total is the CPU time measured */
            total_calls++;
        }
        UNLOCK();
    }
}

/* ---- output ---- */

static int by_samples(const void *a, const void *b)
{
    const struct trace *x = *(struct trace *const *)a, *y = *(struct trace *const *)b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static int by_self(const void *a, const void *b)
{
    const struct trace *x = *(struct trace *const *)a, *y = *(struct trace *const *)b;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static int by_count(const void *a, const void *b)
{
    const struct pair *x = *(struct pair *const *)a, *y = *(struct pair *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return 0;
}

static void full_name(jmethodID mid, char *buf, size_t len)
{
    struct meth *m = meth_find(mid);
    if (mid == NULL)
        snprintf(buf, len, "<root>");
    else if (m == NULL)
        snprintf(buf, len, "<unknown method>");
    else
        snprintf(buf, len, "%s.%s%s", m->cls->disp, m->name, m->sig);
}

/* Binary CPU SAMPLES of these traces with these counts. */
static void write_binary_samples(struct trace **ts, const long *counts, size_t n, long total)
{
    struct buf b = {0};
    buf_u4(&b, (uint32_t)total);
    buf_u4(&b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        buf_u4(&b, (uint32_t)counts[i]);
        buf_u4(&b, ts[i]->serial);
    }
    if (!b.oom)
        io_record(HPROF_CPU_SAMPLES, &b);
    buf_free(&b);
}

static void write_old(void)
{
    struct pair **ps = malloc((npairs ? npairs : 1) * sizeof *ps);
    if (ps == NULL)
        return;
    size_t n = 0;
    for (size_t i = 0; i < npairs; i++)
        if (pairs[i]->count > 0)
            ps[n++] = pairs[i];
    qsort(ps, n, sizeof *ps, by_count);
    if (!opt.binary) {
        io_printf("CPU TIME (ms) BEGIN (total = %lld) %s\n", total_old_ns / 1000000, io_date());
        io_printf("count callee caller time\n");
        for (size_t i = 0; i < n; i++) {
            char callee[1200], caller[1200];
            full_name(ps[i]->callee, callee, sizeof callee);
            full_name(ps[i]->caller, caller, sizeof caller);
            io_printf("%ld %s %s %lld\n", ps[i]->count, callee, caller, ps[i]->ns / 1000000);
        }
        io_printf("CPU TIME (ms) END\n");
    } else {
        /* Binary: each pair as a two-frame trace (callee, caller) with its call count. */
        struct trace **ts = malloc((n ? n : 1) * sizeof *ts);
        long *cs = malloc((n ? n : 1) * sizeof *cs);
        size_t m = 0;
        for (size_t i = 0; ts && cs && i < n; i++) {
            JVMPI_CallFrame f[2] = {{-1, ps[i]->callee}, {-1, ps[i]->caller}};
            struct trace *t = trace_intern(f, ps[i]->caller ? 2 : 1, NULL);
            if (t != NULL) {
                ts[m] = t;
                cs[m++] = ps[i]->count;
            }
        }
        trace_write_new();
        if (ts && cs)
            write_binary_samples(ts, cs, m, total_calls);
        free(ts);
        free(cs);
    }
    free(ps);
}

/* Holding data_lock; traces already written. */
void cpu_write(void)
{
    if (opt.cpu == CPU_OFF)
        return;
    if (opt.cpu == CPU_OLD) {
        write_old();
        return;
    }
    int samples = opt.cpu == CPU_SAMPLES;
    struct trace **ts = malloc((ntraces ? ntraces : 1) * sizeof *ts);
    long *counts = malloc((ntraces ? ntraces : 1) * sizeof *counts);
    if (ts == NULL || counts == NULL) {
        free(ts);
        free(counts);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < ntraces; i++)
        if (samples ? traces[i]->samples > 0 : traces[i]->calls > 0)
            ts[n++] = traces[i];
    qsort(ts, n, sizeof *ts, samples ? by_samples : by_self);
    double total = samples ? (double)total_samples : (double)total_self_ns;
    size_t rows = 0;
    for (; rows < n; rows++) {
        double v = samples ? (double)ts[rows]->samples : (double)ts[rows]->self_ns;
        if ((total > 0 ? v / total : 0.0) < opt.cutoff)
            break;
        counts[rows] = samples ? ts[rows]->samples : ts[rows]->calls;
    }
    if (opt.binary) {
        write_binary_samples(ts, counts, rows, samples ? total_samples : total_calls);
    } else {
        if (samples)
            io_printf("CPU SAMPLES BEGIN (total = %ld) %s\n", total_samples, io_date());
        else
            io_printf("CPU TIME (ms) BEGIN (total = %lld) %s\n", total_self_ns / 1000000, io_date());
        io_printf("rank   self  accum   count trace method\n");
        double accum = 0;
        for (size_t i = 0; i < rows; i++) {
            struct trace *t = ts[i];
            double v = samples ? (double)t->samples : (double)t->self_ns;
            double self = total > 0 ? 100.0 * v / total : 0.0;
            accum += self;
            char m[1200];
            if (t->nframes > 0)
                method_display(t->frames[0].method_id, m, sizeof m);
            else
                snprintf(m, sizeof m, "<empty>");
            io_printf("%4zu %5.2f%% %5.2f%% %7ld %5u %s\n", i + 1, self, accum, counts[i],
                      t->serial, m);
        }
        io_printf(samples ? "CPU SAMPLES END\n" : "CPU TIME (ms) END\n");
    }
    free(ts);
    free(counts);
}

/* DATA_RESET_REQUEST: CPU statistics start again from zero. Holding data_lock. */
void cpu_reset(void)
{
    for (size_t i = 0; i < ntraces; i++) {
        traces[i]->samples = 0;
        traces[i]->calls = 0;
        traces[i]->self_ns = 0;
    }
    for (size_t i = 0; i < npairs; i++) {
        pairs[i]->count = 0;
        pairs[i]->ns = 0;
    }
    total_samples = 0;
    total_self_ns = 0;
    total_old_ns = 0;
    total_calls = 0;
}
