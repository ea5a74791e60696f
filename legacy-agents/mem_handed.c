/* mem_handed.c — a JDK 1.3-style JVMPI agent that tracks object ids without OBJECT_ALLOC,
 * for tests/it/memory/mem_handed.sh (workload tests/java/MemHanded.java).
 *
 * Enabled in JVM_OnLoad: OBJECT_FREE, GC_START, GC_FINISH, MONITOR_WAIT, JVM_SHUT_DOWN; never
 * OBJECT_ALLOC. The agent learns ids the other ways JVMPI hands them out, and keeps a table
 * of every id it was handed: jobject2jobjectID (each followed by RequestEvent(OBJECT_ALLOC)
 * for it, as agents asked for objects they met first elsewhere), MONITOR_WAIT objects,
 * METHOD_ENTRY2 receivers
 * (enabled for a window), heap dumps at levels 0, 1 and 2 (every record and root; class
 * dumps cut with CLASS_LOAD facts it requests, as HPROF did), OBJECT_DUMP, MONITOR_DUMP,
 * GetThreadObject and the requested THREAD_START. The workload announces each step by
 * Object.wait(1) on a MemHanded$Trigger whose "phase" field names it; the MONITOR_WAIT
 * handler reads it with JNI (jobjectID2jobject).
 *
 * Checked live (FAIL lines): an OBJECT_FREE only between GC_START and GC_FINISH, only for an
 * id the agent was handed, never twice; no event or dump names an id after its OBJECT_FREE;
 * the requested THREAD_START carries the id GetThreadObject gave and the env asked about.
 * At JVM_SHUT_DOWN, one line per source: "src <name> handed=H freed=F" (dump0: "freed" counts
 * the ids of the level-0 dump that were freed).
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "mem_handed"
#define KIT_FAIL_MAX 30
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static int in_gc;


/* ---- every id handed out: id -> flags (1 handed, 2 freed) ---- */
struct map {
    void **k;
    unsigned char *v;
    size_t cap, n;
};
static struct map ids;

static size_t hsh(void *p, size_t cap)
{
    return (size_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}
static unsigned char *slot(struct map *m, void *k, int add)
{
    if (add && 2 * (m->n + 1) > m->cap) {
        struct map o = *m;
        m->cap = o.cap ? o.cap * 2 : 1 << 16;
        m->k = calloc(m->cap, sizeof *m->k);
        m->v = calloc(m->cap, 1);
        m->n = 0;
        for (size_t i = 0; i < o.cap; i++)
            if (o.k[i]) {
                *slot(m, o.k[i], 1) = o.v[i];
            }
        free(o.k);
        free(o.v);
    }
    if (m->cap == 0)
        return NULL;
    size_t i = hsh(k, m->cap);
    while (m->k[i] != NULL && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (m->k[i] == NULL) {
        if (!add)
            return NULL;
        m->k[i] = k;
        m->n++;
    }
    return &m->v[i];
}

/* An id reaches the agent: it must not have been freed. */
static void handed(void *id, const char *how)
{
    if (id == NULL)
        return;
    unsigned char *f = slot(&ids, id, 1);
    if (*f & 2)
        FAIL("%s names %p after its OBJECT_FREE", how, id);
    *f |= 1;
}

/* ---- per-source sets of the workload's objects ---- */
enum { S_JNI, S_MON, S_E2, S_D0, S_D1, S_D2, S_OD, S_MD, S_TH, NS };
static const char *src_name[NS] = {"jni", "mon", "entry2", "dump0", "dump1", "dump2", "odump",
                                   "mdump", "thread"};
struct set {
    void **v;
    size_t n, cap;
};
static struct set srcs[NS];
static void add(int s, void *id)
{
    struct set *x = &srcs[s];
    for (size_t i = 0; i < x->n && s != S_D0; i++)
        if (x->v[i] == id)
            return;
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 256;
        x->v = realloc(x->v, x->cap * sizeof *x->v);
    }
    x->v[x->n++] = id;
}

/* ---- classes, for cutting class dumps (CLASS_LOAD on request) ---- */
struct cls {
    void *id;
    int n_if, n_stat;
    char *stat_sig;
    struct cls *next;
};
static struct cls *cls_tab[1024];
static struct cls *cls_find(void *id)
{
    for (struct cls *c = cls_tab[((uintptr_t)id >> 3) % 1024]; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}
static void class_load(JVMPI_Event *ev)
{
    handed(ev->u.class_load.class_id, "CLASS_LOAD");
    if (cls_find(ev->u.class_load.class_id))
        return;
    struct cls *c = calloc(1, sizeof *c);
    c->id = ev->u.class_load.class_id;
    c->n_if = ev->u.class_load.num_interfaces;
    c->n_stat = ev->u.class_load.num_static_fields;
    c->stat_sig = calloc((size_t)c->n_stat + 1, 1);
    for (int i = 0; i < c->n_stat; i++)
        c->stat_sig[i] = ev->u.class_load.statics[i].field_signature[0];
    size_t b = ((uintptr_t)c->id >> 3) % 1024;
    c->next = cls_tab[b];
    cls_tab[b] = c;
}

/* ---- dump reading ---- */
static void *d1_cls, *d2_cls;
static int sz_of_sig(char s)
{
    switch (s) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return (int)sizeof(void *);
    }
}
static int sz_of_type(int t)
{
    switch (t) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    default: return (int)sizeof(void *);
    }
}
static void *rid(const unsigned char **p)
{
    void *v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}
