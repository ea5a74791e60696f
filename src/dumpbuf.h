/* dumpbuf.h — the byte-record writer for JVMPI dumps (dumpbuf.c). Pure C. */
#ifndef JVMPISHIM_DUMPBUF_H
#define JVMPISHIM_DUMPBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dumpbuf {
    unsigned char *p;
    size_t len, cap;
    bool oom;           /* an allocation failed: the content is incomplete */
};

void db_init(struct dumpbuf *b, size_t initial);
void db_free(struct dumpbuf *b);
/* JVMPI dump values: u1/u2/u4/u8 and primitives big-endian (Java order); ids, JNIEnv* and
 * other pointers in native byte order at native width. */
void db_u1(struct dumpbuf *b, uint8_t v);
void db_u2(struct dumpbuf *b, uint16_t v);
void db_u4(struct dumpbuf *b, uint32_t v);
void db_u8(struct dumpbuf *b, uint64_t v);
void db_ptr(struct dumpbuf *b, const void *v);
void db_bytes(struct dumpbuf *b, const void *src, size_t n);
/* Reserve n bytes to fill in later (e.g. a length); returns their offset. */
size_t db_reserve(struct dumpbuf *b, size_t n);
void db_put_u4_at(struct dumpbuf *b, size_t off, uint32_t v);

#endif
