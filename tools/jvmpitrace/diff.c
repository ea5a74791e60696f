/* diff.c — jvmpitrace diff: compare two recordings in names, not ids.
 *
 * Each record becomes a key made of names: "METHOD_ENTRY Foo.bar(I)V", "OBJECT_ALLOC
 * java.lang.String", "CLASS_LOAD Foo", "CALL EnableEvent(METHOD_ENTRY)". Both files' keys go
 * into one table with a count per side, grouped into sections (events by kind, JVMPI calls
 * and their answers, classes loaded, methods entered, allocations by class, compilations,
 * threads), and only what differs is printed. Then each thread present on both sides (by
 * name, the n-th thread of a name matched with the n-th) has its sequence of keys compared,
 * and the first point where they part is shown with the records before it. The recorder's
 * own records (names, LOST) are not compared: they depend on first uses, not on the program.
 * Options leave out what always differs between JDKs: their own classes and threads
 * (--ignore-jdk), and the events the VM decides on (--program, --ignore-events).
 */
#include "core/recfmt.h"
#include "trace.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

struct key {
    char *s;
    uint64_t n[2];
};

struct keys {
    struct tr_map index;        /* hash -> key index + 1 (collisions chained by probing the hash) */
    struct key *k;
    size_t n, cap;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

/* The index of key s, added if new; (size_t)-1 when out of memory. */
static size_t intern(struct keys *t, const char *s)
{
    uint64_t h = hash_str(s);
    for (;; h = h * 6364136223846793005ull + 1442695040888963407ull, h = h ? h : 1) {
        size_t i = (size_t)(uintptr_t)tr_map_get(&t->index, h);
        if (i == 0)
            break;
        if (strcmp(t->k[i - 1].s, s) == 0)
            return i - 1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct key *k = realloc(t->k, cap * sizeof *k);
        if (k == NULL)
            return (size_t)-1;
        t->k = k;
        t->cap = cap;
    }
    struct key *k = &t->k[t->n];
    k->s = strdup(s);
    k->n[0] = k->n[1] = 0;
    if (k->s == NULL || !tr_map_put(&t->index, h, (void *)(uintptr_t)(t->n + 1))) {
        free(k->s);
        return (size_t)-1;
    }
    return t->n++;
}

static void count(struct keys *t, int side, const char *s)
{
    size_t i = intern(t, s);
    if (i != (size_t)-1)
        t->k[i].n[side]++;
}

/* One thread's keys in order, for the divergence. */
struct seqs {
    char *name;                 /* "main", or "worker#2" for the second thread of that name */
    uint32_t *key;
    uint64_t *seq;
    size_t n, cap;
};

struct side {
    struct tr_file *f;
    struct tr_names names;
    struct seqs *thr;
    size_t nthr;
    struct tr_map stream_thr;   /* stream + 1 -> thread index + 1 (0: ignored) */
    struct tr_map ignored;      /* stream + 1 -> 1 when its thread is left out */
    bool *in_ignored;           /* per stream: its last event was left out */
    int *last_event;            /* per stream: the JVMPI number of its last event, or 0 */
    struct tr_map obj_class;    /* object id -> its class's name (an interned key) + 1 */
    struct keys *keys;
};

static bool match_any(char **pats, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(pats[i], s, 0) == 0)
            return true;
    return false;
}

static bool class_ignored(const struct diff_opts *o, const char *cls)
{
    if (cls == NULL)
        return false;
    return (o->ignore_jdk && tr_jdk_class(cls)) || match_any(o->ignore_class, o->n_ignore_class, cls);
}

