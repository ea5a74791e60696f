/* ident_ondemand.c — a JDK 1.3-style heap profiler (the HPROF family) that learns
 * definitions on demand (tests/it/classes/ident_ondemand.sh, workload
 * tests/java/IdentOnDemand.java).
 *
 * Enabled: OBJECT_ALLOC, OBJECT_FREE, CLASS_UNLOAD, JVM_INIT_DONE, JVM_SHUT_DOWN, and
 * CLASS_LOAD unless the option is "requested" (then every class is learned through
 * RequestEvent(CLASS_LOAD)). One global raw monitor guards every table and is held across
 * each handler, requests included (raw monitors are reentrant), as HPROF did.
 *
 * The idioms, as agents of the era wrote them:
 *  - Definitions on demand: an OBJECT_ALLOC names a class; before recording the object, the
 *    class must be known. If it is not, the agent asks for the class object
 *    (RequestEvent(OBJECT_ALLOC, class_id), if that object is unknown too) and then for the
 *    class (RequestEvent(CLASS_LOAD, class_id)), from inside the handler. It relies on the
 *    chain ending: java.lang.Class's own Class object has class_id NULL. A guard fails the
 *    test when the nesting passes MAX_DEPTH instead of recursing until the stack is gone.
 *  - Every class object met in CLASS_LOAD is asked for with RequestEvent(OBJECT_ALLOC) when
 *    it is not known yet; an OBJECT_ALLOC for an id that is alive (allocated and not freed)
 *    is a FAIL: the table would hold a second, classless object.
 *  - The char* of CLASS_LOAD (class and method names, requested or not) are kept, not
 *    copied; at JVM_SHUT_DOWN the agent prints the workload's classes from those pointers
 *    ("kept NAME methods=a,b,c"), as memory profilers printed their class tables at exit,
 *    and java.lang.Object and java.util.zip.CRC32 (boot classes: one replayed at start-up,
 *    one loaded by the workload).
 * Printed: FAIL lines, the kept classes, a summary.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "ident_ondemand"
#define KIT_LINE 4096
#define KIT_FAIL_MAX 19
#include "kit/out.h"
#include "kit/jvm.h"

#define MAX_DEPTH 6
#define PREFIX "IdentOnDemand"

static JVMPI_RawMonitor lock;
static int max_depth_seen, depth;
static long allocs, requested_allocs, requested_classes, frees, twice, self_class;
static int only_requested;


/* ---- tables: chained hashes keyed by id (caller holds lock) ---- */

#define NB (1 << 18)
struct obj {
    jobjectID id;
    jobjectID class_id;
    int requested;
    struct obj *next;
};
static struct obj *objs[NB];

struct cls {
    jobjectID id;
    const char *name;             /* the event's pointer, kept */
    int workload, requested;
    jint num_methods;
    JVMPI_Method *methods;        /* the event's array, kept */
    struct cls *next;
};
static struct cls *classes[NB];

static unsigned h(jobjectID id) { return (unsigned)(((unsigned long)id >> 3) * 2654435761u) % NB; }

static struct obj *obj_find(jobjectID id)
{
    for (struct obj *o = objs[h(id)]; o; o = o->next)
        if (o->id == id)
            return o;
    return NULL;
}
static struct cls *cls_find(jobjectID id)
{
    for (struct cls *c = classes[h(id)]; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* ---- definitions on demand ---- */

static jint cur_is_array;
static jobjectID cur_obj;

static void define_class(jobjectID cid)
{
    depth++;
    if (depth > max_depth_seen)
        max_depth_seen = depth;
    if (depth > MAX_DEPTH) {
        FAIL("definition chain deeper than %d at class id %p: it does not end", MAX_DEPTH,
             (void *)cid);
        depth--;
        return;
    }
    if (obj_find(cid) == NULL)
        jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, cid);
    if (cls_find(cid) == NULL) {
        requested_classes++;
        if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid) != JVMPI_SUCCESS || cls_find(cid) == NULL)
            FAIL("RequestEvent(CLASS_LOAD, %p) did not define the class (named by object %p "
                 "is_array %d)", (void *)cid, (void *)cur_obj, (int)cur_is_array);
    }
    depth--;
}

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_alloc.obj_id, cid = ev->u.obj_alloc.class_id;
    allocs++;
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        requested_allocs++;
    if (cid != NULL && cid == id)
        self_class++;
    /* The class first (HPROF made the site before the object). */
    cur_obj = id;
    cur_is_array = ev->u.obj_alloc.is_array;
    if (cid != NULL && cls_find(cid) == NULL)
        define_class(cid);
    struct obj *o = obj_find(id);
    if (o != NULL) {
        twice++;
        FAIL("OBJECT_ALLOC%s for id %p (class %p), already allocated%s (class %p) and not freed",
             (ev->event_type & JVMPI_REQUESTED_EVENT) ? " (requested)" : "", (void *)id,
             (void *)cid, o->requested ? " by request" : "", (void *)o->class_id);
        return;
    }
    o = malloc(sizeof *o);
    o->id = id;
    o->class_id = cid;
    o->requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    o->next = objs[h(id)];
    objs[h(id)] = o;
}

