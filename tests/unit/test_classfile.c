/* test_classfile.c — the class-file rewriter (classfile.c), no JVM.
 *
 * The output is checked by an independent reader written here: it parses the rewritten
 * class, walks each rewritten method expecting exactly the probe sequences the contract
 * describes (entry, per-instruction with the ORIGINAL bci, exit before returns, the catch-all
 * handler), and maps every original instruction to its new block; then it checks every
 * instruction against the original (same bytes, or a branch whose target is the new block of
 * the original target, widened where it must be; switch padding at the new position), the
 * exception table, LineNumberTable, LocalVariableTable and every StackMapTable frame.
 * Inputs: the classes the Makefile compiles (build/classes) and class files built here for
 * the cases javac does not make on demand (switch alignments, goto_w/jsr_w widening, wide,
 * every frame kind, constructors, natives, jsr/ret, huge offsets), plus malformed input:
 * every truncation of a real class and random corruptions.
 */
#include "classfile/classfile.h"
#include "unit.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define HOOK "test/Hook"

/* ---------------------------------------------------------------------------------------
 * Small helpers: a byte buffer, big-endian reads.
 */
struct bb {
    uint8_t *p;
    size_t n, cap;
};
static void bb_put(struct bb *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void u1(struct bb *b, unsigned v) { uint8_t x = (uint8_t)v; bb_put(b, &x, 1); }
static void u2(struct bb *b, unsigned v) { u1(b, v >> 8); u1(b, v); }
static void u4(struct bb *b, uint32_t v) { u2(b, v >> 16); u2(b, v & 0xffff); }
static uint16_t g2(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t g4(const uint8_t *p) { return (uint32_t)g2(p) << 16 | g2(p + 2); }

/* ---------------------------------------------------------------------------------------
 * Building class files. Pool layout (fixed, then per-method names appended):
 *   1 Utf8 T   2 Class T   3 Utf8 java/lang/Object   4 Class Object   5 Utf8 Code
 *   6 Utf8 StackMapTable   7 Utf8 LineNumberTable   8 Utf8 <init>   9 Utf8 ()V
 *   10 NameAndType <init>()V   11 Methodref Object.<init>()V   12 Utf8 java/lang/String
 *   13 Class String   14 Integer 123456   15 Utf8 LocalVariableTable   16 Utf8 x   17 Utf8 I
 *   18 Utf8 RuntimeVisibleAnnotations   19 Utf8 Ljdk/internal/vm/annotation/IntrinsicCandidate;
 */
struct mdef {
    uint16_t acc;
    const char *name, *desc;
    const uint8_t *code;
    size_t code_len;
    uint16_t max_stack, max_locals;
    const uint16_t *ex; /* 4 per entry */
    int nex;
    const uint8_t *smt; /* StackMapTable payload, or NULL */
    size_t smt_len;
    const uint16_t *lnt; /* pairs */
    int nlnt;
    bool lvt;           /* one LocalVariableTable entry: x, I, slot 0, whole code */
    bool intrinsic;     /* @IntrinsicCandidate */
};

static const char *class_name = "T";

static uint8_t *mkclass(unsigned major, uint16_t cls_acc, const struct mdef *m, int nm, size_t *len)
{
    struct bb b = {0};
    u4(&b, 0xCAFEBABE);
    u2(&b, 0);
    u2(&b, major);
    struct bb pool = {0};
    const char *const fixed[] = {class_name, NULL, "java/lang/Object", NULL, "Code", "StackMapTable",
                                        "LineNumberTable", "<init>", "()V"};
    for (int k = 0; k < 9; k++) {
        if (fixed[k]) {
            u1(&pool, 1);
            u2(&pool, (unsigned)strlen(fixed[k]));
            bb_put(&pool, fixed[k], strlen(fixed[k]));
        } else {
            u1(&pool, 7);
            u2(&pool, (unsigned)k); /* the Utf8 before it */
        }
    }
    u1(&pool, 12); u2(&pool, 8); u2(&pool, 9);            /* 10 */
    u1(&pool, 10); u2(&pool, 4); u2(&pool, 10);           /* 11 */
    u1(&pool, 1); u2(&pool, 16); bb_put(&pool, "java/lang/String", 16); /* 12 */
    u1(&pool, 7); u2(&pool, 12);                          /* 13 */
    u1(&pool, 3); u4(&pool, 123456);                      /* 14 */
    u1(&pool, 1); u2(&pool, 18); bb_put(&pool, "LocalVariableTable", 18); /* 15 */
    u1(&pool, 1); u2(&pool, 1); bb_put(&pool, "x", 1);    /* 16 */
    u1(&pool, 1); u2(&pool, 1); bb_put(&pool, "I", 1);    /* 17 */
    u1(&pool, 1); u2(&pool, 25); bb_put(&pool, "RuntimeVisibleAnnotations", 25); /* 18 */
    const char *ic = "Ljdk/internal/vm/annotation/IntrinsicCandidate;";
    u1(&pool, 1); u2(&pool, (unsigned)strlen(ic)); bb_put(&pool, ic, strlen(ic)); /* 19 */
    unsigned next = 20;
    unsigned names[64], descs[64];
    for (int k = 0; k < nm; k++) {
        names[k] = next++;
        u1(&pool, 1); u2(&pool, (unsigned)strlen(m[k].name)); bb_put(&pool, m[k].name, strlen(m[k].name));
        descs[k] = next++;
        u1(&pool, 1); u2(&pool, (unsigned)strlen(m[k].desc)); bb_put(&pool, m[k].desc, strlen(m[k].desc));
    }
    u2(&b, next);
    bb_put(&b, pool.p, pool.n);
    free(pool.p);
    u2(&b, cls_acc);
    u2(&b, 2);
    u2(&b, 4);
    u2(&b, 0);
    u2(&b, 0);
    u2(&b, (unsigned)nm);
    for (int k = 0; k < nm; k++) {
        u2(&b, m[k].acc);
        u2(&b, names[k]);
        u2(&b, descs[k]);
        u2(&b, (m[k].code ? 1u : 0u) + (m[k].intrinsic ? 1u : 0u));
        if (m[k].intrinsic) {
            u2(&b, 18);
            u4(&b, 6);
            u2(&b, 1);
            u2(&b, 19);
            u2(&b, 0);
        }
        if (!m[k].code)
            continue;
        struct bb a = {0};
        u2(&a, m[k].max_stack);
        u2(&a, m[k].max_locals);
        u4(&a, (uint32_t)m[k].code_len);
        bb_put(&a, m[k].code, m[k].code_len);
        u2(&a, (unsigned)m[k].nex);
        for (int j = 0; j < 4 * m[k].nex; j++)
            u2(&a, m[k].ex[j]);
        u2(&a, (m[k].smt ? 1u : 0u) + (m[k].nlnt ? 1u : 0u) + (m[k].lvt ? 1u : 0u));
        if (m[k].smt) {
            u2(&a, 6);
            u4(&a, (uint32_t)m[k].smt_len);
            bb_put(&a, m[k].smt, m[k].smt_len);
        }
        if (m[k].nlnt) {
            u2(&a, 7);
            u4(&a, 2 + 4 * (uint32_t)m[k].nlnt);
            u2(&a, (unsigned)m[k].nlnt);
            for (int j = 0; j < 2 * m[k].nlnt; j++)
                u2(&a, m[k].lnt[j]);
        }
        if (m[k].lvt) {
            u2(&a, 15);
            u4(&a, 12);
            u2(&a, 1);
            u2(&a, 0);
            u2(&a, (unsigned)m[k].code_len);
            u2(&a, 16);
            u2(&a, 17);
            u2(&a, 0);
        }
        u2(&b, 5);
        u4(&b, (uint32_t)a.n);
        bb_put(&b, a.p, a.n);
        free(a.p);
    }
    u2(&b, 0);
    *len = b.n;
    return b.p;
}

/* ---------------------------------------------------------------------------------------
 * Reading class files (independently of classfile.c).
 */
struct rm {
    uint16_t acc;
    const uint8_t *name, *desc;
    uint16_t nn, dn;
    const uint8_t *code;
    uint32_t code_len;
    uint16_t max_stack, max_locals;
    const uint8_t *ex;
    unsigned nex;
    const uint8_t *smt, *lnt, *lvt;
    uint32_t smt_len;
};
struct rc {
    const uint8_t *p;
    size_t n;
    uint16_t major;
    unsigned cpn;
    size_t cpo[70000];
    unsigned nm;
    struct rm m[200];
};

static bool utf8_at(const struct rc *c, unsigned i, const uint8_t **s, uint16_t *n)
{
    if (i == 0 || i >= c->cpn || !c->cpo[i] || c->p[c->cpo[i]] != 1)
        return false;
    *n = g2(c->p + c->cpo[i] + 1);
    *s = c->p + c->cpo[i] + 3;
    return true;
}
static bool utf8_eq(const struct rc *c, unsigned i, const char *s)
{
    const uint8_t *p;
    uint16_t n;
    return utf8_at(c, i, &p, &n) && n == strlen(s) && memcmp(p, s, n) == 0;
}
static bool eqs(const uint8_t *p, uint16_t n, const char *s) { return n == strlen(s) && memcmp(p, s, n) == 0; }

static bool rc_parse(struct rc *c, const uint8_t *p, size_t n)
{
    memset(c, 0, offsetof(struct rc, cpo));
    c->p = p;
    c->n = n;
    if (n < 10 || g4(p) != 0xCAFEBABE)
        return false;
    c->major = g2(p + 6);
    c->cpn = g2(p + 8);
    size_t o = 10;
    for (unsigned i = 1; i < c->cpn; i++) {
        if (o >= n)
            return false;
        c->cpo[i] = o;
        unsigned t = p[o];
        size_t l = t == 1 ? 3u + g2(p + o + 1) : (t == 5 || t == 6) ? 9 : (t == 7 || t == 8 || t == 16 || t == 19 || t == 20) ? 3 : t == 15 ? 4 : 5;
        if (t == 5 || t == 6)
            c->cpo[++i] = 0;
        o += l;
    }
    o += 6;
    o += 2 + 2u * g2(p + o);
    unsigned nf = g2(p + o);
    o += 2;
    for (unsigned k = 0; k < nf; k++) {
        unsigned na = g2(p + o + 6);
        o += 8;
        for (unsigned j = 0; j < na; j++)
            o += 6 + g4(p + o + 2);
    }
    c->nm = g2(p + o);
    o += 2;
    if (c->nm > 200)
        return false;
    for (unsigned k = 0; k < c->nm; k++) {
        struct rm *m = &c->m[k];
        memset(m, 0, sizeof *m);
        m->acc = g2(p + o);
        if (!utf8_at(c, g2(p + o + 2), &m->name, &m->nn) || !utf8_at(c, g2(p + o + 4), &m->desc, &m->dn))
            return false;
        unsigned na = g2(p + o + 6);
        o += 8;
        for (unsigned j = 0; j < na; j++) {
            uint32_t l = g4(p + o + 2);
            if (utf8_eq(c, g2(p + o), "Code")) {
                const uint8_t *a = p + o + 6;
                m->max_stack = g2(a);
                m->max_locals = g2(a + 2);
                m->code_len = g4(a + 4);
                m->code = a + 8;
                const uint8_t *e = m->code + m->code_len;
                m->nex = g2(e);
                m->ex = e + 2;
                const uint8_t *q = e + 2 + 8 * m->nex;
                unsigned nca = g2(q);
                q += 2;
                for (unsigned i = 0; i < nca; i++) {
                    uint32_t cl = g4(q + 2);
                    if (utf8_eq(c, g2(q), "StackMapTable")) {
                        m->smt = q + 6;
                        m->smt_len = cl;
                    } else if (utf8_eq(c, g2(q), "LineNumberTable")) {
                        m->lnt = q + 6;
                    } else if (utf8_eq(c, g2(q), "LocalVariableTable")) {
                        m->lvt = q + 6;
                    }
                    q += 6 + cl;
                }
            }
            o += 6 + l;
        }
    }
    return true;
}

/* Name of the hook a Methodref at index i calls, or NULL if it is not a hook. */
static const char *hook_of(const struct rc *c, unsigned i)
{
    if (i == 0 || i >= c->cpn || !c->cpo[i] || c->p[c->cpo[i]] != 10)
        return NULL;
    const uint8_t *e = c->p + c->cpo[i];
    unsigned cls = g2(e + 1), nat = g2(e + 3);
    if (!c->cpo[cls] || !utf8_eq(c, g2(c->p + c->cpo[cls] + 1), HOOK))
        return NULL;
    const uint8_t *s;
    uint16_t n;
    if (!utf8_at(c, g2(c->p + c->cpo[nat] + 1), &s, &n))
        return NULL;
    static char buf[32];
    snprintf(buf, sizeof buf, "%.*s", (int)n, (const char *)s);
    return buf;
}

static int insn_len(const uint8_t *code, uint32_t len, uint32_t pc)
{
    unsigned op = code[pc];
    if (op == 0xaa || op == 0xab) {
        uint32_t p = pc + 1 + ((4 - ((pc + 1) & 3)) & 3);
        if (p + 12 > len)
            return -1;
        if (op == 0xaa)
            return (int)(p + 12 + 4 * (g4(code + p + 8) - g4(code + p + 4) + 1) - pc);
        return (int)(p + 8 + 8 * g4(code + p + 4) - pc);
    }
    if (op == 0xc4)
        return code[pc + 1] == 0x84 ? 6 : 4;
    static const char *l3 = "\x11\x13\x14\x84\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xbb\xbd\xc0\xc1\xc6\xc7";
    if (op >= 0x99 && op <= 0xa8)
        return 3;
    if (op && strchr(l3, (int)op))
        return 3;
    if (op == 0x10 || op == 0x12 || (op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) ||
        op == 0xa9 || op == 0xbc)
        return 2;
    if (op == 0xb9 || op == 0xba || op == 0xc8 || op == 0xc9)
        return 5;
    if (op == 0xc5)
        return 4;
    return 1;
}

/* An int pushed at code[pc]: returns its length (0 if not a push); *v its value. Also
 * the 7-byte sipush 32767; sipush r; iadd form used for offsets above 32767. */
static int read_push(const struct rc *c, const uint8_t *code, uint32_t len, uint32_t pc, int32_t *v)
{
    unsigned op = code[pc];
    if (op >= 0x02 && op <= 0x08) {
        *v = (int32_t)op - 3;
        return 1;
    }
    if (op == 0x10) {
        *v = (int8_t)code[pc + 1];
        return 2;
    }
    if (op == 0x11) {
        *v = (int16_t)g2(code + pc + 1);
        if (*v == 32767 && pc + 7 <= len && code[pc + 3] == 0x11 && code[pc + 6] == 0x60) {
            *v += (int16_t)g2(code + pc + 4);
            return 7;
        }
        return 3;
    }
    if (op == 0x12 || op == 0x13) {
        unsigned i = op == 0x12 ? code[pc + 1] : g2(code + pc + 1);
        if (i >= c->cpn || !c->cpo[i] || c->p[c->cpo[i]] != 3)
            return 0;
        *v = (int32_t)g4(c->p + c->cpo[i] + 1);
        return op == 0x12 ? 2 : 3;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The checker: rewritten method vs original.
 */
struct frm {
    uint32_t off;
    int nl, ns;
    uint32_t l[300], s[300]; /* tag << 16 | data */
};
static int read_frames(const uint8_t *p, uint32_t len, const uint32_t *init, int ninit, struct frm *f, int max)
{
    const uint8_t *e = p + len;
    int n = g2(p);
    p += 2;
    int64_t prev = -1;
    const uint32_t *pl = init;
    int pnl = ninit;
    for (int k = 0; k < n && k < max; k++) {
        unsigned t = *p++;
        uint32_t d;
        struct frm *x = &f[k];
        x->ns = 0;
#define VT(dst) do { unsigned tg = *p++; dst = tg << 16; if (tg == 7 || tg == 8) { dst |= g2(p); p += 2; } } while (0)
        if (t < 64) {
            d = t;
            x->nl = pnl;
            memcpy(x->l, pl, sizeof *pl * (size_t)pnl);
        } else if (t < 128) {
            d = t - 64;
            x->nl = pnl;
            memcpy(x->l, pl, sizeof *pl * (size_t)pnl);
            x->ns = 1;
            VT(x->s[0]);
        } else {
            d = g2(p);
            p += 2;
            if (t == 247) {
                x->nl = pnl;
                memcpy(x->l, pl, sizeof *pl * (size_t)pnl);
                x->ns = 1;
                VT(x->s[0]);
            } else if (t < 252) {
                x->nl = pnl - (251 - (int)t);
                memcpy(x->l, pl, sizeof *pl * (size_t)x->nl);
            } else if (t < 255) {
                x->nl = pnl + (int)t - 251;
                memcpy(x->l, pl, sizeof *pl * (size_t)pnl);
                for (int j = pnl; j < x->nl; j++)
                    VT(x->l[j]);
            } else {
                x->nl = g2(p);
                p += 2;
                for (int j = 0; j < x->nl; j++)
                    VT(x->l[j]);
                x->ns = g2(p);
                p += 2;
                for (int j = 0; j < x->ns; j++)
                    VT(x->s[j]);
            }
        }
#undef VT
        x->off = (uint32_t)(prev + d + 1);
        prev = x->off;
        pl = x->l;
        pnl = x->nl;
    }
    if (p != e)
        return -1;
    return n;
}

struct expect {
    int32_t id;
    unsigned flags;      /* CF_METHOD_PROBES | CF_INSN_PROBES */
    bool is_static, is_init, obj_init;
    int widened;         /* out: branches widened */
    int added_frames;    /* out */
};

/* Is `op` an if whose operands the probe passes with dup/dup2? */
static const char *hook_for(unsigned op, int *dup)
{
    *dup = 0;
    if (op >= 0x99 && op <= 0x9e) { *dup = 0x59; return "insnInt"; }
    if (op >= 0x9f && op <= 0xa4) { *dup = 0x5c; return "insnInt2"; }
    if (op == 0xa5 || op == 0xa6) { *dup = 0x5c; return "insnObj2"; }
    if (op == 0xc6 || op == 0xc7) { *dup = 0x59; return "insnObj"; }
    if (op == 0xaa || op == 0xab) { *dup = 0x59; return "insnInt"; }
    return "insn";
}

static int fails_before;

/* Compare rewritten method nm (in class nc) with original om (in oc). */
static bool check_method(const struct rc *oc, const struct rm *om, const struct rc *nc, const struct rm *nmth,
                         struct expect *x)
{
    (void)oc;
    const uint8_t *O = om->code, *N = nmth->code;
    uint32_t OL = om->code_len, NL = nmth->code_len;
    bool mp = x->flags & CF_METHOD_PROBES, ip = x->flags & CF_INSN_PROBES;
    int32_t v;
    int k;
    uint32_t *start = calloc(OL + 1, sizeof *start), *ipos = calloc(OL + 1, sizeof *ipos);
    bool ok = false;
    uint32_t pc = 0;
    /* entry probe */
    /* A constructor with one super(...)/this(...) call enters through enterCtor and has
     * superCall just before that invokespecial and aload_0 + ctorReady just after it. */
    bool ctor_probes = false;
    int init_calls = 0;
    if (mp) {
        bool obj = !x->is_static && (!x->is_init || x->obj_init);
        if (obj) {
            CHECK(N[pc] == 0x2a, "entry: aload_0");
            pc++;
        }
        k = read_push(nc, N, NL, pc, &v);
        CHECK(k > 0 && v == x->id, "entry: mid %d, want %d", v, x->id);
        pc += (uint32_t)k;
        const char *eh = N[pc] == 0xb8 ? hook_of(nc, g2(N + pc + 1)) : NULL;
        ctor_probes = x->is_init && !obj && eh && strcmp(eh, "enterCtor") == 0;
        CHECK(eh && strcmp(eh, obj ? "enterObj" : ctor_probes ? "enterCtor" : "enter") == 0,
              "entry: invokestatic %s, got %s", obj ? "enterObj" : "enter(Ctor)", eh ? eh : "-");
        pc += 3;
    }
    /* pass 1: blocks */
    for (uint32_t o = 0; o < OL;) {
        int ol = insn_len(O, OL, o);
        unsigned op = O[o];
        start[o] = pc;
        if (ip) {
            int dup;
            const char *h = hook_for(op, &dup);
            if (dup) {
                CHECK(N[pc] == dup, "probe at %u: dup 0x%02x, got 0x%02x", o, dup, N[pc]);
                pc++;
            }
            k = read_push(nc, N, NL, pc, &v);
            CHECK(k > 0 && v == x->id, "probe at %u: mid", o);
            pc += (uint32_t)k;
            k = read_push(nc, N, NL, pc, &v);
            CHECK(k > 0 && v == (int32_t)o, "probe at %u: bci %d", o, v);
            pc += (uint32_t)k;
            const char *got = N[pc] == 0xb8 ? hook_of(nc, g2(N + pc + 1)) : NULL;
            CHECK(got && strcmp(got, h) == 0, "probe at %u: %s, got %s", o, h, got ? got : "-");
            pc += 3;
        }
        if (mp && op >= 0xac && op <= 0xb1) {
            k = read_push(nc, N, NL, pc, &v);
            CHECK(k > 0 && v == x->id, "exit probe at %u", o);
            pc += (uint32_t)k;
            const char *got = N[pc] == 0xb8 ? hook_of(nc, g2(N + pc + 1)) : NULL;
            CHECK(got && strcmp(got, "exit") == 0, "exit probe at %u", o);
            pc += 3;
        }
        bool init_call = false;
        if (ctor_probes && op == 0xb7) {
            k = read_push(nc, N, NL, pc, &v);
            const char *got = k > 0 && pc + (uint32_t)k < NL && N[pc + (uint32_t)k] == 0xb8
                                  ? hook_of(nc, g2(N + pc + (uint32_t)k + 1)) : NULL;
            if (got && strcmp(got, "superCall") == 0) {
                CHECK(v == x->id, "superCall at %u: mid", o);
                pc += (uint32_t)k + 3;
                init_call = true;
                init_calls++;
            }
        }
        ipos[o] = pc;
        if (pc >= NL)
            goto out;
        unsigned nop = N[pc];
        int nl = insn_len(N, NL, pc);
        bool is_if = (op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7;
        if (is_if && nop != op) {
            nl = 8; /* if<!cond> +8; goto_w */
        }
        pc += (uint32_t)nl;
        if (init_call) {
            CHECK(N[pc] == 0x2a, "ctorReady after %u: aload_0", o);
            pc++;
            k = read_push(nc, N, NL, pc, &v);
            CHECK(k > 0 && v == x->id, "ctorReady after %u: mid", o);
            pc += (uint32_t)k;
            const char *got = N[pc] == 0xb8 ? hook_of(nc, g2(N + pc + 1)) : NULL;
            CHECK(got && strcmp(got, "ctorReady") == 0, "ctorReady after %u, got %s", o, got ? got : "-");
            pc += 3;
        }
        o += (uint32_t)ol;
    }
    start[OL] = pc;
    uint32_t hstart = pc, hstart2 = 0;
    /* the catch-all; in a constructor it calls exitThrow, and a second handler with the same
     * code may follow: the one over the code before super(...) */
    for (int h = 0; mp && h < (x->is_init ? 2 : 1) && (h == 0 || pc < NL); h++) {
        if (h == 1)
            hstart2 = pc;
        const char *want = x->is_init ? "exitThrow" : "exit";
        k = read_push(nc, N, NL, pc, &v);
        CHECK(k > 0 && v == x->id, "handler %d: mid", h);
        pc += (uint32_t)k;
        CHECK(N[pc] == 0xb8 && hook_of(nc, g2(N + pc + 1)) && strcmp(hook_of(nc, g2(N + pc + 1)), want) == 0,
              "handler %d: %s", h, want);
        pc += 3;
        CHECK(N[pc] == 0xbf, "handler %d: athrow", h);
        pc++;
    }
    CHECK(pc == NL, "code length %u, walked %u", NL, pc);
    CHECK(init_calls == (ctor_probes ? 1 : 0), "superCall/ctorReady around %d invokespecials",
          init_calls);
    /* pass 2: instructions */
    for (uint32_t o = 0; o < OL; o += (uint32_t)insn_len(O, OL, o)) {
        unsigned op = O[o];
        uint32_t p = ipos[o];
        int ol = insn_len(O, OL, o);
        if ((op >= 0x99 && op <= 0xa8) || op == 0xc6 || op == 0xc7) {
            uint32_t t = (uint32_t)(o + (int16_t)g2(O + o + 1));
            if (N[p] == op) {
                CHECK(p + (int16_t)g2(N + p + 1) == start[t], "branch at %u: target", o);
            } else if (op == 0xa7 || op == 0xa8) {
                x->widened++;
                CHECK(N[p] == (op == 0xa7 ? 0xc8 : 0xc9), "goto/jsr at %u widened", o);
                CHECK(p + (int32_t)g4(N + p + 1) == start[t], "widened goto at %u: target", o);
            } else {
                x->widened++;
                unsigned inv = op >= 0xc6 ? op ^ 1u : ((op - 0x99) ^ 1u) + 0x99;
                CHECK(N[p] == inv && g2(N + p + 1) == 8 && N[p + 3] == 0xc8, "if at %u widened", o);
                CHECK(p + 3 + (int32_t)g4(N + p + 4) == start[t], "widened if at %u: target", o);
                CHECK(p + 8 == start[o + 3], "widened if at %u: falls through", o);
            }
        } else if (op == 0xc8 || op == 0xc9) {
            CHECK(N[p] == op && p + (int32_t)g4(N + p + 1) == start[o + (int32_t)g4(O + o + 1)],
                  "goto_w at %u", o);
        } else if (op == 0xaa || op == 0xab) {
            CHECK(N[p] == op, "switch at %u", o);
            uint32_t oq = o + 1 + ((4 - ((o + 1) & 3)) & 3), nq = p + 1 + ((4 - ((p + 1) & 3)) & 3);
            CHECK(nq % 4 == 0, "switch at %u: operands aligned", o);
            for (uint32_t z = p + 1; z < nq; z++)
                CHECK(N[z] == 0, "switch at %u: padding", o);
            CHECK(p + (int32_t)g4(N + nq) == start[o + (int32_t)g4(O + oq)], "switch at %u: default", o);
            uint32_t n = op == 0xaa ? g4(O + oq + 8) - g4(O + oq + 4) + 1 : g4(O + oq + 4);
            CHECK(memcmp(O + oq + 4, N + nq + 4, op == 0xaa ? 8 : 4) == 0, "switch at %u: bounds", o);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t of = op == 0xaa ? oq + 12 + 4 * j : oq + 12 + 8 * j;
                uint32_t nf = op == 0xaa ? nq + 12 + 4 * j : nq + 12 + 8 * j;
                if (op == 0xab)
                    CHECK(g4(O + of - 4) == g4(N + nf - 4), "switch at %u: key %u", o, j);
                CHECK(p + (int32_t)g4(N + nf) == start[o + (int32_t)g4(O + of)], "switch at %u: case %u", o, j);
            }
        } else {
            CHECK(memcmp(O + o, N + p, (size_t)ol) == 0, "instruction at %u (0x%02x) copied", o, op);
        }
    }
    /* exception table */
    CHECK(nmth->nex >= om->nex + (mp ? 1u : 0u), "exception table: %u entries", nmth->nex);
    for (unsigned e = 0; e < om->nex; e++) {
        const uint8_t *a = om->ex + 8 * e, *b = nmth->ex + 8 * e;
        CHECK(g2(b) == start[g2(a)] && g2(b + 2) == start[g2(a + 2)] && g2(b + 4) == start[g2(a + 4)] &&
                  g2(b + 6) == g2(a + 6),
              "exception entry %u relocated", e);
    }
    if (mp) {
        for (unsigned e = om->nex; e < nmth->nex; e++) {
            const uint8_t *b = nmth->ex + 8 * e;
            CHECK((g2(b + 4) == hstart || (hstart2 && g2(b + 4) == hstart2)) && g2(b + 6) == 0 &&
                      g2(b + 2) <= hstart && g2(b) >= start[0],
                  "catch-all entry %u", e);
        }
        if (!x->is_init)
            CHECK(nmth->nex == om->nex + 1 && g2(nmth->ex + 8 * om->nex) == start[0] &&
                      g2(nmth->ex + 8 * om->nex + 2) == hstart,
                  "one catch-all over the whole body");
    }
    /* LineNumberTable, LocalVariableTable */
    if (om->lnt) {
        CHECK(nmth->lnt && g2(nmth->lnt) == g2(om->lnt), "LineNumberTable kept");
        for (unsigned e = 0; nmth->lnt && e < g2(om->lnt); e++) {
            uint16_t s = g2(om->lnt + 2 + 4 * e);
            CHECK(g2(nmth->lnt + 2 + 4 * e) == (s ? start[s] : 0) &&
                      g2(nmth->lnt + 4 + 4 * e) == g2(om->lnt + 4 + 4 * e),
                  "line entry %u", e);
        }
    }
    if (om->lvt) {
        CHECK(nmth->lvt && g2(nmth->lvt) == g2(om->lvt), "LocalVariableTable kept");
        for (unsigned e = 0; nmth->lvt && e < g2(om->lvt); e++) {
            const uint8_t *a = om->lvt + 2 + 10 * e, *b = nmth->lvt + 2 + 10 * e;
            uint16_t s = g2(a), en = (uint16_t)(s + g2(a + 2));
            uint32_t ns = s ? start[s] : 0;
            CHECK(g2(b) == ns && g2(b + 2) == start[en] - ns && memcmp(a + 4, b + 4, 6) == 0,
                  "local variable entry %u", e);
        }
    }
    /* StackMapTable: every original frame at its block, same content (Uninitialized
     * offsets at the new `new`), then added frames for widened ifs, the handler's last */
    bool branches = false;
    for (uint32_t o = 0; o < OL; o += (uint32_t)insn_len(O, OL, o))
        branches |= (O[o] >= 0x99 && O[o] <= 0xab) || O[o] == 0xc6 || O[o] == 0xc7 || O[o] == 0xc8 || O[o] == 0xc9;
    /* version 50 without a table but with branches is checked by the old verifier: no table
     * is made up for it */
    if (nc->major == 50 && !om->smt && branches)
        CHECK(nmth->smt == NULL, "version 50, branches, no StackMapTable: none added");
    else if (nc->major >= 50 && (om->smt || mp)) {
        CHECK(nmth->smt != NULL, "StackMapTable present");
        static struct frm of[2000], nf[2000];
        uint32_t init[260] = {0};
        int ninit = 0;
        if (!x->is_static)
            init[ninit++] = x->is_init && !x->obj_init ? 6u << 16 : 7u << 16 | 2; /* T */
        for (const uint8_t *d = om->desc + 1; *d != ')';) {
            const uint8_t *s = d;
            while (*d == '[')
                d++;
            if (*d == 'L')
                while (*d != ';')
                    d++;
            d++;
            unsigned t = *s == 'I' || *s == 'Z' || *s == 'B' || *s == 'C' || *s == 'S' ? 1 : *s == 'F' ? 2 : *s == 'D' ? 3 : *s == 'J' ? 4 : 7;
            init[ninit++] = t << 16 | (t == 7 ? 0xffff : 0); /* class index unknown: compared loosely */
        }
        int no = om->smt ? read_frames(om->smt, om->smt_len, init, ninit, of, 2000) : 0;
        int nn = read_frames(nmth->smt, nmth->smt_len, init, ninit, nf, 2000);
        CHECK(no >= 0 && nn >= 0, "frames decode");
        int j = 0;
        for (int i = 0; i < no && j < nn; i++) {
            while (j < nn && nf[j].off < start[of[i].off]) {
                j++;
                x->added_frames++;
            }
            CHECK(j < nn && nf[j].off == start[of[i].off], "frame %d at %u -> %u", i, of[i].off, start[of[i].off]);
            if (j >= nn)
                break;
            CHECK(nf[j].nl == of[i].nl && nf[j].ns == of[i].ns, "frame %d: sizes", i);
            for (int z = 0; z < of[i].nl && z < nf[j].nl; z++) {
                uint32_t a = of[i].l[z], b = nf[j].l[z];
                if (a >> 16 == 8)
                    a = 8u << 16 | ipos[a & 0xffff];
                CHECK(a == b || ((a & 0xffff) == 0xffff && a >> 16 == b >> 16), "frame %d: local %d", i, z);
            }
            for (int z = 0; z < of[i].ns && z < nf[j].ns; z++) {
                uint32_t a = of[i].s[z], b = nf[j].s[z];
                if (a >> 16 == 8)
                    a = 8u << 16 | ipos[a & 0xffff];
                CHECK(a == b, "frame %d: stack %d", i, z);
            }
            j++;
        }
        x->added_frames += nn - j - (mp ? 1 : 0) - (hstart2 ? 1 : 0);
        if (mp) {
            int h = nn - 1 - (hstart2 ? 1 : 0);
            CHECK(h >= 0 && nf[h].off == hstart && nf[h].nl == 0 && nf[h].ns == 1 && nf[h].s[0] >> 16 == 7,
                  "handler frame: no locals, [Throwable]");
        }
        if (hstart2) {
            CHECK(nn >= 2 && nf[nn - 1].off == hstart2 && nf[nn - 1].nl == 1 && nf[nn - 1].l[0] >> 16 == 6 &&
                      nf[nn - 1].ns == 1 && nf[nn - 1].s[0] >> 16 == 7,
                  "pre-super handler frame: [uninitializedThis], [Throwable]");
        }
    }
    ok = true;
out:
    free(start);
    free(ipos);
    return ok && unit_failed == fails_before;
}

/* ---------------------------------------------------------------------------------------
 * Running the rewriter.
 */
struct run {
    int32_t base;        /* ids: base + index */
    int skip_index;      /* -1 or the method to leave alone */
    int nskipped, ndone;
    char why[256];
    int32_t done_ids[256];
    uint32_t done_len[256];
};
static int32_t id_cb(void *ctx, int index, const char *name, const char *desc, uint16_t acc)
{
    struct run *r = ctx;
    (void)name, (void)desc, (void)acc;
    return index == r->skip_index ? -1 : r->base + index;
}
static void done_cb(void *ctx, int index, int32_t id, const uint8_t *code, uint32_t len)
{
    struct run *r = ctx;
    (void)index, (void)code;
    if (r->ndone < 256) {
        r->done_ids[r->ndone] = id;
        r->done_len[r->ndone] = len;
    }
    r->ndone++;
}
static void skip_cb(void *ctx, int index, const char *name, const char *desc, const char *why)
{
    struct run *r = ctx;
    (void)index, (void)name, (void)desc;
    r->nskipped++;
    snprintf(r->why, sizeof r->why, "%s", why);
}

/* init_call: the last constructor's rewritten super(...) offset, and how many were reported */
static uint32_t init_call_bci, init_calls;
static void init_cb(void *ctx, int index, int32_t id, uint32_t bci)
{
    (void)ctx, (void)index, (void)id;
    init_call_bci = bci;
    init_calls++;
}

static int instr(const uint8_t *in, size_t n, unsigned flags, struct run *r, bool with_skip, uint8_t **out,
                 size_t *ol, char *err)
{
    struct cf_probe_spec s = {HOOK, flags, "$$p$$", id_cb, done_cb, with_skip ? skip_cb : NULL, init_cb, r};
    return cf_instrument(in, n, &s, out, ol, err, 256);
}

static struct rc RC_O, RC_N; /* large: static */

/* Rewrite a class with flags and check every method that has code. */
static void check_class(const char *what, const uint8_t *in, size_t n, unsigned flags, int32_t base,
                        int *widened, int *added)
{
    struct run r = {base, -1, 0, 0, "", {0}, {0}};
    uint8_t *out = NULL;
    size_t ol = 0;
    char err[256];
    int rc = instr(in, n, flags, &r, true, &out, &ol, err);
    CHECK(rc == 0 || rc == 1, "%s: rc %d (%s)", what, rc, err);
    if (rc != 0)
        return;
    CHECK(rc_parse(&RC_O, in, n) && rc_parse(&RC_N, out, ol), "%s: output parses", what);
    CHECK(RC_N.nm == RC_O.nm, "%s: same methods", what);
    for (unsigned k = 0; k < RC_O.nm && k < RC_N.nm; k++) {
        const struct rm *a = &RC_O.m[k], *b = &RC_N.m[k];
        if (!a->code)
            continue;
        fails_before = unit_failed;
        struct expect x = {base + (int32_t)k, flags & (CF_METHOD_PROBES | CF_INSN_PROBES), (a->acc & 8) != 0,
                           eqs(a->name, a->nn, "<init>"), false, 0, 0};
        bool ok = true;
        if (r.nskipped && b->code_len == a->code_len && memcmp(a->code, b->code, a->code_len) == 0)
            continue; /* left alone (too large): reported through method_skipped */
        ok = check_method(&RC_O, a, &RC_N, b, &x);
        if (!ok)
            printf("     in %s method %.*s%.*s\n", what, (int)a->nn, (const char *)a->name, (int)a->dn,
                   (const char *)a->desc);
        if (widened)
            *widened += x.widened;
        if (added)
            *added += x.added_frames;
    }
    /* a rewritten class references the hook class: rewriting it again changes nothing */
    uint8_t *o2 = NULL;
    size_t l2 = 0;
    struct run r2 = {base, -1, 0, 0, "", {0}, {0}};
    CHECK(instr(out, ol, flags, &r2, true, &o2, &l2, err) == 1, "%s: already instrumented -> 1", what);
    free(o2);
    free(out);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)l + 1);
    *n = fread(p, 1, (size_t)l, f);
    fclose(f);
    return p;
}

/* ---------------------------------------------------------------------------------------
 * The tests.
 */
static const char *CLASSES = "build/classes";

static void test_real_classes(void)
{
    DIR *d = opendir(CLASSES);
    CHECK(d != NULL, "%s exists (make all first)", CLASSES);
    if (!d)
        return;
    struct dirent *e;
    int n = 0, same = 0, nocode = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".class") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CLASSES, e->d_name);
        size_t len;
        uint8_t *in = slurp(path, &len);
        if (!in)
            continue;
        n++;
        /* identity: the whole path, no probe: the same bytes */
        struct run r = {0, -1, 0, 0, "", {0}, {0}};
        uint8_t *out = NULL;
        size_t ol = 0;
        char err[256];
        int rc = instr(in, len, CF_REWRITE_ONLY, &r, false, &out, &ol, err);
        if (rc == 0 && ol == len && memcmp(in, out, len) == 0)
            same++;
        else if (rc == 1)
            nocode++; /* no method with code (an interface): nothing to rewrite */
        else
            printf("     identity differs: %s (rc %d %s)\n", e->d_name, rc, err);
        free(out);
        /* nothing asked: nothing changes */
        struct run none = {0, 0, 0, 0, "", {0}, {0}};
        CHECK(instr(in, len, 0, &none, false, &out, &ol, err) == 1, "%s: no flags -> 1", e->d_name);
        check_class(e->d_name, in, len, CF_METHOD_PROBES, 1, NULL, NULL);
        check_class(e->d_name, in, len, CF_INSN_PROBES, 7, NULL, NULL);
        check_class(e->d_name, in, len, CF_METHOD_PROBES | CF_INSN_PROBES, 1000000, NULL, NULL);
        check_class(e->d_name, in, len, CF_METHOD_PROBES | CF_INSN_PROBES, -70000, NULL, NULL);
        free(in);
    }
    closedir(d);
    CHECK(n >= 100, "%d real classes", n);
    /* every class with methods with code is rewritten identically; the others answer 1 */
    CHECK(same + nocode == n && same >= n - 10, "identity rewrite: %d of %d byte-identical, %d without code",
          same, n, nocode);
}

