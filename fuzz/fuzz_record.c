/* fuzz_record.c — libFuzzer harness for jvmpitrace's reader of record= files and the
 * commands built on it (tools/jvmpitrace/: reader.c, names.c, check.c, diff.c).
 *
 * The input is a whole file. It is read twice: as it is, and with the CRC of every whole
 * block made right, so that the mutations inside blocks reach the record decoder instead of
 * stopping at the checksum. Each time it is copied to a buffer of exactly its size (ASan
 * reports any read past it), opened, read record by record in sequence order with every record formatted
 * as `jvmpitrace print` does, then checked (`check`) and compared with itself (`diff`).
 * Requirements besides not crashing: a status other than OK comes with a message and an
 * offset inside the file; the merged records come in non-decreasing sequence order; every
 * string or byte field lies inside the file; a file compared with itself is the same
 * (unless it could not be read whole); check answers 0, 1 or 2.
 */
#include "core/recfmt.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond, ...)                                                              \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_record: %s: ", #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            abort();                                                                    \
        }                                                                               \
    } while (0)

static FILE *devnull;
static unsigned sum; /* keeps the reads of every field byte */

static void touch(const unsigned char *base, size_t n, const struct tr_field *f, const struct tr_val *v)
{
    if (f->type == 's' || f->type == 'b') {
        if (v->null)
            return;
        REQUIRE(v->s >= base && v->len <= n && (size_t)(v->s - base) <= n - v->len, "field %s outside the file",
                f->name);
        for (size_t i = 0; i < v->len; i++)
            sum += v->s[i];
    } else if (f->type == '[' && !v->null) {
        for (size_t j = 0; j < v->n; j++)
            for (int k = 0; k < f->nsub; k++)
                touch(base, n, &f->sub[k], &v->items[j * (size_t)f->nsub + (size_t)k]);
    }
}

/* Recompute the CRC of every block the framing delimits. */
static void fix_crcs(unsigned char *p, size_t size)
{
    size_t off = REC_MAGIC_LEN;
    while (size >= REC_BLOCK_HDR && off <= size - REC_BLOCK_HDR) {
        uint32_t len = (uint32_t)p[off + 1] | (uint32_t)p[off + 2] << 8 | (uint32_t)p[off + 3] << 16 |
                       (uint32_t)p[off + 4] << 24;
        if (len > size - off - REC_BLOCK_HDR)
            return;
        uint32_t crc = rec_crc32c(0, p + off + REC_BLOCK_HDR, len);
        for (int i = 0; i < 4; i++)
            p[off + 5 + i] = (unsigned char)(crc >> (8 * i));
        off += REC_BLOCK_HDR + len;
    }
}

static void one(const uint8_t *data, size_t size, bool fix)
{
    unsigned char *p = malloc(size ? size : 1);
    REQUIRE(p != NULL, "malloc");
    memcpy(p, data, size);
    if (fix)
        fix_crcs(p, size);
    struct tr_file *f = tr_open_mem(p, size, "fuzz");
    REQUIRE(f != NULL, "out of memory");
    if (f->fatal[0] != '\0') {
        tr_close(f);
        free(p);
        return;
    }
    if (f->status != TR_OK)
        REQUIRE(f->err[0] != '\0' && f->err_off < size, "status %d without a place: %zu %s", f->status,
                f->err_off, f->err);

    struct tr_names n;
    tr_names_load(f, &n);
    struct tr_iter *it = tr_iter_new(f);
    REQUIRE(it != NULL, "iterator");
    struct tr_rec r;
    uint64_t last = 0;
    static char line[1 << 16];
    while (tr_next(it, &r)) {
        REQUIRE(r.seq >= last, "sequence %llu after %llu", (unsigned long long)r.seq, (unsigned long long)last);
        last = r.seq;
        REQUIRE(r.stream < f->nstreams && r.offset < size, "record outside the file");
        for (int i = 0; i < r.type->nf; i++)
            touch(p, size, &r.type->f[i], &r.v[i]);
        tr_format(f, &n, &r, true, line, sizeof line);
        REQUIRE(memchr(line, '\0', sizeof line) != NULL, "unterminated line");
    }
    tr_iter_free(it);
    tr_names_free(&n);

    struct check_opts co = {.out = devnull, .max_per_rule = 3};
    int rc = tr_check(f, &co);
    REQUIRE(rc == 0 || rc == 1 || rc == 2, "check answered %d", rc);
    struct diff_opts o = {.out = devnull, .max_lines = 5, .context = 2, .ignore_jdk = size & 1};
    rc = tr_diff(f, f, &o);
    REQUIRE(rc == 0 || f->status != TR_OK, "a file differs from itself (%d)", rc);
    tr_close(f);
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (devnull == NULL)
        devnull = fopen("/dev/null", "w");
    one(data, size, false);
    one(data, size, true);
    return 0;
}
