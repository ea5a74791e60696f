/* names.c — what the ids of a recording are called, and records as readable lines.
 *
 * Ids differ from run to run; names do not. A method id is named by the CLASS_LOAD that
 * listed it or by the recorder's METHOD_NAME; a class id by its CLASS_LOAD or CLASS_NAME; a
 * thread (its JNIEnv) by THREAD_START / THREAD_END or the recorder's THREAD_NAME. Method ids
 * are never reused by the JVM, so one pass over the file names them for every record; a
 * class or thread id reused later keeps the last name it was given.
 */
#include "trace.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the map ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void *tr_map_get(const struct tr_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return NULL;
    for (size_t j = mix(key) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == key)
            return m->vals[j];
        if (m->keys[j] == 0)
            return NULL;
    }
}

static bool grow(struct tr_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *k = calloc(cap, sizeof *k);
    void **v = calloc(cap, sizeof *v);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != 0)
            for (size_t j = mix(m->keys[i]) & (cap - 1);; j = (j + 1) & (cap - 1))
                if (k[j] == 0) {
                    k[j] = m->keys[i];
                    v[j] = m->vals[i];
                    break;
                }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = cap;
    return true;
}

bool tr_map_put(struct tr_map *m, uint64_t key, void *val)
{
    if (key == 0)
        return true;
    if ((m->n + 1) * 4 >= m->cap * 3 && !grow(m))
        return false;
    for (size_t j = mix(key) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == key) {
            m->vals[j] = val;
            return true;
        }
        if (m->keys[j] == 0) {
            m->keys[j] = key;
            m->vals[j] = val;
            m->n++;
            return true;
        }
    }
}