/* switches at every alignment, both kinds, each rewritten in every mode */
static void test_switch_alignment(void)
{
    for (int kind = 0; kind < 2; kind++)
        for (int pre = 0; pre < 4; pre++) {
            uint8_t code[128];
            size_t n = 0;
            for (int k = 0; k < pre; k++)
                code[n++] = 0x00; /* nop */
            code[n++] = 0x1a;     /* iload_0 */
            uint32_t sw = (uint32_t)n;
            code[n++] = kind ? 0xab : 0xaa;
            while ((n & 3) != 0)
                code[n++] = 0;
            uint32_t body = (uint32_t)n + (kind ? 8 + 3 * 8 : 12 + 3 * 4);
            /* targets: 3 cases then default, each iconst_k; ireturn (2 bytes) */
#define P4(v) do { uint32_t _v = (uint32_t)(v); code[n++] = (uint8_t)(_v >> 24); code[n++] = (uint8_t)(_v >> 16); code[n++] = (uint8_t)(_v >> 8); code[n++] = (uint8_t)_v; } while (0)
            P4(body + 6 - sw);
            if (kind) {
                P4(3);
                for (int c = 0; c < 3; c++) {
                    P4(c * 1000);
                    P4(body + 2 * (uint32_t)c - sw);
                }
            } else {
                P4(0);
                P4(2);
                for (int c = 0; c < 3; c++)
                    P4(body + 2 * (uint32_t)c - sw);
            }
#undef P4
            for (int c = 0; c < 4; c++) {
                code[n++] = (uint8_t)(0x03 + c);
                code[n++] = 0xac;
            }
            /* frames at the 4 targets: same */
            uint8_t smt[16];
            size_t sn = 0;
            smt[sn++] = 0;
            smt[sn++] = 4;
            smt[sn++] = (uint8_t)body;
            for (int c = 0; c < 3; c++)
                smt[sn++] = 1;
            struct mdef m = {8, "s", "(I)I", code, n, 1, 1, NULL, 0, smt, sn, NULL, 0, false, false};
            size_t len;
            uint8_t *cls = mkclass(52, 0x21, &m, 1, &len);
            char what[64];
            unsigned fl[4] = {CF_METHOD_PROBES, CF_INSN_PROBES, CF_METHOD_PROBES | CF_INSN_PROBES, CF_METHOD_PROBES};
            int32_t base[4] = {0, 1, 40000, 2000000};
            for (int f = 0; f < 4; f++) {
                snprintf(what, sizeof what, "%s after %d nops, flags %u", kind ? "lookupswitch" : "tableswitch", pre, fl[f]);
                check_class(what, cls, len, fl[f], base[f], NULL, NULL);
            }
            free(cls);
        }
}

