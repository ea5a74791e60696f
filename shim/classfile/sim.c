/* sim.c — verification types from descriptors, and a simulator of the verifier's types.
 *
 * The rewriter needs the verifier's view of a method's locals and stack in two places: a
 * widened `if` needs a StackMapTable frame at its fall-through (frames.c simulates from the
 * nearest frame), and a constructor's catch-all may cover only the code where `this` is
 * initialized (cf_cover_init). cf_sim applies one instruction's effect on a struct state,
 * following the type checker's rules closely enough for code that verifies: the values
 * are the types that frames name (class names are pointers into the input, static strings
 * or the method's arena, never into the appended pool, which moves). cf_cover_init first
 * tries the straight-line shape javac emits, then a depth-first walk over a work list.
 */
#include "classfile/internal.h"

#include <stdlib.h>

/* One field type at *p (not 'V'): its verification type; *slots = 1 or 2. */
bool cf_desc_type(const uint8_t **pp, const uint8_t *end, struct vt *out, int *slots)
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
bool cf_init_frame(struct meth *m)
{
    struct cf *c = m->c;
    m->ninit = 0;
    const uint8_t *p = m->desc, *end = m->desc + m->desc_n;
    if (p >= end || *p != '(')
        return cf_meth_fail(m, "bad method descriptor");
    p++;
    if (!GROW(m->init, m->init_cap, (size_t)m->desc_n + 1))
        return cf_meth_fail(m, "out of memory");
    if (!m->is_static)
        m->init[m->ninit++] = m->uthis_start ? vt_simple(VT_UTHIS)
                                             : vt_obj(c->this_name, c->this_len, c->this_class);
    while (p < end && *p != ')') {
        struct vt v;
        int slots;
        if (!cf_desc_type(&p, end, &v, &slots))
            return cf_meth_fail(m, "bad method descriptor");
        m->init[m->ninit++] = v;
    }
    if (p >= end)
        return cf_meth_fail(m, "bad method descriptor");
    return true;
}

/* Entries -> slots: long/double take two slots, the second Top. */
bool cf_entries_to_slots(struct meth *m, const struct vt *e, size_t ne, struct vt *slots,
                         size_t cap, uint32_t *n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        int two = e[i].tag == VT_LONG || e[i].tag == VT_DOUBLE;
        if (k + 1u + (unsigned)two > cap)
            return cf_meth_fail(m, "frame larger than max_locals/max_stack");
        slots[k++] = e[i];
        if (two)
            slots[k++] = vt_simple(VT_TOP);
    }
    *n = k;
    return true;
}

