/* jvmpitop.c — a small JVMPI profiler, written the way a JDK 1.3 agent was: allocation sites
 * with live/allocated counts, CPU samples, threads; the report in the style of hprof.
 *
 *   java -agentpath:/abs/libjvmpishim.so=legacy=/abs/libjvmpitop.so[:OPTIONS] App
 *   (on JDK 1.3: java -Xrunjvmpitop[:OPTIONS] App)
 *
 * OPTIONS, comma-separated:
 *   file=PATH     where the report goes (default jvmpitop.txt); rewritten at every dump
 *   interval=MS   CPU sampling interval in ms (default 10)
 *   depth=N       stack trace depth, 1..64 (default 4)
 *   top=N         rows per table (default 15)
 *   help          print this and refuse to load
 *
 * How it works (JVMPI only, plus libc):
 *  - CLASS_LOAD builds a class table (class id -> name, source file) and a method table
 *    (method id -> class, name, signature, lines); CLASS_UNLOAD retires a class id.
 *  - OBJECT_ALLOC: the allocating thread's GetCallTrace(depth) is interned as a trace; the
 *    site (class, array kind, trace) counts objects and bytes; obj id -> (site, size) goes into
 *    a hash so OBJECT_FREE can count the site's live objects down. OBJECT_MOVE re-keys.
 *  - GC_START takes the data lock and GC_FINISH releases it: OBJECT_FREE and OBJECT_MOVE
 *    come in between, in thread suspended mode, where an agent may neither block nor malloc.
 *  - THREAD_START / THREAD_END keep a thread list (thread-local storage points at each
 *    thread's record). A system thread, started in JVM_INIT_DONE, wakes every interval ms
 *    and, for every other live thread, does SuspendThread, GetThreadStatus, ThreadHasRun,
 *    GetCallTrace, ResumeThread; running threads' traces are counted as CPU samples.
 *  - JVM_SHUT_DOWN stops the sampler (bounded wait for its acknowledgement), then writes
 *    the report; DATA_DUMP_REQUEST (kill -QUIT) writes it too. Nothing is ever freed that
 *    another thread could still look at: the tables live until the process ends.
 *
 * Locking: one data lock for every table. Event handlers make their JVMPI calls (GetCallTrace,
 * thread-local storage) before taking it and never hold it across one, so a thread the
 * sampler suspends is never holding it; the only holder across VM activity is the thread in
 * a GC bracket (GC_START..GC_FINISH), which the sampler skips. The sampler takes it only
 * between suspensions (hprof held its lock for a whole round; then every allocating thread
 * blocked on it showed as MONITOR_WAIT and fell out of the CPU samples). Raw monitors are
 * reentrant; their names start with '_', so they post no contention events.
 */
#include <jvmpi.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define KIT_NAME "jvmpitop"
#define KIT_OUT stderr
#include "kit/out.h"
#include "kit/jvm.h"

#define MAX_DEPTH 64

static JavaVM *jvm;
static JVMPI_RawMonitor data_lock;      /* every table below */
static JVMPI_RawMonitor sampler_lock;   /* sampler_state; the sampler sleeps on it */

static char opt_file[4096] = "jvmpitop.txt";
static int opt_interval = 10, opt_depth = 4, opt_top = 15;

static struct timeval t_start;
static int alloc_on, free_on, cpu_on;   /* which parts of the profile are available */
static volatile int shut_down;

static char *dup_str(const char *s)
{
    return strdup(s != NULL ? s : "");
}

/* ---- pointer-keyed hash map: open addressing, linear probing, backward-shift deletion.
 * Insertion may grow (malloc); lookup and deletion never allocate. Caller holds data_lock. */

struct pmap {
    void **keys;
    uint64_t *vals;
    size_t cap, n;      /* cap is a power of two, n * 2 <= cap */
};