static void on_free(jobjectID id)
{
    frees++;
    struct obj **p = &objs[h(id)];
    for (; *p; p = &(*p)->next)
        if ((*p)->id == id) {
            struct obj *o = *p;
            *p = o->next;
            free(o);
            return;
        }
}

static void on_class_load(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.class_load.class_id;
    if (cls_find(cid) != NULL)
        return; /* a class the agent knows (it may have asked again) */
    struct cls *c = calloc(1, sizeof *c);
    c->id = cid;
    c->name = ev->u.class_load.class_name;
    c->workload = c->name && (strncmp(c->name, PREFIX, strlen(PREFIX)) == 0 ||
                              strcmp(c->name, "java.lang.Object") == 0 ||
                              strcmp(c->name, "java.util.zip.CRC32") == 0);
    c->requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    c->num_methods = ev->u.class_load.num_methods;
    c->methods = ev->u.class_load.methods;
    c->next = classes[h(cid)];
    classes[h(cid)] = c;
    /* The class object too, so that its allocation site is known. */
    if (obj_find(cid) == NULL)
        jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, cid);
}

static void on_class_unload(jobjectID cid)
{
    struct cls **p = &classes[h(cid)];
    for (; *p; p = &(*p)->next)
        if ((*p)->id == cid) {
            struct cls *c = *p;
            *p = c->next;
            free(c);
            return;
        }
}

/* A kept string, printed safely: freed memory may hold anything. */
static void safe(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    for (; s && i + 1 < n && s[i]; i++)
        dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    dst[i] = '\0';
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void print_kept(void)
{
    int n = 0;
    for (int b = 0; b < NB; b++)
        for (struct cls *c = classes[b]; c; c = c->next) {
            if (!c->workload)
                continue;
            char name[256], list[2048] = "";
            safe(name, sizeof name, c->name);
            char **ms = calloc(c->num_methods + 1, sizeof *ms);
            for (jint i = 0; i < c->num_methods; i++) {
                ms[i] = malloc(128);
                safe(ms[i], 128, c->methods[i].method_name);
            }
            qsort(ms, c->num_methods, sizeof *ms, cmp_str);
            for (jint i = 0; i < c->num_methods; i++) {
                if (i)
                    strncat(list, ",", sizeof list - strlen(list) - 1);
                strncat(list, ms[i], sizeof list - strlen(list) - 1);
                free(ms[i]);
            }
            free(ms);
            say("kept %s%s methods=%s", name, c->requested ? " (requested)" : "", list);
            n++;
        }
    say("kept classes=%d", n);
}

static void notify(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_free(ev->u.obj_free.obj_id);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev->u.class_unload.class_id);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("init done allocs=%ld", allocs);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        print_kept();
        say("summary allocs=%ld requested_allocs=%ld requested_classes=%ld frees=%ld twice=%ld "
            "self_class=%ld max_depth=%d fails=%d",
            allocs, requested_allocs, requested_classes, frees, twice, self_class,
            max_depth_seen, g_fails);
        break;
    }
    jvmpi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    only_requested = options != NULL && strcmp(options, "requested") == 0;
    lock = jvmpi->RawMonitorCreate("ident_ondemand");
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_FREE, NULL);
    if (!only_requested)
        jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_UNLOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("loaded%s", only_requested ? " (classes on request only)" : "");
    return JNI_OK;
}
