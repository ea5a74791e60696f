/* dump_ask.c — a heap analyzer of the JDK 1.2-1.4 kind: DisableGC, a heap dump to list what
 * the heap holds, then RequestEvent(OBJECT_ALLOC, id) and RequestEvent(OBJECT_DUMP, id) for
 * every id the dump lists (tests/it/dumps/dump_ask.sh, workload tests/java/DumpAsk.java).
 *
 * A system thread (dumpask-control) waits for the system property dumpask.ready, then for
 * each level of levels=LIST (default 012): DisableGC, RequestEvent(HEAP_DUMP, level); the
 * handler copies the dump and lists its object ids (level 0: every record; levels 1 and 2:
 * class, instance, object-array and primitive-array records, decoded with what CLASS_LOAD
 * said of each class, asked for with RequestEvent(CLASS_LOAD) when unknown). Option inside:
 * the handler itself asks about every id (phase "inside"); option after: the control thread
 * asks again once the handler returned (phase "after"); neither given: both. Then EnableGC
 * (option nodisable: no DisableGC/EnableGC at all). Finally it sets dumpask.done=ok. Option
 * storm: no waiting for dumpask.ready, one second after JVM_INIT_DONE instead (a workload that
 * knows nothing of the agent); option max=N: at most N ids per phase, spread over the dump;
 * options noalloc, nodump: no OBJECT_ALLOC, no OBJECT_DUMP requests.
 *
 * For each id: OBJECT_ALLOC must come once, naming that id, with the is_array of the level-0
 * record's type; OBJECT_DUMP must come once, its record for that id and of the kind
 * OBJECT_ALLOC said (an instance or class dump for a normal object, an object-array dump
 * for JVMPI_CLASS, a primitive-array dump of that element type), an instance's class the
 * one OBJECT_ALLOC named. A request answered JVMPI_FAIL is counted (an object collected
 * since), never judged here. Of the workload's objects (classes named prefix..., default
 * DumpAsk) it reads the fields serial and stamp from the OBJECT_DUMP (stamp must be
 * 3*serial+1), and it checks the primitive arrays of the marker length 777 element by
 * element (element i = 3*i in the array's type).
 *
 * Output, per level L and phase P:
 *   dump_ask: dump level=L records=N ids=N bytes=N
 *   dump_ask: ask level=L phase=P ids=N alloc_ok=N alloc_fail=N dump_ok=N dump_fail=N
 *             class_objects=N class_dumps=N class_instances=N class_norecord=N replaced=N
 *             class_compared=N class_unreached=N
 *   (class_compared, levels 1 and 2: class dumps of OBJECT_DUMP held against the class's
 *   record in the heap dump: the same bytes up to the constant pool, every constant-pool
 *   entry of the heap dump's record present, and, for the workload's classes at level 2,
 *   the same statics; a mismatch is a FAIL. class_unreached: the heap dump's record has no
 *   signers, protection domain nor constant pool and OBJECT_DUMP's has: a class the dump's
 *   walk did not reach, the rest of the two records alike)
 *   (replaced: int[] fillers of a JDK 17 dump whose id another object took: see ask())
 *   dump_ask: class level=L phase=P name=NAME objects=N classes=N dumped=N serial_sum=S
 *             minsize=N maxsize=N
 *   dump_ask: markers level=L phase=P types=<codes of the good 777-arrays, sorted> bad=N
 *   dump_ask: keep level=L phase=P arrays=N elements=N       (object arrays of DumpAskKept)
 *   dump_ask: lambdas level=L phase=P objects=N               (classes named ...$$Lambda...)
 * then "dump_ask: done fails=N". Violations print "dump_ask: FAIL ...".
 */
#include <jvmpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIT_NAME "dump_ask"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 40
#include "kit/out.h"
#include "kit/jvm.h"
#include "kit/pmap.h"
#include "kit/checked.h"

#define IDSZ ((int)sizeof(void *))
#define MARK 777

static JVMPI_RawMonitor lock;
static int opt_inside, opt_after, opt_nodisable, opt_storm, opt_noalloc, opt_nodump;
static long opt_max; /* ask about at most this many ids per phase, spread over the dump (0: all) */
static char opt_levels[8] = "012", opt_prefix[64] = "DumpAsk";

