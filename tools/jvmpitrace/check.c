/* check.c — jvmpitrace check: hold a recording to the JVMPI contract as HotSpot 1.4.2 kept
 * it (reference-behavior.md), record by record in sequence order.
 *
 * The rules, each with the name a violation is reported under:
 *   thread-defined    every event's env_id names a thread whose THREAD_START came and whose
 *                     THREAD_END has not (JVM_SHUT_DOWN, and Java monitor events of a thread
 *                     that is running its exit path, may follow its own THREAD_END: HotSpot's
 *                     order too); a live thread gets no second THREAD_START
 *   class-defined     a class id (OBJECT_ALLOC, GetMethodClass) has a CLASS_LOAD and no
 *                     CLASS_UNLOAD since; no second CLASS_LOAD for a loaded class
 *   method-defined    a method id (method events, INSTRUCTION_START, call trace frames,
 *                     GetMethodClass) is listed by a CLASS_LOAD of a class still loaded;
 *                     COMPILED_METHOD_LOAD comes after the CLASS_LOAD of its method's class
 *   object-defined    an object id an event names (receivers, monitors, JNI references,
 *                     thread objects) was announced (OBJECT_ALLOC, or CLASS_LOAD for a
 *                     mirror) and not freed; no OBJECT_ALLOC for a live id. An id the agent
 *                     then asks for with RequestEvent before its thread's next event is
 *                     counted as a note, not a violation, as that is how JVMPI agents learned
 *                     objects they had not been told about
 *   nesting           per thread, METHOD_EXIT leaves the method last entered; a thread ends
 *                     at depth 0 (threads that ran before the method events were on may hold
 *                     frames entered before: their depth is not judged)
 *   gc-bracket        GC_START and GC_FINISH alternate; OBJECT_FREE, OBJECT_MOVE and
 *                     ARENA_DELETE come inside a bracket
 *   free              OBJECT_FREE only for an id handed out (by any event, call or dump) and
 *                     not freed since
 *   shutdown          JVM_INIT_DONE and JVM_SHUT_DOWN once each; no event after JVM_SHUT_DOWN,
 *                     and no JVMPI call from another thread
 *   dump              dump bytes decode (core/dumpcheck.c) with what CLASS_LOAD said of the
 *                     classes; length and digest agree with the bytes
 *   request           RequestEvent that answers SUCCESS delivered its one event (a hidden
 *                     thread's THREAD_START: none) on the calling thread before returning;
 *                     no requested event without its request
 *   enabled           no event of a type that is not enabled (one already in flight per thread
 *                     when DisableEvent returned may still come); EnableEvent and DisableEvent
 *                     never answer JVMPI_FAIL
 *   pairing           a thread's MONITOR_CONTENDED_ENTERED, MONITOR_WAITED and
 *                     RAW_MONITOR_CONTENDED_ENTERED name the object or monitor of its ENTER or
 *                     WAIT before
 *   null-id           OBJECT_ALLOC, CLASS_LOAD and THREAD_START never carry a NULL id
 * Definitions are complete only for the defining events the agent enabled before
 * JVM_INIT_DONE (in JVM_OnLoad, so that the start-up replay told what exists) and kept on:
 * the rules that need them are skipped otherwise, and the summary says so. Uses before
 * JVM_INIT_DONE are judged at JVM_INIT_DONE (HotSpot's replay announced objects before their
 * classes). After records were lost (LOST, DROPPED), the definition rules are no longer
 * judged from where the first gap began. Each violation names its record (sequence number,
 * thread, fields) and the records it conflicts with.
 */
#include "core/dumpcheck.h"
#include "core/recfmt.h"
#include "trace.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum rule {
    R_THREAD, R_CLASS, R_METHOD, R_OBJECT, R_NESTING, R_GC, R_FREE, R_SHUTDOWN, R_DUMP,
    R_REQUEST, R_ENABLED, R_PAIRING, R_NULL, NRULES
};
static const char *const rule_names[NRULES] = {
    "thread-defined", "class-defined", "method-defined", "object-defined", "nesting",
    "gc-bracket", "free", "shutdown", "dump", "request", "enabled", "pairing", "null-id"};

enum note {
    N_REQUESTED_OBJ, N_OWN_THREAD_OBJ, N_AFTER_END, N_LATE, N_PRE_DEPTH, N_UNVERIFIABLE,
    N_DUMP_NOCLASS, N_STARTUP_RESOLVED, N_GC_OVERLAP, N_DUMP_FREE, NNOTES
};
static const char *const note_names[NNOTES] = {
    "object ids first named by an event and then requested by the agent (RequestEvent)",
    "threads whose own THREAD_START named their Thread object before its OBJECT_ALLOC",
    "events on a thread's exit path after its THREAD_END (JVM_SHUT_DOWN, Java monitor events)",
    "events already in flight when DisableEvent returned",
    "threads running before the method events were on that ended at a depth other than 0",
    "uses not judged because records were lost before them",
    "dumps not decoded: a class they name has no CLASS_LOAD in the recording",
    "ids used during the start-up replay and defined by JVM_INIT_DONE",
    "events of other threads between GC_START and GC_FINISH (not GC-locked, or the shim's gate let them pass)",
    "frees of ids a dump may have handed out in a field or static value (not followed: not judged)",
};

/* Object flags. */
#define O_ALIVE 1u      /* announced by OBJECT_ALLOC (a class mirror may be by CLASS_LOAD too) */
#define O_HANDED 2u     /* handed out some other way */
#define O_REQ 4u        /* announced by a request before any event of its own */

/* A pair of events on one thread whose second must name what the first named (ENTER and
 * ENTERED of a monitor, WAIT and WAITED), unless a disable of either type came between. */
struct pair {
    uint64_t what, seq;         /* the object or monitor the first named, and its record */
    int gen;                    /* disables of the pair's types when the first came */
    bool open;
};
enum { PAIR_MONITOR, PAIR_WAIT, PAIR_RAW, PAIRS };

