/* hprof_trace.c — stack traces: capture, interning, and their TRACE / FRAME output.
 *
 * A trace is a sequence of (method, line) frames, innermost first, at most depth=
 * frames; with thread=y the thread is part of its identity, as the spec's "TRACE n:
 * (thread=t)" shows. Traces are interned (one record per distinct sequence, numbered from
 * 1 in order of first use) and never freed, so CPU samples, sites and monitor times can
 * point at them. lineno=n replaces every line by "unknown" (-1) before interning, so
 * traces that differ only in lines become one. A trace is written once, before the first
 * dump that follows its creation: ASCII TRACE blocks, or binary FRAME + TRACE records.
 *
 * trace_capture runs GetCallTrace on the thread named (its own, or one the sampler has
 * suspended) and, for a method HPROF has no CLASS_LOAD for, asks for it (GetMethodClass,
 * RequestEvent(CLASS_LOAD)); it is never called holding data_lock.
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>

struct trace **traces;
size_t ntraces;
static size_t cap_traces, nbuckets, written;
static struct trace **buckets;

static unsigned hash_frames(const JVMPI_CallFrame *f, int n, const struct thr *t)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(unsigned)n ^ (uint64_t)(uintptr_t)t;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)f[i].method_id) * 1099511628211ULL;
        h = (h ^ (uint64_t)(uint32_t)f[i].lineno) * 1099511628211ULL;
    }
    return (unsigned)(h ^ (h >> 32));
}

static void rehash(void)
{
    size_t nb = nbuckets ? nbuckets * 2 : 4096;
    struct trace **b = calloc(nb, sizeof *b);
    if (b == NULL)
        return;
    for (size_t i = 0; i < ntraces; i++) {
        struct trace *t = traces[i];
        t->next = b[t->hash & (nb - 1)];
        b[t->hash & (nb - 1)] = t;
    }
    free(buckets);
    buckets = b;
    nbuckets = nb;
}

/* Holding data_lock. */
struct trace *trace_intern(const JVMPI_CallFrame *f, int n, struct thr *th)
{
    if (n < 0)
        n = 0;
    if (!opt.thread)
        th = NULL;
    unsigned h = hash_frames(f, n, th);
    if (nbuckets > 0)
        for (struct trace *t = buckets[h & (nbuckets - 1)]; t != NULL; t = t->next) {
            if (t->hash != h || t->nframes != n || t->thread != th)
                continue;
            int same = 1;
            for (int i = 0; i < n && same; i++) /* field by field: frames have padding */
                same = t->frames[i].method_id == f[i].method_id && t->frames[i].lineno == f[i].lineno;
            if (same)
                return t;
        }
    if (!grow_array(&traces, &cap_traces, ntraces + 1, sizeof *traces))
        return NULL;
    struct trace *t = calloc(1, sizeof *t + (size_t)n * sizeof *f);
    if (t == NULL)
        return NULL;
    t->serial = (unsigned)ntraces + 1;
    t->hash = h;
    t->thread = th;
    t->nframes = n;
    for (int i = 0; i < n; i++) {
        t->frames[i].method_id = f[i].method_id;
        t->frames[i].lineno = f[i].lineno;
    }
    traces[ntraces++] = t;
    size_t before = nbuckets;
    if (ntraces > nbuckets)
        rehash(); /* links every trace, this one too */
    if (nbuckets == 0) {
        ntraces--;
        free(t);
        return NULL;
    }
    if (nbuckets == before) {
        t->next = buckets[h & (nbuckets - 1)];
        buckets[h & (nbuckets - 1)] = t;
    }
    return t;
}

struct trace *trace_empty(void)
{
    static struct trace *empty;
    if (empty == NULL)
        empty = trace_intern(NULL, 0, NULL);
    return empty;
}

int trace_capture(JNIEnv *env, JVMPI_CallFrame *f, int depth)
{
    JVMPI_CallTrace tr;
    tr.env_id = env;
    tr.num_frames = 0;
    tr.frames = f;
    if (env == NULL || depth <= 0)
        return 0;
    jvmpi->GetCallTrace(&tr, depth);
    int n = tr.num_frames;
    if (n < 0 || n > depth)
        return 0;
    trace_fix(f, n);
    return n;
}

