/* dumpbuf.h — the byte-record writer for JVMPI dumps (dumpbuf.c). Pure C. */
#ifndef JVMPISHIM_DUMPBUF_H
#define JVMPISHIM_DUMPBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dumpbuf {
    unsigned char *p;
    size_t len, cap;
    bool oom;           /* an allocation failed: the content is incomplete */
};

void db_init(struct dumpbuf *b, size_t initial);
void db_free(struct dumpbuf *b);
/* Make room for n more bytes (capacity doubles); false, with oom set, when that fails. */
bool db_grow(struct dumpbuf *b, size_t n);
/* Reserve n bytes to fill in later (e.g. a length); returns their offset. */
size_t db_reserve(struct dumpbuf *b, size_t n);
void db_put_u4_at(struct dumpbuf *b, size_t off, uint32_t v);

/* The writers are inline: a heap dump calls them several times per object, and the fast
 * path (room left) is a bounds check and a copy. */
static inline bool db_room(struct dumpbuf *b, size_t n)
{
    return (b->cap - b->len >= n && !b->oom) || db_grow(b, n);
}

static inline void db_bytes(struct dumpbuf *b, const void *src, size_t n)
{
    if (!db_room(b, n))
        return;
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* JVMPI dump values: u1/u2/u4/u8 and primitives big-endian (Java order); ids, JNIEnv* and
 * other pointers in native byte order at native width. */
static inline void db_u1(struct dumpbuf *b, uint8_t v)
{
    if (!db_room(b, 1))
        return;
    b->p[b->len++] = v;
}

static inline void db_u2(struct dumpbuf *b, uint16_t v)
{
    unsigned char x[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    db_bytes(b, x, 2);
}

static inline void db_u4(struct dumpbuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    db_bytes(b, x, 4);
}

static inline void db_u8(struct dumpbuf *b, uint64_t v)
{
    db_u4(b, (uint32_t)(v >> 32));
    db_u4(b, (uint32_t)v);
}

static inline void db_ptr(struct dumpbuf *b, const void *v)
{
    db_bytes(b, &v, sizeof v);
}

#endif
