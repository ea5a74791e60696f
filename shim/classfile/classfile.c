/* classfile.c — rewrite class files to call static hook methods on method entry/exit, before
 * each instruction, and around native methods (see classfile.h for the contract).
 *
 * Design. The input is parsed once, bounds-checked at every read; nothing from it is trusted.
 * The constant pool is kept as it is and new entries (hook Methodrefs, Integer constants,
 * names) are appended, reusing existing entries where they exist. Methods that get no probes
 * are copied byte for byte. A method that gets probes is decoded into instructions; each
 * original instruction becomes a "block": [instruction probe][exit probe if a return]
 * [the instruction, possibly widened]. Every reference to an original offset (branch and
 * switch targets, exception ranges and handlers, StackMapTable frames, line and local
 * variable tables) is mapped to the start of its block, so a branch runs the probe of its
 * target; Uninitialized(offset) types in frames are mapped to the `new` instruction itself.
 * The layout is iterated to a fixed point: a branch whose offset no longer fits 16 bits is
 * widened (goto -> goto_w, jsr -> jsr_w, if<c> L -> if<!c> +8; goto_w L), which can only
 * grow the code, so the iteration ends; switch padding is recomputed at each new position.
 * A widened `if` makes its fall-through a branch target after an unconditional goto_w, so
 * the type checker wants a frame there: its state is computed by simulating the verifier's
 * types from the nearest preceding frame. The catch-all handler (exit, then athrow) is
 * appended after the code with a frame of empty locals and [java/lang/Throwable], and its
 * range is appended last in the exception table so the method's own handlers come first.
 * In a constructor the catch-all covers only the instructions that run with `this`
 * initialized: those after the invokespecial that initializes it (a linear scan for the
 * straight-line code javac emits, else a data-flow walk over the same type simulation). The
 * code before it gets a second handler whose frame keeps uninitializedThis in local 0
 * (flagThisUninit): the verifier accepts that for a handler that ends in athrow. Neither can
 * cover the invokespecial itself (after it, local 0 is initialized but the flag is still
 * set, which no frame can express), so constructors call exitThrow from their handlers, and
 * the caller (spec->init_call gives it that instruction's offset) ends the frames stopped at
 * that instruction.
 * Natives are wrapped by emitting a small method with a fixed shape. Cost: linear in the
 * size of the class, about 2 million instructions for java/lang/String (47 KB).
 */
#include "classfile/classfile.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CF_MAX_MAJOR 69 /* JDK 25 */

#define ACC_PUBLIC 0x0001
#define ACC_PRIVATE 0x0002
#define ACC_PROTECTED 0x0004
#define ACC_STATIC 0x0008
#define ACC_FINAL 0x0010
#define ACC_SYNCHRONIZED 0x0020
#define ACC_VARARGS 0x0080
#define ACC_NATIVE 0x0100
#define ACC_INTERFACE 0x0200
#define ACC_ABSTRACT 0x0400
#define ACC_SYNTHETIC 0x1000
#define ACC_MODULE 0x8000

/* constant pool tags */
enum {
    T_UTF8 = 1, T_INT = 3, T_FLOAT = 4, T_LONG = 5, T_DOUBLE = 6, T_CLASS = 7, T_STRING = 8,
    T_FIELD = 9, T_METHOD = 10, T_IMETHOD = 11, T_NAT = 12, T_MHANDLE = 15, T_MTYPE = 16,
    T_DYNAMIC = 17, T_INDY = 18, T_MODULE = 19, T_PACKAGE = 20
};

/* verification types (StackMapTable tags, plus RET for jsr's returnAddress) */
enum { VT_TOP, VT_INT, VT_FLOAT, VT_DOUBLE, VT_LONG, VT_NULL, VT_UTHIS, VT_OBJ, VT_UNINIT, VT_RET };

static const char *const hook_names[CF_HOOK_COUNT] = {
    "enter", "enterObj", "exit", "insn", "insnInt", "insnInt2", "insnObj", "insnObj2",
    "exitThrow", "enterCtor", "superCall", "ctorReady"};
static const char *const hook_descs[CF_HOOK_COUNT] = {
    "(I)V", "(Ljava/lang/Object;I)V", "(I)V", "(II)V", "(III)V", "(IIII)V",
    "(Ljava/lang/Object;II)V", "(Ljava/lang/Object;Ljava/lang/Object;II)V", "(I)V",
    "(I)V", "(I)V", "(Ljava/lang/Object;I)V"};

const char *cf_hook_name(enum cf_hook h) { return (unsigned)h < CF_HOOK_COUNT ? hook_names[h] : NULL; }
const char *cf_hook_desc(enum cf_hook h) { return (unsigned)h < CF_HOOK_COUNT ? hook_descs[h] : NULL; }

/* ---------------------------------------------------------------------------------------
 * Bytes in, bytes out.
 */
static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

struct buf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
};

/* Make room for n more bytes. Out of memory, the buffer stops growing and is marked: the
 * writes that follow are dropped, and the caller checks oom once at the end. */
static bool b_grow(struct buf *b, size_t n)
{
    if (b->oom)
        return false;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > ((size_t)1 << 40)) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}
static inline bool b_room(struct buf *b, size_t n) { return b->cap - b->len >= n || b_grow(b, n); }
static inline void b_put(struct buf *b, const void *src, size_t n)
{
    if (n && b_room(b, n)) {
        memcpy(b->p + b->len, src, n);
        b->len += n;
    }
}
static inline void b_u1(struct buf *b, unsigned v)
{
    if (b_room(b, 1))
        b->p[b->len++] = (uint8_t)v;
}
static inline void b_u2(struct buf *b, unsigned v)
{
    if (b_room(b, 2)) {
        b->p[b->len] = (uint8_t)(v >> 8);
        b->p[b->len + 1] = (uint8_t)v;
        b->len += 2;
    }
}
static inline void b_u4(struct buf *b, uint32_t v)
{
    if (b_room(b, 4)) {
        uint8_t *p = b->p + b->len;
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
        b->len += 4;
    }
}
static void b_set_u2(struct buf *b, size_t at, unsigned v)
{
    if (!b->oom && at + 2 <= b->len) {
        b->p[at] = (uint8_t)(v >> 8);
        b->p[at + 1] = (uint8_t)v;
    }
}
static void b_set_u4(struct buf *b, size_t at, uint32_t v)
{
    if (!b->oom && at + 4 <= b->len) {
        b->p[at] = (uint8_t)(v >> 24);
        b->p[at + 1] = (uint8_t)(v >> 16);
        b->p[at + 2] = (uint8_t)(v >> 8);
        b->p[at + 3] = (uint8_t)v;
    }
}
static void b_free(struct buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Grow a malloc'd array to hold at least n elements; false on overflow or no memory. */
static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < n)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return false;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = c;
    return true;
}
#define GROW(arr, cap, n) grow((void **)&(arr), &(cap), (n), sizeof *(arr))

/* ---------------------------------------------------------------------------------------
 * The class being rewritten.
 */
struct added {
    uint32_t off; /* offset of the entry's tag byte in cf.add */
};

struct cf {
    const uint8_t *in;
    size_t len;
    const struct cf_probe_spec *spec;
    char *err;
    size_t errlen;
    bool failed;

    uint16_t minor, major;
    uint32_t cp_n;     /* constant_pool_count of the input */
    uint32_t *cp_pos;  /* [cp_n]: offset of entry i's tag byte; 0 = no entry (index 0,
                          second slot of Long/Double) */
    size_t cp_end;     /* offset just after the pool */
    struct buf add;    /* appended entries, class-file format */
    struct added *addv;
    size_t addn, addcap;
    uint32_t next_idx; /* index the next appended entry gets */
    uint16_t *hash;    /* lazily built: original Utf8 and Integer entries by content */
    uint32_t hmask;

    uint16_t access, this_class;
    const uint8_t *this_name;
    uint16_t this_len;
    size_t methods_pos; /* offset of methods_count */
    size_t attrs_pos;   /* offset of the class attributes_count */
    uint16_t hook_ref[CF_HOOK_COUNT];
    uint16_t hook_class_idx;
    uint16_t throwable_idx; /* Class java/lang/Throwable, for the handlers' frames */
    uint16_t code_name, smt_name; /* Utf8 "Code", "StackMapTable", looked up once */

    char *scratch; /* NUL-terminated copies of names for callbacks */
    size_t scratch_cap;
};

static void cf_fail(struct cf *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
}

/* Pointer to the tag byte of original entry i, or NULL. Every index read through it comes
 * from the input (operands, attributes, tables), which can name only the input's own
 * entries: an index past them is malformed even once entries have been appended there.
 * (Reading an appended entry would also hand out a pointer into a buffer that moves at the
 * next append, under the verification types that keep names: a use after free.) */
static const uint8_t *cp_ent(const struct cf *c, uint32_t i)
{
    if (i == 0 || i >= c->cp_n)
        return NULL;
    return c->cp_pos[i] ? c->in + c->cp_pos[i] : NULL;
}
static int cp_tag(const struct cf *c, uint32_t i)
{
    const uint8_t *e = cp_ent(c, i);
    return e ? e[0] : 0;
}
static bool cp_utf8(const struct cf *c, uint32_t i, const uint8_t **s, uint16_t *n)
{
    const uint8_t *e = cp_ent(c, i);
    if (!e || e[0] != T_UTF8)
        return false;
    *n = be16(e + 1);
    *s = e + 3;
    return true;
}
static bool cp_class_name(const struct cf *c, uint32_t i, const uint8_t **s, uint16_t *n)
{
    const uint8_t *e = cp_ent(c, i);
    return e && e[0] == T_CLASS && cp_utf8(c, be16(e + 1), s, n);
}
/* A member reference or (Invoke)Dynamic: its class index (0 for the dynamic forms), name
 * and descriptor. */
static bool cp_member(const struct cf *c, uint32_t i, int *tag, uint16_t *cls, const uint8_t **name,
                      uint16_t *name_n, const uint8_t **desc, uint16_t *desc_n)
{
    const uint8_t *e = cp_ent(c, i);
    if (!e)
        return false;
    *tag = e[0];
    if (e[0] != T_FIELD && e[0] != T_METHOD && e[0] != T_IMETHOD && e[0] != T_INDY &&
        e[0] != T_DYNAMIC)
        return false;
    *cls = (e[0] == T_INDY || e[0] == T_DYNAMIC) ? 0 : be16(e + 1);
    const uint8_t *nt = cp_ent(c, be16(e + 3));
    return nt && nt[0] == T_NAT && cp_utf8(c, be16(nt + 1), name, name_n) &&
           cp_utf8(c, be16(nt + 3), desc, desc_n);
}
static bool utf8_is(const struct cf *c, uint32_t i, const char *s)
{
    const uint8_t *p;
    uint16_t n;
    size_t sl = strlen(s);
    return cp_utf8(c, i, &p, &n) && n == sl && memcmp(p, s, sl) == 0;
}

/* The pool's hash: length, tag and up to 16 bytes sampled from the string are enough to
 * tell entries apart (a full hash of every name is most of the cost of building it). */
static uint32_t hash_of(int tag, const uint8_t *p, size_t n)
{
    uint32_t h = (uint32_t)n * 2654435761u ^ (uint32_t)tag;
    size_t step = n > 16 ? n / 16 : 1;
    for (size_t k = 0; k < n; k += step)
        h = (h ^ p[k]) * 16777619u;
    if (n)
        h = (h ^ p[n - 1]) * 16777619u;
    return h ^ (h >> 15);
}
/* Content of an original Utf8 (the string) or Integer (4 bytes) entry, for the hash. */
static bool hash_key(const struct cf *c, uint32_t i, int *tag, const uint8_t **p, size_t *n)
{
    const uint8_t *e = c->in + c->cp_pos[i];
    *tag = e[0];
    if (e[0] == T_UTF8) {
        *n = be16(e + 1);
        *p = e + 3;
        return true;
    }
    if (e[0] == T_INT) {
        *n = 4;
        *p = e + 1;
        return true;
    }
    return false;
}
static bool hash_build(struct cf *c)
{
    uint32_t cap = 64;
    while (cap < c->cp_n * 2)
        cap *= 2;
    c->hash = calloc(cap, sizeof *c->hash);
    if (!c->hash)
        return false;
    c->hmask = cap - 1;
    for (uint32_t i = 1; i < c->cp_n; i++) {
        int tag;
        const uint8_t *p;
        size_t n;
        if (!c->cp_pos[i] || !hash_key(c, i, &tag, &p, &n))
            continue;
        uint32_t h = hash_of(tag, p, n) & c->hmask;
        while (c->hash[h])
            h = (h + 1) & c->hmask;
        c->hash[h] = (uint16_t)i;
    }
    return true;
}
/* Index of an original Utf8/Integer entry with this content, or 0. */
static uint32_t hash_find(struct cf *c, int tag, const uint8_t *p, size_t n)
{
    if (!c->hash && !hash_build(c)) {
        cf_fail(c, "out of memory");
        return 0;
    }
    uint32_t h = hash_of(tag, p, n) & c->hmask;
    while (c->hash[h]) {
        int t2 = 0;
        const uint8_t *p2 = NULL;
        size_t n2 = 0;
        hash_key(c, c->hash[h], &t2, &p2, &n2);
        if (t2 == tag && n2 == n && memcmp(p2, p, n) == 0)
            return c->hash[h];
        h = (h + 1) & c->hmask;
    }
    return 0;
}

