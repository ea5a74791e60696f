/* dump_agent.c — a JDK 1.3-style JVMPI agent that takes heap and object dumps
 * (tests/it/dumps/dump_heap.sh, tests/it/dumps/dump_object.sh; workload
 * tests/java/DumpMarkers.java).
 *
 * Always: every CLASS_LOAD is written to ./classes.txt as
 *     C <class id hex> <num_interfaces> <static types|-> <instance types|-> <name>
 * (types: first signature char per field in CLASS_LOAD order, 'L' for references and
 * arrays), the format tests/tools/jvmpidump reads; THREAD_START/END keep a thread table.
 * At JVM_INIT_DONE the system thread dump-control starts; it waits (through JNI) for the
 * system property jvmpishim.dump.ready, does its work, then sets jvmpishim.dump.done=ok.
 * Every dump event is written byte for byte to a file in the current directory.
 *
 * Option "heap" (default): RequestEvent(HEAP_DUMP) with JVMPI_HeapDumpArg levels 0, 1, 2
 * (heap0.dump, heap1.dump, heap2.dump) and with arg NULL (heapnull.dump); then levels 7 and
 * -1, which must fail with no event.
 * Option "object": a level-2 heap dump (heap2.dump) which the agent walks itself (using the
 * CLASS_LOAD facts, as hprof did) to find marker 7 (DumpMarker with i == 7), marker 0, the
 * int[] {3,1,4,1,5,9,2,6}, the Object[] (the object array of element class Object among
 * main's JAVA_FRAME roots), the array DumpMarkers.MARKERS (its id through JNI) and the
 * class dumps of DumpMarker and DumpMarkers, and the record of int.class (a primitive
 * class's mirror, an instance of java.lang.Class; its id through JNI from Integer.TYPE);
 * for each, RequestEvent(OBJECT_DUMP, id) with GC disabled: the data is
 * written to obj_<name>.dump, the heap dump's record to heaprec_<name>.bin, and compared.
 * Also marker 7's id through JNI (DumpMarkers.MARKERS[7], jobject2jobjectID), and
 * OBJECT_DUMP with the garbage id 0x1234 and with NULL, which must fail with no event.
 *
 * Option "alloc" (with "heap"): OBJECT_ALLOC is enabled in JVM_OnLoad and every announced
 * object id is kept (and every class id from CLASS_LOAD, a class being its mirror); the
 * level-0 dump's ids are then looked up: "dump: level0 records=N unannounced=U" (JVMPI
 * promises an id is defined before an event uses it).
 *
 * Output lines start with "dump: "; violations are "dump: FAIL ...".
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define KIT_NAME "dump"
#define KIT_LINE 4096
#include "kit/out.h"
#include "kit/checked.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int opt_object, opt_alloc;

/* Announced ids (option alloc): an insert-only open-addressing set, under mu. */
static uintptr_t *known;
static size_t known_n, known_cap;
static void known_put_locked(uintptr_t id)
{
    if (id == 0)
        return;
    if ((known_n + 1) * 2 > known_cap) {
        size_t cap = known_cap ? known_cap * 2 : 1 << 16;
        uintptr_t *k = calloc(cap, sizeof *k);
        if (k == NULL)
            return;
        for (size_t i = 0; i < known_cap; i++)
            if (known[i] != 0) {
                size_t j = (known[i] >> 3) * 0x9E3779B97F4A7C15ull % cap;
                while (k[j] != 0)
                    j = (j + 1) % cap;
                k[j] = known[i];
            }
        free(known);
        known = k;
        known_cap = cap;
    }
    size_t j = (id >> 3) * 0x9E3779B97F4A7C15ull % known_cap;
    while (known[j] != 0 && known[j] != id)
        j = (j + 1) % known_cap;
    if (known[j] == 0) {
        known[j] = id;
        known_n++;
    }
}
static int known_has_locked(uintptr_t id)
{
    if (known_cap == 0)
        return 0;
    size_t j = (id >> 3) * 0x9E3779B97F4A7C15ull % known_cap;
    while (known[j] != 0) {
        if (known[j] == id)
            return 1;
        j = (j + 1) % known_cap;
    }
    return 0;
}
static FILE *classes_file;

/* ---- threads ------------------------------------------------------------------------- */

#define MAXTHR 1024
static struct { JNIEnv *env; char name[64]; int ended; } thr[MAXTHR];
static int nthr;

