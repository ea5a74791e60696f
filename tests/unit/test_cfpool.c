/* test_cfpool.c — the class-file rewriter's byte buffer and constant pool, alone.
 *
 * test_classfile.c checks the rewriter whole, through cf_instrument; these check two of
 * its parts through their internal interface (classfile/internal.h): the output buffer
 * (big-endian writers, growth, patching, the out-of-memory mark) and the constant pool
 * (parsing, reads of the input's entries, lookups by content through the pool's hash
 * table, and appended entries, reused rather than added twice). The pools are built here
 * byte by byte, so each case says exactly what the input holds.
 */
#include "classfile/internal.h"
#include "unit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * The buffer.
 */
static void test_buf_writes(void)
{
    struct buf b = {0};
    b_u1(&b, 0x1ff); /* only the low byte */
    b_u2(&b, 0xcafe);
    b_u4(&b, 0xdeadbeefu);
    b_put(&b, "xyz", 3);
    b_put(&b, NULL, 0); /* nothing, no allocation needed */
    static const uint8_t want[] = {0xff, 0xca, 0xfe, 0xde, 0xad, 0xbe, 0xef, 'x', 'y', 'z'};
    CHECK_EQ_INT(b.len, sizeof want);
    CHECK(b.p && memcmp(b.p, want, sizeof want) == 0, "bytes written big-endian, in order");
    CHECK(!b.oom, "no out-of-memory mark");

    /* patching in place, and only inside what was written */
    b_set_u2(&b, 1, 0x1234);
    b_set_u4(&b, 3, 0x01020304u);
    CHECK(b.p[1] == 0x12 && b.p[2] == 0x34, "b_set_u2 at 1");
    CHECK(b.p[3] == 1 && b.p[4] == 2 && b.p[5] == 3 && b.p[6] == 4, "b_set_u4 at 3");
    uint8_t last = b.p[9];
    b_set_u2(&b, 9, 0xffff); /* would end past len: ignored */
    b_set_u4(&b, 7, 0xffffffffu);
    CHECK(b.p[9] == last && b.p[7] == 'x' && b.len == 10, "patches past the end are ignored");

    cf_buf_free(&b);
    CHECK(b.p == NULL && b.len == 0 && b.cap == 0 && !b.oom, "cf_buf_free clears the buffer");
}

static void test_buf_growth(void)
{
    struct buf b = {0};
    /* the first allocation is 256 bytes; capacity doubles, content survives each move */
    for (unsigned i = 0; i < 100000; i++)
        b_u1(&b, i * 7u);
    CHECK_EQ_INT(b.len, 100000);
    CHECK(b.cap >= b.len && (b.cap & (b.cap - 1)) == 0, "capacity %zu: a power of two", b.cap);
    bool ok = true;
    for (unsigned i = 0; i < 100000 && ok; i++)
        ok = b.p[i] == (uint8_t)(i * 7u);
    CHECK(ok, "content kept across growth");
    /* b_room reserves without writing */
    size_t len = b.len, cap = b.cap;
    CHECK(b_room(&b, cap - len), "room that fits: no growth");
    CHECK_EQ_INT(b.cap, cap);
    CHECK(b_room(&b, cap), "room that does not fit: growth");
    CHECK(b.cap >= len + cap && b.len == len, "grown to %zu, length kept", b.cap);
    cf_buf_free(&b);

    struct buf s = {0};
    CHECK(b_room(&s, 1) && s.cap == 256, "first allocation: 256 bytes (cap %zu)", s.cap);
    cf_buf_free(&s);
}

/* Out of memory, the buffer is marked and stops growing: writes that need more room are
 * dropped, patches too, and the caller checks oom once at the end (what was written is
 * thrown away then). A request beyond 1 TiB (1 GiB in 32 bits) stands for the failure. */
