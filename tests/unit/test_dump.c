/* test_dump.c — the dump writer (dumpbuf.c) and decoder/validator (dumpcheck.c), no JVM. */
#include "core/dumpbuf.h"
#include "core/dumpcheck.h"
#include "jvmpi.h"
#include "unit.h"

#include <stdlib.h>

static bool lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    (void)ctx;
    if (id != 0x1000)
        return false;
    out->num_interfaces = 1;
    out->n_statics = 3;
    out->static_types = "ILJ"; /* int, reference, long */
    return true;
}

struct seen {
    int n;
    int types[32];
    struct dump_record last[32];
};

static void collect(void *ctx, const struct dump_record *r)
{
    struct seen *s = ctx;
    if (s->n < 32) {
        s->types[s->n] = r->type;
        s->last[s->n] = *r;
    }
    s->n++;
}

static void test_encoding(void)
{
    struct dumpbuf b;
    db_init(&b, 1); /* tiny: forces growth */
    db_u1(&b, 0xab);
    db_u2(&b, 0x1234);
    db_u4(&b, 0x89abcdef);
    db_u8(&b, 0x0102030405060708ULL);
    void *p = (void *)(uintptr_t)0x1122334455667788ULL;
    db_ptr(&b, p);
    CHECK_EQ_INT(b.len, 1 + 2 + 4 + 8 + sizeof(void *));
    const unsigned char want[] = {0xab, 0x12, 0x34, 0x89, 0xab, 0xcd, 0xef,
                                  1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(memcmp(b.p, want, sizeof want) == 0, "big-endian numbers");
    CHECK(memcmp(b.p + 15, &p, sizeof p) == 0, "pointers native");
    size_t at = db_reserve(&b, 4);
    db_put_u4_at(&b, at, 7);
    CHECK(b.p[at + 3] == 7 && b.p[at] == 0, "backpatched u4");
    CHECK(!b.oom, "no oom");
    /* growth is geometric: many small writes stay linear */
    for (int i = 0; i < 100000; i++)
        db_u4(&b, (uint32_t)i);
    CHECK(b.cap < 4 * b.len, "capacity %zu for %zu bytes", b.cap, b.len);
    db_free(&b);
}

static void put_id(struct dumpbuf *b, uint64_t v) { db_ptr(b, (void *)(uintptr_t)v); }

/* A small level-2 heap dump with every record type. */
static void build_heap(struct dumpbuf *b, int level)
{
    db_u1(b, JVMPI_GC_ROOT_JAVA_FRAME); put_id(b, 0x10); put_id(b, 0xe0); db_u4(b, 3);
    db_u1(b, JVMPI_GC_ROOT_JNI_LOCAL); put_id(b, 0x18); put_id(b, 0xe0); db_u4(b, 2);
    db_u1(b, JVMPI_GC_ROOT_JNI_GLOBAL); put_id(b, 0x20); put_id(b, 0);
    db_u1(b, JVMPI_GC_ROOT_STICKY_CLASS); put_id(b, 0x1000);
    db_u1(b, JVMPI_GC_ROOT_MONITOR_USED); put_id(b, 0x28);
    db_u1(b, JVMPI_GC_ROOT_NATIVE_STACK); put_id(b, 0x30); put_id(b, 0xe0);
    /* class 0x1000: 1 interface, 1 cp entry, statics int 5, ref 0x40, long -1 */
    db_u1(b, JVMPI_GC_CLASS_DUMP);
    put_id(b, 0x1000); put_id(b, 0x2000); put_id(b, 0); put_id(b, 0); put_id(b, 0); put_id(b, 0); put_id(b, 0);
    db_u4(b, 24);
    put_id(b, 0x3000);
    db_u2(b, 1); db_u2(b, 7); db_u1(b, JVMPI_CLASS); put_id(b, 0x48);
    if (level >= 2) db_u4(b, 5);
    put_id(b, 0x40);
    if (level >= 2) db_u8(b, (uint64_t)-1);
    /* instance with an id and an int: 12 value bytes (8 with 4-byte ids) */
    db_u1(b, JVMPI_GC_INSTANCE_DUMP); put_id(b, 0x50); put_id(b, 0x1000);
    db_u4(b, (uint32_t)(sizeof(void *) + (level >= 2 ? 4 : 0))); put_id(b, 0x60); if (level >= 2) db_u4(b, 9);
    db_u1(b, JVMPI_GC_OBJ_ARRAY_DUMP); put_id(b, 0x58); db_u4(b, 2); put_id(b, 0x1000);
    put_id(b, 0x50); put_id(b, 0);
    db_u1(b, JVMPI_GC_PRIM_ARRAY_DUMP); put_id(b, 0x68); db_u4(b, 3); db_u1(b, JVMPI_INT);
    if (level >= 2) { db_u4(b, 7); db_u4(b, 8); db_u4(b, 9); }
}

static void test_heap_walk(void)
{
    for (int level = 1; level <= 2; level++) {
        struct dumpbuf b;
        db_init(&b, 64);
        build_heap(&b, level);
        struct seen s = {0};
        size_t bad = 99;
        char msg[200] = "";
        int rc = dump_walk_heap(b.p, b.len, level, lookup, NULL, collect, &s, &bad, msg, sizeof msg);
        CHECK(rc == 0, "level %d walk: %s at %zu", level, msg, bad);
        CHECK_EQ_INT(s.n, 10);
        CHECK_EQ_INT(s.types[0], JVMPI_GC_ROOT_JAVA_FRAME);
        CHECK_EQ_INT(s.last[0].u4, 3);
        CHECK_EQ_INT(s.types[5], JVMPI_GC_ROOT_NATIVE_STACK);
        CHECK_EQ_INT(s.last[5].id2, 0xe0);
        CHECK_EQ_INT(s.types[6], JVMPI_GC_CLASS_DUMP);
        CHECK_EQ_INT(s.last[6].u4, 24);
        CHECK_EQ_INT(s.last[6].id2, 0x2000);
        CHECK_EQ_INT(s.types[7], JVMPI_GC_INSTANCE_DUMP);
        CHECK_EQ_INT(s.last[7].data_len, sizeof(void *) + (level >= 2 ? 4 : 0));
        CHECK_EQ_INT(s.types[8], JVMPI_GC_OBJ_ARRAY_DUMP);
        CHECK_EQ_INT(s.last[8].u4, 2);
        CHECK_EQ_INT(s.types[9], JVMPI_GC_PRIM_ARRAY_DUMP);
        CHECK_EQ_INT(s.last[9].elem_type, JVMPI_INT);
        if (level == 2)
            CHECK(s.last[9].data[3] == 7 && s.last[9].data[11] == 9, "int elements big-endian");

        /* Every truncation is caught, at the record it cuts. */
        int caught = 0;
        for (size_t cut = 1; cut < b.len; cut++) {
            size_t badoff = 0;
            if (dump_walk_heap(b.p, cut, level, lookup, NULL, NULL, NULL, &badoff, msg, sizeof msg) != 0 &&
                badoff < cut)
                caught++;
        }
        /* A cut exactly at a record boundary is a shorter valid dump: 9 of them. */
        CHECK_EQ_INT(caught, (int)b.len - 1 - 9);

        /* A wrong INSTANCE_DUMP length desynchronises: reported, not read past the end. */
        size_t off = s.last[7].offset + 1 + 2 * sizeof(void *);
        b.p[off + 3] += 200;
        rc = dump_walk_heap(b.p, b.len, level, lookup, NULL, NULL, NULL, &bad, msg, sizeof msg);
        CHECK(rc != 0 && bad == s.last[7].offset, "bad instance length at %zu (%s)", bad, msg);
        db_free(&b);
    }
    /* Unknown class in a CLASS_DUMP */
    struct dumpbuf b;
    db_init(&b, 64);
    db_u1(&b, JVMPI_GC_CLASS_DUMP);
    for (int i = 0; i < 7; i++) put_id(&b, i == 0 ? 0x9999 : 0);
    db_u4(&b, 16);
    db_u2(&b, 0);
    size_t bad;
    char msg[200];
    CHECK(dump_walk_heap(b.p, b.len, 2, lookup, NULL, NULL, NULL, &bad, msg, sizeof msg) != 0,
          "unknown class is an error");
    CHECK(strstr(msg, "unknown") != NULL, "message: %s", msg);
    /* Unknown record type */
    b.p[0] = 0x77;
    CHECK(dump_walk_heap(b.p, b.len, 2, lookup, NULL, NULL, NULL, &bad, msg, sizeof msg) != 0 && bad == 0,
          "unknown record type at 0");
    db_free(&b);
}

/* Root kinds HotSpot never emitted (UNKNOWN, THREAD_BLOCK, THREAD_OBJ) and other unknown
 * kinds are malformed, reported at the offset of their record. */
static void test_heap_foreign_roots(void)
{
    static const int kinds[] = {JVMPI_GC_ROOT_UNKNOWN, JVMPI_GC_ROOT_THREAD_BLOCK,
                                JVMPI_GC_ROOT_THREAD_OBJ, 0x09, 0x00};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        for (int level = 1; level <= 2; level++) {
            struct dumpbuf b;
            db_init(&b, 64);
            db_u1(&b, JVMPI_GC_ROOT_STICKY_CLASS); put_id(&b, 0x1000);
            size_t at = b.len;
            db_u1(&b, (uint8_t)kinds[k]); put_id(&b, 0x30); put_id(&b, 0xe0);
            db_u1(&b, JVMPI_GC_ROOT_MONITOR_USED); put_id(&b, 0x28);
            size_t bad = 99;
            char msg[200] = "";
            int rc = dump_walk_heap(b.p, b.len, level, lookup, NULL, NULL, NULL, &bad, msg,
                                    sizeof msg);
            CHECK(rc == -1, "root kind %#x at level %d accepted", kinds[k], level);
            CHECK_EQ_INT(bad, at);
            db_free(&b);
        }
    }
}