static const char *thread_name(JNIEnv *env)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = nthr - 1; i >= 0; i--)
        if (thr[i].env == env && !thr[i].ended) {
            n = thr[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- classes ------------------------------------------------------------------------- */

struct cls {
    jobjectID id;
    char *name;
    int nif;
    char *stypes;   /* static types, CLASS_LOAD order ("" for none) */
    char *itypes;
};
static struct cls *classes;
static int ncls, capcls;
static jobjectID marker_class, markers_class, object_class;
static int marker_i_offset = -1; /* offset of DumpMarker.i in its INSTANCE_DUMP values */

static char type_char(const char *sig)
{
    return sig == NULL ? '?' : (sig[0] == '[' ? 'L' : sig[0]);
}

static int sig_size(char c)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return (int)sizeof(void *);
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
    const char *name = ev->u.class_load.class_name ? ev->u.class_load.class_name : "";
    pthread_mutex_lock(&mu);
    known_put_locked((uintptr_t)ev->u.class_load.class_id);
    if (ncls == capcls) {
        capcls = capcls ? capcls * 2 : 2048;
        classes = realloc(classes, sizeof *classes * (size_t)capcls);
    }
    struct cls *c = &classes[ncls++];
    c->id = ev->u.class_load.class_id;
    c->name = strdup(name);
    c->nif = ev->u.class_load.num_interfaces;
    c->stypes = types_of(ev->u.class_load.statics, ev->u.class_load.num_static_fields);
    c->itypes = types_of(ev->u.class_load.instances, ev->u.class_load.num_instance_fields);
    if (classes_file) {
        fprintf(classes_file, "C %lx %d %s %s %s\n", (unsigned long)(uintptr_t)c->id, c->nif,
                c->stypes[0] ? c->stypes : "-", c->itypes[0] ? c->itypes : "-",
                name[0] ? name : "?");
        fflush(classes_file);
    }
    if (strcmp(name, "DumpMarker") == 0) {
        marker_class = c->id;
        int off = 0;
        for (int i = 0; i < ev->u.class_load.num_instance_fields; i++) {
            JVMPI_Field *f = &ev->u.class_load.instances[i];
            if (strcmp(f->field_name, "i") == 0)
                marker_i_offset = off;
            off += sig_size(type_char(f->field_signature));
        }
    } else if (strcmp(name, "DumpMarkers") == 0) {
        markers_class = c->id;
    } else if (strcmp(name, "java.lang.Object") == 0) {
        object_class = c->id;
    }
    pthread_mutex_unlock(&mu);
    if (strncmp(name, "Dump", 4) == 0)
        say("CLASS_LOAD %s id=%p statics=%s instances=%s", name, (void *)c->id,
            c->stypes[0] ? c->stypes : "-", c->itypes[0] ? c->itypes : "-");
}

static int class_info(jobjectID id, int *nif, const char **st)
{
    int found = 0;
    pthread_mutex_lock(&mu);
    for (int i = ncls - 1; i >= 0; i--)
        if (classes[i].id == id) {
            *nif = classes[i].nif;
            *st = classes[i].stypes; /* never freed */
            found = 1;
            break;
        }
    pthread_mutex_unlock(&mu);
    return found;
}

/* ---- dump events --------------------------------------------------------------------- */

static const char *volatile g_file;     /* where the next dump event goes */
static volatile int g_events;
static unsigned char *g_data;           /* copy of the last dump */
static size_t g_len;

static void save(const char *what, const char *p, size_t n)
{
    const char *file = g_file ? g_file : "unexpected.dump";
    FILE *f = fopen(file, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n)
        FAIL("%s: writing %s", what, file);
    if (f)
        fclose(f);
    free(g_data);
    g_data = malloc(n ? n : 1);
    memcpy(g_data, p, n);
    g_len = n;
}

static void on_heap_dump(JVMPI_Event *ev)
{
    g_events++;
    size_t n = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    say("HEAP_DUMP file=%s requested=%d on=%s dump_level=%d bytes=%zu num_traces=%d",
        g_file ? g_file : "?", (ev->event_type & JVMPI_REQUESTED_EVENT) != 0,
        thread_name(ev->env_id), ev->u.heap_dump.dump_level, n, (int)ev->u.heap_dump.num_traces);
    save("HEAP_DUMP", ev->u.heap_dump.begin, n);
    for (jint i = 0; i < ev->u.heap_dump.num_traces && ev->u.heap_dump.traces; i++) {
        JVMPI_CallTrace *t = &ev->u.heap_dump.traces[i];
        say("trace file=%s env=%p name=%s frames=%d", g_file ? g_file : "?", (void *)t->env_id,
            thread_name(t->env_id), (int)t->num_frames);
    }
}

static void on_object_dump(JVMPI_Event *ev)
{
    g_events++;
    say("OBJECT_DUMP file=%s requested=%d on=%s data_len=%d", g_file ? g_file : "?",
        (ev->event_type & JVMPI_REQUESTED_EVENT) != 0, thread_name(ev->env_id),
        (int)ev->u.object_dump.data_len);
    if (ev->u.object_dump.data_len < 0 || ev->u.object_dump.data == NULL) {
        FAIL("OBJECT_DUMP data=%p data_len=%d", (void *)ev->u.object_dump.data,
             (int)ev->u.object_dump.data_len);
        return;
    }
    save("OBJECT_DUMP", ev->u.object_dump.data, (size_t)ev->u.object_dump.data_len);
}

/* ---- JNI helpers --------------------------------------------------------------------- */

/* ---- heap mode ----------------------------------------------------------------------- */

static jint heap_dump(const char *file, JVMPI_HeapDumpArg *arg)
{
    g_file = file;
    g_events = 0;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, arg);
    if (arg)
        say("request HEAP_DUMP level=%d rc=%d events=%d", (int)arg->heap_dump_level, (int)rc, g_events);
    else
        say("request HEAP_DUMP arg=NULL rc=%d events=%d", (int)rc, g_events);
    g_file = NULL;
    return rc;
}

