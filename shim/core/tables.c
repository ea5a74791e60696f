/* tables.c — big tables filled from records in random order: huge pages, region order.
 *
 * The id index (ids.c) and a dump's kept facts (memory/facts.c) are open-addressing tables
 * of tens of megabytes, filled from a list of records whose keys come in random order (a
 * tag map's, or hashed from a heap walk's). Written so, every insertion takes a cache and a
 * TLB miss, which was most of the shim's own time in building them. Here: their memory, in
 * huge pages where the kernel gives them on request, and a counting sort of the records by
 * the table region they go to, so that inserting them in that order fills the table region
 * by region. Pure C, no JVM: tests/unit/test_facts.c runs it.
 */
#include "core/shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Below 2 MB a huge page cannot help; above, an anonymous mapping is zero-filled by the
 * kernel as it is touched, 2 MB at a time once advised. */
#define TABLE_HUGE ((size_t)2 << 20)

void *shim_table_alloc(size_t bytes)
{
    if (bytes < TABLE_HUGE)
        return calloc(1, bytes ? bytes : 1);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it, 4 KB pages */
#endif
    return p;
}

void shim_table_free(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes < TABLE_HUGE)
        free(p);
    else
        munmap(p, bytes);
}

/* 1024 regions: at 4 M objects (a 64-256 MB table) each is 64-256 KB, within a core's cache. */
#define REGION_BITS 10

bool shim_sort_by_region(void *dst, const void *src, size_t n, size_t elem, size_t cap,
                         size_t (*slot)(jlong key, size_t cap))
{
    size_t *start = calloc(((size_t)1 << REGION_BITS) + 1, sizeof *start);
    if (start == NULL)
        return false;
    unsigned log2cap = 0;
    while (((size_t)1 << log2cap) < cap)
        log2cap++;
    unsigned shift = log2cap > REGION_BITS ? log2cap - REGION_BITS : 0;
    const char *in = src;
    char *out = dst;
    for (size_t i = 0; i < n; i++) {
        jlong key;
        memcpy(&key, in + i * elem, sizeof key);
        start[(slot(key, cap) >> shift) + 1]++;
    }
    for (size_t b = 1; b <= ((size_t)1 << REGION_BITS); b++)
        start[b] += start[b - 1];
    for (size_t i = 0; i < n; i++) {
        jlong key;
        memcpy(&key, in + i * elem, sizeof key);
        memcpy(out + start[slot(key, cap) >> shift]++ * elem, in + i * elem, elem);
    }
    free(start);
    return true;
}