struct thr {
    uint64_t env;
    int state;                  /* 1 live, 2 ended */
    bool strict, pre, lossy;
    uint64_t start_seq, end_seq;
    size_t end_stream;
    uint64_t *stack, *stack_seq;
    size_t depth, cap;
    uint64_t entry2;            /* ENTRY2 just posted: its ENTRY does not nest again */
    int late_gen[64];
    struct pair pair[PAIRS];
};

struct cls {
    bool loaded, req;
    uint64_t load_seq, unload_seq;
    int nif, nst;
    char *types;
};

struct request {
    int type;
    uint64_t seq;
    int count;
};

struct pend {
    uint64_t id, seq;
    int type;
    const char *what;
};

struct sst {                    /* per stream */
    struct request req[16];
    int nreq;
    int enable_t;               /* the event of an EnableEvent/DisableEvent in progress, or -1 */
    bool enable_was_on;
    struct pend *pend;
    size_t npend, cappend;
};

struct ck {
    struct tr_file *f;
    struct tr_names names;
    const struct check_opts *o;
    struct tr_map threads, objs, freed, classes, methods, later, startup;
    struct sst *ss;
    uint64_t violations[NRULES], notes[NNOTES];
    bool on[64], complete[64], init_done, methods_broken;
    int gen[64];
    bool in_gc;
    uint64_t gc_seq;
    size_t gc_stream;
    uint64_t shut_seq, init_seq;
    size_t shut_stream;
    bool shut, shut_done;
    bool dump_values;           /* a dump handed out ids in values not followed */
    char line[4096];
};

/* Records were dropped (LOST, DROPPED) from some point on: a definition may be missing
 * from then on, so the rules that need one are not judged after it. */
static bool lossy(const struct ck *c, const struct tr_rec *r)
{
    return r != NULL && r->seq > c->names.lost_from;
}

static void violation(struct ck *c, enum rule rule, const struct tr_rec *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void violation(struct ck *c, enum rule rule, const struct tr_rec *r, const char *fmt, ...)
{
    if (c->violations[rule]++ >= (uint64_t)c->o->max_per_rule || c->o->quiet)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(c->o->out, "VIOLATION %s: %s\n", rule_names[rule], msg);
    if (r != NULL) {
        tr_format(c->f, &c->names, r, false, c->line, sizeof c->line);
        fprintf(c->o->out, "    %s\n", c->line);
    }
}

static const char *tname(struct ck *c, uint64_t env)
{
    static char b[4][256];
    static int k;
    k = (k + 1) & 3;
    return tr_thread_name(&c->names, env, b[k], sizeof b[k]);
}

/* The pairs: the two event types (a disable of either between them voids the check) and
 * how a mismatch reads. */
static const struct {
    int first, second;
    const char *mismatch;       /* "<second> <relation> the <first>" */
    bool name_thread;
} pairs[PAIRS] = {
    [PAIR_MONITOR] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                      "MONITOR_CONTENDED_ENTERED of another object than the "
                      "MONITOR_CONTENDED_ENTER", true},
    [PAIR_WAIT] = {JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED,
                   "MONITOR_WAITED on another object than the MONITOR_WAIT", true},
    [PAIR_RAW] = {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
                  "RAW_MONITOR_CONTENDED_ENTERED of another monitor than the "
                  "RAW_MONITOR_CONTENDED_ENTER", false},
};

static int pair_gen(const struct ck *c, int k)
{
    return c->gen[pairs[k].first] + c->gen[pairs[k].second];
}

static void pair_open(struct ck *c, struct thr *th, int k, const struct tr_rec *r, uint64_t what)
{
    if (th == NULL)
        return;
    th->pair[k] = (struct pair){.what = what, .seq = r->seq, .gen = pair_gen(c, k), .open = true};
}

static void pair_close(struct ck *c, struct thr *th, int k, const struct tr_rec *r, uint64_t what)
{
    if (th == NULL)
        return;
    struct pair *p = &th->pair[k];
    if (p->open && p->what != what && p->gen == pair_gen(c, k)) {
        if (pairs[k].name_thread)
            violation(c, R_PAIRING, r, "%s #%llu of %s", pairs[k].mismatch,
                      (unsigned long long)p->seq, tname(c, th->env));
        else
            violation(c, R_PAIRING, r, "%s #%llu", pairs[k].mismatch, (unsigned long long)p->seq);
    }
    p->open = false;
}

static const char *mname(struct ck *c, uint64_t m)
{
    static char b[4][512];
    static int k;
    k = (k + 1) & 3;
    return tr_method_name(&c->names, m, b[k], sizeof b[k]);
}

static const char *cname(struct ck *c, uint64_t id)
{
    static char b[4][512];
    static int k;
    k = (k + 1) & 3;
    return tr_class_name(&c->names, id, b[k], sizeof b[k]);
}

static const char *ename(int t)
{
    const char *n = rec_event_name(t);
    return n != NULL ? n : "?";
}

static uint64_t oflags(struct ck *c, uint64_t id)
{
    return (uint64_t)(uintptr_t)tr_map_get(&c->objs, id);
}

static bool class_loaded(struct ck *c, uint64_t id);

/* Defined: announced by OBJECT_ALLOC, or a loaded class's mirror. */
static bool defined(struct ck *c, uint64_t id)
{
    return (oflags(c, id) & O_ALIVE) || class_loaded(c, id);
}

static void set_oflags(struct ck *c, uint64_t id, uint64_t fl)
{
    tr_map_put(&c->objs, id, (void *)(uintptr_t)fl);
}

static struct thr *thread(struct ck *c, uint64_t env)
{
    return tr_map_get(&c->threads, env);
}

static struct thr *new_thread(struct ck *c, uint64_t env)
{
    struct thr *t = thread(c, env);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL || !tr_map_put(&c->threads, env, t)) {
            free(t);
            return NULL;
        }
    }
    free(t->stack);
    free(t->stack_seq);
    memset(t, 0, sizeof *t);
    t->env = env;
    return t;
}

static bool method_events_on(const struct ck *c)
{
    return (c->on[1] || c->on[2]) && c->on[3];
}

