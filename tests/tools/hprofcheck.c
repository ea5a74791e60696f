/* hprofcheck.c — parse and validate a binary HPROF file (format=b of legacy-agents/hprof).
 *
 *   hprofcheck FILE [--class NAME]... [--strict]
 *
 * Reads the whole file and checks it the way a heap analyser would need it to hold:
 *  - the header ("JAVA PROFILE 1.0.1" or "1.0.2", identifier size 4 or 8), every record's
 *    tag and length, and every body consumed exactly by its fields (heap dump sub-records
 *    too, none running past its segment);
 *  - every reference: UTF8 ids (class, method, field, thread names), class serials (in
 *    FRAME, ALLOC SITES, UNLOAD CLASS), frame ids (in TRACE), trace serials (everywhere one
 *    appears), thread serials (0 means none; defined by START THREAD or by a heap dump's
 *    ROOT THREAD OBJECT, as the JDK's own dumps do) are defined somewhere in the file, and
 *    no id or serial is defined twice;
 *  - in the heap dump: each instance's and object array's class has a CLASS DUMP, each
 *    CLASS DUMP's class a LOAD CLASS, each instance's byte count equals the fields of its
 *    class chain, no object is dumped twice. Object references (fields, elements, statics,
 *    roots) that name no dumped object are counted and reported; with --strict they are
 *    errors.
 * It prints the number of records of each type and, for each --class NAME ("a.b.C" or
 * "a/b/C"), the number of its instances in the heap dumps and its ALLOC SITES totals, and
 * the top CPU SAMPLES rows with their top frames. Exit status: 0 valid, 1 invalid, 2 usage.
 * --verbose also lists the first unresolved array elements. A heap dump written by the JDK
 * itself (jcmd PID GC.heap_dump) passes too, which keeps this checker honest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a u64 -> u64 map (open addressing; key 0 is not stored: callers remap it) ---- */
struct map {
    uint64_t *k, *v;
    size_t cap, n;
};

static size_t mhome(uint64_t k, size_t cap)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ULL;
    k ^= k >> 29;
    return (size_t)k & (cap - 1);
}

static uint64_t *map_get(const struct map *m, uint64_t k)
{
    if (m->cap == 0)
        return NULL;
    k = k ? k : ~0ULL;
    for (size_t i = mhome(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->k[i] == 0)
            return NULL;
        if (m->k[i] == k)
            return &m->v[i];
    }
}

/* 1 if added, 0 if it was there (value left alone). */
static int map_add(struct map *m, uint64_t k, uint64_t v)
{
    k = k ? k : ~0ULL;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        uint64_t *nk = calloc(cap, 8), *nv = calloc(cap, 8);
        if (nk == NULL || nv == NULL) {
            fprintf(stderr, "hprofcheck: out of memory\n");
            exit(2);
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->k[i]) {
                size_t j = mhome(m->k[i], cap);
                while (nk[j])
                    j = (j + 1) & (cap - 1);
                nk[j] = m->k[i];
                nv[j] = m->v[i];
            }
        free(m->k);
        free(m->v);
        m->k = nk;
        m->v = nv;
        m->cap = cap;
    }
    size_t i = mhome(k, m->cap);
    while (m->k[i] && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (m->k[i])
        return 0;
    m->k[i] = k;
    m->v[i] = v;
    m->n++;
    return 1;
}

/* ---- the file ---- */
static const unsigned char *P;
static size_t LEN;
static unsigned IDSZ;
static const char *FILE_NAME;
static long errors;
static int strict, verbose;

static void err(size_t off, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void err(size_t off, const char *fmt, ...)
{
    if (++errors <= 20) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fprintf(stderr, "hprofcheck: %s: error at byte %zu: %s\n", FILE_NAME, off, msg);
    }
}

struct cur {
    size_t off, end;
    int bad;
};