static bool st_push(struct meth *m, struct state *st, struct vt v)
{
    if (st->sp >= m->max_stack)
        return cf_meth_fail(m, "operand stack overflow");
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
        return cf_meth_fail(m, "operand stack underflow");
    st->sp -= k;
    return true;
}
static bool st_store(struct meth *m, struct state *st, uint32_t n, struct vt v, bool two)
{
    if ((uint64_t)n + (two ? 2 : 1) > m->max_locals)
        return cf_meth_fail(m, "local %u beyond max_locals", n);
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
bool cf_sim(struct meth *m, struct state *st, size_t k)
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
            if (!cf_cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) || !cf_desc_type(&ds, ds + dn, &v, &slots))
                return cf_meth_fail(m, "bad Dynamic constant at %u", in->bci);
            if (!st_push(m, st, v))
                return false;
            return slots == 2 ? st_push(m, st, vt_simple(VT_TOP)) : true;
        }
        default:
            return cf_meth_fail(m, "ldc of constant %u (tag %d) at %u", ci, t, in->bci);
        }
    }
    case 0x19: case 0x2a: case 0x2b: case 0x2c: case 0x2d: { /* aload */
        unsigned n = op == 0x19 ? var : op - 0x2a;
        if (n >= m->max_locals)
            return cf_meth_fail(m, "local %u beyond max_locals", n);
        return st_push(m, st, st->l[n]);
    }
    case 0x32: { /* aaload: the array's component type */
        if (st->sp < 2)
            return cf_meth_fail(m, "operand stack underflow");
        struct vt a = st->s[st->sp - 2], r = vt_simple(VT_NULL);
        if (a.tag == VT_OBJ && a.n >= 2 && a.s[0] == '[') {
            if (a.s[1] == 'L' && a.n >= 4)
                r = vt_obj(a.s + 2, (size_t)a.n - 3, 0);
            else if (a.s[1] == '[')
                r = vt_obj(a.s + 1, (size_t)a.n - 1, 0);
            else
                return cf_meth_fail(m, "aaload on %.*s at %u", (int)a.n, (const char *)a.s, in->bci);
        } else if (a.tag != VT_NULL) {
            return cf_meth_fail(m, "aaload on a non-array at %u", in->bci);
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
            return cf_meth_fail(m, "operand stack underflow");
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
        if (!cf_cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) || tg != T_FIELD ||
            !cf_desc_type(&ds, ds + dn, &v, &slots))
            return cf_meth_fail(m, "bad field reference %u at %u", ci, in->bci);
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
        if (!cf_cp_member(c, ci, &tg, &cls, &nm, &nn, &ds, &dn) ||
            (op == 0xba) != (tg == T_INDY) || tg == T_FIELD || tg == T_DYNAMIC)
            return cf_meth_fail(m, "bad method reference %u at %u", ci, in->bci);
        const uint8_t *d = ds, *end = ds + dn;
        if (d >= end || *d++ != '(')
            return cf_meth_fail(m, "bad method descriptor at %u", in->bci);
        uint32_t args = 0;
        while (d < end && *d != ')') {
            if (!cf_desc_type(&d, end, &v, &slots))
                return cf_meth_fail(m, "bad method descriptor at %u", in->bci);
            args += (uint32_t)slots;
        }
        if (d >= end)
            return cf_meth_fail(m, "bad method descriptor at %u", in->bci);
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
                        return cf_meth_fail(m, "uninitialized(%u) is not a new at %u", nb, in->bci);
                    st_init(m, st, recv, vt_obj(cn, cnn, be16(m->code + nb + 1)));
                } else {
                    return cf_meth_fail(m, "invokespecial <init> on an initialized value at %u", in->bci);
                }
            }
        }
        if (d < end && *d == 'V')
            return true;
        if (!cf_desc_type(&d, end, &v, &slots))
            return cf_meth_fail(m, "bad method descriptor at %u", in->bci);
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
            return cf_meth_fail(m, "newarray type %u at %u", t, in->bci);
        return st_pop(m, st, 1) && st_push(m, st, vt_obj(S(newarray_names[t]), 2, 0));
    }
    case 0xbd: { /* anewarray: "[" + descriptor of the component */
        const uint8_t *cn;
        uint16_t cnn;
        if (!cp_class_name(c, be16(p + 1), &cn, &cnn) || cnn == 0 || cnn > 65000)
            return cf_meth_fail(m, "bad class at %u", in->bci);
        uint8_t *s = cf_meth_alloc(m, (size_t)cnn + 3);
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
            return cf_meth_fail(m, "bad class at %u", in->bci);
        return st_pop(m, st, 1) && st_push(m, st, vt_obj(cn, cnn, be16(p + 1)));
    }
    case 0xc5: { /* multianewarray */
        const uint8_t *cn;
        uint16_t cnn;
        if (!cp_class_name(c, be16(p + 1), &cn, &cnn) || p[3] == 0)
            return cf_meth_fail(m, "bad multianewarray at %u", in->bci);
        return st_pop(m, st, p[3]) && st_push(m, st, vt_obj(cn, cnn, be16(p + 1)));
    }
    default:
        if (wide)
            return cf_meth_fail(m, "bad wide instruction at %u", in->bci);
        return cf_meth_fail(m, "unexpected opcode 0x%02x at %u", op, in->bci);
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
    bool ok = cf_entries_to_slots(m, m->init, m->ninit, st.l, nl, &cnt);
    for (size_t k = 0; ok && k < m->n; k++) {
        unsigned op = m->ins[k].op;
        if ((m->ins[k].f & (I_BRANCH | I_SWITCH)) || op_is_return(op) || op == 0xbf || op == 0xa9) {
            ok = false;
            break;
        }
        if (!cf_sim(m, &st, k)) {
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

bool cf_cover_init(struct meth *m)
{
    size_t n = m->n, nl = m->max_locals, ns = m->max_stack;
    if (!GROW(m->cover, m->cover_cap, n + 1))
        return cf_meth_fail(m, "out of memory");
    memset(m->cover, 0, n + 1);
    if (cover_init_linear(m))
        return true;
    uint8_t *seen = calloc(n + 1, 1); /* bit 0 reached, bit 1 queued */
    struct work *wl = NULL;
    size_t nwl = 0, wlcap = 0;
    struct vt *tmpl = malloc((nl + ns + 1) * sizeof(struct vt));
    bool ok = seen && tmpl;
    if (!ok)
        cf_meth_fail(m, "out of memory");
    struct state st = {tmpl, tmpl + nl, 0, m->uthis_start};
    if (ok) {
        for (size_t k = 0; k < nl; k++)
            st.l[k] = vt_simple(VT_TOP);
        uint32_t nslot;
        ok = cf_entries_to_slots(m, m->init, m->ninit, st.l, nl, &nslot);
    }
    /* push (k, state) to the work list: a copy */
#define PUSH_WORK(K, ST, EXSTACK)                                                          \
    do {                                                                                   \
        if (!(seen[(K)] & 2)) {                                                            \
            seen[(K)] |= 2;                                                                \
            struct vt *cp = cf_meth_alloc(m, (nl + ns + 1) * sizeof(struct vt));                 \
            if (!cp || !GROW(wl, wlcap, nwl + 1)) {                                        \
                ok = cf_meth_fail(m, "out of memory");                                           \
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
                if (!cf_sim(m, &st, k)) {
                    ok = false;
                    break;
                }
                PUSH_WORK((size_t)m->idx[in->target], &st, false);
                st.sp = sp0;
                if (!ok)
                    break;
                if (++k >= n) {
                    ok = cf_meth_fail(m, "execution falls off the end of the code");
                    break;
                }
                continue;
            }
            if (!cf_sim(m, &st, k)) {
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
                ok = cf_meth_fail(m, "execution falls off the end of the code");
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