/* A method whose branches stop reaching: goto -> goto_w, if -> if<!c>+8; goto_w with a new
 * frame at the fall-through (its state simulated: locals of several types, an int left on
 * the stack below the if), jsr -> jsr_w in a version 49 class. */
static void test_widening(void)
{
    enum { BODY = 5000 }; /* about 8 bytes each once probed: 40000 */
    uint8_t *code = malloc(BODY + 64);
    size_t n = 0;
    /* static (ILjava/lang/String;J)I:
     *  0 iconst_1; 1 iload_0; 2 ifeq L; 5 nop*BODY; L: iadd?? -> keep it simple:
     *  0 iconst_1            stack [int]
     *  1 iload_0
     *  2 ifeq L              stack [int] at L and at fall-through
     *  5 nop * BODY
     *  L: iload_0; iadd; ireturn    */
    code[n++] = 0x04;
    code[n++] = 0x1a;
    code[n++] = 0x99;
    code[n++] = (uint8_t)((BODY + 3) >> 8);
    code[n++] = (uint8_t)(BODY + 3);
    memset(code + n, 0, BODY);
    n += BODY;
    uint32_t L = (uint32_t)n;
    code[n++] = 0x1a;
    code[n++] = 0x60;
    code[n++] = 0xac;
    /* frame at L: same_locals_1_stack_item_extended (delta >= 64), stack [int] */
    uint8_t smt[] = {0, 1, 247, (uint8_t)(L >> 8), (uint8_t)L, 1};
    struct mdef m1 = {8, "w", "(ILjava/lang/String;J)I", code, n, 2, 4, NULL, 0, smt, sizeof smt, NULL, 0, false, false};
    /* loop: L0: iinc 0 1; nop*BODY; iload_0; ifne L0 (backward if); goto L0 (backward goto) */
    uint8_t *c2 = malloc(BODY + 64);
    size_t n2 = 0;
    c2[n2++] = 0x84;
    c2[n2++] = 0;
    c2[n2++] = 1;
    memset(c2 + n2, 0, BODY);
    n2 += BODY;
    c2[n2++] = 0x1a;
    uint32_t ifpos = (uint32_t)n2;
    c2[n2++] = 0x9a;
    c2[n2++] = (uint8_t)((-(int32_t)ifpos) >> 8);
    c2[n2++] = (uint8_t)(-(int32_t)ifpos);
    uint32_t gpos = (uint32_t)n2;
    c2[n2++] = 0xa7;
    c2[n2++] = (uint8_t)((-(int32_t)gpos) >> 8);
    c2[n2++] = (uint8_t)(-(int32_t)gpos);
    uint8_t smt2[] = {0, 1, 0}; /* same at 0 */
    struct mdef m2 = {8, "l", "(I)V", c2, n2, 1, 1, NULL, 0, smt2, sizeof smt2, NULL, 0, false, false};
    struct mdef ms[2] = {m1, m2};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, ms, 2, &len);
    int widened = 0, added = 0;
    check_class("widening (method probes only: fits)", cls, len, CF_METHOD_PROBES, 5, &widened, &added);
    CHECK_EQ_INT(widened, 0);
    widened = added = 0;
    check_class("widening (instruction probes)", cls, len, CF_INSN_PROBES | CF_METHOD_PROBES, 5, &widened, &added);
    CHECK_EQ_INT(widened, 3); /* the forward if, the backward if, the backward goto */
    CHECK_EQ_INT(added, 2);   /* fall-through frames of the two widened ifs */
    /* the added frame of w: at the block after ifeq, locals (int, String, long), stack [int] */
    struct run r = {5, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    if (instr(cls, len, CF_INSN_PROBES, &r, false, &out, &ol, err) == 0) {
        rc_parse(&RC_N, out, ol);
        static struct frm f[8];
        uint32_t init[4] = {1u << 16, 7u << 16 | 13, 4u << 16};
        int nf = read_frames(RC_N.m[0].smt, RC_N.m[0].smt_len, init, 3, f, 8);
        CHECK_EQ_INT(nf, 2);
        /* same_locals_1_stack_item at 26: 3 probed instructions (5 + 1, 5 + 1, 6 + 8 widened) */
        CHECK(RC_N.m[0].smt[2] == 64 + 26 && RC_N.m[0].smt[3] == 1, "added frame encoded as same_locals_1_stack_item(int) at 26: %u %u",
              RC_N.m[0].smt[2], RC_N.m[0].smt[3]);
        CHECK(f[0].nl == 3 && f[0].l[0] == 1u << 16 && f[0].l[1] >> 16 == 7 && f[0].l[2] == 4u << 16 && f[0].ns == 1 &&
                  f[0].s[0] == 1u << 16,
              "added frame: (int, String, long) [int]");
        const uint8_t *s;
        uint16_t sl;
        CHECK(utf8_at(&RC_N, g2(RC_N.p + RC_N.cpo[f[0].l[1] & 0xffff] + 1), &s, &sl) && eqs(s, sl, "java/lang/String"),
              "added frame names java/lang/String");
        free(out);
    }
    free(cls);
    /* jsr widened in a version 49 class (no StackMapTable) */
    uint8_t *c3 = malloc(BODY + 64);
    size_t n3 = 0;
    c3[n3++] = 0xa8; /* jsr S */
    c3[n3++] = (uint8_t)((BODY + 4) >> 8);
    c3[n3++] = (uint8_t)(BODY + 4);
    c3[n3++] = 0xb1; /* return */
    memset(c3 + n3, 0, BODY);
    n3 += BODY;
    c3[n3++] = 0x4c; /* S: astore_1 */
    c3[n3++] = 0xa9; /* ret 1 */
    c3[n3++] = 1;
    struct mdef m3 = {8, "j", "()V", c3, n3, 1, 2, NULL, 0, NULL, 0, NULL, 0, false, false};
    cls = mkclass(49, 0x21, &m3, 1, &len);
    widened = 0;
    check_class("jsr widening (v49)", cls, len, CF_INSN_PROBES | CF_METHOD_PROBES, 3, &widened, NULL);
    CHECK_EQ_INT(widened, 1);
    free(cls);
    free(code);
    free(c2);
    free(c3);
}