struct cls {
    jobjectID id;
    char *name;
    int nif, nstat, ninst;
    char *stypes, *itypes;  /* first signature char per field, CLASS_LOAD order */
    int off_serial, off_stamp; /* byte offsets of the int serial, long stamp in a level-2 instance, or -1 */
    long count, dumped, sum;
    int minsize, maxsize;
};
static struct pmap classes; /* class id -> struct cls */
static jobjectID class_class; /* java.lang.Class */

/* The dump being asked about. */
static unsigned char *dump;
static size_t dump_len;
static int dump_level, got_dump;
static jobjectID *ids;
static size_t nids;
static struct pmap class_recs; /* levels 1, 2: class id -> its CLASS_DUMP's offset + 1 */
static signed char *types; /* level 0: each id's record type; else -1 */

/* The answer to the request in progress. */
static jobjectID want;
static int got_alloc, got_odump;
static jobjectID a_class;
static jint a_is_array, a_size;
static unsigned char *od;
static size_t od_len, od_cap;

/* Per phase. */
static struct tally {
    long ids, alloc_ok, alloc_fail, dump_ok, dump_fail;
    long class_objects, class_dumps, class_instances, class_norecord;
    long keep_arrays, keep_elements, lambdas;
    long replaced; /* an int[] filler the dump listed, whose place another object took */
    long class_compared, class_unreached;
    int marker_good[16];
    long marker_bad;
} t;

static char type_char(const char *sig) { return sig == NULL ? '?' : (sig[0] == '[' ? 'L' : sig[0]); }

static int sig_size(char c)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return IDSZ;
    }
}

static int ty_size(int ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return IDSZ;
    default: return -1;
    }
}

static jobjectID get_id(const unsigned char *p)
{
    jobjectID id;
    memcpy(&id, p, sizeof id);
    return id;
}

static uint32_t get_u4(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int mine(const char *name) { return strncmp(name, opt_prefix, strlen(opt_prefix)) == 0; }

static void on_class_load(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.class_load.class_id;
    jvmpi->RawMonitorEnter(lock);
    if (pm_find(&classes, cid) == NULL) {
        struct cls *c = calloc(1, sizeof *c);
        c->id = cid;
        c->name = strdup(S(ev->u.class_load.class_name));
        c->nif = ev->u.class_load.num_interfaces;
        c->nstat = ev->u.class_load.num_static_fields;
        c->ninst = ev->u.class_load.num_instance_fields;
        c->stypes = malloc((size_t)c->nstat + 1);
        c->itypes = malloc((size_t)c->ninst + 1);
        for (int i = 0; i < c->nstat; i++)
            c->stypes[i] = type_char(ev->u.class_load.statics[i].field_signature);
        c->stypes[c->nstat] = 0;
        c->off_serial = c->off_stamp = -1;
        int off = 0;
        for (int i = 0; i < c->ninst; i++) {
            JVMPI_Field *f = &ev->u.class_load.instances[i];
            c->itypes[i] = type_char(f->field_signature);
            if (strcmp(S(f->field_name), "serial") == 0 && c->itypes[i] == 'I')
                c->off_serial = off;
            if (strcmp(S(f->field_name), "stamp") == 0 && c->itypes[i] == 'J')
                c->off_stamp = off;
            off += sig_size(c->itypes[i]);
        }
        c->itypes[c->ninst] = 0;
        if (strcmp(c->name, "java.lang.Class") == 0)
            class_class = cid;
        pm_put(&classes, cid, c);
    }
    jvmpi->RawMonitorExit(lock);
}

static struct cls *class_of(jobjectID cid)
{
    if (cid == NULL)
        return NULL;
    jvmpi->RawMonitorEnter(lock);
    struct cls *c = pm_find(&classes, cid);
    jvmpi->RawMonitorExit(lock);
    if (c != NULL)
        return c;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid);
    jvmpi->RawMonitorEnter(lock);
    c = pm_find(&classes, cid);
    jvmpi->RawMonitorExit(lock);
    if (rc != JVMPI_SUCCESS || c == NULL)
        FAIL("RequestEvent(CLASS_LOAD, %p): rc=%d", (void *)cid, (int)rc);
    return c;
}