/* Option alloc: look up every id of the level-0 dump just taken (records: u1 type, id). */
static void check_level0_ids(void)
{
    FILE *f = fopen("heap0.dump", "rb");
    if (f == NULL) {
        FAIL("alloc: cannot read heap0.dump");
        return;
    }
    unsigned char rec[1 + sizeof(void *)];
    size_t records = 0, unknown = 0;
    pthread_mutex_lock(&mu);
    while (fread(rec, sizeof rec, 1, f) == 1) {
        void *id;
        memcpy(&id, rec + 1, sizeof id);
        records++;
        if (!known_has_locked((uintptr_t)id) && ++unknown <= 5)
            say("unannounced id %p (type %d) in the level-0 dump", id, rec[0]);
    }
    pthread_mutex_unlock(&mu);
    fclose(f);
    say("level0 records=%zu unannounced=%zu", records, unknown);
}

static void heap_mode(void)
{
    static char files[3][16];
    for (int lvl = 0; lvl <= 2; lvl++) {
        JVMPI_HeapDumpArg a = {lvl};
        snprintf(files[lvl], sizeof files[lvl], "heap%d.dump", lvl);
        heap_dump(files[lvl], &a);
        if (lvl == 0 && opt_alloc)
            check_level0_ids();
    }
    heap_dump("heapnull.dump", NULL);
    JVMPI_HeapDumpArg bad = {7};
    heap_dump("heap7.dump", &bad);
    bad.heap_dump_level = -1;
    heap_dump("heapminus1.dump", &bad);
}

/* ---- object mode: walk a level-2 heap dump ------------------------------------------- */

struct rec {
    size_t off, len;
    int type;
    const unsigned char *p;     /* record start (type byte) */
};

