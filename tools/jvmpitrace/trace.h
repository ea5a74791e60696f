/* trace.h — jvmpitrace's reader of record= files and the commands built on it.
 *
 * reader.c opens a file (docs/recording.md), takes the schema from its header, indexes its
 * blocks and gives back its records in sequence-number order, each decoded generically from
 * its schema line; a truncated or damaged file is read up to the damage and the damage is
 * named (offset, block, stream). names.c collects what the ids are called; check.c holds
 * the records to the JVMPI contract; diff.c compares two recordings in names. Pure C: the
 * unit tests and the fuzz target link these files too.
 */
#ifndef JVMPITRACE_TRACE_H
#define JVMPITRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The fields the commands look up by name; a schema that lacks one leaves it absent. */
enum fk {
    F_ENV, F_METHOD, F_OBJECT, F_CLASS, F_CLASS_NAME, F_NAME, F_SIGNATURE, F_THREAD,
    F_THREAD_NAME, F_GROUP_NAME, F_PARENT_NAME, F_THREAD_OBJECT, F_THREAD_ENV, F_METHODS,
    F_STATICS, F_INSTANCES, F_NUM_INTERFACES, F_IS_ARRAY, F_SIZE, F_ARENA, F_EVENT_TYPE,
    F_RESULT, F_LEVEL, F_DATA, F_LENGTH, F_DIGEST, F_SUMMARY, F_TRACES, F_FRAMES,
    F_NUM_FRAMES, F_COUNT, F_THREADS, F_RESULTS, F_MONITOR, F_CODE, F_NEW_OBJECT,
    F_TIMEOUT, F_USED_OBJECTS, F_TOTAL_SPACE, F_LINES, F_CODE_SIZE, F_CODE_ADDR, F_STATUS,
    F_LINE, F_RECORD_TYPE, F_ARG, F_DEPTH, F_CLASS_DATA, F_NEW_LENGTH, F_SAME, F_START_LINE,
    F_END_LINE, F_REF, F_AFTER_SEQ, F_STREAM, NFK
};
extern const char *const fk_names[NFK];

struct tr_field {
    char name[32];
    char type;                  /* u i s b t m o p, or '[' for a list */
    int nsub;                   /* a list's item fields */
    struct tr_field *sub;
    signed char sidx[NFK];      /* a list's item field index by enum fk, -1 absent */
};

struct tr_type {
    int code;
    char name[64];
    int nf;
    struct tr_field *f;
    signed char fidx[NFK];
};

/* One decoded value. Numbers: u (u, t, m, o, p), i (i). Strings and bytes point into the
 * file (null: NULL). Lists: n items of nsub values each, row by row (null: NULL). */
struct tr_val {
    uint64_t u;
    int64_t i;
    const unsigned char *s;
    size_t len;
    bool null;
    size_t n;
    struct tr_val *items;
};

struct tr_stream {
    uint64_t id, tid;
    uint64_t env;               /* its thread's JNIEnv (the first known) */
    size_t *chunks;             /* indexes into tr_file.chunks, in file order */
    size_t nchunks, capchunks;
    bool broken;                /* a decode error stopped it */
};

struct tr_chunk {
    size_t off;                 /* of the block in the file */
    uint64_t stream, gen, boff, env, tid;
    size_t data, len;           /* the records: file offset and length */
};

enum tr_status { TR_OK = 0, TR_TRUNCATED, TR_DAMAGED };

/* u64 -> pointer map (open addressing; key 0 is not stored). */
struct tr_map {
    uint64_t *keys;
    void **vals;
    size_t cap, n;
};
void *tr_map_get(const struct tr_map *m, uint64_t key);
bool tr_map_put(struct tr_map *m, uint64_t key, void *val); /* false: out of memory */
void tr_map_free(struct tr_map *m, bool free_vals);

struct tr_kv {
    char *key, *val;
};

struct tr_file {
    const char *path;
    const unsigned char *p;
    size_t size;
    void *map;                  /* mmap'ed (or NULL: the caller's memory) */
    struct tr_kv *header, *end;
    size_t nheader, nend;
    bool has_end;
    int major, minor;
    struct tr_type *types[256];
    struct tr_chunk *chunks;
    size_t nchunks, capchunks;
    struct tr_stream *streams;
    size_t nstreams, capstreams;
    struct tr_map stream_ids;   /* stream id + 1 -> index + 1 */
    enum tr_status status;
    size_t err_off;
    char err[320];
    char fatal[320];            /* the file could not be read at all */
};

/* A record, valid until the next tr_next. */
struct tr_rec {
    int code;
    uint64_t seq;
    size_t stream;              /* index into tr_file.streams */
    size_t offset;              /* file offset of its first byte */
    const struct tr_type *type;
    struct tr_val *v;
};

/* Open a file (mmap) or a buffer. Returns NULL only when out of memory or the path cannot
 * be read; otherwise f->fatal is set when not even the header could be read, and f->status /
 * f->err say where a truncated or damaged file stops (what comes before is read). */