static void test_buf_oom(void)
{
    struct buf b = {0};
    b_u2(&b, 7);
    CHECK(!b_room(&b, (size_t)1 << (sizeof(size_t) == 8 ? 41 : 31)), "a room of 2 TiB (2 GiB) is refused");
    CHECK(b.oom, "and marks the buffer");
    static const uint8_t big[300];
    b_put(&b, big, sizeof big);
    CHECK_EQ_INT(b.len, 2);
    CHECK(!b_room(&b, 1000), "a marked buffer grows no more");
    CHECK_EQ_INT(b.cap, 256);
    b_set_u2(&b, 0, 0xffff);
    CHECK(b.p[0] == 0 && b.p[1] == 7, "nor takes patches");
    cf_buf_free(&b);
}

static void test_grow(void)
{
    int *a = NULL;
    size_t cap = 0;
    CHECK(GROW(a, cap, 1) && cap == 16, "first: 16 elements (%zu)", cap);
    CHECK(GROW(a, cap, 16) && cap == 16, "enough already: unchanged");
    CHECK(GROW(a, cap, 17) && cap == 32, "doubles (%zu)", cap);
    CHECK(GROW(a, cap, 1000) && cap == 1024, "to the power of two above (%zu)", cap);
    for (int i = 0; i < 1000; i++)
        a[i] = i;
    CHECK(GROW(a, cap, 5000) && a[999] == 999, "content kept");
    free(a);
    void *p = NULL;
    size_t c2 = 0;
    CHECK(!cf_grow(&p, &c2, SIZE_MAX / 4, 64), "a size that overflows is refused");
    CHECK(p == NULL && c2 == 0, "and nothing changes");
}

/* ---------------------------------------------------------------------------------------
 * The pool: a class file built entry by entry, then parsed.
 */
struct pool_builder {
    struct buf b;
    unsigned n; /* next index */
};

static unsigned pb_utf8n(struct pool_builder *pb, const void *s, size_t n)
{
    b_u1(&pb->b, T_UTF8);
    b_u2(&pb->b, (unsigned)n);
    b_put(&pb->b, s, n);
    return pb->n++;
}
static unsigned pb_utf8(struct pool_builder *pb, const char *s) { return pb_utf8n(pb, s, strlen(s)); }
static unsigned pb_ref(struct pool_builder *pb, int tag, unsigned a, unsigned b2)
{
    b_u1(&pb->b, (unsigned)tag);
    b_u2(&pb->b, a);
    if (tag != T_CLASS && tag != T_STRING)
        b_u2(&pb->b, b2);
    return pb->n++;
}
static unsigned pb_int(struct pool_builder *pb, uint32_t v)
{
    b_u1(&pb->b, T_INT);
    b_u4(&pb->b, v);
    return pb->n++;
}
static unsigned pb_long(struct pool_builder *pb, uint64_t v)
{
    b_u1(&pb->b, T_LONG);
    b_u4(&pb->b, (uint32_t)(v >> 32));
    b_u4(&pb->b, (uint32_t)v);
    unsigned i = pb->n;
    pb->n += 2;
    return i;
}

/* The whole class: magic, version 52, the pool, public class this_cls extends super_cls,
 * with nothing else. */
static uint8_t *pb_class(struct pool_builder *pb, unsigned this_cls, unsigned super_cls, size_t *len)
{
    struct buf c = {0};
    b_u4(&c, 0xCAFEBABEu);
    b_u2(&c, 0);
    b_u2(&c, 52);
    b_u2(&c, pb->n);
    b_put(&c, pb->b.p, pb->b.len);
    b_u2(&c, ACC_PUBLIC);
    b_u2(&c, this_cls);
    b_u2(&c, super_cls);
    for (int k = 0; k < 4; k++) /* interfaces, fields, methods, attributes */
        b_u2(&c, 0);
    cf_buf_free(&pb->b);
    *len = c.len;
    return c.p;
}

static const struct cf_probe_spec SPEC = {"test/Hooks", CF_METHOD_PROBES, NULL, NULL, NULL, NULL, NULL, NULL};

static bool cf_open(struct cf *c, const uint8_t *in, size_t len, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->in = in;
    c->len = len;
    c->spec = &SPEC;
    c->err = err;
    c->errlen = errlen;
    err[0] = 0;
    return cf_parse_class(c);
}

