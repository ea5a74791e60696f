/* ctor_recv.c — a JDK 1.3-style tracer that checks METHOD_ENTRY2's receiver for constructors
 * (tests/it/methods/ctor_recv.sh, workload tests/java/CtorWork.java).
 *
 * Enables METHOD_ENTRY2, METHOD_EXIT, CLASS_LOAD, THREAD_START, JVM_SHUT_DOWN and, for the
 * "ensure defined" idiom, nothing else: every constructor receiver id it has not seen is
 * asked for at once with RequestEvent(OBJECT_ALLOC), under the agent's lock, from the
 * ENTRY2 handler. Per thread (GetThreadLocalStorage) it keeps a shadow stack of
 * (method, obj_id) from ENTRY2 and METHOD_EXIT.
 *
 * The workload calls CtorWork.truth(this), a native of this library (the agent's own Java
 * helper), from every constructor of its Ctor* classes once `this` is initialized. There
 * the agent takes jobject2jobjectID(this) (GC disabled, as JDK 1.3 agents did) and compares
 * it with the obj_id of the innermost open constructor frame below the helper frames
 * (CtorWork.seen, CtorWork.truth) on its shadow stack.
 *
 * Checked live (FAIL lines, first 5 per kind), on the workload's threads "ctor-*":
 *   null      ENTRY2 of a workload constructor with obj_id NULL
 *   wrong     truth(this): the constructor frame's obj_id is not this object's id
 *   noframe   truth(this) with no constructor frame of the workload below the helpers
 *   nest      METHOD_EXIT of another method than the innermost open frame
 *   request   RequestEvent(OBJECT_ALLOC) for a receiver failed, or its event named
 *             another object or a class outside the workload
 *   trace     GetCallTrace in a constructor's ENTRY2 handler: the top frame is not that
 *             constructor (a profiler attributes the entry to the stack's top frame)
 * Prints at JVM_SHUT_DOWN:
 *   ctor: summary checked=K ctor_entries=E requested=R fails=F [kind=n ...]
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "ctor"
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;

enum { F_NULL, F_WRONG, F_NOFRAME, F_NEST, F_REQUEST, F_TRACE, NFAIL };
static const char *fail_name[NFAIL] = {"null", "wrong", "noframe", "nest", "request", "trace"};
static volatile int fail_counts[NFAIL];

static volatile long g_checked, g_ctor_entries, g_requested;

/* ---- methods of the workload: jmethodID -> kind (insert-only, under lock) ------------- */
enum { K_OTHER, K_CTOR, K_HELPER };
#define MCAP 1024
static jmethodID mkeys[MCAP];
static int mkind[MCAP];
static char *mname[MCAP];