/* ---- the dump's ids ---- */

static void add_id(jobjectID id, int type)
{
    static size_t cap;
    if (nids == cap) {
        cap = cap ? 2 * cap : 65536;
        ids = realloc(ids, cap * sizeof *ids);
        types = realloc(types, cap);
    }
    ids[nids] = id;
    types[nids++] = (signed char)type;
}

static void list_level0(void)
{
    if (dump_len % (size_t)(1 + IDSZ) != 0)
        FAIL("level-0 dump of %zu bytes is not a whole number of records", dump_len);
    for (size_t off = 0; off + 1 + IDSZ <= dump_len; off += 1 + IDSZ)
        add_id(get_id(dump + off + 1), dump[off]);
}

static void list_level12(void)
{
    const unsigned char *p = dump, *end = dump + dump_len;
#define NEED(n)                                                                         \
    do {                                                                                \
        if ((size_t)(end - p) < (size_t)(n)) {                                          \
            FAIL("record type %#x at offset %ld runs past the end of the dump", ty,      \
                 (long)(rec - dump));                                                   \
            return;                                                                     \
        }                                                                               \
    } while (0)
    while (p < end) {
        const unsigned char *rec = p;
        int ty = *p++;
        switch (ty) {
        case JVMPI_GC_ROOT_UNKNOWN:
        case JVMPI_GC_ROOT_STICKY_CLASS:
        case JVMPI_GC_ROOT_MONITOR_USED:
            NEED(IDSZ);
            p += IDSZ;
            break;
        case JVMPI_GC_ROOT_JNI_GLOBAL:
        case JVMPI_GC_ROOT_NATIVE_STACK:
        case JVMPI_GC_ROOT_THREAD_BLOCK:
            NEED(2 * IDSZ);
            p += 2 * IDSZ;
            break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            NEED(2 * IDSZ + 4);
            p += 2 * IDSZ + 4;
            break;
        case JVMPI_GC_CLASS_DUMP: {
            NEED(7 * IDSZ + 4);
            jobjectID cid = get_id(p);
            p += 7 * IDSZ + 4;
            struct cls *c = class_of(cid);
            if (c == NULL)
                return; /* its length cannot be known */
            add_id(cid, -1);
            pm_put(&class_recs, cid, (void *)(uintptr_t)(rec - dump + 1));
            NEED((size_t)c->nif * IDSZ + 2);
            p += (size_t)c->nif * IDSZ;
            int ncp = p[0] << 8 | p[1];
            p += 2;
            for (int i = 0; i < ncp; i++) {
                NEED(3);
                int sz = ty_size(p[2]);
                if (sz < 0) {
                    FAIL("class dump of %s: constant pool entry of type %d", c->name, p[2]);
                    return;
                }
                NEED(3 + sz);
                p += 3 + sz;
            }
            size_t sl = 0;
            for (const char *s = c->stypes; *s; s++)
                if (dump_level >= 2 || *s == 'L')
                    sl += (size_t)sig_size(*s);
            NEED(sl);
            p += sl;
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            NEED(2 * IDSZ + 4);
            add_id(get_id(p), -1);
            uint32_t n = get_u4(p + 2 * IDSZ);
            p += 2 * IDSZ + 4;
            NEED(n);
            p += n;
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            NEED(2 * IDSZ + 4);
            add_id(get_id(p), -1);
            uint32_t n = get_u4(p + IDSZ);
            p += 2 * IDSZ + 4;
            NEED((size_t)n * IDSZ);
            p += (size_t)n * IDSZ;
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            NEED(IDSZ + 5);
            add_id(get_id(p), -1);
            uint32_t n = get_u4(p + IDSZ);
            int et = p[IDSZ + 4];
            p += IDSZ + 5;
            int sz = ty_size(et);
            if (sz < 0 || et == JVMPI_CLASS) {
                FAIL("primitive array dump with element type %d", et);
                return;
            }
            if (dump_level >= 2) {
                NEED((size_t)n * sz);
                p += (size_t)n * sz;
            }
            break;
        }
        default:
            FAIL("unexpected record type %#x at offset %ld of a level-%d dump", ty, (long)(rec - dump), dump_level);
            return;
        }
    }
#undef NEED
}