/* The appended entry at pool index i, in class-file format (found by walking c->add). */
static const uint8_t *added(const struct cf *c, unsigned i, size_t *n)
{
    size_t k = i - c->cp_n;
    if (i < c->cp_n || k >= c->addn)
        return NULL;
    size_t end = k + 1 < c->addn ? c->addv[k + 1].off : c->add.len;
    *n = end - c->addv[k].off;
    return c->add.p + c->addv[k].off;
}

static void test_pool_reads(void)
{
    struct pool_builder pb = {{0}, 1};
    unsigned u_this = pb_utf8(&pb, "p/This");
    unsigned c_this = pb_ref(&pb, T_CLASS, u_this, 0);
    unsigned u_obj = pb_utf8(&pb, "java/lang/Object");
    unsigned c_obj = pb_ref(&pb, T_CLASS, u_obj, 0);
    unsigned l = pb_long(&pb, 0x0102030405060708ull);
    unsigned u_name = pb_utf8(&pb, "run");
    unsigned u_desc = pb_utf8(&pb, "(I)V");
    unsigned nat = pb_ref(&pb, T_NAT, u_name, u_desc);
    unsigned mref = pb_ref(&pb, T_METHOD, c_obj, nat);
    unsigned fref = pb_ref(&pb, T_FIELD, c_this, nat);
    unsigned indy = pb_ref(&pb, T_INDY, 0, nat);
    unsigned str = pb_ref(&pb, T_STRING, u_name, 0);
    size_t len;
    uint8_t *in = pb_class(&pb, c_this, c_obj, &len);
    struct cf c;
    char err[256];
    CHECK(cf_open(&c, in, len, err, sizeof err), "parses: %s", err);
    CHECK_EQ_INT(c.cp_n, pb.n);
    CHECK_EQ_INT(c.next_idx, pb.n);
    CHECK(c.this_len == 6 && memcmp(c.this_name, "p/This", 6) == 0, "this_class read");
    CHECK_EQ_INT(c.cp_pos[1], 10); /* the first entry follows the header */
    CHECK_EQ_INT(cp_tag(&c, l), T_LONG);
    CHECK(cp_ent(&c, l + 1) == NULL && cp_tag(&c, l + 1) == 0, "a Long's second slot is no entry");
    CHECK(cp_ent(&c, 0) == NULL && cp_ent(&c, c.cp_n) == NULL && cp_ent(&c, 65535) == NULL,
          "index 0 and indices past the pool are no entry");
    const uint8_t *s;
    uint16_t n;
    CHECK(cp_utf8(&c, u_desc, &s, &n) && n == 4 && memcmp(s, "(I)V", 4) == 0, "cp_utf8");
    CHECK(!cp_utf8(&c, c_this, &s, &n), "cp_utf8 of a Class: no");
    CHECK(cp_class_name(&c, c_obj, &s, &n) && n == 16 && memcmp(s, "java/lang/Object", 16) == 0,
          "cp_class_name");
    CHECK(!cp_class_name(&c, u_this, &s, &n), "cp_class_name of a Utf8: no");
    CHECK(cf_utf8_is(&c, u_name, "run") && !cf_utf8_is(&c, u_name, "ru") && !cf_utf8_is(&c, u_name, "runs"),
          "cf_utf8_is compares the whole string");
    CHECK(!cf_utf8_is(&c, str, "run"), "cf_utf8_is of a String entry: no");

    int tag;
    uint16_t cls, nn, dn;
    const uint8_t *nm, *ds;
    CHECK(cf_cp_member(&c, mref, &tag, &cls, &nm, &nn, &ds, &dn) && tag == T_METHOD && cls == c_obj &&
              nn == 3 && memcmp(nm, "run", 3) == 0 && dn == 4 && memcmp(ds, "(I)V", 4) == 0,
          "cf_cp_member of a Methodref");
    CHECK(cf_cp_member(&c, fref, &tag, &cls, &nm, &nn, &ds, &dn) && tag == T_FIELD && cls == c_this,
          "cf_cp_member of a Fieldref");
    CHECK(cf_cp_member(&c, indy, &tag, &cls, &nm, &nn, &ds, &dn) && tag == T_INDY && cls == 0,
          "cf_cp_member of an InvokeDynamic: no class");
    CHECK(!cf_cp_member(&c, nat, &tag, &cls, &nm, &nn, &ds, &dn), "cf_cp_member of a NameAndType: no");
    cf_pool_free(&c);
    CHECK(c.cp_pos == NULL && c.addv == NULL && c.add.p == NULL, "cf_pool_free");
    free(in);
}