static uint32_t be4(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void *ptr_at(const unsigned char *p)
{
    void *v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int code_size(int ty)
{
    switch (ty) {
    case JVMPI_CLASS: return (int)sizeof(void *);
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_FLOAT: case JVMPI_INT: return 4;
    case JVMPI_DOUBLE: case JVMPI_LONG: return 8;
    default: return -1;
    }
}

/* Walk p[0..n) as a level-2 dump, calling fn for every record; 0 if all bytes consumed. */
static int walk(const unsigned char *p, size_t n, void (*fn)(const struct rec *, void *), void *ctx)
{
    const size_t P = sizeof(void *);
    size_t off = 0;
#define NEED(k) do { if (n - off < (size_t)(k)) goto bad; } while (0)
    while (off < n) {
        struct rec r = {off, 0, p[off], p + off};
        size_t q = off + 1;
        off = q;
        switch (r.type) {
        case JVMPI_GC_ROOT_UNKNOWN: case JVMPI_GC_ROOT_STICKY_CLASS: case JVMPI_GC_ROOT_MONITOR_USED:
            NEED(P); off += P; break;
        case JVMPI_GC_ROOT_JNI_GLOBAL: case JVMPI_GC_ROOT_NATIVE_STACK:
        case JVMPI_GC_ROOT_THREAD_BLOCK: case JVMPI_GC_ROOT_THREAD_OBJ:
            NEED(2 * P); off += 2 * P; break;
        case JVMPI_GC_ROOT_JNI_LOCAL: case JVMPI_GC_ROOT_JAVA_FRAME:
            NEED(2 * P + 4); off += 2 * P + 4; break;
        case JVMPI_GC_CLASS_DUMP: {
            NEED(7 * P + 4);
            jobjectID id = ptr_at(p + off);
            int nif = 0;
            const char *st = "";
            if (!class_info(id, &nif, &st)) {
                FAIL("heap dump: CLASS_DUMP of unknown class %p at %zu", (void *)id, r.off);
                return -1;
            }
            off += 7 * P + 4;
            NEED((size_t)nif * P + 2);
            off += (size_t)nif * P;
            unsigned ncp = (unsigned)p[off] << 8 | p[off + 1];
            off += 2;
            for (unsigned i = 0; i < ncp; i++) {
                NEED(3);
                int sz = code_size(p[off + 2]);
                if (sz < 0)
                    goto bad;
                NEED(3 + sz);
                off += 3 + (size_t)sz;
            }
            for (const char *s = st; *s; s++) {
                NEED(sig_size(*s));
                off += (size_t)sig_size(*s);
            }
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP:
            NEED(2 * P + 4);
            off += 2 * P;
            {
                uint32_t k = be4(p + off);
                off += 4;
                NEED(k);
                off += k;
            }
            break;
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            NEED(2 * P + 4);
            uint32_t len = be4(p + off + P);
            off += 2 * P + 4;
            NEED((size_t)len * P);
            off += (size_t)len * P;
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            NEED(P + 5);
            uint32_t len = be4(p + off + P);
            int sz = code_size(p[off + P + 4]);
            if (sz < 0)
                goto bad;
            off += P + 5;
            NEED((size_t)len * (size_t)sz);
            off += (size_t)len * (size_t)sz;
            break;
        }
        default:
            goto bad;
        }
        r.len = off - r.off;
        if (fn)
            fn(&r, ctx);
    }
    return 0;
bad:
    FAIL("heap dump: cannot walk the record at offset %zu (type %d)", off, p[off < n ? off : 0]);
    return -1;
#undef NEED
}

struct target {
    const char *name;
    jobjectID id;
    size_t off, len;
    int found;
};
enum { T_MARKER7, T_MARKER0, T_INTS, T_OBJS, T_MARKERS_ARRAY, T_CLASS_MARKER, T_CLASS_MARKERS,
       T_INT_CLASS, T_N };
static struct target targets[T_N] = {
    {"marker7", 0, 0, 0, 0}, {"marker0", 0, 0, 0, 0}, {"ints", 0, 0, 0, 0},
    {"objs", 0, 0, 0, 0}, {"markers_array", 0, 0, 0, 0},
    {"class_DumpMarker", 0, 0, 0, 0}, {"class_DumpMarkers", 0, 0, 0, 0},
    {"int_class", 0, 0, 0, 0},
};
static jobjectID markers_array_id;      /* DumpMarkers.MARKERS, through JNI */
static jobjectID int_class_id;          /* int.class (Integer.TYPE), through JNI */
static JNIEnv *main_env;
#define MAXROOTS 64
static jobjectID main_roots[MAXROOTS];  /* JAVA_FRAME roots on main */
static int nmain_roots;

static void hit(int t, const struct rec *r, jobjectID id)
{
    if (targets[t].found++)
        FAIL("heap dump: %s found twice", targets[t].name);
    targets[t].id = id;
    targets[t].off = r->off;
    targets[t].len = r->len;
}

static void find_pass1(const struct rec *r, void *ctx)
{
    (void)ctx;
    const size_t P = sizeof(void *);
    const unsigned char *b = r->p + 1;
    jobjectID id = ptr_at(b);
    if (r->type == JVMPI_GC_ROOT_JAVA_FRAME && ptr_at(b + P) == main_env && main_env != NULL) {
        if (nmain_roots < MAXROOTS)
            main_roots[nmain_roots++] = id;
    } else if (r->type == JVMPI_GC_OBJ_ARRAY_DUMP && id == markers_array_id && id != NULL) {
        hit(T_MARKERS_ARRAY, r, id);
    } else if (r->type == JVMPI_GC_INSTANCE_DUMP && id == int_class_id && id != NULL) {
        hit(T_INT_CLASS, r, id);
    } else if (r->type == JVMPI_GC_INSTANCE_DUMP && ptr_at(b + P) == marker_class && marker_i_offset >= 0) {
        uint32_t k = be4(b + 2 * P);
        if ((uint32_t)marker_i_offset + 4 <= k) {
            uint32_t i = be4(b + 2 * P + 4 + marker_i_offset);
            if (i == 7)
                hit(T_MARKER7, r, id);
            if (i == 0)
                hit(T_MARKER0, r, id);
        }
    } else if (r->type == JVMPI_GC_PRIM_ARRAY_DUMP && be4(b + P) == 8 && b[P + 4] == JVMPI_INT) {
        static const uint32_t want[8] = {3, 1, 4, 1, 5, 9, 2, 6};
        int same = 1;
        for (int i = 0; i < 8; i++)
            same &= be4(b + P + 5 + 4 * i) == want[i];
        if (same)
            hit(T_INTS, r, id);
    } else if (r->type == JVMPI_GC_CLASS_DUMP) {
        if (id == marker_class)
            hit(T_CLASS_MARKER, r, id);
        if (id == markers_class)
            hit(T_CLASS_MARKERS, r, id);
    }
}

static void find_pass2(const struct rec *r, void *ctx)
{
    (void)ctx;
    const size_t P = sizeof(void *);
    const unsigned char *b = r->p + 1;
    /* The Object[] in main's locals: a JAVA_FRAME root of main, an array of Object. */
    if (r->type != JVMPI_GC_OBJ_ARRAY_DUMP || ptr_at(b + P + 4) != object_class)
        return;
    for (int i = 0; i < nmain_roots; i++)
        if (main_roots[i] == ptr_at(b)) {
            hit(T_OBJS, r, ptr_at(b));
            break;
        }
}

static void write_file(const char *name, const unsigned char *p, size_t n)
{
    FILE *f = fopen(name, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n)
        FAIL("writing %s", name);
    if (f)
        fclose(f);
}

static jint object_dump(const char *file, jobjectID id)
{
    g_file = file;
    g_events = 0;
    free(g_data);
    g_data = NULL;
    g_len = 0;
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id);
    jvmpi->EnableGC();
    g_file = NULL;
    return rc;
}

/* Through JNI: DumpMarkers.MARKERS[7] -> jobject2jobjectID (and MARKERS itself) */
static jobjectID jni_marker7(JNIEnv *jni, jobjectID *array_id)
{
    jclass c = (*jni)->FindClass(jni, "DumpMarkers"); /* no Java frames: the system loader */
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("FindClass(DumpMarkers) failed");
        return NULL;
    }
    jfieldID f = (*jni)->GetStaticFieldID(jni, c, "MARKERS", "[LDumpMarker;");
    jobjectArray a = f ? (jobjectArray)(*jni)->GetStaticObjectField(jni, c, f) : NULL;
    jobject m = a ? (*jni)->GetObjectArrayElement(jni, a, 7) : NULL;
    if (m == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("DumpMarkers.MARKERS[7] not readable through JNI");
        return NULL;
    }
    jvmpi->DisableGC();
    jobjectID id = jvmpi->jobject2jobjectID(m);
    *array_id = jvmpi->jobject2jobjectID(a);
    jvmpi->EnableGC();
    (*jni)->DeleteLocalRef(jni, m);
    (*jni)->DeleteLocalRef(jni, a);
    (*jni)->DeleteLocalRef(jni, c);
    return id;
}

