/* exit_census.c — a memory profiler that counts the heap by class when the program ends
 * (tests/it/dumps/dump_unreachable.sh, workload tests/java/ExitCensus.java).
 *
 * In its JVM_SHUT_DOWN handler (after main returned) it asks for a heap dump and counts what
 * the heap holds, by class name, as the memory profilers of JDK 1.2-1.4 did; on HotSpot the
 * dump was a walk of every object in the heap, so garbage not yet collected was counted too.
 *  - level=0 (default): a level-0 HEAP_DUMP; then, with GC disabled, for each record
 *    RequestEvent(OBJECT_ALLOC, id) to learn its class, array kind and size, and
 *    RequestEvent(CLASS_LOAD) for each class it has not met yet;
 *  - level=1 or level=2: that level's dump, decoded as the JVMPI spec lays it out (roots,
 *    then class, instance, object-array and primitive-array dumps; class dumps and instance
 *    values read with what CLASS_LOAD says of each class, asked for when unknown), counting
 *    instance dumps by their class and arrays by element type.
 * The dump's bytes are written to heapL.dump in the directory given by dir=PATH (default
 * "."), and every class it learned to classes.txt there (the format build/jvmpidump reads:
 * "C <id hex> <num_interfaces> <static types|-> <instance types|-> <name>").
 * Then, still with GC disabled, RequestEvent(OBJECT_DUMP) of the first object of each of the
 * workload's classes (prefix=P, default ExitCensus) met in the dump, written to
 * obj_<class>.dump (its length read from the record itself: HotSpot left data_len unset).
 * Option track: OBJECT_ALLOC is enabled from JVM_OnLoad and the agent remembers the first
 * object allocated of each class; OBJECT_DUMP then asks for that one (for the workload's
 * classes), whether the dump listed it or not.
 *
 * Output ("exit_census: ..."): "census NAME count=N bytes=B" per class whose name starts with
 * the prefix (bytes only at level 0, from OBJECT_ALLOC's size), "census total records=N
 * objects=N classes=N requests=N", "object_dump NAME id=ID rc=RC bytes=N file=F" (bytes=0:
 * no event), FAIL lines for a dump or census request that fails or a record the spec does
 * not have, and "done fails=N".
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "exit_census"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 30
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

#define IDSZ ((int)sizeof(void *))

static int opt_level, opt_track;
static struct pmap first_alloc; /* option track: class id -> its first object */
static char opt_dir[1024] = ".", opt_prefix[128] = "ExitCensus";

struct cls {
    jobjectID id;
    char *name;
    int nif;
    char *stypes, *itypes; /* first signature char per field, CLASS_LOAD order */
    long count, bytes;
    jobjectID first;       /* the first object of this class met in the dump */
};
static struct pmap classes; /* class id -> struct cls */
static FILE *classes_file;

/* The dump, copied in the HEAP_DUMP handler; OBJECT_DUMP's record likewise. */
static unsigned char *dump;
static size_t dump_len;
static unsigned char *odump;
static size_t odump_len;
static int got_dump, got_odump, got_alloc, got_load;
static jobjectID want_obj, alloc_class;
static jint alloc_is_array, alloc_size;
static long n_requests, n_records, n_objects;

/* Counts of arrays and of objects without a class, by name. */
struct bucket {
    char name[160];
    long count, bytes;
};
static struct bucket buckets[64];
static int nbuckets;

static struct bucket *bucket(const char *name)
{
    for (int i = 0; i < nbuckets; i++)
        if (strcmp(buckets[i].name, name) == 0)
            return &buckets[i];
    if (nbuckets == (int)(sizeof buckets / sizeof buckets[0]))
        return &buckets[nbuckets - 1];
    snprintf(buckets[nbuckets].name, sizeof buckets[0].name, "%s", name);
    return &buckets[nbuckets++];
}

static char type_char(const char *sig) { return sig == NULL ? '?' : (sig[0] == '[' ? 'L' : sig[0]); }

