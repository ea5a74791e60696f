/* heap32.c — a heap-dump analyzer written for a 32-bit JVM, as such agents were
 * (tests/it/dumps/heap32.sh; workload tests/java/DumpMarkers.java).
 *
 * Its source assumes 32 bits, as the i386 analyzers it stands for did: object and class ids
 * are kept in jint tables and hashed as unsigned int, dump records are walked with ids of
 * 4 bytes (p += 1 + 4 at level 0), and ids go back to the JVM as (jobjectID)(int)x. It does
 * not check the pointer size. On an i386 JVM all of this holds; built for x86-64 from the
 * same source it does what docs/porting.md's appendix says.
 *
 * CLASS_LOAD fills the class table (id, name, interfaces, static field types, and where
 * DumpMarker keeps its fields i and ref). At JVM_INIT_DONE the system thread h32-control
 * starts; it waits (JNI) for the property jvmpishim.dump.ready, then
 *   level 2: RequestEvent(HEAP_DUMP, level 2); the dump is saved to heap32-2.dump and
 *     walked: records by kind, each DumpMarker instance (fields i and ref), the object
 *     array whose element class is DumpMarker;
 *   level 0: RequestEvent(HEAP_DUMP, level 0), saved to heap32-0.dump, walked: the ids of
 *     NORMAL_OBJECT records go into a jint array; then, GC disabled, each is handed to
 *     RequestEvent(OBJECT_ALLOC, (jobjectID)(int)id), whose answer names its class;
 * and sets jvmpishim.dump.done=ok. A walk stops at the first record it cannot read
 * ("corrupt"), as a careful analyzer did. Output: "h32: ..." lines on stdout.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static JavaVM *jvm;
static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;

#define ID4(p) (*(jint *)(p))   /* an id in a dump: 4 bytes */

static unsigned int u4(unsigned char *p)
{
    return (unsigned int)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* ---- class table: jint ids hashed as unsigned int ---- */
#define NCLASS 8192
struct cls {
    jint id;
    char *name;
    int nif;
    char *statics; /* first char of each static field's signature */
};
static struct cls classes[NCLASS];
static jint marker_class;
static int marker_i_off = -1, marker_ref_off = -1;

static struct cls *class_slot(jint id)
{
    unsigned int h = ((unsigned int)id >> 3) % NCLASS;
    while (classes[h].id != 0 && classes[h].id != id)
        h = (h + 1) % NCLASS;
    return &classes[h];
}

static int sig_size(char c)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return 4; /* L, [: a reference is an id */
    }
}

static int type_size(int t)
{
    switch (t) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_CLASS: return 4;
    default: return -1;
    }
}