/* Append an entry (tag byte first); returns its index, 0 on failure (pool full). */
static uint16_t cp_append(struct cf *c, const uint8_t *e, size_t n)
{
    if (c->failed)
        return 0;
    if (c->next_idx > 65534) {
        cf_fail(c, "constant pool full (65535 entries) after adding the hook references");
        return 0;
    }
    if (!GROW(c->addv, c->addcap, c->addn + 1)) {
        cf_fail(c, "out of memory");
        return 0;
    }
    c->addv[c->addn++].off = (uint32_t)c->add.len;
    b_put(&c->add, e, n);
    if (c->add.oom) {
        cf_fail(c, "out of memory");
        return 0;
    }
    return (uint16_t)c->next_idx++;
}
/* Search the appended entries for one with exactly these bytes. */
static uint16_t cp_find_added(const struct cf *c, const uint8_t *e, size_t n)
{
    for (size_t k = 0; k < c->addn; k++) {
        size_t end = k + 1 < c->addn ? c->addv[k + 1].off : c->add.len;
        if (end - c->addv[k].off == n && memcmp(c->add.p + c->addv[k].off, e, n) == 0)
            return (uint16_t)(c->cp_n + k);
    }
    return 0;
}
static uint16_t cp_get_utf8(struct cf *c, const void *s, size_t n)
{
    if (n > 65535) {
        cf_fail(c, "name too long");
        return 0;
    }
    uint32_t i = hash_find(c, T_UTF8, s, n);
    if (i)
        return (uint16_t)i;
    uint8_t *e = malloc(n + 3);
    if (!e) {
        cf_fail(c, "out of memory");
        return 0;
    }
    e[0] = T_UTF8;
    e[1] = (uint8_t)(n >> 8);
    e[2] = (uint8_t)n;
    memcpy(e + 3, s, n);
    uint16_t r = cp_find_added(c, e, n + 3);
    if (!r)
        r = cp_append(c, e, n + 3);
    free(e);
    return r;
}
static uint16_t cp_get_int(struct cf *c, int32_t v)
{
    uint8_t e[5] = {T_INT, (uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
                    (uint8_t)((uint32_t)v >> 8), (uint8_t)v};
    uint32_t i = hash_find(c, T_INT, e + 1, 4);
    if (i)
        return (uint16_t)i;
    uint16_t r = cp_find_added(c, e, 5);
    return r ? r : cp_append(c, e, 5);
}
/* An entry made of a tag and one or two u2 indices (Class, NameAndType, Methodref): if
 * every index is an original entry, an original one may exist; search (rarely needed). */
static uint16_t cp_get_ref(struct cf *c, int tag, uint16_t a, uint16_t b, bool two)
{
    if (c->failed || !a || (two && !b))
        return 0;
    uint8_t e[5] = {(uint8_t)tag, (uint8_t)(a >> 8), (uint8_t)a, (uint8_t)(b >> 8), (uint8_t)b};
    size_t n = two ? 5 : 3;
    if (a < c->cp_n && (!two || b < c->cp_n)) {
        for (uint32_t i = 1; i < c->cp_n; i++) {
            const uint8_t *p = c->cp_pos[i] ? c->in + c->cp_pos[i] : NULL;
            if (p && memcmp(p, e, n) == 0)
                return (uint16_t)i;
        }
    }
    uint16_t r = cp_find_added(c, e, n);
    return r ? r : cp_append(c, e, n);
}
static uint16_t cp_get_class(struct cf *c, const void *name, size_t n)
{
    return cp_get_ref(c, T_CLASS, cp_get_utf8(c, name, n), 0, false);
}

/* The Methodref of hook h, created on first use. */
static uint16_t hook_ref(struct cf *c, enum cf_hook h)
{
    if (c->hook_ref[h])
        return c->hook_ref[h];
    if (!c->hook_class_idx)
        c->hook_class_idx = cp_get_class(c, c->spec->hook_class, strlen(c->spec->hook_class));
    uint16_t nat = cp_get_ref(c, T_NAT, cp_get_utf8(c, hook_names[h], strlen(hook_names[h])),
                              cp_get_utf8(c, hook_descs[h], strlen(hook_descs[h])), true);
    c->hook_ref[h] = cp_get_ref(c, T_METHOD, c->hook_class_idx, nat, true);
    return c->hook_ref[h];
}

/* NUL-terminated copies of a method's name and descriptor, for the callbacks. */
static bool scratch_names(struct cf *c, const uint8_t *n, size_t nn, const uint8_t *d, size_t dn,
                          const char **name, const char **desc)
{
    if (!GROW(c->scratch, c->scratch_cap, nn + dn + 2)) {
        cf_fail(c, "out of memory");
        return false;
    }
    memcpy(c->scratch, n, nn);
    c->scratch[nn] = 0;
    memcpy(c->scratch + nn + 1, d, dn);
    c->scratch[nn + 1 + dn] = 0;
    *name = c->scratch;
    *desc = c->scratch + nn + 1;
    return true;
}

/* ---------------------------------------------------------------------------------------
 * Parsing the class.
 */
static bool parse_pool(struct cf *c)
{
    const uint8_t *in = c->in;
    size_t pos = 10, len = c->len;
    c->cp_pos = calloc(c->cp_n ? c->cp_n : 1, sizeof *c->cp_pos);
    if (!c->cp_pos) {
        cf_fail(c, "out of memory");
        return false;
    }
    for (uint32_t i = 1; i < c->cp_n; i++) {
        if (pos >= len) {
            cf_fail(c, "truncated in constant pool entry %u", i);
            return false;
        }
        c->cp_pos[i] = (uint32_t)pos;
        size_t n;
        switch (in[pos]) {
        case T_UTF8:
            if (len - pos < 3) {
                cf_fail(c, "truncated in constant pool entry %u", i);
                return false;
            }
            n = 3 + (size_t)be16(in + pos + 1);
            break;
        case T_INT: case T_FLOAT: case T_FIELD: case T_METHOD: case T_IMETHOD: case T_NAT:
        case T_DYNAMIC: case T_INDY:
            n = 5;
            break;
        case T_LONG: case T_DOUBLE:
            n = 9;
            break;
        case T_CLASS: case T_STRING: case T_MTYPE: case T_MODULE: case T_PACKAGE:
            n = 3;
            break;
        case T_MHANDLE:
            n = 4;
            break;
        default:
            cf_fail(c, "bad constant pool tag %u at entry %u", in[pos], i);
            return false;
        }
        if (len - pos < n) {
            cf_fail(c, "truncated in constant pool entry %u", i);
            return false;
        }
        if (in[pos] == T_LONG || in[pos] == T_DOUBLE) {
            if (i + 1 >= c->cp_n) {
                cf_fail(c, "8-byte constant at the last pool index %u", i);
                return false;
            }
            c->cp_pos[++i] = 0;
        }
        pos += n;
    }
    c->cp_end = pos;
    return true;
}

/* Skip an attributes table at *pos (u2 count, then name/u4 length/bytes). */
static bool skip_attrs(struct cf *c, size_t *pos, const char *where)
{
    if (c->len - *pos < 2) {
        cf_fail(c, "truncated in %s", where);
        return false;
    }
    unsigned n = be16(c->in + *pos);
    *pos += 2;
    for (unsigned k = 0; k < n; k++) {
        if (c->len - *pos < 6) {
            cf_fail(c, "truncated in an attribute of %s", where);
            return false;
        }
        uint32_t al = be32(c->in + *pos + 2);
        *pos += 6;
        if (c->len - *pos < al) {
            cf_fail(c, "truncated in an attribute of %s", where);
            return false;
        }
        *pos += al;
    }
    return true;
}
/* fields or methods: u2 count, each u2 access, u2 name, u2 desc, attributes. */
static bool skip_members(struct cf *c, size_t *pos, const char *what)
{
    if (c->len - *pos < 2) {
        cf_fail(c, "truncated at %s_count", what);
        return false;
    }
    unsigned n = be16(c->in + *pos);
    *pos += 2;
    for (unsigned k = 0; k < n; k++) {
        if (c->len - *pos < 6) {
            cf_fail(c, "truncated in %s %u", what, k);
            return false;
        }
        *pos += 6;
        if (!skip_attrs(c, pos, what))
            return false;
    }
    return true;
}

static bool parse_class(struct cf *c)
{
    const uint8_t *in = c->in;
    if (c->len < 10) {
        cf_fail(c, "truncated class file header (%zu bytes)", c->len);
        return false;
    }
    if (be32(in) != 0xCAFEBABEu) {
        cf_fail(c, "bad magic 0x%08x", be32(in));
        return false;
    }
    c->minor = be16(in + 4);
    c->major = be16(in + 6);
    if (c->major < 45 || c->major > CF_MAX_MAJOR) {
        cf_fail(c, "unsupported class file version %u.%u", c->major, c->minor);
        return false;
    }
    c->cp_n = be16(in + 8);
    if (c->cp_n == 0) {
        cf_fail(c, "constant_pool_count is 0");
        return false;
    }
    c->next_idx = c->cp_n;
    if (!parse_pool(c))
        return false;
    size_t pos = c->cp_end;
    if (c->len - pos < 8) {
        cf_fail(c, "truncated after the constant pool");
        return false;
    }
    c->access = be16(in + pos);
    c->this_class = be16(in + pos + 2);
    if (!cp_class_name(c, c->this_class, &c->this_name, &c->this_len)) {
        cf_fail(c, "this_class %u is not a Class entry", c->this_class);
        return false;
    }
    unsigned nif = be16(in + pos + 6);
    pos += 8;
    if (c->len - pos < 2 * (size_t)nif) {
        cf_fail(c, "truncated in interfaces");
        return false;
    }
    pos += 2 * (size_t)nif;
    if (!skip_members(c, &pos, "field"))
        return false;
    c->methods_pos = pos;
    if (!skip_members(c, &pos, "method"))
        return false;
    c->attrs_pos = pos;
    if (!skip_attrs(c, &pos, "class attributes"))
        return false;
    if (pos != c->len) {
        cf_fail(c, "%zu extra bytes at the end of the class file", c->len - pos);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------
 * Instructions.
 */

/* Length of each instruction with a fixed length; 0 for the variable ones (tableswitch,
 * lookupswitch, wide), -1 for an opcode that may not appear in a class file. */
static const int8_t op_lens[256] = {
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x00 */
     2,  3,  2,  3,  3,  2,  2,  2,  2,  2,  1,  1,  1,  1,  1,  1,  /* 0x10 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x20 */
     1,  1,  1,  1,  1,  1,  2,  2,  2,  2,  2,  1,  1,  1,  1,  1,  /* 0x30 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x40 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x50 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x60 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x70 */
     1,  1,  1,  1,  3,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  /* 0x80 */
     1,  1,  1,  1,  1,  1,  1,  1,  1,  3,  3,  3,  3,  3,  3,  3,  /* 0x90 */
     3,  3,  3,  3,  3,  3,  3,  3,  3,  2,  0,  0,  1,  1,  1,  1,  /* 0xa0 */
     1,  1,  3,  3,  3,  3,  3,  3,  3,  5,  5,  3,  2,  3,  1,  1,  /* 0xb0 */
     3,  3,  1,  1,  0,  4,  3,  3,  5,  5, -1, -1, -1, -1, -1, -1,  /* 0xc0 */
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  /* 0xd0 */
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  /* 0xe0 */
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  /* 0xf0 */
};
static int op_len(unsigned op) { return op_lens[op & 0xff]; }
static bool op_is_if(unsigned op) { return (op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7; }
static bool op_is_return(unsigned op) { return op >= 0xac && op <= 0xb1; }
static unsigned op_if_inverse(unsigned op) { return op >= 0xc6 ? op ^ 1u : ((op - 0x99) ^ 1u) + 0x99; }
static unsigned sw_pad(uint32_t pos) { return (4 - ((pos + 1) & 3)) & 3; }

enum { I_BRANCH = 1, I_SWITCH = 2, I_WIDEN = 4, I_WIDE_FORM = 8 };

struct insn {
    uint32_t bci;   /* original offset */
    uint32_t start; /* new offset of the block: probes, then the instruction */
    uint32_t ipos;  /* new offset of the instruction itself */
    int32_t target; /* branch target (original bci) */
    uint32_t sw;    /* switch: first index in meth.swt (default, then cases) */
    uint32_t nsw;   /* switch: number of targets incl. default */
    uint16_t len;   /* original length */
    uint8_t op;
    uint8_t f;
};

struct ex {
    uint16_t s, e, h, t;
};

/* A verification type. OBJ carries its class name (into the pool, a static string or the
 * method's arena) and, when known, its Class index; UNINIT carries the original bci of its
 * `new`. */
struct vt {
    uint8_t tag;
    uint16_t u;
    uint16_t n;
    const uint8_t *s;
};

struct frame {
    uint32_t bci;      /* original offset */
    uint32_t l, nl;    /* locals: meth.fv[l .. l+nl) (entries: long/double count once) */
    uint32_t s, ns;    /* stack entries */
};

struct arena_blk {
    struct arena_blk *next;
    size_t used, cap;
    uint8_t data[];
};

struct meth {
    struct cf *c;
    int index;
    uint16_t access;
    const uint8_t *name, *desc;
    uint16_t name_n, desc_n;
    bool is_static, is_init, uthis_start;
    int32_t id;
    unsigned flags;

    const uint8_t *code;
    uint32_t len;
    uint16_t max_stack, max_locals;
    const uint8_t *cattrs; /* Code's attributes_count */
    size_t cattrs_len;

    struct insn *ins; /* n + 1 (a sentinel at the end) */
    size_t n, ins_cap;
    int32_t *idx; /* [len + 1]: instruction index at each bci, -1 inside an instruction */
    size_t idx_cap;
    int32_t *swt;
    size_t nswt, swt_cap;
    struct ex *ex;
    size_t nex, ex_cap;
    bool has_branch, has_jsr;

    const uint8_t *smt; /* StackMapTable payload (after the u4 length) */
    uint32_t smt_len;
    struct frame *fr;
    size_t nfr, fr_cap;
    struct frame *xfr; /* frames added for widened ifs */
    size_t nxfr, xfr_cap;
    struct vt *fv;
    size_t nfv, fv_cap;
    struct vt *init; /* the implicit initial frame (entries) */
    size_t ninit, init_cap;

    /* probes */
    uint8_t mid_size;
    uint16_t mid_idx;
    uint8_t *cover; /* <init>: 1 for instructions the catch-all may cover (`this`
                       initialized), 2 for those reached while `this` is uninitialized */
    size_t init_k;      /* <init>: the invokespecial that initializes `this`, or SIZE_MAX */
    bool presuper;      /* <init>: a second handler covers the code before that call */
    uint32_t init_bci;  /* rewritten offset of ins[init_k], UINT32_MAX if none */
    size_t cover_cap;

    struct arena_blk *arena;
    char msg[256];
    bool failed;
};

static bool m_fail(struct meth *m, const char *fmt, ...)
{
    if (!m->failed) {
        m->failed = true;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->msg, sizeof m->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

static void *m_alloc(struct meth *m, size_t n)
{
    struct arena_blk *b = m->arena;
    n = (n + 7) & ~(size_t)7;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4000 ? n : 4000;
        b = malloc(sizeof *b + cap);
        if (!b) {
            m_fail(m, "out of memory");
            return NULL;
        }
        b->next = m->arena;
        b->used = 0;
        b->cap = cap;
        m->arena = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static bool decode_code(struct meth *m)
{
    const uint8_t *code = m->code;
    uint32_t len = m->len;
    /* at most one instruction per byte, plus the sentinel */
    if (!GROW(m->idx, m->idx_cap, (size_t)len + 1) || !GROW(m->ins, m->ins_cap, (size_t)len + 2))
        return m_fail(m, "out of memory");
    memset(m->idx, 0xff, ((size_t)len + 1) * sizeof *m->idx); /* -1 */
    m->n = 0;
    m->nswt = 0;
    m->has_branch = m->has_jsr = false;
    uint32_t bci = 0;
    while (bci < len) {
        unsigned op = code[bci];
        int l = op_len(op);
        struct insn *in = &m->ins[m->n];
        in->bci = bci;
        in->op = (uint8_t)op;
        in->f = 0;
        in->target = -1;
        if (l < 0)
            return m_fail(m, "invalid opcode 0x%02x at %u", op, bci);
        if (op == 0xaa || op == 0xab) {
            uint32_t p = bci + 1 + sw_pad(bci);
            if ((uint64_t)p + (op == 0xaa ? 12 : 8) > len)
                return m_fail(m, "truncated switch at %u", bci);
            int32_t def = (int32_t)be32(code + p);
            uint64_t cnt, each;
            if (op == 0xaa) {
                int32_t lo = (int32_t)be32(code + p + 4), hi = (int32_t)be32(code + p + 8);
                if (lo > hi)
                    return m_fail(m, "tableswitch at %u: low %d > high %d", bci, lo, hi);
                cnt = (uint64_t)((int64_t)hi - lo + 1);
                each = 4;
                p += 12;
            } else {
                int32_t np = (int32_t)be32(code + p + 4);
                if (np < 0)
                    return m_fail(m, "lookupswitch at %u: npairs %d", bci, np);
                cnt = (uint64_t)np;
                each = 8;
                p += 8;
            }
            if ((uint64_t)p + cnt * each > len)
                return m_fail(m, "truncated switch at %u", bci);
            l = (int)(p + cnt * each - bci);
            if (!GROW(m->swt, m->swt_cap, m->nswt + cnt + 1))
                return m_fail(m, "out of memory");
            in->sw = (uint32_t)m->nswt;
            in->nsw = (uint32_t)cnt + 1;
            m->swt[m->nswt++] = (int32_t)bci + def;
            for (uint64_t k = 0; k < cnt; k++)
                m->swt[m->nswt++] =
                    (int32_t)bci + (int32_t)be32(code + p + k * each + (each == 8 ? 4 : 0));
            in->f = I_SWITCH;
            m->has_branch = true;
        } else if (op == 0xc4) {
            if (bci + 1 >= len)
                return m_fail(m, "truncated wide at %u", bci);
            unsigned op2 = code[bci + 1];
            if (op2 == 0x84)
                l = 6;
            else if ((op2 >= 0x15 && op2 <= 0x19) || (op2 >= 0x36 && op2 <= 0x3a) || op2 == 0xa9)
                l = 4;
            else
                return m_fail(m, "wide with opcode 0x%02x at %u", op2, bci);
            in->f = I_WIDE_FORM;
            if (op2 == 0xa9)
                m->has_jsr = true;
        }
        if ((uint64_t)bci + (uint64_t)l > len)
            return m_fail(m, "truncated instruction at %u", bci);
        in->len = (uint16_t)l;
        if (op_is_if(op) || op == 0xa7 || op == 0xa8) {
            in->target = (int32_t)bci + (int16_t)be16(code + bci + 1);
            in->f = I_BRANCH;
        } else if (op == 0xc8 || op == 0xc9) {
            in->target = (int32_t)bci + (int32_t)be32(code + bci + 1);
            in->f = I_BRANCH;
        }
        if (in->f & I_BRANCH)
            m->has_branch = true;
        if (op == 0xa8 || op == 0xc9 || op == 0xa9)
            m->has_jsr = true;
        m->idx[bci] = (int32_t)m->n;
        m->n++;
        bci += (uint32_t)l;
    }
    m->idx[len] = (int32_t)m->n;
    memset(&m->ins[m->n], 0, sizeof m->ins[m->n]);
    m->ins[m->n].bci = len;
    /* every target must be an instruction */
    for (size_t k = 0; k < m->n; k++) {
        struct insn *in = &m->ins[k];
        if ((in->f & I_BRANCH) && (in->target < 0 || (uint32_t)in->target >= len ||
                                   m->idx[in->target] < 0))
            return m_fail(m, "branch at %u to %d is not an instruction", in->bci, in->target);
        if (in->f & I_SWITCH)
            for (uint32_t j = 0; j < in->nsw; j++) {
                int32_t t = m->swt[in->sw + j];
                if (t < 0 || (uint32_t)t >= len || m->idx[t] < 0)
                    return m_fail(m, "switch at %u to %d is not an instruction", in->bci, t);
            }
    }
    return true;
}

/* Index of the instruction at bci, which must start one (or be len when end_ok). */
static bool at_insn(const struct meth *m, uint32_t bci, bool end_ok)
{
    return bci < m->len ? m->idx[bci] >= 0 : (end_ok && bci == m->len);
}

/* ---------------------------------------------------------------------------------------
 * Verification types: descriptors, the initial frame, and a simulator of the verifier's
 * type state (the instructions' effect on locals and stack).
 */
static const uint8_t *S(const char *s) { return (const uint8_t *)s; }

static struct vt vt_simple(int tag)
{
    struct vt v = {(uint8_t)tag, 0, 0, NULL};
    return v;
}
static struct vt vt_obj(const uint8_t *s, size_t n, uint16_t idx)
{
    struct vt v = {VT_OBJ, idx, (uint16_t)n, s};
    return v;
}
static bool vt_eq(const struct vt *a, const struct vt *b)
{
    if (a->tag != b->tag)
        return false;
    if (a->tag == VT_OBJ)
        return a->n == b->n && (a->n == 0 || memcmp(a->s, b->s, a->n) == 0);
    if (a->tag == VT_UNINIT)
        return a->u == b->u;
    return true;
}

/* One field type at *p (not 'V'): its verification type; *slots = 1 or 2. */
static bool desc_type(const uint8_t **pp, const uint8_t *end, struct vt *out, int *slots)
{
    const uint8_t *p = *pp, *s = p;
    if (p >= end)
        return false;
    *slots = 1;
    switch (*p) {
    case 'B': case 'C': case 'I': case 'S': case 'Z':
        *out = vt_simple(VT_INT);
        *pp = p + 1;
        return true;
    case 'F':
        *out = vt_simple(VT_FLOAT);
        *pp = p + 1;
        return true;
    case 'J':
        *out = vt_simple(VT_LONG);
        *slots = 2;
        *pp = p + 1;
        return true;
    case 'D':
        *out = vt_simple(VT_DOUBLE);
        *slots = 2;
        *pp = p + 1;
        return true;
    case 'L': {
        const uint8_t *q = memchr(p, ';', (size_t)(end - p));
        if (!q || q == p + 1)
            return false;
        *out = vt_obj(p + 1, (size_t)(q - p - 1), 0);
        *pp = q + 1;
        return true;
    }
    case '[': {
        while (p < end && *p == '[')
            p++;
        if (p - s > 255 || p >= end)
            return false;
        if (*p == 'L') {
            const uint8_t *q = memchr(p, ';', (size_t)(end - p));
            if (!q)
                return false;
            p = q + 1;
        } else if (strchr("BCDFIJSZ", *p) && *p) {
            p++;
        } else {
            return false;
        }
        *out = vt_obj(s, (size_t)(p - s), 0);
        *pp = p;
        return true;
    }
    default:
        return false;
    }
}

/* The initial frame's locals as entries: this (uninitializedThis in a constructor other
 * than Object's), then the parameters. */
static bool init_frame(struct meth *m)
{
    struct cf *c = m->c;
    m->ninit = 0;
    const uint8_t *p = m->desc, *end = m->desc + m->desc_n;
    if (p >= end || *p != '(')
        return m_fail(m, "bad method descriptor");
    p++;
    if (!GROW(m->init, m->init_cap, (size_t)m->desc_n + 1))
        return m_fail(m, "out of memory");
    if (!m->is_static)
        m->init[m->ninit++] = m->uthis_start ? vt_simple(VT_UTHIS)
                                             : vt_obj(c->this_name, c->this_len, c->this_class);
    while (p < end && *p != ')') {
        struct vt v;
        int slots;
        if (!desc_type(&p, end, &v, &slots))
            return m_fail(m, "bad method descriptor");
        m->init[m->ninit++] = v;
    }
    if (p >= end)
        return m_fail(m, "bad method descriptor");
    return true;
}

/* Entries -> slots: long/double take two slots, the second Top. */
static bool entries_to_slots(struct meth *m, const struct vt *e, size_t ne, struct vt *slots,
                             size_t cap, uint32_t *n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        int two = e[i].tag == VT_LONG || e[i].tag == VT_DOUBLE;
        if (k + 1u + (unsigned)two > cap)
            return m_fail(m, "frame larger than max_locals/max_stack");
        slots[k++] = e[i];
        if (two)
            slots[k++] = vt_simple(VT_TOP);
    }
    *n = k;
    return true;
}

struct state {
    struct vt *l, *s;
    uint32_t sp;
    bool uthis; /* flagThisUninit */
};

static bool st_push(struct meth *m, struct state *st, struct vt v)
{
    if (st->sp >= m->max_stack)
        return m_fail(m, "operand stack overflow");
    st->s[st->sp++] = v;
    return true;
}
static bool st_push_t(struct meth *m, struct state *st, int tag)
{
    if (!st_push(m, st, vt_simple(tag)))
        return false;
    return (tag == VT_LONG || tag == VT_DOUBLE) ? st_push(m, st, vt_simple(VT_TOP)) : true;
}
static bool st_pop(struct meth *m, struct state *st, uint32_t k)
{
    if (st->sp < k)
        return m_fail(m, "operand stack underflow");
    st->sp -= k;
    return true;
}
static bool st_store(struct meth *m, struct state *st, uint32_t n, struct vt v, bool two)
{
    if ((uint64_t)n + (two ? 2 : 1) > m->max_locals)
        return m_fail(m, "local %u beyond max_locals", n);
    if (n > 0 && (st->l[n - 1].tag == VT_LONG || st->l[n - 1].tag == VT_DOUBLE))
        st->l[n - 1] = vt_simple(VT_TOP);
    st->l[n] = v;
    if (two)
        st->l[n + 1] = vt_simple(VT_TOP);
    return true;
}
/* After invokespecial <init> on `from`: every copy becomes the initialized class. */
static void st_init(struct meth *m, struct state *st, struct vt from, struct vt to)
{
    for (uint32_t k = 0; k < m->max_locals; k++)
        if (vt_eq(&st->l[k], &from))
            st->l[k] = to;
    for (uint32_t k = 0; k < st->sp; k++)
        if (vt_eq(&st->s[k], &from))
            st->s[k] = to;
    if (from.tag == VT_UTHIS)
        st->uthis = false;
}

enum { P_NONE, P_INT, P_FLOAT, P_LONG, P_DOUBLE };
#define EFF(pop, push) ((pop) << 3 | (push))
#define SPECIAL (-1)
/* Instructions whose effect is "pop N slots, push a primitive" (or nothing). */
static int simple_eff(unsigned op)
{
    static const int arith[4] = {EFF(2, P_INT), EFF(4, P_LONG), EFF(2, P_FLOAT), EFF(4, P_DOUBLE)};
    if (op == 0x00 || op == 0x84 || op == 0xa7 || op == 0xc8) return EFF(0, P_NONE);
    if (op >= 0x02 && op <= 0x08) return EFF(0, P_INT);
    if (op == 0x09 || op == 0x0a) return EFF(0, P_LONG);
    if (op >= 0x0b && op <= 0x0d) return EFF(0, P_FLOAT);
    if (op == 0x0e || op == 0x0f) return EFF(0, P_DOUBLE);
    if (op == 0x10 || op == 0x11 || op == 0x15 || (op >= 0x1a && op <= 0x1d)) return EFF(0, P_INT);
    if (op == 0x16 || (op >= 0x1e && op <= 0x21)) return EFF(0, P_LONG);
    if (op == 0x17 || (op >= 0x22 && op <= 0x25)) return EFF(0, P_FLOAT);
    if (op == 0x18 || (op >= 0x26 && op <= 0x29)) return EFF(0, P_DOUBLE);
    if (op == 0x2e || op == 0x33 || op == 0x34 || op == 0x35) return EFF(2, P_INT);
    if (op == 0x2f) return EFF(2, P_LONG);
    if (op == 0x30) return EFF(2, P_FLOAT);
    if (op == 0x31) return EFF(2, P_DOUBLE);
    if (op == 0x50 || op == 0x52) return EFF(4, P_NONE);
    if (op >= 0x4f && op <= 0x56) return EFF(3, P_NONE);
    if (op == 0x57) return EFF(1, P_NONE);
    if (op == 0x58) return EFF(2, P_NONE);
    if (op >= 0x60 && op <= 0x73) return arith[(op - 0x60) & 3];
    if (op == 0x74) return EFF(1, P_INT);
    if (op == 0x75) return EFF(2, P_LONG);
    if (op == 0x76) return EFF(1, P_FLOAT);
    if (op == 0x77) return EFF(2, P_DOUBLE);
    if (op >= 0x78 && op <= 0x7d) return (op & 1) ? EFF(3, P_LONG) : EFF(2, P_INT);
    if (op >= 0x7e && op <= 0x83) return (op & 1) ? EFF(4, P_LONG) : EFF(2, P_INT);
    if (op == 0x85) return EFF(1, P_LONG);
    if (op == 0x86) return EFF(1, P_FLOAT);
    if (op == 0x87) return EFF(1, P_DOUBLE);
    if (op == 0x88) return EFF(2, P_INT);
    if (op == 0x89) return EFF(2, P_FLOAT);
    if (op == 0x8a) return EFF(2, P_DOUBLE);
    if (op == 0x8b) return EFF(1, P_INT);
    if (op == 0x8c) return EFF(1, P_LONG);
    if (op == 0x8d) return EFF(1, P_DOUBLE);
    if (op == 0x8e) return EFF(2, P_INT);
    if (op == 0x8f) return EFF(2, P_LONG);
    if (op == 0x90) return EFF(2, P_FLOAT);
    if (op >= 0x91 && op <= 0x93) return EFF(1, P_INT);
    if (op == 0x94 || op == 0x97 || op == 0x98) return EFF(4, P_INT);
    if (op == 0x95 || op == 0x96) return EFF(2, P_INT);
    if (op >= 0x99 && op <= 0x9e) return EFF(1, P_NONE);
    if (op >= 0x9f && op <= 0xa6) return EFF(2, P_NONE);
    if (op == 0xaa || op == 0xab) return EFF(1, P_NONE);
    if (op == 0xac || op == 0xae || op == 0xb0) return EFF(1, P_NONE);
    if (op == 0xad || op == 0xaf) return EFF(2, P_NONE);
    if (op == 0xb1) return EFF(0, P_NONE);
    if (op == 0xbe || op == 0xc1) return EFF(1, P_INT);
    if (op == 0xbf || op == 0xc2 || op == 0xc3 || op == 0xc6 || op == 0xc7) return EFF(1, P_NONE);
    return SPECIAL;
}

static const char *const newarray_names[12] = {NULL, NULL, NULL, NULL, "[Z", "[C", "[F", "[D",
                                               "[B", "[S", "[I", "[J"};

/* Simulate instruction k on st. */
static bool sim(struct meth *m, struct state *st, size_t k)
{
    struct cf *c = m->c;
    const struct insn *in = &m->ins[k];
    const uint8_t *p = m->code + in->bci;
    unsigned op = in->op;
    int eff = simple_eff(op);
    if (eff != SPECIAL) {
        static const int push_tag[5] = {0, VT_INT, VT_FLOAT, VT_LONG, VT_DOUBLE};
        if (!st_pop(m, st, (uint32_t)(eff >> 3)))
            return false;
        return (eff & 7) ? st_push_t(m, st, push_tag[eff & 7]) : true;
    }
    unsigned var = 0;
    bool wide = op == 0xc4;
    if (wide) {
        op = p[1];
        var = be16(p + 2);
        eff = simple_eff(op); /* wide iload..dload, iinc */
        if (eff != SPECIAL)
            return st_pop(m, st, (uint32_t)(eff >> 3)) &&
                   ((eff & 7) ? st_push_t(m, st, (int[]){0, VT_INT, VT_FLOAT, VT_LONG, VT_DOUBLE}[eff & 7]) : true);
    } else if ((op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) || op == 0xa9) {
        var = p[1];
    }
    switch (op) {
    case 0x01: /* aconst_null */
        return st_push(m, st, vt_simple(VT_NULL));
    case 0x12: case 0x13: case 0x14: { /* ldc, ldc_w, ldc2_w */
        unsigned ci = op == 0x12 ? p[1] : be16(p + 1);
        int t = cp_tag(c, ci);
        switch (t) {
        case T_INT: return st_push_t(m, st, VT_INT);
        case T_FLOAT: return st_push_t(m, st, VT_FLOAT);
        case T_LONG: return st_push_t(m, st, VT_LONG);
        case T_DOUBLE: return st_push_t(m, st, VT_DOUBLE);
        case T_STRING: return st_push(m, st, vt_obj(S("java/lang/String"), 16, 0));
        case T_CLASS: return st_push(m, st, vt_obj(S("java/lang/Class"), 15, 0));
        case T_MTYPE: return st_push(m, st, vt_obj(S("java/lang/invoke/MethodType"), 27, 0));
        case T_MHANDLE: return st_push(m, st, vt_obj(S("java/lang/invoke/MethodHandle"), 29, 0));
        case T_DYNAMIC: {
            int tg, slots;
            uint16_t cls, nn, dn;
            const uint8_t *nm, *ds;
            struct vt v;
            if (!cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) || !desc_type(&ds, ds + dn, &v, &slots))
                return m_fail(m, "bad Dynamic constant at %u", in->bci);
            if (!st_push(m, st, v))
                return false;
            return slots == 2 ? st_push(m, st, vt_simple(VT_TOP)) : true;
        }
        default:
            return m_fail(m, "ldc of constant %u (tag %d) at %u", ci, t, in->bci);
        }
    }
    case 0x19: case 0x2a: case 0x2b: case 0x2c: case 0x2d: { /* aload */
        unsigned n = op == 0x19 ? var : op - 0x2a;
        if (n >= m->max_locals)
            return m_fail(m, "local %u beyond max_locals", n);
        return st_push(m, st, st->l[n]);
    }
    case 0x32: { /* aaload: the array's component type */
        if (st->sp < 2)
            return m_fail(m, "operand stack underflow");
        struct vt a = st->s[st->sp - 2], r = vt_simple(VT_NULL);
        if (a.tag == VT_OBJ && a.n >= 2 && a.s[0] == '[') {
            if (a.s[1] == 'L' && a.n >= 4)
                r = vt_obj(a.s + 2, (size_t)a.n - 3, 0);
            else if (a.s[1] == '[')
                r = vt_obj(a.s + 1, (size_t)a.n - 1, 0);
            else
                return m_fail(m, "aaload on %.*s at %u", (int)a.n, (const char *)a.s, in->bci);
        } else if (a.tag != VT_NULL) {
            return m_fail(m, "aaload on a non-array at %u", in->bci);
        }
        st->sp -= 2;
        return st_push(m, st, r);
    }
    case 0x36: case 0x38: /* istore, fstore */
        return st_pop(m, st, 1) && st_store(m, st, var, vt_simple(op == 0x36 ? VT_INT : VT_FLOAT), false);
    case 0x37: case 0x39: /* lstore, dstore */
        return st_pop(m, st, 2) && st_store(m, st, var, vt_simple(op == 0x37 ? VT_LONG : VT_DOUBLE), true);
    case 0x3a: /* astore (references and jsr's returnAddress) */
        return st_pop(m, st, 1) && st_store(m, st, var, st->s[st->sp], false);
    case 0x3b: case 0x3c: case 0x3d: case 0x3e:
        return st_pop(m, st, 1) && st_store(m, st, op - 0x3b, vt_simple(VT_INT), false);
    case 0x3f: case 0x40: case 0x41: case 0x42:
        return st_pop(m, st, 2) && st_store(m, st, op - 0x3f, vt_simple(VT_LONG), true);
    case 0x43: case 0x44: case 0x45: case 0x46:
        return st_pop(m, st, 1) && st_store(m, st, op - 0x43, vt_simple(VT_FLOAT), false);
    case 0x47: case 0x48: case 0x49: case 0x4a:
        return st_pop(m, st, 2) && st_store(m, st, op - 0x47, vt_simple(VT_DOUBLE), true);
    case 0x4b: case 0x4c: case 0x4d: case 0x4e:
        return st_pop(m, st, 1) && st_store(m, st, op - 0x4b, st->s[st->sp], false);
    case 0x59: case 0x5a: case 0x5b: case 0x5c: case 0x5d: case 0x5e: case 0x5f: {
        /* dup, dup_x1, dup_x2, dup2, dup2_x1, dup2_x2, swap: pure slot shuffles */
        static const uint8_t take[7] = {1, 2, 3, 2, 3, 4, 2};
        uint32_t t = take[op - 0x59];
        if (st->sp < t)
            return m_fail(m, "operand stack underflow");
        struct vt w[4];
        memcpy(w, st->s + st->sp - t, t * sizeof *w); /* w[0] deepest */
        st->sp -= t;
        static const int8_t seq[7][6] = {
            {0, 0, -1},          /* dup:     a -> a a */
            {1, 0, 1, -1},       /* dup_x1:  a b -> b a b */
            {2, 0, 1, 2, -1},    /* dup_x2:  a b c -> c a b c */
            {0, 1, 0, 1, -1},    /* dup2:    a b -> a b a b */
            {1, 2, 0, 1, 2, -1}, /* dup2_x1: a b c -> b c a b c */
            {2, 3, 0, 1, 2, 3},  /* dup2_x2: a b c d -> c d a b c d */
            {1, 0, -1},          /* swap:    a b -> b a */
        };
        for (int j = 0; j < 6 && seq[op - 0x59][j] >= 0; j++)
            if (!st_push(m, st, w[seq[op - 0x59][j]]))
                return false;
        return true;
    }
    case 0xa8: case 0xc9: /* jsr: the successor (the subroutine) sees a returnAddress */
        return st_push(m, st, vt_simple(VT_RET));
    case 0xa9: /* ret */
        return true;
    case 0xb2: case 0xb3: case 0xb4: case 0xb5: { /* get/putstatic, get/putfield */
        int tg, slots;
        uint16_t cls, nn, dn;
        const uint8_t *nm, *ds;
        struct vt v;
        unsigned ci = be16(p + 1);
        if (!cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) || tg != T_FIELD ||
            !desc_type(&ds, ds + dn, &v, &slots))
            return m_fail(m, "bad field reference %u at %u", ci, in->bci);
        if (op == 0xb3 || op == 0xb5)
            return st_pop(m, st, (uint32_t)slots + (op == 0xb5));
        if (op == 0xb4 && !st_pop(m, st, 1))
            return false;
        if (!st_push(m, st, v))
            return false;
        return slots == 2 ? st_push(m, st, vt_simple(VT_TOP)) : true;
    }
    case 0xb6: case 0xb7: case 0xb8: case 0xb9: case 0xba: { /* invoke* */
        int tg, slots;
        uint16_t cls, nn, dn;
        const uint8_t *nm, *ds;
        struct vt v;
        unsigned ci = be16(p + 1);
        if (!cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) ||
            (op == 0xba) != (tg == T_INDY) || tg == T_FIELD || tg == T_DYNAMIC)
            return m_fail(m, "bad method reference %u at %u", ci, in->bci);
        const uint8_t *d = ds, *end = ds + dn;
        if (d >= end || *d++ != '(')
            return m_fail(m, "bad method descriptor at %u", in->bci);
        uint32_t args = 0;
        while (d < end && *d != ')') {
            if (!desc_type(&d, end, &v, &slots))
                return m_fail(m, "bad method descriptor at %u", in->bci);
            args += (uint32_t)slots;
        }
        if (d >= end)
            return m_fail(m, "bad method descriptor at %u", in->bci);
        d++;
        if (!st_pop(m, st, args))
            return false;
        if (op != 0xb8 && op != 0xba) {
            if (!st_pop(m, st, 1))
                return false;
            struct vt recv = st->s[st->sp];
            if (op == 0xb7 && nn == 6 && memcmp(nm, "<init>", 6) == 0) {
                if (recv.tag == VT_UTHIS) {
                    st_init(m, st, recv, vt_obj(c->this_name, c->this_len, c->this_class));
                } else if (recv.tag == VT_UNINIT) {
                    uint32_t nb = recv.u;
                    const uint8_t *cn;
                    uint16_t cnn;
                    if (nb + 3 > m->len || m->code[nb] != 0xbb ||
                        !cp_class_name(c, be16(m->code + nb + 1), &cn, &cnn))
                        return m_fail(m, "uninitialized(%u) is not a new at %u", nb, in->bci);
                    st_init(m, st, recv, vt_obj(cn, cnn, be16(m->code + nb + 1)));
                } else {
                    return m_fail(m, "invokespecial <init> on an initialized value at %u", in->bci);
                }
            }
        }
        if (d < end && *d == 'V')
            return true;
        if (!desc_type(&d, end, &v, &slots))
            return m_fail(m, "bad method descriptor at %u", in->bci);
        if (!st_push(m, st, v))
            return false;
        return slots == 2 ? st_push(m, st, vt_simple(VT_TOP)) : true;
    }
    case 0xbb: { /* new */
        struct vt v = {VT_UNINIT, (uint16_t)in->bci, 0, NULL};
        return st_push(m, st, v);
    }
    case 0xbc: { /* newarray */
        unsigned t = p[1];
        if (t < 4 || t > 11)
            return m_fail(m, "newarray type %u at %u", t, in->bci);
        return st_pop(m, st, 1) && st_push(m, st, vt_obj(S(newarray_names[t]), 2, 0));
    }
    case 0xbd: { /* anewarray: "[" + descriptor of the component */
        const uint8_t *cn;
        uint16_t cnn;
        if (!cp_class_name(c, be16(p + 1), &cn, &cnn) || cnn == 0 || cnn > 65000)
            return m_fail(m, "bad class at %u", in->bci);
        uint8_t *s = m_alloc(m, (size_t)cnn + 3);
        if (!s)
            return false;
        size_t n = 0;
        s[n++] = '[';
        if (cn[0] == '[') {
            memcpy(s + n, cn, cnn);
            n += cnn;
        } else {
            s[n++] = 'L';
            memcpy(s + n, cn, cnn);
            n += cnn;
            s[n++] = ';';
        }
        return st_pop(m, st, 1) && st_push(m, st, vt_obj(s, n, 0));
    }
    case 0xc0: { /* checkcast */
        const uint8_t *cn;
        uint16_t cnn;
        if (!cp_class_name(c, be16(p + 1), &cn, &cnn))
            return m_fail(m, "bad class at %u", in->bci);
        return st_pop(m, st, 1) && st_push(m, st, vt_obj(cn, cnn, be16(p + 1)));
    }
    case 0xc5: { /* multianewarray */
        const uint8_t *cn;
        uint16_t cnn;
        if (!cp_class_name(c, be16(p + 1), &cn, &cnn) || p[3] == 0)
            return m_fail(m, "bad multianewarray at %u", in->bci);
        return st_pop(m, st, p[3]) && st_push(m, st, vt_obj(cn, cnn, be16(p + 1)));
    }
    default:
        if (wide)
            return m_fail(m, "bad wide instruction at %u", in->bci);
        return m_fail(m, "unexpected opcode 0x%02x at %u", op, in->bci);
    }
}

/* ---------------------------------------------------------------------------------------
 * Constructors: which instructions run with `this` initialized. A depth-first walk from
 * the entry and through the handlers; the first state to reach an instruction is taken
 * (a verifiable method gives every path the same answer). Unreached code is not covered.
 */
struct work {
    uint32_t k;
    struct vt *l, *s;
    uint32_t sp;
    bool uthis;
};

/* The common constructor (all javac emits): straight-line code up to the invokespecial that
 * initializes `this`, no handler over that part, no frame after it that still has
 * uninitializedThis. Then everything after that invokespecial is covered. Returns false
 * when the method is not of that shape (the data-flow walk below decides then). */
static bool cover_init_linear(struct meth *m)
{
    size_t nl = m->max_locals, ns = m->max_stack;
    struct vt buf[64];
    struct vt *slots = nl + ns + 1 <= 64 ? buf : malloc((nl + ns + 1) * sizeof *slots);
    if (!slots)
        return false;
    struct state st = {slots, slots + nl, 0, true};
    for (size_t k = 0; k < nl; k++)
        st.l[k] = vt_simple(VT_TOP);
    uint32_t cnt;
    size_t at = m->n;
    bool ok = entries_to_slots(m, m->init, m->ninit, st.l, nl, &cnt);
    for (size_t k = 0; ok && k < m->n; k++) {
        unsigned op = m->ins[k].op;
        if ((m->ins[k].f & (I_BRANCH | I_SWITCH)) || op_is_return(op) || op == 0xbf || op == 0xa9) {
            ok = false;
            break;
        }
        if (!sim(m, &st, k)) {
            ok = false;
            break;
        }
        if (!st.uthis) {
            at = k;
            break;
        }
    }
    if (slots != buf)
        free(slots);
    if (!ok || at >= m->n) {
        m->failed = false; /* the walk below reports the problem, if there is one */
        m->msg[0] = 0;
        return false;
    }
    uint32_t init_end = m->ins[at + 1].bci;
    for (size_t e = 0; e < m->nex; e++)
        if (m->ex[e].s < init_end)
            return false;
    for (size_t f = 0; f < m->nfr; f++)
        for (uint32_t j = 0; m->fr[f].bci >= init_end && j < m->fr[f].nl; j++)
            if (m->fv[m->fr[f].l + j].tag == VT_UTHIS)
                return false;
    for (size_t k = 0; k < m->n; k++)
        m->cover[k] = k > at ? 1 : 2;
    return true;
}

static bool cover_init(struct meth *m)
{
    size_t n = m->n, nl = m->max_locals, ns = m->max_stack;
    if (!GROW(m->cover, m->cover_cap, n + 1))
        return m_fail(m, "out of memory");
    memset(m->cover, 0, n + 1);
    if (cover_init_linear(m))
        return true;
    uint8_t *seen = calloc(n + 1, 1); /* bit 0 reached, bit 1 queued */
    struct work *wl = NULL;
    size_t nwl = 0, wlcap = 0;
    struct vt *tmpl = malloc((nl + ns + 1) * sizeof(struct vt));
    bool ok = seen && tmpl;
    if (!ok)
        m_fail(m, "out of memory");
    struct state st = {tmpl, tmpl + nl, 0, m->uthis_start};
    if (ok) {
        for (size_t k = 0; k < nl; k++)
            st.l[k] = vt_simple(VT_TOP);
        uint32_t nslot;
        ok = entries_to_slots(m, m->init, m->ninit, st.l, nl, &nslot);
    }
    /* push (k, state) to the work list: a copy */
#define PUSH_WORK(K, ST, EXSTACK)                                                          \
    do {                                                                                   \
        if (!(seen[(K)] & 2)) {                                                            \
            seen[(K)] |= 2;                                                                \
            struct vt *cp = m_alloc(m, (nl + ns + 1) * sizeof(struct vt));                 \
            if (!cp || !GROW(wl, wlcap, nwl + 1)) {                                        \
                ok = m_fail(m, "out of memory");                                           \
                break;                                                                     \
            }                                                                              \
            memcpy(cp, (ST)->l, nl * sizeof *cp);                                          \
            wl[nwl].k = (uint32_t)(K);                                                     \
            wl[nwl].l = cp;                                                                \
            wl[nwl].s = cp + nl;                                                           \
            wl[nwl].uthis = (ST)->uthis;                                                   \
            if (EXSTACK) {                                                                 \
                cp[nl] = vt_obj(S("java/lang/Throwable"), 19, 0);                          \
                wl[nwl].sp = 1;                                                            \
            } else {                                                                       \
                memcpy(cp + nl, (ST)->s, (ST)->sp * sizeof *cp);                           \
                wl[nwl].sp = (ST)->sp;                                                     \
            }                                                                              \
            nwl++;                                                                         \
        }                                                                                  \
    } while (0)
    if (ok)
        PUSH_WORK(0, &st, false);
    while (ok && nwl > 0) {
        struct work w = wl[--nwl];
        memcpy(st.l, w.l, nl * sizeof *st.l);
        memcpy(st.s, w.s, w.sp * sizeof *st.s);
        st.sp = w.sp;
        st.uthis = w.uthis;
        size_t k = w.k;
        for (;;) {
            if (seen[k] & 1)
                break;
            seen[k] |= 1;
            m->cover[k] = st.uthis ? 2 : 1;
            const struct insn *in = &m->ins[k];
            for (size_t e = 0; e < m->nex && ok; e++)
                if (in->bci >= m->ex[e].s && in->bci < m->ex[e].e)
                    PUSH_WORK((size_t)m->idx[m->ex[e].h], &st, true);
            if (!ok)
                break;
            unsigned op = in->op;
            if (op == 0xa8 || op == 0xc9) { /* jsr: subroutine, then the next instruction */
                uint32_t sp0 = st.sp;
                if (!sim(m, &st, k)) {
                    ok = false;
                    break;
                }
                PUSH_WORK((size_t)m->idx[in->target], &st, false);
                st.sp = sp0;
                if (!ok)
                    break;
                if (++k >= n) {
                    ok = m_fail(m, "execution falls off the end of the code");
                    break;
                }
                continue;
            }
            if (!sim(m, &st, k)) {
                ok = false;
                break;
            }
            if (in->f & I_SWITCH) {
                for (uint32_t j = 0; j < in->nsw && ok; j++)
                    PUSH_WORK((size_t)m->idx[m->swt[in->sw + j]], &st, false);
                break;
            }
            if (op == 0xa7 || op == 0xc8) {
                k = (size_t)m->idx[in->target];
                continue;
            }
            if (in->f & I_BRANCH)
                PUSH_WORK((size_t)m->idx[in->target], &st, false);
            if (op_is_return(op) || op == 0xbf || op == 0xa9 || !ok)
                break;
            if (++k >= n) {
                ok = m_fail(m, "execution falls off the end of the code");
                break;
            }
        }
    }
#undef PUSH_WORK
    free(seen);
    free(tmpl);
    free(wl);
    return ok;
}

/* ---------------------------------------------------------------------------------------
 * StackMapTable: decode to full states, encode from them.
 */
static bool read_vt(struct meth *m, const uint8_t **pp, const uint8_t *end, struct vt *out)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return m_fail(m, "truncated StackMapTable");
    unsigned tag = *p++;
    if (tag > VT_UNINIT)
        return m_fail(m, "bad verification type %u in StackMapTable", tag);
    *out = vt_simple((int)tag);
    if (tag == VT_OBJ || tag == VT_UNINIT) {
        if (end - p < 2)
            return m_fail(m, "truncated StackMapTable");
        out->u = be16(p);
        p += 2;
        if (tag == VT_OBJ) {
            const uint8_t *s;
            uint16_t n;
            if (!cp_class_name(m->c, out->u, &s, &n))
                return m_fail(m, "StackMapTable names constant %u, not a class", out->u);
            out->s = s;
            out->n = n;
        } else if (out->u >= m->len || m->code[out->u] != 0xbb || !at_insn(m, out->u, false)) {
            return m_fail(m, "StackMapTable: uninitialized(%u) is not a new", out->u);
        }
    }
    *pp = p;
    return true;
}

static bool decode_smt(struct meth *m)
{
    m->nfr = 0;
    m->nfv = 0;
    const uint8_t *p = m->smt, *end = m->smt + m->smt_len;
    if (end - p < 2)
        return m_fail(m, "truncated StackMapTable");
    unsigned count = be16(p);
    p += 2;
    /* previous locals: start with the initial frame */
    const struct vt *pl = m->init;
    size_t pnl = m->ninit;
    int64_t prev = -1;
    for (unsigned k = 0; k < count; k++) {
        if (p >= end)
            return m_fail(m, "truncated StackMapTable");
        unsigned type = *p++;
        uint32_t delta;
        size_t nl = pnl, ns = 0, keep = pnl, app = 0;
        struct vt stack1 = {0, 0, 0, NULL};
        if (type < 64) {
            delta = type;
        } else if (type < 128) {
            delta = type - 64;
            ns = 1;
            if (!read_vt(m, &p, end, &stack1))
                return false;
        } else if (type < 247) {
            return m_fail(m, "reserved StackMapTable frame type %u", type);
        } else {
            if (end - p < 2)
                return m_fail(m, "truncated StackMapTable");
            delta = be16(p);
            p += 2;
            if (type == 247) {
                ns = 1;
                if (!read_vt(m, &p, end, &stack1))
                    return false;
            } else if (type < 251) {
                if (pnl < 251 - type)
                    return m_fail(m, "StackMapTable chops more locals than there are");
                keep = nl = pnl - (251 - type);
            } else if (type == 251) {
            } else if (type < 255) {
                app = type - 251;
                nl = pnl + app;
            } else {
                if (end - p < 2)
                    return m_fail(m, "truncated StackMapTable");
                nl = be16(p);
                p += 2;
                keep = 0;
                app = nl;
            }
        }
        /* entries for this frame: locals [kept from prev | read], stack */
        if (!GROW(m->fv, m->fv_cap, m->nfv + nl + 1))
            return m_fail(m, "out of memory");
        /* pl may point into fv: re-derive after the grow */
        if (k > 0)
            pl = m->fv + m->fr[m->nfr - 1].l;
        struct frame f;
        f.l = (uint32_t)m->nfv;
        f.nl = (uint32_t)nl;
        memmove(m->fv + m->nfv, pl, keep * sizeof *pl);
        for (size_t j = 0; j < app; j++)
            if (!read_vt(m, &p, end, &m->fv[m->nfv + keep + j]))
                return false;
        m->nfv += nl;
        if (type == 255) {
            if (end - p < 2)
                return m_fail(m, "truncated StackMapTable");
            ns = be16(p);
            p += 2;
            if (!GROW(m->fv, m->fv_cap, m->nfv + ns + 1))
                return m_fail(m, "out of memory");
            for (size_t j = 0; j < ns; j++)
                if (!read_vt(m, &p, end, &m->fv[m->nfv + j]))
                    return false;
        } else if (ns == 1) {
            if (!GROW(m->fv, m->fv_cap, m->nfv + 1))
                return m_fail(m, "out of memory");
            m->fv[m->nfv] = stack1;
        }
        f.s = (uint32_t)m->nfv;
        f.ns = (uint32_t)ns;
        m->nfv += ns;
        int64_t off = prev + (int64_t)delta + 1; /* the first: delta itself */
        if (off >= m->len || !at_insn(m, (uint32_t)off, false))
            return m_fail(m, "StackMapTable frame at %lld is not an instruction", (long long)off);
        f.bci = (uint32_t)off;
        prev = off;
        if (!GROW(m->fr, m->fr_cap, m->nfr + 1))
            return m_fail(m, "out of memory");
        m->fr[m->nfr++] = f;
        pl = m->fv + f.l;
        pnl = f.nl;
    }
    if (p != end)
        return m_fail(m, "%zu extra bytes in StackMapTable", (size_t)(end - p));
    return true;
}

/* The frame (index into fr) at bci, or -1. */
static long frame_at(const struct meth *m, uint32_t bci)
{
    size_t lo = 0, hi = m->nfr;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->fr[mid].bci < bci)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nfr && m->fr[lo].bci == bci ? (long)lo : -1;
}

/* The state after instruction k (a widened if) becomes a frame at instruction k + 1:
 * simulate from the nearest frame at or before k. */
static bool frame_after(struct meth *m, size_t k)
{
    size_t nl = m->max_locals, ns = m->max_stack;
    struct vt *slots = malloc((nl + ns + 1) * sizeof *slots);
    if (!slots)
        return m_fail(m, "out of memory");
    struct state st = {slots, slots + nl, 0, false};
    for (size_t j = 0; j < nl; j++)
        st.l[j] = vt_simple(VT_TOP);
    /* nearest frame at or before k */
    size_t lo = 0, hi = m->nfr;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->fr[mid].bci <= m->ins[k].bci)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t from;
    uint32_t cnt;
    bool ok;
    if (lo == 0) {
        from = 0;
        ok = entries_to_slots(m, m->init, m->ninit, st.l, nl, &cnt);
        st.uthis = m->uthis_start;
    } else {
        const struct frame *f = &m->fr[lo - 1];
        from = (size_t)m->idx[f->bci];
        ok = entries_to_slots(m, m->fv + f->l, f->nl, st.l, nl, &cnt) &&
             entries_to_slots(m, m->fv + f->s, f->ns, st.s, ns, &st.sp);
        for (uint32_t j = 0; ok && j < f->nl; j++)
            if (m->fv[f->l + j].tag == VT_UTHIS)
                st.uthis = true;
    }
    for (size_t j = from; ok && j <= k; j++) {
        unsigned op = m->ins[j].op;
        if (j < k && (op == 0xa7 || op == 0xc8 || op_is_return(op) || op == 0xbf ||
                      (m->ins[j].f & I_SWITCH) || op == 0xa8 || op == 0xc9 || op == 0xa9)) {
            ok = m_fail(m, "no frame after the unconditional branch at %u", m->ins[j].bci);
            break;
        }
        ok = sim(m, &st, j);
    }
    if (ok) {
        /* slots -> entries; trailing Tops of the locals are implicit */
        size_t nloc = nl;
        while (nloc > 0 && st.l[nloc - 1].tag == VT_TOP &&
               !(nloc >= 2 && (st.l[nloc - 2].tag == VT_LONG || st.l[nloc - 2].tag == VT_DOUBLE)))
            nloc--;
        if (!GROW(m->fv, m->fv_cap, m->nfv + nloc + st.sp + 1) ||
            !GROW(m->xfr, m->xfr_cap, m->nxfr + 1)) {
            ok = m_fail(m, "out of memory");
        } else {
            struct frame f = {m->ins[k + 1].bci, (uint32_t)m->nfv, 0, 0, 0};
            for (size_t j = 0; j < nloc; j++) {
                m->fv[m->nfv++] = st.l[j];
                if (st.l[j].tag == VT_LONG || st.l[j].tag == VT_DOUBLE)
                    j++;
            }
            f.nl = (uint32_t)(m->nfv - f.l);
            f.s = (uint32_t)m->nfv;
            for (uint32_t j = 0; j < st.sp; j++) {
                m->fv[m->nfv++] = st.s[j];
                if (st.s[j].tag == VT_LONG || st.s[j].tag == VT_DOUBLE)
                    j++;
            }
            f.ns = (uint32_t)(m->nfv - f.s);
            m->xfr[m->nxfr++] = f;
        }
    }
    free(slots);
    return ok;
}

