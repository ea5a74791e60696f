/* mem_live.c — a JDK 1.3-style live-object profiler in the HPROF manner, for
 * tests/it/memory/mem_live.sh (workload tests/java/MemLive.java).
 *
 * As HPROF-family agents kept their books: one global raw monitor; OBJECT_ALLOC puts the id
 * and its class in a table, OBJECT_FREE takes it out; GC_START enters the monitor and
 * GC_FINISH leaves it, so no table changes during a collection; CLASS_LOAD names classes.
 * "Live" figures are the table: what was allocated and not yet freed. Figures are written
 * where such agents wrote them: in a HEAP_DUMP handler (a level-0 dump requested in the
 * CLASS_LOAD handler of MemLive$DumpNow, and one requested in the DATA_DUMP_REQUEST
 * handler, i.e. on SIGQUIT) and in the JVM_SHUT_DOWN handler. These agents relied on every
 * free of an earlier collection having been reported by then.
 *
 * Enabled in JVM_OnLoad: OBJECT_ALLOC, OBJECT_FREE, GC_START, GC_FINISH, CLASS_LOAD,
 * DATA_DUMP_REQUEST, JVM_SHUT_DOWN.
 *
 * Output ("mem_live: ..."):
 *   dump why=<classload|sigquit> live_markers=N dump_markers=M freed_in_dump=F unknown_in_dump=U
 *       the agent's live count of MemLive$Marker, the dump's ids that the table names as
 *       markers, dump ids that had an OBJECT_FREE before the dump (must be 0);
 *   shutdown live_markers=N in_gc=0|1
 *   FAIL ... for: OBJECT_FREE of an id never allocated, a free twice, a free outside
 *       GC_START..GC_FINISH, an id allocated twice, a dump record of an unexpected type.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "mem_live"
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor data_lock;
static int in_gc;
static void *marker_cid;
static int dump_requested;
static const char *dump_why = "?";

/* ---- id -> class id table (open addressing; tombstones on delete) ---- */
#define TOMB ((void *)1)
struct table {
    void **k, **v;
    size_t cap, used; /* used counts live keys and tombstones */
};
static struct table objs, freed;

static size_t h(void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 20) & (cap - 1);
}

static void t_put(struct table *t, void *k, void *v);
static void t_grow(struct table *t)
{
    struct table o = *t;
    t->cap = o.cap ? o.cap * 2 : 65536;
    t->k = calloc(t->cap, sizeof *t->k);
    t->v = calloc(t->cap, sizeof *t->v);
    t->used = 0;
    if (t->k == NULL || t->v == NULL) {
        say("FAIL out of memory");
        exit(3);
    }
    for (size_t i = 0; i < o.cap; i++)
        if (o.k[i] != NULL && o.k[i] != TOMB)
            t_put(t, o.k[i], o.v[i]);
    free(o.k);
    free(o.v);
}

static void **t_slot(struct table *t, void *k)
{
    if (t->cap == 0)
        return NULL;
    for (size_t i = h(k, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->k[i] == NULL)
            return NULL;
        if (t->k[i] == k)
            return &t->k[i];
    }
}

static int t_has(struct table *t, void *k) { return t_slot(t, k) != NULL; }

static void *t_get(struct table *t, void *k)
{
    void **s = t_slot(t, k);
    return s ? t->v[s - t->k] : NULL;
}

static void t_put(struct table *t, void *k, void *v)
{
    if (2 * (t->used + 1) > t->cap)
        t_grow(t);
    size_t i = h(k, t->cap);
    while (t->k[i] != NULL && t->k[i] != k)
        i = (i + 1) & (t->cap - 1);
    if (t->k[i] == NULL)
        t->used++;
    t->k[i] = k;
    t->v[i] = v;
}

static void t_del(struct table *t, void *k)
{
    void **s = t_slot(t, k);
    if (s != NULL)
        *s = TOMB;
}

static long live_of(void *cid)
{
    long n = 0;
    for (size_t i = 0; i < objs.cap; i++)
        if (objs.k[i] != NULL && objs.k[i] != TOMB && objs.v[i] == cid)
            n++;
    return n;
}

/* ---- handlers ---- */