/* wide forms; an offset above 32767 (pushed as sipush 32767; sipush r; iadd); large and
 * negative ids (ldc / ldc_w of an Integer, bipush) */
static void test_wide_and_big_offsets(void)
{
    uint8_t code[64];
    size_t n = 0;
    const uint8_t w[] = {0xc4, 0x15, 0x01, 0x2c,        /* wide iload 300 */
                         0xc4, 0x36, 0x01, 0x2d,        /* wide istore 301 */
                         0xc4, 0x84, 0x01, 0x2d, 0x80, 0x00, /* wide iinc 301 -32768 */
                         0xc4, 0x19, 0x00, 0x05,        /* wide aload 5 */
                         0x57, 0xb1};                   /* pop, return */
    memcpy(code, w, sizeof w);
    n = sizeof w;
    struct mdef m = {8, "wide", "(Ljava/lang/String;)V", code, n, 2, 302, NULL, 0, NULL, 0, NULL, 0, false, false};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, &m, 1, &len);
    check_class("wide", cls, len, CF_INSN_PROBES | CF_METHOD_PROBES, -5, NULL, NULL);
    check_class("wide, id 1000000", cls, len, CF_INSN_PROBES | CF_METHOD_PROBES, 1000000, NULL, NULL);
    free(cls);
    /* one tableswitch of 40000 bytes: the instructions after it are at offsets > 32767 */
    uint32_t cases = 10000;
    size_t cap = 16 + 4 * cases + 16;
    uint8_t *c = malloc(cap);
    n = 0;
    c[n++] = 0x1a;
    c[n++] = 0xaa;
    c[n++] = 0;
    c[n++] = 0;
    uint32_t body = (uint32_t)(n + 12 + 4 * cases);
