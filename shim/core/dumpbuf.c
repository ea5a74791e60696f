/* dumpbuf.c — a growable byte buffer for JVMPI dump records.
 *
 * Capacity doubles, so building a dump of n bytes costs O(n) copies in all (no quadratic
 * growth on big heaps). Encoding follows HotSpot's dumps (reference-behavior.md §4.1):
 * numbers and primitive values big-endian, ids and pointers native. An allocation failure
 * sets oom and drops further writes; the caller reports it instead of a truncated dump.
 * The writers themselves are inline in dumpbuf.h; only growth lives here.
 */
#include "core/dumpbuf.h"

#include <stdlib.h>
#include <string.h>

void db_init(struct dumpbuf *b, size_t initial)
{
    b->len = 0;
    b->oom = false;
    b->cap = initial ? initial : 4096;
    b->p = malloc(b->cap);
    if (b->p == NULL) {
        b->cap = 0;
        b->oom = true;
    }
}

void db_free(struct dumpbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

bool db_grow(struct dumpbuf *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->len + n <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    unsigned char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

size_t db_reserve(struct dumpbuf *b, size_t n)
{
    size_t off = b->len;
    if (db_room(b, n)) {
        memset(b->p + b->len, 0, n);
        b->len += n;
    }
    return off;
}

void db_put_u4_at(struct dumpbuf *b, size_t off, uint32_t v)
{
    if (b->oom || off + 4 > b->len)
        return;
    b->p[off] = (unsigned char)(v >> 24);
    b->p[off + 1] = (unsigned char)(v >> 16);
    b->p[off + 2] = (unsigned char)(v >> 8);
    b->p[off + 3] = (unsigned char)v;
}