static uint32_t ru4(const unsigned char **p)
{
    const unsigned char *q = *p;
    *p += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

/* Records of a level 1/2 heap dump or of an object dump (src: whose array elements). */
static void read_records(const unsigned char *p, const unsigned char *end, int level, int od)
{
    while (p < end) {
        int t = *p++;
        switch (t) {
        case JVMPI_GC_ROOT_JNI_GLOBAL: case JVMPI_GC_ROOT_NATIVE_STACK:
            handed(rid(&p), "a heap dump root");
            p += sizeof(void *);
            break;
        case JVMPI_GC_ROOT_JNI_LOCAL: case JVMPI_GC_ROOT_JAVA_FRAME:
            handed(rid(&p), "a heap dump root");
            p += sizeof(void *) + 4;
            break;
        case JVMPI_GC_ROOT_STICKY_CLASS: case JVMPI_GC_ROOT_MONITOR_USED:
            handed(rid(&p), "a heap dump root");
            break;
        case JVMPI_GC_CLASS_DUMP: {
            void *id = rid(&p);
            handed(id, "a CLASS_DUMP");
            p += 6 * sizeof(void *) + 4;
            struct cls *c = cls_find(id);
            if (c == NULL) {
                jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
                c = cls_find(id);
            }
            if (c == NULL) {
                FAIL("no CLASS_LOAD for the dumped class %p even on request", id);
                return;
            }
            p += (size_t)c->n_if * sizeof(void *);
            unsigned ncp = (unsigned)p[0] << 8 | p[1];
            p += 2;
            for (unsigned i = 0; i < ncp; i++) {
                p += 2;
                int ty = *p++;
                if (ty == JVMPI_CLASS)
                    handed(rid(&p), "a constant pool entry");
                else
                    p += sz_of_type(ty);
            }
            for (int i = 0; i < c->n_stat; i++) {
                char s = c->stat_sig[i];
                if (s == 'L' || s == '[')
                    p += sizeof(void *);
                else if (level >= 2)
                    p += sz_of_sig(s);
            }
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            void *id = rid(&p), *cid = rid(&p);
            handed(id, "an INSTANCE_DUMP");
            uint32_t n = ru4(&p);
            p += n;
            if (cid != NULL && cid == d1_cls && level == 1)
                add(S_D1, id);
            if (cid != NULL && cid == d2_cls && level == 2)
                add(S_D2, id);
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            handed(rid(&p), "an OBJ_ARRAY_DUMP");
            uint32_t n = ru4(&p);
            p += sizeof(void *);
            for (uint32_t i = 0; i < n; i++) {
                void *e = rid(&p);
                handed(e, "an array element in a dump");
                if (od && e != NULL)
                    add(S_OD, e);
            }
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            handed(rid(&p), "a PRIM_ARRAY_DUMP");
            uint32_t n = ru4(&p);
            int ty = *p++;
            if (level >= 2)
                p += (size_t)n * (size_t)sz_of_type(ty);
            break;
        }
        default:
            FAIL("dump record of type %#x", t);
            return;
        }
    }
}

static void *md_env;
static void monitor_dump(const unsigned char *p, const unsigned char *end, void *trigger_id)
{
    while (p < end) {
        int t = *p++;
        void *obj = NULL, *owner;
        if (t == JVMPI_MONITOR_JAVA) {
            obj = rid(&p);
            handed(obj, "a MONITOR_DUMP record");
        } else if (t == JVMPI_MONITOR_RAW) {
            p += 2 * sizeof(void *);
        } else {
            FAIL("monitor dump record of type %#x", t);
            return;
        }
        owner = rid(&p);
        p += 4;
        uint32_t n = ru4(&p);
        p += n * sizeof(void *);
        n = ru4(&p);
        p += n * sizeof(void *);
        if (obj != NULL && owner == md_env && obj != trigger_id)
            add(S_MD, obj);
    }
}

/* ---- the triggers ---- */
static jclass trig_cls, marker_cls;
static jfieldID f_phase, f_payload;
static jmethodID m_touch;
static void *mon_env;
static int mon_on, e2_on;
static void *trigger_now;
static void *thread_tid, *thread_env;
static void *req_alloc_want, *req_alloc_got;

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
        return NULL;
    }
    return c ? (jclass)(*env)->NewGlobalRef(env, c) : NULL;
}