static void class_load(JVMPI_Event *ev)
{
    int i, off = 0;
    jint id = (jint)ev->u.class_load.class_id;
    jvmpi->RawMonitorEnter(lock);
    struct cls *c = class_slot(id);
    if (c->id == 0) {
        c->id = id;
        c->name = strdup(ev->u.class_load.class_name);
        c->nif = ev->u.class_load.num_interfaces;
        c->statics = malloc(ev->u.class_load.num_static_fields + 1);
        for (i = 0; i < ev->u.class_load.num_static_fields; i++)
            c->statics[i] = ev->u.class_load.statics[i].field_signature[0];
        c->statics[i] = 0;
    }
    if (strcmp(ev->u.class_load.class_name, "DumpMarker") == 0) {
        marker_class = id;
        for (i = 0; i < ev->u.class_load.num_instance_fields; i++) {
            JVMPI_Field *f = &ev->u.class_load.instances[i];
            if (strcmp(f->field_name, "i") == 0)
                marker_i_off = off;
            if (strcmp(f->field_name, "ref") == 0)
                marker_ref_off = off;
            off += sig_size(f->field_signature[0]);
        }
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- dumps ---- */
static unsigned char *dump;
static int dump_len;

static void heap_dump(JVMPI_Event *ev)
{
    dump_len = (int)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    dump = malloc(dump_len);
    memcpy(dump, ev->u.heap_dump.begin, dump_len);
}

static int take_dump(int level, const char *file)
{
    JVMPI_HeapDumpArg arg;
    FILE *f;
    arg.heap_dump_level = level;
    dump = NULL;
    if (jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg) != JVMPI_SUCCESS || dump == NULL) {
        printf("h32: HEAP_DUMP level %d failed\n", level);
        return -1;
    }
    f = fopen(file, "wb");
    if (f != NULL) {
        fwrite(dump, 1, dump_len, f);
        fclose(f);
    }
    return 0;
}

#define MAXMARK 1000
static jint mark_id[MAXMARK];
static int nmark;

static void walk_level2(void)
{
    unsigned char *p = dump, *end = dump + dump_len;
    int records = 0, roots = 0, cls = 0, inst = 0, oarr = 0, parr = 0, i, n, sz;
    jint arr_id = 0;
    int arr_len = -1;
    unsigned char *arr = NULL;

    while (p < end) {
        unsigned char *rec = p;
        int type = *p++;
        switch (type) {
        case JVMPI_GC_ROOT_STICKY_CLASS:
        case JVMPI_GC_ROOT_MONITOR_USED:
            p += 4; roots++; break;
        case JVMPI_GC_ROOT_JNI_GLOBAL:
        case JVMPI_GC_ROOT_NATIVE_STACK:
            p += 8; roots++; break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            p += 12; roots++; break;
        case JVMPI_GC_CLASS_DUMP: {
            struct cls *c = class_slot(ID4(p));
            if (c->id == 0) {
                printf("h32: level2 corrupt at %d: class %x unknown\n", (int)(rec - dump), ID4(p));
                goto stop;
            }
            p += 7 * 4 + 4 + c->nif * 4;
            n = p + 2 <= end ? (p[0] << 8 | p[1]) : 0;
            p += 2;
            for (i = 0; i < n && p < end; i++) {
                sz = type_size(p[2]);
                if (sz < 0) {
                    printf("h32: level2 corrupt at %d: constant pool type %d\n", (int)(rec - dump), p[2]);
                    goto stop;
                }
                p += 3 + sz;
            }
            for (i = 0; c->statics[i]; i++)
                p += sig_size(c->statics[i]);
            cls++;
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            jint id = ID4(p), cl = ID4(p + 4);
            n = (int)u4(p + 8);
            p += 12;
            if (n < 0 || n > end - p) {
                printf("h32: level2 corrupt at %d: instance of %d bytes\n", (int)(rec - dump), n);
                goto stop;
            }
            if (cl == marker_class && nmark < MAXMARK) {
                mark_id[nmark++] = id;
                printf("h32: marker i=%d id=%x ref=%x\n", (int)u4(p + marker_i_off), id,
                       ID4(p + marker_ref_off));
            }
            p += n;
            inst++;
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            jint id = ID4(p), el;
            n = (int)u4(p + 4);
            el = ID4(p + 8);
            p += 12;
            if (n < 0 || n > (end - p) / 4) {
                printf("h32: level2 corrupt at %d: object array of %d elements\n", (int)(rec - dump), n);
                goto stop;
            }
            if (el == marker_class) {
                arr_id = id;
                arr_len = n;
                arr = p;
            }
            p += n * 4;
            oarr++;
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP:
            n = (int)u4(p + 4);
            sz = type_size(p[8]);
            p += 9;
            if (sz < 0 || n < 0 || n > (end - p) / sz) {
                printf("h32: level2 corrupt at %d: primitive array of %d elements\n", (int)(rec - dump), n);
                goto stop;
            }
            p += n * sz;
            parr++;
            break;
        default:
            printf("h32: level2 corrupt at %d: record type 0x%x\n", (int)(rec - dump), type);
            goto stop;
        }
        records++;
    }
stop:
    printf("h32: level2 bytes=%d records=%d roots=%d classes=%d instances=%d objarrays=%d primarrays=%d markers=%d\n",
           dump_len, records, roots, cls, inst, oarr, parr, nmark);
    if (arr != NULL) {
        printf("h32: markers_array id=%x len=%d elems=", arr_id, arr_len);
        for (i = 0; i < arr_len; i++)
            printf("%s%x", i ? "," : "", ID4(arr + 4 * i));
        printf("\n");
    }
}

static jint req_class;
static int req_answers;

static void walk_level0(void)
{
    unsigned char *p = dump, *end = dump + dump_len;
    int records = 0, n = 0, ok = 0, failed = 0, markers = 0, known = 0, i, k;
    jint *ids = malloc((dump_len / 5 + 1) * sizeof(jint));

    while (p + 5 <= end) {
        int type = p[0];
        if (type != JVMPI_NORMAL_OBJECT && type_size(type) < 0) {
            printf("h32: level0 corrupt at %d: type %d\n", (int)(p - dump), type);
            break;
        }
        if (type == JVMPI_NORMAL_OBJECT)
            ids[n++] = ID4(p + 1);
        p += 1 + 4;
        records++;
    }
    printf("h32: level0 bytes=%d records=%d objects=%d\n", dump_len, records, n);
    fflush(stdout);

    jvmpi->DisableGC();
    for (i = 0; i < n; i++) {
        req_answers = 0;
        req_class = 0;
        if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, (jobjectID)(int)ids[i]) != JVMPI_SUCCESS ||
            req_answers != 1) {
            failed++;
            continue;
        }
        ok++;
        if (req_class == marker_class) {
            markers++;
            for (k = 0; k < nmark; k++)
                if (mark_id[k] == ids[i])
                    known++;
        }
    }
    jvmpi->EnableGC();
    printf("h32: alloc requests=%d ok=%d failed=%d markers=%d markers_seen_at_level2=%d\n",
           n, ok, failed, markers, known);
    free(ids);
}