static void push_frame(struct thr *t, uint64_t m, uint64_t seq)
{
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        uint64_t *s = realloc(t->stack, cap * sizeof *s), *q;
        if (s == NULL)
            return;
        t->stack = s;
        q = realloc(t->stack_seq, cap * sizeof *q);
        if (q == NULL)
            return;
        t->stack_seq = q;
        t->cap = cap;
    }
    t->stack[t->depth] = m;
    t->stack_seq[t->depth] = seq;
    t->depth++;
}

/* ---- definitions ---- */

static bool class_loaded(struct ck *c, uint64_t id)
{
    struct cls *k = tr_map_get(&c->classes, id);
    return k != NULL && k->loaded;
}

/* An object id used by an event or call: defined, or pending a request on this stream,
 * or (before JVM_INIT_DONE) judged at JVM_INIT_DONE. */
static void use_object(struct ck *c, const struct tr_rec *r, uint64_t id, int type, const char *what)
{
    if (id == 0)
        return;
    uint64_t fl = oflags(c, id);
    if (defined(c, id))
        return;
    if (!c->complete[JVMPI_EVENT_OBJECT_ALLOC]) {
        set_oflags(c, id, fl | O_HANDED);
        return;
    }
    if (lossy(c, r)) {
        c->notes[N_UNVERIFIABLE]++;
        return;
    }
    if (!c->init_done) {
        tr_map_put(&c->startup, id, (void *)(uintptr_t)r->seq);
        return;
    }
    struct sst *s = &c->ss[r->stream];
    if (s->npend == s->cappend) {
        size_t cap = s->cappend ? s->cappend * 2 : 8;
        struct pend *p = realloc(s->pend, cap * sizeof *p);
        if (p == NULL)
            return;
        s->pend = p;
        s->cappend = cap;
    }
    s->pend[s->npend++] = (struct pend){id, r->seq, type, what};
    set_oflags(c, id, fl | O_HANDED);
}

/* The stream's next event came: what its handler did not request was never announced. */
static void settle_pending(struct ck *c, size_t stream)
{
    struct sst *s = &c->ss[stream];
    for (size_t i = 0; i < s->npend; i++) {
        struct pend *p = &s->pend[i];
        if (defined(c, p->id)) {
            c->notes[N_REQUESTED_OBJ]++;
            continue;
        }
        if (p->seq > c->names.lost_from) {
            c->notes[N_UNVERIFIABLE]++;
            continue;
        }
        uint64_t freed = (uint64_t)(uintptr_t)tr_map_get(&c->freed, p->id);
        if (freed != 0)
            violation(c, R_OBJECT, NULL, "#%llu %s: %s obj@%#llx was freed by OBJECT_FREE #%llu "
                      "(and not announced again)", (unsigned long long)p->seq, ename(p->type),
                      p->what, (unsigned long long)p->id, (unsigned long long)freed);
        else
            violation(c, R_OBJECT, NULL, "#%llu %s: %s obj@%#llx was never announced by "
                      "OBJECT_ALLOC (nor requested by the agent)", (unsigned long long)p->seq,
                      ename(p->type), p->what, (unsigned long long)p->id);
    }
    s->npend = 0;
}

static void use_class(struct ck *c, const struct tr_rec *r, uint64_t id, const char *what)
{
    if (id == 0 || !c->complete[JVMPI_EVENT_CLASS_LOAD] || class_loaded(c, id))
        return;
    if (lossy(c, r)) {
        c->notes[N_UNVERIFIABLE]++;
        return;
    }
    if (!c->init_done) {
        tr_map_put(&c->startup, id, (void *)(uintptr_t)r->seq);
        return;
    }
    struct cls *k = tr_map_get(&c->classes, id);
    if (k != NULL)
        violation(c, R_CLASS, r, "%s %s was unloaded by CLASS_UNLOAD #%llu", what, cname(c, id),
                  (unsigned long long)k->unload_seq);
    else
        violation(c, R_CLASS, r, "%s class@%#llx has no CLASS_LOAD", what, (unsigned long long)id);
}

static void use_method(struct ck *c, const struct tr_rec *r, uint64_t m, bool may_be_unloaded, const char *what)
{
    if (m == 0 || !c->complete[JVMPI_EVENT_CLASS_LOAD])
        return;
    uint64_t cid = (uint64_t)(uintptr_t)tr_map_get(&c->methods, m);
    if (cid == 0) {
        if (lossy(c, r)) {
            c->notes[N_UNVERIFIABLE]++;
            return;
        }
        violation(c, R_METHOD, r, "%s %s is listed by no CLASS_LOAD before it", what, mname(c, m));
        return;
    }
    if (!may_be_unloaded && !class_loaded(c, cid)) {
        struct cls *k = tr_map_get(&c->classes, cid);
        violation(c, R_METHOD, r, "%s %s: its class was unloaded by CLASS_UNLOAD #%llu", what,
                  mname(c, m), (unsigned long long)(k ? k->unload_seq : 0));
    }
}

/* The thread an event names: defined and not ended (when THREAD_START and THREAD_END are
 * complete). */
static struct thr *event_thread(struct ck *c, const struct tr_rec *r, int t)
{
    uint64_t env = tr_u(r, F_ENV);
    struct thr *th = thread(c, env);
    if (!c->complete[JVMPI_EVENT_THREAD_START])
        return th;
    if (env == 0) {
        violation(c, R_THREAD, r, "%s with env_id NULL", ename(t));
        return NULL;
    }
    if (th != NULL && th->state == 1)
        return th;
    if (th != NULL && th->state == 2) {
        bool here = th->end_stream == r->stream;
        if (here && (t == JVMPI_EVENT_JVM_SHUT_DOWN || (t >= JVMPI_EVENT_MONITOR_CONTENDED_ENTER &&
                                                        t <= JVMPI_EVENT_MONITOR_CONTENDED_EXIT))) {
            c->notes[N_AFTER_END]++;
            return NULL;
        }
        if (!c->complete[JVMPI_EVENT_THREAD_END])
            return th;
        violation(c, R_THREAD, r, "%s on thread %s after its THREAD_END #%llu", ename(t),
                  tname(c, env), (unsigned long long)th->end_seq);
        return NULL;
    }
    if (lossy(c, r)) {
        c->notes[N_UNVERIFIABLE]++;
        return NULL;
    }
    violation(c, R_THREAD, r, "%s names thread %s, which had no THREAD_START", ename(t), tname(c, env));
    return NULL;
}