static int sig_size(char c)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return IDSZ;
    }
}

static int ty_size(int ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return IDSZ;
    default: return -1;
    }
}

static const char *ty_name(int ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: return "boolean[]";
    case JVMPI_BYTE: return "byte[]";
    case JVMPI_CHAR: return "char[]";
    case JVMPI_SHORT: return "short[]";
    case JVMPI_INT: return "int[]";
    case JVMPI_FLOAT: return "float[]";
    case JVMPI_LONG: return "long[]";
    case JVMPI_DOUBLE: return "double[]";
    default: return "?[]";
    }
}

static char *types_of(JVMPI_Field *f, int n)
{
    char *s = malloc((size_t)n + 1);
    for (int i = 0; i < n; i++)
        s[i] = type_char(f[i].field_signature);
    s[n] = 0;
    return s;
}

static void on_class_load(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.class_load.class_id;
    if (want_obj == cid)
        got_load = 1;
    if (pm_find(&classes, cid) != NULL)
        return;
    struct cls *c = calloc(1, sizeof *c);
    c->id = cid;
    c->name = strdup(S(ev->u.class_load.class_name));
    c->nif = ev->u.class_load.num_interfaces;
    c->stypes = types_of(ev->u.class_load.statics, ev->u.class_load.num_static_fields);
    c->itypes = types_of(ev->u.class_load.instances, ev->u.class_load.num_instance_fields);
    pm_put(&classes, cid, c);
    if (classes_file)
        fprintf(classes_file, "C %lx %d %s %s %s\n", (unsigned long)(uintptr_t)cid, c->nif,
                c->stypes[0] ? c->stypes : "-", c->itypes[0] ? c->itypes : "-", c->name[0] ? c->name : "?");
}

static struct cls *class_of(jobjectID cid)
{
    struct cls *c = pm_find(&classes, cid);
    if (c != NULL || cid == NULL)
        return c;
    n_requests++;
    want_obj = cid;
    got_load = 0;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid);
    want_obj = NULL;
    c = pm_find(&classes, cid);
    if (rc != JVMPI_SUCCESS || c == NULL)
        FAIL("RequestEvent(CLASS_LOAD, %p): rc=%d event=%d", (void *)cid, (int)rc, got_load);
    return c;
}

static jobjectID get_id(const unsigned char *p)
{
    jobjectID id;
    memcpy(&id, p, sizeof id);
    return id;
}