void tr_map_free(struct tr_map *m, bool free_vals)
{
    if (free_vals)
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i] != 0)
                free(m->vals[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- names ---- */

/* A JNIEnv's names over time: a thread renamed, or a JNIEnv reused by a new thread. */
struct tname {
    uint64_t seq;               /* named from this record on */
    char *name;
    struct tname *next;         /* later names */
};

static void put_thread(struct tr_names *n, uint64_t env, uint64_t seq, const struct tr_val *v, bool renames)
{
    if (env == 0 || v == NULL || v->null)
        return;
    struct tname *head = tr_map_get(&n->threads, env), *last = head;
    while (last != NULL && last->next != NULL)
        last = last->next;
    if (last != NULL && (!renames || (last->name != NULL && strlen(last->name) == v->len &&
                                       memcmp(last->name, v->s, v->len) == 0)))
        return;
    struct tname *t = calloc(1, sizeof *t);
    if (t == NULL || (t->name = strndup((const char *)v->s, v->len)) == NULL) {
        free(t);
        return;
    }
    t->seq = seq;
    if (last != NULL)
        last->next = t;
    else if (!tr_map_put(&n->threads, env, t)) {
        free(t->name);
        free(t);
    }
}

static char *dup_val(const struct tr_val *v)
{
    if (v == NULL || v->null)
        return NULL;
    return strndup((const char *)v->s, v->len);
}

/* Keep the first name given to a method (they are never reused). */
static void put_method(struct tr_names *n, uint64_t mid, const struct tr_val *cls, const struct tr_val *name,
                       const struct tr_val *sig)
{
    if (mid == 0 || tr_map_get(&n->methods, mid) != NULL)
        return;
    struct tr_method *m = calloc(1, sizeof *m);
    if (m == NULL)
        return;
    m->cls = dup_val(cls);
    m->name = dup_val(name);
    m->sig = dup_val(sig);
    if (!tr_map_put(&n->methods, mid, m)) {
        free(m->cls);
        free(m->name);
        free(m->sig);
        free(m);
    }
}

static void put_string(struct tr_map *map, uint64_t key, const struct tr_val *v)
{
    char *s = dup_val(v);
    if (key == 0 || s == NULL) {
        free(s);
        return;
    }
    free(tr_map_get(map, key));
    if (!tr_map_put(map, key, s))
        free(s);
}

static uint64_t hash_str(const unsigned char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h | 1;
}

void tr_names_load(struct tr_file *f, struct tr_names *n)
{
    memset(n, 0, sizeof *n);
    n->nstreams = f->nstreams;
    n->lost_from = UINT64_MAX;
    n->stream_names = calloc(f->nstreams ? f->nstreams : 1, sizeof *n->stream_names);
    n->stream_groups = calloc(f->nstreams ? f->nstreams : 1, sizeof *n->stream_groups);
    if (n->stream_names == NULL || n->stream_groups == NULL) {
        free(n->stream_names);
        free(n->stream_groups);
        n->stream_names = n->stream_groups = NULL;
    }
    struct tr_iter *it = tr_iter_new(f);
    if (it == NULL)
        return;
    struct tr_rec r;
    while (tr_next(it, &r)) {
        int code = r.code;
        if (code == 192) { /* METHOD_NAME */
            put_method(n, tr_u(&r, F_METHOD), tr_get(&r, F_CLASS_NAME), tr_get(&r, F_NAME),
                       tr_get(&r, F_SIGNATURE));
        } else if (code == 193) { /* CLASS_NAME */
            put_string(&n->classes, tr_u(&r, F_CLASS), tr_get(&r, F_NAME));
        } else if (code == 194) { /* THREAD_NAME: a thread keeps the name it started with */
            if (r.stream < f->nstreams && n->stream_names != NULL && n->stream_names[r.stream] == NULL) {
                n->stream_names[r.stream] = dup_val(tr_get(&r, F_NAME));
                n->stream_groups[r.stream] = dup_val(tr_get(&r, F_GROUP_NAME));
            }
            put_thread(n, tr_u(&r, F_THREAD), r.seq, tr_get(&r, F_NAME), false);
            if (tr_map_get(&n->groups, tr_u(&r, F_THREAD)) == NULL)
                put_string(&n->groups, tr_u(&r, F_THREAD), tr_get(&r, F_GROUP_NAME));
        } else if (code == 195 || code == 199) { /* LOST, DROPPED */
            n->lost += tr_u(&r, F_COUNT);
            if (tr_get(&r, F_AFTER_SEQ) != NULL && tr_u(&r, F_AFTER_SEQ) < n->lost_from)
                n->lost_from = tr_u(&r, F_AFTER_SEQ);
            else if (tr_get(&r, F_AFTER_SEQ) == NULL && r.seq < n->lost_from)
                n->lost_from = r.seq;
        } else if (code == 197) { /* THREAD_ENV */
            if (tr_u(&r, F_THREAD) != 0)
                f->streams[r.stream].env = tr_u(&r, F_THREAD);
        } else if (tr_kind_of(code) == TK_EVENT && tr_event_of(code) == 42) { /* CLASS_LOAD */
            const struct tr_val *cn = tr_get(&r, F_CLASS_NAME);
            put_string(&n->classes, tr_u(&r, F_CLASS), cn);
            const struct tr_val *ms = tr_get(&r, F_METHODS);
            const struct tr_field *mf = tr_field_of(&r, F_METHODS);
            if (ms != NULL && mf != NULL && mf->type == '[')
                for (size_t j = 0; j < ms->n; j++) {
                    const struct tr_val *id = tr_item(mf, ms, j, F_METHOD);
                    if (id != NULL)
                        put_method(n, id->u, cn, tr_item(mf, ms, j, F_NAME), tr_item(mf, ms, j, F_SIGNATURE));
                }
        } else if (tr_kind_of(code) == TK_EVENT && (tr_event_of(code) == 33 || tr_event_of(code) == 34)) {
            /* A THREAD_START names a new thread (a JNIEnv may be reused after its thread
             * ended); a THREAD_END only one not named yet. */
            uint64_t env = tr_u(&r, F_THREAD_ENV);
            bool starts = tr_event_of(code) == 33 && !tr_requested(code);
            put_thread(n, env, r.seq, tr_get(&r, F_THREAD_NAME), starts);
            if (starts || tr_map_get(&n->groups, env) == NULL)
                put_string(&n->groups, env, tr_get(&r, F_GROUP_NAME));
        } else if (tr_kind_of(code) == TK_CALL && tr_fn_of(code) == 16) { /* CreateSystemThread */
            const struct tr_val *nm = tr_get(&r, F_NAME);
            if (nm != NULL && !nm->null)
                tr_map_put(&n->creates, hash_str(nm->s, nm->len), (void *)1);
        }
    }
    tr_iter_free(it);
}

void tr_names_free(struct tr_names *n)
{
    for (size_t i = 0; i < n->methods.cap; i++)
        if (n->methods.keys[i] != 0) {
            struct tr_method *m = n->methods.vals[i];
            free(m->cls);
            free(m->name);
            free(m->sig);
        }
    tr_map_free(&n->methods, true);
    tr_map_free(&n->classes, true);
    for (size_t i = 0; i < n->threads.cap; i++)
        if (n->threads.keys[i] != 0)
            for (struct tname *t = n->threads.vals[i], *next; t != NULL; t = next) {
                next = t->next;
                free(t->name);
                free(t);
            }
    tr_map_free(&n->threads, false);
    tr_map_free(&n->groups, true);
    tr_map_free(&n->creates, false);
    for (size_t i = 0; n->stream_names != NULL && i < n->nstreams; i++) {
        free(n->stream_names[i]);
        free(n->stream_groups[i]);
    }
    free(n->stream_names);
    free(n->stream_groups);
}

const char *tr_stream_name(const struct tr_file *f, const struct tr_names *n, size_t stream, char *buf, size_t len)
{
    if (n != NULL && n->stream_names != NULL && stream < n->nstreams && n->stream_names[stream] != NULL)
        snprintf(buf, len, "%s", n->stream_names[stream]);
    else if (tr_stream_env(f, stream) != 0)
        tr_thread_name(n, tr_stream_env(f, stream), buf, len);
    else
        snprintf(buf, len, "tid %llu", stream < f->nstreams ? (unsigned long long)f->streams[stream].tid : 0ull);
    return buf;
}

const char *tr_method_name(const struct tr_names *n, uint64_t mid, char *buf, size_t len)
{
    const struct tr_method *m = n != NULL ? tr_map_get(&n->methods, mid) : NULL;
    if (mid == 0)
        snprintf(buf, len, "NULL");
    else if (m == NULL)
        snprintf(buf, len, "method@%#llx", (unsigned long long)mid);
    else
        snprintf(buf, len, "%s.%s%s", m->cls ? m->cls : "?", m->name ? m->name : "?", m->sig ? m->sig : "");
    return buf;
}

const char *tr_thread_name(const struct tr_names *n, uint64_t env, char *buf, size_t len)
{
    return tr_thread_name_at(n, env, UINT64_MAX, buf, len);
}

const char *tr_class_name(const struct tr_names *n, uint64_t cid, char *buf, size_t len)
{
    const char *c = n != NULL ? tr_map_get(&n->classes, cid) : NULL;
    if (cid == 0)
        snprintf(buf, len, "NULL");
    else if (c == NULL)
        snprintf(buf, len, "class@%#llx", (unsigned long long)cid);
    else
        snprintf(buf, len, "%s", c);
    return buf;
}

const char *tr_thread_name_at(const struct tr_names *n, uint64_t env, uint64_t seq, char *buf, size_t len)
{
    const struct tname *l = n != NULL ? tr_map_get(&n->threads, env) : NULL;
    const char *t = l != NULL ? l->name : NULL;
    for (; l != NULL && l->seq <= seq; l = l->next)
        t = l->name;
    if (env == 0)
        snprintf(buf, len, "NULL");
    else if (t == NULL)
        snprintf(buf, len, "thread@%#llx", (unsigned long long)env);
    else
        snprintf(buf, len, "%s", t);
    return buf;
}

uint64_t tr_stream_env(const struct tr_file *f, size_t stream)
{
    return stream < f->nstreams ? f->streams[stream].env : 0;
}

const char *tr_code_name(const struct tr_file *f, int code)
{
    return code >= 0 && code < 256 && f->types[code] != NULL ? f->types[code]->name : "?";
}

bool tr_jdk_class(const char *name)
{
    if (*name == '[') { /* an array class: its element's, and a primitive type's is the JVM's */
        while (*name == '[')
            name++;
        if (*name != 'L')
            return true;
        name++;
    }
    size_t n = strlen(name);
    if (n >= 2 && strcmp(name + n - 2, "[]") == 0 && strchr(name, '.') == NULL && strchr(name, '/') == NULL)
        return true; /* "int[]": a primitive array as the diff names it */
    static const char *const prefixes[] = {"java.", "javax.", "jdk.", "sun.", "com.sun.",
                                           "java/", "javax/", "jdk/", "sun/", "com/sun/"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* ---- formatting ---- */

struct out {
    char *p;
    size_t len, at;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    if (o->at + 1 >= o->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->at = o->at + (size_t)n < o->len ? o->at + (size_t)n : o->len - 1;
}

static void put_str(struct out *o, const struct tr_val *v, bool full)
{
    if (v->null) {
        put(o, "NULL");
        return;
    }
    size_t n = full || v->len <= 160 ? v->len : 160;
    put(o, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = v->s[i];
        if (c == '"' || c == '\\')
            put(o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            put(o, "\\x%02x", c);
        else
            put(o, "%c", c);
    }
    put(o, n < v->len ? "\"..." : "\"");
}

static const char *event_short(int t)
{
    static const char *const names[62] = {
        [1] = "METHOD_ENTRY", [2] = "METHOD_ENTRY2", [3] = "METHOD_EXIT", [4] = "OBJECT_ALLOC",
        [5] = "OBJECT_FREE", [6] = "OBJECT_MOVE", [7] = "COMPILED_METHOD_LOAD",
        [8] = "COMPILED_METHOD_UNLOAD", [9] = "INSTRUCTION_START", [33] = "THREAD_START",
        [34] = "THREAD_END", [35] = "CLASS_LOAD_HOOK", [37] = "HEAP_DUMP",
        [38] = "JNI_GLOBALREF_ALLOC", [39] = "JNI_GLOBALREF_FREE", [40] = "JNI_WEAK_GLOBALREF_ALLOC",
        [41] = "JNI_WEAK_GLOBALREF_FREE", [42] = "CLASS_LOAD", [43] = "CLASS_UNLOAD",
        [44] = "DATA_DUMP_REQUEST", [45] = "DATA_RESET_REQUEST", [46] = "JVM_INIT_DONE",
        [47] = "JVM_SHUT_DOWN", [48] = "ARENA_NEW", [49] = "ARENA_DELETE", [50] = "OBJECT_DUMP",
        [51] = "RAW_MONITOR_CONTENDED_ENTER", [52] = "RAW_MONITOR_CONTENDED_ENTERED",
        [53] = "RAW_MONITOR_CONTENDED_EXIT", [54] = "MONITOR_CONTENDED_ENTER",
        [55] = "MONITOR_CONTENDED_ENTERED", [56] = "MONITOR_CONTENDED_EXIT", [57] = "MONITOR_WAIT",
        [58] = "MONITOR_WAITED", [59] = "MONITOR_DUMP", [60] = "GC_START", [61] = "GC_FINISH"};
    return t >= 0 && t < 62 && names[t] != NULL ? names[t] : NULL;
}

static void put_value(struct out *o, const struct tr_file *f, const struct tr_names *n,
                      const struct tr_rec *r, const struct tr_field *fd, const struct tr_val *v, bool full)
{
    char b[512];
    switch (fd->type) {
    case 't':
        put(o, "%s", tr_thread_name_at(n, v->u, r->seq, b, sizeof b));
        break;
    case 'm':
        put(o, "%s", tr_method_name(n, v->u, b, sizeof b));
        break;
    case 'o':
        if (v->u == 0)
            put(o, "NULL");
        else if (tr_map_get(&n->classes, v->u) != NULL)
            put(o, "%s", tr_class_name(n, v->u, b, sizeof b));
        else
            put(o, "obj@%#llx", (unsigned long long)v->u);
        break;
    case 'p':
        if (v->u == 0)
            put(o, "NULL");
        else
            put(o, "%#llx", (unsigned long long)v->u);
        break;
    case 'i':
        if (strcmp(fd->name, "event_type") == 0 && event_short((int)v->i) != NULL)
            put(o, "%s", event_short((int)v->i));
        else if (strcmp(fd->name, "result") == 0 && r->code >= 160 && r->code <= 162)
            put(o, "%s", v->i == 0 ? "SUCCESS" : v->i == -1 ? "FAIL" : v->i == 1 ? "NOT_AVAILABLE" : "?");
        else
            put(o, "%lld", (long long)v->i);
        if (strcmp(fd->name, "result") == 0 && r->code >= 160 && r->code <= 162)
            put(o, "(%lld)", (long long)v->i);
        break;
    case 'u':
        if (strcmp(fd->name, "digest") == 0)
            put(o, "%016llx", (unsigned long long)v->u);
        else if (strcmp(fd->name, "record_type") == 0)
            put(o, "%#llx", (unsigned long long)v->u);
        else
            put(o, "%llu", (unsigned long long)v->u);
        break;
    case 's':
        put_str(o, v, full);
        break;
    case 'b':
        if (v->null)
            put(o, "NULL");
        else
            put(o, "<%zu bytes>", v->len);
        break;
    case '[': {
        if (v->null) {
            put(o, "NULL");
            break;
        }
        size_t show = full ? v->n : (v->n < 8 ? v->n : 8);
        bool frames = fd->sidx[F_LINE] >= 0 && fd->sidx[F_METHOD] >= 0 && fd->nsub == 2;
        put(o, "[");
        for (size_t j = 0; j < show; j++) {
            if (j > 0)
                put(o, ", ");
            const struct tr_val *row = &v->items[j * (size_t)fd->nsub];
            if (frames) {
                put(o, "%s:%lld", tr_method_name(n, row[fd->sidx[F_METHOD]].u, b, sizeof b),
                    (long long)row[fd->sidx[F_LINE]].i);
                continue;
            }
            if (fd->nsub > 1)
                put(o, "{");
            for (int k = 0; k < fd->nsub; k++) {
                if (k > 0)
                    put(o, " ");
                if (fd->nsub > 1)
                    put(o, "%s=", fd->sub[k].name);
                put_value(o, f, n, r, &fd->sub[k], &row[k], full);
            }
            if (fd->nsub > 1)
                put(o, "}");
        }
        if (show < v->n)
            put(o, "%s...+%zu", show > 0 ? ", " : "", v->n - show);
        put(o, "]");
        break;
    }
    default:
        put(o, "?");
    }
}

void tr_format(const struct tr_file *f, const struct tr_names *n, const struct tr_rec *r, bool full,
               char *buf, size_t len)
{
    struct out o = {buf, len, 0};
    buf[0] = '\0';
    char b[256];
    uint64_t env = tr_stream_env(f, r->stream);
    put(&o, "#%llu [%s] %s", (unsigned long long)r->seq, tr_stream_name(f, n, r->stream, b, sizeof b),
        r->type->name);
    for (int i = 0; i < r->type->nf; i++) {
        const struct tr_field *fd = &r->type->f[i];
        /* An event's env is its delivering thread's, as a rule: said only when not. */
        if (i == 0 && strcmp(fd->name, "env") == 0 && r->v[i].u == env && env != 0)
            continue;
        put(&o, " %s=", fd->name);
        put_value(&o, f, n, r, fd, &r->v[i], full);
    }
}