static void test_pool_lookup_append(void)
{
    struct pool_builder pb = {{0}, 1};
    unsigned u_this = pb_utf8(&pb, "p/This");
    unsigned c_this = pb_ref(&pb, T_CLASS, u_this, 0);
    unsigned u_obj = pb_utf8(&pb, "java/lang/Object");
    unsigned c_obj = pb_ref(&pb, T_CLASS, u_obj, 0);
    unsigned i_big = pb_int(&pb, 100000);
    unsigned u_abcd = pb_utf8(&pb, "ABCD"); /* the same 4 bytes as the Integer 0x41424344 */
    unsigned u_dup = pb_utf8(&pb, "dup");
    pb_utf8(&pb, "dup"); /* twice in the pool: the first is the one found */
    unsigned u_code = pb_utf8(&pb, "Code");
    unsigned u_exit = pb_utf8(&pb, "exit");
    unsigned u_desc = pb_utf8(&pb, "(I)V");
    unsigned nat = pb_ref(&pb, T_NAT, u_exit, u_desc);
    unsigned u_empty = pb_utf8(&pb, "");
    size_t len;
    uint8_t *in = pb_class(&pb, c_this, c_obj, &len);
    struct cf c;
    char err[256];
    CHECK(cf_open(&c, in, len, err, sizeof err), "parses: %s", err);
    const unsigned base = c.cp_n;

    /* found in the input: no entry added */
    CHECK_EQ_INT(cf_pool_utf8(&c, "Code", 4), u_code);
    CHECK_EQ_INT(cf_pool_utf8(&c, "java/lang/Object", 16), u_obj);
    CHECK_EQ_INT(cf_pool_utf8(&c, "dup", 3), u_dup);
    CHECK_EQ_INT(cf_pool_utf8(&c, "", 0), u_empty);
    CHECK_EQ_INT(cf_pool_int(&c, 100000), i_big);
    CHECK_EQ_INT(cf_pool_class(&c, "java/lang/Object", 16), c_obj);
    CHECK_EQ_INT(cf_pool_ref(&c, T_NAT, u_exit, u_desc, true), nat);
    CHECK_EQ_INT(c.addn, 0);
    CHECK_EQ_INT(c.next_idx, base);

    /* a Utf8 and an Integer with the same bytes are different entries */
    CHECK_EQ_INT(cf_pool_utf8(&c, "ABCD", 4), u_abcd);
    unsigned i_abcd = cf_pool_int(&c, 0x41424344);
    CHECK(i_abcd == base, "the Integer 0x41424344 is appended (%u), not the Utf8 ABCD", i_abcd);
    size_t n;
    const uint8_t *e = added(&c, i_abcd, &n);
    static const uint8_t want_int[] = {T_INT, 0x41, 0x42, 0x43, 0x44};
    CHECK(e && n == 5 && memcmp(e, want_int, 5) == 0, "as an Integer entry");

    /* appended once, then found among the appended */
    unsigned u_new = cf_pool_utf8(&c, "brand/New", 9);
    CHECK_EQ_INT(u_new, base + 1);
    CHECK_EQ_INT(cf_pool_utf8(&c, "brand/New", 9), u_new);
    CHECK_EQ_INT(cf_pool_int(&c, 0x41424344), i_abcd);
    e = added(&c, u_new, &n);
    static const uint8_t want_utf8[] = {T_UTF8, 0, 9, 'b', 'r', 'a', 'n', 'd', '/', 'N', 'e', 'w'};
    CHECK(e && n == sizeof want_utf8 && memcmp(e, want_utf8, n) == 0, "as a Utf8 entry");
    CHECK_EQ_INT(cf_pool_int(&c, -5), base + 2);
    unsigned c_new = cf_pool_class(&c, "brand/New", 9);
    CHECK_EQ_INT(c_new, base + 3);
    e = added(&c, c_new, &n);
    CHECK(e && n == 3 && e[0] == T_CLASS && be16(e + 1) == u_new, "a Class naming the appended Utf8");
    CHECK_EQ_INT(cf_pool_class(&c, "brand/New", 9), c_new);
    /* a Utf8 that exists as a Class name only in the input gets a new Class */
    unsigned c_code = cf_pool_class(&c, "Code", 4);
    CHECK_EQ_INT(c_code, base + 4);
    CHECK_EQ_INT(c.next_idx, base + 5);
    CHECK_EQ_INT(c.addn, 5);
    CHECK(!c.failed, "no failure");

    /* hooks: class, name, descriptor, NameAndType, Methodref, made once; reused parts */
    unsigned before = c.next_idx;
    unsigned h_exit = cf_hook_ref(&c, CF_HOOK_EXIT);
    /* test/Hooks (Utf8, Class); "exit" and "(I)V" and their NameAndType are the input's */
    CHECK_EQ_INT(c.next_idx, before + 3);
    CHECK_EQ_INT(h_exit, before + 2);
    CHECK(c.hook_class_idx == before + 1, "hook class at %u", c.hook_class_idx);
    e = added(&c, h_exit, &n);
    CHECK(e && n == 5 && e[0] == T_METHOD && be16(e + 1) == c.hook_class_idx && be16(e + 3) == nat,
          "Methodref test/Hooks.exit(I)V over the input's NameAndType");
    CHECK_EQ_INT(cf_hook_ref(&c, CF_HOOK_EXIT), h_exit);
    CHECK_EQ_INT(c.next_idx, before + 3);
    unsigned h_enter = cf_hook_ref(&c, CF_HOOK_ENTER); /* "enter" new, "(I)V" reused */
    CHECK_EQ_INT(c.next_idx, before + 6);
    CHECK_EQ_INT(h_enter, before + 5);
    CHECK(!c.failed, "no failure");
    cf_pool_free(&c);
    free(in);
}