/* The name of a class file's class (this_class), or false if it does not parse. */
static bool classfile_name(const unsigned char *p, size_t n, char *out, size_t len)
{
    if (n < 10 || p[0] != 0xCA || p[1] != 0xFE || p[2] != 0xBA || p[3] != 0xBE)
        return false;
    size_t cpn = (size_t)(p[8] << 8 | p[9]), at = 10;
    size_t *utf = calloc(cpn ? cpn : 1, sizeof *utf), *cls = calloc(cpn ? cpn : 1, sizeof *cls);
    bool ok = false;
    if (utf == NULL || cls == NULL)
        goto out;
    for (size_t i = 1; i < cpn; i++) {
        if (at >= n)
            goto out;
        int tag = p[at];
        size_t sz;
        switch (tag) {
        case 1:
            if (at + 3 > n)
                goto out;
            utf[i] = at;
            sz = 3 + (size_t)(p[at + 1] << 8 | p[at + 2]);
            break;
        case 7:
            if (at + 3 > n)
                goto out;
            cls[i] = (size_t)(p[at + 1] << 8 | p[at + 2]);
            sz = 3;
            break;
        case 8: case 16: case 19: case 20: sz = 3; break;
        case 15: sz = 4; break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: sz = 5; break;
        case 5: case 6: sz = 9; i++; break;
        default: goto out;
        }
        at += sz;
    }
    if (at + 4 > n)
        goto out;
    size_t ci = (size_t)(p[at + 2] << 8 | p[at + 3]);
    if (ci == 0 || ci >= cpn || cls[ci] == 0 || cls[ci] >= cpn || utf[cls[ci]] == 0)
        goto out;
    size_t u = utf[cls[ci]], ul = (size_t)(p[u + 1] << 8 | p[u + 2]);
    if (u + 3 + ul > n)
        goto out;
    snprintf(out, len, "%.*s", (int)ul, (const char *)p + u + 3);
    for (char *c = out; *c; c++)
        if (*c == '/')
            *c = '.';
    ok = true;
out:
    free(utf);
    free(cls);
    return ok;
}

/* A hidden class's name carries an address (RecordWork$$Lambda$1/0x00007f21d8003000 on
 * JDK 17, RecordWork$$Lambda/0x00000000a0080890 on JDK 25): compared without it. */
static void hidden_name(char *s)
{
    char *a = strstr(s, "/0x");
    if (a == NULL)
        a = strstr(s, ".0x");
    if (a == NULL)
        return;
    char *e = a + 3;
    while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f'))
        e++;
    memmove(a, e, strlen(e) + 1);
    char *l = strstr(s, "$$Lambda$");
    if (l != NULL) {
        char *d = l + 9;
        while (*d >= '0' && *d <= '9')
            d++;
        if (d > l + 9)
            memmove(l + 8, d, strlen(d) + 1);
    }
}

static const char *ev_name(int t)
{
    const char *n = rec_event_name(t);
    return n != NULL ? n : "?";
}

static const char *array_type(int64_t t)
{
    static const char *const names[] = {"", "", "", "", "boolean[]", "char[]", "float[]",
                                        "double[]", "byte[]", "short[]", "int[]", "long[]"};
    return t >= 4 && t <= 11 ? names[t] : "?[]";
}

static bool thread_ignored(const struct side *sd, const struct diff_opts *o, const char *group, const char *name);

