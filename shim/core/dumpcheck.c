/* dumpcheck.c — decode and validate JVMPI heap, object and monitor dumps.
 *
 * A dump is a packed run of records (spec §4); one wrong length desynchronises all that
 * follows, so the walker checks every length against the bytes left and reports the
 * offset of the first record that does not fit, or leftover bytes at the end. Pointer-
 * sized fields are native (sizeof(void *)); u2/u4/u8 big-endian. Only the record kinds
 * HotSpot 1.4.2 emitted are well-formed: any other kind is reported as malformed, as a
 * strict reader of the time would have stopped at it.
 */
#include "core/dumpcheck.h"
#include "jvmpi.h"

#include <stdio.h>
#include <string.h>

/* Ids and other pointer-sized fields are as wide as the writer's pointers: 8 bytes from an
 * x86-64 shim, 4 from an i386 one. The walkers take the width, so one reader (jvmpitrace,
 * jvmpidump on the host) reads dumps of both. */
#define PTR (c.ptr)

struct cur {
    const unsigned char *p;
    size_t len, off;
    size_t ptr; /* 4 or 8 */
};

static bool need(struct cur *c, size_t n) { return c->off <= c->len && n <= c->len - c->off; }

static uint64_t rd_ptr(struct cur *c)
{
    uint64_t v = 0;
    if (c->ptr == 8) {
        uint64_t x;
        memcpy(&x, c->p + c->off, 8);
        v = x;
    } else {
        uint32_t x;
        memcpy(&x, c->p + c->off, 4);
        v = x;
    }
    c->off += c->ptr;
    return v;
}

static uint32_t rd_u4(struct cur *c)
{
    const unsigned char *q = c->p + c->off;
    c->off += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

static uint16_t rd_u2(struct cur *c)
{
    const unsigned char *q = c->p + c->off;
    c->off += 2;
    return (uint16_t)(q[0] << 8 | q[1]);
}

static int type_size(int t, size_t ptr)
{
    switch (t) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return (int)ptr;
    default: return -1;
    }
}

static int sig_size(char c, size_t ptr)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    case 'L': case '[': return (int)ptr;
    default: return -1;
    }
}

int dump_type_size(int t) { return type_size(t, sizeof(void *)); }
int dump_sig_size(char c) { return sig_size(c, sizeof(void *)); }
int dump_type_size_w(int t, int id_size) { return type_size(t, (size_t)id_size); }
int dump_sig_size_w(char c, int id_size) { return sig_size(c, (size_t)id_size); }

#define BAD(...)                                                                  \
    do {                                                                          \
        if (bad) *bad = start;                                                    \
        if (msg) snprintf(msg, msglen, __VA_ARGS__);                              \
        return -1;                                                                \
    } while (0)

int dump_walk_heap(const unsigned char *p, size_t len, int level, dump_class_lookup lookup,
                   void *lookup_ctx, dump_record_fn fn, void *fn_ctx, size_t *bad, char *msg,
                   size_t msglen)
{
    return dump_walk_heap_w(p, len, (int)sizeof(void *), level, lookup, lookup_ctx, fn, fn_ctx,
                            bad, msg, msglen);
}