/* ---- control thread ---- */
static int property_set(JNIEnv *env, const char *name, const char *value)
{
    jclass sys = (*env)->FindClass(env, "java/lang/System");
    jobject r;
    if (sys == NULL)
        return 0;
    if (value != NULL) {
        jmethodID m = (*env)->GetStaticMethodID(env, sys, "setProperty",
                                                "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;");
        r = (*env)->CallStaticObjectMethod(env, sys, m, (*env)->NewStringUTF(env, name),
                                           (*env)->NewStringUTF(env, value));
    } else {
        jmethodID m = (*env)->GetStaticMethodID(env, sys, "getProperty",
                                                "(Ljava/lang/String;)Ljava/lang/String;");
        r = (*env)->CallStaticObjectMethod(env, sys, m, (*env)->NewStringUTF(env, name));
    }
    return r != NULL;
}

static void control(void *arg)
{
    JNIEnv *env;
    int waited = 0;
    (void)arg;
    (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_2);
    while (!property_set(env, "jvmpishim.dump.ready", NULL) && waited < 60000) {
        usleep(10000);
        waited += 10;
    }
    if (take_dump(JVMPI_DUMP_LEVEL_2, "heap32-2.dump") == 0) {
        walk_level2();
        free(dump);
    }
    if (take_dump(JVMPI_DUMP_LEVEL_0, "heap32-0.dump") == 0) {
        walk_level0();
        free(dump);
    }
    printf("h32: done\n");
    fflush(stdout);
    property_set(env, "jvmpishim.dump.done", "ok");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        req_class = (jint)ev->u.obj_alloc.class_id;
        req_answers++;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        jvmpi->CreateSystemThread("h32-control", JVMPI_NORMAL_PRIORITY, control);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    jvm = vm;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("h32 classes");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    return JNI_OK;
}