static size_t pm_home(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static uint64_t *pm_get(const struct pmap *m, const void *key)
{
    if (m->cap == 0 || key == NULL)
        return NULL;
    for (size_t i = pm_home(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == NULL)
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static void pm_insert_raw(struct pmap *m, void *key, uint64_t val)
{
    size_t i = pm_home(key, m->cap);
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->keys[i] == NULL)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

/* Returns 0 when out of memory (the entry is then not stored). */
static int pm_put(struct pmap *m, void *key, uint64_t val)
{
    if (key == NULL)
        return 0;
    if ((m->n + 1) * 2 > m->cap) {
        uint64_t *v = pm_get(m, key);
        if (v != NULL) {
            *v = val;
            return 1;
        }
        size_t cap = m->cap ? m->cap * 2 : 1024;
        void **k = calloc(cap, sizeof *k);
        uint64_t *vs = calloc(cap, sizeof *vs);
        if (k == NULL || vs == NULL) {
            free(k);
            free(vs);
            return 0;
        }
        struct pmap old = *m;
        m->keys = k;
        m->vals = vs;
        m->cap = cap;
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i] != NULL)
                pm_insert_raw(m, old.keys[i], old.vals[i]);
        free(old.keys);
        free(old.vals);
    }
    pm_insert_raw(m, key, val);
    return 1;
}

/* Remove key; returns 1 and its value in *val if it was there. Never allocates, and a
 * pm_put right after a pm_del never needs to grow. */
static int pm_del(struct pmap *m, const void *key, uint64_t *val)
{
    if (m->cap == 0 || key == NULL)
        return 0;
    size_t mask = m->cap - 1, i = pm_home(key, m->cap);
    while (m->keys[i] != key) {
        if (m->keys[i] == NULL)
            return 0;
        i = (i + 1) & mask;
    }
    if (val != NULL)
        *val = m->vals[i];
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == NULL)
            break;
        size_t h = pm_home(m->keys[j], m->cap);
        /* Move entry j into the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = NULL;
    m->n--;
    return 1;
}

/* ---- tables (all under data_lock) ---------------------------------------------------- */

struct cls {
    char *name;         /* Java name: "java.lang.String", "int[]" */
    char *source;       /* "String.java", or NULL */
    int unloaded;
};

struct meth {
    struct cls *cls;
    char *name, *sig;
    jint start, end;
};

struct trace {
    unsigned serial;    /* the "TRACE n" number, from 1, in order of first use */
    unsigned hash;
    struct trace *next; /* hash chain */
    long cpu;           /* CPU samples with this trace */
    int shown;          /* scratch for the report */
    int nframes;
    JVMPI_CallFrame frames[];
};

struct site {
    struct cls *cls;    /* NULL: unknown class (or a primitive array) */
    jint is_array;
    struct trace *trace;
    unsigned hash;
    unsigned index;     /* in sites[] */
    struct site *next;
    long alloc_objs, live_objs;
    long long alloc_bytes, live_bytes;
};

struct thr {
    JNIEnv *env;
    char *name, *group, *parent;
    int serial, live;
    long samples, alloc_objs;
    long long alloc_bytes;
};

static struct pmap classes;     /* class id -> struct cls * */
static struct pmap methods;     /* method id -> struct meth * */
static struct pmap objects;     /* object id -> site index << 32 | size */

static struct trace **traces, **trace_buckets;
static size_t ntraces, cap_traces, ntrace_buckets;

static struct site **sites, **site_buckets;
static size_t nsites, cap_sites, nsite_buckets;

static struct thr **threads;
static size_t nthreads, cap_threads;

static long long total_alloc_objs, total_alloc_bytes, total_free_objs, total_free_bytes;
static long unknown_frees, lost_allocs, gc_count, sample_rounds, total_samples;
static jlong last_used_objects = -1, last_used_space, last_total_space;
static volatile int in_gc;              /* between GC_START and GC_FINISH */
static JNIEnv *volatile gc_env;                 /* the thread that holds data_lock for the GC */

static unsigned hash_frames(const JVMPI_CallFrame *f, int n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)f[i].method_id) * 1099511628211ULL;
        h = (h ^ (uint64_t)(uint32_t)f[i].lineno) * 1099511628211ULL;
    }
    return (unsigned)(h ^ (h >> 32));
}

/* Grow a chained table's bucket array to 2 * *nb (or 1024), re-linking every entry. */
#define REHASH(type, all, n, buckets, nb)                                              \
    do {                                                                               \
        size_t nnb = (nb) ? (nb) * 2 : 1024;                                           \
        type **b = calloc(nnb, sizeof *b);                                             \
        if (b == NULL)                                                                 \
            break;                                                                     \
        for (size_t i_ = 0; i_ < (n); i_++) {                                          \
            type *e_ = (all)[i_];                                                      \
            e_->next = b[e_->hash & (nnb - 1)];                                        \
            b[e_->hash & (nnb - 1)] = e_;                                              \
        }                                                                              \
        free(buckets);                                                                 \
        (buckets) = b;                                                                 \
        (nb) = nnb;                                                                    \
    } while (0)

static int grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)arrp, c * elem);
    if (p == NULL)
        return 0;
    *(void **)arrp = p;
    *cap = c;
    return 1;
}

/* Field by field: a JVMPI_CallFrame has padding after lineno, which memcmp would see. */
static int same_frames(const JVMPI_CallFrame *a, const JVMPI_CallFrame *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].method_id != b[i].method_id || a[i].lineno != b[i].lineno)
            return 0;
    return 1;
}

/* The trace with these frames, made if new; NULL when out of memory. */
static struct trace *trace_intern(const JVMPI_CallFrame *f, int n)
{
    if (n < 0)
        n = 0;
    unsigned h = hash_frames(f, n);
    if (ntrace_buckets > 0)
        for (struct trace *t = trace_buckets[h & (ntrace_buckets - 1)]; t; t = t->next)
            if (t->hash == h && t->nframes == n && same_frames(t->frames, f, n))
                return t;
    if (!grow(&traces, &cap_traces, ntraces + 1, sizeof *traces))
        return NULL;
    struct trace *t = calloc(1, sizeof *t + n * sizeof *f);
    if (t == NULL)
        return NULL;
    t->serial = (unsigned)ntraces + 1;
    t->hash = h;
    t->nframes = n;
    for (int i = 0; i < n; i++) {
        t->frames[i].method_id = f[i].method_id;
        t->frames[i].lineno = f[i].lineno;
    }
    traces[ntraces++] = t;
    size_t before = ntrace_buckets;
    if (ntraces > ntrace_buckets * 2)
        REHASH(struct trace, traces, ntraces, trace_buckets, ntrace_buckets);
    if (ntrace_buckets == before) { /* not rehashed (no need, or no memory): link it */
        if (ntrace_buckets == 0) {
            ntraces--;
            free(t);
            return NULL;
        }
        t->next = trace_buckets[h & (ntrace_buckets - 1)];
        trace_buckets[h & (ntrace_buckets - 1)] = t;
    }
    return t;
}

