/* jvmpidump — decode a JVMPI heap, object or monitor dump file, for tests and people.
 *
 *   jvmpidump heap LEVEL DUMPFILE [CLASSFILE]     a HEAP_DUMP buffer (begin..end)
 *   jvmpidump object DUMPFILE [CLASSFILE]         an OBJECT_DUMP buffer (level 2)
 *   jvmpidump monitor DUMPFILE                    a MONITOR_DUMP buffer
 *   jvmpidump --ids=4|8 ...                       ids (and pointer-sized fields) of that
 *                                                 width: 4 for a dump an i386 agent wrote
 *                                                 (default: this build's pointer size)
 *
 * CLASSFILE holds what an agent learns from CLASS_LOAD, one class a line:
 *   C <class id hex> <num_interfaces> <static types|-> <instance types|-> <name>
 * with types as signature chars in CLASS_LOAD's order ('L' for references). With it, class
 * dumps are walked and instance field values decoded (own fields, then the superclass's,
 * the superclass taken from the class dumps). Prints one line per record; the last line
 * is "OK <records> records, <bytes> bytes" or "BAD at offset N: reason" (exit 1).
 * Uses the shim's own decoder (shim/core/dumpcheck.c).
 */
#include "core/dumpcheck.h"
#include "jvmpi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cls {
    uint64_t id, super;
    int nif;
    char st[512], it[512], name[512];
};
static struct cls *classes;
static size_t ncls;
static int level;
static int idw = (int)sizeof(void *); /* the dump's id width: --ids */
static size_t nrec;

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

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static const unsigned char *print_value(char t, const unsigned char *p)
{
    int sz = dump_sig_size_w(t, idw);
    if (t == 'L' || t == '[') {
        uint64_t v = 0;
        if (idw == 4) {
            uint32_t v4;
            memcpy(&v4, p, 4);
            v = v4;
        } else {
            memcpy(&v, p, 8);
        }
        printf(" %c:%#" PRIx64, 'L', v);
    } else if (t == 'F') {
        uint32_t b = (uint32_t)be(p, 4);
        float f;
        memcpy(&f, &b, 4);
        printf(" F:%g", f);
    } else if (t == 'D') {
        uint64_t b = be(p, 8);
        double d;
        memcpy(&d, &b, 8);
        printf(" D:%g", d);
    } else if (t == 'C') {
        printf(" C:%" PRIu64, be(p, 2));
    } else {
        uint64_t v = be(p, sz);
        int64_t sv = sz == 1 ? (int8_t)v : sz == 2 ? (int16_t)v : sz == 4 ? (int32_t)v : (int64_t)v;
        printf(" %c:%" PRId64, t, t == 'Z' ? (int64_t)v : sv);
    }
    return p + sz;
}

static void pass1(void *ctx, const struct dump_record *r)
{
    (void)ctx;
    if (r->type == JVMPI_GC_CLASS_DUMP) {
        struct cls *c = find(r->id);
        if (c)
            c->super = r->id2;
    }
}

static void print_rec(void *ctx, const struct dump_record *r)
{
    (void)ctx;
    nrec++;
    if (level == 0) {
        printf("OBJ type=%d id=%#" PRIx64 "\n", r->type, r->id);
        return;
    }
    switch (r->type) {
    case JVMPI_GC_ROOT_STICKY_CLASS: printf("ROOT STICKY_CLASS id=%#" PRIx64 "\n", r->id); break;
    case JVMPI_GC_ROOT_MONITOR_USED: printf("ROOT MONITOR_USED id=%#" PRIx64 "\n", r->id); break;
    case JVMPI_GC_ROOT_JNI_GLOBAL: printf("ROOT JNI_GLOBAL id=%#" PRIx64 " ref=%#" PRIx64 "\n", r->id, r->id2); break;
    case JVMPI_GC_ROOT_NATIVE_STACK: printf("ROOT NATIVE_STACK id=%#" PRIx64 " env=%#" PRIx64 "\n", r->id, r->id2); break;
    case JVMPI_GC_ROOT_JNI_LOCAL: printf("ROOT JNI_LOCAL id=%#" PRIx64 " env=%#" PRIx64 " frame=%d\n", r->id, r->id2, (int)r->u4); break;
    case JVMPI_GC_ROOT_JAVA_FRAME: printf("ROOT JAVA_FRAME id=%#" PRIx64 " env=%#" PRIx64 " frame=%d\n", r->id, r->id2, (int)r->u4); break;
    case JVMPI_GC_CLASS_DUMP: {
        struct cls *c = find(r->id);
        printf("CLASS id=%#" PRIx64 " super=%#" PRIx64 " size=%u name=%s statics:", r->id, r->id2,
               r->u4, c ? c->name : "?");
        const unsigned char *p = r->data;
        for (size_t i = 0; c && strcmp(c->st, "-") && i < strlen(c->st); i++)
            if (level >= 2 || c->st[i] == 'L')
                p = print_value(c->st[i], p);
        printf("\n");
        break;
    }
    case JVMPI_GC_INSTANCE_DUMP: {
        struct cls *c = find(r->id2);
        printf("INSTANCE id=%#" PRIx64 " class=%#" PRIx64 " bytes=%u name=%s fields:", r->id, r->id2,
               r->u4, c ? c->name : "?");
        const unsigned char *p = r->data, *end = r->data + r->data_len;
        for (; c != NULL && p < end; c = find(c->super)) {
            if (strcmp(c->it, "-") == 0)
                continue;
            for (size_t i = 0; i < strlen(c->it) && p < end; i++)
                if (level >= 2 || c->it[i] == 'L')
                    p = print_value(c->it[i], p);
        }
        printf("\n");
        break;
    }
    case JVMPI_GC_OBJ_ARRAY_DUMP: {
        printf("OBJARRAY id=%#" PRIx64 " len=%u elemclass=%#" PRIx64 " elems:", r->id, r->u4, r->id2);
        for (uint32_t i = 0; i < r->u4; i++)
            print_value('L', r->data + i * (size_t)idw);
        printf("\n");
        break;
    }
    case JVMPI_GC_PRIM_ARRAY_DUMP: {
        static const char codes[] = "????ZCFDBSIJ";
        char t = r->elem_type >= 4 && r->elem_type <= 11 ? codes[r->elem_type] : '?';
        printf("PRIMARRAY id=%#" PRIx64 " len=%u type=%d elems:", r->id, r->u4, r->elem_type);
        const unsigned char *p = r->data;
        for (uint32_t i = 0; level >= 2 && i < r->u4; i++)
            p = print_value(t, p);
        printf("\n");
        break;
    }
    }
}

