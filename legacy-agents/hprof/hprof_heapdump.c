/* hprof_heapdump.c — heap=dump: parse JVMPI's level-2 heap dump, write HEAP DUMP.
 *
 * HPROF requests HEAP_DUMP at level 2 (RequestEvent with a NULL argument) at each dump and
 * gets one buffer of records (spec section 4.2): ids, JNIEnv* and pointers native-endian
 * at pointer width, numbers and primitive values big-endian. A CLASS_DUMP cannot be
 * parsed without its class's CLASS_LOAD (the interface count and the static fields'
 * types are not in the record), and an INSTANCE_DUMP's values are laid out by the fields
 * of the class and its superclasses (the superclass comes from the class's CLASS_DUMP).
 * So the buffer is walked three times:
 *   A (no lock)  every class named by a record is known, asking for its CLASS_LOAD if not;
 *                each dumped class's superclass and instance size are noted;
 *   B (locked)   field layouts, the array classes of object arrays (binary), names,
 *                counts; the traces the dump will name are written;
 *   C (locked)   the output: ASCII ROOT/CLS/OBJ/ARR lines, or binary heap dump segments,
 *                ids rewritten big-endian and at 8 bytes.
 * An object's size and trace come from OBJECT_ALLOC; an object HPROF never saw allocated
 * has the <empty> trace and a size computed from the dump (instance size of its class;
 * arrays: a 16-byte header plus the elements, rounded up to 8). A record that does not
 * fit ends the walk with a note in the output and on stderr; nothing is guessed.
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>

#define PTR ((size_t)sizeof(void *))

struct hrec {
    int type;
    uint64_t id, id2;       /* object; env / handle / class / element class */
    uint32_t u4;            /* frame, instance size, element count, byte count */
    struct cls *cls;        /* CLASS_DUMP: the class; INSTANCE_DUMP: its class */
    uint64_t super, loader, signers, domain;
    const unsigned char *ifaces;
    uint32_t ncp;
    const unsigned char *cp;
    const unsigned char *statics;
    const unsigned char *data; /* instance values / array elements */
    int elem_type;
};

struct hcur {
    const unsigned char *p;
    size_t len, off;
    const char *why;
    int locked;             /* walk B/C: classes by cls_find; walk A: cls_get */
};

static uint64_t rd_ptr(struct hcur *c)
{
    uint64_t v = 0;
    if (PTR == 8) {
        memcpy(&v, c->p + c->off, 8);
    } else {
        uint32_t x;
        memcpy(&x, c->p + c->off, 4);
        v = x;
    }
    c->off += PTR;
    return v;
}

static uint32_t be4(const unsigned char *q)
{
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

static int need(struct hcur *c, size_t n)
{
    return c->len - c->off >= n;
}

static int sig_size(char s)
{
    switch (s) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    case 'L': case '[': return (int)PTR;
    default: return -1;
    }
}

static int ty_size(int ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return (int)PTR;
    default: return -1;
    }
}

/* HPROF basic type of a field signature (the codes equal JVMPI's type codes). */
static int sig_type(char s)
{
    switch (s) {
    case 'Z': return JVMPI_BOOLEAN;
    case 'C': return JVMPI_CHAR;
    case 'F': return JVMPI_FLOAT;
    case 'D': return JVMPI_DOUBLE;
    case 'B': return JVMPI_BYTE;
    case 'S': return JVMPI_SHORT;
    case 'I': return JVMPI_INT;
    case 'J': return JVMPI_LONG;
    default: return JVMPI_CLASS;
    }
}

static const char *ty_name(int ty)
{
    const char *n = prim_array_name(ty);
    static char buf[16];
    if (n == NULL)
        return "?";
    snprintf(buf, sizeof buf, "%.*s", (int)strlen(n) - 2, n);
    return buf;
}

static struct cls *lookup(struct hcur *c, uint64_t id)
{
    return c->locked ? cls_find((jobjectID)(uintptr_t)id) : cls_get((jobjectID)(uintptr_t)id, 1);
}