/* ---- dumps ---- */

struct dumpctx {
    struct ck *c;
    bool missing;
    uint64_t missing_id;
    bool values;                /* a record holds ids in field or static values */
};

static bool dump_lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    struct dumpctx *d = ctx;
    struct cls *k = tr_map_get(&d->c->classes, id);
    if (k == NULL || k->types == NULL) {
        d->missing = true;
        d->missing_id = id;
        return false;
    }
    out->num_interfaces = k->nif;
    out->n_statics = k->nst;
    out->static_types = k->types;
    return true;
}

static void handed(struct ck *c, uint64_t id)
{
    if (id != 0 && !defined(c, id))
        set_oflags(c, id, oflags(c, id) | O_HANDED);
}

static void dump_record(void *ctx, const struct dump_record *dr)
{
    struct dumpctx *d = ctx;
    /* Objects a dump names are handed out: their frees are due. The elements of an object
     * array are read; ids in instance fields and statics are not followed (their types
     * come from class chains the dump may not hold), which the free rule then allows for. */
    if (dr->type == JVMPI_GC_INSTANCE_DUMP || dr->type == JVMPI_GC_OBJ_ARRAY_DUMP ||
        dr->type == JVMPI_GC_PRIM_ARRAY_DUMP || dr->type < 0x20)
        handed(d->c, dr->id);
    if (dr->type == JVMPI_GC_OBJ_ARRAY_DUMP)
        for (size_t i = 0; i + 8 <= dr->data_len; i += 8) {
            uint64_t e;
            memcpy(&e, dr->data + i, 8);
            handed(d->c, e);
        }
    if ((dr->type == JVMPI_GC_INSTANCE_DUMP || dr->type == JVMPI_GC_CLASS_DUMP) && dr->data_len > 0)
        d->values = true;
}

static void check_dump(struct ck *c, const struct tr_rec *r, int t)
{
    const struct tr_val *data = tr_get(r, F_DATA), *sum = tr_get(r, F_SUMMARY);
    uint64_t len = tr_u(r, F_LENGTH), dg = tr_u(r, F_DIGEST);
    if (data == NULL || data->null) {
        const struct tr_field *sf = tr_field_of(r, F_SUMMARY);
        for (size_t j = 0; sum != NULL && sf != NULL && j < sum->n; j++) {
            const struct tr_val *rt = tr_item(sf, sum, j, F_RECORD_TYPE), *cnt = tr_item(sf, sum, j, F_COUNT);
            if (rt != NULL && rt->u == 0x100)
                violation(c, R_DUMP, r, "%s of %llu bytes (not recorded whole): the recorder's "
                          "walk stopped at offset %llu", ename(t), (unsigned long long)len,
                          (unsigned long long)(cnt ? cnt->u : 0));
        }
        return;
    }
    if (data->len != len || (dg != 0 && rec_xxh64(data->s, data->len) != dg)) {
        tr_damage(c->f, r->offset, "the %s record at offset %zu: its bytes do not match its "
                  "length or digest", ename(t), r->offset);
        return;
    }
    struct dumpctx d = {c, false, 0, false};
    size_t bad = 0;
    char msg[256] = "";
    int rc;
    /* The dump's ids are as wide as the recording shim's pointers (its header says): a
     * recording made on i386 is read here whatever this reader's own width. */
    const char *ps = tr_header(c->f, "pointer_size");
    int idw = ps != NULL && atoi(ps) == 4 ? 4 : 8;
    if (t == JVMPI_EVENT_MONITOR_DUMP)
        rc = dump_walk_monitor_w(data->s, data->len, idw, dump_record, &d, &bad, msg, sizeof msg);
    else
        rc = dump_walk_heap_w(data->s, data->len, idw,
                              t == JVMPI_EVENT_HEAP_DUMP ? (int)tr_i(r, F_LEVEL) : 2,
                              dump_lookup, &d, dump_record, &d, &bad, msg, sizeof msg);
    if (d.values || rc != 0) /* ids in values, or ids past where the walk stopped */
        c->dump_values = true;
    if (rc == 0)
        return;
    if (d.missing) {
        if (c->complete[JVMPI_EVENT_CLASS_LOAD] && !lossy(c, r))
            violation(c, R_DUMP, r, "%s: its CLASS_DUMP of class@%#llx (offset %zu) names a class "
                      "no CLASS_LOAD defined", ename(t), (unsigned long long)d.missing_id, bad);
        else
            c->notes[N_DUMP_NOCLASS]++;
        return;
    }
    violation(c, R_DUMP, r, "%s does not decode at offset %zu of %zu: %s", ename(t), bad, data->len, msg);
}

/* ---- records ---- */

static void on_class_load(struct ck *c, const struct tr_rec *r, bool requested)
{
    uint64_t id = tr_u(r, F_CLASS);
    if (id == 0) {
        violation(c, R_NULL, r, "CLASS_LOAD with class_id NULL");
        return;
    }
    struct cls *k = tr_map_get(&c->classes, id);
    if (k == NULL) {
        k = calloc(1, sizeof *k);
        if (k == NULL || !tr_map_put(&c->classes, id, k)) {
            free(k);
            return;
        }
    } else if (k->loaded && !requested) {
        if (k->req)
            k->req = false; /* the agent asked first; the class's own CLASS_LOAD follows */
        else
            violation(c, R_CLASS, r, "a second CLASS_LOAD of %s, loaded by #%llu and not unloaded",
                      cname(c, id), (unsigned long long)k->load_seq);
    }
    if (!k->loaded || !requested)
        k->load_seq = r->seq;
    if (!k->loaded && requested)
        k->req = true;
    k->loaded = true;
    k->nif = (int)tr_i(r, F_NUM_INTERFACES);
    const struct tr_val *st = tr_get(r, F_STATICS);
    const struct tr_field *sf = tr_field_of(r, F_STATICS);
    if (st != NULL && sf != NULL) {
        char *types = malloc(st->n + 1);
        if (types != NULL) {
            for (size_t j = 0; j < st->n; j++) {
                const struct tr_val *sig = tr_item(sf, st, j, F_SIGNATURE);
                char ch = sig != NULL && !sig->null && sig->len > 0 ? (char)sig->s[0] : 'L';
                types[j] = ch == '[' ? 'L' : ch;
            }
            types[st->n] = '\0';
            free(k->types);
            k->types = types;
            k->nst = (int)st->n;
        }
    }
    const struct tr_val *ms = tr_get(r, F_METHODS);
    const struct tr_field *mf = tr_field_of(r, F_METHODS);
    for (size_t j = 0; ms != NULL && mf != NULL && j < ms->n; j++) {
        const struct tr_val *m = tr_item(mf, ms, j, F_METHOD);
        if (m != NULL && m->u != 0)
            tr_map_put(&c->methods, m->u, (void *)(uintptr_t)id);
    }
}