#define P4(v) do { uint32_t _v = (uint32_t)(v); c[n++] = (uint8_t)(_v >> 24); c[n++] = (uint8_t)(_v >> 16); c[n++] = (uint8_t)(_v >> 8); c[n++] = (uint8_t)_v; } while (0)
    P4(body + 2 - 1);
    P4(0);
    P4(cases - 1);
    for (uint32_t k = 0; k < cases; k++)
        P4(body - 1);
#undef P4
    c[n++] = 0x04; /* iconst_1 */
    c[n++] = 0xac;
    c[n++] = 0x03;
    c[n++] = 0xac;
    uint8_t smt[] = {0, 2, 251, (uint8_t)(body >> 8), (uint8_t)body, 1};
    struct mdef m2 = {8, "big", "(I)I", c, n, 1, 1, NULL, 0, smt, sizeof smt, NULL, 0, false, false};
    cls = mkclass(52, 0x21, &m2, 1, &len);
    check_class("offsets above 32767", cls, len, CF_INSN_PROBES | CF_METHOD_PROBES, 7, NULL, NULL);
    free(cls);
    free(c);
}

/* every frame kind, decoded and encoded back identically, and moved with the code */
static void test_stack_maps(void)
{
    /* static (I)V, code: 40 nops, new String at 40 (3 bytes), pop, 200 nops, return */
    uint8_t code[256];
    size_t n = 0;
    memset(code, 0, 40);
    n = 40;
    code[n++] = 0xbb;
    code[n++] = 0;
    code[n++] = 13;
    code[n++] = 0x57;
    memset(code + n, 0, 200);
    n += 200;
    code[n++] = 0xb1;
    uint8_t smt[] = {
        0, 9,
        5,                                   /* same @5 */
        64 + 4, 2,                           /* same_locals_1_stack_item @10 [float] */
        253, 0, 4, 4, 3,                     /* append @15 +long +double */
        249, 0, 3,                           /* chop 2 @19 */
        252, 0, 1, 7, 0, 13,                 /* append @21 +String */
        247, 0, 100, 8, 0, 40,               /* same_locals_1_stack_item_extended @122 [uninit(40)] */
        251, 0, 70,                          /* same_frame_extended @193 */
        255, 0, 5, 0, 3, 1, 5, 6, 0, 2, 7, 0, 13, 1, /* full @199 (int null uthis) [String int] */
        250, 0, 5,                           /* chop 1 @205 */
    };
    struct mdef m = {8, "f", "(I)V", code, n, 4, 8, NULL, 0, smt, sizeof smt, NULL, 0, false, false};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, &m, 1, &len);
    struct run r = {0, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    CHECK(instr(cls, len, CF_REWRITE_ONLY, &r, false, &out, &ol, err) == 0 && ol == len && memcmp(out, cls, len) == 0,
          "every frame kind re-encoded to the same bytes");
    if (r.ndone)
        free(out);
    check_class("frames moved (insn)", cls, len, CF_INSN_PROBES, 300, NULL, NULL);
    check_class("frames moved (method)", cls, len, CF_METHOD_PROBES, 300, NULL, NULL);
    free(cls);
    /* a reserved frame type, a chop of more locals than there are, a frame inside an
     * instruction: the method is refused */
    const uint8_t bad1[] = {0, 1, 200}, bad2[] = {0, 1, 248, 0, 3}, bad3[] = {0, 1, 41};
    const uint8_t *bads[3] = {bad1, bad2, bad3};
    size_t bl[3] = {sizeof bad1, sizeof bad2, sizeof bad3};
    for (int k = 0; k < 3; k++) {
        struct mdef mb = {8, "f", "(I)V", code, n, 4, 8, NULL, 0, bads[k], bl[k], NULL, 0, false, false};
        cls = mkclass(52, 0x21, &mb, 1, &len);
        struct run rb = {0, -1, 0, 0, "", {0}, {0}};
        int rc = instr(cls, len, CF_METHOD_PROBES, &rb, false, &out, &ol, err);
        CHECK(rc == -1 && strstr(err, "method f(I)V: ") != NULL, "bad frame %d refused: %s", k, err);
        free(cls);
    }
}

