/* code.c — a method's Code attribute: its parts, and its bytecode as instructions.
 *
 * cf_parse_code splits the attribute (max_stack, max_locals, code, exception table, the
 * attributes that follow, the StackMapTable among them); cf_decode_code turns the code into
 * an array of instructions with their lengths, branch and switch targets (checked to land
 * on an instruction) and a bci -> instruction index, which every later step uses to map
 * an original offset to its new place. struct meth is reused from method to method, so
 * its arrays grow to the largest method and are freed once per class; what the simulator
 * allocates per method (array type names, work list states) comes from an arena that
 * cf_meth_reset drops whole.
 */
#include "classfile/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const int8_t cf_op_lens[256] = {
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

bool cf_meth_fail(struct meth *m, const char *fmt, ...)
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

void *cf_meth_alloc(struct meth *m, size_t n)
{
    struct arena_blk *b = m->arena;
    n = (n + 7) & ~(size_t)7;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4000 ? n : 4000;
        b = malloc(sizeof *b + cap);
        if (!b) {
            cf_meth_fail(m, "out of memory");
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

bool cf_parse_code(struct meth *m, const uint8_t *a, uint32_t alen)
{
    if (alen < 12)
        return cf_meth_fail(m, "truncated Code attribute");
    m->max_stack = be16(a);
    m->max_locals = be16(a + 2);
    uint32_t cl = be32(a + 4);
    if (cl == 0 || cl > 65535 || (uint64_t)cl + 12 > alen)
        return cf_meth_fail(m, "bad code_length %u", cl);
    m->code = a + 8;
    m->len = cl;
    const uint8_t *p = a + 8 + cl, *end = a + alen;
    if (end - p < 2)
        return cf_meth_fail(m, "truncated exception table");
    unsigned nex = be16(p);
    p += 2;
    if ((size_t)(end - p) < (size_t)nex * 8 + 2)
        return cf_meth_fail(m, "truncated exception table");
    if (!GROW(m->ex, m->ex_cap, (size_t)nex + 1))
        return cf_meth_fail(m, "out of memory");
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
            return cf_meth_fail(m, "truncated Code attributes");
        uint32_t l = be32(p + 2);
        if ((size_t)(end - p - 6) < l)
            return cf_meth_fail(m, "truncated Code attributes");
        if (cf_utf8_is(m->c, be16(p), "StackMapTable")) {
            if (m->smt)
                return cf_meth_fail(m, "two StackMapTable attributes");
            m->smt = p + 6;
            m->smt_len = l;
        }
        p += 6 + l;
    }
    if (p != end)
        return cf_meth_fail(m, "Code attribute length mismatch");
    return true;
}

bool cf_decode_code(struct meth *m)
{
    const uint8_t *code = m->code;
    uint32_t len = m->len;
    /* at most one instruction per byte, plus the sentinel */
    if (!GROW(m->idx, m->idx_cap, (size_t)len + 1) || !GROW(m->ins, m->ins_cap, (size_t)len + 2))
        return cf_meth_fail(m, "out of memory");
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
            return cf_meth_fail(m, "invalid opcode 0x%02x at %u", op, bci);
        if (op == 0xaa || op == 0xab) {
            uint32_t p = bci + 1 + sw_pad(bci);
            if ((uint64_t)p + (op == 0xaa ? 12 : 8) > len)
                return cf_meth_fail(m, "truncated switch at %u", bci);
            int32_t def = (int32_t)be32(code + p);
            uint64_t cnt, each;
            if (op == 0xaa) {
                int32_t lo = (int32_t)be32(code + p + 4), hi = (int32_t)be32(code + p + 8);
                if (lo > hi)
                    return cf_meth_fail(m, "tableswitch at %u: low %d > high %d", bci, lo, hi);
                cnt = (uint64_t)((int64_t)hi - lo + 1);
                each = 4;
                p += 12;
            } else {
                int32_t np = (int32_t)be32(code + p + 4);
                if (np < 0)
                    return cf_meth_fail(m, "lookupswitch at %u: npairs %d", bci, np);
                cnt = (uint64_t)np;
                each = 8;
                p += 8;
            }
            if ((uint64_t)p + cnt * each > len)
                return cf_meth_fail(m, "truncated switch at %u", bci);
            l = (int)(p + cnt * each - bci);
            if (!GROW(m->swt, m->swt_cap, m->nswt + cnt + 1))
                return cf_meth_fail(m, "out of memory");
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
                return cf_meth_fail(m, "truncated wide at %u", bci);
            unsigned op2 = code[bci + 1];
            if (op2 == 0x84)
                l = 6;
            else if ((op2 >= 0x15 && op2 <= 0x19) || (op2 >= 0x36 && op2 <= 0x3a) || op2 == 0xa9)
                l = 4;
            else
                return cf_meth_fail(m, "wide with opcode 0x%02x at %u", op2, bci);
            in->f = I_WIDE_FORM;
            if (op2 == 0xa9)
                m->has_jsr = true;
        }
        if ((uint64_t)bci + (uint64_t)l > len)
            return cf_meth_fail(m, "truncated instruction at %u", bci);
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
            return cf_meth_fail(m, "branch at %u to %d is not an instruction", in->bci, in->target);
        if (in->f & I_SWITCH)
            for (uint32_t j = 0; j < in->nsw; j++) {
                int32_t t = m->swt[in->sw + j];
                if (t < 0 || (uint32_t)t >= len || m->idx[t] < 0)
                    return cf_meth_fail(m, "switch at %u to %d is not an instruction", in->bci, t);
            }
    }
    return true;
}

void cf_meth_free(struct meth *m)
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
void cf_meth_reset(struct meth *m)
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