static void on_object_alloc(struct ck *c, const struct tr_rec *r, bool requested)
{
    uint64_t id = tr_u(r, F_OBJECT);
    int64_t is_array = tr_i(r, F_IS_ARRAY);
    if (is_array == 0 || is_array == 2) /* JVMPI_NORMAL_OBJECT, JVMPI_CLASS */
        use_class(c, r, tr_u(r, F_CLASS), "OBJECT_ALLOC's class");
    if (id == 0) {
        violation(c, R_NULL, r, "OBJECT_ALLOC with obj_id NULL");
        return;
    }
    uint64_t fl = oflags(c, id);
    if ((fl & O_ALIVE) && !requested) {
        if (fl & O_REQ)
            fl &= ~O_REQ;
        else if (c->complete[JVMPI_EVENT_OBJECT_ALLOC])
            violation(c, R_OBJECT, r, "OBJECT_ALLOC of obj@%#llx, an id that is alive",
                      (unsigned long long)id);
    } else if (!(fl & O_ALIVE) && requested) {
        fl |= O_REQ;
    }
    set_oflags(c, id, fl | O_ALIVE);
    if (tr_map_get(&c->later, id) != NULL) {
        tr_map_put(&c->later, id, NULL);
        c->notes[N_OWN_THREAD_OBJ]++;
    }
    tr_map_put(&c->freed, id, NULL);
}

static void on_free(struct ck *c, const struct tr_rec *r)
{
    uint64_t id = tr_u(r, F_OBJECT);
    if (c->on[JVMPI_EVENT_GC_START] && c->on[JVMPI_EVENT_GC_FINISH] && !c->in_gc)
        violation(c, R_GC, r, "OBJECT_FREE outside GC_START/GC_FINISH");
    uint64_t fl = oflags(c, id);
    if (fl == 0) {
        uint64_t was = (uint64_t)(uintptr_t)tr_map_get(&c->freed, id);
        if (lossy(c, r))
            c->notes[N_UNVERIFIABLE]++;
        else if (was == 0 && c->dump_values)
            c->notes[N_DUMP_FREE]++;
        else if (was != 0)
            violation(c, R_FREE, r, "obj@%#llx was freed already by #%llu", (unsigned long long)id,
                      (unsigned long long)was);
        else
            violation(c, R_FREE, r, "obj@%#llx was never handed out", (unsigned long long)id);
        return;
    }
    set_oflags(c, id, 0);
    tr_map_put(&c->objs, id, NULL);
    tr_map_put(&c->freed, id, (void *)(uintptr_t)r->seq);
}

static void on_method_entry(struct ck *c, const struct tr_rec *r, struct thr *th, int t)
{
    uint64_t m = tr_u(r, F_METHOD);
    use_method(c, r, m, false, ename(t));
    if (t == JVMPI_EVENT_METHOD_ENTRY2)
        use_object(c, r, tr_u(r, F_OBJECT), t, "the receiver");
    if (th == NULL)
        return;
    if (t == JVMPI_EVENT_METHOD_ENTRY && th->entry2 == m && m != 0) {
        th->entry2 = 0; /* ENTRY2 then ENTRY for one call (HotSpot's order) */
        return;
    }
    th->entry2 = t == JVMPI_EVENT_METHOD_ENTRY2 && c->on[JVMPI_EVENT_METHOD_ENTRY] ? m : 0;
    if (c->on[JVMPI_EVENT_METHOD_EXIT]) /* a frame whose exit will be told */
        push_frame(th, m, r->seq);
}

static void on_method_exit(struct ck *c, const struct tr_rec *r, struct thr *th)
{
    uint64_t m = tr_u(r, F_METHOD);
    use_method(c, r, m, false, "METHOD_EXIT");
    if (th == NULL)
        return;
    th->entry2 = 0;
    if (th->depth == 0) {
        if (th->strict)
            violation(c, R_NESTING, r, "METHOD_EXIT of %s on %s, which is inside no method", mname(c, m),
                      tname(c, th->env));
        return;
    }
    /* Frames entered before the events were on lie below every recorded one: a recorded
     * frame is left first, whatever the thread. */
    if (th->stack[th->depth - 1] != m && !c->methods_broken && !th->lossy)
        violation(c, R_NESTING, r, "METHOD_EXIT of %s on %s, inside %s entered at #%llu", mname(c, m),
                  tname(c, th->env), mname(c, th->stack[th->depth - 1]),
                  (unsigned long long)th->stack_seq[th->depth - 1]);
    th->depth--;
}