static uint64_t rd_id(const unsigned char *p)
{
    if (idw == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void print_mon(void *ctx, const struct dump_record *r)
{
    (void)ctx;
    nrec++;
    if (r->type == JVMPI_MONITOR_JAVA)
        printf("MONITOR JAVA object=%#" PRIx64, r->id);
    else
        printf("MONITOR RAW name=%#" PRIx64 " id=%#" PRIx64, (uint64_t)(uintptr_t)r->name, r->id);
    printf(" owner=%#" PRIx64 " entry=%u enter=%u:", r->id2, r->u4, r->n1);
    for (uint32_t i = 0; i < r->n1; i++) {
        uint64_t e = rd_id(r->list1 + i * (size_t)idw);
        printf(" %#" PRIx64, e);
    }
    printf(" notify=%u:", r->n2);
    for (uint32_t i = 0; i < r->n2; i++) {
        uint64_t e = rd_id(r->list2 + i * (size_t)idw);
        printf(" %#" PRIx64, e);
    }
    printf("\n");
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = malloc(cap);
    size_t k;
    while (p && (k = fread(p + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap)
            p = realloc(p, cap *= 2);
    }
    fclose(f);
    *len = n;
    return p;
}

static void load_classes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    char line[2048];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != 'C')
            continue;
        if (ncls == cap) {
            cap = cap ? cap * 2 : 256;
            classes = realloc(classes, cap * sizeof *classes);
        }
        struct cls *c = &classes[ncls];
        memset(c, 0, sizeof *c);
        if (sscanf(line, "C %" SCNx64 " %d %511s %511s %511s", &c->id, &c->nif, c->st, c->it,
                   c->name) >= 4)
            ncls++;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strncmp(argv[1], "--ids=", 6) == 0) {
        idw = atoi(argv[1] + 6);
        if (idw != 4 && idw != 8) {
            fprintf(stderr, "jvmpidump: %s: ids are 4 (i386) or 8 (x86-64) bytes\n", argv[1]);
            return 2;
        }
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: jvmpidump [--ids=4|8] heap LEVEL DUMP [CLASSES] | object DUMP [CLASSES] | monitor DUMP\n");
        return 2;
    }
    size_t len = 0, bad = 0;
    char msg[256] = "";
    int rc;
    if (strcmp(argv[1], "monitor") == 0) {
        unsigned char *p = slurp(argv[2], &len);
        rc = dump_walk_monitor_w(p, len, idw, print_mon, NULL, &bad, msg, sizeof msg);
    } else {
        bool heap = strcmp(argv[1], "heap") == 0;
        int a = heap ? 3 : 2;
        level = heap ? atoi(argv[2]) : 2;
        if (argc > a + 1)
            load_classes(argv[a + 1]);
        unsigned char *p = slurp(argv[a], &len);
        rc = dump_walk_heap_w(p, len, idw, level, lookup, NULL, pass1, NULL, &bad, msg, sizeof msg);
        if (rc == 0)
            rc = dump_walk_heap_w(p, len, idw, level, lookup, NULL, print_rec, NULL, &bad, msg, sizeof msg);
    }
    if (rc != 0) {
        printf("BAD at offset %zu: %s\n", bad, msg);
        return 1;
    }
    printf("OK %zu records, %zu bytes\n", nrec, len);
    return 0;
}