/* constructors: super(...) arguments computed with a branch (frames with
 * uninitializedThis); the catch-all starts after the invokespecial. Object.<init>: its
 * return stays outside the catch-all. */
static void test_constructors(void)
{
    /* <init>(I)V: aload_0; iload_1; ifeq A; iconst_1; goto B; A: iconst_2; B: pop;
     *             invokespecial Object.<init>; iinc 1 1; return */
    const uint8_t code[] = {0x2a, 0x1b, 0x99, 0x00, 0x07, 0x04, 0xa7, 0x00, 0x04, 0x05, 0x57,
                            0xb7, 0x00, 0x0b, 0x84, 0x01, 0x01, 0xb1};
    /* frames: A @9 full (uthis, int) [uthis]; B @10 full (uthis, int) [uthis, int] */
    const uint8_t smt[] = {0, 2, 255, 0, 9, 0, 2, 6, 1, 0, 1, 6, 255, 0, 0, 0, 2, 6, 1, 0, 2, 6, 1};
    const uint16_t lnt[] = {0, 10, 11, 11, 17, 12};
    struct mdef m = {0, "<init>", "(I)V", code, sizeof code, 3, 2, NULL, 0, smt, sizeof smt, lnt, 3, true, false};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, &m, 1, &len);
    check_class("constructor", cls, len, CF_METHOD_PROBES, 9, NULL, NULL);
    check_class("constructor (insn)", cls, len, CF_METHOD_PROBES | CF_INSN_PROBES, 9, NULL, NULL);
    struct run r = {9, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    init_calls = 0;
    if (instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0) {
        rc_parse(&RC_N, out, ol);
        const struct rm *nm = &RC_N.m[0];
        /* entry: sipush/bipush 9 = bipush 9 (2) + invokestatic (3) = 5; the invokespecial is
         * original offset 11, its block (at 5 + 11 = 16) holds superCall (5 bytes), the
         * invokespecial (at 21) and aload_0 + ctorReady (6 bytes), so the range starts at
         * the iinc's block: 5 + 11 + 5 + 3 + 6 = 30 */
        CHECK(nm->nex == 2 && g2(nm->ex) == 30 && g2(nm->ex + 4) == g2(nm->ex + 2), "catch-all from 30 (after super()): %u",
              nm->nex ? g2(nm->ex) : 0);
        /* the code before super(): from after the entry probe (5) up to the invokespecial
         * (5 + 11 = 16, not covered: no handler may be), into the second handler, which
         * follows the catch-all (bipush 9; invokestatic; athrow = 6 bytes) */
        CHECK(nm->nex == 2 && g2(nm->ex + 8) == 5 && g2(nm->ex + 10) == 16 &&
                  g2(nm->ex + 12) == g2(nm->ex + 4) + 6 && g2(nm->ex + 14) == 0,
              "pre-super handler over [5, 16)");
        CHECK(init_calls == 1 && init_call_bci == 21 && nm->code[21] == 0xb7,
              "init_call: super() at rewritten offset 21 (%u calls, %u)", init_calls, init_call_bci);
        CHECK(nm->code[2] == 0xb8 && strcmp(hook_of(&RC_N, g2(nm->code + 3)), "enterCtor") == 0,
              "constructor: enterCtor(I)V");
        CHECK(nm->code[18] == 0xb8 && strcmp(hook_of(&RC_N, g2(nm->code + 19)), "superCall") == 0,
              "constructor: superCall(I)V just before super()");
        CHECK(nm->code[24] == 0x2a && nm->code[27] == 0xb8 &&
                  strcmp(hook_of(&RC_N, g2(nm->code + 28)), "ctorReady") == 0,
              "constructor: aload_0; ctorReady(Object, I)V just after super()");
        free(out);
    }
    free(cls);
    /* Class files before 50 (the old verifier, no flagThisUninit): no pre-super handler, but
     * the super() call is still reported */
    struct mdef m49 = m;
    m49.smt = NULL;
    m49.smt_len = 0;
    cls = mkclass(49, 0x21, &m49, 1, &len);
    check_class("constructor (version 49)", cls, len, CF_METHOD_PROBES, 9, NULL, NULL);
    init_calls = 0;
    r = (struct run){9, -1, 0, 0, "", {0}, {0}};
    if (instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0) {
        rc_parse(&RC_N, out, ol);
        CHECK(RC_N.m[0].nex == 1 && init_calls == 1 && init_call_bci == 21,
              "version 49: catch-all only (%u entries), super() reported", RC_N.m[0].nex);
        free(out);
    }
    free(cls);
    /* A constructor that stores into local 0 before super() (no javac does): the handler's
     * frame could not name `this`, so there is none. aload_0; astore_0; aload_0;
     * invokespecial Object.<init>; return */
    const uint8_t scode[] = {0x2a, 0x4b, 0x2a, 0xb7, 0x00, 0x0b, 0xb1};
    struct mdef sm = {0, "<init>", "()V", scode, sizeof scode, 1, 1, NULL, 0, NULL, 0, NULL, 0, true, false};
    cls = mkclass(52, 0x21, &sm, 1, &len);
    r = (struct run){9, -1, 0, 0, "", {0}, {0}};
    if (instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0) {
        rc_parse(&RC_N, out, ol);
        CHECK(RC_N.m[0].nex == 1, "astore_0 before super(): no pre-super handler (%u entries)", RC_N.m[0].nex);
        free(out);
    } else {
        CHECK(0, "astore_0 constructor rewritten: %s", err);
    }
    free(cls);
    /* Object.<init> itself: `this` is initialized from the start, so the entry probe passes
     * it; its return (HotSpot's _return_register_finalizer) stays outside the catch-all,
     * which then covers nothing */
    const uint8_t ocode[] = {0xb1};
    struct mdef om = {1, "<init>", "()V", ocode, 1, 0, 1, NULL, 0, NULL, 0, NULL, 0, false, false};
    class_name = "java/lang/Object";
    cls = mkclass(52, 0x21, &om, 1, &len);
    class_name = "T";
    for (int f = 0; f < 2; f++) {
        r = (struct run){9, -1, 0, 0, "", {0}, {0}};
        if (instr(cls, len, CF_METHOD_PROBES | (f ? CF_INSN_PROBES : 0), &r, false, &out, &ol, err) == 0) {
            rc_parse(&RC_N, out, ol);
            const struct rm *nm = &RC_N.m[0];
            CHECK(nm->nex == 0, "Object.<init>: no handler over the return (%u entries)", nm->nex);
            const char *h = nm->code[0] == 0x2a ? hook_of(&RC_N, g2(nm->code + 4)) : NULL;
            CHECK(h && strcmp(h, "enterObj") == 0,
                  "Object.<init>: aload_0; enterObj (`this` is initialized there)");
            free(out);
        } else {
            CHECK(0, "Object.<init> rewritten: %s", err);
        }
    }
    free(cls);
}