static uint32_t get_u4(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int mine(const char *name) { return strncmp(name, opt_prefix, strlen(opt_prefix)) == 0; }

static void count_object(struct cls *c, jobjectID id, long size)
{
    n_objects++;
    c->count++;
    c->bytes += size;
    if (c->first == NULL)
        c->first = id;
}

/* ---- level 0: ask about each record ---- */

static void census_level0(void)
{
    for (size_t off = 0; off + 1 + IDSZ <= dump_len; off += 1 + IDSZ) {
        int ty = dump[off];
        jobjectID id = get_id(dump + off + 1);
        n_records++;
        want_obj = id;
        got_alloc = 0;
        n_requests++;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
        want_obj = NULL;
        if (rc != JVMPI_SUCCESS || !got_alloc) {
            FAIL("RequestEvent(OBJECT_ALLOC, %p) of a level-0 record (type %d): rc=%d event=%d", (void *)id, ty,
                 (int)rc, got_alloc);
            continue;
        }
        if (alloc_is_array != ty)
            FAIL("object %p: the dump says type %d, OBJECT_ALLOC says is_array %d", (void *)id, ty,
                 (int)alloc_is_array);
        if (alloc_is_array == JVMPI_NORMAL_OBJECT) {
            struct cls *c = class_of(alloc_class);
            if (c != NULL) {
                count_object(c, id, alloc_size);
            } else {
                struct bucket *b = bucket("(no class)");
                b->count++;
                b->bytes += alloc_size;
                n_objects++;
            }
        } else {
            char name[160];
            if (alloc_is_array == JVMPI_CLASS) {
                struct cls *c = class_of(alloc_class);
                snprintf(name, sizeof name, "%s[]", c ? c->name : "?");
            } else {
                snprintf(name, sizeof name, "%s", ty_name(alloc_is_array));
            }
            struct bucket *b = bucket(mine(name) ? name : "(other arrays)");
            b->count++;
            b->bytes += alloc_size;
            n_objects++;
        }
    }
}

/* ---- levels 1 and 2: decode the records ---- */

static size_t values_len(const char *types, const unsigned char *p, const unsigned char *end)
{
    size_t n = 0;
    (void)p;
    (void)end;
    for (const char *t = types; *t; t++)
        if (opt_level >= 2 || *t == 'L')
            n += (size_t)sig_size(*t);
    return n;
}

static void census_level12(void)
{
    const unsigned char *p = dump, *end = dump + dump_len;
#define NEED(n)                                                                         \
    do {                                                                                \
        if ((size_t)(end - p) < (size_t)(n)) {                                          \
            FAIL("record type %#x at offset %ld runs past the end of the dump", ty,      \
                 (long)(rec - dump));                                                   \
            return;                                                                     \
        }                                                                               \
    } while (0)
    while (p < end) {
        const unsigned char *rec = p;
        int ty = *p++;
        n_records++;
        switch (ty) {
        case JVMPI_GC_ROOT_UNKNOWN:
        case JVMPI_GC_ROOT_STICKY_CLASS:
        case JVMPI_GC_ROOT_MONITOR_USED:
            NEED(IDSZ);
            p += IDSZ;
            break;
        case JVMPI_GC_ROOT_JNI_GLOBAL:
        case JVMPI_GC_ROOT_NATIVE_STACK:
        case JVMPI_GC_ROOT_THREAD_BLOCK:
            NEED(2 * IDSZ);
            p += 2 * IDSZ;
            break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            NEED(2 * IDSZ + 4);
            p += 2 * IDSZ + 4;
            break;
        case JVMPI_GC_CLASS_DUMP: {
            NEED(7 * IDSZ + 4);
            jobjectID cid = get_id(p);
            p += 7 * IDSZ + 4;
            struct cls *c = class_of(cid);
            if (c == NULL)
                return; /* its length cannot be known */
            NEED((size_t)c->nif * IDSZ + 2);
            p += (size_t)c->nif * IDSZ;
            int ncp = p[0] << 8 | p[1];
            p += 2;
            for (int i = 0; i < ncp; i++) {
                NEED(3);
                int sz = ty_size(p[2]);
                if (sz < 0) {
                    FAIL("class dump of %s: constant pool entry of type %d", c->name, p[2]);
                    return;
                }
                NEED(3 + sz);
                p += 3 + sz;
            }
            size_t sl = values_len(c->stypes, p, end);
            NEED(sl);
            p += sl;
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            NEED(2 * IDSZ + 4);
            jobjectID id = get_id(p), cid = get_id(p + IDSZ);
            uint32_t n = get_u4(p + 2 * IDSZ);
            p += 2 * IDSZ + 4;
            NEED(n);
            p += n;
            struct cls *c = class_of(cid);
            if (c != NULL)
                count_object(c, id, 0);
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            NEED(2 * IDSZ + 4);
            uint32_t n = get_u4(p + IDSZ);
            jobjectID ecid = get_id(p + IDSZ + 4);
            p += 2 * IDSZ + 4;
            NEED((size_t)n * IDSZ);
            p += (size_t)n * IDSZ;
            struct cls *c = ecid ? class_of(ecid) : NULL;
            char name[160];
            snprintf(name, sizeof name, "%s[]", c ? c->name : "?");
            bucket(mine(name) ? name : "(other arrays)")->count++;
            n_objects++;
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            NEED(IDSZ + 5);
            uint32_t n = get_u4(p + IDSZ);
            int et = p[IDSZ + 4];
            p += IDSZ + 5;
            int sz = ty_size(et);
            if (sz < 0 || et == JVMPI_CLASS) {
                FAIL("primitive array dump with element type %d", et);
                return;
            }
            if (opt_level >= 2) {
                NEED((size_t)n * sz);
                p += (size_t)n * sz;
            }
            bucket("(other arrays)")->count++;
            n_objects++;
            break;
        }
        default:
            FAIL("unexpected record type %#x at offset %ld of a level-%d dump", ty, (long)(rec - dump), opt_level);
            return;
        }
    }
#undef NEED
}

/* ---- OBJECT_DUMP of the workload's objects ---- */

static size_t record_len(const unsigned char *p)
{
    switch (p[0]) {
    case JVMPI_GC_INSTANCE_DUMP: return 1 + 2 * IDSZ + 4 + get_u4(p + 1 + 2 * IDSZ);
    case JVMPI_GC_OBJ_ARRAY_DUMP: return 1 + 2 * IDSZ + 4 + (size_t)get_u4(p + 1 + IDSZ) * IDSZ;
    case JVMPI_GC_PRIM_ARRAY_DUMP: return 1 + IDSZ + 5 + (size_t)get_u4(p + 1 + IDSZ) * ty_size(p[1 + IDSZ + 4]);
    default: return 0;
    }
}

static void object_dumps(void)
{
    for (size_t i = 0; i < classes.cap; i++) {
        struct cls *c = classes.k[i] ? classes.v[i] : NULL;
        if (c == NULL || !mine(c->name) || c->first == NULL)
            continue;
        want_obj = c->first;
        got_odump = 0;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, c->first);
        want_obj = NULL;
        char file[1200] = "-";
        /* Not judged here: a collection may have freed an object the agent tracked (the
         * test knows whether one ran). */
        if (rc == JVMPI_SUCCESS && got_odump && odump_len > 0) {
            snprintf(file, sizeof file, "%s/obj_%s.dump", opt_dir, c->name);
            for (char *q = file + strlen(opt_dir) + 1; *q; q++)
                if (*q == '/')
                    *q = '_'; /* a hidden class's name */
            FILE *f = fopen(file, "wb");
            if (f) {
                fwrite(odump, 1, odump_len, f);
                fclose(f);
            }
        }
        say("object_dump %s id=%p rc=%d bytes=%zu file=%s", c->name, (void *)c->first, (int)rc,
            got_odump ? odump_len : 0, file);
    }
}