static void heap_dump(int level)
{
    JVMPI_HeapDumpArg a;
    a.heap_dump_level = level;
    if (jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &a) != JVMPI_SUCCESS)
        FAIL("RequestEvent(HEAP_DUMP, %d)", level);
}

static void on_trigger(JNIEnv *env, jobject t, void *tid)
{
    jstring ps = (jstring)(*env)->GetObjectField(env, t, f_phase);
    const char *ph = (*env)->GetStringUTFChars(env, ps, NULL);
    jobject payload = (*env)->GetObjectField(env, t, f_payload);
    trigger_now = tid;
    if (strcmp(ph, "jni") == 0) {
        jsize n = (*env)->GetArrayLength(env, payload);
        for (jsize i = 0; i < n; i++) {
            jobject e = (*env)->GetObjectArrayElement(env, payload, i);
            void *id = jvmpi->jobject2jobjectID(e);
            jvmpi->RawMonitorEnter(lock);
            handed(id, "jobject2jobjectID");
            add(S_JNI, id);
            req_alloc_want = id;
            req_alloc_got = NULL;
            jvmpi->RawMonitorExit(lock);
            /* Its definition on request, as agents asked for an object they met first
             * elsewhere: the same id comes back, with its class. */
            if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id) != JVMPI_SUCCESS)
                FAIL("RequestEvent(OBJECT_ALLOC, %p)", id);
            else if (req_alloc_got != id)
                FAIL("requested OBJECT_ALLOC for %p carried %p", id, req_alloc_got);
            (*env)->DeleteLocalRef(env, e);
        }
    } else if (strcmp(ph, "mon") == 0) {
        mon_env = env;
        mon_on = 1;
    } else if (strcmp(ph, "mon-end") == 0) {
        mon_on = 0;
    } else if (strcmp(ph, "entry2") == 0) {
        e2_on = 1;
        if (jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL) != JVMPI_SUCCESS)
            FAIL("EnableEvent(METHOD_ENTRY2)");
    } else if (strcmp(ph, "entry2-end") == 0) {
        jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL);
        e2_on = 0;
    } else if (strcmp(ph, "dump0") == 0 || strcmp(ph, "dump1") == 0 || strcmp(ph, "dump2") == 0) {
        if (d1_cls == NULL) {
            jclass c1 = app_class(env, "MemHanded$D1"), c2 = app_class(env, "MemHanded$D2");
            d1_cls = c1 ? jvmpi->jobject2jobjectID(c1) : NULL;
            d2_cls = c2 ? jvmpi->jobject2jobjectID(c2) : NULL;
            jvmpi->RawMonitorEnter(lock);
            handed(d1_cls, "jobject2jobjectID");
            handed(d2_cls, "jobject2jobjectID");
            jvmpi->RawMonitorExit(lock);
        }
        heap_dump(ph[4] - '0');
    } else if (strcmp(ph, "odump") == 0) {
        void *id = jvmpi->jobject2jobjectID(payload);
        jvmpi->RawMonitorEnter(lock);
        handed(id, "jobject2jobjectID");
        jvmpi->RawMonitorExit(lock);
        if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id) != JVMPI_SUCCESS)
            FAIL("RequestEvent(OBJECT_DUMP)");
    } else if (strcmp(ph, "mdump") == 0) {
        md_env = env;
        if (jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL) != JVMPI_SUCCESS)
            FAIL("RequestEvent(MONITOR_DUMP)");
    } else if (strcmp(ph, "thread") == 0) {
        void *id = jvmpi->GetThreadObject(env);
        jvmpi->RawMonitorEnter(lock);
        handed(id, "GetThreadObject");
        add(S_TH, id);
        thread_tid = id;
        thread_env = env;
        if (jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, id) != JVMPI_SUCCESS)
            FAIL("RequestEvent(THREAD_START)");
        jvmpi->RawMonitorExit(lock);
    }
    (*env)->ReleaseStringUTFChars(env, ps, ph);
    if (payload)
        (*env)->DeleteLocalRef(env, payload);
    (*env)->DeleteLocalRef(env, ps);
}