/* The key of a record, or false to leave it out. cls: the class it is about, if any. */
static bool record_key(struct side *sd, const struct diff_opts *o, const struct tr_rec *r, char *key,
                       size_t len, char *cat, size_t catlen)
{
    char b[512];
    const char *cls = NULL;
    int code = r->code;
    enum tr_kind k = tr_kind_of(code);
    cat[0] = '\0';
    if (k == TK_OWN || o->ignore_event[code])
        return false;
    /* A call is named with the event in whose handler it was made: the last one of its
     * thread (agents call JVMPI from their handlers and from threads of their own). */
    int le = sd->last_event != NULL ? sd->last_event[r->stream] : 0;
    char in[80];
    if (le > 0)
        snprintf(in, sizeof in, " (in %s)", ev_name(le));
    else
        snprintf(in, sizeof in, " (before any event)");
    if (k == TK_RET) {
        int fn = tr_fn_of(code);
        if (fn > 2)
            return false; /* answers vary (CPU times, ids); those of Enable/Disable/Request count */
        int64_t res = tr_i(r, F_RESULT);
        snprintf(key, len, "RET %s = %s%s", rec_fn_name(fn), res == 0 ? "SUCCESS" : res == -1 ? "FAIL" :
                 res == 1 ? "NOT_AVAILABLE" : "other", in);
        snprintf(cat, catlen, "R");
        return true;
    }
    if (k == TK_CALL) {
        int fn = tr_fn_of(code);
        if (fn <= 2) {
            snprintf(key, len, "CALL %s(%s)%s", rec_fn_name(fn), ev_name((int)tr_i(r, F_EVENT_TYPE)), in);
        } else if (fn == 23) {
            const struct tr_method *m = tr_map_get(&sd->names.methods, tr_u(r, F_METHOD));
            cls = m != NULL ? m->cls : NULL;
            snprintf(key, len, "CALL %s(%s)%s", rec_fn_name(fn), tr_method_name(&sd->names, tr_u(r, F_METHOD), b, sizeof b), in);
        } else {
            snprintf(key, len, "CALL %s%s", rec_fn_name(fn) ? rec_fn_name(fn) : tr_code_name(sd->f, code), in);
        }
        snprintf(cat, catlen, "F");
        hidden_name(key);
        return !class_ignored(o, cls);
    }
    int t = tr_event_of(code);
    const char *req = tr_requested(code) ? "+REQUESTED" : "";
    const struct tr_val *v;
    switch (t) {
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
    case JVMPI_EVENT_INSTRUCTION_START: {
        const struct tr_method *m = tr_map_get(&sd->names.methods, tr_u(r, F_METHOD));
        cls = m != NULL ? m->cls : NULL;
        snprintf(key, len, "%s%s %s", ev_name(t), req, tr_method_name(&sd->names, tr_u(r, F_METHOD), b, sizeof b));
        snprintf(cat, catlen, t <= 3 ? "M" : t == JVMPI_EVENT_INSTRUCTION_START ? "I" : "J");
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC: {
        int64_t ia = tr_i(r, F_IS_ARRAY);
        if (ia >= 4 && ia <= 11) {
            cls = array_type(ia);
            snprintf(key, len, "%s%s %s", ev_name(t), req, cls);
        } else {
            cls = tr_map_get(&sd->names.classes, tr_u(r, F_CLASS));
            snprintf(key, len, "%s%s %s%s", ev_name(t), req, tr_class_name(&sd->names, tr_u(r, F_CLASS), b, sizeof b),
                     ia == 2 ? "[]" : "");
        }
        snprintf(cat, catlen, "A");
        break;
    }
    case JVMPI_EVENT_OBJECT_FREE: {
        /* Named by the class its OBJECT_ALLOC gave it. */
        size_t ki = (size_t)(uintptr_t)tr_map_get(&sd->obj_class, tr_u(r, F_OBJECT));
        cls = ki > 0 ? sd->keys->k[ki - 1].s : NULL;
        snprintf(key, len, "%s%s %s", ev_name(t), req, cls != NULL ? cls : "(no OBJECT_ALLOC)");
        snprintf(cat, catlen, "A");
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
    case JVMPI_EVENT_CLASS_UNLOAD:
        if (t == JVMPI_EVENT_CLASS_LOAD && (v = tr_get(r, F_CLASS_NAME)) != NULL && !v->null)
            snprintf(b, sizeof b, "%.*s", (int)v->len, (const char *)v->s);
        else
            tr_class_name(&sd->names, tr_u(r, F_CLASS), b, sizeof b);
        cls = b;
        snprintf(key, len, "%s%s %s", ev_name(t), req, b);
        snprintf(cat, catlen, "C");
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        v = tr_get(r, F_CLASS_DATA);
        if (v != NULL && !v->null && classfile_name(v->s, v->len, b, sizeof b))
            cls = b;
        else
            snprintf(b, sizeof b, "?");
        snprintf(key, len, "%s %s", ev_name(t), b);
        snprintf(cat, catlen, "C");
        break;
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
        v = tr_get(r, F_THREAD_NAME);
        snprintf(b, sizeof b, "%.*s", v != NULL && !v->null ? (int)v->len : 4,
                 v != NULL && !v->null ? (const char *)v->s : "NULL");
        v = tr_get(r, F_GROUP_NAME);
        char g[256];
        snprintf(g, sizeof g, "%.*s", v != NULL && !v->null ? (int)v->len : 0, v != NULL && !v->null ? (const char *)v->s : "");
        if (thread_ignored(sd, o, g, b))
            return false;
        snprintf(key, len, "%s%s %.*s", ev_name(t), req, v != NULL && !v->null ? (int)v->len : 4,
                 v != NULL && !v->null ? (const char *)v->s : "NULL");
        snprintf(cat, catlen, "T");
        break;
    default:
        snprintf(key, len, "%s%s", ev_name(t), req);
        break;
    }
    hidden_name(key);
    return !class_ignored(o, cls);
}

/* A JDK thread, for its THREAD_START and THREAD_END: in the "system" group or one of the
 * JDK's own (InnocuousThreadGroup), and not one the agent made with CreateSystemThread. */
static bool thread_ignored(const struct side *sd, const struct diff_opts *o, const char *g, const char *name)
{
    if (match_any(o->ignore_thread, o->n_ignore_thread, name))
        return true;
    if (!o->ignore_jdk)
        return false;
    if (g == NULL || (strcmp(g, "system") != 0 && strcmp(g, "InnocuousThreadGroup") != 0))
        return false;
    uint64_t h = 1469598103934665603ull;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return tr_map_get(&sd->names.creates, h | 1) == NULL;
}

static struct seqs *thread_of(struct side *sd, const struct diff_opts *o, size_t stream, bool *ignored)
{
    *ignored = false;
    size_t i = (size_t)(uintptr_t)tr_map_get(&sd->stream_thr, stream + 1);
    if (i > 0)
        return &sd->thr[i - 1];
    if (tr_map_get(&sd->ignored, stream + 1) != NULL) {
        *ignored = true;
        return NULL;
    }
    uint64_t env = tr_stream_env(sd->f, stream);
    char b[256], name[300];
    if (env != 0 || (sd->names.stream_names != NULL && sd->names.stream_names[stream] != NULL))
        tr_stream_name(sd->f, &sd->names, stream, b, sizeof b);
    else
        snprintf(b, sizeof b, "(native thread)");
    /* Only --ignore-thread leaves out what a thread delivers: under --ignore-jdk, the JDK's
     * threads also deliver the program's events (its compilations, on a service thread; its
     * finalizers), and what they deliver of the JDK's own is left out by class. */
    if (match_any(o->ignore_thread, o->n_ignore_thread, b)) {
        tr_map_put(&sd->ignored, stream + 1, (void *)1);
        *ignored = true;
        return NULL;
    }
    int nth = 1;
    for (size_t j = 0; j < sd->nthr; j++) {
        const char *hash = strrchr(sd->thr[j].name, '#');
        size_t bl = hash != NULL ? (size_t)(hash - sd->thr[j].name) : strlen(sd->thr[j].name);
        if (bl == strlen(b) && strncmp(sd->thr[j].name, b, bl) == 0)
            nth++;
    }
    if (nth > 1)
        snprintf(name, sizeof name, "%s#%d", b, nth);
    else
        snprintf(name, sizeof name, "%s", b);
    struct seqs *t = realloc(sd->thr, (sd->nthr + 1) * sizeof *t);
    if (t == NULL)
        return NULL;
    sd->thr = t;
    memset(&t[sd->nthr], 0, sizeof t[sd->nthr]);
    t[sd->nthr].name = strdup(name);
    tr_map_put(&sd->stream_thr, stream + 1, (void *)(uintptr_t)(sd->nthr + 1));
    return &sd->thr[sd->nthr++];
}

static void append(struct seqs *s, uint32_t key, uint64_t seq)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint32_t *k = realloc(s->key, cap * sizeof *k);
        if (k == NULL)
            return;
        s->key = k;
        uint64_t *q = realloc(s->seq, cap * sizeof *q);
        if (q == NULL)
            return;
        s->seq = q;
        s->cap = cap;
    }
    s->key[s->n] = key;
    s->seq[s->n] = seq;
    s->n++;
}