static int cmp_cls(const void *a, const void *b)
{
    return strcmp((*(struct cls *const *)a)->name, (*(struct cls *const *)b)->name);
}

static void shut_down(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/classes.txt", opt_dir);
    classes_file = fopen(path, "w");
    /* what the agent learned before the dump goes to the file too */
    for (size_t i = 0; classes_file && i < classes.cap; i++) {
        struct cls *c = classes.k[i] ? classes.v[i] : NULL;
        if (c != NULL)
            fprintf(classes_file, "C %lx %d %s %s %s\n", (unsigned long)(uintptr_t)c->id, c->nif,
                    c->stypes[0] ? c->stypes : "-", c->itypes[0] ? c->itypes : "-", c->name[0] ? c->name : "?");
    }
    JVMPI_HeapDumpArg arg;
    arg.heap_dump_level = opt_level;
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    say("heap_dump level=%d rc=%d event=%d bytes=%zu", opt_level, (int)rc, got_dump, dump_len);
    if (rc != JVMPI_SUCCESS || !got_dump) {
        FAIL("RequestEvent(HEAP_DUMP, level %d): rc=%d event=%d", opt_level, (int)rc, got_dump);
    } else {
        snprintf(path, sizeof path, "%s/heap%d.dump", opt_dir, opt_level);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(dump, 1, dump_len, f);
            fclose(f);
        }
        if (opt_level == 0)
            census_level0();
        else
            census_level12();
        for (size_t i = 0; i < first_alloc.cap; i++) {
            if (first_alloc.k[i] == NULL)
                continue;
            struct cls *c = class_of(first_alloc.k[i]);
            if (c != NULL && mine(c->name))
                c->first = first_alloc.v[i];
        }
        object_dumps();
    }
    jvmpi->EnableGC();
    if (classes_file)
        fclose(classes_file);
    classes_file = NULL;

    struct cls **list = calloc(classes.n + 1, sizeof *list);
    size_t n = 0, nclasses = 0;
    for (size_t i = 0; i < classes.cap; i++) {
        struct cls *c = classes.k[i] ? classes.v[i] : NULL;
        if (c == NULL)
            continue;
        if (c->count)
            nclasses++;
        if (c->count && mine(c->name))
            list[n++] = c;
    }
    qsort(list, n, sizeof *list, cmp_cls);
    /* several classes of one name (other loaders): one line, summed */
    for (size_t i = 0; i < n;) {
        long count = 0, bytes = 0;
        size_t j = i;
        for (; j < n && strcmp(list[j]->name, list[i]->name) == 0; j++) {
            count += list[j]->count;
            bytes += list[j]->bytes;
        }
        say("census %s count=%ld bytes=%ld", list[i]->name, count, bytes);
        i = j;
    }
    free(list);
    for (int i = 0; i < nbuckets; i++)
        say("census %s count=%ld bytes=%ld", buckets[i].name, buckets[i].count, buckets[i].bytes);
    say("census total records=%ld objects=%ld classes=%zu requests=%ld", n_records, n_objects, nclasses,
        n_requests);
    say("done fails=%d", g_fails);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT)) {
            jobjectID cid = ev->u.obj_alloc.class_id;
            if (ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT && cid != NULL &&
                !pm_get(&first_alloc, cid, NULL))
                pm_put(&first_alloc, cid, ev->u.obj_alloc.obj_id);
            break;
        }
        if (ev->u.obj_alloc.obj_id == want_obj) {
            got_alloc = 1;
            alloc_class = ev->u.obj_alloc.class_id;
            alloc_is_array = ev->u.obj_alloc.is_array;
            alloc_size = ev->u.obj_alloc.size;
        }
        break;
    case JVMPI_EVENT_HEAP_DUMP: {
        size_t n = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
        dump = malloc(n + 1);
        if (dump != NULL && ev->u.heap_dump.begin != NULL) {
            memcpy(dump, ev->u.heap_dump.begin, n);
            dump_len = n;
            got_dump = 1;
        }
        break;
    }
    case JVMPI_EVENT_OBJECT_DUMP: {
        const unsigned char *d = (const unsigned char *)ev->u.object_dump.data;
        got_odump = d != NULL;
        odump_len = 0;
        if (d != NULL) {
            odump_len = record_len(d);
            free(odump);
            odump = malloc(odump_len + 1);
            memcpy(odump, d, odump_len);
        }
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        break;
    }
}

static void parse_options(const char *o)
{
    while (o != NULL && *o) {
        const char *end = strchr(o, ',');
        size_t n = end ? (size_t)(end - o) : strlen(o);
        char w[1024];
        snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), o);
        if (strncmp(w, "level=", 6) == 0)
            opt_level = atoi(w + 6);
        else if (strcmp(w, "track") == 0)
            opt_track = 1;
        else if (strncmp(w, "dir=", 4) == 0)
            snprintf(opt_dir, sizeof opt_dir, "%.1000s", w + 4);
        else if (strncmp(w, "prefix=", 7) == 0)
            snprintf(opt_prefix, sizeof opt_prefix, "%.100s", w + 7);
        else
            say("FAIL unknown option '%s'", w);
        o = end ? end + 1 : NULL;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    parse_options(options);
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    static const jint ev[] = {JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 1);
    if (opt_track) {
        static const jint al[] = {JVMPI_EVENT_OBJECT_ALLOC};
        enable_events(al, 1, 1);
    }
    say("loaded level=%d track=%d prefix=%s", opt_level, opt_track, opt_prefix);
    return JNI_OK;
}