int dump_walk_heap_w(const unsigned char *p, size_t len, int id_size, int level,
                     dump_class_lookup lookup, void *lookup_ctx, dump_record_fn fn, void *fn_ctx,
                     size_t *bad, char *msg, size_t msglen)
{
    struct cur c = {p, len, 0, (size_t)id_size};
    if (id_size != 4 && id_size != 8) {
        size_t start = 0;
        BAD("ids of %d bytes: a dump's ids are 4 or 8 bytes", id_size);
    }
    while (c.off < c.len) {
        size_t start = c.off;
        struct dump_record r;
        memset(&r, 0, sizeof r);
        r.offset = start;
        r.type = c.p[c.off++];
        if (level == 0) {
            if (r.type != JVMPI_NORMAL_OBJECT && type_size(r.type, PTR) < 0)
                BAD("level-0 record at %zu: type %d is not an object type", start, r.type);
            if (!need(&c, PTR))
                BAD("level-0 record at %zu: truncated id", start);
            r.id = rd_ptr(&c);
            if (fn) fn(fn_ctx, &r);
            continue;
        }
        /* Exactly the record kinds HotSpot emitted (reference-behavior.md §4.3): UNKNOWN,
         * THREAD_BLOCK and THREAD_OBJ roots never came out of a JVM, and a strict reader
         * (HPROF's own) stops at a kind it does not know, so they are malformed here too. */
        switch (r.type) {
        case JVMPI_GC_ROOT_STICKY_CLASS:
        case JVMPI_GC_ROOT_MONITOR_USED:
            if (!need(&c, PTR)) BAD("root at %zu: truncated", start);
            r.id = rd_ptr(&c);
            break;
        case JVMPI_GC_ROOT_JNI_GLOBAL:
        case JVMPI_GC_ROOT_NATIVE_STACK:
            if (!need(&c, 2 * PTR)) BAD("root at %zu: truncated", start);
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c);
            break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            if (!need(&c, 2 * PTR + 4)) BAD("frame root at %zu: truncated", start);
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c);
            r.u4 = rd_u4(&c);
            break;
        case JVMPI_GC_CLASS_DUMP: {
            if (!need(&c, 7 * PTR + 4)) BAD("CLASS_DUMP at %zu: truncated header", start);
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c); /* super */
            c.off += 5 * PTR;   /* loader, signers, protection domain, name, reserved */
            r.u4 = rd_u4(&c);   /* instance size */
            struct dump_class_info ci;
            if (lookup == NULL || !lookup(lookup_ctx, r.id, &ci))
                BAD("CLASS_DUMP at %zu: class %#llx unknown (no CLASS_LOAD for it)", start,
                    (unsigned long long)r.id);
            if (!need(&c, (size_t)ci.num_interfaces * PTR + 2))
                BAD("CLASS_DUMP at %zu: truncated interfaces", start);
            c.off += (size_t)ci.num_interfaces * PTR;
            uint16_t ncp = rd_u2(&c);
            for (uint16_t i = 0; i < ncp; i++) {
                if (!need(&c, 3)) BAD("CLASS_DUMP at %zu: truncated constant pool", start);
                c.off += 2;
                int ty = c.p[c.off++];
                int sz = type_size(ty, PTR);
                if (sz < 0 || !need(&c, (size_t)sz))
                    BAD("CLASS_DUMP at %zu: constant pool entry %u has type %d", start, i, ty);
                c.off += (size_t)sz;
            }
            r.data = c.p + c.off;
            for (int i = 0; i < ci.n_statics; i++) {
                char t = ci.static_types[i];
                if (t != 'L' && t != '[' && level < 2)
                    continue; /* level 1: primitive statics are not written */
                int sz = sig_size(t, PTR);
                if (sz < 0 || !need(&c, (size_t)sz))
                    BAD("CLASS_DUMP at %zu: truncated static %d", start, i);
                c.off += (size_t)sz;
            }
            r.data_len = (size_t)(c.p + c.off - r.data);
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP:
            if (!need(&c, 2 * PTR + 4)) BAD("INSTANCE_DUMP at %zu: truncated header", start);
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c);
            r.u4 = rd_u4(&c);
            if (!need(&c, r.u4))
                BAD("INSTANCE_DUMP at %zu: %u value bytes announced, %zu left", start, r.u4,
                    c.len - c.off);
            r.data = c.p + c.off;
            r.data_len = r.u4;
            c.off += r.u4;
            break;
        case JVMPI_GC_OBJ_ARRAY_DUMP:
            if (!need(&c, 2 * PTR + 4)) BAD("OBJ_ARRAY_DUMP at %zu: truncated header", start);
            r.id = rd_ptr(&c);
            r.u4 = rd_u4(&c);
            r.id2 = rd_ptr(&c);
            if ((c.len - c.off) / PTR < r.u4)
                BAD("OBJ_ARRAY_DUMP at %zu: %u elements do not fit", start, r.u4);
            r.data = c.p + c.off;
            r.data_len = (size_t)r.u4 * PTR;
            c.off += r.data_len;
            break;
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            if (!need(&c, PTR + 5)) BAD("PRIM_ARRAY_DUMP at %zu: truncated header", start);
            r.id = rd_ptr(&c);
            r.u4 = rd_u4(&c);
            r.elem_type = c.p[c.off++];
            int sz = type_size(r.elem_type, PTR);
            if (sz < 0 || r.elem_type == JVMPI_CLASS)
                BAD("PRIM_ARRAY_DUMP at %zu: element type %d", start, r.elem_type);
            r.data = c.p + c.off;
            if (level >= 2) {
                if ((c.len - c.off) / (size_t)sz < r.u4)
                    BAD("PRIM_ARRAY_DUMP at %zu: %u elements do not fit", start, r.u4);
                r.data_len = (size_t)r.u4 * (size_t)sz;
                c.off += r.data_len;
            }
            break;
        }
        case JVMPI_GC_ROOT_UNKNOWN:
        case JVMPI_GC_ROOT_THREAD_BLOCK:
        case JVMPI_GC_ROOT_THREAD_OBJ:
            BAD("root at %zu: kind %#x, which no JVM emitted in a heap dump", start, r.type);
        default:
            BAD("record at %zu: unknown type %#x", start, r.type);
        }
        if (fn) fn(fn_ctx, &r);
    }
    return 0;
}

