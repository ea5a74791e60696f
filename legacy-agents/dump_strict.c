/* dump_strict.c — a JDK 1.3-style heap-dump reader written the way HPROF read dumps, for
 * tests/it/dumps/dump_strict.sh (workload tests/java/DumpStrict.java).
 *
 * CLASS_LOAD (enabled in JVM_OnLoad, so the start-up replay names every loaded class) fills
 * a class table: name, number of interfaces, statics and instance fields with their
 * signatures, in the order CLASS_LOAD gives them: the only facts a reader has to cut a
 * dump into records. When DumpStrict$Go is loaded, the handler reads the workload's
 * objects with JNI, gets their ids with jobject2jobjectID, and requests HEAP_DUMP at levels
 * 0, 1 and 2. Each dump is read as HPROF read it: a switch over exactly the record kinds
 * HotSpot emitted (roots JNI_GLOBAL, JNI_LOCAL, JAVA_FRAME, NATIVE_STACK, STICKY_CLASS,
 * MONITOR_USED; CLASS_DUMP, INSTANCE_DUMP, OBJ_ARRAY_DUMP, PRIM_ARRAY_DUMP), any other
 * byte being a fatal "unexpected record"; a class dump of a class it has no CLASS_LOAD for
 * makes it request one (RequestEvent(CLASS_LOAD)), as HPROF did.
 *
 * Checked (FAIL lines), beyond the record kinds:
 *  - every INSTANCE_DUMP's value bytes are exactly the sizes of the instance fields of its
 *    class and its superclasses (supers from the CLASS_DUMPs), references only at level 1;
 *  - DumpStrict$Point: its record byte by byte, each field decoded in CLASS_LOAD's order and
 *    compared by name with the workload's values (big-endian numbers, native ids; ref = the
 *    id of DumpStrict.str); its class dump: super = DumpStrict$Base, the two interfaces
 *    (Runnable, Serializable), SCOUNT = 42 (level 2) and SREF = the id of the static string;
 *  - DumpStrict.arr: OBJ_ARRAY_DUMP of length 3, element class Point, {point, NULL, point};
 *  - DumpStrict.ints: PRIM_ARRAY_DUMP of length 3, JVMPI_INT, 1 2 3 at level 2;
 *  - int.class (Integer.TYPE): an INSTANCE_DUMP of java.lang.Class at levels 1 and 2, never a
 *    CLASS_DUMP; at level 0 a NORMAL_OBJECT record.
 * Output: "dump_strict: level N records=.. roots=.. classes=.. instances=.. ..." per dump,
 * "dump_strict: facts ..." per fact checked, FAIL lines.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "dump_strict"
#define KIT_FAIL_MAX 40
#include "kit/out.h"
#include "kit/jvm.h"



/* ---- classes from CLASS_LOAD, and supers from CLASS_DUMP ---- */
struct cls {
    void *id;
    char *name;
    int n_if, n_stat, n_inst;
    char *stat_sig, *inst_sig;      /* first signature char per field, CLASS_LOAD order */
    char **inst_name;
    void *super;
    int dumped;
    struct cls *next;
};
#define NB 4096
static struct cls *classes[NB];