/* ---- asking about one id ---- */

static int marker_ok(int et, const unsigned char *v, uint32_t n)
{
    if (n != MARK)
        return 0;
    int sz = ty_size(et);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = get_be(v + (size_t)i * sz, sz), want3 = 0;
        switch (et) {
        case JVMPI_BOOLEAN: want3 = i % 3 == 0; break;
        case JVMPI_BYTE: want3 = (uint8_t)(3 * i); break;
        case JVMPI_CHAR: case JVMPI_SHORT: want3 = (uint16_t)(3 * i); break;
        case JVMPI_INT: want3 = (uint32_t)(3 * i); break;
        case JVMPI_LONG: want3 = (uint64_t)(3 * i); break;
        case JVMPI_FLOAT: { float f = (float)(3 * i); uint32_t b; memcpy(&b, &f, 4); want3 = b; break; }
        case JVMPI_DOUBLE: { double d = 3.0 * i; memcpy(&want3, &d, 8); break; }
        default: return 0;
        }
        if (x != want3)
            return 0;
    }
    return 1;
}

/* The length of the class dump at p (n bytes at most) of class c: its constant pool at
 * *cp (*ncp entries), its statics at *st. 0 if it runs past n. */
static size_t class_rec_len(const unsigned char *p, size_t n, const struct cls *c, int level,
                            const unsigned char **cp, int *ncp, const unsigned char **st)
{
    size_t off = 1 + 7 * (size_t)IDSZ + 4 + (size_t)c->nif * IDSZ;
    if (off + 2 > n)
        return 0;
    *ncp = p[off] << 8 | p[off + 1];
    off += 2;
    *cp = p + off;
    for (int i = 0; i < *ncp; i++) {
        if (off + 3 > n || ty_size(p[off + 2]) < 0)
            return 0;
        off += 3 + (size_t)ty_size(p[off + 2]);
    }
    *st = p + off;
    for (const char *s = c->stypes; *s; s++)
        if (level >= 2 || *s == 'L')
            off += (size_t)sig_size(*s);
    return off <= n ? off : 0;
}

/* OBJECT_DUMP's class dump (od) against the heap dump's record of the same class. */
static void compare_class(jobjectID id, const char *phase)
{
    uintptr_t at = (uintptr_t)pm_find(&class_recs, id);
    struct cls *c = class_of(id);
    if (at == 0 || c == NULL)
        return;
    const unsigned char *rec = dump + at - 1, *dcp, *dst, *ocp, *ost;
    int dn, on;
    size_t dl = class_rec_len(rec, dump_len - (at - 1), c, dump_level, &dcp, &dn, &dst);
    size_t ol = class_rec_len(od, od_len, c, 2, &ocp, &on, &ost);
    if (dl == 0 || ol != od_len) {
        FAIL("[%s] OBJECT_DUMP(%p) of class %s: %zu bytes, not a class dump of its layout", phase,
             (void *)id, c->name, od_len);
        return;
    }
    size_t head = 1 + 7 * (size_t)IDSZ + 4 + (size_t)c->nif * IDSZ;
    static const unsigned char zero[2 * sizeof(void *)];
    if (dn == 0 && memcmp(rec + 1 + 3 * IDSZ, zero, 2 * IDSZ) == 0 &&
        memcmp(od + 1 + 3 * IDSZ, zero, 2 * IDSZ) != 0) {
        /* No signers, protection domain nor constant pool in the heap dump: the record of a
         * class its walk did not reach (its loader unreachable), which the shim writes
         * without them. The rest must match. */
        if (memcmp(rec, od, 1 + 3 * IDSZ) != 0 ||
            memcmp(rec + 1 + 5 * IDSZ, od + 1 + 5 * IDSZ, head - (1 + 5 * IDSZ)) != 0)
            FAIL("[%s] OBJECT_DUMP(%p) of class %s (unreached by the heap dump's walk): its "
                 "record differs from the heap dump's in super, loader, size or interfaces",
                 phase, (void *)id, c->name);
        else
            t.class_unreached++;
        return;
    }
    if (memcmp(rec, od, head) != 0) {
        FAIL("[%s] OBJECT_DUMP(%p) of class %s: its record differs from the heap dump's before "
             "the constant pool (super, loader, signers, protection domain, size or interfaces)",
             phase, (void *)id, c->name);
        return;
    }
    /* Entries are resolved, never unresolved: each of the dump's must be there. */
    const unsigned char *d = dcp;
    for (int i = 0; i < dn; i++) {
        size_t dsz = 3 + (size_t)ty_size(d[2]);
        const unsigned char *o = ocp;
        int found = 0;
        for (int j = 0; j < on && !found; j++) {
            size_t osz = 3 + (size_t)ty_size(o[2]);
            found = osz == dsz && memcmp(o, d, dsz) == 0;
            o += osz;
        }
        if (!found) {
            FAIL("[%s] OBJECT_DUMP(%p) of class %s: constant-pool entry %d (index %d) of the heap "
                 "dump's record is missing (%d entries, the dump's %d)", phase, (void *)id,
                 c->name, i, d[0] << 8 | d[1], on, dn);
            return;
        }
        d += dsz;
    }
    if (dump_level >= 2 && mine(c->name) && memcmp(dst, ost, (size_t)(od + ol - ost)) != 0) {
        FAIL("[%s] OBJECT_DUMP(%p) of class %s: its statics differ from the heap dump's", phase,
             (void *)id, c->name);
        return;
    }
    t.class_compared++;
}