static struct site *site_get(struct cls *c, jint is_array, struct trace *t)
{
    uint64_t x = ((uint64_t)(uintptr_t)c * 31 + (uint64_t)is_array) * 0x9e3779b97f4a7c15ULL +
                 t->serial;
    unsigned h = (unsigned)(x ^ (x >> 29));
    if (nsite_buckets > 0)
        for (struct site *s = site_buckets[h & (nsite_buckets - 1)]; s; s = s->next)
            if (s->hash == h && s->cls == c && s->is_array == is_array && s->trace == t)
                return s;
    if (!grow(&sites, &cap_sites, nsites + 1, sizeof *sites))
        return NULL;
    struct site *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cls = c;
    s->is_array = is_array;
    s->trace = t;
    s->hash = h;
    s->index = (unsigned)nsites;
    sites[nsites++] = s;
    size_t before = nsite_buckets;
    if (nsites > nsite_buckets * 2)
        REHASH(struct site, sites, nsites, site_buckets, nsite_buckets);
    if (nsite_buckets == before) {
        if (nsite_buckets == 0) {
            nsites--;
            free(s);
            return NULL;
        }
        s->next = site_buckets[h & (nsite_buckets - 1)];
        site_buckets[h & (nsite_buckets - 1)] = s;
    }
    return s;
}

/* An object is gone (OBJECT_FREE): count its site down. No allocation. */
static void object_gone(jobjectID id)
{
    uint64_t v;
    if (!pm_del(&objects, id, &v)) {
        unknown_frees++;
        return;
    }
    size_t si = (size_t)(v >> 32);
    jint size = (jint)(uint32_t)v;
    if (si < nsites) {
        sites[si]->live_objs--;
        sites[si]->live_bytes -= size;
    }
    total_free_objs++;
    total_free_bytes += size;
}

/* ---- names ------------------------------------------------------------------------- */

static const char *prim_name(jint ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: return "boolean";
    case JVMPI_CHAR:    return "char";
    case JVMPI_FLOAT:   return "float";
    case JVMPI_DOUBLE:  return "double";
    case JVMPI_BYTE:    return "byte";
    case JVMPI_SHORT:   return "short";
    case JVMPI_INT:     return "int";
    case JVMPI_LONG:    return "long";
    default:            return NULL;
    }
}

static const char *desc_prim(char c)
{
    switch (c) {
    case 'Z': return "boolean";
    case 'C': return "char";
    case 'F': return "float";
    case 'D': return "double";
    case 'B': return "byte";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    default:  return NULL;
    }
}

/* A class name as Java writes it: "[I" -> "int[]", "[[Lfoo/Bar;" -> "foo.Bar[][]". */
static char *java_name(const char *n)
{
    if (n == NULL)
        return dup_str("<unknown>");
    if (n[0] != '[') {
        char *s = dup_str(n);
        for (char *p = s; p && *p; p++)
            if (*p == '/')
                *p = '.';
        return s;
    }
    int dims = 0;
    while (n[dims] == '[')
        dims++;
    const char *e = n + dims;
    char elem[1024];
    if (*e == 'L') {
        size_t len = strcspn(e + 1, ";");
        if (len >= sizeof elem)
            len = sizeof elem - 1;
        memcpy(elem, e + 1, len);
        elem[len] = 0;
        for (char *p = elem; *p; p++)
            if (*p == '/')
                *p = '.';
    } else {
        snprintf(elem, sizeof elem, "%s", desc_prim(*e) ? desc_prim(*e) : e);
    }
    size_t len = strlen(elem) + 2 * (size_t)dims + 1;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    strcpy(s, elem);
    for (int i = 0; i < dims; i++)
        strcat(s, "[]");
    return s;
}

static const char *cls_name(const struct cls *c)
{
    return c != NULL && c->name != NULL ? c->name : "<unknown>";
}

static void site_name(const struct site *s, char *buf, size_t len)
{
    const char *p = prim_name(s->is_array);
    if (p != NULL)
        snprintf(buf, len, "%s[]", p);
    else if (s->is_array == JVMPI_CLASS)
        snprintf(buf, len, "%s[]", cls_name(s->cls));
    else
        snprintf(buf, len, "%s", cls_name(s->cls));
}

/* "class.method" of a frame's method. */
static void method_name(jmethodID mid, char *buf, size_t len)
{
    uint64_t *v = pm_get(&methods, mid);
    struct meth *m = v ? (struct meth *)(uintptr_t)*v : NULL;
    if (m == NULL)
        snprintf(buf, len, "<unknown>");
    else
        snprintf(buf, len, "%s.%s", cls_name(m->cls), m->name);
}

