/* emit.c — probes and instructions: their sizes, the layout, and the bytes.
 *
 * Each original instruction becomes a block: [instruction probe][exit probe before a
 * return][superCall before a constructor's super(...)] instruction [ctorReady after it].
 * The size functions here and the emitters below must agree byte for byte: cf_layout
 * places every block from the sizes (iterated by rewrite.c until no branch needs
 * widening), then cf_emit_code writes them, with branches and switches retargeted to the
 * start of their target's block so that a jump runs the probe of the instruction it
 * reaches. rewrite.c checks the emitted length against the layout.
 */
#include "classfile/internal.h"

unsigned cf_push_int_size(int32_t v, uint16_t idx)
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
static unsigned bci_size(uint32_t bci) { return bci <= 32767 ? cf_push_int_size((int32_t)bci, 0) : 7; }
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

enum cf_hook cf_insn_hook(unsigned op)
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
bool cf_has_ctor_probes(const struct meth *m)
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
    return cf_has_ctor_probes(m) && in == &m->ins[m->init_k];
}
static unsigned probe_size(const struct meth *m, const struct insn *in)
{
    unsigned s = 0;
    if (m->flags & CF_INSN_PROBES)
        s += (insn_dup(cf_insn_hook(in->op)) ? 1 : 0) + m->mid_size + bci_size(in->bci) + 3;
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
uint64_t cf_layout(struct meth *m)
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
    enum cf_hook h = cf_insn_hook(in->op);
    unsigned d = insn_dup(h);
    if (d)
        b_u1(b, d);
    emit_int(b, m->id, m->mid_idx);
    emit_bci(b, in->bci);
    b_u1(b, 0xb8);
    b_u2(b, cf_hook_ref(m->c, h));
}
void cf_emit_exit_hook(struct meth *m, struct buf *b, enum cf_hook h)
{
    emit_int(b, m->id, m->mid_idx);
    b_u1(b, 0xb8);
    b_u2(b, cf_hook_ref(m->c, h));
}
void cf_emit_exit(struct meth *m, struct buf *b) { cf_emit_exit_hook(m, b, CF_HOOK_EXIT); }
enum cf_hook cf_entry_hook(const struct meth *m)
{
    return entry_passes_this(m) ? CF_HOOK_ENTER_OBJ
           : cf_has_ctor_probes(m) ? CF_HOOK_ENTER_CTOR : CF_HOOK_ENTER;
}
void cf_emit_entry(struct meth *m, struct buf *b)
{
    if (entry_passes_this(m))
        b_u1(b, 0x2a); /* aload_0 */
    emit_int(b, m->id, m->mid_idx);
    b_u1(b, 0xb8);
    b_u2(b, cf_hook_ref(m->c, cf_entry_hook(m)));
}

void cf_emit_code(struct meth *m, struct buf *b)
{
    if (m->flags & CF_METHOD_PROBES)
        cf_emit_entry(m, b);
    for (size_t k = 0; k < m->n; k++) {
        const struct insn *in = &m->ins[k];
        const uint8_t *p = m->code + in->bci;
        if (m->flags & CF_INSN_PROBES)
            emit_insn_probe(m, b, in);
        if ((m->flags & CF_METHOD_PROBES) && op_is_return(in->op))
            cf_emit_exit(m, b);
        if (is_init_call(m, in))
            cf_emit_exit_hook(m, b, CF_HOOK_SUPER_CALL);
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
            cf_emit_exit_hook(m, b, CF_HOOK_CTOR_READY);
        }
    }
}