/* native methods: a wrapper with the original name and flags calls the renamed native */
static void test_natives(void)
{
    struct mdef m[3] = {
        {0x0001 | 0x0100, "foo", "(IJLjava/lang/String;D)I", NULL, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false},
        {0x0008 | 0x0100 | 0x0020, "bar", "()V", NULL, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false},
        {0x0008 | 0x0100, "intr", "()J", NULL, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, true},
    };
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, m, 3, &len);
    struct run r = {40, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    int rc = instr(cls, len, CF_WRAP_NATIVES, &r, true, &out, &ol, err);
    CHECK(rc == 0, "natives wrapped: %s", err);
    CHECK(r.nskipped == 1 && strcmp(r.why, "intrinsic native") == 0, "intrinsic native left alone: %s", r.why);
    CHECK(r.ndone == 2 && r.done_len[0] == 0 && r.done_ids[0] == 40 && r.done_ids[1] == 41, "method_done for wrappers");
    if (rc == 0) {
        CHECK(rc_parse(&RC_N, out, ol) && RC_N.nm == 5, "5 methods: %u", RC_N.nm);
        const struct rm *w = &RC_N.m[0], *nfoo = &RC_N.m[3], *nbar = &RC_N.m[4];
        CHECK(eqs(w->name, w->nn, "foo") && w->acc == 0x0001 && w->code, "wrapper foo: public, not native");
        CHECK(eqs(RC_N.m[1].name, RC_N.m[1].nn, "bar") && RC_N.m[1].acc == (0x0008 | 0x0020), "wrapper bar: static synchronized");
        CHECK(eqs(RC_N.m[2].name, RC_N.m[2].nn, "intr") && (RC_N.m[2].acc & 0x0100), "intr stays native");
        CHECK(eqs(nfoo->name, nfoo->nn, "$$p$$foo") && nfoo->acc == (0x0002 | 0x0100 | 0x1000) && !nfoo->code,
              "renamed native $$p$$foo: private native synthetic");
        CHECK(eqs(nbar->name, nbar->nn, "$$p$$bar") && nbar->acc == (0x0008 | 0x0002 | 0x0100 | 0x1000),
              "renamed native $$p$$bar: private static native synthetic");
        /* foo: aload_0 bipush 40 invokestatic enterObj | aload_0 iload_1 lload_2 aload 4 dload 5
         *      invokespecial $$p$$foo bipush 40 invokestatic exit ireturn | bipush 40 invokestatic exit athrow */
        static const uint8_t want[] = {0x2a, 0x10, 40, 0xb8, 0, 0, 0x2a, 0x1b, 0x20, 0x19, 4, 0x18, 5,
                                       0xb7, 0, 0, 0x10, 40, 0xb8, 0, 0, 0xac, 0x10, 40, 0xb8, 0, 0, 0xbf};
        bool same = w->code_len == sizeof want;
        for (size_t k = 0; same && k < sizeof want; k++)
            if (want[k] != 0 || (k != 4 && k != 5 && k != 14 && k != 15 && k != 19 && k != 20 && k != 25 && k != 26))
                same = want[k] == w->code[k];
        CHECK(same, "wrapper code of foo");
        CHECK(w->nex == 1 && g2(w->ex) == 6 && g2(w->ex + 2) == 22 && g2(w->ex + 4) == 22, "wrapper catch-all [6, 22)");
        CHECK(w->max_locals == 7 && w->max_stack >= 7, "wrapper max_locals %u max_stack %u", w->max_locals, w->max_stack);
        CHECK(strcmp(hook_of(&RC_N, g2(w->code + 4)), "enterObj") == 0 && strcmp(hook_of(&RC_N, g2(w->code + 19)), "exit") == 0,
              "wrapper hooks");
        free(out);
    }
    free(cls);
    /* without CF_WRAP_NATIVES nothing is done */
    r = (struct run){40, -1, 0, 0, "", {0}, {0}};
    cls = mkclass(52, 0x21, m, 2, &len);
    CHECK(instr(cls, len, CF_METHOD_PROBES, &r, true, &out, &ol, err) == 1, "natives untouched without the flag");
    free(cls);
    /* a native in an interface is not wrapped */
    cls = mkclass(52, 0x0601, m, 1, &len);
    r = (struct run){40, -1, 0, 0, "", {0}, {0}};
    CHECK(instr(cls, len, CF_WRAP_NATIVES, &r, true, &out, &ol, err) == 1 && r.nskipped == 1, "interface native left alone");
    free(cls);
}