static int has(struct cur *c, size_t n)
{
    if (c->bad || c->end - c->off < n) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

static uint64_t rdn(struct cur *c, unsigned n)
{
    if (!has(c, n))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | P[c->off + i];
    c->off += n;
    return v;
}
static unsigned U1(struct cur *c) { return (unsigned)rdn(c, 1); }
static unsigned U2(struct cur *c) { return (unsigned)rdn(c, 2); }
static uint32_t U4(struct cur *c) { return (uint32_t)rdn(c, 4); }
static uint64_t U8(struct cur *c) { return rdn(c, 8); }
static uint64_t ID(struct cur *c) { return rdn(c, IDSZ); }

static int type_size(unsigned t)
{
    switch (t) {
    case 2: return (int)IDSZ;
    case 4: case 8: return 1;
    case 5: case 9: return 2;
    case 6: case 10: return 4;
    case 7: case 11: return 8;
    default: return -1;
    }
}

/* Definitions, and references to check once the whole file is read. */
static struct map utf8, class_serial, class_by_obj, frames, trace_serials, thread_serials;
static struct map class_dumps;  /* class id -> offset of its CLASS DUMP */
static struct map objects;      /* every dumped object id -> 1 */
struct ref {
    int kind;       /* 0 utf8, 1 class serial, 2 frame, 3 trace, 4 thread */
    uint64_t v;
    size_t off;
};
static struct ref *refs;
static size_t nrefs, cap_refs;
static const char *kind_name[] = {"UTF8 id", "class serial", "frame id", "trace serial", "thread serial"};

static void ref(int kind, uint64_t v, size_t off)
{
    if (kind == 4 && v == 0)
        return; /* thread serial 0: no thread */
    if (nrefs == cap_refs) {
        cap_refs = cap_refs ? cap_refs * 2 : 4096;
        refs = realloc(refs, cap_refs * sizeof *refs);
        if (refs == NULL) {
            fprintf(stderr, "hprofcheck: out of memory\n");
            exit(2);
        }
    }
    refs[nrefs].kind = kind;
    refs[nrefs].v = v;
    refs[nrefs++].off = off;
}

static void define(struct map *m, uint64_t v, uint64_t val, size_t off, const char *what)
{
    if (!map_add(m, v, val))
        err(off, "%s %#llx defined twice", what, (unsigned long long)v);
}

/* Deferred heap checks. */
struct inst {
    uint64_t cls;
    size_t off, values; /* record, its values */
    uint32_t nbytes;
};
static struct inst *insts;
static size_t ninsts, cap_insts;
struct arr {
    uint64_t cls;
    size_t off, elems;
    uint32_t n;
};
static struct arr *arrs;
static size_t narrs, cap_arrs;
static uint64_t *obj_refs;      /* object ids named by roots, statics, constants */
static size_t nobj_refs, cap_obj_refs;

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 4096;
    p = realloc(p, *cap * elem);
    if (p == NULL) {
        fprintf(stderr, "hprofcheck: out of memory\n");
        exit(2);
    }
    return p;
}

static void obj_ref(uint64_t id)
{
    if (id == 0)
        return;
    obj_refs = grow(obj_refs, &cap_obj_refs, nobj_refs, sizeof *obj_refs);
    obj_refs[nobj_refs++] = id;
}

