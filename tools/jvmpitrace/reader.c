/* reader.c — read a record= file: header and schema, the block index, and the records of
 * every thread merged in sequence order.
 *
 * Nothing in the file is trusted: every length is checked against what is left, a list
 * count against the bytes that could hold it, every block against its CRC-32C. Blocks are
 * indexed up to the first one that is cut off (a killed run) or does not check out (damage);
 * what comes before is read, and the file's status and message name the offset. A chunk
 * whose records do not decode stops that thread's stream there, likewise named; the other
 * threads' records are still read.
 */
#include "core/recfmt.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const fk_names[NFK] = {
    [F_ENV] = "env", [F_METHOD] = "method", [F_OBJECT] = "object", [F_CLASS] = "class",
    [F_CLASS_NAME] = "class_name", [F_NAME] = "name", [F_SIGNATURE] = "signature",
    [F_THREAD] = "thread", [F_THREAD_NAME] = "thread_name", [F_GROUP_NAME] = "group_name",
    [F_PARENT_NAME] = "parent_name", [F_THREAD_OBJECT] = "thread_object",
    [F_THREAD_ENV] = "thread_env", [F_METHODS] = "methods", [F_STATICS] = "statics",
    [F_INSTANCES] = "instances", [F_NUM_INTERFACES] = "num_interfaces",
    [F_IS_ARRAY] = "is_array", [F_SIZE] = "size", [F_ARENA] = "arena",
    [F_EVENT_TYPE] = "event_type", [F_RESULT] = "result", [F_LEVEL] = "level",
    [F_DATA] = "data", [F_LENGTH] = "length", [F_DIGEST] = "digest", [F_SUMMARY] = "summary",
    [F_TRACES] = "traces", [F_FRAMES] = "frames", [F_NUM_FRAMES] = "num_frames",
    [F_COUNT] = "count", [F_THREADS] = "threads", [F_RESULTS] = "results",
    [F_MONITOR] = "monitor", [F_CODE] = "code", [F_NEW_OBJECT] = "new_object",
    [F_TIMEOUT] = "timeout", [F_USED_OBJECTS] = "used_objects",
    [F_TOTAL_SPACE] = "total_space", [F_LINES] = "lines", [F_CODE_SIZE] = "code_size",
    [F_CODE_ADDR] = "code_addr", [F_STATUS] = "status", [F_LINE] = "line",
    [F_RECORD_TYPE] = "record_type", [F_ARG] = "arg", [F_DEPTH] = "depth",
    [F_CLASS_DATA] = "class_data", [F_NEW_LENGTH] = "new_length", [F_SAME] = "same",
    [F_START_LINE] = "start_line", [F_END_LINE] = "end_line", [F_REF] = "ref",
    [F_AFTER_SEQ] = "after_seq", [F_STREAM] = "stream",
};

void tr_damage(struct tr_file *f, size_t off, const char *fmt, ...)
{
    if (f->status == TR_DAMAGED)
        return; /* the first damage is the one to name */
    f->status = TR_DAMAGED;
    f->err_off = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->err, sizeof f->err, fmt, ap);
    va_end(ap);
}

static void truncated(struct tr_file *f, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void truncated(struct tr_file *f, size_t off, const char *fmt, ...)
{
    if (f->status != TR_OK)
        return;
    f->status = TR_TRUNCATED;
    f->err_off = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->err, sizeof f->err, fmt, ap);
    va_end(ap);
}