static struct cls *find(void *id)
{
    for (struct cls *c = classes[((uintptr_t)id >> 3) % NB]; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void class_load(JVMPI_Event *ev)
{
    if (find(ev->u.class_load.class_id))
        return;
    struct cls *c = calloc(1, sizeof *c);
    c->id = ev->u.class_load.class_id;
    c->name = strdup(ev->u.class_load.class_name ? ev->u.class_load.class_name : "?");
    c->n_if = ev->u.class_load.num_interfaces;
    c->n_stat = ev->u.class_load.num_static_fields;
    c->n_inst = ev->u.class_load.num_instance_fields;
    c->stat_sig = calloc((size_t)c->n_stat + 1, 1);
    c->inst_sig = calloc((size_t)c->n_inst + 1, 1);
    c->inst_name = calloc((size_t)c->n_inst + 1, sizeof *c->inst_name);
    for (int i = 0; i < c->n_stat; i++)
        c->stat_sig[i] = ev->u.class_load.statics[i].field_signature[0];
    for (int i = 0; i < c->n_inst; i++) {
        c->inst_sig[i] = ev->u.class_load.instances[i].field_signature[0];
        c->inst_name[i] = strdup(ev->u.class_load.instances[i].field_name);
    }
    size_t b = ((uintptr_t)c->id >> 3) % NB;
    c->next = classes[b];
    classes[b] = c;
}

static struct cls *class_of(void *id)
{
    struct cls *c = find(id);
    if (c == NULL && id != NULL) {
        jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
        c = find(id);
    }
    return c;
}

/* ---- the facts, from JNI ---- */
static void *point_id, *point_cls, *base_cls, *str_id, *sref_id, *arr_id, *ints_id,
            *int_mirror, *class_cls, *runnable_cls, *serial_cls;

static void *id_of(jobject o)
{
    return o ? (void *)jvmpi->jobject2jobjectID(o) : NULL;
}

/* An application class: FindClass inside a handler uses the loader of the native frame
 * on top (here Class.forName's, the boot loader), so ask the system class loader. */
static jclass app_class(JNIEnv *env, const char *name)
{
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID sys = (*env)->GetStaticMethodID(env, cl, "getSystemClassLoader",
                                              "()Ljava/lang/ClassLoader;");
    jmethodID load = (*env)->GetMethodID(env, cl, "loadClass",
                                         "(Ljava/lang/String;)Ljava/lang/Class;");
    jobject loader = (*env)->CallStaticObjectMethod(env, cl, sys);
    jstring n = (*env)->NewStringUTF(env, name);
    jclass c = loader ? (jclass)(*env)->CallObjectMethod(env, loader, load, n) : NULL;
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        c = NULL;
    }
    return c;
}

static void read_facts(JNIEnv *env)
{
    jclass ds = app_class(env, "DumpStrict");
    jclass pc = app_class(env, "DumpStrict$Point");
    jclass bc = app_class(env, "DumpStrict$Base");
    jclass ic = (*env)->FindClass(env, "java/lang/Integer");
    if (!ds || !pc || !bc || !ic) {
        FAIL("JNI: workload classes not found");
        (*env)->ExceptionClear(env);
        return;
    }
    point_id = id_of((*env)->GetStaticObjectField(env, ds,
                          (*env)->GetStaticFieldID(env, ds, "point", "LDumpStrict$Point;")));
    arr_id = id_of((*env)->GetStaticObjectField(env, ds,
                        (*env)->GetStaticFieldID(env, ds, "arr", "[LDumpStrict$Point;")));
    ints_id = id_of((*env)->GetStaticObjectField(env, ds,
                         (*env)->GetStaticFieldID(env, ds, "ints", "[I")));
    str_id = id_of((*env)->GetStaticObjectField(env, ds,
                        (*env)->GetStaticFieldID(env, ds, "str", "Ljava/lang/String;")));
    sref_id = id_of((*env)->GetStaticObjectField(env, pc,
                         (*env)->GetStaticFieldID(env, pc, "SREF", "Ljava/lang/Object;")));
    int_mirror = id_of((*env)->GetStaticObjectField(env, ic,
                            (*env)->GetStaticFieldID(env, ic, "TYPE", "Ljava/lang/Class;")));
    point_cls = id_of(pc);
    base_cls = id_of(bc);
    class_cls = id_of((*env)->FindClass(env, "java/lang/Class"));
    runnable_cls = id_of((*env)->FindClass(env, "java/lang/Runnable"));
    serial_cls = id_of((*env)->FindClass(env, "java/io/Serializable"));
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        FAIL("JNI: a workload field is missing");
    }
    say("facts point=%p point_class=%p str=%p arr=%p ints=%p int.class=%p", point_id, point_cls,
        str_id, arr_id, ints_id, int_mirror);
}