static long counts[256], sub_counts[256];
static const char *tag_name(int t)
{
    switch (t) {
    case 0x01: return "UTF8";
    case 0x02: return "LOAD_CLASS";
    case 0x03: return "UNLOAD_CLASS";
    case 0x04: return "FRAME";
    case 0x05: return "TRACE";
    case 0x06: return "ALLOC_SITES";
    case 0x07: return "HEAP_SUMMARY";
    case 0x0A: return "START_THREAD";
    case 0x0B: return "END_THREAD";
    case 0x0C: return "HEAP_DUMP";
    case 0x0D: return "CPU_SAMPLES";
    case 0x0E: return "CONTROL_SETTINGS";
    case 0x1C: return "HEAP_DUMP_SEGMENT";
    case 0x2C: return "HEAP_DUMP_END";
    default: return NULL;
    }
}
static const char *sub_name(int t)
{
    switch (t) {
    case 0xFF: return "ROOT_UNKNOWN";
    case 0x01: return "ROOT_JNI_GLOBAL";
    case 0x02: return "ROOT_JNI_LOCAL";
    case 0x03: return "ROOT_JAVA_FRAME";
    case 0x04: return "ROOT_NATIVE_STACK";
    case 0x05: return "ROOT_STICKY_CLASS";
    case 0x06: return "ROOT_THREAD_BLOCK";
    case 0x07: return "ROOT_MONITOR_USED";
    case 0x08: return "ROOT_THREAD_OBJECT";
    case 0x20: return "CLASS_DUMP";
    case 0x21: return "INSTANCE_DUMP";
    case 0x22: return "OBJ_ARRAY_DUMP";
    case 0x23: return "PRIM_ARRAY_DUMP";
    default: return NULL;
    }
}

/* ALLOC SITES and CPU SAMPLES rows kept for the report. */
struct site {
    unsigned kind;
    uint32_t cls, trace, live_b, live_o, alloc_b, alloc_o;
};
static struct site *sites;
static size_t nsites, cap_sites;
struct sample {
    uint32_t count, trace;
};
static struct sample *samples;
static size_t nsamples, cap_samples;
static uint64_t samples_total;
/* trace serial -> offset of its TRACE record; frame id -> offset of its FRAME record */
static struct map trace_at, frame_at, utf8_at, class_name_of_serial;

static void heap_records(struct cur *c)
{
    while (c->off < c->end && !c->bad) {
        size_t start = c->off;
        unsigned t = U1(c);
        sub_counts[t]++;
        switch (t) {
        case 0xFF: case 0x05: case 0x07:
            obj_ref(ID(c));
            break;
        case 0x01:
            obj_ref(ID(c));
            ID(c);
            break;
        case 0x02: case 0x03:
            obj_ref(ID(c));
            ref(4, U4(c), start);
            U4(c);
            break;
        case 0x04: case 0x06:
            obj_ref(ID(c));
            ref(4, U4(c), start);
            break;
        case 0x08: {
            /* A thread serial may be defined here as well as by START THREAD: the JDK's own
             * heap dumper writes no START THREAD records. */
            obj_ref(ID(c));
            uint32_t serial = U4(c);
            if (!c->bad && serial != 0)
                map_add(&thread_serials, serial, 1);
            ref(3, U4(c), start);
            break;
        }
        case 0x20: {
            uint64_t id = ID(c);
            if (!c->bad) {
                define(&objects, id, 1, start, "object");
                define(&class_dumps, id, start, start, "CLASS DUMP of class");
            }
            ref(3, U4(c), start);
            obj_ref(ID(c)); /* super */
            obj_ref(ID(c)); /* loader */
            obj_ref(ID(c)); /* signers */
            obj_ref(ID(c)); /* protection domain */
            ID(c);
            ID(c);
            U4(c);
            unsigned ncp = U2(c);
            for (unsigned i = 0; i < ncp && !c->bad; i++) {
                U2(c);
                unsigned ty = U1(c);
                int sz = type_size(ty);
                if (sz < 0) {
                    err(start, "CLASS DUMP constant type %u", ty);
                    c->bad = 1;
                    break;
                }
                if (ty == 2)
                    obj_ref(ID(c));
                else
                    rdn(c, (unsigned)sz);
            }
            unsigned ns = U2(c);
            for (unsigned i = 0; i < ns && !c->bad; i++) {
                ref(0, ID(c), start);
                unsigned ty = U1(c);
                int sz = type_size(ty);
                if (sz < 0) {
                    err(start, "CLASS DUMP static type %u", ty);
                    c->bad = 1;
                    break;
                }
                if (ty == 2)
                    obj_ref(ID(c));
                else
                    rdn(c, (unsigned)sz);
            }
            unsigned nf = U2(c);
            for (unsigned i = 0; i < nf && !c->bad; i++) {
                ref(0, ID(c), start);
                unsigned ty = U1(c);
                if (type_size(ty) < 0) {
                    err(start, "CLASS DUMP field type %u", ty);
                    c->bad = 1;
                }
            }
            break;
        }
        case 0x21: {
            uint64_t id = ID(c);
            if (!c->bad)
                define(&objects, id, 1, start, "object");
            ref(3, U4(c), start);
            uint64_t cls = ID(c);
            uint32_t nb = U4(c);
            if (!has(c, nb))
                break;
            insts = grow(insts, &cap_insts, ninsts, sizeof *insts);
            insts[ninsts++] = (struct inst){cls, start, c->off, nb};
            c->off += nb;
            break;
        }
        case 0x22: {
            uint64_t id = ID(c);
            if (!c->bad)
                define(&objects, id, 1, start, "object");
            ref(3, U4(c), start);
            uint32_t n = U4(c);
            uint64_t cls = ID(c);
            if (!has(c, (size_t)n * IDSZ))
                break;
            arrs = grow(arrs, &cap_arrs, narrs, sizeof *arrs);
            arrs[narrs++] = (struct arr){cls, start, c->off, n};
            c->off += (size_t)n * IDSZ;
            break;
        }
        case 0x23: {
            uint64_t id = ID(c);
            if (!c->bad)
                define(&objects, id, 1, start, "object");
            ref(3, U4(c), start);
            uint32_t n = U4(c);
            unsigned ty = U1(c);
            int sz = type_size(ty);
            if (sz < 0 || ty == 2) {
                err(start, "PRIM ARRAY DUMP element type %u", ty);
                c->bad = 1;
                break;
            }
            if (has(c, (size_t)n * (size_t)sz))
                c->off += (size_t)n * (size_t)sz;
            break;
        }
        default:
            err(start, "unknown heap dump sub-record tag %#x", t);
            c->bad = 1;
            break;
        }
        if (c->bad && errors == 0)
            err(start, "heap dump sub-record %s runs past the end of its segment",
                sub_name((int)t) ? sub_name((int)t) : "?");
    }
}