/* ---- event handlers -------------------------------------------------------------------- */

static void on_class_load(JVMPI_Event *ev)
{
    struct cls *c = calloc(1, sizeof *c);
    jint nm = ev->u.class_load.num_methods;
    if (nm < 0 || ev->u.class_load.methods == NULL)
        nm = 0;
    struct meth *ms = nm ? calloc((size_t)nm, sizeof *ms) : NULL;
    if (c == NULL || (nm && ms == NULL)) {
        free(c);
        free(ms);
        return;
    }
    c->name = java_name(ev->u.class_load.class_name);
    c->source = ev->u.class_load.source_name ? dup_str(ev->u.class_load.source_name) : NULL;
    for (jint i = 0; i < nm; i++) {
        JVMPI_Method *jm = &ev->u.class_load.methods[i];
        ms[i].cls = c;
        ms[i].name = dup_str(jm->method_name);
        ms[i].sig = dup_str(jm->method_signature);
        ms[i].start = jm->start_lineno;
        ms[i].end = jm->end_lineno;
    }
    jvmpi->RawMonitorEnter(data_lock);
    pm_put(&classes, ev->u.class_load.class_id, (uint64_t)(uintptr_t)c);
    for (jint i = 0; i < nm; i++)
        pm_put(&methods, ev->u.class_load.methods[i].method_id, (uint64_t)(uintptr_t)&ms[i]);
    jvmpi->RawMonitorExit(data_lock);
}

static void on_class_unload(JVMPI_Event *ev)
{
    uint64_t v;
    jvmpi->RawMonitorEnter(data_lock);
    /* The record stays: sites and methods still name it. Only the id is retired. */
    if (pm_del(&classes, ev->u.class_unload.class_id, &v))
        ((struct cls *)(uintptr_t)v)->unloaded = 1;
    jvmpi->RawMonitorExit(data_lock);
}

static void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL)
        env = ev->env_id;
    struct thr *old = jvmpi->GetThreadLocalStorage(env);
    if (old != NULL && old->live && old->env == env)
        return; /* told twice */
    struct thr *t = calloc(1, sizeof *t);
    if (t == NULL)
        return;
    t->env = env;
    t->live = 1;
    t->name = dup_str(ev->u.thread_start.thread_name);
    t->group = dup_str(ev->u.thread_start.group_name);
    t->parent = dup_str(ev->u.thread_start.parent_name);
    jvmpi->RawMonitorEnter(data_lock);
    if (grow(&threads, &cap_threads, nthreads + 1, sizeof *threads)) {
        t->serial = (int)nthreads + 1;
        threads[nthreads++] = t;
    }
    jvmpi->RawMonitorExit(data_lock);
    jvmpi->SetThreadLocalStorage(env, t);
}

static void on_thread_end(JVMPI_Event *ev)
{
    struct thr *t = jvmpi->GetThreadLocalStorage(ev->env_id);
    jvmpi->RawMonitorEnter(data_lock);
    if (t == NULL) /* no storage: find it by env */
        for (size_t i = 0; i < nthreads; i++)
            if (threads[i]->live && threads[i]->env == ev->env_id)
                t = threads[i];
    if (t != NULL)
        t->live = 0;
    jvmpi->RawMonitorExit(data_lock);
    jvmpi->SetThreadLocalStorage(ev->env_id, NULL);
}

static void on_object_alloc(JVMPI_Event *ev)
{
    JVMPI_CallFrame frames[MAX_DEPTH];
    JVMPI_CallTrace tr = {ev->env_id, 0, frames};
    /* JVMPI calls first: the data lock is never held across one. */
    if (ev->env_id != NULL)
        jvmpi->GetCallTrace(&tr, opt_depth);
    if (tr.num_frames < 0 || tr.num_frames > opt_depth)
        tr.num_frames = 0;
    struct thr *th = ev->env_id ? jvmpi->GetThreadLocalStorage(ev->env_id) : NULL;
    jint size = ev->u.obj_alloc.size;

    jvmpi->RawMonitorEnter(data_lock);
    struct cls *c = NULL;
    if (ev->u.obj_alloc.class_id != NULL) {
        uint64_t *v = pm_get(&classes, ev->u.obj_alloc.class_id);
        c = v ? (struct cls *)(uintptr_t)*v : NULL;
    }
    struct trace *t = trace_intern(frames, tr.num_frames);
    struct site *s = t ? site_get(c, ev->u.obj_alloc.is_array, t) : NULL;
    total_alloc_objs++;
    total_alloc_bytes += size;
    if (th != NULL) {
        th->alloc_objs++;
        th->alloc_bytes += size;
    }
    if (s == NULL) {
        lost_allocs++;
    } else {
        s->alloc_objs++;
        s->alloc_bytes += size;
        s->live_objs++;
        s->live_bytes += size;
        if (ev->u.obj_alloc.obj_id != NULL) {
            uint64_t *old = pm_get(&objects, ev->u.obj_alloc.obj_id);
            if (old != NULL) /* an id reused without OBJECT_FREE: the old object is gone */
                object_gone(ev->u.obj_alloc.obj_id);
            if (!pm_put(&objects, ev->u.obj_alloc.obj_id,
                        (uint64_t)s->index << 32 | (uint32_t)size))
                lost_allocs++;
        }
    }
    jvmpi->RawMonitorExit(data_lock);
}