struct kseq {
    uint32_t key;
    uint64_t seq;
};

static int cmp_kseq(const void *a, const void *b)
{
    const struct kseq *x = a, *y = b;
    return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* The frees of one collection come in no particular order (JVMTI reports them as it finds
 * them): each run of OBJECT_FREE in a thread's stream is put in one order, the same on both
 * sides (the keys' order in the shared table), before the streams are compared. */
static void sort_free_runs(const struct keys *t, struct seqs *s)
{
    size_t i = 0;
    while (i < s->n) {
        size_t j = i;
        while (j < s->n && strncmp(t->k[s->key[j]].s, "OBJECT_FREE ", 12) == 0)
            j++;
        struct kseq *run = j - i > 1 ? malloc((j - i) * sizeof *run) : NULL;
        if (run != NULL) {
            for (size_t k = i; k < j; k++)
                run[k - i] = (struct kseq){s->key[k], s->seq[k]};
            qsort(run, j - i, sizeof *run, cmp_kseq);
            for (size_t k = i; k < j; k++) {
                s->key[k] = run[k - i].key;
                s->seq[k] = run[k - i].seq;
            }
            free(run);
        }
        i = j > i ? j : i + 1;
    }
}

static void load(struct side *sd, int side, struct keys *t, const struct diff_opts *o)
{
    tr_names_load(sd->f, &sd->names);
    sd->in_ignored = calloc(sd->f->nstreams ? sd->f->nstreams : 1, sizeof *sd->in_ignored);
    sd->last_event = calloc(sd->f->nstreams ? sd->f->nstreams : 1, sizeof *sd->last_event);
    struct tr_iter *it = tr_iter_new(sd->f);
    struct tr_rec r;
    char key[1024], cat[4], ck[1100];
    while (it != NULL && sd->in_ignored != NULL && sd->last_event != NULL && tr_next(it, &r)) {
        enum tr_kind kind = tr_kind_of(r.code);
        /* A call goes with the event in whose handler it was made (the last of its thread):
         * the calls of an agent's handler for a JDK class's event are the JDK's too. */
        if ((kind == TK_CALL || kind == TK_RET) && sd->in_ignored[r.stream])
            continue;
        bool keep = record_key(sd, o, &r, key, sizeof key, cat, sizeof cat);
        /* Each object's class, from its OBJECT_ALLOC, names its OBJECT_FREE. */
        if (kind == TK_EVENT && tr_event_of(r.code) == JVMPI_EVENT_OBJECT_ALLOC) {
            char b[512], c[512];
            int64_t ia = tr_i(&r, F_IS_ARRAY);
            if (ia >= 4 && ia <= 11)
                snprintf(b, sizeof b, "%s", array_type(ia));
            else
                snprintf(b, sizeof b, "%s%s", tr_class_name(&sd->names, tr_u(&r, F_CLASS), c, sizeof c),
                         ia == 2 ? "[]" : "");
            hidden_name(b);
            size_t ki = intern(t, b);
            if (ki != (size_t)-1)
                tr_map_put(&sd->obj_class, tr_u(&r, F_OBJECT), (void *)(uintptr_t)(ki + 1));
        } else if (kind == TK_EVENT && tr_event_of(r.code) == JVMPI_EVENT_OBJECT_FREE) {
            tr_map_put(&sd->obj_class, tr_u(&r, F_OBJECT), NULL);
        }
        bool ignored = false;
        struct seqs *th = keep ? thread_of(sd, o, r.stream, &ignored) : NULL;
        if (kind == TK_EVENT && !tr_requested(r.code)) { /* a requested one nests in a handler */
            sd->in_ignored[r.stream] = !keep || ignored;
            sd->last_event[r.stream] = tr_event_of(r.code);
        }
        if (!keep || ignored)
            continue;
        /* Totals per event kind or function, then the named key in its section. */
        enum tr_kind k = kind;
        if (k == TK_EVENT)
            snprintf(ck, sizeof ck, "E%s", tr_code_name(sd->f, r.code));
        else
            ck[0] = '\0'; /* a call's key is its total */
        if (ck[0] != '\0')
            count(t, side, ck);
        if (cat[0] != '\0') {
            snprintf(ck, sizeof ck, "%s%s", cat, key);
            count(t, side, ck);
        }
        size_t ki = intern(t, key);
        if (th != NULL && ki != (size_t)-1 && !o->no_streams && k != TK_RET)
            append(th, (uint32_t)ki, r.seq);
    }
    tr_iter_free(it);
    for (size_t i = 0; i < sd->nthr; i++)
        sort_free_runs(t, &sd->thr[i]);
}

static const struct {
    char cat;
    const char *title;
} sections[] = {
    {'E', "events (count in A -> in B)"},
    {'F', "JVMPI calls"},
    {'R', "answers of EnableEvent, DisableEvent, RequestEvent"},
    {'C', "classes (CLASS_LOAD, CLASS_UNLOAD, CLASS_LOAD_HOOK)"},
    {'M', "methods (METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT)"},
    {'A', "objects by class (OBJECT_ALLOC, OBJECT_FREE)"},
    {'J', "compiled methods (COMPILED_METHOD_LOAD, COMPILED_METHOD_UNLOAD)"},
    {'I', "instructions (INSTRUCTION_START)"},
    {'T', "threads (THREAD_START, THREAD_END)"},
};

/* The JVMPI event a key is about: its own, or the one in whose handler a call was made. */
static void key_event(const char *key, char *out, size_t len)
{
    const char *in = NULL;
    if ((strncmp(key, "CALL ", 5) == 0 || strncmp(key, "RET ", 4) == 0) && (in = strstr(key, "(in ")) != NULL) {
        snprintf(out, len, "%.*s", (int)strcspn(in + 4, ")"), in + 4);
        return;
    }
    if (strncmp(key, "CALL ", 5) == 0 || strncmp(key, "RET ", 4) == 0) {
        snprintf(out, len, "calls before any event");
        return;
    }
    size_t n = strcspn(key, " +");
    snprintf(out, len, "%.*s", (int)n, key);
}

/* A thread present on one side only: how many records, and of which events. */
static void only_thread(FILE *out, const struct keys *t, const struct seqs *x, char side)
{
    fprintf(out, "  thread \"%s\": only in %c (%zu records of", x->name, side, x->n);
    char seen[16][64];
    int ns = 0;
    for (size_t i = 0; i < x->n && ns < 16; i++) {
        char e[64];
        key_event(t->k[x->key[i]].s, e, sizeof e);
        int j;
        for (j = 0; j < ns && strcmp(seen[j], e) != 0; j++)
            ;
        if (j == ns) {
            snprintf(seen[ns++], sizeof seen[0], "%s", e);
            fprintf(out, "%s %s", ns > 1 ? "," : "", e);
        }
    }
    fprintf(out, ")\n");
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const struct key *const *)a)->s, (*(const struct key *const *)b)->s);
}