static uint32_t map_start(const struct meth *m, uint32_t bci) { return m->ins[m->idx[bci]].start; }

static const struct vt vt_throwable = {VT_OBJ, 0, 19, (const uint8_t *)"java/lang/Throwable"};

static bool write_vt(struct meth *m, struct buf *b, const struct vt *v)
{
    b_u1(b, v->tag);
    if (v->tag == VT_OBJ) {
        uint16_t ci = v->u;
        if (!ci && v->s == vt_throwable.s) {
            /* every handler frame names it: look it up once per class */
            if (!m->c->throwable_idx)
                m->c->throwable_idx = cp_get_class(m->c, v->s, v->n);
            ci = m->c->throwable_idx;
        } else if (!ci) {
            ci = cp_get_class(m->c, v->s, v->n);
        }
        if (!ci)
            return m_fail(m, "constant pool full");
        b_u2(b, ci);
    } else if (v->tag == VT_UNINIT) {
        b_u2(b, m->ins[m->idx[v->u]].ipos);
    } else if (v->tag > VT_UNINIT) {
        return m_fail(m, "returnAddress in a frame");
    }
    return true;
}

/* Encode frames (entries, sorted by new offset) the compact way javac does. */
struct enc_frame {
    uint32_t off;
    const struct vt *l, *s;
    uint32_t nl, ns;
};
static bool encode_frames(struct meth *m, struct buf *b, const struct vt *init, size_t ninit,
                          const struct enc_frame *f, size_t nf)
{
    const struct vt *pl = init;
    size_t pnl = ninit;
    int64_t prev = -1;
    b_u2(b, (unsigned)nf);
    for (size_t k = 0; k < nf; k++) {
        uint32_t delta = (uint32_t)(f[k].off - prev - 1);
        prev = f[k].off;
        size_t common = 0, lim = pnl < f[k].nl ? pnl : f[k].nl;
        while (common < lim && vt_eq(&pl[common], &f[k].l[common]))
            common++;
        bool same = common == pnl && common == f[k].nl;
        if (same && f[k].ns == 0) {
            if (delta < 64) {
                b_u1(b, delta);
            } else {
                b_u1(b, 251);
                b_u2(b, delta);
            }
        } else if (same && f[k].ns == 1) {
            if (delta < 64) {
                b_u1(b, 64 + delta);
            } else {
                b_u1(b, 247);
                b_u2(b, delta);
            }
            if (!write_vt(m, b, &f[k].s[0]))
                return false;
        } else if (f[k].ns == 0 && common == f[k].nl && pnl > f[k].nl && pnl - f[k].nl <= 3) {
            b_u1(b, 251 - (unsigned)(pnl - f[k].nl));
            b_u2(b, delta);
        } else if (f[k].ns == 0 && common == pnl && f[k].nl > pnl && f[k].nl - pnl <= 3) {
            b_u1(b, 251 + (unsigned)(f[k].nl - pnl));
            b_u2(b, delta);
            for (size_t j = pnl; j < f[k].nl; j++)
                if (!write_vt(m, b, &f[k].l[j]))
                    return false;
        } else {
            b_u1(b, 255);
            b_u2(b, delta);
            b_u2(b, f[k].nl);
            for (size_t j = 0; j < f[k].nl; j++)
                if (!write_vt(m, b, &f[k].l[j]))
                    return false;
            b_u2(b, f[k].ns);
            for (size_t j = 0; j < f[k].ns; j++)
                if (!write_vt(m, b, &f[k].s[j]))
                    return false;
        }
        pl = f[k].l;
        pnl = f[k].nl;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------
 * Probes and layout.
 */
static unsigned push_int_size(int32_t v, uint16_t idx)
{
    if (v >= -1 && v <= 5)
        return 1;
    if (v >= -128 && v <= 127)
        return 2;
    if (v >= -32768 && v <= 32767)
        return 3;
    return idx <= 255 ? 2 : 3;
}
static void emit_int(struct buf *b, int32_t v, uint16_t idx)
{
    if (v >= -1 && v <= 5) {
        b_u1(b, (unsigned)(0x03 + v)); /* iconst_m1 = 0x02 */
    } else if (v >= -128 && v <= 127) {
        b_u1(b, 0x10);
        b_u1(b, (unsigned)(v & 0xff));
    } else if (v >= -32768 && v <= 32767) {
        b_u1(b, 0x11);
        b_u2(b, (unsigned)(v & 0xffff));
    } else if (idx <= 255) {
        b_u1(b, 0x12);
        b_u1(b, idx);
    } else {
        b_u1(b, 0x13);
        b_u2(b, idx);
    }
}
/* A bci is at most 65534: sipush covers up to 32767; above, sipush 32767; sipush r; iadd
 * (no constant pool entry per offset, so a large method cannot fill the pool). */
static unsigned bci_size(uint32_t bci) { return bci <= 32767 ? push_int_size((int32_t)bci, 0) : 7; }
static void emit_bci(struct buf *b, uint32_t bci)
{
    if (bci <= 32767) {
        emit_int(b, (int32_t)bci, 0);
    } else {
        emit_int(b, 32767, 0);
        emit_int(b, (int32_t)(bci - 32767), 0);
        b_u1(b, 0x60); /* iadd */
    }
}

static enum cf_hook insn_hook(unsigned op)
{
    if (op >= 0x99 && op <= 0x9e)
        return CF_HOOK_INSN_INT;
    if (op >= 0x9f && op <= 0xa4)
        return CF_HOOK_INSN_INT2;
    if (op == 0xa5 || op == 0xa6)
        return CF_HOOK_INSN_OBJ2;
    if (op == 0xc6 || op == 0xc7)
        return CF_HOOK_INSN_OBJ;
    if (op == 0xaa || op == 0xab)
        return CF_HOOK_INSN_INT;
    return CF_HOOK_INSN;
}
static unsigned insn_dup(enum cf_hook h)
{
    return h == CF_HOOK_INSN_INT2 || h == CF_HOOK_INSN_OBJ2 ? 0x5c /* dup2 */
           : h == CF_HOOK_INSN ? 0 : 0x59 /* dup */;
}

/* The entry probe passes `this` where the verifier lets it: instance methods, and
 * java.lang.Object.<init> (the one constructor whose `this` starts initialized). */
static bool entry_passes_this(const struct meth *m)
{
    return !m->is_static && (!m->is_init || !m->uthis_start);
}
/* A constructor with one super(...)/this(...) call: superCall before it, ctorReady after. */
static bool has_ctor_probes(const struct meth *m)
{
    return (m->flags & CF_METHOD_PROBES) && m->is_init && m->init_k != SIZE_MAX;
}
static unsigned entry_size(const struct meth *m)
{
    if (!(m->flags & CF_METHOD_PROBES))
        return 0;
    return (entry_passes_this(m) ? 1 : 0) + m->mid_size + 3;
}
static unsigned exit_size(const struct meth *m) { return m->mid_size + 3u; }
static bool is_init_call(const struct meth *m, const struct insn *in)
{
    return has_ctor_probes(m) && in == &m->ins[m->init_k];
}
static unsigned probe_size(const struct meth *m, const struct insn *in)
{
    unsigned s = 0;
    if (m->flags & CF_INSN_PROBES)
        s += (insn_dup(insn_hook(in->op)) ? 1 : 0) + m->mid_size + bci_size(in->bci) + 3;
    if ((m->flags & CF_METHOD_PROBES) && op_is_return(in->op))
        s += exit_size(m);
    if (is_init_call(m, in))
        s += m->mid_size + 3u; /* superCall */
    return s;
}
/* Code after an instruction, in its block: ctorReady after the super(...)/this(...) call.
 * A branch to the next instruction lands after it. */
static unsigned post_size(const struct meth *m, const struct insn *in)
{
    return is_init_call(m, in) ? 1u + m->mid_size + 3u : 0u;
}
static uint32_t new_len(const struct insn *in, uint32_t pos)
{
    if (in->f & I_SWITCH)
        return in->len - sw_pad(in->bci) + sw_pad(pos);
    if (in->f & I_WIDEN)
        return op_is_if(in->op) ? 8 : 5;
    return in->len;
}
/* Positions for the current widening; returns the end of the original code's blocks. */
static uint64_t layout(struct meth *m)
{
    uint64_t pos = entry_size(m);
    for (size_t k = 0; k < m->n; k++) {
        struct insn *in = &m->ins[k];
        in->start = (uint32_t)pos;
        pos += probe_size(m, in);
        in->ipos = (uint32_t)pos;
        pos += new_len(in, (uint32_t)pos);
        pos += post_size(m, in);
        if (pos > 0xffffffu)
            pos = 0xffffffu; /* far too big already; keep the arithmetic bounded */
    }
    m->ins[m->n].start = m->ins[m->n].ipos = (uint32_t)pos;
    return pos;
}

static void emit_insn_probe(struct meth *m, struct buf *b, const struct insn *in)
{
    enum cf_hook h = insn_hook(in->op);
    unsigned d = insn_dup(h);
    if (d)
        b_u1(b, d);
    emit_int(b, m->id, m->mid_idx);
    emit_bci(b, in->bci);
    b_u1(b, 0xb8);
    b_u2(b, hook_ref(m->c, h));
}
static void emit_exit_hook(struct meth *m, struct buf *b, enum cf_hook h)
{
    emit_int(b, m->id, m->mid_idx);
    b_u1(b, 0xb8);
    b_u2(b, hook_ref(m->c, h));
}
static void emit_exit(struct meth *m, struct buf *b) { emit_exit_hook(m, b, CF_HOOK_EXIT); }
static enum cf_hook entry_hook(const struct meth *m)
{
    return entry_passes_this(m) ? CF_HOOK_ENTER_OBJ
           : has_ctor_probes(m) ? CF_HOOK_ENTER_CTOR : CF_HOOK_ENTER;
}
static void emit_entry(struct meth *m, struct buf *b)
{
    if (entry_passes_this(m))
        b_u1(b, 0x2a); /* aload_0 */
    emit_int(b, m->id, m->mid_idx);
    b_u1(b, 0xb8);
    b_u2(b, hook_ref(m->c, entry_hook(m)));
}

static void emit_code(struct meth *m, struct buf *b)
{
    if (m->flags & CF_METHOD_PROBES)
        emit_entry(m, b);
    for (size_t k = 0; k < m->n; k++) {
        const struct insn *in = &m->ins[k];
        const uint8_t *p = m->code + in->bci;
        if (m->flags & CF_INSN_PROBES)
            emit_insn_probe(m, b, in);
        if ((m->flags & CF_METHOD_PROBES) && op_is_return(in->op))
            emit_exit(m, b);
        if (is_init_call(m, in))
            emit_exit_hook(m, b, CF_HOOK_SUPER_CALL);
        uint32_t at = in->ipos;
        if (in->f & I_SWITCH) {
            b_u1(b, in->op);
            for (unsigned j = sw_pad(at); j > 0; j--)
                b_u1(b, 0);
            const uint8_t *q = p + 1 + sw_pad(in->bci);
            b_u4(b, (uint32_t)(map_start(m, (uint32_t)m->swt[in->sw]) - at));
            if (in->op == 0xaa) {
                b_put(b, q + 4, 8);
                for (uint32_t j = 1; j < in->nsw; j++)
                    b_u4(b, (uint32_t)(map_start(m, (uint32_t)m->swt[in->sw + j]) - at));
            } else {
                b_put(b, q + 4, 4);
                for (uint32_t j = 1; j < in->nsw; j++) {
                    b_put(b, q + 8 + (size_t)(j - 1) * 8, 4);
                    b_u4(b, (uint32_t)(map_start(m, (uint32_t)m->swt[in->sw + j]) - at));
                }
            }
        } else if (in->f & I_BRANCH) {
            int64_t off = (int64_t)map_start(m, (uint32_t)in->target) - at;
            if (in->op == 0xc8 || in->op == 0xc9) {
                b_u1(b, in->op);
                b_u4(b, (uint32_t)(int32_t)off);
            } else if (!(in->f & I_WIDEN)) {
                b_u1(b, in->op);
                b_u2(b, (unsigned)(off & 0xffff));
            } else if (in->op == 0xa7 || in->op == 0xa8) {
                b_u1(b, in->op == 0xa7 ? 0xc8 : 0xc9);
                b_u4(b, (uint32_t)(int32_t)off);
            } else {
                b_u1(b, op_if_inverse(in->op)); /* skip the goto_w */
                b_u2(b, 8);
                b_u1(b, 0xc8);
                b_u4(b, (uint32_t)(int32_t)(off - 3));
            }
        } else {
            b_put(b, p, in->len);
        }
        if (is_init_call(m, in)) {
            b_u1(b, 0x2a); /* aload_0: initialized now */
            emit_exit_hook(m, b, CF_HOOK_CTOR_READY);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * One method with code.
 */
static bool parse_code(struct meth *m, const uint8_t *a, uint32_t alen)
{
    if (alen < 12)
        return m_fail(m, "truncated Code attribute");
    m->max_stack = be16(a);
    m->max_locals = be16(a + 2);
    uint32_t cl = be32(a + 4);
    if (cl == 0 || cl > 65535 || (uint64_t)cl + 12 > alen)
        return m_fail(m, "bad code_length %u", cl);
    m->code = a + 8;
    m->len = cl;
    const uint8_t *p = a + 8 + cl, *end = a + alen;
    if (end - p < 2)
        return m_fail(m, "truncated exception table");
    unsigned nex = be16(p);
    p += 2;
    if ((size_t)(end - p) < (size_t)nex * 8 + 2)
        return m_fail(m, "truncated exception table");
    if (!GROW(m->ex, m->ex_cap, (size_t)nex + 1))
        return m_fail(m, "out of memory");
    m->nex = nex;
    for (unsigned k = 0; k < nex; k++, p += 8) {
        m->ex[k].s = be16(p);
        m->ex[k].e = be16(p + 2);
        m->ex[k].h = be16(p + 4);
        m->ex[k].t = be16(p + 6);
    }
    m->cattrs = p;
    m->cattrs_len = (size_t)(end - p);
    unsigned na = be16(p);
    p += 2;
    m->smt = NULL;
    for (unsigned k = 0; k < na; k++) {
        if (end - p < 6)
            return m_fail(m, "truncated Code attributes");
        uint32_t l = be32(p + 2);
        if ((size_t)(end - p - 6) < l)
            return m_fail(m, "truncated Code attributes");
        if (utf8_is(m->c, be16(p), "StackMapTable")) {
            if (m->smt)
                return m_fail(m, "two StackMapTable attributes");
            m->smt = p + 6;
            m->smt_len = l;
        }
        p += 6 + l;
    }
    if (p != end)
        return m_fail(m, "Code attribute length mismatch");
    return true;
}

/* Relocate LineNumberTable (kind 0) or LocalVariable(Type)Table (kind 1). */
static bool reloc_table(struct meth *m, struct buf *b, const uint8_t *p, uint32_t l, int kind)
{
    if (l < 2)
        return m_fail(m, "truncated line/variable table");
    unsigned n = be16(p);
    size_t each = kind == 0 ? 4 : 10;
    if ((size_t)n * each + 2 != l)
        return m_fail(m, "line/variable table length mismatch");
    b_u2(b, n);
    for (unsigned k = 0; k < n; k++) {
        const uint8_t *e = p + 2 + k * each;
        uint32_t s = be16(e);
        if (!at_insn(m, s, false))
            return m_fail(m, "%s entry at %u is not an instruction",
                          kind ? "LocalVariableTable" : "LineNumberTable", s);
        /* an entry for offset 0 keeps 0: the entry probe belongs to the first line and to
         * the parameters' scopes */
        uint32_t ns = s == 0 ? 0 : map_start(m, s);
        b_u2(b, ns);
        if (kind == 0) {
            b_put(b, e + 2, 2);
        } else {
            uint32_t end = s + be16(e + 2);
            if (!at_insn(m, end, true))
                return m_fail(m, "LocalVariableTable range end %u is not an instruction", end);
            b_u2(b, map_start(m, end) - ns);
            b_put(b, e + 4, 6);
        }
    }
    return true;
}

static void meth_free(struct meth *m)
{
    free(m->ins);
    free(m->idx);
    free(m->swt);
    free(m->ex);
    free(m->fr);
    free(m->xfr);
    free(m->fv);
    free(m->init);
    free(m->cover);
    while (m->arena) {
        struct arena_blk *n = m->arena->next;
        free(m->arena);
        m->arena = n;
    }
}
static void meth_reset(struct meth *m)
{
    while (m->arena) {
        struct arena_blk *n = m->arena->next;
        free(m->arena);
        m->arena = n;
    }
    m->failed = false;
    m->msg[0] = 0;
    m->nfr = m->nxfr = m->nfv = m->nex = m->n = m->nswt = m->ninit = 0;
    m->init_k = SIZE_MAX;
    m->presuper = false;
    m->init_bci = UINT32_MAX;
}

/* Sort frames by bci (insertion: few added frames). */
static int frame_cmp(const void *a, const void *b)
{
    uint32_t x = ((const struct frame *)a)->bci, y = ((const struct frame *)b)->bci;
    return x < y ? -1 : x > y;
}

/* Does the instruction store into local 0? (`this` must stay in it for the handler over
 * the code before super(...), whose frame names it.) */
static bool stores_local0(const struct meth *m, const struct insn *in)
{
    const uint8_t *p = m->code + in->bci;
    unsigned op = in->op;
    if (op == 0x3b || op == 0x3f || op == 0x43 || op == 0x47 || op == 0x4b)
        return true; /* istore_0, lstore_0, fstore_0, dstore_0, astore_0 */
    if (op >= 0x36 && op <= 0x3a)
        return p[1] == 0;
    if (op == 0xc4 && p[1] >= 0x36 && p[1] <= 0x3a)
        return p[2] == 0 && p[3] == 0;
    return false;
}

/* Constructors: find the invokespecial that initializes `this` (reached while `this` is
 * uninitialized, followed by code where it is not), and decide whether a second handler
 * can cover the code before it. That handler's frame holds uninitializedThis in local 0,
 * which the verifier accepts (flagThisUninit) for a handler that ends in athrow; it cannot
 * cover the invokespecial itself, after which local 0 is initialized. */
static void find_init_call(struct meth *m, bool want_smt)
{
    size_t found = SIZE_MAX, count = 0;
    bool store0 = false;
    for (size_t k = 0; k < m->n; k++) {
        store0 = store0 || stores_local0(m, &m->ins[k]);
        if (m->ins[k].op == 0xb7 && m->cover[k] == 2 && k + 1 < m->n && m->cover[k + 1] == 1) {
            found = k;
            count++;
        }
    }
    if (count != 1)
        return;
    m->init_k = found;
    /* Class files before 50 go through the old verifier, which knows no flagThisUninit. */
    m->presuper = want_smt && !store0;
}

/* The StackMapTable payload: original frames and those added for widened ifs, at their new
 * offsets, the catch-all handler's frame (no locals, [Throwable]) and, in a constructor, the
 * pre-super handler's ([uninitializedThis], [Throwable]). */
static bool write_smt(struct meth *m, struct buf *out, uint32_t hstart, bool probes)
{
    size_t nall = m->nfr + m->nxfr;
    struct frame *all = malloc((nall + 1) * sizeof *all);
    struct enc_frame *ef = malloc((nall + 2) * sizeof *ef);
    bool ok = all && ef;
    if (ok) {
        if (m->nfr)
            memcpy(all, m->fr, m->nfr * sizeof *all);
        if (m->nxfr)
            memcpy(all + m->nfr, m->xfr, m->nxfr * sizeof *all);
        if (m->nxfr)
            qsort(all, nall, sizeof *all, frame_cmp);
        for (size_t j = 0; j < nall; j++) {
            ef[j].off = map_start(m, all[j].bci);
            ef[j].l = m->fv + all[j].l;
            ef[j].nl = all[j].nl;
            ef[j].s = m->fv + all[j].s;
            ef[j].ns = all[j].ns;
        }
        if (probes) {
            ef[nall].off = hstart;
            ef[nall].l = NULL;
            ef[nall].nl = 0;
            ef[nall].s = &vt_throwable;
            ef[nall].ns = 1;
            nall++;
            if (m->presuper) {
                static const struct vt vt_uthis = {VT_UTHIS, 0, 0, NULL};
                ef[nall].off = hstart + m->mid_size + 4u;
                ef[nall].l = &vt_uthis;
                ef[nall].nl = 1;
                ef[nall].s = &vt_throwable;
                ef[nall].ns = 1;
                nall++;
            }
        }
        ok = encode_frames(m, out, m->init, m->ninit, ef, nall);
    } else {
        m_fail(m, "out of memory");
    }
    free(all);
    free(ef);
    return ok;
}

/* Exception-table entries into handler for each run of instructions below end whose
 * cover is `cover`; returns how many. */
static unsigned emit_ranges(struct meth *m, struct buf *out, uint8_t cover, size_t end,
                            uint32_t handler)
{
    unsigned n = 0;
    for (size_t k = 0; k < end;) {
        if (m->cover[k] != cover) {
            k++;
            continue;
        }
        size_t j = k;
        while (j < end && m->cover[j] == cover)
            j++;
        b_u2(out, m->ins[k].start);
        b_u2(out, m->ins[j].start);
        b_u2(out, handler);
        b_u2(out, 0);
        n++;
        k = j;
    }
    return n;
}

/* Rewrite the method's Code attribute (a = its payload) into out (a whole method_info is
 * written by the caller; this writes the attribute name, length and payload). */
static bool rewrite_code(struct meth *m, const uint8_t *a, uint32_t alen, struct buf *out)
{
    struct cf *c = m->c;
    if (!parse_code(m, a, alen) || !decode_code(m))
        return false;
    for (size_t k = 0; k < m->nex; k++) {
        struct ex *e = &m->ex[k];
        if (e->s >= e->e || !at_insn(m, e->s, false) || !at_insn(m, e->e, true) ||
            !at_insn(m, e->h, false))
            return m_fail(m, "bad exception table entry %zu", k);
        if (e->t && cp_tag(c, e->t) != T_CLASS)
            return m_fail(m, "exception table catch type %u is not a class", e->t);
    }
    bool want_smt = c->major >= 50;
    if (c->major == 50 && !m->smt && m->has_branch)
        want_smt = false; /* the old verifier checks this one; a partial table would not help */
    if (m->has_jsr && c->major >= 50 && m->smt)
        return m_fail(m, "jsr/ret with a StackMapTable");
    if (!init_frame(m))
        return false;
    if (m->smt && c->major >= 50 && !decode_smt(m))
        return false;

    /* mid constant */
    m->mid_idx = 0;
    if (m->id < -32768 || m->id > 32767) {
        m->mid_idx = cp_get_int(c, m->id);
        if (!m->mid_idx)
            return false;
    }
    m->mid_size = (uint8_t)push_int_size(m->id, m->mid_idx);

    bool probes = m->flags & CF_METHOD_PROBES;
    bool split = probes && m->is_init; /* the catch-all is not one range */
    if (split && m->uthis_start && !cover_init(m))
        return false;
    if (split && !m->uthis_start) {
        /* java.lang.Object.<init>: HotSpot executes its `return` as
         * _return_register_finalizer, and C2 crashes (SIGSEGV in catch_klass(), seen on 17
         * and 25) compiling it when a handler covers that return. So the returns, and their
         * exit probes, are left out of the range. */
        if (!GROW(m->cover, m->cover_cap, m->n + 1))
            return m_fail(m, "out of memory");
        for (size_t k = 0; k < m->n; k++)
            m->cover[k] = !op_is_return(m->ins[k].op);
    }
    if (split && m->uthis_start)
        find_init_call(m, want_smt);

    /* widen to a fixed point */
    uint64_t end;
    for (;;) {
        end = layout(m);
        bool changed = false;
        for (size_t k = 0; k < m->n; k++) {
            struct insn *in = &m->ins[k];
            if (!(in->f & I_BRANCH) || (in->f & I_WIDEN) || in->op == 0xc8 || in->op == 0xc9)
                continue;
            int64_t off = (int64_t)map_start(m, (uint32_t)in->target) - in->ipos;
            if (off < -32768 || off > 32767) {
                in->f |= I_WIDEN;
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    uint32_t hstart = (uint32_t)end;
    uint64_t total = end + (probes ? m->mid_size + 4u : 0) + (m->presuper ? m->mid_size + 4u : 0);
    if (total > 65535)
        return m_fail(m, "code too large after rewriting (%llu bytes)", (unsigned long long)total);

    /* frames for the fall-through of widened ifs */
    if (want_smt && m->smt) {
        for (size_t k = 0; k < m->n; k++) {
            const struct insn *in = &m->ins[k];
            if (!(in->f & I_WIDEN) || !op_is_if(in->op))
                continue;
            if (k + 1 >= m->n)
                return m_fail(m, "conditional branch at the end of the code");
            if (frame_at(m, m->ins[k + 1].bci) < 0 && !frame_after(m, k))
                return false;
        }
    }

    /* hook references first: they may add constants, none of which changes the layout
     * (the mid constant is already fixed) */
    if (probes) {
        hook_ref(c, CF_HOOK_EXIT);
        hook_ref(c, entry_hook(m));
        if (m->is_init)
            hook_ref(c, CF_HOOK_EXIT_THROW);
        if (has_ctor_probes(m)) {
            hook_ref(c, CF_HOOK_SUPER_CALL);
            hook_ref(c, CF_HOOK_CTOR_READY);
        }
    }
    /* The instruction probes' hooks too: a constant added while the code is emitted would
     * move the constant pool buffer under the frames' type names (write_smt reads them). */
    if (m->flags & CF_INSN_PROBES) {
        for (size_t k = 0; k < m->n; k++)
            hook_ref(c, insn_hook(m->ins[k].op));
    }
    if (!c->code_name)
        c->code_name = cp_get_utf8(c, "Code", 4);
    if (want_smt && probes && !c->smt_name)
        c->smt_name = cp_get_utf8(c, "StackMapTable", 13);
    if (c->failed)
        return false;

    b_u2(out, c->code_name ? c->code_name : (c->code_name = cp_get_utf8(c, "Code", 4)));
    size_t lenpos = out->len;
    b_u4(out, 0);
    unsigned ms = m->max_stack + ((m->flags & CF_INSN_PROBES) ? 5u : probes ? 1u : 0u);
    if (probes && ms < 2)
        ms = 2;
    if (ms > 65535)
        return m_fail(m, "max_stack too large after rewriting");
    b_u2(out, ms);
    b_u2(out, m->max_locals);
    b_u4(out, (uint32_t)total);
    size_t code0 = out->len;
    emit_code(m, out);
    if (probes) {
        /* the catch-all handler: exit, rethrow; constructors say it was a throw (bci.c
         * then also ends the constructors that called this one as their super(...)) */
        emit_exit_hook(m, out, m->is_init ? CF_HOOK_EXIT_THROW : CF_HOOK_EXIT);
        b_u1(out, 0xbf);
    }
    if (m->presuper) {
        emit_exit_hook(m, out, CF_HOOK_EXIT_THROW); /* the pre-super handler, the same */
        b_u1(out, 0xbf);
    }
    if (m->init_k != SIZE_MAX)
        m->init_bci = m->ins[m->init_k].ipos;
    if (!out->oom && out->len - code0 != total)
        return m_fail(m, "internal error: code size %zu, laid out %llu", out->len - code0,
                      (unsigned long long)total);

    /* exception table: the method's own, then the catch-all */
    size_t exn_pos = out->len;
    b_u2(out, 0);
    unsigned nex = 0;
    for (size_t k = 0; k < m->nex; k++) {
        b_u2(out, map_start(m, m->ex[k].s));
        b_u2(out, map_start(m, m->ex[k].e));
        b_u2(out, map_start(m, m->ex[k].h));
        b_u2(out, m->ex[k].t);
        nex++;
    }
    if (probes) {
        if (split) {
            /* Constructors: where `this` is initialized (after super()/this() returned),
             * into the catch-all; before super(...)/this(...), up to that call, into the
             * second handler (both from after the entry probe: a probe that could not
             * run posted no entry). */
            nex += emit_ranges(m, out, 1, m->n, hstart);
            if (m->presuper)
                nex += emit_ranges(m, out, 2, m->init_k, hstart + m->mid_size + 4u);
        } else {
            b_u2(out, m->ins[0].start);
            b_u2(out, hstart);
            b_u2(out, hstart);
            b_u2(out, 0);
            nex++;
        }
    }
    if (nex > 65535)
        return m_fail(m, "exception table too long");
    b_set_u2(out, exn_pos, nex);

    /* Code attributes */
    size_t nattr_pos = out->len;
    b_u2(out, 0);
    unsigned nattr = 0;
    const uint8_t *p = m->cattrs;
    unsigned na = be16(p);
    p += 2;
    bool smt_done = false;
    for (unsigned k = 0; k < na; k++) {
        uint16_t nm = be16(p);
        uint32_t l = be32(p + 2);
        const uint8_t *pl = p + 6;
        p += 6 + l;
        int kind = utf8_is(c, nm, "LineNumberTable")          ? 0
                   : utf8_is(c, nm, "LocalVariableTable")     ? 1
                   : utf8_is(c, nm, "LocalVariableTypeTable") ? 1
                   : utf8_is(c, nm, "StackMapTable")          ? 2
                   : (utf8_is(c, nm, "RuntimeVisibleTypeAnnotations") ||
                      utf8_is(c, nm, "RuntimeInvisibleTypeAnnotations"))
                       ? 3
                       : 4;
        if (kind == 3)
            continue; /* type annotations on code name offsets; dropped (HotSpot ignores them) */
        if (kind == 2 && (c->major < 50 || !want_smt))
            continue; /* meaningless below 50; stale if not rebuilt */
        b_u2(out, nm);
        size_t lp = out->len;
        b_u4(out, 0);
        if (kind == 0 || kind == 1) {
            if (!reloc_table(m, out, pl, l, kind))
                return false;
        } else if (kind == 2) {
            smt_done = true;
            if (!write_smt(m, out, hstart, probes))
                return false;
        } else {
            b_put(out, pl, l);
        }
        b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
        nattr++;
    }
    if (want_smt && !smt_done && probes) {
        /* no table before (no branches): one frame, the handler's */
        b_u2(out, c->smt_name ? c->smt_name : (c->smt_name = cp_get_utf8(c, "StackMapTable", 13)));
        size_t lp = out->len;
        b_u4(out, 0);
        if (!write_smt(m, out, hstart, probes))
            return false;
        b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
        nattr++;
    }
    b_set_u2(out, nattr_pos, nattr);
    if (out->len - lenpos - 4 > 0xffffffffu)
        return m_fail(m, "Code attribute too long");
    b_set_u4(out, lenpos, (uint32_t)(out->len - lenpos - 4));
    if (out->oom)
        return m_fail(m, "out of memory");
    return !c->failed;
}

/* ---------------------------------------------------------------------------------------
 * Native wrappers.
 */

/* Skip one element_value (annotations), depth-limited. */
static bool skip_elem(const uint8_t **pp, const uint8_t *end, int depth);
static bool skip_annotation(const uint8_t **pp, const uint8_t *end, int depth)
{
    const uint8_t *p = *pp;
    if (depth > 64 || end - p < 4)
        return false;
    unsigned n = be16(p + 2);
    p += 4;
    for (unsigned k = 0; k < n; k++) {
        if (end - p < 2)
            return false;
        p += 2;
        if (!skip_elem(&p, end, depth + 1))
            return false;
    }
    *pp = p;
    return true;
}
static bool skip_elem(const uint8_t **pp, const uint8_t *end, int depth)
{
    const uint8_t *p = *pp;
    if (depth > 64 || p >= end)
        return false;
    unsigned tag = *p++;
    switch (tag) {
    case 'B': case 'C': case 'D': case 'F': case 'I': case 'J': case 'S': case 'Z': case 's':
    case 'c':
        if (end - p < 2)
            return false;
        p += 2;
        break;
    case 'e':
        if (end - p < 4)
            return false;
        p += 4;
        break;
    case '@':
        if (!skip_annotation(&p, end, depth + 1))
            return false;
        break;
    case '[': {
        if (end - p < 2)
            return false;
        unsigned n = be16(p);
        p += 2;
        for (unsigned k = 0; k < n; k++)
            if (!skip_elem(&p, end, depth + 1))
                return false;
        break;
    }
    default:
        return false;
    }
    *pp = p;
    return true;
}

/* Why a native method must not be wrapped, or NULL. attrs: the method's attributes_count. */
static const char *no_wrap_reason(struct cf *c, uint16_t access, const uint8_t *attrs, size_t alen)
{
    static const char *const mh[] = {"java/lang/invoke/MethodHandle", "java/lang/invoke/VarHandle"};
    if (c->access & ACC_INTERFACE)
        return "native method in an interface";
    for (int k = 0; k < 2; k++)
        if (c->this_len == strlen(mh[k]) && memcmp(c->this_name, mh[k], c->this_len) == 0 &&
            (access & ACC_VARARGS))
            return "signature-polymorphic method";
    const uint8_t *p = attrs;
    (void)alen; /* attrs was bounds-checked by parse_class */
    unsigned na = be16(p);
    p += 2;
    for (unsigned k = 0; k < na; k++) {
        uint32_t l = be32(p + 2);
        const uint8_t *a = p + 6, *ae = a + l;
        if (utf8_is(c, be16(p), "RuntimeVisibleAnnotations") && l >= 2) {
            unsigned n = be16(a);
            a += 2;
            for (unsigned j = 0; j < n; j++) {
                if (ae - a < 2)
                    break;
                uint16_t ti = be16(a);
                /* A wrapper frame between a caller-sensitive native and its caller changes
                 * the caller it sees; intrinsic natives are bound by the VM by name (some
                 * have no JNI implementation at all) and would lose the intrinsic. */
                if (utf8_is(c, ti, "Ljdk/internal/reflect/CallerSensitive;") ||
                    utf8_is(c, ti, "Lsun/reflect/CallerSensitive;"))
                    return "caller-sensitive native";
                if (utf8_is(c, ti, "Ljdk/internal/vm/annotation/IntrinsicCandidate;") ||
                    utf8_is(c, ti, "Ljdk/internal/HotSpotIntrinsicCandidate;"))
                    return "intrinsic native";
                if (!skip_annotation(&a, ae, 0))
                    break;
            }
        }
        p += 6 + l;
    }
    return NULL;
}

/* xload of local `slot` for a value of verification type tag. */
static void emit_load(struct buf *b, int tag, uint32_t slot)
{
    unsigned base = tag == VT_INT ? 0x15 : tag == VT_LONG ? 0x16 : tag == VT_FLOAT ? 0x17
                    : tag == VT_DOUBLE ? 0x18 : 0x19;
    if (slot <= 3) {
        b_u1(b, 0x1a + (base - 0x15) * 4 + slot);
    } else if (slot <= 255) {
        b_u1(b, base);
        b_u1(b, slot);
    } else {
        b_u1(b, 0xc4);
        b_u1(b, base);
        b_u2(b, slot);
    }
}

/* Write the wrapper's Code attribute for native method m (name/desc/access set). */
static bool wrapper_code(struct meth *m, struct buf *out, uint16_t native_ref)
{
    struct cf *c = m->c;
    m->mid_idx = 0;
    if (m->id < -32768 || m->id > 32767 ? !(m->mid_idx = cp_get_int(c, m->id)) : false)
        return false;
    m->mid_size = (uint8_t)push_int_size(m->id, m->mid_idx);
    m->is_init = false;
    m->flags = CF_METHOD_PROBES;
    if (!init_frame(m))
        return false;
    /* argument slots and return type */
    const uint8_t *d = m->desc + 1, *end = m->desc + m->desc_n;
    uint32_t slots = m->is_static ? 0 : 1;
    struct buf code = {0};
    emit_entry(m, &code);
    uint32_t body = (uint32_t)code.len;
    if (!m->is_static)
        b_u1(&code, 0x2a);
    while (d < end && *d != ')') {
        struct vt v;
        int s;
        if (!desc_type(&d, end, &v, &s)) {
            b_free(&code);
            return m_fail(m, "bad method descriptor");
        }
        emit_load(&code, v.tag, slots);
        slots += (uint32_t)s;
    }
    if (slots > 255 || d >= end) {
        b_free(&code);
        return m_fail(m, "bad method descriptor");
    }
    d++;
    b_u1(&code, m->is_static ? 0xb8 : 0xb7);
    b_u2(&code, native_ref);
    emit_exit(m, &code);
    unsigned ret = 0xb1, rslots = 0;
    switch (d < end ? *d : 'V') {
    case 'V': break;
    case 'J': ret = 0xad; rslots = 2; break;
    case 'D': ret = 0xaf; rslots = 2; break;
    case 'F': ret = 0xae; rslots = 1; break;
    case 'L': case '[': ret = 0xb0; rslots = 1; break;
    default: ret = 0xac; rslots = 1; break;
    }
    b_u1(&code, ret);
    uint32_t hstart = (uint32_t)code.len;
    emit_exit(m, &code);
    b_u1(&code, 0xbf);
    unsigned ms = slots > rslots + 1 ? slots : rslots + 1;
    if (ms < 2)
        ms = 2;

    b_u2(out, c->code_name ? c->code_name : (c->code_name = cp_get_utf8(c, "Code", 4)));
    size_t lp = out->len;
    b_u4(out, 0);
    b_u2(out, ms);
    b_u2(out, slots);
    b_u4(out, (uint32_t)code.len);
    b_put(out, code.p, code.len);
    b_u2(out, 1);
    b_u2(out, body);
    b_u2(out, hstart);
    b_u2(out, hstart);
    b_u2(out, 0);
    if (c->major >= 50) {
        b_u2(out, 1);
        b_u2(out, c->smt_name ? c->smt_name : (c->smt_name = cp_get_utf8(c, "StackMapTable", 13)));
        size_t sp = out->len;
        b_u4(out, 0);
        struct enc_frame ef = {hstart, NULL, &vt_throwable, 0, 1};
        if (!encode_frames(m, out, m->init, m->ninit, &ef, 1)) {
            b_free(&code);
            return false;
        }
        b_set_u4(out, sp, (uint32_t)(out->len - sp - 4));
    } else {
        b_u2(out, 0);
    }
    b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
    bool oom = code.oom;
    b_free(&code);
    if (oom || out->oom)
        return m_fail(m, "out of memory");
    return !c->failed;
}

/* ---------------------------------------------------------------------------------------
 * The class.
 */
struct done {
    int index;
    int32_t id;
    const uint8_t *code;
    uint32_t len;
    uint32_t init_bci;
};

int cf_instrument(const uint8_t *in, size_t in_len, const struct cf_probe_spec *spec,
                  uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
    struct cf c;
    memset(&c, 0, sizeof c);
    c.in = in;
    c.len = in_len;
    c.spec = spec;
    c.err = err;
    c.errlen = errlen;
    if (err && errlen)
        err[0] = 0;
    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!in || !spec || !out || !out_len || !spec->method_id || !spec->hook_class ||
        !spec->hook_class[0] || strlen(spec->hook_class) > 65535) {
        cf_fail(&c, "bad arguments");
        return -1;
    }
    if ((spec->flags & CF_WRAP_NATIVES) &&
        (!spec->native_prefix || !spec->native_prefix[0] || strlen(spec->native_prefix) > 1024)) {
        cf_fail(&c, "CF_WRAP_NATIVES needs a native_prefix");
        return -1;
    }
    struct meth m;
    memset(&m, 0, sizeof m);
    m.c = &c;
    struct buf meths = {0}, natives = {0};
    struct done *done = NULL;
    size_t ndone = 0, done_cap = 0;
    int rc = -1;
    unsigned nmeth = 0, nadded = 0;
    bool changed = false;

    if (!parse_class(&c))
        goto out;
    size_t hl = strlen(spec->hook_class);
    if (c.this_len == hl && memcmp(c.this_name, spec->hook_class, hl) == 0) {
        rc = 1; /* the hooks themselves */
        goto out;
    }
    /* already instrumented (it names the hook class): a scan of the Class entries, so a
     * class with nothing to rewrite never pays for the pool's hash */
    for (uint32_t i = 1; i < c.cp_n; i++) {
        const uint8_t *s;
        uint16_t n;
        if (c.cp_pos[i] && in[c.cp_pos[i]] == T_CLASS && cp_utf8(&c, be16(in + c.cp_pos[i] + 1), &s, &n) &&
            n == hl && memcmp(s, spec->hook_class, hl) == 0) {
            rc = 1;
            goto out;
        }
    }
    if (c.access & ACC_MODULE) {
        rc = 1;
        goto out;
    }

    /* room for the methods as they are plus what probes usually add: few reallocations */
    if (!b_room(&meths, (c.attrs_pos - c.methods_pos) + (c.attrs_pos - c.methods_pos) / 2 + 64)) {
        cf_fail(&c, "out of memory");
        goto out;
    }
    size_t pos = c.methods_pos;
    nmeth = be16(in + pos);
    pos += 2;
    for (unsigned k = 0; k < nmeth; k++) {
        size_t mstart = pos;
        uint16_t acc = be16(in + pos), ni = be16(in + pos + 2), di = be16(in + pos + 4);
        pos += 6;
        size_t attrs = pos;
        skip_attrs(&c, &pos, "method"); /* checked by parse_class */
        size_t mend = pos;
        meth_reset(&m);
        m.index = (int)k;
        m.access = acc;
        if (!cp_utf8(&c, ni, &m.name, &m.name_n) || !cp_utf8(&c, di, &m.desc, &m.desc_n)) {
            cf_fail(&c, "method %u: bad name or descriptor index", k);
            goto out;
        }
        const char *name, *desc;
        if (!scratch_names(&c, m.name, m.name_n, m.desc, m.desc_n, &name, &desc))
            goto out;
        m.id = spec->method_id(spec->ctx, (int)k, name, desc, acc);
        m.is_static = acc & ACC_STATIC;
        m.is_init = m.name_n == 6 && memcmp(m.name, "<init>", 6) == 0;
        m.uthis_start = m.is_init && !(c.this_len == 16 && memcmp(c.this_name, "java/lang/Object", 16) == 0);
        m.flags = spec->flags & (CF_METHOD_PROBES | CF_INSN_PROBES);
        const char *why = NULL;
        bool policy = false;
        size_t mark = meths.len, nmark = natives.len;
        if (m.id == -1 || (acc & ACC_ABSTRACT)) {
            b_put(&meths, in + mstart, mend - mstart);
            continue;
        }
        if (acc & ACC_NATIVE) {
            if (!(spec->flags & CF_WRAP_NATIVES)) {
                b_put(&meths, in + mstart, mend - mstart);
                continue;
            }
            why = m.name_n && m.name[0] == '<' ? "not a method that can be wrapped"
                                               : no_wrap_reason(&c, acc, in + attrs, mend - attrs);
            if (why) {
                policy = true;
            } else {
                /* the wrapper: original flags without native, original attributes + Code */
                size_t pl = strlen(spec->native_prefix);
                char *pn = malloc(pl + m.name_n);
                if (!pn) {
                    cf_fail(&c, "out of memory");
                    goto out;
                }
                memcpy(pn, spec->native_prefix, pl);
                memcpy(pn + pl, m.name, m.name_n);
                uint16_t pni = cp_get_utf8(&c, pn, pl + m.name_n);
                free(pn);
                uint16_t nat = cp_get_ref(&c, T_NAT, pni, di, true);
                uint16_t ref = cp_get_ref(&c, T_METHOD, c.this_class, nat, true);
                hook_ref(&c, CF_HOOK_EXIT);
                hook_ref(&c, m.is_static ? CF_HOOK_ENTER : CF_HOOK_ENTER_OBJ);
                if (c.failed)
                    goto out;
                b_u2(&meths, acc & ~ACC_NATIVE);
                b_u2(&meths, ni);
                b_u2(&meths, di);
                unsigned na = be16(in + attrs);
                b_u2(&meths, na + 1);
                b_put(&meths, in + attrs + 2, mend - attrs - 2);
                if (wrapper_code(&m, &meths, ref)) {
                    /* the renamed native: private, same static-ness, no attributes */
                    b_u2(&natives, (acc & ACC_STATIC) | ACC_PRIVATE | ACC_NATIVE | ACC_SYNTHETIC);
                    b_u2(&natives, pni);
                    b_u2(&natives, di);
                    b_u2(&natives, 0);
                    nadded++;
                    changed = true;
                    if (!GROW(done, done_cap, ndone + 1)) {
                        cf_fail(&c, "out of memory");
                        goto out;
                    }
                    done[ndone++] = (struct done){(int)k, m.id, NULL, 0, UINT32_MAX};
                    continue;
                }
                if (c.failed)
                    goto out;
                why = m.msg;
            }
        } else if (!m.flags && !(spec->flags & CF_REWRITE_ONLY)) {
            b_put(&meths, in + mstart, mend - mstart);
            continue;
        } else {
            /* find Code */
            const uint8_t *ca = NULL;
            uint32_t cal = 0;
            size_t p = attrs + 2;
            unsigned na = be16(in + attrs);
            for (unsigned j = 0; j < na; j++) {
                uint32_t l = be32(in + p + 2);
                if (utf8_is(&c, be16(in + p), "Code")) {
                    ca = in + p + 6;
                    cal = l;
                }
                p += 6 + l;
            }
            if (!ca) {
                why = "no Code attribute";
            } else {
                b_u2(&meths, acc);
                b_u2(&meths, ni);
                b_u2(&meths, di);
                b_u2(&meths, na);
                p = attrs + 2;
                bool ok = true;
                for (unsigned j = 0; j < na && ok; j++) {
                    uint32_t l = be32(in + p + 2);
                    if (in + p + 6 == ca)
                        ok = rewrite_code(&m, ca, cal, &meths);
                    else
                        b_put(&meths, in + p, 6 + (size_t)l);
                    p += 6 + l;
                }
                if (c.failed)
                    goto out;
                if (ok) {
                    changed = true;
                    if (!GROW(done, done_cap, ndone + 1)) {
                        cf_fail(&c, "out of memory");
                        goto out;
                    }
                    done[ndone++] = (struct done){(int)k, m.id, m.code, m.len, m.init_bci};
                    continue;
                }
                why = m.msg;
            }
        }
        /* left alone */
        meths.len = mark;
        natives.len = nmark;
        if (!policy && !spec->method_skipped) {
            cf_fail(&c, "method %.*s%.*s: %s", (int)m.name_n, (const char *)m.name,
                    (int)m.desc_n, (const char *)m.desc, why);
            goto out;
        }
        if (spec->method_skipped) {
            if (!scratch_names(&c, m.name, m.name_n, m.desc, m.desc_n, &name, &desc))
                goto out;
            spec->method_skipped(spec->ctx, (int)k, name, desc, why);
        }
        b_put(&meths, in + mstart, mend - mstart);
    }
    if (!changed) {
        rc = 1;
        goto out;
    }
    if (meths.oom || natives.oom) {
        cf_fail(&c, "out of memory");
        goto out;
    }
    if (nmeth + nadded > 65535) {
        cf_fail(&c, "too many methods after wrapping natives");
        goto out;
    }
    {
        struct buf o = {0};
        if (!b_room(&o, in_len + c.add.len + meths.len + natives.len + 16)) {
            cf_fail(&c, "out of memory");
            goto out;
        }
        b_put(&o, in, 8);
        b_u2(&o, c.next_idx);
        b_put(&o, in + 10, c.cp_end - 10);
        b_put(&o, c.add.p, c.add.len);
        b_put(&o, in + c.cp_end, c.methods_pos - c.cp_end);
        b_u2(&o, nmeth + nadded);
        b_put(&o, meths.p, meths.len);
        b_put(&o, natives.p, natives.len);
        b_put(&o, in + c.attrs_pos, in_len - c.attrs_pos);
        if (o.oom) {
            b_free(&o);
            cf_fail(&c, "out of memory");
            goto out;
        }
        *out = o.p;
        *out_len = o.len;
        rc = 0;
        if (spec->method_done)
            for (size_t k = 0; k < ndone; k++)
                spec->method_done(spec->ctx, done[k].index, done[k].id, done[k].code, done[k].len);
        if (spec->init_call)
            for (size_t k = 0; k < ndone; k++)
                if (done[k].init_bci != UINT32_MAX)
                    spec->init_call(spec->ctx, done[k].index, done[k].id, done[k].init_bci);
    }
out:
    meth_free(&m);
    b_free(&meths);
    b_free(&natives);
    b_free(&c.add);
    free(done);
    free(c.addv);
    free(c.cp_pos);
    free(c.hash);
    free(c.scratch);
    if (rc < 0 && !c.failed)
        cf_fail(&c, "failed");
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Helpers for the hook side.
 */
int cf_branch_outcome(const uint8_t *code, uint32_t code_len, uint32_t bci, int32_t v1,
                      int32_t v2, struct cf_branch *o)
{
    memset(o, 0, sizeof *o);
    if (!code || bci >= code_len)
        return -1;
    unsigned op = code[bci];
    if (op_is_if(op)) {
        if (code_len - bci < 3)
            return -1;
        int t;
        switch (op) {
        case 0x99: t = v1 == 0; break;
        case 0x9a: t = v1 != 0; break;
        case 0x9b: t = v1 < 0; break;
        case 0x9c: t = v1 >= 0; break;
        case 0x9d: t = v1 > 0; break;
        case 0x9e: t = v1 <= 0; break;
        case 0x9f: t = v1 == v2; break;
        case 0xa0: t = v1 != v2; break;
        case 0xa1: t = v1 < v2; break;
        case 0xa2: t = v1 >= v2; break;
        case 0xa3: t = v1 > v2; break;
        case 0xa4: t = v1 <= v2; break;
        case 0xa5: case 0xc6: t = v1 != 0; break; /* same object / is null */
        default: t = v1 == 0; break;              /* if_acmpne, ifnonnull */
        }
        o->kind = CF_BR_IF;
        o->taken = t;
        o->next_bci = t ? (uint32_t)((int32_t)bci + (int16_t)be16(code + bci + 1)) : bci + 3;
        return 0;
    }
    if (op == 0xaa || op == 0xab) {
        uint32_t p = bci + 1 + sw_pad(bci);
        if ((uint64_t)p + 12 > code_len)
            return -1;
        int32_t def = (int32_t)be32(code + p);
        if (op == 0xaa) {
            int32_t lo = (int32_t)be32(code + p + 4), hi = (int32_t)be32(code + p + 8);
            if (lo > hi || (uint64_t)p + 12 + 4 * (uint64_t)((int64_t)hi - lo + 1) > code_len)
                return -1;
            o->kind = CF_BR_TABLESWITCH;
            o->key = v1;
            o->low = lo;
            o->high = hi;
            int32_t off = def;
            if (v1 >= lo && v1 <= hi)
                off = (int32_t)be32(code + p + 12 + 4 * (uint32_t)((int64_t)v1 - lo));
            o->next_bci = (uint32_t)((int32_t)bci + off);
        } else {
            int32_t np = (int32_t)be32(code + p + 4);
            if (np < 0 || (uint64_t)p + 8 + 8 * (uint64_t)np > code_len)
                return -1;
            o->kind = CF_BR_LOOKUPSWITCH;
            o->pairs_total = np;
            o->chosen_pair_index = np;
            int32_t off = def;
            for (int32_t k = 0; k < np; k++)
                if ((int32_t)be32(code + p + 8 + 8 * (uint32_t)k) == v1) {
                    o->chosen_pair_index = k;
                    off = (int32_t)be32(code + p + 12 + 8 * (uint32_t)k);
                    break;
                }
            o->next_bci = (uint32_t)((int32_t)bci + off);
        }
        return 0;
    }
    return op_len(op) < 0 ? -1 : 0;
}

int cf_make_hook_class(const char *name, uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
    size_t nl = name ? strlen(name) : 0;
    if (err && errlen)
        err[0] = 0;
    if (nl == 0 || nl > 65535 || strchr(name, '.') || strchr(name, ';') || strchr(name, '[') ||
        name[0] == '/' || name[nl - 1] == '/' || strstr(name, "//")) {
        if (err && errlen)
            snprintf(err, errlen, "bad hook class name");
        return -1;
    }
    struct buf b = {0};
    b_u4(&b, 0xCAFEBABEu);
    b_u2(&b, 0);
    b_u2(&b, 52);
    b_u2(&b, 5 + 2 * CF_HOOK_COUNT);
    b_u1(&b, T_UTF8); /* 1 */
    b_u2(&b, (unsigned)nl);
    b_put(&b, name, nl);
    b_u1(&b, T_CLASS); /* 2 */
    b_u2(&b, 1);
    b_u1(&b, T_UTF8); /* 3 */
    b_u2(&b, 16);
    b_put(&b, "java/lang/Object", 16);
    b_u1(&b, T_CLASS); /* 4 */
    b_u2(&b, 3);
    for (int h = 0; h < CF_HOOK_COUNT; h++) { /* 5 + 2h, 6 + 2h */
        b_u1(&b, T_UTF8);
        b_u2(&b, (unsigned)strlen(hook_names[h]));
        b_put(&b, hook_names[h], strlen(hook_names[h]));
        b_u1(&b, T_UTF8);
        b_u2(&b, (unsigned)strlen(hook_descs[h]));
        b_put(&b, hook_descs[h], strlen(hook_descs[h]));
    }
    b_u2(&b, ACC_PUBLIC | ACC_FINAL | 0x0020 /* ACC_SUPER */);
    b_u2(&b, 2);
    b_u2(&b, 4);
    b_u2(&b, 0); /* interfaces */
    b_u2(&b, 0); /* fields */
    b_u2(&b, CF_HOOK_COUNT);
    for (int h = 0; h < CF_HOOK_COUNT; h++) {
        b_u2(&b, ACC_PUBLIC | ACC_STATIC | ACC_NATIVE);
        b_u2(&b, 5 + 2 * (unsigned)h);
        b_u2(&b, 6 + 2 * (unsigned)h);
        b_u2(&b, 0);
    }
    b_u2(&b, 0); /* attributes */
    if (b.oom) {
        b_free(&b);
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = b.p;
    *out_len = b.len;
    return 0;
}