/* OBJECT_FREE and OBJECT_MOVE come between GC_START and GC_FINISH on the thread that holds
 * the data lock for the GC; anywhere else (not JVMPI's rule, but harmless) they lock. */
static int gc_locked(JVMPI_Event *ev)
{
    return in_gc && gc_env == ev->env_id;
}

static void on_object_free(JVMPI_Event *ev)
{
    int own = gc_locked(ev);
    if (!own)
        jvmpi->RawMonitorEnter(data_lock);
    object_gone(ev->u.obj_free.obj_id);
    if (!own)
        jvmpi->RawMonitorExit(data_lock);
}

static void on_object_move(JVMPI_Event *ev)
{
    int own = gc_locked(ev);
    uint64_t v;
    if (!own)
        jvmpi->RawMonitorEnter(data_lock);
    /* Delete then insert: never grows, so never allocates. */
    if (pm_del(&objects, ev->u.obj_move.obj_id, &v))
        pm_put(&objects, ev->u.obj_move.new_obj_id, v);
    if (pm_del(&classes, ev->u.obj_move.obj_id, &v))
        pm_put(&classes, ev->u.obj_move.new_obj_id, v);
    if (!own)
        jvmpi->RawMonitorExit(data_lock);
}

static void on_gc_start(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(data_lock);
    in_gc = 1;
    gc_env = ev->env_id;
    gc_count++;
}

static void on_gc_finish(JVMPI_Event *ev)
{
    if (!in_gc)
        jvmpi->RawMonitorEnter(data_lock); /* a GC_FINISH without GC_START */
    last_used_objects = ev->u.gc_info.used_objects;
    last_used_space = ev->u.gc_info.used_object_space;
    last_total_space = ev->u.gc_info.total_object_space;
    in_gc = 0;
    gc_env = NULL;
    jvmpi->RawMonitorExit(data_lock);
}

/* ---- the CPU sampler --------------------------------------------------------------------- */

enum { SAMPLER_NONE, SAMPLER_RUNNING, SAMPLER_STOPPING, SAMPLER_STOPPED };
static int sampler_state;   /* under sampler_lock */

struct victim {
    JNIEnv *env;
    struct thr *t;
};

static void sampler(void *arg)
{
    (void)arg;
    JNIEnv *self = NULL;
    (*jvm)->GetEnv(jvm, (void **)&self, JNI_VERSION_1_2);
    JVMPI_CallFrame frames[MAX_DEPTH];
    struct victim *list = NULL;
    size_t cap = 0;
    for (;;) {
        jvmpi->RawMonitorEnter(sampler_lock);
        if (sampler_state == SAMPLER_RUNNING)
            jvmpi->RawMonitorWait(sampler_lock, opt_interval);
        int stop = sampler_state != SAMPLER_RUNNING;
        jvmpi->RawMonitorExit(sampler_lock);
        if (stop)
            break;

        size_t n = 0;
        jvmpi->RawMonitorEnter(data_lock);
        if (grow(&list, &cap, nthreads, sizeof *list))
            for (size_t i = 0; i < nthreads; i++)
                if (threads[i]->live && threads[i]->env != self) {
                    list[n].env = threads[i]->env;
                    list[n++].t = threads[i];
                }
        jvmpi->RawMonitorExit(data_lock);

        /* No lock while a thread is suspended: event handlers never hold the data lock
         * across a JVMPI call, so a suspended thread cannot be holding it, except the one
         * in a GC bracket (GC_START..GC_FINISH), which is left alone. */
        for (size_t i = 0; i < n; i++) {
            JNIEnv *env = list[i].env;
            if (in_gc && gc_env == env)
                continue;
            JVMPI_CallTrace tr = {env, 0, frames};
            jvmpi->SuspendThread(env);
            jint st = jvmpi->GetThreadStatus(env);
            st &= ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
            if (st == JVMPI_THREAD_RUNNABLE && jvmpi->ThreadHasRun(env))
                jvmpi->GetCallTrace(&tr, opt_depth);
            jvmpi->ResumeThread(env);
            if (tr.num_frames <= 0 || tr.num_frames > opt_depth)
                continue;
            jvmpi->RawMonitorEnter(data_lock);
            struct trace *t = trace_intern(frames, tr.num_frames);
            if (t != NULL) {
                t->cpu++;
                list[i].t->samples++;
                total_samples++;
            }
            jvmpi->RawMonitorExit(data_lock);
        }
        jvmpi->RawMonitorEnter(data_lock);
        sample_rounds++;
        jvmpi->RawMonitorExit(data_lock);
    }
    free(list);
    jvmpi->RawMonitorEnter(sampler_lock);
    sampler_state = SAMPLER_STOPPED;
    jvmpi->RawMonitorNotifyAll(sampler_lock);
    jvmpi->RawMonitorExit(sampler_lock);
}