static void test_level0(void)
{
    struct dumpbuf b;
    db_init(&b, 16);
    db_u1(&b, JVMPI_NORMAL_OBJECT); put_id(&b, 0x10);
    db_u1(&b, JVMPI_CLASS); put_id(&b, 0x18);
    db_u1(&b, JVMPI_LONG); put_id(&b, 0x20);
    struct seen s = {0};
    size_t bad;
    char msg[200];
    CHECK(dump_walk_heap(b.p, b.len, 0, NULL, NULL, collect, &s, &bad, msg, sizeof msg) == 0, "%s", msg);
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_INT(s.types[2], JVMPI_LONG);
    db_u1(&b, 3); /* not an object type */
    put_id(&b, 0x28);
    CHECK(dump_walk_heap(b.p, b.len, 0, NULL, NULL, NULL, NULL, &bad, msg, sizeof msg) != 0 &&
              bad == 3 * (1 + sizeof(void *)),
          "bad level-0 type at %zu", bad);
    db_free(&b);
}

static void test_monitor(void)
{
    struct dumpbuf b;
    db_init(&b, 16);
    db_u1(&b, JVMPI_MONITOR_JAVA); put_id(&b, 0x10); put_id(&b, 0xe1);
    db_u4(&b, 2); db_u4(&b, 1); put_id(&b, 0xe2); db_u4(&b, 1); put_id(&b, 0xe3);
    db_u1(&b, JVMPI_MONITOR_RAW); put_id(&b, 0xabc); put_id(&b, 0x77); put_id(&b, 0);
    db_u4(&b, 0); db_u4(&b, 0); db_u4(&b, 0);
    struct seen s = {0};
    size_t bad;
    char msg[200];
    CHECK(dump_walk_monitor(b.p, b.len, collect, &s, &bad, msg, sizeof msg) == 0, "%s", msg);
    CHECK_EQ_INT(s.n, 2);
    CHECK_EQ_INT(s.last[0].u4, 2);
    CHECK_EQ_INT(s.last[0].n1, 1);
    CHECK_EQ_INT(s.last[0].n2, 1);
    CHECK_EQ_INT(s.last[1].id, 0x77);
    CHECK(dump_walk_monitor(b.p, b.len - 1, NULL, NULL, &bad, msg, sizeof msg) != 0 &&
              bad == s.last[1].offset,
          "truncated raw record at %zu", bad);
    db_free(&b);
}