struct tr_file *tr_open(const char *path);
struct tr_file *tr_open_mem(const unsigned char *p, size_t n, const char *name);
void tr_close(struct tr_file *f);
const char *tr_header(const struct tr_file *f, const char *key);
const char *tr_endval(const struct tr_file *f, const char *key);
/* Note damage found while decoding (the first one is kept). */
void tr_damage(struct tr_file *f, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records in sequence order, across the threads' streams. */
struct tr_iter;
struct tr_iter *tr_iter_new(struct tr_file *f);
bool tr_next(struct tr_iter *it, struct tr_rec *r);
void tr_iter_free(struct tr_iter *it);

static inline const struct tr_val *tr_get(const struct tr_rec *r, enum fk k)
{
    int i = r->type->fidx[k];
    return i >= 0 ? &r->v[i] : NULL;
}
static inline uint64_t tr_u(const struct tr_rec *r, enum fk k)
{
    const struct tr_val *v = tr_get(r, k);
    return v != NULL ? v->u : 0;
}
static inline int64_t tr_i(const struct tr_rec *r, enum fk k)
{
    const struct tr_val *v = tr_get(r, k);
    return v != NULL ? v->i : 0;
}
/* Item j's field k of list value lv declared by list field lf. */
static inline const struct tr_val *tr_item(const struct tr_field *lf, const struct tr_val *lv, size_t j, enum fk k)
{
    int i = lf->sidx[k];
    return i >= 0 && j < lv->n ? &lv->items[j * (size_t)lf->nsub + (size_t)i] : NULL;
}
static inline const struct tr_field *tr_field_of(const struct tr_rec *r, enum fk k)
{
    int i = r->type->fidx[k];
    return i >= 0 ? &r->type->f[i] : NULL;
}

/* Record codes (recfmt.h): kind of record and its JVMPI number or function index. */
enum tr_kind { TK_EVENT, TK_CALL, TK_RET, TK_OWN };
static inline enum tr_kind tr_kind_of(int code)
{
    return code < 128 ? TK_EVENT : code < 160 ? TK_CALL : code < 192 ? TK_RET : TK_OWN;
}
static inline int tr_event_of(int code) { return code & 63; }
static inline bool tr_requested(int code) { return code >= 64 && code < 128; }
static inline int tr_fn_of(int code) { return code < 160 ? code - 128 : code - 160; }

/* ---- names (names.c) ---- */


struct tr_method {
    char *cls, *name, *sig;
};
struct tr_names {
    struct tr_map methods;      /* method id -> struct tr_method */
    struct tr_map classes;      /* class id -> char * (dotted name) */
    struct tr_map threads;      /* JNIEnv -> its names over time (names.c) */
    struct tr_map groups;       /* JNIEnv -> char * (its thread group) */
    struct tr_map creates;      /* names of CreateSystemThread threads -> (void *)1 by hash */
    char **stream_names;        /* per stream: the name its thread had when it began */
    char **stream_groups;       /* and its thread group's */
    uint64_t lost_from;         /* records may be missing after this sequence number (LOST,
                                   DROPPED); UINT64_MAX when none were lost */
    uint64_t lost;              /* how many, by those records */
    size_t nstreams;
};
/* Read the whole file once for its names. */
void tr_names_load(struct tr_file *f, struct tr_names *n);
void tr_names_free(struct tr_names *n);
/* "pkg.Class.method(sig)" (or the id in hex) into buf. */
const char *tr_method_name(const struct tr_names *n, uint64_t mid, char *buf, size_t len);
const char *tr_class_name(const struct tr_names *n, uint64_t cid, char *buf, size_t len);
const char *tr_thread_name(const struct tr_names *n, uint64_t env, char *buf, size_t len);
/* The name the thread had at record seq (a JNIEnv reused names another thread). */
const char *tr_thread_name_at(const struct tr_names *n, uint64_t env, uint64_t seq, char *buf, size_t len);
/* The name of a stream's thread (as it began), for the thread column. */
const char *tr_stream_name(const struct tr_file *f, const struct tr_names *n, size_t stream, char *buf, size_t len);
/* The thread a stream runs as (its THREAD_ENV), or 0. */
uint64_t tr_stream_env(const struct tr_file *f, size_t stream);
/* Display name of a record code, from the schema ("METHOD_ENTRY", "CALL:EnableEvent"). */
const char *tr_code_name(const struct tr_file *f, int code);
/* One record as a line (no newline) for print and check. full: every list item. */
void tr_format(const struct tr_file *f, const struct tr_names *n, const struct tr_rec *r, bool full,
               char *buf, size_t len);
/* The dotted class name of a JVMTI-style or dotted name is kept as it is recorded. Is it a
 * class of the JDK (java., javax., jdk., sun., com.sun., and their arrays)? */
bool tr_jdk_class(const char *name);

/* ---- commands ---- */

struct check_opts {
    FILE *out;
    int max_per_rule;           /* violations printed per rule (all are counted) */
    bool quiet;
};
/* 0: the contract held; 1: violations; 2: the file is truncated, damaged or unreadable. */
int tr_check(struct tr_file *f, const struct check_opts *o);

struct diff_opts {
    FILE *out;
    bool ignore_jdk;            /* the JDK's classes, methods, objects and threads */
    bool ignore_event[256];     /* by record code (events and calls) */
    char **ignore_class;        /* fnmatch patterns on class names */
    size_t n_ignore_class;
    char **ignore_thread;       /* fnmatch patterns on thread names */
    size_t n_ignore_thread;
    bool no_streams;            /* counts only, no per-thread divergence */
    int max_lines;              /* per section */
    int context;                /* records shown before a divergence */
};
/* 0: the same in names and counts; 1: they differ; 2: a file could not be read whole. */
int tr_diff(struct tr_file *a, struct tr_file *b, const struct diff_opts *o);

#endif