static void ask(jobjectID id, int l0type, const char *phase)
{
    t.ids++;
    want = id;
    got_alloc = 0;
    jint rc = opt_noalloc ? JVMPI_FAIL : jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    if (rc != JVMPI_SUCCESS) {
        t.alloc_fail++;
        if (got_alloc)
            FAIL("[%s] OBJECT_ALLOC(%p): rc=%d but the event came", phase, (void *)id, (int)rc);
    } else if (got_alloc != 1) {
        FAIL("[%s] OBJECT_ALLOC(%p): rc=SUCCESS, %d events for it", phase, (void *)id, got_alloc);
        rc = JVMPI_FAIL;
    } else {
        t.alloc_ok++;
        if (l0type == JVMPI_INT && a_is_array != l0type) {
            t.replaced++; /* see filler_replaced */
            return;
        }
        if (l0type >= 0 && a_is_array != l0type)
            FAIL("[%s] %p: the level-0 record says type %d, OBJECT_ALLOC says is_array %d "
                 "class %p size %d", phase, (void *)id, l0type, (int)a_is_array, (void *)a_class, (int)a_size);
        if (a_size <= 0)
            FAIL("[%s] OBJECT_ALLOC(%p): size %d", phase, (void *)id, (int)a_size);
    }
    jobjectID cls = a_class;
    jint is_array = a_is_array, size = a_size;
    int alloc_ok = rc == JVMPI_SUCCESS;

    got_odump = 0;
    od_len = 0;
    if (opt_nodump) {
        want = NULL;
        return;
    }
    jint drc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id);
    want = NULL;
    struct cls *c = alloc_ok && is_array == JVMPI_NORMAL_OBJECT ? class_of(cls) : NULL;
    /* java.lang.Class's own Class object is the one object OBJECT_ALLOC names no class for */
    int is_class_obj = alloc_ok && is_array == JVMPI_NORMAL_OBJECT &&
                       ((cls == class_class && cls != NULL) || cls == NULL);
    if (is_class_obj)
        t.class_objects++;
    if (drc != JVMPI_SUCCESS) {
        if (got_odump)
            FAIL("[%s] OBJECT_DUMP(%p): rc=%d but the event came", phase, (void *)id, (int)drc);
        if (is_class_obj)
            t.class_norecord++; /* an array class's mirror has no record of its own */
        else
            t.dump_fail++;
        return;
    }
    if (got_odump != 1 || od_len < (size_t)(1 + IDSZ)) {
        FAIL("[%s] OBJECT_DUMP(%p): rc=SUCCESS, %d events, %zu bytes", phase, (void *)id, got_odump, od_len);
        t.dump_fail++;
        return;
    }
    t.dump_ok++;
    int rt = od[0];
    if (get_id(od + 1) != id)
        FAIL("[%s] OBJECT_DUMP(%p): the record (type %#x) names %p", phase, (void *)id, rt, (void *)get_id(od + 1));
    if (!alloc_ok)
        return;
    if (is_array == JVMPI_NORMAL_OBJECT) {
        if (rt == JVMPI_GC_CLASS_DUMP) {
            if (!is_class_obj)
                FAIL("[%s] OBJECT_DUMP(%p): a class dump of an object of class %s", phase, (void *)id,
                     c ? c->name : "?");
            t.class_dumps++;
            if (dump_level >= 1)
                compare_class(id, phase);
        } else if (rt == JVMPI_GC_INSTANCE_DUMP) {
            if (od_len < (size_t)(1 + 2 * IDSZ + 4) || get_id(od + 1 + IDSZ) != cls) {
                FAIL("[%s] OBJECT_DUMP(%p): an instance dump of class %p, OBJECT_ALLOC said %p", phase,
                     (void *)id, od_len >= (size_t)(1 + 2 * IDSZ) ? (void *)get_id(od + 1 + IDSZ) : NULL, (void *)cls);
                return;
            }
            if (is_class_obj)
                t.class_instances++;
            uint32_t n = get_u4(od + 1 + 2 * IDSZ);
            const unsigned char *v = od + 1 + 2 * IDSZ + 4;
            if (c != NULL && strstr(c->name, "$$Lambda") != NULL)
                t.lambdas++;
            if (c != NULL && mine(c->name) && c->off_serial >= 0 && c->off_stamp >= 0) {
                if ((size_t)c->off_serial + 4 > n || (size_t)c->off_stamp + 8 > n) {
                    FAIL("[%s] OBJECT_DUMP(%p) of a %s: %u value bytes", phase, (void *)id, c->name, n);
                } else {
                    int32_t serial = (int32_t)get_be(v + c->off_serial, 4);
                    int64_t stamp = (int64_t)get_be(v + c->off_stamp, 8);
                    if (stamp != 3LL * serial + 1)
                        FAIL("[%s] OBJECT_DUMP(%p) of a %s: serial %d stamp %lld", phase, (void *)id,
                             c->name, serial, (long long)stamp);
                    c->dumped++;
                    c->sum += serial;
                }
            }
        } else {
            FAIL("[%s] OBJECT_DUMP(%p): record type %#x for a normal object", phase, (void *)id, rt);
        }
        if (c != NULL) {
            c->count++;
            if (c->minsize == 0 || size < c->minsize)
                c->minsize = size;
            if (size > c->maxsize)
                c->maxsize = size;
        }
    } else if (is_array == JVMPI_CLASS) {
        if (rt != JVMPI_GC_OBJ_ARRAY_DUMP || od_len < (size_t)(1 + 2 * IDSZ + 4)) {
            FAIL("[%s] OBJECT_DUMP(%p): record type %#x for an object array", phase, (void *)id, rt);
            return;
        }
        uint32_t n = get_u4(od + 1 + IDSZ);
        jobjectID ecid = get_id(od + 1 + IDSZ + 4);
        if (ecid != cls)
            FAIL("[%s] OBJECT_DUMP(%p): element class %p, OBJECT_ALLOC said %p", phase, (void *)id,
                 (void *)ecid, (void *)cls);
        struct cls *ec = class_of(cls);
        if (ec != NULL && strcmp(ec->name, "DumpAskKept") == 0) {
            t.keep_arrays++;
            for (uint32_t i = 0; i < n; i++)
                if (get_id(od + 1 + 2 * IDSZ + 4 + (size_t)i * IDSZ) != NULL)
                    t.keep_elements++;
        }
    } else {
        /* An int[] the dump listed whose id now names another object: on a JVM that makes
         * each thread's allocation buffer walkable with an int[] filler for a heap walk
         * (JDK 17), the dump lists the filler, and the thread's next object takes its place
         * and its tag, as it took its address (HotSpot's ids) on HotSpot. Counted, not
         * judged: the test allows one per thread at most. */
        if (is_array == JVMPI_INT && rt != JVMPI_GC_PRIM_ARRAY_DUMP) {
            t.replaced++;
            return;
        }
        if (rt != JVMPI_GC_PRIM_ARRAY_DUMP || od_len < (size_t)(1 + IDSZ + 5)) {
            FAIL("[%s] OBJECT_DUMP(%p): record type %#x for a primitive array", phase, (void *)id, rt);
            return;
        }
        uint32_t n = get_u4(od + 1 + IDSZ);
        int et = od[1 + IDSZ + 4];
        if (et != is_array)
            FAIL("[%s] OBJECT_DUMP(%p): element type %d, OBJECT_ALLOC said %d", phase, (void *)id, et, (int)is_array);
        else if (n == MARK && od_len >= (size_t)(1 + IDSZ + 5) + (size_t)n * ty_size(et)) {
            if (marker_ok(et, od + 1 + IDSZ + 5, n) && et < 16)
                t.marker_good[et]++;
            else
                t.marker_bad++;
        }
    }
}

