/* parse.c — the class file's structure: header, version, pool, members, attributes.
 *
 * One pass over the input checks that every count and length stays inside it and records
 * where the parts are (the pool's end, methods_count, the class attributes); nothing is
 * decoded further here. After it, the rest of the rewriter may walk the methods and their
 * attribute tables without bounds checks of their own. Errors go to the class's single
 * message (cf_fail): the first one wins, so a failure deep inside keeps its own words.
 */
#include "classfile/internal.h"

#include <stdarg.h>
#include <stdio.h>

#define CF_MAX_MAJOR 69 /* JDK 25 */

void cf_fail(struct cf *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
}

/* Skip an attributes table at *pos (u2 count, then name/u4 length/bytes). */
bool cf_skip_attrs(struct cf *c, size_t *pos, const char *where)
{
    if (c->len - *pos < 2) {
        cf_fail(c, "truncated in %s", where);
        return false;
    }
    unsigned n = be16(c->in + *pos);
    *pos += 2;
    for (unsigned k = 0; k < n; k++) {
        if (c->len - *pos < 6) {
            cf_fail(c, "truncated in an attribute of %s", where);
            return false;
        }
        uint32_t al = be32(c->in + *pos + 2);
        *pos += 6;
        if (c->len - *pos < al) {
            cf_fail(c, "truncated in an attribute of %s", where);
            return false;
        }
        *pos += al;
    }
    return true;
}
/* fields or methods: u2 count, each u2 access, u2 name, u2 desc, attributes. */
static bool skip_members(struct cf *c, size_t *pos, const char *what)
{
    if (c->len - *pos < 2) {
        cf_fail(c, "truncated at %s_count", what);
        return false;
    }
    unsigned n = be16(c->in + *pos);
    *pos += 2;
    for (unsigned k = 0; k < n; k++) {
        if (c->len - *pos < 6) {
            cf_fail(c, "truncated in %s %u", what, k);
            return false;
        }
        *pos += 6;
        if (!cf_skip_attrs(c, pos, what))
            return false;
    }
    return true;
}

bool cf_parse_class(struct cf *c)
{
    const uint8_t *in = c->in;
    if (c->len < 10) {
        cf_fail(c, "truncated class file header (%zu bytes)", c->len);
        return false;
    }
    if (be32(in) != 0xCAFEBABEu) {
        cf_fail(c, "bad magic 0x%08x", be32(in));
        return false;
    }
    c->minor = be16(in + 4);
    c->major = be16(in + 6);
    if (c->major < 45 || c->major > CF_MAX_MAJOR) {
        cf_fail(c, "unsupported class file version %u.%u", c->major, c->minor);
        return false;
    }
    c->cp_n = be16(in + 8);
    if (c->cp_n == 0) {
        cf_fail(c, "constant_pool_count is 0");
        return false;
    }
    c->next_idx = c->cp_n;
    if (!cf_pool_parse(c))
        return false;
    size_t pos = c->cp_end;
    if (c->len - pos < 8) {
        cf_fail(c, "truncated after the constant pool");
        return false;
    }
    c->access = be16(in + pos);
    c->this_class = be16(in + pos + 2);
    if (!cp_class_name(c, c->this_class, &c->this_name, &c->this_len)) {
        cf_fail(c, "this_class %u is not a Class entry", c->this_class);
        return false;
    }
    unsigned nif = be16(in + pos + 6);
    pos += 8;
    if (c->len - pos < 2 * (size_t)nif) {
        cf_fail(c, "truncated in interfaces");
        return false;
    }
    pos += 2 * (size_t)nif;
    if (!skip_members(c, &pos, "field"))
        return false;
    c->methods_pos = pos;
    if (!skip_members(c, &pos, "method"))
        return false;
    c->attrs_pos = pos;
    if (!cf_skip_attrs(c, &pos, "class attributes"))
        return false;
    if (pos != c->len) {
        cf_fail(c, "%zu extra bytes at the end of the class file", c->len - pos);
        return false;
    }
    return true;
}
