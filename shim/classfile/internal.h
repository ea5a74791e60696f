/* internal.h — what the parts of the class-file rewriter share, and nothing of the public API.
 *
 * The rewriter is split by job (buf.c, pool.c, parse.c, code.c, sim.c, frames.c, emit.c,
 * rewrite.c, wrappers.c, classfile.c; classfile.c's head comment has the overview). They
 * share two structures: struct cf, the class being rewritten (its bytes, its constant
 * pool and the entries appended to it), and struct meth, the method being rewritten (its
 * decoded instructions, frames and layout). The small helpers every part calls per byte,
 * per instruction or per pool read (big-endian reads, the output buffer's writers, pool
 * reads, opcode properties, verification type constructors) are static inline here: a
 * call across files would cost on every instruction. Functions shared between the parts are named cf_*; none is exported from
 * the shim's library (it is built with -fvisibility=hidden and a version script).
 */
#ifndef JVMPISHIM_CLASSFILE_INTERNAL_H
#define JVMPISHIM_CLASSFILE_INTERNAL_H

#include "classfile/classfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* ---------------------------------------------------------------------------------------
 * Bytes in, bytes out (buf.c).
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
bool cf_buf_grow(struct buf *b, size_t n);
static inline bool b_room(struct buf *b, size_t n) { return b->cap - b->len >= n || cf_buf_grow(b, n); }
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
static inline void b_set_u2(struct buf *b, size_t at, unsigned v)
{
    if (!b->oom && at + 2 <= b->len) {
        b->p[at] = (uint8_t)(v >> 8);
        b->p[at + 1] = (uint8_t)v;
    }
}
static inline void b_set_u4(struct buf *b, size_t at, uint32_t v)
{
    if (!b->oom && at + 4 <= b->len) {
        b->p[at] = (uint8_t)(v >> 24);
        b->p[at + 1] = (uint8_t)(v >> 16);
        b->p[at + 2] = (uint8_t)(v >> 8);
        b->p[at + 3] = (uint8_t)v;
    }
}
void cf_buf_free(struct buf *b);

/* Grow a malloc'd array to hold at least n elements; false on overflow or no memory. */
bool cf_grow(void **arr, size_t *cap, size_t n, size_t elem);
#define GROW(arr, cap, n) cf_grow((void **)&(arr), &(cap), (n), sizeof *(arr))