static void fatal(struct tr_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fatal(struct tr_file *f, const char *fmt, ...)
{
    if (f->fatal[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->fatal, sizeof f->fatal, fmt, ap);
    va_end(ap);
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool varint(const unsigned char **pp, const unsigned char *end, uint64_t *out)
{
    const unsigned char *p = *pp;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return false;
        unsigned char b = *p++;
        if (shift == 63 && b > 1)
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return true;
        }
    }
    return false;
}

/* ---- the header and its schema ---- */

static bool kv_add(struct tr_kv **list, size_t *n, const char *k, size_t kl, const char *v, size_t vl)
{
    struct tr_kv *l = realloc(*list, (*n + 1) * sizeof *l);
    if (l == NULL)
        return false;
    *list = l;
    l[*n].key = strndup(k, kl);
    l[*n].val = strndup(v, vl);
    if (l[*n].key == NULL || l[*n].val == NULL) {
        free(l[*n].key);
        free(l[*n].val);
        return false;
    }
    (*n)++;
    return true;
}

/* What kind of value a field holds: a string or bytes ('s'), a list ('['), a number ('n'). */
static char value_class(char type)
{
    return type == 's' || type == 'b' ? 's' : type == '[' ? '[' : 'n';
}

/* The kind of value each named field holds in the shim's own schema, at the top of a record
 * and inside a list ('\0': no such field there). The commands read a bound field as that
 * kind (a name's bytes, a list's items), so a file's header that gives a known name another
 * type (a damaged or foreign file) must not bind it: the field is then printed as declared,
 * but no command takes it for what it is not. Built on first use from rec_schema_text(). */
static char top_class[NFK], sub_class[NFK];

static bool parse_fields(const char **sp, const char *end, int depth, struct tr_field **out, int *nout,
                         char *why, size_t wl);
static void free_fields(struct tr_field *f, int n);

static void note_classes(const struct tr_field *fs, int n, int depth)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < NFK; k++)
            if (strcmp(fs[i].name, fk_names[k]) == 0)
                (depth == 0 ? top_class : sub_class)[k] = value_class(fs[i].type);
        if (fs[i].type == '[')
            note_classes(fs[i].sub, fs[i].nsub, depth + 1);
    }
}

static void key_classes_init(void)
{
    static bool ready;
    if (ready)
        return;
    ready = true; /* before parsing: the parser binds keys too, here to throwaway fields */
    /* Each line is "rec CODE NAME FIELDS", read by the same parser as a file's header. */
    for (const char *s = rec_schema_text(); *s != '\0';) {
        const char *nl = strchr(s, '\n');
        const char *end = nl != NULL ? nl : s + strlen(s);
        for (int skip = 0; skip < 3 && s < end; skip++) {
            const char *sp = memchr(s, ' ', (size_t)(end - s));
            s = sp != NULL ? sp + 1 : end;
        }
        struct tr_field *fs = NULL;
        int n = 0;
        char why[128];
        if (parse_fields(&s, end, 0, &fs, &n, why, sizeof why)) {
            note_classes(fs, n, 0);
            free_fields(fs, n);
        }
        s = nl != NULL ? nl + 1 : end;
    }
}

/* Field i of fs binds key k if its name is k's and its kind is the one k has in the shim's
 * schema (classes: top_class or sub_class). */
static void bind_keys(signed char *idx, const struct tr_field *fs, int n, const char *classes)
{
    key_classes_init();
    memset(idx, -1, NFK);
    for (int k = 0; k < NFK; k++)
        for (int i = 0; i < n; i++)
            if (strcmp(fs[i].name, fk_names[k]) == 0 && classes[k] == value_class(fs[i].type))
                idx[k] = (signed char)i;
}

static void fill_sidx(struct tr_field *f)
{
    bind_keys(f->sidx, f->sub, f->nsub, sub_class);
}

static void free_fields(struct tr_field *f, int n)
{
    for (int i = 0; i < n; i++)
        if (f[i].sub != NULL)
            free_fields(f[i].sub, f[i].nsub);
    free(f);
}

/* Fields up to ']' (depth > 0) or the end of the line. */
static bool parse_fields(const char **sp, const char *end, int depth, struct tr_field **out, int *nout,
                         char *why, size_t wl)
{
    const char *s = *sp;
    struct tr_field *fs = NULL;
    int n = 0;
    for (;;) {
        while (s < end && *s == ' ')
            s++;
        if (s >= end || *s == ']') {
            if ((s < end) != (depth > 0)) {
                snprintf(why, wl, depth > 0 ? "a list without its ']'" : "a ']' without its list");
                goto bad;
            }
            if (s < end)
                s++;
            break;
        }
        if (n >= 64) {
            snprintf(why, wl, "more than 64 fields");
            goto bad;
        }
        const char *colon = memchr(s, ':', (size_t)(end - s));
        if (colon == NULL || colon == s || colon - s >= 32) {
            snprintf(why, wl, "a field without NAME:TYPE");
            goto bad;
        }
        struct tr_field *g = realloc(fs, (size_t)(n + 1) * sizeof *g);
        if (g == NULL) {
            snprintf(why, wl, "out of memory");
            goto bad;
        }
        fs = g;
        struct tr_field *f = &fs[n];
        memset(f, 0, sizeof *f);
        memset(f->sidx, -1, sizeof f->sidx);
        memcpy(f->name, s, (size_t)(colon - s));
        n++;
        s = colon + 1;
        if (s < end && *s == '[') {
            if (depth >= 4) {
                snprintf(why, wl, "lists nested deeper than 4");
                goto bad;
            }
            s++;
            f->type = '[';
            if (!parse_fields(&s, end, depth + 1, &f->sub, &f->nsub, why, wl))
                goto bad;
            if (f->nsub == 0) {
                snprintf(why, wl, "an empty list type");
                goto bad;
            }
            fill_sidx(f);
        } else if (s < end && strchr("uisbtmop", *s) != NULL && *s != '\0') {
            f->type = *s++;
        } else {
            snprintf(why, wl, "field %s: unknown type", f->name);
            goto bad;
        }
        if (s < end && *s != ' ' && *s != ']') {
            snprintf(why, wl, "field %s: junk after its type", f->name);
            goto bad;
        }
    }
    *sp = s;
    *out = fs;
    *nout = n;
    return true;
bad:
    free_fields(fs, n);
    return false;
}