static void on_thread_start(struct ck *c, const struct tr_rec *r, bool requested)
{
    uint64_t env = tr_u(r, F_THREAD_ENV);
    if (env == 0) {
        violation(c, R_NULL, r, "THREAD_START with thread_env_id NULL");
        return;
    }
    struct thr *th = thread(c, env);
    if (th != NULL && th->state == 1) {
        if (!requested && c->complete[JVMPI_EVENT_THREAD_END])
            violation(c, R_THREAD, r, "a second THREAD_START for %s, started by #%llu and not ended",
                      tname(c, env), (unsigned long long)th->start_seq);
        else
            goto object;
        return;
    }
    th = new_thread(c, env);
    if (th == NULL)
        return;
    th->state = 1;
    th->start_seq = r->seq;
    th->pre = !c->init_done;
    th->strict = c->init_done && method_events_on(c) && !c->methods_broken;
object:;
    uint64_t obj = tr_u(r, F_THREAD_OBJECT);
    /* A thread's own THREAD_START is its first event: its Thread object's OBJECT_ALLOC
     * may come after it (a thread attached through JNI). */
    if (obj != 0 && !defined(c, obj) && c->complete[JVMPI_EVENT_OBJECT_ALLOC] &&
        tr_u(r, F_ENV) == env && c->init_done) {
        tr_map_put(&c->later, obj, (void *)(uintptr_t)r->seq);
        set_oflags(c, obj, oflags(c, obj) | O_HANDED);
        return;
    }
    use_object(c, r, obj, JVMPI_EVENT_THREAD_START, "the thread object");
}

static void on_thread_end(struct ck *c, const struct tr_rec *r, struct thr *th)
{
    if (th == NULL)
        return;
    if (th->depth != 0) {
        if (th->strict)
            violation(c, R_NESTING, r, "thread %s ended inside %zu frames (the innermost %s, "
                      "entered at #%llu)", tname(c, th->env), th->depth,
                      mname(c, th->stack[th->depth - 1]), (unsigned long long)th->stack_seq[th->depth - 1]);
        else
            c->notes[N_PRE_DEPTH]++;
    }
    th->state = 2;
    th->end_seq = r->seq;
    th->end_stream = r->stream;
    th->depth = 0;
}