static void heap_dump(JVMPI_Event *ev)
{
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_0) {
        say("FAIL heap dump of level %d, asked for 0", ev->u.heap_dump.dump_level);
        return;
    }
    const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.heap_dump.end;
    long markers = 0, freed_in = 0, unknown = 0;
    jvmpi->RawMonitorEnter(data_lock);
    while (p < end) {
        int type = *p++;
        void *id;
        if (type != JVMPI_NORMAL_OBJECT && type != JVMPI_CLASS &&
            (type < JVMPI_BOOLEAN || type > JVMPI_LONG)) {
            say("FAIL level-0 record of type %d", type);
            break;
        }
        memcpy(&id, p, sizeof id);
        p += sizeof id;
        if (t_has(&freed, id)) {
            if (++freed_in <= 5)
                say("FAIL dump names %p, whose OBJECT_FREE came before the dump", id);
            continue;
        }
        if (!t_has(&objs, id))
            unknown++;
        else if (t_get(&objs, id) == marker_cid)
            markers++;
    }
    say("dump why=%s live_markers=%ld dump_markers=%ld freed_in_dump=%ld unknown_in_dump=%ld",
        dump_why, live_of(marker_cid), markers, freed_in, unknown);
    jvmpi->RawMonitorExit(data_lock);
}

static void request_dump(const char *why)
{
    JVMPI_HeapDumpArg arg;
    arg.heap_dump_level = JVMPI_DUMP_LEVEL_0;
    jvmpi->RawMonitorEnter(data_lock);
    dump_why = why;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    jvmpi->RawMonitorExit(data_lock);
    if (rc != JVMPI_SUCCESS)
        say("FAIL RequestEvent(HEAP_DUMP) rc=%d", (int)rc);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *name = ev->u.class_load.class_name;
        jvmpi->RawMonitorEnter(data_lock);
        if (name != NULL && strcmp(name, "MemLive$Marker") == 0)
            marker_cid = ev->u.class_load.class_id;
        jvmpi->RawMonitorExit(data_lock);
        if (name != NULL && strcmp(name, "MemLive$DumpNow") == 0 && !dump_requested++)
            request_dump("classload");
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC:
        jvmpi->RawMonitorEnter(data_lock);
        if (t_has(&objs, ev->u.obj_alloc.obj_id) && !(ev->event_type & JVMPI_REQUESTED_EVENT))
            say("FAIL OBJECT_ALLOC twice for %p", (void *)ev->u.obj_alloc.obj_id);
        t_put(&objs, ev->u.obj_alloc.obj_id, ev->u.obj_alloc.class_id);
        jvmpi->RawMonitorExit(data_lock);
        break;
    case JVMPI_EVENT_OBJECT_FREE: {
        void *id = ev->u.obj_free.obj_id;
        if (!in_gc)
            say("FAIL OBJECT_FREE of %p outside GC_START..GC_FINISH", id);
        if (t_has(&freed, id))
            say("FAIL OBJECT_FREE twice for %p", id);
        else if (!t_has(&objs, id))
            say("FAIL OBJECT_FREE of %p, never allocated", id);
        t_del(&objs, id);
        t_put(&freed, id, id);
        break;
    }
    case JVMPI_EVENT_GC_START:
        jvmpi->RawMonitorEnter(data_lock);
        in_gc = 1;
        break;
    case JVMPI_EVENT_GC_FINISH:
        in_gc = 0;
        jvmpi->RawMonitorExit(data_lock);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        heap_dump(ev);
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST: {
        request_dump("sigquit");
        JNIEnv *env = ev->env_id;
        jclass c = (*env)->FindClass(env, "MemLive");
        jfieldID f = c ? (*env)->GetStaticFieldID(env, c, "dumped", "Z") : NULL;
        if (f != NULL)
            (*env)->SetStaticBooleanField(env, c, f, JNI_TRUE);
        else
            say("FAIL cannot find MemLive.dumped");
        (*env)->ExceptionClear(env);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(data_lock);
        say("shutdown live_markers=%ld in_gc=%d", live_of(marker_cid), in_gc);
        jvmpi->RawMonitorExit(data_lock);
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
    data_lock = jvmpi->RawMonitorCreate("_mem_live_data");
    static const jint evs[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_OBJECT_ALLOC,
                               JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START,
                               JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_DATA_DUMP_REQUEST,
                               JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (jvmpi->EnableEvent(evs[i], NULL) != JVMPI_SUCCESS)
            say("FAIL EnableEvent(%d)", (int)evs[i]);
    return JNI_OK;
}