/* Through JNI: Integer.TYPE (int.class) -> jobject2jobjectID */
static jobjectID jni_int_class(JNIEnv *jni)
{
    jclass c = (*jni)->FindClass(jni, "java/lang/Integer");
    jfieldID f = c ? (*jni)->GetStaticFieldID(jni, c, "TYPE", "Ljava/lang/Class;") : NULL;
    jobject t = f ? (*jni)->GetStaticObjectField(jni, c, f) : NULL;
    if (t == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("Integer.TYPE not readable through JNI");
        return NULL;
    }
    jvmpi->DisableGC();
    jobjectID id = jvmpi->jobject2jobjectID(t);
    jvmpi->EnableGC();
    (*jni)->DeleteLocalRef(jni, t);
    (*jni)->DeleteLocalRef(jni, c);
    return id;
}

static void object_mode(JNIEnv *jni)
{
    jobjectID j7 = jni_marker7(jni, &markers_array_id);
    int_class_id = jni_int_class(jni);
    say("jni marker7=%p markers_array=%p int_class=%p", (void *)j7, (void *)markers_array_id,
        (void *)int_class_id);
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nthr; i++)
        if (strcmp(thr[i].name, "main") == 0 && !thr[i].ended)
            main_env = thr[i].env;
    pthread_mutex_unlock(&mu);
    JVMPI_HeapDumpArg a = {JVMPI_DUMP_LEVEL_2};
    if (heap_dump("heap2.dump", &a) != JVMPI_SUCCESS || g_data == NULL) {
        FAIL("no level-2 heap dump");
        return;
    }
    unsigned char *heap = g_data;
    size_t heap_len = g_len;
    g_data = NULL;
    if (walk(heap, heap_len, find_pass1, NULL) != 0 || walk(heap, heap_len, find_pass2, NULL) != 0) {
        free(heap);
        return;
    }
    say("walked heap2.dump: %zu bytes", heap_len);
    for (int t = 0; t < T_N; t++) {
        struct target *x = &targets[t];
        if (!x->found) {
            FAIL("heap dump: %s not found", x->name);
            continue;
        }
        char hf[64], of[64];
        snprintf(hf, sizeof hf, "heaprec_%s.bin", x->name);
        snprintf(of, sizeof of, "obj_%s.dump", x->name);
        write_file(hf, heap + x->off, x->len);
        jint rc = object_dump(of, x->id);
        int equal = g_data != NULL && g_len == x->len && memcmp(g_data, heap + x->off, x->len) == 0;
        say("object name=%s id=%p rc=%d events=%d data_len=%zu heap_record_len=%zu equal=%s",
            x->name, (void *)x->id, (int)rc, g_events, g_len, x->len, equal ? "yes" : "no");
    }
    jint rc = object_dump("obj_garbage.dump", (jobjectID)(uintptr_t)0x1234);
    say("object name=garbage id=0x1234 rc=%d events=%d", (int)rc, g_events);
    rc = object_dump("obj_null.dump", NULL);
    say("object name=null id=NULL rc=%d events=%d", (int)rc, g_events);
    free(heap);
}