static bool parse_schema_line(struct tr_file *f, const char *s, const char *end, int lineno)
{
    char why[128] = "";
    if (end - s < 4 || memcmp(s, "rec ", 4) != 0) {
        fatal(f, "header line %d: expected a schema line 'rec CODE NAME FIELDS'", lineno);
        return false;
    }
    s += 4;
    char *e = NULL;
    long code = strtol(s, &e, 10);
    if (e == s || e >= end || *e != ' ' || code < 0 || code > 255) {
        fatal(f, "header line %d: bad record code", lineno);
        return false;
    }
    s = e + 1;
    const char *ne = memchr(s, ' ', (size_t)(end - s));
    if (ne == NULL)
        ne = end;
    if (ne == s || ne - s >= 64) {
        fatal(f, "header line %d: bad record name", lineno);
        return false;
    }
    if (f->types[code] != NULL) {
        fatal(f, "header line %d: record code %ld described twice", lineno, code);
        return false;
    }
    struct tr_type *t = calloc(1, sizeof *t);
    if (t == NULL) {
        fatal(f, "out of memory");
        return false;
    }
    t->code = (int)code;
    memcpy(t->name, s, (size_t)(ne - s));
    s = ne;
    if (!parse_fields(&s, end, 0, &t->f, &t->nf, why, sizeof why)) {
        fatal(f, "header line %d (%s): %s", lineno, t->name, why);
        free(t);
        return false;
    }
    bind_keys(t->fidx, t->f, t->nf, top_class);
    f->types[code] = t;
    return true;
}

static bool parse_header(struct tr_file *f, const unsigned char *p, size_t n)
{
    const char *s = (const char *)p, *end = s + n;
    bool schema = false;
    int lineno = 0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl != NULL ? nl : end;
        lineno++;
        if (le > s) {
            if (schema) {
                if (!parse_schema_line(f, s, le, lineno))
                    return false;
            } else {
                const char *sp = memchr(s, ' ', (size_t)(le - s));
                const char *ke = sp != NULL ? sp : le;
                const char *v = sp != NULL ? sp + 1 : le;
                if (ke - s == 6 && memcmp(s, "schema", 6) == 0)
                    schema = true;
                else if (!kv_add(&f->header, &f->nheader, s, (size_t)(ke - s), v, (size_t)(le - v))) {
                    fatal(f, "out of memory");
                    return false;
                }
            }
        }
        s = nl != NULL ? nl + 1 : end;
    }
    const char *fmt = tr_header(f, "format");
    if (fmt == NULL || sscanf(fmt, "%d.%d", &f->major, &f->minor) != 2) {
        fatal(f, "the header has no format line");
        return false;
    }
    if (f->major != REC_FORMAT_MAJOR) {
        fatal(f, "format %d.%d: this jvmpitrace reads format %d.x", f->major, f->minor, REC_FORMAT_MAJOR);
        return false;
    }
    if (!schema) {
        fatal(f, "the header has no schema");
        return false;
    }
    const char *ps = tr_header(f, "pointer_size");
    if (ps != NULL && atoi(ps) > 8) {
        fatal(f, "pointer size %s: ids do not fit 64 bits", ps);
        return false;
    }
    return true;
}

