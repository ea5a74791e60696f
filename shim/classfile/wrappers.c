/* wrappers.c — native method wrappers: which natives may be wrapped, and the wrapper.
 *
 * With CF_WRAP_NATIVES, native foo becomes a non-native foo of a fixed shape (entry
 * probe, load the arguments, call the native renamed PREFIXfoo, exit probe, return; a
 * catch-all posts the exit and rethrows), and classfile.c adds the renamed native. Some
 * natives must stay as they are, and cf_no_wrap_reason says why: the VM binds intrinsics
 * by name, caller-sensitive ones would see the wrapper as their caller, MethodHandle and
 * VarHandle natives are signature-polymorphic, and interfaces cannot hold them. Reading
 * those reasons needs a walk over the annotations, done here with a depth limit.
 */
#include "classfile/internal.h"

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
const char *cf_no_wrap_reason(struct cf *c, uint16_t access, const uint8_t *attrs, size_t alen)
{
    static const char *const mh[] = {"java/lang/invoke/MethodHandle", "java/lang/invoke/VarHandle"};
    if (c->access & ACC_INTERFACE)
        return "native method in an interface";
    for (int k = 0; k < 2; k++)
        if (c->this_len == strlen(mh[k]) && memcmp(c->this_name, mh[k], c->this_len) == 0 &&
            (access & ACC_VARARGS))
            return "signature-polymorphic method";
    const uint8_t *p = attrs;
    (void)alen; /* attrs was bounds-checked by cf_parse_class */
    unsigned na = be16(p);
    p += 2;
    for (unsigned k = 0; k < na; k++) {
        uint32_t l = be32(p + 2);
        const uint8_t *a = p + 6, *ae = a + l;
        if (cf_utf8_is(c, be16(p), "RuntimeVisibleAnnotations") && l >= 2) {
            unsigned n = be16(a);
            a += 2;
            for (unsigned j = 0; j < n; j++) {
                if (ae - a < 2)
                    break;
                uint16_t ti = be16(a);
                /* A wrapper frame between a caller-sensitive native and its caller changes
                 * the caller it sees; intrinsic natives are bound by the VM by name (some
                 * have no JNI implementation at all) and would lose the intrinsic. */
                if (cf_utf8_is(c, ti, "Ljdk/internal/reflect/CallerSensitive;") ||
                    cf_utf8_is(c, ti, "Lsun/reflect/CallerSensitive;"))
                    return "caller-sensitive native";
                if (cf_utf8_is(c, ti, "Ljdk/internal/vm/annotation/IntrinsicCandidate;") ||
                    cf_utf8_is(c, ti, "Ljdk/internal/HotSpotIntrinsicCandidate;"))
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
bool cf_wrapper_code(struct meth *m, struct buf *out, uint16_t native_ref)
{
    struct cf *c = m->c;
    m->mid_idx = 0;
    if (m->id < -32768 || m->id > 32767 ? !(m->mid_idx = cf_pool_int(c, m->id)) : false)
        return false;
    m->mid_size = (uint8_t)cf_push_int_size(m->id, m->mid_idx);
    m->is_init = false;
    m->flags = CF_METHOD_PROBES;
    if (!cf_init_frame(m))
        return false;
    /* argument slots and return type */
    const uint8_t *d = m->desc + 1, *end = m->desc + m->desc_n;
    uint32_t slots = m->is_static ? 0 : 1;
    struct buf code = {0};
    cf_emit_entry(m, &code);
    uint32_t body = (uint32_t)code.len;
    if (!m->is_static)
        b_u1(&code, 0x2a);
    while (d < end && *d != ')') {
        struct vt v;
        int s;
        if (!cf_desc_type(&d, end, &v, &s)) {
            cf_buf_free(&code);
            return cf_meth_fail(m, "bad method descriptor");
        }
        emit_load(&code, v.tag, slots);
        slots += (uint32_t)s;
    }
    if (slots > 255 || d >= end) {
        cf_buf_free(&code);
        return cf_meth_fail(m, "bad method descriptor");
    }
    d++;
    b_u1(&code, m->is_static ? 0xb8 : 0xb7);
    b_u2(&code, native_ref);
    cf_emit_exit(m, &code);
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
    cf_emit_exit(m, &code);
    b_u1(&code, 0xbf);
    unsigned ms = slots > rslots + 1 ? slots : rslots + 1;
    if (ms < 2)
        ms = 2;

    b_u2(out, c->code_name ? c->code_name : (c->code_name = cf_pool_utf8(c, "Code", 4)));
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
        b_u2(out, c->smt_name ? c->smt_name : (c->smt_name = cf_pool_utf8(c, "StackMapTable", 13)));
        size_t sp = out->len;
        b_u4(out, 0);
        struct enc_frame ef = {hstart, NULL, &cf_vt_throwable, 0, 1};
        if (!cf_encode_frames(m, out, m->init, m->ninit, &ef, 1)) {
            cf_buf_free(&code);
            return false;
        }
        b_set_u4(out, sp, (uint32_t)(out->len - sp - 4));
    } else {
        b_u2(out, 0);
    }
    b_set_u4(out, lp, (uint32_t)(out->len - lp - 4));
    bool oom = code.oom;
    cf_buf_free(&code);
    if (oom || out->oom)
        return cf_meth_fail(m, "out of memory");
    return !c->failed;
}
