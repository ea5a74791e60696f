/* mkseed — cut a real JVMPI dump into a small seed for fuzz/fuzz_dumpcheck.c.
 *
 *   mkseed KIND DUMPFILE CLASSFILE OUT [PER_TYPE [MAX_RECORD]]
 *     KIND       heap0 | heap1 | heap2 | object | monitor
 *     CLASSFILE  the CLASS_LOAD facts in tests/tools/jvmpidump's format ('-' for none)
 *     PER_TYPE   how many records of each record type to keep (default 4)
 *     MAX_RECORD skip records longer than this many bytes (default 256)
 *
 * A dump of a whole JDK heap is megabytes; a fuzzer wants a few KB that still cover every
 * record type. So the dump is walked with the shim's own decoder, and the first PER_TYPE
 * records of each type (no longer than MAX_RECORD) are kept, in dump order. Records are
 * self-contained, so their concatenation is again a well-formed dump. OUT gets the
 * harness's input layout: the kind byte, the class table (only the classes whose
 * CLASS_DUMP was kept) and the records. The seed is checked by walking it again.
 */
#include "core/dumpcheck.h"
#include "jvmpi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTR sizeof(void *)

struct cls {
    uint64_t id;
    int nif;
    char st[512];
};
static struct cls *classes;
static size_t ncls;

static struct cls *find(uint64_t id)
{
    for (size_t i = 0; i < ncls; i++)
        if (classes[i].id == id)
            return &classes[i];
    return NULL;
}

static bool lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    (void)ctx;
    struct cls *c = find(id);
    if (c == NULL)
        return false;
    out->num_interfaces = c->nif;
    out->n_statics = strcmp(c->st, "-") ? (int)strlen(c->st) : 0;
    out->static_types = c->st;
    return true;
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die(path);
    if (fseek(f, 0, SEEK_END) != 0)
        die(path);
    long n = ftell(f);
    rewind(f);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    if (p == NULL || (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n))
        die(path);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static void load_classes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        die(path);
    char line[2048], it[512], name[512];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != 'C')
            continue;
        if (ncls == cap) {
            cap = cap ? cap * 2 : 256;
            classes = realloc(classes, cap * sizeof *classes);
            if (classes == NULL)
                die("realloc");
        }
        struct cls *c = &classes[ncls];
        if (sscanf(line, "C %" SCNx64 " %d %511s %511s %511s", &c->id, &c->nif, c->st, it, name) >= 4)
            ncls++;
    }
    fclose(f);
}

static size_t offs[1 << 22];
static int types[1 << 22];
static size_t nrec;

static void note(void *ctx, const struct dump_record *r)
{
    (void)ctx;
    if (nrec < sizeof offs / sizeof offs[0]) {
        offs[nrec] = r->offset;
        types[nrec] = r->type;
        nrec++;
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: mkseed heap0|heap1|heap2|object|monitor DUMP CLASSES|- OUT [PER_TYPE [MAX_RECORD]]\n");
        return 2;
    }
    const char *k = argv[1];
    int kind = strcmp(k, "heap0") == 0 ? 0 : strcmp(k, "heap1") == 0 ? 1 : strcmp(k, "heap2") == 0 ? 2
             : strcmp(k, "object") == 0 ? 3 : strcmp(k, "monitor") == 0 ? 4 : -1;
    if (kind < 0) {
        fprintf(stderr, "mkseed: unknown kind %s\n", k);
        return 2;
    }
    int per_type = argc > 5 ? atoi(argv[5]) : 4;
    size_t max_rec = argc > 6 ? (size_t)atol(argv[6]) : 256;
    if (strcmp(argv[3], "-") != 0)
        load_classes(argv[3]);
    size_t len, bad = 0;
    char msg[256] = "";
    unsigned char *p = slurp(argv[2], &len);
    int level = kind == 3 ? 2 : kind;
    int rc = kind == 4 ? dump_walk_monitor(p, len, note, NULL, &bad, msg, sizeof msg)
                       : dump_walk_heap(p, len, level, lookup, NULL, note, NULL, &bad, msg, sizeof msg);
    if (rc != 0 || nrec >= sizeof offs / sizeof offs[0]) {
        fprintf(stderr, "mkseed: %s does not decode: at %zu: %s\n", argv[2], bad, msg);
        return 1;
    }

    /* Keep the first per_type short records of each type. */
    int kept_of[256] = {0};
    unsigned char *seed = malloc(len + 1), *tab = malloc(1 + 256 * (PTR + 2 + 512));
    if (seed == NULL || tab == NULL)
        die("malloc");
    size_t sl = 0, tl = 1;
    int nclass = 0;
    for (size_t i = 0; i < nrec; i++) {
        size_t end = i + 1 < nrec ? offs[i + 1] : len, n = end - offs[i];
        int t = types[i] & 0xff;
        if (n > max_rec || kept_of[t] >= per_type)
            continue;
        if (kind != 4 && level > 0 && types[i] == JVMPI_GC_CLASS_DUMP) {
            uint64_t id = 0;
            memcpy(&id, p + offs[i] + 1, PTR);
            struct cls *c = find(id);
            size_t ns = strcmp(c->st, "-") ? strlen(c->st) : 0;
            if (nclass == 255 || c->nif > 255 || ns > 255)
                continue;
            memcpy(tab + tl, &id, PTR);
            tab[tl + PTR] = (unsigned char)c->nif;
            tab[tl + PTR + 1] = (unsigned char)ns;
            memcpy(tab + tl + PTR + 2, c->st, ns);
            tl += PTR + 2 + ns;
            nclass++;
        }
        kept_of[t]++;
        memcpy(seed + sl, p + offs[i], n);
        sl += n;
    }
    tab[0] = (unsigned char)nclass;

    FILE *f = fopen(argv[4], "wb");
    if (f == NULL)
        die(argv[4]);
    unsigned char kb = (unsigned char)kind;
    fwrite(&kb, 1, 1, f);
    if (kind >= 1 && kind <= 3)
        fwrite(tab, 1, tl, f);
    fwrite(seed, 1, sl, f);
    if (fclose(f) != 0)
        die(argv[4]);

    nrec = 0;
    rc = kind == 4 ? dump_walk_monitor(seed, sl, note, NULL, &bad, msg, sizeof msg)
                   : dump_walk_heap(seed, sl, level, lookup, NULL, note, NULL, &bad, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "mkseed: the seed does not decode: at %zu: %s\n", bad, msg);
        return 1;
    }
    printf("%s: %s, %zu records, %d classes, %zu bytes\n", argv[4], k, nrec, nclass,
           1 + (kind >= 1 && kind <= 3 ? tl : 0) + sl);
    return 0;
}