/* A dump written on the other architecture: the walkers take its id width, so a host
 * reader (jvmpidump --ids, jvmpitrace from the recording's pointer_size) reads both. */
static void put_le(unsigned char *p, uint64_t v, int w)
{
    for (int i = 0; i < w; i++)
        p[i] = (unsigned char)(v >> (8 * i)); /* both architectures are little-endian */
}

static void test_id_widths(void)
{
    for (int w = 4; w <= 8; w += 4) {
        /* level 2: OBJ_ARRAY_DUMP id, length 2, class, two elements; then a sticky root */
        unsigned char d[64];
        size_t n = 0;
        d[n++] = JVMPI_GC_OBJ_ARRAY_DUMP;
        put_le(d + n, 0x80008, w); n += (size_t)w;
        d[n++] = 0; d[n++] = 0; d[n++] = 0; d[n++] = 2;
        put_le(d + n, 0x80010, w); n += (size_t)w;
        put_le(d + n, 0x80018, w); n += (size_t)w;
        put_le(d + n, 0, w); n += (size_t)w;
        d[n++] = JVMPI_GC_ROOT_STICKY_CLASS;
        put_le(d + n, 0x80010, w); n += (size_t)w;
        struct seen s = {0};
        size_t bad = 0;
        char msg[200] = "";
        CHECK(dump_walk_heap_w(d, n, w, 2, NULL, NULL, collect, &s, &bad, msg, sizeof msg) == 0,
              "%d-byte ids: %s", w, msg);
        CHECK_EQ_INT(s.n, 2);
        CHECK(s.last[0].id == 0x80008 && s.last[0].id2 == 0x80010 && s.last[0].data_len == 2 * (size_t)w,
              "%d-byte ids: the array's id, class and elements", w);
        CHECK(s.last[1].id == 0x80010, "%d-byte ids: the root after it", w);
        int other = w == 4 ? 8 : 4;
        CHECK(dump_walk_heap_w(d, n, other, 2, NULL, NULL, NULL, NULL, &bad, msg, sizeof msg) != 0,
              "read as %d-byte ids, the %d-byte dump is malformed", other, w);
    }
    size_t bad = 0;
    char msg[100] = "";
    CHECK(dump_walk_heap_w((const unsigned char *)"", 0, 6, 2, NULL, NULL, NULL, NULL, &bad, msg,
                           sizeof msg) != 0 && strstr(msg, "4 or 8") != NULL, "a width of 6 is refused");
}

int main(void)
{
    test_encoding();
    test_id_widths();
    test_heap_walk();
    test_heap_foreign_roots();
    test_level0();
    test_monitor();
    return UNIT_END();
}