static bool parse_end(struct tr_file *f, const unsigned char *p, size_t n)
{
    const char *s = (const char *)p, *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl != NULL ? nl : end;
        if (le > s) {
            const char *sp = memchr(s, ' ', (size_t)(le - s));
            const char *ke = sp != NULL ? sp : le;
            const char *v = sp != NULL ? sp + 1 : le;
            if (!kv_add(&f->end, &f->nend, s, (size_t)(ke - s), v, (size_t)(le - v)))
                return false;
        }
        s = nl != NULL ? nl + 1 : end;
    }
    return true;
}

const char *tr_header(const struct tr_file *f, const char *key)
{
    for (size_t i = 0; i < f->nheader; i++)
        if (strcmp(f->header[i].key, key) == 0)
            return f->header[i].val;
    return NULL;
}

const char *tr_endval(const struct tr_file *f, const char *key)
{
    for (size_t i = 0; i < f->nend; i++)
        if (strcmp(f->end[i].key, key) == 0)
            return f->end[i].val;
    return NULL;
}

/* ---- the block index ---- */

static bool add_chunk(struct tr_file *f, size_t boff, const unsigned char *p, size_t n)
{
    const unsigned char *q = p, *end = p + n;
    struct tr_chunk c = {.off = boff};
    if (!varint(&q, end, &c.stream) || !varint(&q, end, &c.gen) || !varint(&q, end, &c.boff) ||
        !varint(&q, end, &c.env) || !varint(&q, end, &c.tid)) {
        tr_damage(f, boff, "the chunk at offset %zu has a bad header", boff);
        return false;
    }
    c.data = (size_t)(q - f->p);
    c.len = (size_t)(end - q);
    if (f->nchunks == f->capchunks) {
        size_t cap = f->capchunks ? f->capchunks * 2 : 256;
        struct tr_chunk *g = realloc(f->chunks, cap * sizeof *g);
        if (g == NULL)
            return false;
        f->chunks = g;
        f->capchunks = cap;
    }
    f->chunks[f->nchunks] = c;
    /* Its stream, found by id. */
    size_t si = (size_t)(uintptr_t)tr_map_get(&f->stream_ids, c.stream + 1);
    if (si-- == 0) {
        si = f->nstreams;
        if (f->nstreams == f->capstreams) {
            size_t cap = f->capstreams ? f->capstreams * 2 : 64;
            struct tr_stream *g = realloc(f->streams, cap * sizeof *g);
            if (g == NULL)
                return false;
            f->streams = g;
            f->capstreams = cap;
        }
        if (!tr_map_put(&f->stream_ids, c.stream + 1, (void *)(uintptr_t)(si + 1)))
            return false;
        memset(&f->streams[si], 0, sizeof f->streams[si]);
        f->streams[si].id = c.stream;
        f->streams[si].tid = c.tid;
        f->streams[si].env = c.env;
        f->nstreams++;
    }
    struct tr_stream *s = &f->streams[si];
    if (s->nchunks == s->capchunks) {
        size_t cap = s->capchunks ? s->capchunks * 2 : 8;
        size_t *g = realloc(s->chunks, cap * sizeof *g);
        if (g == NULL)
            return false;
        s->chunks = g;
        s->capchunks = cap;
    }
    s->chunks[s->nchunks++] = f->nchunks++;
    if (s->env == 0)
        s->env = c.env;
    return true;
}