static void start_sampler(void)
{
    jvmpi->RawMonitorEnter(sampler_lock);
    sampler_state = SAMPLER_RUNNING;
    jvmpi->RawMonitorExit(sampler_lock);
    if (jvmpi->CreateSystemThread("jvmpitop sampler", JVMPI_NORMAL_PRIORITY, sampler) != JNI_OK) {
        say("CreateSystemThread failed: no CPU samples");
        jvmpi->RawMonitorEnter(sampler_lock);
        sampler_state = SAMPLER_NONE;
        jvmpi->RawMonitorExit(sampler_lock);
        return;
    }
    cpu_on = 1;
}

/* Ask the sampler to stop and wait (at most ~2 s) until it says it has. */
static void stop_sampler(void)
{
    jvmpi->RawMonitorEnter(sampler_lock);
    if (sampler_state == SAMPLER_RUNNING) {
        sampler_state = SAMPLER_STOPPING;
        jvmpi->RawMonitorNotifyAll(sampler_lock);
        for (int i = 0; i < 40 && sampler_state != SAMPLER_STOPPED; i++)
            jvmpi->RawMonitorWait(sampler_lock, 50);
        if (sampler_state != SAMPLER_STOPPED)
            say("the sampler did not stop within 2 s; writing the report anyway");
    }
    jvmpi->RawMonitorExit(sampler_lock);
}

/* ---- the report ------------------------------------------------------------------------ */

