/* rewrite.c — one method's Code attribute, rewritten with its probes.
 *
 * cf_rewrite_code drives the other parts for one method: decode the code and its
 * StackMapTable, decide what a constructor's handlers may cover, lay the blocks out and
 * widen branches to a fixed point, add the frames that widening needs, reserve every pool
 * entry the code will name (before emitting: an append moves the pool buffer, and the
 * frames hold pointers to type names), then write the code, the exception table (the
 * method's own entries first, the catch-all last), and the Code attributes with their
 * offsets relocated. Type annotations on code name offsets and are dropped.
 */
#include "classfile/internal.h"

/* Relocate LineNumberTable (kind 0) or LocalVariable(Type)Table (kind 1). */
static bool reloc_table(struct meth *m, struct buf *b, const uint8_t *p, uint32_t l, int kind)
{
    if (l < 2)
        return cf_meth_fail(m, "truncated line/variable table");
    unsigned n = be16(p);
    size_t each = kind == 0 ? 4 : 10;
    if ((size_t)n * each + 2 != l)
        return cf_meth_fail(m, "line/variable table length mismatch");
    b_u2(b, n);
    for (unsigned k = 0; k < n; k++) {
        const uint8_t *e = p + 2 + k * each;
        uint32_t s = be16(e);
        if (!at_insn(m, s, false))
            return cf_meth_fail(m, "%s entry at %u is not an instruction",
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
                return cf_meth_fail(m, "LocalVariableTable range end %u is not an instruction", end);
            b_u2(b, map_start(m, end) - ns);
            b_put(b, e + 4, 6);
        }
    }
    return true;
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
bool cf_rewrite_code(struct meth *m, const uint8_t *a, uint32_t alen, struct buf *out)
{
    struct cf *c = m->c;
    if (!cf_parse_code(m, a, alen) || !cf_decode_code(m))
        return false;
    for (size_t k = 0; k < m->nex; k++) {
        struct ex *e = &m->ex[k];
        if (e->s >= e->e || !at_insn(m, e->s, false) || !at_insn(m, e->e, true) ||
            !at_insn(m, e->h, false))
            return cf_meth_fail(m, "bad exception table entry %zu", k);
        if (e->t && cp_tag(c, e->t) != T_CLASS)
            return cf_meth_fail(m, "exception table catch type %u is not a class", e->t);
    }
    bool want_smt = c->major >= 50;
    if (c->major == 50 && !m->smt && m->has_branch)
        want_smt = false; /* the old verifier checks this one; a partial table would not help */
    if (m->has_jsr && c->major >= 50 && m->smt)
        return cf_meth_fail(m, "jsr/ret with a StackMapTable");
    if (!cf_init_frame(m))
        return false;
    if (m->smt && c->major >= 50 && !cf_decode_smt(m))
        return false;

    /* mid constant */
    m->mid_idx = 0;
    if (m->id < -32768 || m->id > 32767) {
        m->mid_idx = cf_pool_int(c, m->id);
        if (!m->mid_idx)
            return false;
    }
    m->mid_size = (uint8_t)cf_push_int_size(m->id, m->mid_idx);

    bool probes = m->flags & CF_METHOD_PROBES;
    bool split = probes && m->is_init; /* the catch-all is not one range */
    if (split && m->uthis_start && !cf_cover_init(m))
        return false;
    if (split && !m->uthis_start) {
        /* java.lang.Object.<init>: HotSpot executes its `return` as
         * _return_register_finalizer, and C2 crashes (SIGSEGV in catch_klass(), seen on 17
         * and 25) compiling it when a handler covers that return. So the returns, and their
         * exit probes, are left out of the range. */
        if (!GROW(m->cover, m->cover_cap, m->n + 1))
            return cf_meth_fail(m, "out of memory");
        for (size_t k = 0; k < m->n; k++)
            m->cover[k] = !op_is_return(m->ins[k].op);
    }
    if (split && m->uthis_start)
        find_init_call(m, want_smt);

    /* widen to a fixed point */
    uint64_t end;
    for (;;) {
        end = cf_layout(m);
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
        return cf_meth_fail(m, "code too large after rewriting (%llu bytes)", (unsigned long long)total);

    /* frames for the fall-through of widened ifs */
    if (want_smt && m->smt) {
        for (size_t k = 0; k < m->n; k++) {
            const struct insn *in = &m->ins[k];
            if (!(in->f & I_WIDEN) || !op_is_if(in->op))
                continue;
            if (k + 1 >= m->n)
                return cf_meth_fail(m, "conditional branch at the end of the code");
            if (cf_frame_at(m, m->ins[k + 1].bci) < 0 && !cf_frame_after(m, k))
                return false;
        }
    }

    /* hook references first: they may add constants, none of which changes the layout
     * (the mid constant is already fixed) */
    if (probes) {
        cf_hook_ref(c, CF_HOOK_EXIT);
        cf_hook_ref(c, cf_entry_hook(m));
        if (m->is_init)
            cf_hook_ref(c, CF_HOOK_EXIT_THROW);
        if (cf_has_ctor_probes(m)) {
            cf_hook_ref(c, CF_HOOK_SUPER_CALL);
            cf_hook_ref(c, CF_HOOK_CTOR_READY);
        }
    }
    /* The instruction probes' hooks too: a constant added while the code is emitted would
     * move the constant pool buffer under the frames' type names (cf_write_smt reads them). */
    if (m->flags & CF_INSN_PROBES) {
        for (size_t k = 0; k < m->n; k++)
            cf_hook_ref(c, cf_insn_hook(m->ins[k].op));
    }
    if (!c->code_name)
        c->code_name = cf_pool_utf8(c, "Code", 4);
    if (want_smt && probes && !c->smt_name)
        c->smt_name = cf_pool_utf8(c, "StackMapTable", 13);
    if (c->failed)
        return false;

    b_u2(out, c->code_name ? c->code_name : (c->code_name = cf_pool_utf8(c, "Code", 4)));
    size_t lenpos = out->len;
    b_u4(out, 0);
    unsigned ms = m->max_stack + ((m->flags & CF_INSN_PROBES) ? 5u : probes ? 1u : 0u);
    if (probes && ms < 2)
        ms = 2;
    if (ms > 65535)
        return cf_meth_fail(m, "max_stack too large after rewriting");
    b_u2(out, ms);
    b_u2(out, m->max_locals);
    b_u4(out, (uint32_t)total);
    size_t code0 = out->len;
    cf_emit_code(m, out);
    if (probes) {
        /* the catch-all handler: exit, rethrow; constructors say it was a throw (bci.c
         * then also ends the constructors that called this one as their super(...)) */
        cf_emit_exit_hook(m, out, m->is_init ? CF_HOOK_EXIT_THROW : CF_HOOK_EXIT);
        b_u1(out, 0xbf);
    }
    if (m->presuper) {
        cf_emit_exit_hook(m, out, CF_HOOK_EXIT_THROW); /* the pre-super handler, the same */
        b_u1(out, 0xbf);
    }
    if (m->init_k != SIZE_MAX)
        m->init_bci = m->ins[m->init_k].ipos;
    if (!out->oom && out->len - code0 != total)
        return cf_meth_fail(m, "internal error: code size %zu, laid out %llu", out->len - code0,
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
        return cf_meth_fail(m, "exception table too long");
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
        int kind = cf_utf8_is(c, nm, "LineNumberTable")          ? 0
                   : cf_utf8_is(c, nm, "LocalVariableTable")     ? 1
                   : cf_utf8_is(c, nm, "LocalVariableTypeTable") ? 1
                   : cf_utf8_is(c, nm, "StackMapTable")          ? 2
                   : (cf_utf8_is(c, nm, "RuntimeVisibleTypeAnnotations") ||
                      cf_utf8_is(c, nm, "RuntimeInvisibleTypeAnnotations"))
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
            if (!cf_write_smt(m, out, hstart, probes))
                return false;
        } else {
            b_put(out, pl, l);
        }
        b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
        nattr++;
    }
    if (want_smt && !smt_done && probes) {
        /* no table before (no branches): one frame, the handler's */
        b_u2(out, c->smt_name ? c->smt_name : (c->smt_name = cf_pool_utf8(c, "StackMapTable", 13)));
        size_t lp = out->len;
        b_u4(out, 0);
        if (!cf_write_smt(m, out, hstart, probes))
            return false;
        b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
        nattr++;
    }
    b_set_u2(out, nattr_pos, nattr);
    if (out->len - lenpos - 4 > 0xffffffffu)
        return cf_meth_fail(m, "Code attribute too long");
    b_set_u4(out, lenpos, (uint32_t)(out->len - lenpos - 4));
    if (out->oom)
        return cf_meth_fail(m, "out of memory");
    return !c->failed;
}