/* 100 bytes of 'x' but k in 4 digits at 1..4: the pool's hash samples every 6th byte and
 * the last, so all such names hash alike. */
static const char *long_name(char *s, int k)
{
    memset(s, 'x', 100);
    for (int j = 4; j >= 1; j--, k /= 10)
        s[j] = (char)('0' + k % 10);
    return s;
}

/* Many names, long ones sharing every byte the hash samples: each still found at its own
 * index, none appended. */
static void test_pool_many(void)
{
    struct pool_builder pb = {{0}, 1};
    unsigned u_this = pb_utf8(&pb, "p/Many");
    unsigned c_this = pb_ref(&pb, T_CLASS, u_this, 0);
    enum { SHORT = 20000, LONG = 300 };
    unsigned first_short = pb.n;
    char s[128];
    for (int k = 0; k < SHORT; k++) {
        snprintf(s, sizeof s, "n%d", k);
        pb_utf8(&pb, s);
    }
    unsigned first_long = pb.n;
    for (int k = 0; k < LONG; k++)
        pb_utf8n(&pb, long_name(s, k), 100);
    unsigned first_int = pb.n;
    for (int k = 0; k < 1000; k++)
        pb_int(&pb, (uint32_t)(k * 7919));
    size_t len;
    uint8_t *in = pb_class(&pb, c_this, c_this, &len);
    struct cf c;
    char err[256];
    CHECK(cf_open(&c, in, len, err, sizeof err), "parses: %s", err);
    int bad = 0;
    for (int k = 0; k < SHORT; k++) {
        snprintf(s, sizeof s, "n%d", k);
        bad += cf_pool_utf8(&c, s, strlen(s)) != first_short + (unsigned)k;
    }
    CHECK(bad == 0, "%d of %d short names not at their index", bad, SHORT);
    bad = 0;
    for (int k = 0; k < LONG; k++)
        bad += cf_pool_utf8(&c, long_name(s, k), 100) != first_long + (unsigned)k;
    CHECK(bad == 0, "%d of %d long names not at their index", bad, LONG);
    bad = 0;
    for (int k = 0; k < 1000; k++)
        bad += cf_pool_int(&c, k * 7919) != first_int + (unsigned)k;
    CHECK(bad == 0, "%d of 1000 Integers not at their index", bad);
    CHECK_EQ_INT(c.addn, 0);
    CHECK_EQ_INT(cf_pool_utf8(&c, "n20000", 6), c.cp_n); /* absent: appended */
    cf_pool_free(&c);
    free(in);
}

