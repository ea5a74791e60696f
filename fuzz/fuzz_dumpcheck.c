/* fuzz_dumpcheck.c — libFuzzer harness for the dump decoder/validator (shim/core/dumpcheck.c).
 *
 * Input layout (fuzz/mkseed.c writes seeds in it):
 *   byte 0        the dump kind, taken modulo 5: 0, 1, 2 a HEAP_DUMP of that level,
 *                 3 an OBJECT_DUMP (the decoder's level-2 walk, as checkdumps does it),
 *                 4 a MONITOR_DUMP
 *   kinds 1-3 only, what CLASS_LOAD would have told an agent (dump_class_lookup):
 *     byte 1      the number of classes K
 *     K times     class id (pointer-sized, native order), u1 num_interfaces,
 *                 u1 n_statics, n_statics signature chars ('L' for references)
 *   the rest      the dump bytes
 * The dump and each class's static types are copied to buffers of exactly their size, so
 * ASan reports any read past them. The walk's callback reads every byte a record claims
 * (data, the monitor's thread lists) and checks that records tile the buffer: each record
 * starts where the previous one ended, with the size its header implies; a successful walk
 * ends at the last byte; a failed one reports an offset at a record start inside the
 * buffer, with a terminated message. The walk runs again with no callback, no offset and
 * no message buffer, and with a short message buffer, and must give the same answer.
 */
#include "core/dumpcheck.h"
#include "jvmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTR sizeof(void *)

#define REQUIRE(cond, ...)                                                              \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_dumpcheck: %s: ", #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            abort();                                                                    \
        }                                                                               \
    } while (0)

struct fclass {
    uint64_t id;
    int nif, nst;
    char *types; /* exactly nst bytes, not terminated */
};

struct classes {
    struct fclass c[256];
    int n;
};

static bool lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    struct classes *cs = ctx;
    for (int i = 0; i < cs->n; i++)
        if (cs->c[i].id == id) {
            out->num_interfaces = cs->c[i].nif;
            out->n_statics = cs->c[i].nst;
            out->static_types = cs->c[i].types;
            return true;
        }
    return false;
}

struct tiling {
    const unsigned char *p;
    size_t len;
    int level;
    bool monitor;
    size_t next;    /* where the next record must start */
    size_t records;
    unsigned sum;   /* keeps the reads of every claimed byte */
};

static void touch(struct tiling *t, const unsigned char *q, size_t n)
{
    REQUIRE(n == 0 || (q >= t->p && n <= t->len && (size_t)(q - t->p) <= t->len - n),
            "record claims bytes outside the dump");
    for (size_t i = 0; i < n; i++)
        t->sum += q[i];
}

/* The size of a record other than a CLASS_DUMP, from its header. */
static size_t record_size(const struct tiling *t, const struct dump_record *r)
{
    if (t->monitor)
        return 1 + (r->type == JVMPI_MONITOR_RAW ? 3 : 2) * PTR + 8 + (size_t)r->n1 * PTR + 4 +
               (size_t)r->n2 * PTR;
    if (t->level == 0)
        return 1 + PTR;
    switch (r->type) {
    case JVMPI_GC_ROOT_STICKY_CLASS: case JVMPI_GC_ROOT_MONITOR_USED:
        return 1 + PTR;
    case JVMPI_GC_ROOT_JNI_GLOBAL: case JVMPI_GC_ROOT_NATIVE_STACK:
        return 1 + 2 * PTR;
    case JVMPI_GC_ROOT_JNI_LOCAL: case JVMPI_GC_ROOT_JAVA_FRAME:
        return 1 + 2 * PTR + 4;
    case JVMPI_GC_INSTANCE_DUMP:
        return 1 + 2 * PTR + 4 + r->u4;
    case JVMPI_GC_OBJ_ARRAY_DUMP:
        return 1 + 2 * PTR + 4 + (size_t)r->u4 * PTR;
    case JVMPI_GC_PRIM_ARRAY_DUMP:
        return 1 + PTR + 5 +
               (t->level >= 2 ? (size_t)r->u4 * (size_t)dump_type_size(r->elem_type) : 0);
    default:
        REQUIRE(0, "record type %#x reported at %zu", r->type, r->offset);
    }
    return 0;
}