/* Parse the record at c->off. 1: a record; 0: the end; -1: malformed (c->why). */
static int next_record(struct hcur *c, struct hrec *r)
{
    if (c->off >= c->len)
        return 0;
    memset(r, 0, sizeof *r);
    r->type = c->p[c->off++];
#define NEED(n, what)                                                                      \
    do {                                                                                   \
        if (!need(c, (n))) {                                                               \
            c->why = what;                                                                 \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)
    switch (r->type) {
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
        NEED(PTR, "truncated root");
        r->id = rd_ptr(c);
        return 1;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
    case JVMPI_GC_ROOT_NATIVE_STACK:
        NEED(2 * PTR, "truncated root");
        r->id = rd_ptr(c);
        r->id2 = rd_ptr(c);
        return 1;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        NEED(2 * PTR + 4, "truncated frame root");
        r->id = rd_ptr(c);
        r->id2 = rd_ptr(c);
        r->u4 = be4(c->p + c->off);
        c->off += 4;
        return 1;
    case JVMPI_GC_CLASS_DUMP: {
        NEED(7 * PTR + 4, "truncated CLASS_DUMP");
        r->id = rd_ptr(c);
        r->super = rd_ptr(c);
        r->loader = rd_ptr(c);
        r->signers = rd_ptr(c);
        r->domain = rd_ptr(c);
        c->off += 2 * PTR; /* class name (String), reserved */
        r->u4 = be4(c->p + c->off);
        c->off += 4;
        r->cls = lookup(c, r->id);
        if (r->cls == NULL) {
            c->why = "CLASS_DUMP of a class with no CLASS_LOAD";
            return -1;
        }
        NEED((size_t)r->cls->num_interfaces * PTR + 2, "truncated CLASS_DUMP interfaces");
        r->ifaces = c->p + c->off;
        c->off += (size_t)r->cls->num_interfaces * PTR;
        r->ncp = (uint32_t)c->p[c->off] << 8 | c->p[c->off + 1];
        c->off += 2;
        r->cp = c->p + c->off;
        for (uint32_t i = 0; i < r->ncp; i++) {
            NEED(3, "truncated constant pool");
            int sz = ty_size(c->p[c->off + 2]);
            c->off += 3;
            if (sz < 0) {
                c->why = "bad constant pool type";
                return -1;
            }
            NEED((size_t)sz, "truncated constant pool");
            c->off += (size_t)sz;
        }
        r->statics = c->p + c->off;
        for (int i = 0; i < r->cls->nstatics; i++) {
            int sz = sig_size(r->cls->statics[i].sig[0]);
            if (sz < 0) {
                c->why = "bad static field signature";
                return -1;
            }
            NEED((size_t)sz, "truncated statics");
            c->off += (size_t)sz;
        }
        return 1;
    }
    case JVMPI_GC_INSTANCE_DUMP:
        NEED(2 * PTR + 4, "truncated INSTANCE_DUMP");
        r->id = rd_ptr(c);
        r->id2 = rd_ptr(c);
        r->u4 = be4(c->p + c->off);
        c->off += 4;
        NEED(r->u4, "INSTANCE_DUMP values do not fit");
        r->data = c->p + c->off;
        c->off += r->u4;
        r->cls = lookup(c, r->id2);
        return 1;
    case JVMPI_GC_OBJ_ARRAY_DUMP:
        NEED(2 * PTR + 4, "truncated OBJ_ARRAY_DUMP");
        r->id = rd_ptr(c);
        r->u4 = be4(c->p + c->off);
        c->off += 4;
        r->id2 = rd_ptr(c);
        if ((c->len - c->off) / PTR < r->u4) {
            c->why = "OBJ_ARRAY_DUMP elements do not fit";
            return -1;
        }
        r->data = c->p + c->off;
        c->off += (size_t)r->u4 * PTR;
        if (r->id2 != 0)
            r->cls = lookup(c, r->id2);
        return 1;
    case JVMPI_GC_PRIM_ARRAY_DUMP: {
        NEED(PTR + 5, "truncated PRIM_ARRAY_DUMP");
        r->id = rd_ptr(c);
        r->u4 = be4(c->p + c->off);
        c->off += 4;
        r->elem_type = c->p[c->off++];
        int sz = ty_size(r->elem_type);
        if (sz < 0 || r->elem_type == JVMPI_CLASS) {
            c->why = "bad PRIM_ARRAY_DUMP element type";
            return -1;
        }
        if ((c->len - c->off) / (size_t)sz < r->u4) {
            c->why = "PRIM_ARRAY_DUMP elements do not fit";
            return -1;
        }
        r->data = c->p + c->off;
        c->off += (size_t)r->u4 * (size_t)sz;
        return 1;
    }
    default:
        c->why = "unknown record type";
        return -1;
    }
#undef NEED
}

/* The fields of an instance of c, in dump order: c's own, then its superclass's, ...
 * Holding data_lock. -1 if a class of the chain is unknown. */
static int layout(struct cls *c)
{
    if (c->layout_n >= 0)
        return c->layout_n;
    int n = 0, depth = 0;
    for (struct cls *k = c; k != NULL && depth < 1000; depth++) {
        n += k->ninst;
        if (k->dump_super == NULL)
            break;
        k = cls_find(k->dump_super);
        if (k == NULL || !k->dump_seen)
            return -1;
    }
    c->layout_types = malloc((size_t)n + 1);
    c->layout_fields = malloc(((size_t)n + 1) * sizeof *c->layout_fields);
    if (c->layout_types == NULL || c->layout_fields == NULL) {
        free(c->layout_types);
        free(c->layout_fields);
        c->layout_types = NULL;
        c->layout_fields = NULL;
        return -1;
    }
    int i = 0;
    for (struct cls *k = c; k != NULL && i < n; k = k->dump_super ? cls_find(k->dump_super) : NULL)
        for (int j = 0; j < k->ninst; j++, i++) {
            c->layout_types[i] = k->inst[j].sig[0] == '[' ? 'L' : k->inst[j].sig[0];
            c->layout_fields[i] = &k->inst[j];
        }
    c->layout_n = n;
    return n;
}

/* Does an INSTANCE_DUMP's byte count match its class's layout? */
static int layout_fits(struct cls *c, uint32_t bytes)
{
    int n = c ? layout(c) : -1;
    if (n < 0)
        return 0;
    size_t want = 0;
    for (int i = 0; i < n; i++) {
        int sz = sig_size(c->layout_types[i]);
        if (sz < 0)
            return 0;
        want += (size_t)sz;
    }
    return want == bytes;
}

static uint64_t native_id(const unsigned char *q)
{
    uint64_t v = 0;
    if (PTR == 8) {
        memcpy(&v, q, 8);
    } else {
        uint32_t x;
        memcpy(&x, q, 4);
        v = x;
    }
    return v;
}

/* Per-thread facts from heap_dump.traces. */
struct tinfo {
    JNIEnv *env;
    int nframes;                /* the whole stack */
    struct trace *full, *cut;   /* its trace: whole (binary), depth= frames (ASCII) */
};

static struct tinfo *tinfo_of(struct tinfo *ti, int nt, uint64_t env)
{
    for (int i = 0; i < nt; i++)
        if ((uint64_t)(uintptr_t)ti[i].env == env)
            return &ti[i];
    return NULL;
}

static jint obj_size(const struct hrec *r)
{
    jint size = 0;
    if (object_info((jobjectID)(uintptr_t)r->id, NULL, NULL, NULL, &size))
        return size;
    long long s;
    if (r->type == JVMPI_GC_INSTANCE_DUMP)
        return r->cls ? (jint)r->cls->dump_inst_size : 0;
    if (r->type == JVMPI_GC_OBJ_ARRAY_DUMP)
        s = 16 + (long long)r->u4 * 4; /* compressed references */
    else if (r->type == JVMPI_GC_PRIM_ARRAY_DUMP)
        s = 16 + (long long)r->u4 * ty_size(r->elem_type);
    else
        return 0;
    return (jint)((s + 7) & ~7LL);
}

static unsigned obj_trace(uint64_t id)
{
    struct trace *t = NULL;
    if (object_info((jobjectID)(uintptr_t)id, NULL, NULL, &t, NULL) && t != NULL)
        return t->serial;
    return trace_empty() ? trace_empty()->serial : 0;
}

/* ---- binary output ---- */

static struct buf seg;

static void seg_flush(int last)
{
    if (seg.len > 0 && !seg.oom)
        io_record(HPROF_HEAP_DUMP_SEGMENT, &seg);
    buf_free(&seg);
    if (last) {
        struct buf empty = {0};
        io_record(HPROF_HEAP_DUMP_END, &empty);
    }
}

static void seg_maybe_flush(void)
{
    if (seg.len >= (1u << 20))
        seg_flush(0);
}

/* A value of JVMPI type ty at q (native id, or big-endian primitive) into seg. */
static void put_value(int ty, const unsigned char *q)
{
    if (ty == JVMPI_CLASS)
        buf_id(&seg, native_id(q));
    else
        buf_bytes(&seg, q, (size_t)ty_size(ty));
}

static void write_class_bin(const struct hrec *r)
{
    struct cls *c = r->cls;
    buf_u1(&seg, HPROF_GC_CLASS_DUMP);
    buf_id(&seg, r->id);
    buf_u4(&seg, trace_empty() ? trace_empty()->serial : 0);
    buf_id(&seg, r->super);
    buf_id(&seg, r->loader);
    buf_id(&seg, r->signers);
    buf_id(&seg, r->domain);
    buf_id(&seg, 0);
    buf_id(&seg, 0);
    buf_u4(&seg, r->u4);
    buf_u2(&seg, r->ncp);
    const unsigned char *q = r->cp;
    for (uint32_t i = 0; i < r->ncp; i++) {
        int ty = q[2];
        buf_bytes(&seg, q, 3);
        put_value(ty, q + 3);
        q += 3 + ty_size(ty);
    }
    buf_u2(&seg, (unsigned)c->nstatics);
    q = r->statics;
    for (int i = 0; i < c->nstatics; i++) {
        int ty = sig_type(c->statics[i].sig[0]);
        buf_id(&seg, io_utf8_id(c->statics[i].name));
        buf_u1(&seg, (unsigned)ty);
        put_value(ty, q);
        q += ty_size(ty);
    }
    buf_u2(&seg, (unsigned)c->ninst);
    for (int i = 0; i < c->ninst; i++) {
        buf_id(&seg, io_utf8_id(c->inst[i].name));
        buf_u1(&seg, (unsigned)sig_type(c->inst[i].sig[0]));
    }
}

static void write_array_class_bin(struct cls *a, uint64_t object_id)
{
    buf_u1(&seg, HPROF_GC_CLASS_DUMP);
    buf_id(&seg, (uint64_t)(uintptr_t)a->id);
    buf_u4(&seg, trace_empty() ? trace_empty()->serial : 0);
    buf_id(&seg, object_id);
    for (int i = 0; i < 5; i++) /* loader, signers, domain, reserved x2 */
        buf_id(&seg, 0);
    buf_u4(&seg, 0);
    buf_u2(&seg, 0);
    buf_u2(&seg, 0);
    buf_u2(&seg, 0);
}

/* The array class that holds elements of class e (NULL: java.lang.Object). */
static struct cls *array_class_of(struct cls *e)
{
    return cls_synthetic_array(e);
}

/* ---- the dump ---- */

static void walk_error(struct hcur *c, size_t start)
{
    hprof_error("the heap dump is malformed at byte %zu of %zu (%s): the rest is not written",
                start, c->len, c->why ? c->why : "?");
    if (!opt.binary)
        io_printf("(the heap dump is malformed at byte %zu of %zu: %s)\n", start, c->len,
                  c->why ? c->why : "?");
}

void on_heap_dump(JVMPI_Event *ev)
{
    const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
    size_t len = p && ev->u.heap_dump.end ? (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin) : 0;
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_2) {
        hprof_error("heap dump of level %d: HPROF reads level 2 only", ev->u.heap_dump.dump_level);
        return;
    }
    int nt = ev->u.heap_dump.traces ? ev->u.heap_dump.num_traces : 0;
    struct tinfo *ti = calloc((size_t)(nt > 0 ? nt : 1), sizeof *ti);
    if (ti == NULL)
        return;

    /* Walk A, no lock: make sure every class is known; note supers and sizes. Threads and
     * their frames' methods too. */
    for (int i = 0; i < nt; i++) {
        JVMPI_CallTrace *tr = &ev->u.heap_dump.traces[i];
        ti[i].env = tr->env_id;
        ti[i].nframes = tr->num_frames > 0 ? tr->num_frames : 0;
        thr_get(tr->env_id);
        trace_fix(tr->frames, ti[i].nframes); /* lineno=n; method lookups */
    }
    struct hcur c = {p, len, 0, NULL, 0};
    struct hrec r;
    size_t start = 0;
    int rc;
    while ((rc = next_record(&c, &r)) > 0) {
        if (r.type == JVMPI_GC_CLASS_DUMP) {
            r.cls->dump_super = (jobjectID)(uintptr_t)r.super;
            r.cls->dump_inst_size = r.u4;
            r.cls->dump_seen = 1;
            free(r.cls->layout_types); /* the superclass may differ from the last dump's view */
            free(r.cls->layout_fields);
            r.cls->layout_types = NULL;
            r.cls->layout_fields = NULL;
            r.cls->layout_n = -1;
        }
        start = c.off;
    }
    size_t good = rc < 0 ? start : len; /* the well-formed prefix */

    LOCK();
    /* Walk B: traces, array classes, counts. */
    for (int i = 0; i < nt; i++) {
        JVMPI_CallTrace *tr = &ev->u.heap_dump.traces[i];
        struct thr *th = thr_find(tr->env_id);
        ti[i].full = trace_intern(tr->frames, ti[i].nframes, th);
        ti[i].cut = trace_intern(tr->frames, ti[i].nframes < opt.depth ? ti[i].nframes : opt.depth, th);
    }
    struct cls *object_class = cls_find_name("java.lang.Object");
    struct cls **arrs = NULL;
    size_t narrs = 0, cap_arrs = 0, nobjs = 0;
    long long bytes = 0;
    struct hcur b = {p, good, 0, NULL, 1};
    while (next_record(&b, &r) > 0) {
        switch (r.type) {
        case JVMPI_GC_CLASS_DUMP:
            nobjs++;
            break;
        case JVMPI_GC_INSTANCE_DUMP:
        case JVMPI_GC_PRIM_ARRAY_DUMP:
            nobjs++;
            bytes += obj_size(&r);
            break;
        case JVMPI_GC_OBJ_ARRAY_DUMP:
            nobjs++;
            bytes += obj_size(&r);
            if (opt.binary) {
                struct cls *a = array_class_of(r.cls);
                int have = 0;
                for (size_t i = 0; i < narrs && !have; i++)
                    have = arrs[i] == a;
                if (a != NULL && !have && grow_array(&arrs, &cap_arrs, narrs + 1, sizeof *arrs))
                    arrs[narrs++] = a;
            }
            break;
        default:
            break;
        }
    }
    if (opt.binary) /* every array class we know of: fields and elements may name their mirrors */
        for (size_t i = 0; i < classes_by_id.cap; i++) {
            uintptr_t k = pmap_key_at(&classes_by_id, i);
            struct cls *a = k ? cls_find((jobjectID)k) : NULL;
            int have = 0;
            if (a == NULL || a->name[0] != '[')
                continue;
            for (size_t j = 0; j < narrs && !have; j++)
                have = arrs[j] == a;
            if (!have && grow_array(&arrs, &cap_arrs, narrs + 1, sizeof *arrs))
                arrs[narrs++] = a;
        }
    trace_write_new();

    /* Walk C: the output. */
    struct hcur w = {p, good, 0, NULL, 1};
    long undecoded = 0;
    if (!opt.binary) {
        io_printf("HEAP DUMP BEGIN (%zu objects, %lld bytes) %s\n", nobjs, bytes, io_date());
        /* Thread objects: JVMPI dumps name none as roots (THREAD_OBJ was never emitted), so
         * they come from the thread table THREAD_START filled, one per thread the dump's
         * traces list. */
        for (int i = 0; i < nt; i++) {
            struct thr *th = thr_find(ti[i].env);
            if (th != NULL && th->obj != NULL)
                io_printf("ROOT %lx (kind=<thread>, id=%u, trace=%u)\n",
                          (unsigned long)(uintptr_t)th->obj, th->serial,
                          ti[i].cut ? ti[i].cut->serial : trace_empty()->serial);
        }
        while (next_record(&w, &r) > 0) {
            unsigned long id = (unsigned long)r.id;
            switch (r.type) {
            case JVMPI_GC_ROOT_UNKNOWN:
                io_printf("ROOT %lx (kind=<unknown>)\n", id);
                break;
            case JVMPI_GC_ROOT_JNI_GLOBAL:
                io_printf("ROOT %lx (kind=<JNI global ref>, id=%lx, trace=%u)\n", id,
                          (unsigned long)r.id2, trace_empty() ? trace_empty()->serial : 0);
                break;
            case JVMPI_GC_ROOT_JNI_LOCAL:
                io_printf("ROOT %lx (kind=<JNI local ref>, thread=%u, frame=%d)\n", id,
                          thread_serial_of((JNIEnv *)(uintptr_t)r.id2), (int)r.u4);
                break;
            case JVMPI_GC_ROOT_JAVA_FRAME:
                io_printf("ROOT %lx (kind=<Java stack>, thread=%u, frame=%d)\n", id,
                          thread_serial_of((JNIEnv *)(uintptr_t)r.id2), (int)r.u4);
                break;
            case JVMPI_GC_ROOT_NATIVE_STACK:
                io_printf("ROOT %lx (kind=<native stack>, thread=%u)\n", id,
                          thread_serial_of((JNIEnv *)(uintptr_t)r.id2));
                break;
            case JVMPI_GC_ROOT_STICKY_CLASS: {
                struct cls *k = cls_find((jobjectID)(uintptr_t)r.id);
                io_printf("ROOT %lx (kind=<system class>, name=%s)\n", id, k ? k->disp : "<unknown>");
                break;
            }
            case JVMPI_GC_ROOT_THREAD_BLOCK:
                io_printf("ROOT %lx (kind=<thread block>, thread=%u)\n", id,
                          thread_serial_of((JNIEnv *)(uintptr_t)r.id2));
                break;
            case JVMPI_GC_ROOT_MONITOR_USED:
                io_printf("ROOT %lx (kind=<busy monitor>)\n", id);
                break;
            case JVMPI_GC_CLASS_DUMP: {
                struct cls *k = r.cls;
                io_printf("CLS %lx (name=%s, trace=%u)\n", id, k->disp,
                          trace_empty() ? trace_empty()->serial : 0);
                if (r.super)
                    io_printf("\tsuper\t\t%lx\n", (unsigned long)r.super);
                if (r.loader)
                    io_printf("\tloader\t\t%lx\n", (unsigned long)r.loader);
                if (r.signers)
                    io_printf("\tsigners\t\t%lx\n", (unsigned long)r.signers);
                if (r.domain)
                    io_printf("\tdomain\t\t%lx\n", (unsigned long)r.domain);
                const unsigned char *q = r.statics;
                for (int i = 0; i < k->nstatics; i++) {
                    int sz = sig_size(k->statics[i].sig[0]);
                    if (sig_type(k->statics[i].sig[0]) == JVMPI_CLASS && native_id(q) != 0)
                        io_printf("\tstatic %s\t%lx\n", k->statics[i].name, (unsigned long)native_id(q));
                    q += sz;
                }
                q = r.cp;
                for (uint32_t i = 0; i < r.ncp; i++) {
                    int ty = q[2];
                    if (ty == JVMPI_CLASS && native_id(q + 3) != 0)
                        io_printf("\tconstant[%u]\t%lx\n", (unsigned)(q[0] << 8 | q[1]),
                                  (unsigned long)native_id(q + 3));
                    q += 3 + ty_size(ty);
                }
                break;
            }
            case JVMPI_GC_INSTANCE_DUMP: {
                struct cls *k = r.cls;
                io_printf("OBJ %lx (sz=%d, trace=%u, class=%s@%lx)\n", id, (int)obj_size(&r),
                          obj_trace(r.id), k ? k->disp : "<unknown>", (unsigned long)r.id2);
                if (!layout_fits(k, r.u4)) {
                    undecoded++;
                    break;
                }
                const unsigned char *q = r.data;
                for (int i = 0; i < k->layout_n; i++) {
                    char t = k->layout_types[i];
                    if (t == 'L' && native_id(q) != 0)
                        io_printf("\t%s\t%lx\n", k->layout_fields[i]->name, (unsigned long)native_id(q));
                    q += sig_size(t);
                }
                break;
            }
            case JVMPI_GC_OBJ_ARRAY_DUMP: {
                io_printf("ARR %lx (sz=%d, trace=%u, nelems=%u, elem type=%s@%lx)\n", id,
                          (int)obj_size(&r), obj_trace(r.id), r.u4,
                          r.cls ? r.cls->disp : "java.lang.Object", (unsigned long)r.id2);
                for (uint32_t i = 0; i < r.u4; i++) {
                    uint64_t e = native_id(r.data + (size_t)i * PTR);
                    if (e != 0)
                        io_printf("\t[%u]\t\t%lx\n", i, (unsigned long)e);
                }
                break;
            }
            case JVMPI_GC_PRIM_ARRAY_DUMP:
                io_printf("ARR %lx (sz=%d, trace=%u, nelems=%u, elem type=%s)\n", id,
                          (int)obj_size(&r), obj_trace(r.id), r.u4, ty_name(r.elem_type));
                break;
            default:
                break;
            }
        }
        if (rc < 0)
            walk_error(&c, start);
        io_printf("HEAP DUMP END\n");
    } else {
        uint64_t obj_id = object_class ? (uint64_t)(uintptr_t)object_class->id : 0;
        for (int i = 0; i < nt; i++) { /* thread objects: from the thread table, as above */
            struct thr *th = thr_find(ti[i].env);
            if (th == NULL || th->obj == NULL)
                continue;
            buf_u1(&seg, HPROF_GC_ROOT_THREAD_OBJ);
            buf_id(&seg, (uint64_t)(uintptr_t)th->obj);
            buf_u4(&seg, th->serial);
            buf_u4(&seg, ti[i].full ? ti[i].full->serial : trace_empty()->serial);
        }
        while (next_record(&w, &r) > 0) {
            struct tinfo *t;
            switch (r.type) {
            case JVMPI_GC_ROOT_UNKNOWN:
            case JVMPI_GC_ROOT_STICKY_CLASS:
            case JVMPI_GC_ROOT_MONITOR_USED:
                buf_u1(&seg, (unsigned)r.type);
                buf_id(&seg, r.id);
                break;
            case JVMPI_GC_ROOT_JNI_GLOBAL:
                buf_u1(&seg, HPROF_GC_ROOT_JNI_GLOBAL);
                buf_id(&seg, r.id);
                buf_id(&seg, r.id2);
                break;
            case JVMPI_GC_ROOT_JNI_LOCAL:
            case JVMPI_GC_ROOT_JAVA_FRAME: {
                /* JVMPI counts frames N..1 from the innermost; HPROF 0.. from it. */
                t = tinfo_of(ti, nt, r.id2);
                uint32_t frame = r.u4;
                if ((int32_t)frame > 0 && t != NULL && t->nframes >= (int32_t)frame)
                    frame = (uint32_t)(t->nframes - (int32_t)frame);
                else
                    frame = 0xffffffffu;
                buf_u1(&seg, (unsigned)r.type);
                buf_id(&seg, r.id);
                buf_u4(&seg, thread_serial_of((JNIEnv *)(uintptr_t)r.id2));
                buf_u4(&seg, frame);
                break;
            }
            case JVMPI_GC_ROOT_NATIVE_STACK:
            case JVMPI_GC_ROOT_THREAD_BLOCK:
                buf_u1(&seg, (unsigned)r.type);
                buf_id(&seg, r.id);
                buf_u4(&seg, thread_serial_of((JNIEnv *)(uintptr_t)r.id2));
                break;
            case JVMPI_GC_CLASS_DUMP:
                write_class_bin(&r);
                break;
            case JVMPI_GC_INSTANCE_DUMP: {
                struct cls *k = r.cls;
                buf_u1(&seg, HPROF_GC_INSTANCE_DUMP);
                buf_id(&seg, r.id);
                buf_u4(&seg, obj_trace(r.id));
                buf_id(&seg, r.id2);
                if (!layout_fits(k, r.u4)) {
                    /* Cannot tell ids from numbers: the values are left out. */
                    undecoded++;
                    buf_u4(&seg, 0);
                    break;
                }
                size_t nb = 0;
                for (int i = 0; i < k->layout_n; i++)
                    nb += k->layout_types[i] == 'L' ? 8 : (size_t)sig_size(k->layout_types[i]);
                buf_u4(&seg, (uint32_t)nb);
                const unsigned char *q = r.data;
                for (int i = 0; i < k->layout_n; i++) {
                    char ty = k->layout_types[i];
                    put_value(sig_type(ty), q);
                    q += sig_size(ty);
                }
                break;
            }
            case JVMPI_GC_OBJ_ARRAY_DUMP: {
                struct cls *a = array_class_of(r.cls);
                buf_u1(&seg, HPROF_GC_OBJ_ARRAY_DUMP);
                buf_id(&seg, r.id);
                buf_u4(&seg, obj_trace(r.id));
                buf_u4(&seg, r.u4);
                buf_id(&seg, a ? (uint64_t)(uintptr_t)a->id : 0);
                for (uint32_t i = 0; i < r.u4; i++)
                    buf_id(&seg, native_id(r.data + (size_t)i * PTR));
                break;
            }
            case JVMPI_GC_PRIM_ARRAY_DUMP:
                buf_u1(&seg, HPROF_GC_PRIM_ARRAY_DUMP);
                buf_id(&seg, r.id);
                buf_u4(&seg, obj_trace(r.id));
                buf_u4(&seg, r.u4);
                buf_u1(&seg, (unsigned)r.elem_type);
                buf_bytes(&seg, r.data, (size_t)r.u4 * (size_t)ty_size(r.elem_type));
                break;
            default:
                break;
            }
            seg_maybe_flush();
        }
        /* JVMPI dumps no array classes at level 2: their CLASS DUMPs. */
        for (size_t i = 0; i < narrs; i++) {
            write_array_class_bin(arrs[i], obj_id);
            seg_maybe_flush();
        }
        if (rc < 0)
            walk_error(&c, start);
        if (seg.oom)
            hprof_error("out of memory writing the heap dump");
        seg_flush(1);
    }
    if (undecoded > 0)
        hprof_error("%ld instance records did not match their classes' fields; their values are left out",
                    undecoded);
    UNLOCK();
    free(arrs);
    free(ti);
}