/* The name of a UTF8 id, as a NUL-terminated copy in buf. */
static const char *utf8_text(uint64_t id, char *buf, size_t len)
{
    uint64_t *at = map_get(&utf8_at, id);
    if (at == NULL) {
        snprintf(buf, len, "?");
        return buf;
    }
    struct cur c = {(size_t)*at, LEN, 0};
    c.off += 1 + 4; /* tag, time */
    uint32_t n = U4(&c);
    c.off += IDSZ;
    n -= IDSZ;
    size_t k = n < len - 1 ? n : len - 1;
    memcpy(buf, P + c.off, k);
    buf[k] = '\0';
    return buf;
}

/* Sum of field sizes of a class chain, -1 if a class is missing. */
static long chain_bytes(uint64_t cls, int depth)
{
    if (cls == 0)
        return 0;
    uint64_t *at = map_get(&class_dumps, cls);
    if (at == NULL || depth > 1000)
        return -1;
    struct cur c = {(size_t)*at, LEN, 0};
    U1(&c);
    ID(&c);
    U4(&c);
    uint64_t super = ID(&c);
    for (int i = 0; i < 5; i++)
        ID(&c);
    U4(&c);
    unsigned ncp = U2(&c);
    for (unsigned i = 0; i < ncp; i++) {
        U2(&c);
        rdn(&c, (unsigned)type_size(U1(&c)));
    }
    unsigned ns = U2(&c);
    for (unsigned i = 0; i < ns; i++) {
        ID(&c);
        rdn(&c, (unsigned)type_size(U1(&c)));
    }
    unsigned nf = U2(&c);
    long sum = 0;
    for (unsigned i = 0; i < nf; i++) {
        ID(&c);
        sum += type_size(U1(&c));
    }
    long up = chain_bytes(super, depth + 1);
    return up < 0 ? -1 : sum + up;
}