static double pct(long long part, long long whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static int by_live_bytes(const void *a, const void *b)
{
    const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_cpu(const void *a, const void *b)
{
    const struct trace *x = *(struct trace *const *)a, *y = *(struct trace *const *)b;
    if (x->cpu != y->cpu)
        return x->cpu > y->cpu ? -1 : 1;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static void print_frame(FILE *f, const JVMPI_CallFrame *fr)
{
    uint64_t *v = pm_get(&methods, fr->method_id);
    struct meth *m = v ? (struct meth *)(uintptr_t)*v : NULL;
    char line[32];
    if (fr->lineno == -3)
        snprintf(line, sizeof line, "Native method");
    else if (fr->lineno <= 0)
        snprintf(line, sizeof line, "Unknown line");
    else
        snprintf(line, sizeof line, "%d", (int)fr->lineno);
    if (m == NULL)
        fprintf(f, "\t<unknown>(Unknown source:%s)\n", line);
    else
        fprintf(f, "\t%s.%s(%s:%s)\n", cls_name(m->cls), m->name,
                m->cls && m->cls->source ? m->cls->source : "Unknown source", line);
}

static void mb(char *buf, size_t len, long long bytes)
{
    if (bytes >= 10LL * 1024 * 1024)
        snprintf(buf, len, "%.1f MB", bytes / 1048576.0);
    else
        snprintf(buf, len, "%.1f KB", bytes / 1024.0);
}

/* Caller holds data_lock. */
static void report(FILE *f, const char *why)
{
    time_t now = time(NULL);
    char when[64];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    double secs = (tv.tv_sec - t_start.tv_sec) + (tv.tv_usec - t_start.tv_usec) / 1e6;
    strftime(when, sizeof when, "%a %b %d %H:%M:%S %Y", localtime(&now));
    fprintf(f, "JVMPITOP PROFILE 1.0, created %s (%s)\n\n", when, why);
    fprintf(f, "jvmpitop: a JVMPI profiler agent; JVMPI interface version 0x%x\n",
            (unsigned)jvmpi->version);
    fprintf(f, "options: file=%s interval=%d depth=%d top=%d\n", opt_file, opt_interval,
            opt_depth, opt_top);
    fprintf(f, "profiled for %.2f s: %zu threads, %zu classes and %zu methods known, "
               "%zu traces\n", secs, nthreads, classes.n, methods.n, ntraces);
    char a[32], l[32];
    mb(a, sizeof a, total_alloc_bytes);
    mb(l, sizeof l, total_alloc_bytes - total_free_bytes);
    if (alloc_on)
        fprintf(f, "heap: %lld objects allocated (%s), %lld freed in %ld GCs, %lld live (%s) "
                   "at %zu allocation sites\n", total_alloc_objs, a, total_free_objs, gc_count,
                total_alloc_objs - total_free_objs, l, nsites);
    else
        fprintf(f, "heap: OBJECT_ALLOC is not available: no allocation sites\n");
    if (last_used_objects >= 0)
        fprintf(f, "last GC_FINISH: %lld objects in use, %lld bytes in use, %lld bytes of "
                   "object space\n", (long long)last_used_objects, (long long)last_used_space,
                (long long)last_total_space);
    if (cpu_on)
        fprintf(f, "cpu: %ld samples in %ld rounds, one round every %d ms\n", total_samples,
                sample_rounds, opt_interval);
    else
        fprintf(f, "cpu: the sampler did not run: no CPU samples\n");
    if (unknown_frees || lost_allocs)
        fprintf(f, "note: %ld frees of unknown objects, %ld allocations not attributed "
                   "(out of memory)\n", unknown_frees, lost_allocs);

    /* THREADS */
    int wname = 4, wgroup = 5;
    size_t live = 0;
    for (size_t i = 0; i < nthreads; i++) {
        int n = (int)strlen(threads[i]->name), g = (int)strlen(threads[i]->group);
        wname = n > wname ? (n > 40 ? 40 : n) : wname;
        wgroup = g > wgroup ? (g > 24 ? 24 : g) : wgroup;
        live += threads[i]->live != 0;
    }
    fprintf(f, "\nTHREADS BEGIN (%zu threads started, %zu live now)\n", nthreads, live);
    fprintf(f, "  no  %-*s  %-*s  state  cpu samples  alloc'ed objs  alloc'ed bytes\n", wname,
            "name", wgroup, "group");
    for (size_t i = 0; i < nthreads; i++) {
        struct thr *t = threads[i];
        fprintf(f, "%4d  %-*.*s  %-*.*s  %-5s  %11ld  %13ld  %14lld\n", t->serial, wname, 40,
                t->name, wgroup, 24, t->group, t->live ? "live" : "ended", t->samples,
                t->alloc_objs, t->alloc_bytes);
    }
    fprintf(f, "THREADS END\n");

    /* Choose the rows first: the traces they use are printed before the tables. */
    size_t nsrow = nsites < (size_t)opt_top ? nsites : (size_t)opt_top;
    struct site **ss = malloc((nsites ? nsites : 1) * sizeof *ss);
    struct trace **cs = malloc((ntraces ? ntraces : 1) * sizeof *cs);
    if (ss == NULL || cs == NULL) {
        fprintf(f, "\n(out of memory: no tables)\n");
        free(ss);
        free(cs);
        return;
    }
    memcpy(ss, sites, nsites * sizeof *ss);
    qsort(ss, nsites, sizeof *ss, by_live_bytes);
    size_t ncpu = 0;
    for (size_t i = 0; i < ntraces; i++) {
        traces[i]->shown = 0;
        if (traces[i]->cpu > 0)
            cs[ncpu++] = traces[i];
    }
    qsort(cs, ncpu, sizeof *cs, by_cpu);
    size_t ncrow = ncpu < (size_t)opt_top ? ncpu : (size_t)opt_top;
    for (size_t i = 0; i < nsrow; i++)
        ss[i]->trace->shown = 1;
    for (size_t i = 0; i < ncrow; i++)
        cs[i]->shown = 1;

    /* TRACE blocks, hprof style: the traces the tables below refer to. */
    fputc('\n', f);
    for (size_t i = 0; i < ntraces; i++) {
        struct trace *t = traces[i];
        if (!t->shown)
            continue;
        fprintf(f, "TRACE %u:\n", t->serial);
        if (t->nframes == 0)
            fprintf(f, "\t<empty> (no Java frames)\n");
        for (int k = 0; k < t->nframes; k++)
            print_frame(f, &t->frames[k]);
    }

    /* SITES */
    long long live_b = 0, live_o = 0, alloc_b = 0, alloc_o = 0;
    for (size_t i = 0; i < nsites; i++) {
        live_b += sites[i]->live_bytes;
        live_o += sites[i]->live_objs;
        alloc_b += sites[i]->alloc_bytes;
        alloc_o += sites[i]->alloc_objs;
    }
    fprintf(f, "\nSITES BEGIN (ordered by live bytes; %zu sites, top %zu shown)\n", nsites, nsrow);
    fprintf(f, "           percent              live                alloc'ed     stack  class\n");
    fprintf(f, " rank    self   accum       bytes     objs        bytes     objs     trace  name\n");
    double accum = 0;
    for (size_t i = 0; i < nsrow; i++) {
        struct site *s = ss[i];
        char name[1200];
        site_name(s, name, sizeof name);
        double self = pct(s->live_bytes, live_b);
        accum += self;
        fprintf(f, "%5zu %6.2f%% %6.2f%% %11lld %8ld %12lld %8ld %9u  %s\n", i + 1, self, accum,
                s->live_bytes, s->live_objs, s->alloc_bytes, s->alloc_objs, s->trace->serial,
                name);
    }
    fprintf(f, "total %6.2f%% %7s %11lld %8lld %12lld %8lld %9s  (all %zu sites)\n", 100.0,
            "", live_b, live_o, alloc_b, alloc_o, "", nsites);
    fprintf(f, "SITES END\n");

    /* CPU SAMPLES */
    fprintf(f, "\nCPU SAMPLES BEGIN (total = %ld samples in %ld rounds every %d ms; %zu traces, "
               "top %zu shown)\n", total_samples, sample_rounds, opt_interval, ncpu, ncrow);
    fprintf(f, " rank    self   accum    count     trace  method\n");
    accum = 0;
    for (size_t i = 0; i < ncrow; i++) {
        struct trace *t = cs[i];
        char m[1200];
        method_name(t->frames[0].method_id, m, sizeof m);
        double self = pct(t->cpu, total_samples);
        accum += self;
        fprintf(f, "%5zu %6.2f%% %6.2f%% %8ld %9u  %s\n", i + 1, self, accum, t->cpu, t->serial,
                m);
    }
    fprintf(f, "total %6.2f%% %7s %8ld %9s  (all %zu traces)\n", 100.0, "", total_samples, "",
            ncpu);
    fprintf(f, "CPU SAMPLES END\n");
    free(ss);
    free(cs);
}

/* Write the report to opt_file (through a temporary file, so the file is always whole). */
static void write_report(const char *why)
{
    char tmp[sizeof opt_file + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", opt_file);
    jvmpi->RawMonitorEnter(data_lock);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        jvmpi->RawMonitorExit(data_lock);
        say("cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    report(f, why);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    long long objs = total_alloc_objs;
    long samples = total_samples;
    size_t n = nsites;
    jvmpi->RawMonitorExit(data_lock);
    if (bad || rename(tmp, opt_file) != 0) {
        say("cannot write %s: %s", opt_file, strerror(errno));
        remove(tmp);
        return;
    }
    say("profile written to %s (%lld objects at %zu sites, %ld CPU samples)", opt_file, objs,
        n, samples);
}

/* ---- NotifyEvent and JVM_OnLoad -------------------------------------------------------- */

static void notify_event(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (shut_down && type != JVMPI_EVENT_GC_FINISH) /* GC_FINISH still releases the lock */
        return;
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_object_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_object_free(ev);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
        on_object_move(ev);
        break;
    case JVMPI_EVENT_GC_START:
        on_gc_start(ev);
        break;
    case JVMPI_EVENT_GC_FINISH:
        on_gc_finish(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        start_sampler();
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        write_report("dump on DATA_DUMP_REQUEST");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        stop_sampler();
        write_report("at JVM_SHUT_DOWN");
        shut_down = 1;
        break;
    default:
        break;
    }
}

static void usage(void)
{
    fprintf(stderr,
            "jvmpitop usage: -Xrunjvmpitop[:OPTION,...]  (via the shim: legacy=.../libjvmpitop.so[:OPTION,...])\n"
            "  file=PATH     report file (default jvmpitop.txt)\n"
            "  interval=MS   CPU sampling interval in ms (default 10)\n"
            "  depth=N       stack trace depth, 1..%d (default 4)\n"
            "  top=N         rows per table (default 15)\n"
            "  help          print this\n",
            MAX_DEPTH);
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == 0 || *end != 0 || x < lo || x > hi)
        return 0;
    *out = (int)x;
    return 1;
}

static int parse_options(const char *options)
{
    if (options == NULL || *options == 0)
        return 1;
    char *copy = dup_str(options), *save = NULL;
    int ok = 1;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        const char *val = eq ? eq + 1 : "";
        size_t klen = eq ? (size_t)(eq - tok) : strlen(tok);
        if (klen == 4 && strncmp(tok, "file", 4) == 0 && *val && strlen(val) < sizeof opt_file)
            strcpy(opt_file, val);
        else if (klen == 8 && strncmp(tok, "interval", 8) == 0)
            ok = parse_int(val, 1, 60000, &opt_interval);
        else if (klen == 5 && strncmp(tok, "depth", 5) == 0)
            ok = parse_int(val, 1, MAX_DEPTH, &opt_depth);
        else if (klen == 3 && strncmp(tok, "top", 3) == 0)
            ok = parse_int(val, 1, 1000000, &opt_top);
        else
            ok = 0;
        if (!ok && strcmp(tok, "help") != 0)
            say("bad option '%s'", tok);
    }
    free(copy);
    if (!ok)
        usage();
    return ok;
}

static int enable(jint type, const char *name, int required)
{
    jint rc = jvmpi->EnableEvent(type, NULL);
    if (rc != JVMPI_SUCCESS && required)
        say("cannot enable %s (rc=%d)", name, (int)rc);
    return rc == JVMPI_SUCCESS;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    jvm = vm;
    if (!parse_options(options))
        return JNI_ERR;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("JVMPI is not available (GetEnv(JVMPI_VERSION_1) failed)");
        return JNI_ERR;
    }
    gettimeofday(&t_start, NULL);
    jvmpi->NotifyEvent = notify_event;
    data_lock = jvmpi->RawMonitorCreate("_jvmpitop_data");
    sampler_lock = jvmpi->RawMonitorCreate("_jvmpitop_sampler");
    if (data_lock == NULL || sampler_lock == NULL) {
        say("RawMonitorCreate failed");
        return JNI_ERR;
    }
    int ok = enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD", 1) &
             enable(JVMPI_EVENT_THREAD_START, "THREAD_START", 1) &
             enable(JVMPI_EVENT_THREAD_END, "THREAD_END", 1) &
             enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE", 1) &
             enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN", 1);
    if (!ok)
        return JNI_ERR;
    enable(JVMPI_EVENT_CLASS_UNLOAD, "CLASS_UNLOAD", 0);
    enable(JVMPI_EVENT_DATA_DUMP_REQUEST, "DATA_DUMP_REQUEST", 1);
    /* The heap part: sites need OBJECT_ALLOC; live counts need OBJECT_FREE and the GC. */
    alloc_on = enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC", 1);
    if (alloc_on) {
        free_on = enable(JVMPI_EVENT_GC_START, "GC_START", 1) &
                  enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH", 1) &
                  enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE", 1);
        enable(JVMPI_EVENT_OBJECT_MOVE, "OBJECT_MOVE", 0);
        if (!free_on)
            say("no OBJECT_FREE: live counts are allocation counts");
    }
    return JNI_OK;
}