/* ---------------------------------------------------------------------------------------
 * The class being rewritten (parse.c; the pool's fields belong to pool.c).
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

/* Fail the class with a message (the first failure's message is kept). */
void cf_fail(struct cf *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Check the whole class file's structure and record where its parts are. */
bool cf_parse_class(struct cf *c);
/* Skip an attributes table at *pos (u2 count, then name/u4 length/bytes). */
bool cf_skip_attrs(struct cf *c, size_t *pos, const char *where);

/* ---------------------------------------------------------------------------------------
 * The constant pool (pool.c). Reads of original entries are inline: the simulator and
 * the frame decoder make one or more per instruction.
 */
/* Pointer to the tag byte of original entry i, or NULL. Every index read through it comes
 * from the input (operands, attributes, tables), which can name only the input's own
 * entries: an index past them is malformed even once entries have been appended there.
 * (Reading an appended entry would also hand out a pointer into a buffer that moves at the
 * next append, under the verification types that keep names: a use after free.) */
static inline const uint8_t *cp_ent(const struct cf *c, uint32_t i)
{
    if (i == 0 || i >= c->cp_n)
        return NULL;
    return c->cp_pos[i] ? c->in + c->cp_pos[i] : NULL;
}
static inline int cp_tag(const struct cf *c, uint32_t i)
{
    const uint8_t *e = cp_ent(c, i);
    return e ? e[0] : 0;
}
static inline bool cp_utf8(const struct cf *c, uint32_t i, const uint8_t **s, uint16_t *n)
{
    const uint8_t *e = cp_ent(c, i);
    if (!e || e[0] != T_UTF8)
        return false;
    *n = be16(e + 1);
    *s = e + 3;
    return true;
}
static inline bool cp_class_name(const struct cf *c, uint32_t i, const uint8_t **s, uint16_t *n)
{
    const uint8_t *e = cp_ent(c, i);
    return e && e[0] == T_CLASS && cp_utf8(c, be16(e + 1), s, n);
}
/* A member reference or (Invoke)Dynamic: its class index (0 for the dynamic forms), name
 * and descriptor. */
bool cf_cp_member(const struct cf *c, uint32_t i, int *tag, uint16_t *cls, const uint8_t **name,
                  uint16_t *name_n, const uint8_t **desc, uint16_t *desc_n);
/* Is original entry i the Utf8 s? */
bool cf_utf8_is(const struct cf *c, uint32_t i, const char *s);
/* Record where each entry of the input's pool is (c->cp_n set, the pool at offset 10). */
bool cf_pool_parse(struct cf *c);
/* Free the pool's tables and the appended entries. */
void cf_pool_free(struct cf *c);
/* The index of an entry with this content: an original one if there is one, else one
 * appended (once). 0 on failure, with the class failed (pool full, no memory). */
uint16_t cf_pool_utf8(struct cf *c, const void *s, size_t n);
uint16_t cf_pool_int(struct cf *c, int32_t v);
uint16_t cf_pool_ref(struct cf *c, int tag, uint16_t a, uint16_t b, bool two);
uint16_t cf_pool_class(struct cf *c, const void *name, size_t n);
/* The Methodref of hook h, created on first use. */
uint16_t cf_hook_ref(struct cf *c, enum cf_hook h);

/* ---------------------------------------------------------------------------------------
 * Instructions (code.c).
 */
/* Length of each instruction with a fixed length; 0 for the variable ones (tableswitch,
 * lookupswitch, wide), -1 for an opcode that may not appear in a class file. */
extern const int8_t cf_op_lens[256];
static inline int op_len(unsigned op) { return cf_op_lens[op & 0xff]; }
static inline bool op_is_if(unsigned op) { return (op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7; }
static inline bool op_is_return(unsigned op) { return op >= 0xac && op <= 0xb1; }
static inline unsigned op_if_inverse(unsigned op) { return op >= 0xc6 ? op ^ 1u : ((op - 0x99) ^ 1u) + 0x99; }
static inline unsigned sw_pad(uint32_t pos) { return (4 - ((pos + 1) & 3)) & 3; }

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

/* Fail the method with a message (the first is kept); returns false. */
bool cf_meth_fail(struct meth *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Memory that lives until the next method (names built by the simulator, work lists). */
void *cf_meth_alloc(struct meth *m, size_t n);
/* Ready m for the next method (its arrays are kept); free them all. */
void cf_meth_reset(struct meth *m);
void cf_meth_free(struct meth *m);
/* Split the Code attribute (payload a) into m's fields. */
bool cf_parse_code(struct meth *m, const uint8_t *a, uint32_t alen);
/* Decode m->code into m->ins, m->idx and m->swt; every target must be an instruction. */
bool cf_decode_code(struct meth *m);

/* Does an instruction start at bci (or is bci the end of the code, when end_ok)? */
static inline bool at_insn(const struct meth *m, uint32_t bci, bool end_ok)
{
    return bci < m->len ? m->idx[bci] >= 0 : (end_ok && bci == m->len);
}
/* The new offset of the block of the instruction at original offset bci. */
static inline uint32_t map_start(const struct meth *m, uint32_t bci) { return m->ins[m->idx[bci]].start; }

/* ---------------------------------------------------------------------------------------
 * Verification types and the verifier's type state (sim.c).
 */
static inline const uint8_t *S(const char *s) { return (const uint8_t *)s; }

static inline struct vt vt_simple(int tag)
{
    struct vt v = {(uint8_t)tag, 0, 0, NULL};
    return v;
}
static inline struct vt vt_obj(const uint8_t *s, size_t n, uint16_t idx)
{
    struct vt v = {VT_OBJ, idx, (uint16_t)n, s};
    return v;
}
static inline bool vt_eq(const struct vt *a, const struct vt *b)
{
    if (a->tag != b->tag)
        return false;
    if (a->tag == VT_OBJ)
        return a->n == b->n && (a->n == 0 || memcmp(a->s, b->s, a->n) == 0);
    if (a->tag == VT_UNINIT)
        return a->u == b->u;
    return true;
}

struct state {
    struct vt *l, *s;
    uint32_t sp;
    bool uthis; /* flagThisUninit */
};

/* One field type at *p (not 'V'): its verification type; *slots = 1 or 2. */
bool cf_desc_type(const uint8_t **pp, const uint8_t *end, struct vt *out, int *slots);
/* The initial frame's locals as entries (m->init). */
bool cf_init_frame(struct meth *m);
/* Entries -> slots: long/double take two slots, the second Top. */
bool cf_entries_to_slots(struct meth *m, const struct vt *e, size_t ne, struct vt *slots, size_t cap,
                         uint32_t *n);
/* Simulate instruction k on st. */
bool cf_sim(struct meth *m, struct state *st, size_t k);
/* Constructors: m->cover, which instructions run with `this` initialized. */
bool cf_cover_init(struct meth *m);

/* ---------------------------------------------------------------------------------------
 * StackMapTable (frames.c).
 */
/* [java/lang/Throwable], the handlers' stack; its name pointer identifies it. */
extern const struct vt cf_vt_throwable;
/* Encode frames (entries, sorted by new offset) the compact way javac does. */
struct enc_frame {
    uint32_t off;
    const struct vt *l, *s;
    uint32_t nl, ns;
};
bool cf_encode_frames(struct meth *m, struct buf *b, const struct vt *init, size_t ninit,
                      const struct enc_frame *f, size_t nf);
/* Decode m->smt into whole frames (m->fr, entries in m->fv). */
bool cf_decode_smt(struct meth *m);
/* The frame (index into fr) at bci, or -1. */
long cf_frame_at(const struct meth *m, uint32_t bci);
/* A frame at instruction k + 1 from the state after k (a widened if). */
bool cf_frame_after(struct meth *m, size_t k);
/* The rewritten method's StackMapTable payload (hstart: the catch-all handler). */
bool cf_write_smt(struct meth *m, struct buf *out, uint32_t hstart, bool probes);

/* ---------------------------------------------------------------------------------------
 * Probes: sizes, layout, emission (emit.c); one method's Code (rewrite.c); native
 * wrappers (wrappers.c).
 */
/* Size of the instruction that pushes v (idx: its Integer constant, if it needs one). */
unsigned cf_push_int_size(int32_t v, uint16_t idx);
/* The hook an instruction probe calls, and the entry probe's. */
enum cf_hook cf_insn_hook(unsigned op);
enum cf_hook cf_entry_hook(const struct meth *m);
/* A constructor with one super(...)/this(...) call: superCall before it, ctorReady after. */
bool cf_has_ctor_probes(const struct meth *m);
/* Positions for the current widening; returns the end of the original code's blocks. */
uint64_t cf_layout(struct meth *m);
void cf_emit_entry(struct meth *m, struct buf *b);
void cf_emit_exit_hook(struct meth *m, struct buf *b, enum cf_hook h);
void cf_emit_exit(struct meth *m, struct buf *b);
/* The entry probe, then every block (cf_layout's positions). */
void cf_emit_code(struct meth *m, struct buf *b);
/* Write the method's rewritten Code attribute (a: the original payload) to out. */
bool cf_rewrite_code(struct meth *m, const uint8_t *a, uint32_t alen, struct buf *out);
/* Why a native method must not be wrapped, or NULL. attrs: the method's attributes_count. */
const char *cf_no_wrap_reason(struct cf *c, uint16_t access, const uint8_t *attrs, size_t alen);
/* Write the wrapper's Code attribute for native method m (name/desc/access set). */
bool cf_wrapper_code(struct meth *m, struct buf *out, uint16_t native_ref);

#endif