static void describe(FILE *out, const char *tag, const struct tr_file *f)
{
    fprintf(out, "%s %s: %s %s (%s), %s\n", tag, f->path, tr_header(f, "jvm_name") ? tr_header(f, "jvm_name") : "?",
            tr_header(f, "jvm_version") ? tr_header(f, "jvm_version") : "?",
            tr_header(f, "jvm_info") ? tr_header(f, "jvm_info") : "?",
            f->has_end ? (tr_endval(f, "ended") ? tr_endval(f, "ended") : "ended") : "no end block (killed?)");
}

int tr_diff(struct tr_file *a, struct tr_file *b, const struct diff_opts *o)
{
    FILE *out = o->out;
    struct keys t;
    memset(&t, 0, sizeof t);
    struct side sd[2];
    memset(sd, 0, sizeof sd);
    sd[0].f = a;
    sd[1].f = b;
    sd[0].keys = sd[1].keys = &t;
    load(&sd[0], 0, &t, o);
    load(&sd[1], 1, &t, o);
    describe(out, "---", a);
    describe(out, "+++", b);

    uint64_t ndiff = 0;
    struct key **sorted = malloc((t.n ? t.n : 1) * sizeof *sorted);
    size_t ns = 0;
    for (size_t i = 0; sorted != NULL && i < t.n; i++)
        if (t.k[i].n[0] != t.k[i].n[1])
            sorted[ns++] = &t.k[i];
    if (sorted != NULL)
        qsort(sorted, ns, sizeof *sorted, cmp_key);
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        size_t shown = 0, in = 0;
        for (size_t i = 0; i < ns; i++) {
            const struct key *k = sorted[i];
            if (k->s[0] != sections[s].cat)
                continue;
            if (in++ == 0)
                fprintf(out, "%s:\n", sections[s].title);
            ndiff++;
            if ((int)shown++ >= o->max_lines)
                continue;
            if (k->n[0] == 0)
                fprintf(out, "  only in B: %s (%llu)\n", k->s + 1, (unsigned long long)k->n[1]);
            else if (k->n[1] == 0)
                fprintf(out, "  only in A: %s (%llu)\n", k->s + 1, (unsigned long long)k->n[0]);
            else
                fprintf(out, "  %s: %llu -> %llu (%+lld)\n", k->s + 1, (unsigned long long)k->n[0],
                        (unsigned long long)k->n[1], (long long)(k->n[1] - k->n[0]));
        }
        if (shown > (size_t)o->max_lines)
            fprintf(out, "  ... and %zu more\n", shown - (size_t)o->max_lines);
    }
    free(sorted);

    /* Threads, by name: first where their streams part. */
    if (!o->no_streams) {
        bool header = false;
        for (size_t i = 0; i < sd[0].nthr; i++) {
            struct seqs *x = &sd[0].thr[i], *y = NULL;
            for (size_t j = 0; j < sd[1].nthr && y == NULL; j++)
                if (strcmp(sd[1].thr[j].name, x->name) == 0)
                    y = &sd[1].thr[j];
            if (y == NULL) {
                if (x->n == 0)
                    continue;
                if (!header)
                    fprintf(out, "threads, record by record:\n");
                header = true;
                only_thread(out, &t, x, 'A');
                ndiff++;
                continue;
            }
            size_t k = 0;
            while (k < x->n && k < y->n && x->key[k] == y->key[k])
                k++;
            if (k == x->n && k == y->n)
                continue;
            if (!header)
                fprintf(out, "threads, record by record:\n");
            header = true;
            ndiff++;
            fprintf(out, "  thread \"%s\": the same for %zu records, then:\n", x->name, k);
            size_t from = k > (size_t)o->context ? k - (size_t)o->context : 0;
            for (size_t q = from; q < k; q++)
                fprintf(out, "      %s\n", t.k[x->key[q]].s);
            if (k < x->n)
                fprintf(out, "    A #%llu: %s\n", (unsigned long long)x->seq[k], t.k[x->key[k]].s);
            else
                fprintf(out, "    A: (ends: %zu records)\n", x->n);
            if (k < y->n)
                fprintf(out, "    B #%llu: %s\n", (unsigned long long)y->seq[k], t.k[y->key[k]].s);
            else
                fprintf(out, "    B: (ends: %zu records)\n", y->n);
        }
        for (size_t j = 0; j < sd[1].nthr; j++) {
            bool found = false;
            for (size_t i = 0; i < sd[0].nthr && !found; i++)
                found = strcmp(sd[0].thr[i].name, sd[1].thr[j].name) == 0;
            if (found || sd[1].thr[j].n == 0)
                continue;
            if (!header)
                fprintf(out, "threads, record by record:\n");
            header = true;
            only_thread(out, &t, &sd[1].thr[j], 'B');
            ndiff++;
        }
    }
    if (ndiff == 0)
        fprintf(out, "the same in names and counts\n");
    else
        fprintf(out, "%llu differences\n", (unsigned long long)ndiff);

    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < sd[s].nthr; i++) {
            free(sd[s].thr[i].name);
            free(sd[s].thr[i].key);
            free(sd[s].thr[i].seq);
        }
        free(sd[s].thr);
        tr_map_free(&sd[s].stream_thr, false);
        tr_map_free(&sd[s].ignored, false);
        free(sd[s].in_ignored);
        free(sd[s].last_event);
        tr_map_free(&sd[s].obj_class, false);
        tr_names_free(&sd[s].names);
    }
    for (size_t i = 0; i < t.n; i++)
        free(t.k[i].s);
    free(t.k);
    tr_map_free(&t.index, false);
    return ndiff == 0 ? 0 : 1;
}