void trace_fix(JVMPI_CallFrame *f, int n)
{
    if (!opt.lineno)
        for (int i = 0; i < n; i++)
            if (f[i].lineno != -3)
                f[i].lineno = -1;
    /* Methods of classes we were not told of: ask for their CLASS_LOAD. */
    jmethodID unknown[16];
    int nu = 0;
    LOCK();
    for (int i = 0; i < n && nu < 16; i++)
        if (f[i].method_id != NULL && meth_find(f[i].method_id) == NULL)
            unknown[nu++] = f[i].method_id;
    UNLOCK();
    for (int i = 0; i < nu; i++)
        meth_resolve(unknown[i]);
}

static void line_text(jint lineno, char *buf, size_t len)
{
    if (lineno > 0)
        snprintf(buf, len, "%d", (int)lineno);
    else if (lineno == -3)
        snprintf(buf, len, "Native method");
    else if (lineno == -2)
        snprintf(buf, len, "Compiled method");
    else
        snprintf(buf, len, "Unknown line");
}

void frame_write_ascii(const JVMPI_CallFrame *f)
{
    struct meth *m = meth_find(f->method_id);
    char line[32];
    line_text(f->lineno, line, sizeof line);
    if (m == NULL)
        io_printf("\t<unknown method %p>(Unknown source:%s)\n", (void *)f->method_id, line);
    else
        io_printf("\t%s.%s(%s:%s)\n", m->cls->disp, m->name,
                  m->cls->source ? m->cls->source : "Unknown source", line);
}

void method_display(jmethodID mid, char *buf, size_t len)
{
    struct meth *m = meth_find(mid);
    if (m == NULL)
        snprintf(buf, len, "<unknown method>");
    else
        snprintf(buf, len, "%s.%s", m->cls->disp, m->name);
}

/* Binary: the FRAME id of (method, line), writing the FRAME record the first time. */
static uint64_t frame_id(const JVMPI_CallFrame *f)
{
    static uint64_t next = 1;
    struct meth *m = meth_find(f->method_id);
    if (m != NULL)
        for (struct frameid *fi = m->frames; fi != NULL; fi = fi->next)
            if (fi->lineno == f->lineno)
                return fi->id;
    uint64_t name = io_utf8_id(m ? m->name : "<unknown method>");
    uint64_t sig = io_utf8_id(m ? m->sig : "");
    uint64_t src = io_utf8_id(m && m->cls->source ? m->cls->source : "Unknown source");
    uint64_t id = next++;
    struct buf b = {0};
    buf_id(&b, id);
    buf_id(&b, name);
    buf_id(&b, sig);
    buf_id(&b, src);
    buf_u4(&b, m ? m->cls->serial : 0);
    buf_u4(&b, (uint32_t)f->lineno);
    if (!b.oom)
        io_record(HPROF_FRAME, &b);
    buf_free(&b);
    if (m != NULL) {
        struct frameid *fi = malloc(sizeof *fi);
        if (fi != NULL) {
            fi->lineno = f->lineno;
            fi->id = id;
            fi->next = m->frames;
            m->frames = fi;
        }
    }
    return id;
}

/* Holding data_lock. */
void trace_write_new(void)
{
    for (; written < ntraces; written++) {
        struct trace *t = traces[written];
        if (!opt.binary) {
            if (t->thread != NULL)
                io_printf("TRACE %u: (thread=%u)\n", t->serial, t->thread->serial);
            else
                io_printf("TRACE %u:\n", t->serial);
            if (t->nframes == 0)
                io_printf("\t<empty>\n");
            for (int i = 0; i < t->nframes; i++)
                frame_write_ascii(&t->frames[i]);
            continue;
        }
        uint64_t *ids = t->nframes ? malloc((size_t)t->nframes * sizeof *ids) : NULL;
        if (t->nframes && ids == NULL)
            continue;
        for (int i = 0; i < t->nframes; i++)
            ids[i] = frame_id(&t->frames[i]);
        struct buf b = {0};
        buf_u4(&b, t->serial);
        buf_u4(&b, t->thread ? t->thread->serial : 0);
        buf_u4(&b, (uint32_t)t->nframes);
        for (int i = 0; i < t->nframes; i++)
            buf_id(&b, ids[i]);
        if (!b.oom)
            io_record(HPROF_TRACE, &b);
        buf_free(&b);
        free(ids);
    }
}
