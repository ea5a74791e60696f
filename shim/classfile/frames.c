/* frames.c — the StackMapTable: decoded to full frames, re-encoded at the new offsets.
 *
 * The input's table is decoded into whole frames (every local and stack entry spelled
 * out), because the rewritten table cannot reuse its deltas or its compact forms: offsets
 * move, frames are added (after a widened `if`, at the handlers) and each must then be
 * encoded against the frame before it. Encoding picks the same compact forms javac does.
 * Uninitialized(offset) entries are mapped to the `new` itself rather than to its block,
 * since the probes before it do not create the object. Object types without a Class index
 * get one at encoding time, appended to the pool if needed.
 */
#include "classfile/internal.h"

#include <stdlib.h>

static bool read_vt(struct meth *m, const uint8_t **pp, const uint8_t *end, struct vt *out)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return cf_meth_fail(m, "truncated StackMapTable");
    unsigned tag = *p++;
    if (tag > VT_UNINIT)
        return cf_meth_fail(m, "bad verification type %u in StackMapTable", tag);
    *out = vt_simple((int)tag);
    if (tag == VT_OBJ || tag == VT_UNINIT) {
        if (end - p < 2)
            return cf_meth_fail(m, "truncated StackMapTable");
        out->u = be16(p);
        p += 2;
        if (tag == VT_OBJ) {
            const uint8_t *s;
            uint16_t n;
            if (!cp_class_name(m->c, out->u, &s, &n))
                return cf_meth_fail(m, "StackMapTable names constant %u, not a class", out->u);
            out->s = s;
            out->n = n;
        } else if (out->u >= m->len || m->code[out->u] != 0xbb || !at_insn(m, out->u, false)) {
            return cf_meth_fail(m, "StackMapTable: uninitialized(%u) is not a new", out->u);
        }
    }
    *pp = p;
    return true;
}

bool cf_decode_smt(struct meth *m)
{
    m->nfr = 0;
    m->nfv = 0;
    const uint8_t *p = m->smt, *end = m->smt + m->smt_len;
    if (end - p < 2)
        return cf_meth_fail(m, "truncated StackMapTable");
    unsigned count = be16(p);
    p += 2;
    /* previous locals: start with the initial frame */
    const struct vt *pl = m->init;
    size_t pnl = m->ninit;
    int64_t prev = -1;
    for (unsigned k = 0; k < count; k++) {
        if (p >= end)
            return cf_meth_fail(m, "truncated StackMapTable");
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
            return cf_meth_fail(m, "reserved StackMapTable frame type %u", type);
        } else {
            if (end - p < 2)
                return cf_meth_fail(m, "truncated StackMapTable");
            delta = be16(p);
            p += 2;
            if (type == 247) {
                ns = 1;
                if (!read_vt(m, &p, end, &stack1))
                    return false;
            } else if (type < 251) {
                if (pnl < 251 - type)
                    return cf_meth_fail(m, "StackMapTable chops more locals than there are");
                keep = nl = pnl - (251 - type);
            } else if (type == 251) {
            } else if (type < 255) {
                app = type - 251;
                nl = pnl + app;
            } else {
                if (end - p < 2)
                    return cf_meth_fail(m, "truncated StackMapTable");
                nl = be16(p);
                p += 2;
                keep = 0;
                app = nl;
            }
        }
        /* entries for this frame: locals [kept from prev | read], stack */
        if (!GROW(m->fv, m->fv_cap, m->nfv + nl + 1))
            return cf_meth_fail(m, "out of memory");
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
                return cf_meth_fail(m, "truncated StackMapTable");
            ns = be16(p);
            p += 2;
            if (!GROW(m->fv, m->fv_cap, m->nfv + ns + 1))
                return cf_meth_fail(m, "out of memory");
            for (size_t j = 0; j < ns; j++)
                if (!read_vt(m, &p, end, &m->fv[m->nfv + j]))
                    return false;
        } else if (ns == 1) {
            if (!GROW(m->fv, m->fv_cap, m->nfv + 1))
                return cf_meth_fail(m, "out of memory");
            m->fv[m->nfv] = stack1;
        }
        f.s = (uint32_t)m->nfv;
        f.ns = (uint32_t)ns;
        m->nfv += ns;
        int64_t off = prev + (int64_t)delta + 1; /* the first: delta itself */
        if (off >= m->len || !at_insn(m, (uint32_t)off, false))
            return cf_meth_fail(m, "StackMapTable frame at %lld is not an instruction", (long long)off);
        f.bci = (uint32_t)off;
        prev = off;
        if (!GROW(m->fr, m->fr_cap, m->nfr + 1))
            return cf_meth_fail(m, "out of memory");
        m->fr[m->nfr++] = f;
        pl = m->fv + f.l;
        pnl = f.nl;
    }
    if (p != end)
        return cf_meth_fail(m, "%zu extra bytes in StackMapTable", (size_t)(end - p));
    return true;
}