static size_t hash_ptr(const void *p)
{
    unsigned long long x = (unsigned long long)(size_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static int method_kind(jmethodID m, const char **name)
{
    for (size_t i = hash_ptr(m) & (MCAP - 1), n = 0; n < MCAP; i = (i + 1) & (MCAP - 1), n++) {
        jmethodID k = __atomic_load_n(&mkeys[i], __ATOMIC_ACQUIRE);
        if (k == m) {
            if (name)
                *name = mname[i];
            return mkind[i];
        }
        if (k == NULL)
            break;
    }
    return K_OTHER;
}

static void method_add(jmethodID m, int kind, const char *cls, const char *name)
{
    for (size_t i = hash_ptr(m) & (MCAP - 1), n = 0; n < MCAP; i = (i + 1) & (MCAP - 1), n++) {
        if (mkeys[i] == m)
            return;
        if (mkeys[i] == NULL) {
            size_t len = strlen(cls) + strlen(name) + 2;
            mname[i] = malloc(len);
            snprintf(mname[i], len, "%s.%s", cls, name);
            mkind[i] = kind;
            __atomic_store_n(&mkeys[i], m, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* Class ids of the workload (to check the answers to the agent's requests). */
#define CCAP 64
static jobjectID ctor_classes[CCAP];
static int nctor_classes;

static int workload_class(jobjectID cid)
{
    for (int i = 0; i < nctor_classes; i++)
        if (ctor_classes[i] == cid)
            return 1;
    return 0;
}

/* ---- receiver ids seen (ensure defined): an open-addressing set, under lock ---------- */
static jobjectID *seen;
static size_t seen_cap, seen_n;

static int seen_has(jobjectID id)
{
    if (seen_cap == 0)
        return 0;
    for (size_t i = hash_ptr(id) & (seen_cap - 1);; i = (i + 1) & (seen_cap - 1)) {
        if (seen[i] == id)
            return 1;
        if (seen[i] == NULL)
            return 0;
    }
}

static void seen_add(jobjectID id)
{
    if (2 * (seen_n + 1) > seen_cap) {
        size_t oc = seen_cap, nc = oc ? 2 * oc : 4096;
        jobjectID *old = seen;
        seen = calloc(nc, sizeof *seen);
        seen_cap = nc;
        seen_n = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i] != NULL)
                seen_add(old[i]);
        free(old);
    }
    size_t i = hash_ptr(id) & (seen_cap - 1);
    while (seen[i] != NULL && seen[i] != id)
        i = (i + 1) & (seen_cap - 1);
    if (seen[i] == NULL) {
        seen[i] = id;
        seen_n++;
    }
}

/* ---- per-thread shadow stack (thread-local storage) ---------------------------------- */
struct frame {
    jmethodID m;
    jobjectID obj;
};
struct tstate {
    int strict; /* a workload thread "ctor-*" */
    int n, cap;
    struct frame *st;
    jobjectID req_obj;   /* the request in flight on this thread */
    int req_got;
};

static struct tstate *tstate(JNIEnv *env)
{
    struct tstate *t = jvmpi->GetThreadLocalStorage(env);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        jvmpi->SetThreadLocalStorage(env, t);
    }
    return t;
}

static void on_entry2(JVMPI_Event *ev)
{
    struct tstate *t = tstate(ev->env_id);
    jmethodID m = ev->u.method_entry2.method_id;
    jobjectID obj = ev->u.method_entry2.obj_id;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->st = realloc(t->st, sizeof *t->st * (size_t)t->cap);
    }
    t->st[t->n].m = m;
    t->st[t->n].obj = obj;
    t->n++;
    const char *name = NULL;
    if (method_kind(m, &name) != K_CTOR)
        return;
    __sync_add_and_fetch(&g_ctor_entries, 1);
    if (t->strict) {
        JVMPI_CallFrame frames[4];
        JVMPI_CallTrace trace;
        trace.env_id = ev->env_id;
        trace.frames = frames;
        trace.num_frames = 0;
        jvmpi->GetCallTrace(&trace, 4);
        if (trace.num_frames < 1 || frames[0].method_id != m) {
            const char *top = "none";
            if (trace.num_frames >= 1)
                method_kind(frames[0].method_id, &top);
            FAILK(F_TRACE, "ENTRY2 of %s: GetCallTrace's top frame is %s", name, top ? top : "?");
        }
    }
    if (obj == NULL) {
        FAILK(F_NULL, "ENTRY2 of %s with obj_id NULL", name);
        return;
    }
    /* Ensure defined: a receiver not seen yet is asked for at once. */
    jvmpi->RawMonitorEnter(lock);
    if (!seen_has(obj)) {
        seen_add(obj); /* pending: no second request from a nested event */
        t->req_obj = obj;
        t->req_got = 0;
        jvmpi->DisableGC();
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj);
        jvmpi->EnableGC();
        __sync_add_and_fetch(&g_requested, 1);
        if (rc != JVMPI_SUCCESS || !t->req_got)
            FAILK(F_REQUEST, "RequestEvent(OBJECT_ALLOC, %p) for the receiver of %s: rc=%d got=%d",
                 (void *)obj, name, (int)rc, t->req_got);
        t->req_obj = NULL;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_method_exit(JVMPI_Event *ev)
{
    struct tstate *t = tstate(ev->env_id);
    jmethodID m = ev->u.method.method_id;
    if (t->n > 0 && t->st[t->n - 1].m == m) {
        t->n--;
        return;
    }
    if (t->strict) {
        const char *a = "?", *b = "?";
        method_kind(m, &a);
        if (t->n > 0)
            method_kind(t->st[t->n - 1].m, &b);
        FAILK(F_NEST, "METHOD_EXIT of %s while %s is the innermost open frame", a ? a : "?", b ? b : "?");
    }
    while (t->n > 0 && t->st[t->n - 1].m != m)
        t->n--;
    if (t->n > 0)
        t->n--;
}

/* CtorWork.truth(Object): called from every workload constructor once `this` is set up. */
JNIEXPORT void JNICALL Java_CtorWork_truth(JNIEnv *env, jclass cls, jobject self)
{
    (void)cls;
    jvmpi->DisableGC();
    jobjectID id = jvmpi->jobject2jobjectID(self);
    jvmpi->EnableGC();
    struct tstate *t = tstate(env);
    int i = t->n - 1;
    while (i >= 0 && method_kind(t->st[i].m, NULL) == K_HELPER)
        i--;
    const char *name = NULL;
    if (i < 0 || method_kind(t->st[i].m, &name) != K_CTOR) {
        FAILK(F_NOFRAME, "truth(%p): no workload constructor frame open", (void *)id);
        return;
    }
    if (t->st[i].obj != id)
        FAILK(F_WRONG, "%s: ENTRY2 obj_id %p, but this object is %p", name, (void *)t->st[i].obj,
             (void *)id);
    __sync_add_and_fetch(&g_checked, 1);
}

static void notify(JVMPI_Event *ev)
{
    int type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *cn = ev->u.class_load.class_name;
        if (cn == NULL || strncmp(cn, "Ctor", 4) != 0)
            break;
        jvmpi->RawMonitorEnter(lock);
        if (nctor_classes < CCAP)
            ctor_classes[nctor_classes++] = ev->u.class_load.class_id;
        for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *mm = &ev->u.class_load.methods[i];
            int kind = strcmp(mm->method_name, "<init>") == 0 && strcmp(cn, "CtorWork") != 0
                           ? K_CTOR
                       : strcmp(cn, "CtorWork") == 0 && (strcmp(mm->method_name, "seen") == 0 ||
                                                          strcmp(mm->method_name, "truth") == 0)
                           ? K_HELPER
                           : K_OTHER;
            method_add(mm->method_id, kind, cn, mm->method_name);
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        if (ev->u.thread_start.thread_name &&
            strncmp(ev->u.thread_start.thread_name, "ctor-", 5) == 0)
            tstate(ev->u.thread_start.thread_env_id)->strict = 1;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        on_entry2(ev);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method_exit(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC: {
        struct tstate *t = tstate(ev->env_id);
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT) || t->req_obj == NULL)
            break;
        if (ev->u.obj_alloc.obj_id != t->req_obj || !workload_class(ev->u.obj_alloc.class_id))
            FAILK(F_REQUEST, "requested OBJECT_ALLOC for %p names %p of class id %p",
                 (void *)t->req_obj, (void *)ev->u.obj_alloc.obj_id,
                 (void *)ev->u.obj_alloc.class_id);
        t->req_got = 1;
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        char kinds[256] = "";
        for (int k = 0; k < NFAIL; k++)
            if (fail_counts[k])
                snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), " %s=%d",
                         fail_name[k], fail_counts[k]);
        say("summary checked=%ld ctor_entries=%ld requested=%ld fails=%d%s", g_checked,
            g_ctor_entries, g_requested, g_fails, kinds);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        say("FAIL GetEnv(JVMPI_VERSION_1)");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("ctor_recv lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("loaded");
    return JNI_OK;
}