/* Count the references inside an instance's values, by its class chain's field types. */
static long instance_refs_unresolved(uint64_t cls, size_t values)
{
    long bad = 0;
    size_t off = values;
    for (int depth = 0; cls != 0 && depth < 1000; depth++) {
        uint64_t *at = map_get(&class_dumps, cls);
        if (at == NULL)
            break;
        struct cur c = {(size_t)*at, LEN, 0};
        U1(&c);
        ID(&c);
        U4(&c);
        uint64_t super = ID(&c);
        for (int i = 0; i < 5; i++)
            ID(&c);
        U4(&c);
        unsigned ncp = U2(&c);
        for (unsigned i = 0; i < ncp; i++) {
            U2(&c);
            rdn(&c, (unsigned)type_size(U1(&c)));
        }
        unsigned ns = U2(&c);
        for (unsigned i = 0; i < ns; i++) {
            ID(&c);
            rdn(&c, (unsigned)type_size(U1(&c)));
        }
        unsigned nf = U2(&c);
        for (unsigned i = 0; i < nf; i++) {
            ID(&c);
            unsigned ty = U1(&c);
            if (ty == 2) {
                struct cur v = {off, LEN, 0};
                uint64_t r = ID(&v);
                if (r != 0 && map_get(&objects, r) == NULL)
                    bad++;
            }
            off += (size_t)type_size(ty);
        }
        cls = super;
    }
    return bad;
}

static char *class_name_of_id(uint64_t cls, char *buf, size_t len)
{
    uint64_t *serial = map_get(&class_by_obj, cls);
    uint64_t *name = serial ? map_get(&class_name_of_serial, *serial) : NULL;
    if (name == NULL) {
        snprintf(buf, len, "?");
        return buf;
    }
    utf8_text(*name, buf, len);
    return buf;
}

static void norm(char *s)
{
    for (; *s; s++)
        if (*s == '.')
            *s = '/';
}

/* "class.method" of a trace's top frame. */
static void trace_top(uint32_t serial, char *buf, size_t len)
{
    snprintf(buf, len, "<empty>");
    uint64_t *at = map_get(&trace_at, serial);
    if (at == NULL)
        return;
    struct cur c = {(size_t)*at + 9, LEN, 0};
    U4(&c);
    U4(&c);
    if (U4(&c) == 0)
        return;
    uint64_t fid = ID(&c);
    uint64_t *fat = map_get(&frame_at, fid);
    if (fat == NULL)
        return;
    struct cur f = {(size_t)*fat + 9, LEN, 0};
    ID(&f);
    uint64_t mname = ID(&f);
    ID(&f);
    ID(&f);
    uint32_t cser = U4(&f);
    char cn[512], mn[256];
    uint64_t *cname = map_get(&class_name_of_serial, cser);
    utf8_text(cname ? *cname : 0, cn, sizeof cn);
    utf8_text(mname, mn, sizeof mn);
    snprintf(buf, len, "%s.%s", cn, mn);
}