static void index_blocks(struct tr_file *f)
{
    if (f->size < REC_MAGIC_LEN || memcmp(f->p, REC_MAGIC, REC_MAGIC_LEN) != 0) {
        fatal(f, "not a recording: no " REC_MAGIC " at offset 0");
        return;
    }
    size_t off = REC_MAGIC_LEN;
    bool header = false;
    while (off < f->size) {
        if (f->size - off < REC_BLOCK_HDR) {
            truncated(f, off, "the file ends inside a block header at offset %zu (the run was "
                              "killed while writing?)", off);
            break;
        }
        int kind = f->p[off];
        uint32_t len = le32(f->p + off + 1), crc = le32(f->p + off + 5);
        if (len > REC_BLOCK_MAX) {
            tr_damage(f, off, "the block at offset %zu claims %u bytes", off, len);
            break;
        }
        if (f->size - off - REC_BLOCK_HDR < len) {
            truncated(f, off, "the block at offset %zu needs %u bytes, the file has %zu (the run "
                              "was killed while writing?)", off, len, f->size - off - REC_BLOCK_HDR);
            break;
        }
        const unsigned char *pl = f->p + off + REC_BLOCK_HDR;
        if (rec_crc32c(0, pl, len) != crc) {
            tr_damage(f, off, "the block at offset %zu fails its checksum", off);
            break;
        }
        if (f->has_end) {
            tr_damage(f, off, "a block at offset %zu follows the end block", off);
            break;
        }
        if (!header && kind != REC_BLOCK_HEADER) {
            fatal(f, "the first block (offset %zu) is not the header", off);
            return;
        }
        if (kind == REC_BLOCK_HEADER) {
            if (header) {
                tr_damage(f, off, "a second header at offset %zu", off);
                break;
            }
            if (!parse_header(f, pl, len))
                return;
            header = true;
        } else if (kind == REC_BLOCK_CHUNK) {
            if (!add_chunk(f, off, pl, len)) {
                if (f->status == TR_OK)
                    fatal(f, "out of memory indexing the file");
                break;
            }
        } else if (kind == REC_BLOCK_END) {
            if (!parse_end(f, pl, len)) {
                fatal(f, "out of memory");
                return;
            }
            f->has_end = true;
        } /* other kinds: a later minor version's; skipped */
        off += REC_BLOCK_HDR + len;
    }
    if (!header)
        fatal(f, "the file ends before its header");
}

static struct tr_file *file_new(const char *name)
{
    struct tr_file *f = calloc(1, sizeof *f);
    if (f != NULL)
        f->path = name;
    return f;
}

struct tr_file *tr_open_mem(const unsigned char *p, size_t n, const char *name)
{
    struct tr_file *f = file_new(name);
    if (f == NULL)
        return NULL;
    f->p = p;
    f->size = n;
    index_blocks(f);
    return f;
}

struct tr_file *tr_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    struct tr_file *f = file_new(path);
    if (f == NULL || fstat(fd, &st) != 0) {
        free(f);
        close(fd);
        return NULL;
    }
    f->size = (size_t)st.st_size;
    if (f->size > 0) {
        f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            close(fd);
            free(f);
            return NULL;
        }
        madvise(f->map, f->size, MADV_SEQUENTIAL);
        f->p = f->map;
    } else {
        f->p = (const unsigned char *)"";
    }
    close(fd);
    index_blocks(f);
    return f;
}

void tr_close(struct tr_file *f)
{
    if (f == NULL)
        return;
    if (f->map != NULL)
        munmap(f->map, f->size);
    for (int i = 0; i < 256; i++)
        if (f->types[i] != NULL) {
            free_fields(f->types[i]->f, f->types[i]->nf);
            free(f->types[i]);
        }
    for (size_t i = 0; i < f->nheader; i++) {
        free(f->header[i].key);
        free(f->header[i].val);
    }
    for (size_t i = 0; i < f->nend; i++) {
        free(f->end[i].key);
        free(f->end[i].val);
    }
    free(f->header);
    free(f->end);
    for (size_t i = 0; i < f->nstreams; i++)
        free(f->streams[i].chunks);
    free(f->streams);
    free(f->chunks);
    tr_map_free(&f->stream_ids, false);
    free(f);
}

/* ---- decoding ---- */

/* Values live in blocks that stay put until the cursor's next record. */
struct arena {
    struct tr_val **blocks;
    size_t *caps;
    size_t nblocks, cur, used;
};

static struct tr_val *arena_alloc(struct arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    for (;;) {
        if (a->cur < a->nblocks) {
            if (a->caps[a->cur] - a->used >= n) {
                struct tr_val *v = a->blocks[a->cur] + a->used;
                a->used += n;
                return v;
            }
            a->cur++;
            a->used = 0;
            continue;
        }
        size_t cap = n > 256 ? n : 256;
        struct tr_val **b = realloc(a->blocks, (a->nblocks + 1) * sizeof *b);
        if (b == NULL)
            return NULL;
        a->blocks = b;
        size_t *c = realloc(a->caps, (a->nblocks + 1) * sizeof *c);
        if (c == NULL)
            return NULL;
        a->caps = c;
        a->blocks[a->nblocks] = malloc(cap * sizeof(struct tr_val));
        if (a->blocks[a->nblocks] == NULL)
            return NULL;
        a->caps[a->nblocks] = cap;
        a->nblocks++;
    }
}

static void arena_reset(struct arena *a)
{
    a->cur = 0;
    a->used = 0;
}

