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
 *
 * The parts, one job each, sharing internal.h: buf.c (the output buffer), pool.c (the
 * constant pool: reads, lookups by content, appended entries), parse.c (the class file's
 * structure), code.c (a Code attribute and its instructions), sim.c (verification types
 * and the verifier's type simulation), frames.c (StackMapTable decode and encode),
 * emit.c (probe sizes, layout, emission), rewrite.c (one method's Code attribute
 * rewritten), wrappers.c (native wrappers). This file holds the public entry points:
 * cf_instrument walks the methods and assembles the output class; cf_branch_outcome and
 * cf_make_hook_class serve the hook side.
 */
#include "classfile/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const hook_names[CF_HOOK_COUNT] = {
    "enter", "enterObj", "exit", "insn", "insnInt", "insnInt2", "insnObj", "insnObj2",
    "exitThrow", "enterCtor", "superCall", "ctorReady"};
static const char *const hook_descs[CF_HOOK_COUNT] = {
    "(I)V", "(Ljava/lang/Object;I)V", "(I)V", "(II)V", "(III)V", "(IIII)V",
    "(Ljava/lang/Object;II)V", "(Ljava/lang/Object;Ljava/lang/Object;II)V", "(I)V",
    "(I)V", "(I)V", "(Ljava/lang/Object;I)V"};

const char *cf_hook_name(enum cf_hook h) { return (unsigned)h < CF_HOOK_COUNT ? hook_names[h] : NULL; }
const char *cf_hook_desc(enum cf_hook h) { return (unsigned)h < CF_HOOK_COUNT ? hook_descs[h] : NULL; }

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
 * The class: each method copied, rewritten or wrapped; then the output assembled.
 */
/* A method rewritten, for spec->method_done and spec->init_call once the class is done. */
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

    if (!cf_parse_class(&c))
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
        cf_skip_attrs(&c, &pos, "method"); /* checked by cf_parse_class */
        size_t mend = pos;
        cf_meth_reset(&m);
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
                                               : cf_no_wrap_reason(&c, acc, in + attrs, mend - attrs);
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
                uint16_t pni = cf_pool_utf8(&c, pn, pl + m.name_n);
                free(pn);
                uint16_t nat = cf_pool_ref(&c, T_NAT, pni, di, true);
                uint16_t ref = cf_pool_ref(&c, T_METHOD, c.this_class, nat, true);
                cf_hook_ref(&c, CF_HOOK_EXIT);
                cf_hook_ref(&c, m.is_static ? CF_HOOK_ENTER : CF_HOOK_ENTER_OBJ);
                if (c.failed)
                    goto out;
                b_u2(&meths, acc & ~ACC_NATIVE);
                b_u2(&meths, ni);
                b_u2(&meths, di);
                unsigned na = be16(in + attrs);
                b_u2(&meths, na + 1);
                b_put(&meths, in + attrs + 2, mend - attrs - 2);
                if (cf_wrapper_code(&m, &meths, ref)) {
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
                if (cf_utf8_is(&c, be16(in + p), "Code")) {
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
                        ok = cf_rewrite_code(&m, ca, cal, &meths);
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
            cf_buf_free(&o);
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
    cf_meth_free(&m);
    cf_buf_free(&meths);
    cf_buf_free(&natives);
    cf_pool_free(&c);
    free(done);
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
        cf_buf_free(&b);
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = b.p;
    *out_len = b.len;
    return 0;
}
