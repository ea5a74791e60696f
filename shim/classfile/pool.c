/* pool.c — the constant pool: where each input entry is, lookups, and appended entries.
 *
 * The input's pool is never copied or rewritten: cf_pool_parse records the offset of each
 * entry, reads go straight to the input bytes, and new entries (hook Methodrefs, Integer
 * ids, names) are appended in class-file format to a buffer that becomes the end of the
 * output's pool. An entry is appended only if no entry with the same content exists, in
 * the input or among those appended, so rewriting a class twice or asking for the same
 * hook in many methods adds it once. The input's Utf8 and Integer entries are found by
 * content through a hash table built on the first lookup (a class with nothing to rewrite
 * never pays for it). The other kinds asked for (Class, NameAndType, Methodref) are
 * searched linearly, and only when every index they hold is an original entry; the
 * appended entries, few (the hooks' names and references, ids that need a constant), are
 * searched linearly too.
 *
 * The table is the pool's own (open addressing, 2-byte slots holding pool indices, a hash
 * that samples 16 bytes), not uthash as elsewhere in the shim: every rewritten class builds
 * it over its whole pool, and uthash was measured slower at that. Rewriting the 34,097
 * classes of JDK 17's lib/modules and JDK 25's java.base twice with method probes took
 * 1.61 s of CPU (best of 7) with this table, 1.77 s with uthash and 1.89 s with uthash
 * given this table's hash; under callgrind, 3,000 of those classes ran 416 M instructions,
 * 482 M and 437 M. The hash is not the whole difference: uthash's handle is 56 bytes per
 * entry, against a 2-byte slot here.
 */
#include "classfile/internal.h"

#include <stdlib.h>

/* A member reference or (Invoke)Dynamic: its class index (0 for the dynamic forms), name
 * and descriptor. */
bool cf_cp_member(const struct cf *c, uint32_t i, int *tag, uint16_t *cls, const uint8_t **name,
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
bool cf_utf8_is(const struct cf *c, uint32_t i, const char *s)
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
uint16_t cf_pool_utf8(struct cf *c, const void *s, size_t n)
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
uint16_t cf_pool_int(struct cf *c, int32_t v)
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
uint16_t cf_pool_ref(struct cf *c, int tag, uint16_t a, uint16_t b, bool two)
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
uint16_t cf_pool_class(struct cf *c, const void *name, size_t n)
{
    return cf_pool_ref(c, T_CLASS, cf_pool_utf8(c, name, n), 0, false);
}

/* The Methodref of hook h, created on first use. */
uint16_t cf_hook_ref(struct cf *c, enum cf_hook h)
{
    if (c->hook_ref[h])
        return c->hook_ref[h];
    if (!c->hook_class_idx)
        c->hook_class_idx = cf_pool_class(c, c->spec->hook_class, strlen(c->spec->hook_class));
    uint16_t nat = cf_pool_ref(c, T_NAT, cf_pool_utf8(c, cf_hook_name(h), strlen(cf_hook_name(h))),
                               cf_pool_utf8(c, cf_hook_desc(h), strlen(cf_hook_desc(h))), true);
    c->hook_ref[h] = cf_pool_ref(c, T_METHOD, c->hook_class_idx, nat, true);
    return c->hook_ref[h];
}

bool cf_pool_parse(struct cf *c)
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

void cf_pool_free(struct cf *c)
{
    cf_buf_free(&c->add);
    free(c->addv);
    free(c->cp_pos);
    free(c->hash);
    c->addv = NULL;
    c->cp_pos = NULL;
    c->hash = NULL;
}