static void ask_all(int level, const char *phase)
{
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < classes.cap; i++)
        if (classes.k[i] != NULL) {
            struct cls *c = classes.v[i];
            c->count = c->dumped = c->sum = 0;
            c->minsize = c->maxsize = 0;
        }
    size_t step = opt_max > 0 && nids > (size_t)opt_max ? nids / (size_t)opt_max : 1;
    for (size_t i = 0; i < nids; i += step)
        ask(ids[i], types[i], phase);
    say("ask level=%d phase=%s ids=%ld alloc_ok=%ld alloc_fail=%ld dump_ok=%ld dump_fail=%ld "
        "class_objects=%ld class_dumps=%ld class_instances=%ld class_norecord=%ld replaced=%ld "
        "class_compared=%ld class_unreached=%ld",
        level, phase, t.ids, t.alloc_ok, t.alloc_fail, t.dump_ok, t.dump_fail, t.class_objects,
        t.class_dumps, t.class_instances, t.class_norecord, t.replaced, t.class_compared, t.class_unreached);
    /* the workload's classes, one line per name (several loaders: summed) */
    const char *names[] = {"DumpAskKept", "DumpAskDropped", "DumpAskLoadee", "DumpAskHidden"};
    for (int k = 0; k < 4; k++) {
        long objects = 0, ncls = 0, dumped = 0, sum = 0;
        int mn = 0, mx = 0;
        for (size_t i = 0; i < classes.cap; i++) {
            struct cls *c = classes.k[i] ? classes.v[i] : NULL;
            if (c == NULL || strncmp(c->name, names[k], strlen(names[k])) != 0 ||
                (c->name[strlen(names[k])] != 0 && c->name[strlen(names[k])] != '/'))
                continue;
            if (c->count == 0)
                continue;
            ncls++;
            objects += c->count;
            dumped += c->dumped;
            sum += c->sum;
            if (mn == 0 || c->minsize < mn)
                mn = c->minsize;
            if (c->maxsize > mx)
                mx = c->maxsize;
        }
        say("class level=%d phase=%s name=%s objects=%ld classes=%ld dumped=%ld serial_sum=%ld "
            "minsize=%d maxsize=%d", level, phase, names[k], objects, ncls, dumped, sum, mn, mx);
    }
    char m[64] = "";
    for (int et = 0; et < 16; et++)
        for (int k = 0; k < t.marker_good[et]; k++)
            snprintf(m + strlen(m), sizeof m - strlen(m), "%s%d", m[0] ? "," : "", et);
    say("markers level=%d phase=%s types=%s bad=%ld", level, phase, m[0] ? m : "-", t.marker_bad);
    say("keep level=%d phase=%s arrays=%ld elements=%ld", level, phase, t.keep_arrays, t.keep_elements);
    say("lambdas level=%d phase=%s objects=%ld", level, phase, t.lambdas);
}