int main(int argc, char **argv)
{
    const char *classes[16];
    int nclasses = 0;
    FILE_NAME = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--class") == 0 && i + 1 < argc && nclasses < 16)
            classes[nclasses++] = argv[++i];
        else if (strcmp(argv[i], "--strict") == 0)
            strict = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (argv[i][0] != '-' && FILE_NAME == NULL)
            FILE_NAME = argv[i];
        else
            FILE_NAME = NULL, i = argc;
    }
    if (FILE_NAME == NULL) {
        fprintf(stderr, "usage: hprofcheck FILE [--class NAME]... [--strict]\n");
        return 2;
    }
    int fd = open(FILE_NAME, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "hprofcheck: %s: %s\n", FILE_NAME, strerror(errno));
        return 2;
    }
    LEN = (size_t)st.st_size;
    P = LEN ? mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (LEN && P == MAP_FAILED) {
        fprintf(stderr, "hprofcheck: %s: mmap: %s\n", FILE_NAME, strerror(errno));
        return 2;
    }
    /* Header. */
    const char *magic = P ? memchr(P, 0, LEN < 64 ? LEN : 64) : NULL;
    if (magic == NULL || (strcmp((const char *)P, "JAVA PROFILE 1.0.1") != 0 &&
                          strcmp((const char *)P, "JAVA PROFILE 1.0.2") != 0)) {
        fprintf(stderr, "hprofcheck: %s: not an HPROF binary file (bad header)\n", FILE_NAME);
        return 1;
    }
    struct cur c = {(size_t)((const unsigned char *)magic - P) + 1, LEN, 0};
    IDSZ = U4(&c);
    U8(&c);
    if (c.bad || (IDSZ != 4 && IDSZ != 8)) {
        fprintf(stderr, "hprofcheck: %s: bad identifier size %u\n", FILE_NAME, IDSZ);
        return 1;
    }
    long nrec = 0;
    int in_dump = 0;
    while (c.off < LEN) {
        size_t start = c.off;
        struct cur h = {c.off, LEN, 0};
        unsigned tag = U1(&h);
        U4(&h);
        uint32_t len = U4(&h);
        if (h.bad) {
            err(start, "truncated record header");
            break;
        }
        if (LEN - h.off < len) {
            err(start, "record %s of %u bytes runs past the end of the file",
                tag_name((int)tag) ? tag_name((int)tag) : "?", len);
            break;
        }
        nrec++;
        counts[tag]++;
        struct cur b = {h.off, h.off + len, 0};
        switch (tag) {
        case 0x01: {
            uint64_t id = ID(&b);
            if (!b.bad) {
                define(&utf8, id, 1, start, "UTF8 id");
                map_add(&utf8_at, id, start);
            }
            b.off = b.end;
            break;
        }
        case 0x02: {
            uint32_t serial = U4(&b);
            uint64_t obj = ID(&b);
            uint32_t trace = U4(&b);
            uint64_t name = ID(&b);
            if (b.bad)
                break;
            define(&class_serial, serial, obj, start, "class serial");
            map_add(&class_by_obj, obj, serial);
            map_add(&class_name_of_serial, serial, name);
            ref(3, trace, start);
            ref(0, name, start);
            break;
        }
        case 0x03:
            ref(1, U4(&b), start);
            break;
        case 0x04: {
            uint64_t id = ID(&b);
            if (!b.bad) {
                define(&frames, id, 1, start, "frame id");
                map_add(&frame_at, id, start);
            }
            ref(0, ID(&b), start);
            ref(0, ID(&b), start);
            ref(0, ID(&b), start);
            ref(1, U4(&b), start);
            U4(&b);
            break;
        }
        case 0x05: {
            uint32_t serial = U4(&b);
            if (!b.bad) {
                define(&trace_serials, serial, 1, start, "trace serial");
                map_add(&trace_at, serial, start);
            }
            ref(4, U4(&b), start);
            uint32_t n = U4(&b);
            for (uint32_t i = 0; i < n && !b.bad; i++)
                ref(2, ID(&b), start);
            break;
        }
        case 0x06: {
            U2(&b);
            U4(&b);
            U4(&b);
            U4(&b);
            U8(&b);
            U8(&b);
            uint32_t n = U4(&b);
            for (uint32_t i = 0; i < n && !b.bad; i++) {
                struct site s;
                s.kind = U1(&b);
                s.cls = U4(&b);
                s.trace = U4(&b);
                s.live_b = U4(&b);
                s.live_o = U4(&b);
                s.alloc_b = U4(&b);
                s.alloc_o = U4(&b);
                if (b.bad)
                    break;
                if (s.kind != 0 && s.kind != 2 && type_size(s.kind) < 0)
                    err(start, "ALLOC SITES site %u: kind %u", i, s.kind);
                if (s.cls != 0 || s.kind == 0 || s.kind == 2)
                    ref(1, s.cls, start);
                ref(3, s.trace, start);
                if (s.live_o > s.alloc_o)
                    err(start, "ALLOC SITES site %u: %u live objects of %u allocated", i, s.live_o, s.alloc_o);
                sites = grow(sites, &cap_sites, nsites, sizeof *sites);
                sites[nsites++] = s;
            }
            break;
        }
        case 0x07:
            U4(&b);
            U4(&b);
            U8(&b);
            U8(&b);
            break;
        case 0x0A:
            if (!b.bad) {
                uint32_t serial = U4(&b);
                define(&thread_serials, serial, 1, start, "thread serial");
            }
            ID(&b);
            ref(3, U4(&b), start);
            for (int i = 0; i < 3; i++) {
                uint64_t n = ID(&b);
                if (n != 0)
                    ref(0, n, start);
            }
            break;
        case 0x0B:
            ref(4, U4(&b), start);
            break;
        case 0x0C:
        case 0x1C:
            in_dump = 1;
            heap_records(&b);
            break;
        case 0x2C:
            if (!in_dump)
                err(start, "HEAP DUMP END without a heap dump segment");
            in_dump = 0;
            break;
        case 0x0D: {
            uint32_t total = U4(&b), n = U4(&b);
            uint64_t sum = 0;
            nsamples = 0;
            for (uint32_t i = 0; i < n && !b.bad; i++) {
                struct sample s;
                s.count = U4(&b);
                s.trace = U4(&b);
                ref(3, s.trace, start);
                sum += s.count;
                samples = grow(samples, &cap_samples, nsamples, sizeof *samples);
                samples[nsamples++] = s;
            }
            samples_total = total;
            if (!b.bad && sum > total)
                err(start, "CPU SAMPLES: the rows count %llu, more than the total %u",
                    (unsigned long long)sum, total);
            break;
        }
        case 0x0E:
            U4(&b);
            U2(&b);
            break;
        default:
            err(start, "unknown record tag %#x", tag);
            b.off = b.end;
            break;
        }
        if (b.bad)
            err(start, "record %s: its fields run past its length %u",
                tag_name((int)tag) ? tag_name((int)tag) : "?", len);
        else if (b.off != b.end)
            err(start, "record %s: %zu bytes left over after its fields",
                tag_name((int)tag) ? tag_name((int)tag) : "?", b.end - b.off);
        c.off = h.off + len;
    }
    if (in_dump)
        err(LEN, "heap dump segments without HEAP DUMP END");

    /* References to definitions. */
    struct map *defs[] = {&utf8, &class_serial, &frames, &trace_serials, &thread_serials};
    long undefined[5] = {0};
    for (size_t i = 0; i < nrefs; i++)
        if (map_get(defs[refs[i].kind], refs[i].v) == NULL) {
            if (undefined[refs[i].kind]++ < 5)
                err(refs[i].off, "%s %#llx is used but never defined", kind_name[refs[i].kind],
                    (unsigned long long)refs[i].v);
            else
                errors++;
        }
    /* The heap. */
    long unres_fields = 0, unres_elems = 0, unres_other = 0;
    for (size_t i = 0; i < ninsts; i++) {
        struct inst *in = &insts[i];
        if (map_get(&class_dumps, in->cls) == NULL) {
            err(in->off, "INSTANCE DUMP of class %#llx, which has no CLASS DUMP",
                (unsigned long long)in->cls);
            continue;
        }
        long want = chain_bytes(in->cls, 0);
        if (want < 0)
            err(in->off, "INSTANCE DUMP: a superclass of %#llx has no CLASS DUMP",
                (unsigned long long)in->cls);
        else if ((uint32_t)want != in->nbytes)
            err(in->off, "INSTANCE DUMP: %u value bytes, its class chain's fields take %ld",
                in->nbytes, want);
        else
            unres_fields += instance_refs_unresolved(in->cls, in->values);
    }
    for (size_t i = 0; i < narrs; i++) {
        struct arr *a = &arrs[i];
        if (map_get(&class_dumps, a->cls) == NULL)
            err(a->off, "OBJ ARRAY DUMP of class %#llx, which has no CLASS DUMP",
                (unsigned long long)a->cls);
        for (uint32_t k = 0; k < a->n; k++) {
            struct cur v = {a->elems + (size_t)k * IDSZ, LEN, 0};
            uint64_t e = ID(&v);
            if (e != 0 && map_get(&objects, e) == NULL && unres_elems++ < 10 && verbose) {
                char n[512];
                printf("unresolved element %#llx (a class: %s)\n", (unsigned long long)e,
                       class_name_of_id(e, n, sizeof n));
            }
        }
    }
    for (size_t i = 0; i < class_dumps.cap; i++)
        if (class_dumps.k[i] && map_get(&class_by_obj, class_dumps.k[i]) == NULL)
            err((size_t)class_dumps.v[i], "CLASS DUMP of %#llx, which has no LOAD CLASS",
                (unsigned long long)class_dumps.k[i]);
    for (size_t i = 0; i < nobj_refs; i++)
        if (map_get(&objects, obj_refs[i]) == NULL)
            unres_other++;
    long unresolved = unres_fields + unres_elems + unres_other;
    if (strict && unresolved > 0)
        err(0, "%ld object references name no dumped object", unresolved);

    /* Report. */
    printf("hprofcheck: %s: %s, identifier size %u, %ld records, %s\n", FILE_NAME, (const char *)P,
           IDSZ, nrec, errors ? "INVALID" : "valid");
    printf("records:");
    for (int t = 0; t < 256; t++)
        if (counts[t])
            printf(" %s=%ld", tag_name(t) ? tag_name(t) : "?", counts[t]);
    printf("\nheap:");
    for (int t = 0; t < 256; t++)
        if (sub_counts[t])
            printf(" %s=%ld", sub_name(t) ? sub_name(t) : "?", sub_counts[t]);
    printf("\nobjects: %zu dumped; unresolved object references: %ld (fields %ld, elements %ld, roots/statics/constants %ld)\n",
           objects.n, unresolved, unres_fields, unres_elems, unres_other);
    for (int k = 0; k < nclasses; k++) {
        char want[512], have[512];
        snprintf(want, sizeof want, "%s", classes[k]);
        norm(want);
        long n = 0;
        for (size_t i = 0; i < ninsts; i++) {
            class_name_of_id(insts[i].cls, have, sizeof have);
            norm(have);
            n += strcmp(have, want) == 0;
        }
        printf("instances of %s: %ld\n", classes[k], n);
        long long lo = 0, ao = 0;
        long ns = 0;
        for (size_t i = 0; i < nsites; i++) {
            uint64_t *name = map_get(&class_name_of_serial, sites[i].cls);
            if (sites[i].kind != 0 || name == NULL)
                continue;
            utf8_text(*name, have, sizeof have);
            norm(have);
            if (strcmp(have, want) == 0) {
                ns++;
                lo += sites[i].live_o;
                ao += sites[i].alloc_o;
            }
        }
        printf("sites of %s: %ld, live objects %lld, allocated objects %lld\n", classes[k], ns, lo, ao);
    }
    if (nsamples > 0) {
        printf("cpu samples: total %llu, %zu traces\n", (unsigned long long)samples_total, nsamples);
        for (size_t i = 0; i < nsamples && i < 10; i++) {
            char top[1100];
            trace_top(samples[i].trace, top, sizeof top);
            printf("  %u trace %u %s\n", samples[i].count, samples[i].trace, top);
        }
    }
    if (errors > 20)
        fprintf(stderr, "hprofcheck: %s: %ld errors in all\n", FILE_NAME, errors);
    return errors ? 1 : 0;
}