static void arena_free(struct arena *a)
{
    for (size_t i = 0; i < a->nblocks; i++)
        free(a->blocks[i]);
    free(a->blocks);
    free(a->caps);
}

struct cursor {
    size_t stream;
    size_t ci;                      /* chunks taken from the stream */
    const unsigned char *p, *end;
    uint64_t seq, thr, meth, obj, gen, next_boff;
    uint64_t last;                  /* the sequence number of the stream's last record */
    bool state;
    struct arena arena;
    struct tr_rec rec;
    bool has;
};

static bool decode_fields(struct tr_file *f, struct cursor *c, const struct tr_field *fs, int nf,
                          struct tr_val *out)
{
    for (int i = 0; i < nf; i++) {
        const struct tr_field *fd = &fs[i];
        struct tr_val *v = &out[i];
        memset(v, 0, sizeof *v);
        uint64_t x;
        if (!varint(&c->p, c->end, &x))
            return false;
        switch (fd->type) {
        case 'u':
        case 'p':
            v->u = x;
            break;
        case 'i':
            v->i = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
            v->u = (uint64_t)v->i;
            break;
        case 't':
        case 'm':
        case 'o': {
            uint64_t *last = fd->type == 't' ? &c->thr : fd->type == 'm' ? &c->meth : &c->obj;
            int64_t d = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
            *last += (uint64_t)d;
            v->u = *last;
            break;
        }
        case 's':
        case 'b':
            if (x == 0) {
                v->null = true;
                break;
            }
            if (x - 1 > (uint64_t)(c->end - c->p))
                return false;
            v->s = c->p;
            v->len = (size_t)(x - 1);
            c->p += v->len;
            break;
        case '[':
            if (x == 0) {
                v->null = true;
                break;
            }
            /* Every item takes at least one byte per field. */
            if (x - 1 > (uint64_t)(c->end - c->p) / (uint64_t)fd->nsub)
                return false;
            v->n = (size_t)(x - 1);
            v->items = arena_alloc(&c->arena, v->n * (size_t)fd->nsub);
            if (v->items == NULL)
                return false;
            for (size_t j = 0; j < v->n; j++)
                if (!decode_fields(f, c, fd->sub, fd->nsub, v->items + j * (size_t)fd->nsub))
                    return false;
            break;
        default:
            return false;
        }
    }
    return true;
}

static bool next_chunk(struct tr_file *f, struct cursor *c)
{
    struct tr_stream *s = &f->streams[c->stream];
    if (s->broken || c->ci >= s->nchunks)
        return false;
    struct tr_chunk *ch = &f->chunks[s->chunks[c->ci++]];
    if (ch->boff == 0) {
        c->seq = 0;
        c->thr = ch->env;
        c->meth = c->obj = 0;
        c->gen = ch->gen;
        c->state = true;
    } else if (!c->state || ch->gen != c->gen || ch->boff != c->next_boff) {
        tr_damage(f, ch->off, "thread stream %llu: the chunk at offset %zu continues a buffer "
                              "whose beginning is missing",
                  (unsigned long long)s->id, ch->off);
        s->broken = true;
        return false;
    }
    c->next_boff = ch->boff + ch->len;
    c->p = f->p + ch->data;
    c->end = c->p + ch->len;
    return true;
}