static void on_heap_dump(JVMPI_Event *ev)
{
    size_t n = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    free(dump);
    dump = malloc(n + 1);
    if (dump == NULL || ev->u.heap_dump.begin == NULL)
        return;
    memcpy(dump, ev->u.heap_dump.begin, n);
    dump_len = n;
    got_dump++;
    nids = 0;
    free(class_recs.k);
    free(class_recs.v);
    memset(&class_recs, 0, sizeof class_recs);
    if (dump_level == 0)
        list_level0();
    else
        list_level12();
    say("dump level=%d ids=%zu bytes=%zu", dump_level, nids, dump_len);
    if (opt_inside)
        ask_all(dump_level, "inside");
}

static void control(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    char *ready = NULL;
    if (opt_storm) {
        usleep(1000 * 1000); /* the storm is under way */
    } else {
        for (int i = 0; i < 60000 && (ready = get_property(jni, "dumpask.ready")) == NULL; i++)
            usleep(10 * 1000);
        if (ready == NULL) {
            FAIL("dumpask.ready never set");
            return;
        }
        free(ready);
    }
    for (const char *l = opt_levels; *l; l++) {
        JVMPI_HeapDumpArg harg;
        harg.heap_dump_level = dump_level = *l - '0';
        if (!opt_nodisable)
            jvmpi->DisableGC();
        got_dump = 0;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &harg);
        if (rc != JVMPI_SUCCESS || got_dump != 1)
            FAIL("RequestEvent(HEAP_DUMP, level %d): rc=%d events=%d", dump_level, (int)rc, got_dump);
        else if (opt_after)
            ask_all(dump_level, "after");
        if (!opt_nodisable)
            jvmpi->EnableGC();
    }
    say("done fails=%d", g_fails);
    set_property(jni, "dumpask.done", "ok");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if ((ev->event_type & JVMPI_REQUESTED_EVENT) && ev->u.obj_alloc.obj_id == want) {
            got_alloc++;
            a_class = ev->u.obj_alloc.class_id;
            a_is_array = ev->u.obj_alloc.is_array;
            a_size = ev->u.obj_alloc.size;
        }
        break;
    case JVMPI_EVENT_OBJECT_DUMP: {
        /* HotSpot left data_len unset: the record's length comes from the record. */
        const unsigned char *d = (const unsigned char *)ev->u.object_dump.data;
        size_t n = (size_t)ev->u.object_dump.data_len;
        got_odump++;
        if (n > od_cap) {
            od_cap = n * 2;
            od = realloc(od, od_cap);
        }
        memcpy(od, d, n);
        od_len = n;
        break;
    }
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("dumpask-control", JVMPI_NORMAL_PRIORITY, control) != JNI_OK)
            FAIL("CreateSystemThread(dumpask-control) failed");
        break;
    default:
        break;
    }
}