static void on_event(struct ck *c, const struct tr_rec *r)
{
    int t = tr_event_of(r->code);
    bool requested = tr_requested(r->code);
    struct sst *s = &c->ss[r->stream];
    /* After JVM_SHUT_DOWN, only its own handler's thread still hears of something (what
     * it requests), until the handler returns. */
    if (c->shut && (c->shut_done || r->stream != c->shut_stream))
        violation(c, R_SHUTDOWN, r, "%s after JVM_SHUT_DOWN #%llu%s", ename(t), (unsigned long long)c->shut_seq,
                  c->shut_done ? " had been handled" : ", on another thread");
    if (requested) {
        if (s->nreq > 0 && s->req[s->nreq - 1].type == t)
            s->req[s->nreq - 1].count++;
        else
            violation(c, R_REQUEST, r, "a requested %s outside any RequestEvent(%s) of its thread",
                      ename(t), ename(t));
    } else if (s->nreq == 0) {
        settle_pending(c, r->stream); /* its handler is over: what it did not ask for stays unknown */
    }
    struct thr *th = NULL;
    if (t != JVMPI_EVENT_THREAD_START || requested)
        th = event_thread(c, r, t);
    else if (tr_u(r, F_ENV) != tr_u(r, F_THREAD_ENV))
        th = event_thread(c, r, t); /* a THREAD_START posted on another thread names that one */
    if (!requested && !c->on[t]) {
        struct thr *lt = th != NULL ? th : thread(c, tr_u(r, F_ENV));
        if (c->gen[t] > 0 && lt != NULL && lt->late_gen[t] != c->gen[t]) {
            lt->late_gen[t] = c->gen[t];
            c->notes[N_LATE]++;
        } else {
            violation(c, R_ENABLED, r, "%s, a type not enabled", ename(t));
        }
    }
    if (c->in_gc && r->stream != c->gc_stream && t != JVMPI_EVENT_GC_FINISH && t != JVMPI_EVENT_OBJECT_FREE)
        c->notes[N_GC_OVERLAP]++;
    /* Nesting is followed per thread even without THREAD_START (not strict then). */
    struct thr *nt = th;
    if (nt == NULL && t >= JVMPI_EVENT_METHOD_ENTRY && t <= JVMPI_EVENT_METHOD_EXIT && tr_u(r, F_ENV) != 0) {
        nt = thread(c, tr_u(r, F_ENV));
        if (nt == NULL && (nt = new_thread(c, tr_u(r, F_ENV))) != NULL)
            nt->state = 0;
        if (nt != NULL && nt->state == 2)
            nt = NULL;
    }
    switch (t) {
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
        on_method_entry(c, r, nt, t);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method_exit(c, r, nt);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_object_alloc(c, r, requested);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_free(c, r);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
    case JVMPI_EVENT_ARENA_DELETE:
        if (c->on[JVMPI_EVENT_GC_START] && c->on[JVMPI_EVENT_GC_FINISH] && !c->in_gc)
            violation(c, R_GC, r, "%s outside GC_START/GC_FINISH", ename(t));
        if (t == JVMPI_EVENT_OBJECT_MOVE) {
            uint64_t from = tr_u(r, F_OBJECT), to = tr_u(r, F_NEW_OBJECT);
            uint64_t fl = oflags(c, from);
            tr_map_put(&c->objs, from, NULL);
            set_oflags(c, to, fl);
        }
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        use_method(c, r, tr_u(r, F_METHOD), false, "COMPILED_METHOD_LOAD of");
        break;
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        use_method(c, r, tr_u(r, F_METHOD), true, "COMPILED_METHOD_UNLOAD of");
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        use_method(c, r, tr_u(r, F_METHOD), false, "INSTRUCTION_START in");
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(c, r, requested);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(c, r, th);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
    case JVMPI_EVENT_OBJECT_DUMP:
    case JVMPI_EVENT_MONITOR_DUMP:
        check_dump(c, r, t);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the referent");
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(c, r, requested);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD: {
        uint64_t id = tr_u(r, F_CLASS);
        struct cls *k = tr_map_get(&c->classes, id);
        if ((k == NULL || !k->loaded) && c->complete[JVMPI_EVENT_CLASS_LOAD] && !lossy(c, r))
            violation(c, R_CLASS, r, "CLASS_UNLOAD of %s, which is not loaded", cname(c, id));
        if (k != NULL) {
            k->loaded = false;
            k->unload_seq = r->seq;
        }
        tr_map_put(&c->objs, id, NULL); /* the mirror's end is told as CLASS_UNLOAD */
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (c->init_done)
            violation(c, R_SHUTDOWN, r, "a second JVM_INIT_DONE (the first #%llu)", (unsigned long long)c->init_seq);
        c->init_done = true;
        c->init_seq = r->seq;
        /* What the start-up replay used must be defined by now. */
        for (size_t i = 0; i < c->startup.cap; i++) {
            uint64_t id = c->startup.keys[i];
            if (id == 0 || c->startup.vals[i] == NULL)
                continue;
            if (defined(c, id))
                c->notes[N_STARTUP_RESOLVED]++;
            else
                violation(c, R_OBJECT, r, "id %#llx, used at #%llu before JVM_INIT_DONE, was still not "
                          "announced at JVM_INIT_DONE", (unsigned long long)id,
                          (unsigned long long)(uintptr_t)c->startup.vals[i]);
        }
        tr_map_free(&c->startup, false);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (c->shut)
            break; /* reported above */
        c->shut = true;
        c->shut_seq = r->seq;
        c->shut_stream = r->stream;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the lock object");
        pair_open(c, th, PAIR_MONITOR, r, tr_u(r, F_OBJECT));
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the lock object");
        pair_close(c, th, PAIR_MONITOR, r, tr_u(r, F_OBJECT));
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the lock object");
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the wait object");
        pair_open(c, th, PAIR_WAIT, r, tr_u(r, F_OBJECT));
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        use_object(c, r, tr_u(r, F_OBJECT), t, "the wait object");
        pair_close(c, th, PAIR_WAIT, r, tr_u(r, F_OBJECT));
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
        pair_open(c, th, PAIR_RAW, r, tr_u(r, F_MONITOR));
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
        pair_close(c, th, PAIR_RAW, r, tr_u(r, F_MONITOR));
        break;
    case JVMPI_EVENT_GC_START:
        if (c->in_gc && c->on[JVMPI_EVENT_GC_FINISH])
            violation(c, R_GC, r, "GC_START inside the bracket opened by GC_START #%llu",
                      (unsigned long long)c->gc_seq);
        c->in_gc = true;
        c->gc_seq = r->seq;
        c->gc_stream = r->stream;
        break;
    case JVMPI_EVENT_GC_FINISH:
        if (!c->in_gc && c->complete[JVMPI_EVENT_GC_START])
            violation(c, R_GC, r, "GC_FINISH without GC_START");
        c->in_gc = false;
        break;
    default:
        break;
    }
}

static void on_call(struct ck *c, const struct tr_rec *r)
{
    int fn = tr_fn_of(r->code);
    size_t si = r->stream;
    if (c->shut_done && fn != 4) /* ProfilerExit still works, as under HotSpot */
        violation(c, R_SHUTDOWN, r, "a JVMPI call that returned after the JVM_SHUT_DOWN handler "
                  "(#%llu) had returned", (unsigned long long)c->shut_seq);
    if (fn == 0 || fn == 1) { /* EnableEvent, DisableEvent */
        int64_t t = tr_i(r, F_EVENT_TYPE);
        c->ss[si].enable_t = t >= 0 && t < 64 ? (int)t : -1;
        if (t == JVMPI_EVENT_METHOD_EXIT && fn == 0 && !c->on[t])
            for (size_t i = 0; i < c->threads.cap; i++) /* frames entered so far never exit */
                if (c->threads.keys[i] != 0)
                    ((struct thr *)c->threads.vals[i])->depth = 0;
        if (t >= 0 && t < 64 && fn == 0) {
            c->ss[si].enable_was_on = c->on[t];
            c->on[t] = true; /* events may come before the call returns */
            /* Enabled before JVM_INIT_DONE: the start-up replay tells what exists. */
            if (!c->init_done)
                c->complete[t] = true;
        }
    } else if (fn == 2) { /* RequestEvent */
        struct sst *s = &c->ss[si];
        if (s->nreq < 16)
            s->req[s->nreq] = (struct request){(int)tr_i(r, F_EVENT_TYPE), r->seq, 0};
        s->nreq++;
    } else if (fn == 23) { /* GetMethodClass */
        use_method(c, r, tr_u(r, F_METHOD), false, "GetMethodClass of");
    }
}

static void on_ret(struct ck *c, const struct tr_rec *r)
{
    int fn = tr_fn_of(r->code);
    size_t si = r->stream;
    if (fn == 0 || fn == 1) {
        int t = c->ss[si].enable_t;
        int64_t res = tr_i(r, F_RESULT);
        if (res == -1)
            violation(c, R_ENABLED, r, "%s answered JVMPI_FAIL, which HotSpot never did",
                      fn == 0 ? "EnableEvent" : "DisableEvent");
        if (t >= 0 && fn == 0 && res != 0 && !c->ss[si].enable_was_on) {
            c->on[t] = false;
            c->complete[t] = false;
        }
        if (t >= 0 && fn == 1 && res == 0 && c->on[t]) {
            c->on[t] = false;
            c->complete[t] = false;
            c->gen[t]++;
            if (t >= 1 && t <= 3)
                c->methods_broken = true;
        }
    } else if (fn == 2) {
        struct sst *s = &c->ss[si];
        if (s->nreq == 0)
            return;
        s->nreq--;
        if (s->nreq >= 16)
            return;
        struct request q = s->req[s->nreq];
        int64_t res = tr_i(r, F_RESULT);
        bool known = q.type == 4 || q.type == 33 || q.type == 42 || q.type == 37 || q.type == 50 || q.type == 59;
        if (res == 0 && known && !(q.count == 1 || (q.type == 33 && q.count == 0)))
            violation(c, R_REQUEST, r, "RequestEvent(%s) #%llu answered SUCCESS and delivered %d "
                      "such events on its thread", ename(q.type), (unsigned long long)q.seq, q.count);
        else if (res != 0 && q.count > 0)
            violation(c, R_REQUEST, r, "RequestEvent(%s) #%llu answered %lld yet delivered %d events",
                      ename(q.type), (unsigned long long)q.seq, (long long)res, q.count);
    } else if (fn == 3) { /* GetCallTrace */
        const struct tr_val *fr = tr_get(r, F_FRAMES);
        const struct tr_field *ff = tr_field_of(r, F_FRAMES);
        for (size_t j = 0; fr != NULL && ff != NULL && j < fr->n; j++) {
            const struct tr_val *m = tr_item(ff, fr, j, F_METHOD);
            if (m != NULL)
                use_method(c, r, m->u, false, "a GetCallTrace frame of");
        }
    } else if (fn == 22 || fn == 25) { /* GetThreadObject, jobject2jobjectID */
        uint64_t id = tr_u(r, F_RESULT);
        if (id != 0 && !defined(c, id))
            set_oflags(c, id, oflags(c, id) | O_HANDED);
    } else if (fn == 23) {
        use_class(c, r, tr_u(r, F_RESULT), "GetMethodClass's answer");
    }
}

static void on_own(struct ck *c, const struct tr_rec *r)
{
    if (r->code == REC_EVENT_DONE && tr_i(r, F_EVENT_TYPE) == JVMPI_EVENT_JVM_SHUT_DOWN && c->shut) {
        c->shut_done = true;
        return;
    }
    if (r->code != REC_LOST && r->code != REC_DROPPED)
        return;
    uint64_t env = r->code == REC_LOST ? tr_stream_env(c->f, r->stream) : tr_u(r, F_THREAD);
    struct thr *th = thread(c, env);
    if (th != NULL) { /* its nesting is unknown from here on */
        th->strict = false;
        th->lossy = true;
        th->depth = 0;
    }
    fprintf(c->o->out, "note: %llu records of thread %s were lost after #%llu (the writer fell "
            "behind)%s\n", (unsigned long long)tr_u(r, F_COUNT), tname(c, env),
            (unsigned long long)tr_u(r, F_AFTER_SEQ),
            r->code == REC_LOST ? "" : ", to the end of its recording");
}

static void free_state(struct ck *c)
{
    for (size_t i = 0; i < c->threads.cap; i++)
        if (c->threads.keys[i] != 0) {
            struct thr *t = c->threads.vals[i];
            free(t->stack);
            free(t->stack_seq);
        }
    for (size_t i = 0; i < c->classes.cap; i++)
        if (c->classes.keys[i] != 0)
            free(((struct cls *)c->classes.vals[i])->types);
    tr_map_free(&c->threads, true);
    tr_map_free(&c->classes, true);
    tr_map_free(&c->objs, false);
    tr_map_free(&c->freed, false);
    tr_map_free(&c->methods, false);
    tr_map_free(&c->later, false);
    tr_map_free(&c->startup, false);
    for (size_t i = 0; c->ss != NULL && i < c->f->nstreams; i++)
        free(c->ss[i].pend);
    free(c->ss);
    tr_names_free(&c->names);
}

int tr_check(struct tr_file *f, const struct check_opts *o)
{
    struct ck *c = calloc(1, sizeof *c);
    if (c == NULL)
        return 2;
    c->f = f;
    c->o = o;
    c->ss = calloc(f->nstreams ? f->nstreams : 1, sizeof *c->ss);
    for (size_t i = 0; c->ss != NULL && i < f->nstreams; i++)
        c->ss[i].enable_t = -1;
    tr_names_load(f, &c->names);
    struct tr_iter *it = tr_iter_new(f);
    if (c->ss == NULL || it == NULL) {
        tr_iter_free(it);
        free_state(c);
        free(c);
        return 2;
    }
    struct tr_rec r;
    uint64_t n = 0;
    while (tr_next(it, &r)) {
        n++;
        switch (tr_kind_of(r.code)) {
        case TK_EVENT:
            on_event(c, &r);
            break;
        case TK_CALL:
            on_call(c, &r);
            break;
        case TK_RET:
            on_ret(c, &r);
            break;
        case TK_OWN:
            on_own(c, &r);
            break;
        }
    }
    tr_iter_free(it);
    for (size_t s = 0; s < f->nstreams; s++)
        settle_pending(c, s);
    for (size_t i = 0; i < c->later.cap; i++)
        if (c->later.keys[i] != 0 && c->later.vals[i] != NULL)
            violation(c, R_OBJECT, NULL, "the THREAD_START #%llu named its thread object obj@%#llx, "
                      "which no OBJECT_ALLOC ever announced", (unsigned long long)(uintptr_t)c->later.vals[i],
                      (unsigned long long)c->later.keys[i]);

    uint64_t total = 0;
    for (int i = 0; i < NRULES; i++)
        total += c->violations[i];
    FILE *out = o->out;
    static const struct { int t; const char *rules; } defs[] = {
        {JVMPI_EVENT_THREAD_START, "thread-defined"}, {JVMPI_EVENT_CLASS_LOAD, "class-defined, method-defined"},
        {JVMPI_EVENT_OBJECT_ALLOC, "object-defined"}};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!c->complete[defs[i].t] && c->gen[defs[i].t] == 0)
            fprintf(out, "not checked: %s (%s was not enabled before JVM_INIT_DONE)\n", defs[i].rules,
                    ename(defs[i].t));
        else if (!c->complete[defs[i].t])
            fprintf(out, "checked until %s was disabled: %s\n", ename(defs[i].t), defs[i].rules);
    for (int i = 0; i < NNOTES; i++)
        if (c->notes[i] > 0)
            fprintf(out, "note: %llu %s\n", (unsigned long long)c->notes[i], note_names[i]);
    for (int i = 0; i < NRULES; i++)
        if (c->violations[i] > 0)
            fprintf(out, "rule %s: %llu violations%s\n", rule_names[i], (unsigned long long)c->violations[i],
                    c->violations[i] > (uint64_t)o->max_per_rule ? " (the first ones printed)" : "");
    if (!f->has_end)
        fprintf(out, "note: no end block: the run did not end normally (killed or crashed)\n");
    else
        fprintf(out, "ended: %s\n", tr_endval(f, "ended") ? tr_endval(f, "ended") : "?");
    if (total == 0)
        fprintf(out, "checked %llu records: the JVMPI contract held\n", (unsigned long long)n);
    else
        fprintf(out, "checked %llu records: %llu violations\n", (unsigned long long)n, (unsigned long long)total);
    free_state(c);
    free(c);
    return total == 0 ? 0 : 1;
}