static bool advance(struct tr_file *f, struct cursor *c)
{
    c->has = false;
    arena_reset(&c->arena);
    for (;;) {
        if (c->p == NULL || c->p >= c->end) {
            if (!next_chunk(f, c))
                return false;
            continue;
        }
        const unsigned char *start = c->p;
        uint64_t code, d;
        struct tr_stream *s = &f->streams[c->stream];
        if (!varint(&c->p, c->end, &code) || !varint(&c->p, c->end, &d)) {
            tr_damage(f, (size_t)(start - f->p), "thread stream %llu: a record head that does not "
                      "decode at offset %zu", (unsigned long long)s->id, (size_t)(start - f->p));
            s->broken = true;
            return false;
        }
        if (code > 255 || f->types[code] == NULL) {
            tr_damage(f, (size_t)(start - f->p), "thread stream %llu: record code %llu at offset "
                      "%zu is not in the schema", (unsigned long long)s->id,
                      (unsigned long long)code, (size_t)(start - f->p));
            s->broken = true;
            return false;
        }
        if (d == 0 || d > UINT64_MAX - c->seq) {
            tr_damage(f, (size_t)(start - f->p), "thread stream %llu: the record at offset %zu does "
                      "not come after the one before it", (unsigned long long)s->id,
                      (size_t)(start - f->p));
            s->broken = true;
            return false;
        }
        /* A buffer starts its deltas from 0, so its first record must still come after the
         * last record of the buffer before it: a thread's records are numbered in the
         * order it made them, and the merge relies on each stream being in order. */
        if (c->seq + d <= c->last) {
            tr_damage(f, (size_t)(start - f->p), "thread stream %llu: the record at offset %zu "
                      "(sequence %llu) does not come after the one before it (%llu)",
                      (unsigned long long)s->id, (size_t)(start - f->p),
                      (unsigned long long)(c->seq + d), (unsigned long long)c->last);
            s->broken = true;
            return false;
        }
        const struct tr_type *t = f->types[code];
        c->seq += d;
        c->last = c->seq;
        c->rec.code = (int)code;
        c->rec.seq = c->seq;
        c->rec.stream = c->stream;
        c->rec.offset = (size_t)(start - f->p);
        c->rec.type = t;
        c->rec.v = arena_alloc(&c->arena, (size_t)t->nf);
        if (c->rec.v == NULL || !decode_fields(f, c, t->f, t->nf, c->rec.v)) {
            tr_damage(f, (size_t)(start - f->p), "thread stream %llu: the %s record at offset %zu "
                      "runs past its chunk or is malformed", (unsigned long long)s->id, t->name,
                      (size_t)(start - f->p));
            s->broken = true;
            return false;
        }
        c->has = true;
        return true;
    }
}

/* ---- merged iteration ---- */

struct tr_iter {
    struct tr_file *f;
    struct cursor *cur;
    size_t *heap, nheap;
    long pending;               /* the cursor whose record was handed out last */
};

static bool before(const struct tr_iter *it, size_t a, size_t b)
{
    const struct tr_rec *x = &it->cur[a].rec, *y = &it->cur[b].rec;
    return x->seq != y->seq ? x->seq < y->seq : a < b;
}

static void heap_push(struct tr_iter *it, size_t c)
{
    size_t i = it->nheap++;
    it->heap[i] = c;
    while (i > 0 && before(it, it->heap[i], it->heap[(i - 1) / 2])) {
        size_t p = (i - 1) / 2, t = it->heap[i];
        it->heap[i] = it->heap[p];
        it->heap[p] = t;
        i = p;
    }
}

static size_t heap_pop(struct tr_iter *it)
{
    size_t top = it->heap[0];
    it->heap[0] = it->heap[--it->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < it->nheap && before(it, it->heap[l], it->heap[m]))
            m = l;
        if (r < it->nheap && before(it, it->heap[r], it->heap[m]))
            m = r;
        if (m == i)
            break;
        size_t t = it->heap[i];
        it->heap[i] = it->heap[m];
        it->heap[m] = t;
        i = m;
    }
    return top;
}

struct tr_iter *tr_iter_new(struct tr_file *f)
{
    struct tr_iter *it = calloc(1, sizeof *it);
    if (it == NULL)
        return NULL;
    it->f = f;
    it->pending = -1;
    it->cur = calloc(f->nstreams ? f->nstreams : 1, sizeof *it->cur);
    it->heap = calloc(f->nstreams ? f->nstreams : 1, sizeof *it->heap);
    if (it->cur == NULL || it->heap == NULL) {
        tr_iter_free(it);
        return NULL;
    }
    if (f->fatal[0] != '\0')
        return it;
    for (size_t i = 0; i < f->nstreams; i++) {
        it->cur[i].stream = i;
        if (advance(f, &it->cur[i]))
            heap_push(it, i);
    }
    return it;
}

bool tr_next(struct tr_iter *it, struct tr_rec *r)
{
    if (it->pending >= 0) {
        size_t c = (size_t)it->pending;
        it->pending = -1;
        if (advance(it->f, &it->cur[c]))
            heap_push(it, c);
    }
    if (it->nheap == 0)
        return false;
    size_t c = heap_pop(it);
    *r = it->cur[c].rec;
    it->pending = (long)c;
    return true;
}

void tr_iter_free(struct tr_iter *it)
{
    if (it == NULL)
        return;
    if (it->cur != NULL)
        for (size_t i = 0; i < it->f->nstreams; i++)
            arena_free(&it->cur[i].arena);
    free(it->cur);
    free(it->heap);
    free(it);
}