/* ---- reading ---- */
struct rd {
    const unsigned char *p, *end;
    int bad;
};
static int sig_size(char s)
{
    switch (s) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    case 'L': case '[': return (int)sizeof(void *);
    default: return -1;
    }
}
static int type_size(int t)
{
    switch (t) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return (int)sizeof(void *);
    default: return -1;
    }
}
static int need(struct rd *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    return 1;
}
static unsigned rd_u1(struct rd *r) { return need(r, 1) ? *r->p++ : 0; }
static unsigned rd_u2(struct rd *r)
{
    if (!need(r, 2)) return 0;
    unsigned v = (unsigned)r->p[0] << 8 | r->p[1];
    r->p += 2;
    return v;
}
static uint32_t rd_u4(struct rd *r)
{
    if (!need(r, 4)) return 0;
    uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
    r->p += 4;
    return v;
}
static uint64_t rd_u8(struct rd *r)
{
    uint64_t hi = rd_u4(r);
    return hi << 32 | rd_u4(r);
}
static void *rd_id(struct rd *r)
{
    void *v = NULL;
    if (need(r, sizeof v)) {
        memcpy(&v, r->p, sizeof v);
        r->p += sizeof v;
    }
    return v;
}
static uint64_t rd_val(struct rd *r, char s)
{
    if (s == 'L' || s == '[')
        return (uint64_t)(uintptr_t)rd_id(r); /* ids native, numbers big-endian */
    switch (sig_size(s)) {
    case 1: return rd_u1(r);
    case 2: return rd_u2(r);
    case 4: return rd_u4(r);
    case 8: return rd_u8(r);
    default: return (uint64_t)(uintptr_t)rd_id(r);
    }
}

static int is_ref(char s) { return s == 'L' || s == '['; }

/* Expected byte count of an instance of c: its fields and its supers', as CLASS_LOAD lists
 * them; -1 if a class of the chain is unknown or was not dumped. */
static long inst_bytes(struct cls *c, int level)
{
    long n = 0;
    for (int depth = 0; c != NULL; depth++) {
        if (depth > 64)
            return -1;
        for (int i = 0; i < c->n_inst; i++)
            if (level >= 2 || is_ref(c->inst_sig[i]))
                n += sig_size(c->inst_sig[i]);
        if (c->super == NULL)
            return n;
        struct cls *s = find(c->super);
        if (s == NULL || !s->dumped)
            return -1;
        c = s;
    }
    return n;
}

struct stats {
    long records, roots, class_dumps, instances, obj_arrays, prim_arrays;
    int point_seen, point_class_seen, arr_seen, ints_seen, int_mirror_seen;
};

/* Point's record, field by field in CLASS_LOAD's order, compared by name. */
static void check_point(struct rd *r, int level)
{
    struct cls *c = find(point_cls);
    int depth = 0;
    while (c != NULL && depth++ < 3) {
        for (int i = 0; i < c->n_inst; i++) {
            char s = c->inst_sig[i];
            if (!is_ref(s) && level < 2)
                continue;
            uint64_t v = rd_val(r, s);
            const char *n = c->inst_name[i];
            uint64_t want;
            if (strcmp(n, "x") == 0) want = 0x01020304;
            else if (strcmp(n, "y") == 0) want = 0x1122334455667788ULL;
            else if (strcmp(n, "ref") == 0) want = (uint64_t)(uintptr_t)str_id;
            else if (strcmp(n, "b") == 0) want = 0x7f;
            else if (strcmp(n, "d") == 0) want = 0x3FF8000000000000ULL; /* 1.5 */
            else if (strcmp(n, "c") == 0) want = 'Q';
            else if (strcmp(n, "s") == 0) want = 0x0506;
            else if (strcmp(n, "z") == 0) want = 1;
            else { FAIL("level %d: Point has an unexpected field %s", level, n); continue; }
            if (v != want)
                FAIL("level %d: Point.%s = %#llx in the dump, expected %#llx", level, n,
                     (unsigned long long)v, (unsigned long long)want);
        }
        c = c->super ? find(c->super) : NULL;
    }
}