static void monitor_wait(JVMPI_Event *ev)
{
    JNIEnv *env = ev->env_id;
    void *id = ev->u.monitor.object;
    jvmpi->RawMonitorEnter(lock);
    handed(id, "MONITOR_WAIT");
    int ready = trig_cls != NULL;
    jvmpi->RawMonitorExit(lock);
    if (!ready) {
        /* Looked up outside the lock (loadClass runs Java), published under it with the
         * class last: MONITOR_WAIT comes on any thread (a JDK daemon waiting as main
         * triggers), and a thread that sees trig_cls must see the ids too. */
        jclass t = app_class(env, "MemHanded$Trigger");
        jclass m = app_class(env, "MemHanded$Marker");
        if (t == NULL || m == NULL) {
            if (t)
                (*env)->DeleteGlobalRef(env, t);
            if (m)
                (*env)->DeleteGlobalRef(env, m);
            return; /* before the workload's classes exist */
        }
        jfieldID fp = (*env)->GetFieldID(env, t, "phase", "Ljava/lang/String;");
        jfieldID fl = (*env)->GetFieldID(env, t, "payload", "Ljava/lang/Object;");
        jmethodID mt = (*env)->GetMethodID(env, m, "touch", "()V");
        jvmpi->RawMonitorEnter(lock);
        if (trig_cls == NULL) {
            f_phase = fp;
            f_payload = fl;
            m_touch = mt;
            marker_cls = m;
            trig_cls = t;
            t = m = NULL;
        }
        jvmpi->RawMonitorExit(lock);
        if (t)
            (*env)->DeleteGlobalRef(env, t);
        if (m)
            (*env)->DeleteGlobalRef(env, m);
    }
    jobject o = jvmpi->jobjectID2jobject(id);
    if (o == NULL) {
        FAIL("jobjectID2jobject(%p) of a MONITOR_WAIT object: NULL", id);
        return;
    }
    if ((*env)->IsInstanceOf(env, o, trig_cls)) {
        on_trigger(env, o, id);
    } else if (mon_on && env == mon_env && (*env)->IsInstanceOf(env, o, marker_cls)) {
        jvmpi->RawMonitorEnter(lock);
        add(S_MON, id);
        jvmpi->RawMonitorExit(lock);
    }
    (*env)->DeleteLocalRef(env, o);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_MONITOR_WAIT:
        monitor_wait(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        if (ev->u.method_entry2.obj_id != NULL) {
            jvmpi->RawMonitorEnter(lock);
            handed(ev->u.method_entry2.obj_id, "METHOD_ENTRY2");
            if (e2_on && ev->u.method_entry2.method_id == m_touch)
                add(S_E2, ev->u.method_entry2.obj_id);
            jvmpi->RawMonitorExit(lock);
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        jvmpi->RawMonitorEnter(lock);
        handed(ev->u.obj_alloc.obj_id, "OBJECT_ALLOC");
        handed(ev->u.obj_alloc.class_id, "OBJECT_ALLOC's class");
        if (ev->u.obj_alloc.obj_id == req_alloc_want)
            req_alloc_got = ev->u.obj_alloc.obj_id;
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
            FAIL("OBJECT_ALLOC that was not requested (the event is not enabled)");
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        jvmpi->RawMonitorEnter(lock);
        class_load(ev);
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_THREAD_START:
        jvmpi->RawMonitorEnter(lock);
        handed(ev->u.thread_start.thread_id, "THREAD_START");
        if (ev->u.thread_start.thread_id != thread_tid ||
            ev->u.thread_start.thread_env_id != thread_env)
            FAIL("requested THREAD_START: thread %p env %p, asked for %p env %p",
                 ev->u.thread_start.thread_id, (void *)ev->u.thread_start.thread_env_id,
                 thread_tid, thread_env);
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_HEAP_DUMP: {
        const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
        const unsigned char *end = (const unsigned char *)ev->u.heap_dump.end;
        int level = ev->u.heap_dump.dump_level;
        jvmpi->RawMonitorEnter(lock);
        if (level == 0) {
            while (p < end) {
                p++;
                void *id = rid(&p);
                handed(id, "a level-0 dump");
                add(S_D0, id);
            }
        } else {
            read_records(p, end, level, 0);
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_OBJECT_DUMP: {
        const unsigned char *p = (const unsigned char *)ev->u.object_dump.data;
        jvmpi->RawMonitorEnter(lock);
        read_records(p, p + ev->u.object_dump.data_len, 2, 1);
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_MONITOR_DUMP:
        jvmpi->RawMonitorEnter(lock);
        monitor_dump((const unsigned char *)ev->u.monitor_dump.begin,
                     (const unsigned char *)ev->u.monitor_dump.end, trigger_now);
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_GC_START:
        jvmpi->RawMonitorEnter(lock);
        in_gc = 1;
        break;
    case JVMPI_EVENT_OBJECT_FREE: {
        void *id = ev->u.obj_free.obj_id;
        unsigned char *f = slot(&ids, id, 0);
        if (!in_gc)
            FAIL("OBJECT_FREE of %p outside GC_START..GC_FINISH", id);
        if (f == NULL || !(*f & 1))
            FAIL("OBJECT_FREE of %p, an id never handed out", id);
        else if (*f & 2)
            FAIL("OBJECT_FREE twice for %p", id);
        else
            *f |= 2;
        break;
    }
    case JVMPI_EVENT_GC_FINISH:
        in_gc = 0;
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        for (int s = 0; s < NS; s++) {
            size_t freed = 0;
            for (size_t i = 0; i < srcs[s].n; i++) {
                unsigned char *f = slot(&ids, srcs[s].v[i], 0);
                if (f && (*f & 2))
                    freed++;
            }
            say("src %s handed=%zu freed=%zu", src_name[s], srcs[s].n, freed);
        }
        say("shutdown ids=%zu fails=%d", ids.n, g_fails);
        jvmpi->RawMonitorExit(lock);
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
    lock = jvmpi->RawMonitorCreate("_mem_handed");
    static const jint evs[] = {JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START,
                               JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_MONITOR_WAIT,
                               JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (jvmpi->EnableEvent(evs[i], NULL) != JVMPI_SUCCESS)
            say("FAIL EnableEvent(%d)", (int)evs[i]);
    return JNI_OK;
}