int dump_walk_monitor(const unsigned char *p, size_t len, dump_record_fn fn, void *fn_ctx,
                      size_t *bad, char *msg, size_t msglen)
{
    return dump_walk_monitor_w(p, len, (int)sizeof(void *), fn, fn_ctx, bad, msg, msglen);
}

int dump_walk_monitor_w(const unsigned char *p, size_t len, int id_size, dump_record_fn fn,
                        void *fn_ctx, size_t *bad, char *msg, size_t msglen)
{
    struct cur c = {p, len, 0, (size_t)id_size};
    if (id_size != 4 && id_size != 8) {
        size_t start = 0;
        BAD("ids of %d bytes: a dump's ids are 4 or 8 bytes", id_size);
    }
    while (c.off < c.len) {
        size_t start = c.off;
        struct dump_record r;
        memset(&r, 0, sizeof r);
        r.offset = start;
        r.type = c.p[c.off++];
        if (r.type == JVMPI_MONITOR_JAVA) {
            if (!need(&c, 2 * PTR + 8)) BAD("MONITOR_JAVA at %zu: truncated", start);
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c);
        } else if (r.type == JVMPI_MONITOR_RAW) {
            if (!need(&c, 3 * PTR + 8)) BAD("MONITOR_RAW at %zu: truncated", start);
            uint64_t name = rd_ptr(&c);
            r.name = (const char *)(uintptr_t)name;
            r.id = rd_ptr(&c);
            r.id2 = rd_ptr(&c);
        } else {
            BAD("monitor record at %zu: unknown type %#x", start, r.type);
        }
        r.u4 = rd_u4(&c);
        r.n1 = rd_u4(&c);
        if ((c.len - c.off) / PTR < r.n1) BAD("monitor at %zu: %u entering threads do not fit", start, r.n1);
        r.list1 = c.p + c.off;
        c.off += (size_t)r.n1 * PTR;
        if (!need(&c, 4)) BAD("monitor at %zu: truncated", start);
        r.n2 = rd_u4(&c);
        if ((c.len - c.off) / PTR < r.n2) BAD("monitor at %zu: %u waiting threads do not fit", start, r.n2);
        r.list2 = c.p + c.off;
        c.off += (size_t)r.n2 * PTR;
        if (fn) fn(fn_ctx, &r);
    }
    return 0;
}