/* ---- control ------------------------------------------------------------------------- */

static void control(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    char *ready = NULL;
    long long end = now_ms() + 30000;
    while ((ready = get_property(jni, "jvmpishim.dump.ready")) == NULL && now_ms() < end)
        usleep(10 * 1000);
    if (ready == NULL)
        FAIL("jvmpishim.dump.ready never set");
    free(ready);
    say("workload ready; mode=%s", opt_object ? "object" : "heap");
    if (opt_object)
        object_mode(jni);
    else
        heap_mode();
    say("done fails=%d", g_fails);
    set_property(jni, "jvmpishim.dump.done", "ok");
}

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (t) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)";
        pthread_mutex_lock(&mu);
        if (nthr < MAXTHR) {
            thr[nthr].env = ev->u.thread_start.thread_env_id;
            snprintf(thr[nthr].name, sizeof thr[nthr].name, "%s", n);
            nthr++;
        }
        pthread_mutex_unlock(&mu);
        if (strcmp(n, "main") == 0 || strcmp(n, "dump-control") == 0)
            say("thread name=%s env=%p", n, (void *)ev->u.thread_start.thread_env_id);
        break;
    }
    case JVMPI_EVENT_THREAD_END:
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nthr; i++)
            if (thr[i].env == ev->env_id && !thr[i].ended) {
                thr[i].ended = 1;
                break;
            }
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        pthread_mutex_lock(&mu);
        known_put_locked((uintptr_t)ev->u.obj_alloc.obj_id);
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_ARENA_NEW:
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        on_object_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("dump-control", JVMPI_NORMAL_PRIORITY, control) != JNI_OK)
            FAIL("CreateSystemThread(dump-control) failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("JVM_SHUT_DOWN fails=%d", g_fails);
        break;
    default:
        FAIL("event type %d was never enabled", t);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    opt_object = options != NULL && strstr(options, "object") != NULL;
    opt_alloc = options != NULL && strstr(options, "alloc") != NULL;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1_1))
        return JNI_ERR;
    classes_file = fopen("classes.txt", "w");
    if (classes_file == NULL)
        say("FAIL cannot create classes.txt");
    jvmpi->NotifyEvent = notify;
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    if (opt_alloc && (jvmpi->EnableEvent(JVMPI_EVENT_ARENA_NEW, NULL) != JVMPI_SUCCESS ||
                      jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL) != JVMPI_SUCCESS))
        FAIL("EnableEvent(OBJECT_ALLOC) failed");
    return JNI_OK;
}