/* 65535 entries at most: the last free index is given, then the class fails. */
static void test_pool_full(void)
{
    static const char FULL[] = "constant pool full (65535 entries) after adding the hook references";
    struct pool_builder pb = {{0}, 1};
    unsigned u_this = pb_utf8(&pb, "p/Full");
    unsigned c_this = pb_ref(&pb, T_CLASS, u_this, 0);
    while (pb.n < 65533)
        pb_int(&pb, pb.n);
    size_t len;
    uint8_t *in = pb_class(&pb, c_this, c_this, &len);
    struct cf c;
    char err[256];
    CHECK(cf_open(&c, in, len, err, sizeof err), "parses: %s", err);
    CHECK_EQ_INT(c.cp_n, 65533);
    CHECK_EQ_INT(cf_pool_utf8(&c, "a", 1), 65533);
    CHECK_EQ_INT(cf_pool_utf8(&c, "b", 1), 65534);
    CHECK(!c.failed, "65534 is the last index");
    CHECK_EQ_INT(cf_pool_utf8(&c, "c", 1), 0);
    CHECK(c.failed, "then the class fails");
    CHECK(strcmp(err, FULL) == 0, "message: %s", err);
    CHECK_EQ_INT(cf_pool_int(&c, 3), 3); /* lookups still answer from the input... */
    CHECK_EQ_INT(cf_pool_int(&c, -1), 0);    /* ...but nothing more is appended */
    CHECK(strcmp(err, FULL) == 0, "message: %s", err);
    cf_pool_free(&c);
    free(in);
}

static void test_pool_malformed(void)
{
    struct {
        const char *what;
        uint8_t bytes[16];
        size_t n;
        unsigned count;
        const char *err;
    } cases[] = {
        {"bad tag", {2, 0, 0}, 3, 2, "bad constant pool tag 2 at entry 1"},
        {"truncated Utf8 length", {T_UTF8, 0}, 2, 2, "truncated in constant pool entry 1"},
        {"truncated Utf8 bytes", {T_UTF8, 0, 5, 'a'}, 4, 2, "truncated in constant pool entry 1"},
        {"truncated Integer", {T_INT, 0, 0}, 3, 2, "truncated in constant pool entry 1"},
        {"missing entry", {T_INT, 0, 0, 0, 1}, 5, 3, "truncated in constant pool entry 2"},
        {"Long at the last index", {T_INT, 0, 0, 0, 1, T_LONG, 0, 0, 0, 0, 0, 0, 0, 0}, 14, 3,
         "8-byte constant at the last pool index 2"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct buf b = {0};
        b_u4(&b, 0xCAFEBABEu);
        b_u2(&b, 0);
        b_u2(&b, 52);
        b_u2(&b, cases[k].count);
        b_put(&b, cases[k].bytes, cases[k].n);
        struct cf c;
        char err[256];
        bool ok = cf_open(&c, b.p, b.len, err, sizeof err);
        CHECK(!ok && c.failed, "%s: refused", cases[k].what);
        CHECK(strcmp(err, cases[k].err) == 0, "%s: message \"%s\", expected \"%s\"", cases[k].what, err,
              cases[k].err);
        cf_pool_free(&c);
        cf_buf_free(&b);
    }
}

int main(void)
{
    test_buf_writes();
    test_buf_growth();
    test_buf_oom();
    test_grow();
    test_pool_reads();
    test_pool_lookup_append();
    test_pool_many();
    test_pool_full();
    test_pool_malformed();
    return UNIT_END();
}