/* jsr/ret in a version 49 class (the code of tests/java/BciJsr.java) */
static void test_jsr(void)
{
    static const uint8_t f[] = {0x1a, 0x05, 0x68, 0x3c, 0xa8, 0x00, 0x05, 0x1b, 0xac, 0x4d, 0x84, 0x01, 0x01, 0xa9, 0x02};
    static const uint8_t g[] = {0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, 0x00, 0x15, 0xa8, 0x00, 0x09, 0x84, 0x02, 0x01,
                                0xa7, 0xff, 0xf5, 0x4e, 0x1b, 0x1c, 0x60, 0x04, 0x60, 0x3c, 0xa9, 0x03, 0x1b, 0xac};
    struct mdef m[2] = {{9, "f", "(I)I", f, sizeof f, 2, 3, NULL, 0, NULL, 0, NULL, 0, false, false},
                        {9, "g", "(I)I", g, sizeof g, 2, 4, NULL, 0, NULL, 0, NULL, 0, false, false}};
    size_t len;
    uint8_t *cls = mkclass(49, 0x21, m, 2, &len);
    check_class("jsr/ret v49", cls, len, CF_METHOD_PROBES | CF_INSN_PROBES, 3, NULL, NULL);
    check_class("jsr/ret v49 (method)", cls, len, CF_METHOD_PROBES, 3, NULL, NULL);
    free(cls);
    /* the same with a StackMapTable (class 51): refused, with a clear message */
    uint8_t smt[] = {0, 0};
    struct mdef m51 = {9, "f", "(I)I", f, sizeof f, 2, 3, NULL, 0, smt, 2, NULL, 0, false, false};
    cls = mkclass(51, 0x21, &m51, 1, &len);
    struct run r = {3, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    CHECK(instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == -1 && strstr(err, "jsr/ret") != NULL,
          "jsr with a StackMapTable refused: %s", err);
    free(cls);
}

/* class file version 50: a method with branches but no StackMapTable gets none (the old
 * verifier checks it); one without branches gets the handler's frame; one with a table keeps
 * it consistent. Below 50 no table at all, natives wrapped too. */
static void test_versions(void)
{
    const uint8_t br[] = {0x1a, 0x99, 0x00, 0x04, 0x00, 0xb1}; /* iload_0; ifeq +4; nop; return */
    const uint8_t lin[] = {0x1a, 0x57, 0xb1};                  /* iload_0; pop; return */
    const uint8_t smt[] = {0, 1, 5};                           /* same @5 */
    struct mdef m[4] = {{9, "a", "(I)V", br, sizeof br, 1, 1, NULL, 0, NULL, 0, NULL, 0, false, false},
                        {9, "b", "(I)V", lin, sizeof lin, 1, 1, NULL, 0, NULL, 0, NULL, 0, false, false},
                        {9, "c", "(I)V", br, sizeof br, 1, 1, NULL, 0, smt, sizeof smt, NULL, 0, false, false},
                        {9 | 0x100, "d", "(JI)J", NULL, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false}};
    for (unsigned v = 45; v <= 51; v++) {
        if (v > 45 && v < 49)
            continue;
        size_t len;
        uint8_t *cls = mkclass(v, 0x21, m, v >= 50 ? 3 : 2, &len);
        char what[64];
        snprintf(what, sizeof what, "version %u", v);
        check_class(what, cls, len, CF_METHOD_PROBES | CF_INSN_PROBES, 11, NULL, NULL);
        check_class(what, cls, len, CF_METHOD_PROBES, 11, NULL, NULL);
        free(cls);
        /* the native: wrapped, a table only from 50 on */
        cls = mkclass(v, 0x21, m + 3, 1, &len);
        struct run r = {11, -1, 0, 0, "", {0}, {0}};
        uint8_t *out;
        size_t ol;
        char err[256];
        if (instr(cls, len, CF_WRAP_NATIVES, &r, false, &out, &ol, err) == 0) {
            rc_parse(&RC_N, out, ol);
            CHECK(RC_N.nm == 2 && RC_N.m[0].code && (RC_N.m[0].smt != NULL) == (v >= 50), "%s: wrapper, table iff >= 50", what);
            free(out);
        } else {
            CHECK(0, "%s: native wrapped: %s", what, err);
        }
        free(cls);
    }
}

/* a method too large after rewriting: an error, or left alone and reported */
static void test_too_large(void)
{
    enum { N = 30000 };
    uint8_t *code = malloc(N + 1);
    memset(code, 0, N);
    code[N] = 0xb1;
    struct mdef m[2] = {{9, "huge", "()V", code, N + 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false},
                        {9, "small", "()V", code + N, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false}};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, m, 2, &len);
    struct run r = {1, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    int rc = instr(cls, len, CF_INSN_PROBES, &r, false, &out, &ol, err);
    CHECK(rc == -1 && strstr(err, "method huge()V: code too large after rewriting (") == err, "too large: %s", err);
    rc = instr(cls, len, CF_INSN_PROBES, &r, true, &out, &ol, err);
    CHECK(rc == 0 && r.nskipped == 1 && strstr(r.why, "code too large") != NULL, "too large: skipped, %s", r.why);
    if (rc == 0) {
        rc_parse(&RC_O, cls, len);
        rc_parse(&RC_N, out, ol);
        CHECK(RC_N.m[0].code_len == N + 1 && memcmp(RC_N.m[0].code, code, N + 1) == 0, "the huge method is unchanged");
        CHECK(RC_N.m[1].code_len > 1, "the small one is rewritten");
        free(out);
    }
    CHECK(instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0, "method probes fit");
    free(out);
    free(cls);
    free(code);
}

static void test_skip_and_hook_class(void)
{
    const uint8_t code[] = {0xb1};
    struct mdef m[2] = {{9, "a", "()V", code, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false},
                        {9, "b", "()V", code, 1, 0, 0, NULL, 0, NULL, 0, NULL, 0, false, false}};
    size_t len;
    uint8_t *cls = mkclass(52, 0x21, m, 2, &len);
    struct run r = {1, 0, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    CHECK(instr(cls, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0, "one of two");
    if (r.ndone) {
        rc_parse(&RC_N, out, ol);
        CHECK(RC_N.m[0].code_len == 1 && RC_N.m[1].code_len > 1, "id -1: left alone");
        free(out);
    }
    CHECK(r.ndone == 1 && r.done_ids[0] == 2 && r.done_len[0] == 1, "method_done once, original code");
    /* the hook class itself */
    struct cf_probe_spec s = {"T", CF_METHOD_PROBES, NULL, id_cb, NULL, NULL, NULL, &r};
    CHECK(cf_instrument(cls, len, &s, &out, &ol, err, sizeof err) == 1, "the hook class is not rewritten");
    free(cls);
    /* cf_make_hook_class: a valid class with the 8 natives */
    uint8_t *h;
    size_t hl;
    CHECK(cf_make_hook_class("a/b/Hook", &h, &hl, err, sizeof err) == 0, "hook class built");
    CHECK(rc_parse(&RC_N, h, hl) && RC_N.nm == CF_HOOK_COUNT, "hook class: %u methods", RC_N.nm);
    for (int k = 0; k < CF_HOOK_COUNT && k < (int)RC_N.nm; k++)
        CHECK(eqs(RC_N.m[k].name, RC_N.m[k].nn, cf_hook_name((enum cf_hook)k)) &&
                  eqs(RC_N.m[k].desc, RC_N.m[k].dn, cf_hook_desc((enum cf_hook)k)) && RC_N.m[k].acc == 0x0109,
              "hook %d", k);
    struct cf_probe_spec s2 = {"a/b/Hook", CF_METHOD_PROBES | CF_WRAP_NATIVES, "p", id_cb, NULL, NULL, NULL, &r};
    CHECK(cf_instrument(h, hl, &s2, &out, &ol, err, sizeof err) == 1, "hook class read back, left alone");
    s2.hook_class = "x/Y";
    CHECK(cf_instrument(h, hl, &s2, &out, &ol, err, sizeof err) == 0, "hook class read back, wrapped under another name");
    free(out);
    free(h);
    CHECK(cf_make_hook_class("a.b", &h, &hl, err, sizeof err) == -1 && err[0], "dotted name refused");
    CHECK(cf_make_hook_class("", &h, &hl, err, sizeof err) == -1, "empty name refused");
    CHECK(cf_hook_name(CF_HOOK_COUNT) == NULL, "no hook past the end");
}

static void test_branch_outcome(void)
{
    /* 0 iload_0; 1 ifeq 10 (rel 9); 4 if_icmplt 10 (rel 6); 7 ifnull 10; 10 tableswitch ...; */
    uint8_t c[64] = {0x1a, 0x99, 0, 9, 0xa1, 0, 6, 0xc6, 0, 3, 0xaa, 0, /* pad */
                     0, 0, 0, 40, /* default 10+40 */ 0, 0, 0, 5, 0, 0, 0, 6, /* 5..6 */
                     0, 0, 0, 30, 0, 0, 0, 31};
    struct cf_branch b;
    CHECK(cf_branch_outcome(c, 32, 1, 0, 0, &b) == 0 && b.kind == CF_BR_IF && b.taken && b.next_bci == 10, "ifeq 0 taken");
    CHECK(cf_branch_outcome(c, 32, 1, 7, 0, &b) == 0 && !b.taken && b.next_bci == 4, "ifeq 7 not taken");
    CHECK(cf_branch_outcome(c, 32, 4, -3, 2, &b) == 0 && b.taken, "if_icmplt -3 < 2");
    CHECK(cf_branch_outcome(c, 32, 4, 3, 2, &b) == 0 && !b.taken && b.next_bci == 7, "if_icmplt 3 < 2 not taken");
    CHECK(cf_branch_outcome(c, 32, 7, 1, 0, &b) == 0 && b.taken, "ifnull of null");
    CHECK(cf_branch_outcome(c, 32, 10, 6, 0, &b) == 0 && b.kind == CF_BR_TABLESWITCH && b.low == 5 && b.high == 6 &&
              b.next_bci == 41,
          "tableswitch 6 -> case");
    CHECK(cf_branch_outcome(c, 32, 10, 7, 0, &b) == 0 && b.next_bci == 50, "tableswitch 7 -> default");
    CHECK(cf_branch_outcome(c, 32, 0, 0, 0, &b) == 0 && b.kind == CF_BR_NONE, "iload: no branch");
    CHECK(cf_branch_outcome(c, 32, 40, 0, 0, &b) == -1, "bci out of range");
    CHECK(cf_branch_outcome(c, 20, 10, 0, 0, &b) == -1, "truncated switch");
    /* lookupswitch at 1: pad 2; default, npairs 2, (3 -> +20) (9 -> +30) */
    uint8_t l[40] = {0x1a, 0xab, 0, 0, 0, 0, 0, 10, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 20, 0, 0, 0, 9, 0, 0, 0, 30};
    CHECK(cf_branch_outcome(l, 28, 1, 9, 0, &b) == 0 && b.kind == CF_BR_LOOKUPSWITCH && b.chosen_pair_index == 1 &&
              b.pairs_total == 2 && b.next_bci == 31,
          "lookupswitch 9 -> pair 1");
    CHECK(cf_branch_outcome(l, 28, 1, 4, 0, &b) == 0 && b.chosen_pair_index == 2 && b.next_bci == 11, "lookupswitch default");
}

/* Malformed input: no crash, an error message, at every truncation of a real class and
 * under random corruption. A corrupted class that is still accepted must give output that
 * reads back. */
static void test_malformed(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/BciMain.class", CLASSES);
    size_t len;
    uint8_t *in = slurp(path, &len);
    CHECK(in != NULL, "%s readable", path);
    if (!in)
        return;
    struct run r = {1, -1, 0, 0, "", {0}, {0}};
    uint8_t *out;
    size_t ol;
    char err[256];
    int bad = 0;
    for (size_t k = 0; k < len; k++) {
        err[0] = 0;
        int rc = instr(in, k, CF_METHOD_PROBES | CF_INSN_PROBES, &r, false, &out, &ol, err);
        if (rc != -1 || err[0] == 0) {
            bad++;
            if (rc == 0)
                free(out);
        }
    }
    CHECK(bad == 0, "%d of %zu truncations not refused with a message", bad, len);
    CHECK(instr(in, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == 0, "the whole class is fine");
    free(out);
    uint8_t *v = malloc(len + 8);
    memcpy(v, in, len);
    v[len] = 0;
    CHECK(instr(v, len + 1, CF_METHOD_PROBES, &r, false, &out, &ol, err) == -1 && strstr(err, "extra bytes"), "trailing byte");
    v[0] = 0;
    CHECK(instr(v, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == -1 && strstr(err, "magic"), "bad magic");
    memcpy(v, in, len);
    v[6] = 0;
    v[7] = 70;
    CHECK(instr(v, len, CF_METHOD_PROBES, &r, false, &out, &ol, err) == -1 && strstr(err, "version 70"), "version 70 refused");
    CHECK(instr(NULL, 0, CF_METHOD_PROBES, &r, false, &out, &ol, err) == -1, "NULL input");
    struct cf_probe_spec s = {HOOK, CF_WRAP_NATIVES, NULL, id_cb, NULL, NULL, NULL, &r};
    CHECK(cf_instrument(in, len, &s, &out, &ol, err, sizeof err) == -1 && strstr(err, "native_prefix"), "no prefix");
    /* random corruption: 1-4 bytes changed, 20000 times */
    uint32_t seed = 12345;
    int accepted = 0, readback = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(v, in, len);
        int nb = 1 + (int)(seed % 4);
        for (int j = 0; j < nb; j++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            v[at] = (uint8_t)(seed >> 16);
        }
        seed = seed * 1103515245u + 12345u;
        int rc = instr(v, len, CF_METHOD_PROBES | CF_INSN_PROBES | (seed & 0x100 ? CF_WRAP_NATIVES : 0), &r,
                       (seed & 0x200) != 0, &out, &ol, err);
        if (rc == 0) {
            accepted++;
            uint8_t *o2;
            size_t l2;
            struct run r2 = {1, -1, 0, 0, "", {0}, {0}};
            if (instr(out, ol, CF_REWRITE_ONLY, &r2, true, &o2, &l2, err) == 1)
                readback++;
            free(out);
        }
    }
    CHECK(accepted > 1000 && readback == accepted, "corrupted but accepted: %d, read back (already instrumented): %d",
          accepted, readback);
    free(v);
    free(in);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        CLASSES = argv[1];
    test_real_classes();
    test_switch_alignment();
    test_widening();
    test_wide_and_big_offsets();
    test_stack_maps();
    test_constructors();
    test_natives();
    test_jsr();
    test_versions();
    test_too_large();
    test_skip_and_hook_class();
    test_branch_outcome();
    test_malformed();
    return UNIT_END();
}