static void read_dump(const unsigned char *begin, const unsigned char *end, int level)
{
    struct stats st;
    memset(&st, 0, sizeof st);
    struct rd r = {begin, end, 0};
    /* Pass 1: cut the dump into records; note the supers from the class dumps. */
    int pass;
    for (pass = 1; pass <= 2; pass++) {
        r.p = begin;
        int stop = 0;
        while (r.p < end && !stop && !r.bad) {
            const unsigned char *at = r.p;
            unsigned type = rd_u1(&r);
            if (pass == 1)
                st.records++;
            if (level == 0) {
                void *id = rd_id(&r);
                if (type != JVMPI_NORMAL_OBJECT && type != JVMPI_CLASS &&
                    (type < JVMPI_BOOLEAN || type > JVMPI_LONG)) {
                    FAIL("level 0: unexpected record type %#x at %ld", type, (long)(at - begin));
                    stop = 1;
                }
                if (pass == 1 && id == int_mirror) {
                    st.int_mirror_seen++;
                    if (type != JVMPI_NORMAL_OBJECT)
                        FAIL("level 0: int.class has type %u, expected NORMAL_OBJECT", type);
                }
                continue;
            }
            switch (type) {
            case JVMPI_GC_ROOT_JNI_GLOBAL:
                rd_id(&r); rd_id(&r); st.roots++;
                break;
            case JVMPI_GC_ROOT_JNI_LOCAL:
            case JVMPI_GC_ROOT_JAVA_FRAME:
                rd_id(&r); rd_id(&r); rd_u4(&r); st.roots++;
                break;
            case JVMPI_GC_ROOT_NATIVE_STACK:
                rd_id(&r); rd_id(&r); st.roots++;
                break;
            case JVMPI_GC_ROOT_STICKY_CLASS:
            case JVMPI_GC_ROOT_MONITOR_USED:
                rd_id(&r); st.roots++;
                break;
            case JVMPI_GC_CLASS_DUMP: {
                void *id = rd_id(&r), *super = rd_id(&r);
                rd_id(&r); rd_id(&r); rd_id(&r); rd_id(&r); rd_id(&r); /* loader .. reserved */
                rd_u4(&r);
                struct cls *c = class_of(id);
                if (c == NULL) {
                    FAIL("level %d: CLASS_DUMP of %p: no CLASS_LOAD for it even on request", level, id);
                    stop = 1;
                    break;
                }
                if (pass == 1) {
                    st.class_dumps++;
                    c->super = super;
                    c->dumped = 1;
                    if (id == int_mirror)
                        FAIL("level %d: int.class dumped as a class", level);
                }
                void *ifs[2] = {0, 0};
                for (int i = 0; i < c->n_if; i++) {
                    void *x = rd_id(&r);
                    if (i < 2) ifs[i] = x;
                }
                unsigned ncp = rd_u2(&r);
                for (unsigned i = 0; i < ncp && !r.bad; i++) {
                    rd_u2(&r);
                    int t = (int)rd_u1(&r);
                    int sz = type_size(t);
                    if (sz < 0) {
                        FAIL("level %d: constant pool entry of type %d", level, t);
                        stop = 1;
                        break;
                    }
                    r.p += sz;
                }
                uint64_t scount = 0;
                void *sref = NULL;
                for (int i = 0; i < c->n_stat && !stop; i++) {
                    char s = c->stat_sig[i];
                    if (!is_ref(s) && level < 2)
                        continue;
                    uint64_t v = rd_val(&r, s);
                    if (id == point_cls && s == 'I') scount = v;
                    if (id == point_cls && is_ref(s)) sref = (void *)(uintptr_t)v;
                }
                if (pass == 1 && id == point_cls) {
                    st.point_class_seen++;
                    if (super != base_cls)
                        FAIL("level %d: Point's super %p, expected DumpStrict$Base %p", level, super, base_cls);
                    if (c->n_if != 2 || !((ifs[0] == runnable_cls && ifs[1] == serial_cls) ||
                                          (ifs[1] == runnable_cls && ifs[0] == serial_cls)))
                        FAIL("level %d: Point's interfaces %p %p, expected Runnable %p, Serializable %p",
                             level, ifs[0], ifs[1], runnable_cls, serial_cls);
                    if (level >= 2 && scount != 42)
                        FAIL("level 2: Point.SCOUNT = %llu, expected 42", (unsigned long long)scount);
                    if (sref != sref_id)
                        FAIL("level %d: Point.SREF = %p, expected %p", level, sref, sref_id);
                }
                break;
            }
            case JVMPI_GC_INSTANCE_DUMP: {
                void *id = rd_id(&r), *cid = rd_id(&r);
                uint32_t n = rd_u4(&r);
                if (!need(&r, n))
                    break;
                const unsigned char *vals = r.p;
                r.p += n;
                if (pass == 1) {
                    st.instances++;
                    break;
                }
                struct cls *c = class_of(cid);
                long want = c ? inst_bytes(c, level) : -1;
                if (want < 0)
                    FAIL("level %d: instance %p of class %p (%s): class or a super not dumped",
                         level, id, cid, c ? c->name : "?");
                else if (want != (long)n)
                    FAIL("level %d: instance %p of %s: %u value bytes, its fields take %ld", level,
                         id, c->name, n, want);
                if (id == point_id) {
                    st.point_seen++;
                    if (cid != point_cls)
                        FAIL("level %d: Point's class %p, expected %p", level, cid, point_cls);
                    struct rd pr = {vals, vals + n, 0};
                    check_point(&pr, level);
                    if (pr.bad || pr.p != pr.end)
                        FAIL("level %d: Point's values do not fill its record", level);
                }
                if (id == int_mirror) {
                    st.int_mirror_seen++;
                    if (cid != class_cls)
                        FAIL("level %d: int.class is an instance of %p, expected java.lang.Class %p",
                             level, cid, class_cls);
                }
                break;
            }
            case JVMPI_GC_OBJ_ARRAY_DUMP: {
                void *id = rd_id(&r);
                uint32_t n = rd_u4(&r);
                void *ec = rd_id(&r);
                void *e[3] = {0, 0, 0};
                for (uint32_t i = 0; i < n && !r.bad; i++) {
                    void *x = rd_id(&r);
                    if (i < 3) e[i] = x;
                }
                if (pass == 1) {
                    st.obj_arrays++;
                    if (id == arr_id) {
                        st.arr_seen++;
                        if (n != 3 || ec != point_cls || e[0] != point_id || e[1] != NULL ||
                            e[2] != point_id)
                            FAIL("level %d: arr = len %u class %p {%p %p %p}, expected 3 %p {%p 0 %p}",
                                 level, n, ec, e[0], e[1], e[2], point_cls, point_id, point_id);
                    }
                }
                break;
            }
            case JVMPI_GC_PRIM_ARRAY_DUMP: {
                void *id = rd_id(&r);
                uint32_t n = rd_u4(&r);
                int t = (int)rd_u1(&r);
                int sz = type_size(t);
                if (sz < 0 || t == JVMPI_CLASS) {
                    FAIL("level %d: primitive array of type %d", level, t);
                    stop = 1;
                    break;
                }
                uint32_t v[3] = {0, 0, 0};
                if (level >= 2) {
                    if (id == ints_id && t == JVMPI_INT && n == 3) {
                        for (int i = 0; i < 3; i++) v[i] = rd_u4(&r);
                    } else if (need(&r, (size_t)n * (size_t)sz)) {
                        r.p += (size_t)n * (size_t)sz;
                    }
                }
                if (pass == 1) {
                    st.prim_arrays++;
                    if (id == ints_id) {
                        st.ints_seen++;
                        if (n != 3 || t != JVMPI_INT ||
                            (level >= 2 && (v[0] != 1 || v[1] != 2 || v[2] != 3)))
                            FAIL("level %d: ints = len %u type %d {%u %u %u}", level, n, t, v[0],
                                 v[1], v[2]);
                    }
                }
                break;
            }
            default:
                /* As HPROF: a kind it does not know ends the dump. */
                FAIL("level %d: unexpected record type %#x at offset %ld", level, type,
                     (long)(at - begin));
                stop = 1;
                break;
            }
        }
        if (r.bad)
            FAIL("level %d: truncated record", level);
        if (stop || r.bad)
            break;
        if (level == 0)
            break;
    }
    say("level %d records=%ld roots=%ld classes=%ld instances=%ld obj_arrays=%ld prim_arrays=%ld "
        "point=%d point_class=%d arr=%d ints=%d int_class=%d", level, st.records, st.roots,
        st.class_dumps, st.instances, st.obj_arrays, st.prim_arrays, st.point_seen,
        st.point_class_seen, st.arr_seen, st.ints_seen, st.int_mirror_seen);
}

static void go(JNIEnv *env)
{
    read_facts(env);
    for (int level = 0; level <= 2; level++) {
        JVMPI_HeapDumpArg a;
        a.heap_dump_level = level;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &a);
        if (rc != JVMPI_SUCCESS)
            FAIL("RequestEvent(HEAP_DUMP, level %d) = %d", level, (int)rc);
    }
    say("done fails=%d", g_fails);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT) && ev->u.class_load.class_name &&
            strcmp(ev->u.class_load.class_name, "DumpStrict$Go") == 0)
            go(ev->env_id);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        read_dump((const unsigned char *)ev->u.heap_dump.begin,
                  (const unsigned char *)ev->u.heap_dump.end, ev->u.heap_dump.dump_level);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) != JVMPI_SUCCESS)
        say("FAIL EnableEvent(CLASS_LOAD)");
    return JNI_OK;
}