long cf_frame_at(const struct meth *m, uint32_t bci)
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
bool cf_frame_after(struct meth *m, size_t k)
{
    size_t nl = m->max_locals, ns = m->max_stack;
    struct vt *slots = malloc((nl + ns + 1) * sizeof *slots);
    if (!slots)
        return cf_meth_fail(m, "out of memory");
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
        ok = cf_entries_to_slots(m, m->init, m->ninit, st.l, nl, &cnt);
        st.uthis = m->uthis_start;
    } else {
        const struct frame *f = &m->fr[lo - 1];
        from = (size_t)m->idx[f->bci];
        ok = cf_entries_to_slots(m, m->fv + f->l, f->nl, st.l, nl, &cnt) &&
             cf_entries_to_slots(m, m->fv + f->s, f->ns, st.s, ns, &st.sp);
        for (uint32_t j = 0; ok && j < f->nl; j++)
            if (m->fv[f->l + j].tag == VT_UTHIS)
                st.uthis = true;
    }
    for (size_t j = from; ok && j <= k; j++) {
        unsigned op = m->ins[j].op;
        if (j < k && (op == 0xa7 || op == 0xc8 || op_is_return(op) || op == 0xbf ||
                      (m->ins[j].f & I_SWITCH) || op == 0xa8 || op == 0xc9 || op == 0xa9)) {
            ok = cf_meth_fail(m, "no frame after the unconditional branch at %u", m->ins[j].bci);
            break;
        }
        ok = cf_sim(m, &st, j);
    }
    if (ok) {
        /* slots -> entries; trailing Tops of the locals are implicit */
        size_t nloc = nl;
        while (nloc > 0 && st.l[nloc - 1].tag == VT_TOP &&
               !(nloc >= 2 && (st.l[nloc - 2].tag == VT_LONG || st.l[nloc - 2].tag == VT_DOUBLE)))
            nloc--;
        if (!GROW(m->fv, m->fv_cap, m->nfv + nloc + st.sp + 1) ||
            !GROW(m->xfr, m->xfr_cap, m->nxfr + 1)) {
            ok = cf_meth_fail(m, "out of memory");
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

const struct vt cf_vt_throwable = {VT_OBJ, 0, 19, (const uint8_t *)"java/lang/Throwable"};

static bool write_vt(struct meth *m, struct buf *b, const struct vt *v)
{
    b_u1(b, v->tag);
    if (v->tag == VT_OBJ) {
        uint16_t ci = v->u;
        if (!ci && v->s == cf_vt_throwable.s) {
            /* every handler frame names it: look it up once per class */
            if (!m->c->throwable_idx)
                m->c->throwable_idx = cf_pool_class(m->c, v->s, v->n);
            ci = m->c->throwable_idx;
        } else if (!ci) {
            ci = cf_pool_class(m->c, v->s, v->n);
        }
        if (!ci)
            return cf_meth_fail(m, "constant pool full");
        b_u2(b, ci);
    } else if (v->tag == VT_UNINIT) {
        b_u2(b, m->ins[m->idx[v->u]].ipos);
    } else if (v->tag > VT_UNINIT) {
        return cf_meth_fail(m, "returnAddress in a frame");
    }
    return true;
}

bool cf_encode_frames(struct meth *m, struct buf *b, const struct vt *init, size_t ninit,
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

/* Sort frames by bci (insertion: few added frames). */
static int frame_cmp(const void *a, const void *b)
{
    uint32_t x = ((const struct frame *)a)->bci, y = ((const struct frame *)b)->bci;
    return x < y ? -1 : x > y;
}

/* The StackMapTable payload: original frames and those added for widened ifs, at their new
 * offsets, the catch-all handler's frame (no locals, [Throwable]) and, in a constructor, the
 * pre-super handler's ([uninitializedThis], [Throwable]). */
bool cf_write_smt(struct meth *m, struct buf *out, uint32_t hstart, bool probes)
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
            ef[nall].s = &cf_vt_throwable;
            ef[nall].ns = 1;
            nall++;
            if (m->presuper) {
                static const struct vt vt_uthis = {VT_UTHIS, 0, 0, NULL};
                ef[nall].off = hstart + m->mid_size + 4u;
                ef[nall].l = &vt_uthis;
                ef[nall].nl = 1;
                ef[nall].s = &cf_vt_throwable;
                ef[nall].ns = 1;
                nall++;
            }
        }
        ok = cf_encode_frames(m, out, m->init, m->ninit, ef, nall);
    } else {
        cf_meth_fail(m, "out of memory");
    }
    free(all);
    free(ef);
    return ok;
}