static void on_record(void *ctx, const struct dump_record *r)
{
    struct tiling *t = ctx;
    t->records++;
    REQUIRE(r->offset < t->len, "record at %zu of %zu", r->offset, t->len);
    REQUIRE(r->offset == t->next, "record at %zu, expected at %zu", r->offset, t->next);
    REQUIRE(t->p[r->offset] == (unsigned char)r->type, "type %d is not the byte at %zu", r->type,
            r->offset);
    touch(t, r->data, r->data_len);
    if (t->monitor) {
        touch(t, r->list1, (size_t)r->n1 * PTR);
        touch(t, r->list2, (size_t)r->n2 * PTR);
    }
    if (!t->monitor && t->level > 0 && r->type == JVMPI_GC_CLASS_DUMP) {
        /* The statics follow the fixed header, the interfaces and the constant pool. */
        /* The statics follow the fixed header, the interfaces and the constant pool, and
         * end the record. */
        REQUIRE(r->data >= t->p + r->offset + 1 + 7 * PTR + 4 + 2 && r->data <= t->p + t->len,
                "CLASS_DUMP at %zu: statics outside the record", r->offset);
        t->next = (size_t)(r->data - t->p) + r->data_len;
        return;
    }
    size_t n = record_size(t, r);
    REQUIRE(n <= t->len - r->offset, "record at %zu of %zu bytes overruns %zu", r->offset, n,
            t->len);
    if (r->data_len > 0)
        REQUIRE(r->data + r->data_len == t->p + r->offset + n, "record at %zu: data does not end it",
                r->offset);
    t->next = r->offset + n;
}

static int walk(int kind, const unsigned char *p, size_t len, struct classes *cs,
                dump_record_fn fn, void *fn_ctx, size_t *bad, char *msg, size_t msglen)
{
    if (kind == 4)
        return dump_walk_monitor(p, len, fn, fn_ctx, bad, msg, msglen);
    return dump_walk_heap(p, len, kind == 3 ? 2 : kind, lookup, cs, fn, fn_ctx, bad, msg, msglen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int kind = data[0] % 5;
    size_t at = 1;
    static struct classes cs;
    cs.n = 0;
    if (kind >= 1 && kind <= 3) {
        if (at >= size)
            return 0;
        int k = data[at++];
        for (int i = 0; i < k; i++) {
            if (size - at < PTR + 2)
                goto out;
            struct fclass *c = &cs.c[cs.n];
            c->id = 0;
            memcpy(&c->id, data + at, PTR);
            c->nif = data[at + PTR];
            c->nst = data[at + PTR + 1];
            at += PTR + 2;
            if (size - at < (size_t)c->nst)
                goto out;
            c->types = malloc(c->nst ? (size_t)c->nst : 1);
            REQUIRE(c->types != NULL, "malloc");
            memcpy(c->types, data + at, (size_t)c->nst);
            at += (size_t)c->nst;
            cs.n++;
        }
    }
    size_t len = size - at;
    unsigned char *p = malloc(len ? len : 1);
    REQUIRE(p != NULL, "malloc");
    memcpy(p, data + at, len);

    struct tiling t = {p, len, kind == 3 ? 2 : kind, kind == 4, 0, 0, 0};
    size_t bad = SIZE_MAX;
    char msg[256];
    memset(msg, 0x5a, sizeof msg);
    int rc = walk(kind, p, len, &cs, on_record, &t, &bad, msg, sizeof msg);
    REQUIRE(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        REQUIRE(t.next == len, "well-formed walk ended at %zu of %zu", t.next, len);
    } else {
        REQUIRE(bad < len, "bad offset %zu of %zu", bad, len);
        REQUIRE(bad == t.next, "bad offset %zu, the record after the last good one starts at %zu",
                bad, t.next);
        REQUIRE(memchr(msg, '\0', sizeof msg) != NULL && msg[0] != '\0', "bad message");
    }

    /* The same answer with no callback and no outputs... */
    REQUIRE(walk(kind, p, len, &cs, NULL, NULL, NULL, NULL, 0) == rc, "rc differs without outputs");
    /* ...and with a short message buffer, exactly its size on the heap. */
    size_t msglen = 1 + len % 16, bad2 = SIZE_MAX;
    char *small = malloc(msglen);
    REQUIRE(small != NULL, "malloc");
    REQUIRE(walk(kind, p, len, &cs, NULL, NULL, &bad2, small, msglen) == rc, "rc differs");
    if (rc != 0)
        REQUIRE(bad2 == bad && memchr(small, '\0', msglen) != NULL, "short message");
    free(small);
    free(p);
out:
    for (int i = 0; i < cs.n; i++)
        free(cs.c[i].types);
    return 0;
}