static void opt_str(const char *options, const char *key, char *out, size_t n)
{
    const char *p = options ? strstr(options, key) : NULL;
    if (p == NULL)
        return;
    p += strlen(key);
    size_t k = strcspn(p, ",");
    if (k >= n)
        k = n - 1;
    memcpy(out, p, k);
    out[k] = 0;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    opt_inside = options && strstr(options, "inside") != NULL;
    opt_after = options && strstr(options, "after") != NULL;
    if (!opt_inside && !opt_after)
        opt_inside = opt_after = 1;
    opt_nodisable = options && strstr(options, "nodisable") != NULL;
    opt_storm = options && strstr(options, "storm") != NULL;
    opt_noalloc = options && strstr(options, "noalloc") != NULL;
    opt_nodump = options && strstr(options, "nodump") != NULL;
    char mx[24] = "0";
    opt_str(options, "max=", mx, sizeof mx);
    opt_max = atol(mx);
    opt_str(options, "levels=", opt_levels, sizeof opt_levels);
    opt_str(options, "prefix=", opt_prefix, sizeof opt_prefix);
    lock = jvmpi->RawMonitorCreate("dump_ask");
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    say("loaded levels=%s inside=%d after=%d nodisable=%d", opt_levels, opt_inside, opt_after, opt_nodisable);
    return JNI_OK;
}
