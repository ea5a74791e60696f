/* buf.c — the growable output buffer and array growth.
 *
 * Everything the rewriter writes (the new constant pool entries, the methods, the whole
 * class) goes through struct buf. Its writers are inline in internal.h, since they run for
 * every byte emitted; only the slow path, growing, is here. A buffer that cannot grow is
 * marked out of memory and drops the writes that follow, so the emitters need no error
 * path of their own: their caller checks `oom` once at the end.
 */
#include "classfile/internal.h"

#include <stdlib.h>

/* A class file bigger than this is a runaway, not a class: 1 TiB, 1 GiB in 32 bits. */
#if SIZE_MAX > 0xFFFFFFFFu
#define BUF_CAP_MAX ((size_t)1 << 40)
#else
#define BUF_CAP_MAX ((size_t)1 << 30)
#endif

/* Make room for n more bytes. Out of memory, the buffer stops growing and is marked: the
 * writes that follow are dropped, and the caller checks oom once at the end. */
bool cf_buf_grow(struct buf *b, size_t n)
{
    if (b->oom)
        return false;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > BUF_CAP_MAX) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void cf_buf_free(struct buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Grow a malloc'd array to hold at least n elements; false on overflow or no memory. */
bool cf_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < n)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return false;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = c;
    return true;
}
