/* sampler_lock.c — a sampling profiler in HPROF's shape that calls JVMPI while holding its
 * one global lock (tests/it/threads/sampler_hang.sh, workload tests/java/LoadStorm.java).
 *
 * One raw monitor guards every table and is taken by every handler: CLASS_LOAD,
 * CLASS_UNLOAD, THREAD_START/END, OBJECT_ALLOC/FREE (option alloc), the MONITOR_* events
 * (option monitor) and the dump events; GC_START enters it and GC_FINISH leaves it, so no
 * table changes during a collection (agent-idioms.md, the HPROF family). A CreateSystemThread
 * sampler started at JVM_INIT_DONE takes the lock every period=MS (default 1) and, holding
 * it, for each known thread other than itself does ThreadHasRun, SuspendThread, GetCallTrace,
 * ResumeThread, and for each frame GetMethodClass and, for a class it has not seen,
 * RequestEvent(CLASS_LOAD) (resolve=during: while the thread is still suspended). Still
 * holding it, one more JVMPI call per round, round-robin (calls=all, the default; calls=trace
 * makes only the samples): RequestEvent of OBJECT_ALLOC (a class mirror or a Thread object),
 * THREAD_START (a live thread's object), CLASS_LOAD (a class of the boot or application
 * loader), MONITOR_DUMP, OBJECT_DUMP, SuspendThreadList/ResumeThreadList, GetThreadStatus,
 * GetThreadObject, GetThreadLocalStorage, jobjectID2jobject/jobject2jobjectID,
 * DisableGC/EnableGC, GetCurrentThreadCpuTime, RawMonitorWait(lock, 1), and
 * RequestEvent(HEAP_DUMP) at level 0 every heap=MS (default 500; 0: never). Objects are
 * requested with GC disabled, as HotSpot required.
 *
 * What it checks, as an agent that trusts JVMPI would (a FAIL line each):
 *  - every request HotSpot answered returns JVMPI_SUCCESS with its event delivered on the
 *    calling thread before the call returns, naming what was asked for;
 *  - GetMethodClass gives a class for every frame (while the thread is suspended), the
 *    requested CLASS_LOAD of an unseen class lists the frame's method, and every class id
 *    met in a frame got its own (unrequested) CLASS_LOAD by JVM_SHUT_DOWN;
 *  - GetThreadObject, jobject2jobjectID(jobjectID2jobject(id)), GetThreadLocalStorage,
 *    GetThreadStatus, GetCurrentThreadCpuTime and the list calls answer as on HotSpot;
 *  - GC_FINISH comes on the thread of its GC_START (else its RawMonitorExit would not
 *    release the lock).
 * At JVM_SHUT_DOWN it stops the sampler and prints counts: "sampler_lock: summary ...",
 * "sampler_lock: loads cargo=N storm_threads=N short_threads=N" (unrequested CLASS_LOADs of
 * LoadStormCargo* classes, THREAD_STARTs of storm-NN and storm-short-N threads) and the
 * slowest JVMPI call it made ("slowest NAME MS": printed, never judged).
 * Options (comma-separated): alloc, monitor, calls=all|trace, resolve=after|during,
 * period=MS, heap=MS, depth=N.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "sampler_lock"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 40
#define KIT_MONOTONIC
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

/* ---- options ---- */

static int opt_alloc, opt_monitor, opt_calls = 1, opt_during, opt_period = 1, opt_heap = 500;
static int opt_depth = 8;

/* ---- state, all under lock ---- */

static JVMPI_RawMonitor lock;

#define C_LOADED 1     /* an unrequested CLASS_LOAD came */
#define C_REQUESTED 2  /* a requested CLASS_LOAD came */
#define C_UNLOADED 4
#define C_FRAME 8      /* named by a frame before any CLASS_LOAD of it */
struct cls {
    char *name;
    int flags;
    int nmethods;
    jmethodID *methods;
};
static struct pmap classes; /* class id -> struct cls */

struct thr {
    JNIEnv *env;
    char name[64];
    long magic;
};
#define MAXLIVE 8192
static struct thr *live[MAXLIVE];
static int nlive;

#define MAXSTABLE 4096
static jobjectID stable[MAXSTABLE]; /* classes that never unload: boot and app loader */
static int nstable;
static jobjectID jlc_id;            /* java.lang.Class */

/* What the sampler has asked for and is waiting to be told, innermost last: a requested
 * event must come on the requesting thread before RequestEvent returns. */
struct req {
    jint type;
    void *arg;
    int got;
    jobjectID answer; /* OBJECT_ALLOC: class_id; THREAD_START: thread_env_id as id */
    int is_array;
};
#define MAXREQ 16
static struct req *reqs[MAXREQ];
static int nreq;

static volatile int stop, sampler_done;
static pthread_t gc_thread;
static int in_gc;
static long gc_other_thread;

static long n_rounds, n_samples, n_frames, n_empty, n_notrun, n_frame_requests, n_late;
static long n_null_class_after, n_alloc_req, n_thread_req, n_class_req, n_mon_dumps, n_heap_dumps;
static long n_obj_dumps, n_status, n_thread_obj, n_roundtrip, n_gc_disable, n_cputime, n_waits;
static long n_lists, n_list_invalid, n_tls, n_brackets, n_class_loads, n_class_unloads;
static long n_requested_loads, n_thread_starts, n_allocs, n_frees, n_null_class_allocs, n_mon_events;
static long n_cargo, n_storm, n_short, n_heap_records, n_ondemand;
static long long slowest_ns;
static const char *slowest_name = "none";

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Times a JVMPI call of the sampler: the slowest is printed (a profiler that stalls is seen
 * in the summary, but a wall time is never judged). */
#define TIMED(name, call)                                                               \
    do {                                                                                \
        long long t0_ = now_ns();                                                       \
        call;                                                                           \
        long long d_ = now_ns() - t0_;                                                  \
        if (d_ > slowest_ns) {                                                          \
            slowest_ns = d_;                                                            \
            slowest_name = name;                                                        \
        }                                                                               \
    } while (0)

static int live_index(JNIEnv *env)
{
    for (int i = 0; i < nlive; i++)
        if (live[i]->env == env)
            return i;
    return -1;
}

static int prefix(const char *s, const char *p) { return s != NULL && strncmp(s, p, strlen(p)) == 0; }

/* A class of the boot or application loader that is not generated: it never unloads, so
 * its id stays good for requests at any time. */
static int is_stable(const char *name)
{
    return (prefix(name, "java.") || prefix(name, "LoadStorm")) && !prefix(name, "LoadStormCargo") &&
           strchr(name, '/') == NULL && strstr(name, "$$") == NULL && strstr(name, "Lambda") == NULL;
}

/* ---- requests ---- */

static jint request(const char *name, jint type, void *arg, struct req *r)
{
    memset(r, 0, sizeof *r);
    r->type = type;
    r->arg = arg;
    if (nreq < MAXREQ)
        reqs[nreq++] = r;
    jint rc;
    TIMED(name, rc = jvmpi->RequestEvent(type, arg));
    nreq--;
    return rc;
}

/* The innermost pending request of this type, if the event answers it. */
static struct req *pending(jint type)
{
    for (int i = nreq - 1; i >= 0; i--)
        if (reqs[i]->type == type && !reqs[i]->got)
            return reqs[i];
    return NULL;
}

static void define_class(jobjectID cid, const char *why)
{
    struct req r;
    n_ondemand++;
    jint rc = request("RequestEvent(CLASS_LOAD)", JVMPI_EVENT_CLASS_LOAD, cid, &r);
    if (rc != JVMPI_SUCCESS || !r.got || pm_find(&classes, cid) == NULL)
        FAIL("RequestEvent(CLASS_LOAD, %p) for %s: rc=%d event=%d", (void *)cid, why, (int)rc, r.got);
}

/* ---- the sampler ---- */

static void resolve_frames(JVMPI_CallFrame *f, int n, const char *tname, int suspended)
{
    for (int i = 0; i < n; i++) {
        jobjectID cid;
        TIMED("GetMethodClass", cid = jvmpi->GetMethodClass(f[i].method_id));
        n_frames++;
        if (cid == NULL) {
            if (suspended)
                FAIL("GetMethodClass(%p) of frame %d of suspended thread %s gave NULL",
                     (void *)f[i].method_id, i, tname);
            else
                n_null_class_after++; /* the frame may have returned and its class gone */
            continue;
        }
        struct cls *c = pm_find(&classes, cid);
        if (c == NULL || (c->flags & C_UNLOADED)) {
            n_frame_requests++;
            define_class(cid, "a frame's method");
            c = pm_find(&classes, cid);
            if (c == NULL)
                continue;
            if (!(c->flags & C_LOADED))
                c->flags |= C_FRAME;
        }
        int found = 0;
        for (int k = 0; k < c->nmethods && !found; k++)
            found = c->methods[k] == f[i].method_id;
        if (!found)
            FAIL("frame %d of %s: method %p is not among the %d methods of its class %s (%p)", i,
                 tname, (void *)f[i].method_id, c->nmethods, S(c->name), (void *)cid);
    }
}

static void sample_round(JNIEnv *self, JVMPI_CallFrame *frames)
{
    /* The list can change under RequestEvent (handlers of this thread run nested), so
     * walk a copy. */
    static JNIEnv *envs[MAXLIVE];
    static char names[MAXLIVE][64];
    int n = 0;
    for (int i = 0; i < nlive; i++)
        if (live[i]->env != self) {
            envs[n] = live[i]->env;
            memcpy(names[n], live[i]->name, sizeof names[n]);
            n++;
        }
    for (int t = 0; t < n && !stop; t++) {
        JVMPI_CallTrace tr;
        tr.env_id = envs[t];
        tr.frames = frames;
        tr.num_frames = 0;
        jboolean ran;
        TIMED("ThreadHasRun", ran = jvmpi->ThreadHasRun(envs[t]));
        if (!ran)
            n_notrun++;
        TIMED("SuspendThread", jvmpi->SuspendThread(envs[t]));
        TIMED("GetCallTrace", jvmpi->GetCallTrace(&tr, opt_depth));
        if (tr.num_frames < 0 || tr.num_frames > opt_depth) {
            FAIL("GetCallTrace(%s, depth %d) gave num_frames %d", names[t], opt_depth, (int)tr.num_frames);
            tr.num_frames = 0;
        }
        if (opt_during)
            resolve_frames(frames, tr.num_frames, names[t], 1);
        TIMED("ResumeThread", jvmpi->ResumeThread(envs[t]));
        if (!opt_during)
            resolve_frames(frames, tr.num_frames, names[t], 0);
        n_samples++;
        if (tr.num_frames == 0)
            n_empty++;
    }
}

static struct thr *pick_thread(JNIEnv *self, long k)
{
    int n = nlive;
    for (int i = 0; i < n; i++) {
        struct thr *t = live[(k + i) % n];
        if (t->env != self)
            return t;
    }
    return NULL;
}

static jobjectID pick_class(long k) { return nstable ? stable[k % nstable] : NULL; }

/* One more JVMPI call, the k-th of the list. */
static void other_call(JNIEnv *self, long k, long long *next_heap, jlong *last_cpu)
{
    struct thr *t = pick_thread(self, k / 13);
    jobjectID cid = pick_class(k / 13);
    struct req r;
    jint rc;
    switch (k % 13) {
    case 0: { /* OBJECT_ALLOC of a class mirror: class_id is java.lang.Class */
        if (cid == NULL)
            break;
        TIMED("DisableGC", jvmpi->DisableGC());
        rc = request("RequestEvent(OBJECT_ALLOC)", JVMPI_EVENT_OBJECT_ALLOC, cid, &r);
        TIMED("EnableGC", jvmpi->EnableGC());
        n_alloc_req++;
        if (rc != JVMPI_SUCCESS || !r.got)
            FAIL("RequestEvent(OBJECT_ALLOC, class %p %s): rc=%d event=%d", (void *)cid,
                 S(((struct cls *)pm_find(&classes, cid))->name), (int)rc, r.got);
        else if (jlc_id != NULL && cid != jlc_id && (r.answer != jlc_id || r.is_array != JVMPI_NORMAL_OBJECT))
            FAIL("requested OBJECT_ALLOC of the Class object %p (%s): class_id %p is_array %d, "
                 "not java.lang.Class (%p)", (void *)cid, S(((struct cls *)pm_find(&classes, cid))->name),
                 (void *)r.answer, r.is_array, (void *)jlc_id);
        break;
    }
    case 1: { /* THREAD_START of a live thread's object */
        if (t == NULL)
            break;
        jobjectID o;
        TIMED("DisableGC", jvmpi->DisableGC());
        TIMED("GetThreadObject", o = jvmpi->GetThreadObject(t->env));
        if (o == NULL) {
            FAIL("GetThreadObject(%s) gave NULL", t->name);
        } else {
            rc = request("RequestEvent(THREAD_START)", JVMPI_EVENT_THREAD_START, o, &r);
            n_thread_req++;
            if (rc != JVMPI_SUCCESS || !r.got || r.answer != (jobjectID)t->env)
                FAIL("RequestEvent(THREAD_START, %p of %s): rc=%d event=%d env %p, want %p", (void *)o,
                     t->name, (int)rc, r.got, (void *)r.answer, (void *)t->env);
        }
        TIMED("EnableGC", jvmpi->EnableGC());
        break;
    }
    case 2: /* CLASS_LOAD of a known class */
        if (cid == NULL)
            break;
        rc = request("RequestEvent(CLASS_LOAD)", JVMPI_EVENT_CLASS_LOAD, cid, &r);
        n_class_req++;
        if (rc != JVMPI_SUCCESS || !r.got)
            FAIL("RequestEvent(CLASS_LOAD, %p %s): rc=%d event=%d", (void *)cid,
                 S(((struct cls *)pm_find(&classes, cid))->name), (int)rc, r.got);
        break;
    case 3:
        rc = request("RequestEvent(MONITOR_DUMP)", JVMPI_EVENT_MONITOR_DUMP, NULL, &r);
        n_mon_dumps++;
        if (rc != JVMPI_SUCCESS || !r.got)
            FAIL("RequestEvent(MONITOR_DUMP): rc=%d event=%d", (int)rc, r.got);
        break;
    case 4: { /* OBJECT_DUMP of a Thread object */
        if (t == NULL)
            break;
        jobjectID o;
        TIMED("DisableGC", jvmpi->DisableGC());
        TIMED("GetThreadObject", o = jvmpi->GetThreadObject(t->env));
        if (o != NULL) {
            rc = request("RequestEvent(OBJECT_DUMP)", JVMPI_EVENT_OBJECT_DUMP, o, &r);
            n_obj_dumps++;
            if (rc != JVMPI_SUCCESS || !r.got)
                FAIL("RequestEvent(OBJECT_DUMP, thread object %p of %s): rc=%d event=%d", (void *)o,
                     t->name, (int)rc, r.got);
        } else {
            FAIL("GetThreadObject(%s) gave NULL", t->name);
        }
        TIMED("EnableGC", jvmpi->EnableGC());
        break;
    }
    case 5: { /* the list forms, on up to 3 threads */
        JNIEnv *l[3];
        jint res[3] = {-7, -7, -7};
        int n = 0;
        for (int i = 0; i < nlive && n < 3; i++)
            if (live[(k + i) % nlive]->env != self)
                l[n++] = live[(k + i) % nlive]->env;
        if (n == 0)
            break;
        TIMED("SuspendThreadList", jvmpi->SuspendThreadList(n, l, res));
        for (int i = 0; i < n; i++) {
            if (res[i] == 10)
                n_list_invalid++; /* exiting: its THREAD_END waits for this lock */
            else if (res[i] != 0)
                FAIL("SuspendThreadList: result %d for a live thread", (int)res[i]);
        }
        TIMED("ResumeThreadList", jvmpi->ResumeThreadList(n, l, res));
        for (int i = 0; i < n; i++)
            if (res[i] != 0 && res[i] != 10)
                FAIL("ResumeThreadList: result %d for a live thread", (int)res[i]);
        n_lists++;
        break;
    }
    case 6: { /* GetThreadStatus */
        if (t == NULL)
            break;
        jint st;
        TIMED("GetThreadStatus", st = jvmpi->GetThreadStatus(t->env));
        jint base = st & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
        if (base != JVMPI_THREAD_RUNNABLE && base != JVMPI_THREAD_MONITOR_WAIT && base != JVMPI_THREAD_CONDVAR_WAIT)
            FAIL("GetThreadStatus(%s) = %#x", t->name, (unsigned)st);
        n_status++;
        break;
    }
    case 7: { /* GetThreadObject, and a request of that object: class_id a Thread class */
        if (t == NULL)
            break;
        jobjectID o;
        TIMED("DisableGC", jvmpi->DisableGC());
        TIMED("GetThreadObject", o = jvmpi->GetThreadObject(t->env));
        n_thread_obj++;
        if (o == NULL) {
            FAIL("GetThreadObject(%s) gave NULL", t->name);
        } else {
            rc = request("RequestEvent(OBJECT_ALLOC)", JVMPI_EVENT_OBJECT_ALLOC, o, &r);
            n_alloc_req++;
            if (rc != JVMPI_SUCCESS || !r.got || r.answer == NULL || r.is_array != JVMPI_NORMAL_OBJECT)
                FAIL("RequestEvent(OBJECT_ALLOC, thread object %p of %s): rc=%d event=%d class %p "
                     "is_array %d", (void *)o, t->name, (int)rc, r.got, (void *)r.answer, r.is_array);
        }
        TIMED("EnableGC", jvmpi->EnableGC());
        break;
    }
    case 8: { /* GetThreadLocalStorage: the record THREAD_START set */
        if (t == NULL)
            break;
        void *p;
        TIMED("GetThreadLocalStorage", p = jvmpi->GetThreadLocalStorage(t->env));
        n_tls++;
        if (p != t)
            FAIL("GetThreadLocalStorage(%s) = %p, THREAD_START set %p", t->name, p, (void *)t);
        break;
    }
    case 9: { /* jobjectID2jobject and back, with GC disabled */
        if (cid == NULL || self == NULL)
            break;
        jobject ref;
        jobjectID back = NULL;
        TIMED("DisableGC", jvmpi->DisableGC());
        TIMED("jobjectID2jobject", ref = jvmpi->jobjectID2jobject(cid));
        if (ref != NULL)
            TIMED("jobject2jobjectID", back = jvmpi->jobject2jobjectID(ref));
        TIMED("EnableGC", jvmpi->EnableGC());
        if (ref != NULL)
            (*self)->DeleteLocalRef(self, ref);
        n_roundtrip++;
        if (ref == NULL || back != cid)
            FAIL("jobjectID2jobject(%p) = %p, back to %p", (void *)cid, (void *)ref, (void *)back);
        break;
    }
    case 10:
        TIMED("DisableGC", jvmpi->DisableGC());
        TIMED("EnableGC", jvmpi->EnableGC());
        n_gc_disable++;
        break;
    case 11: {
        jlong c;
        TIMED("GetCurrentThreadCpuTime", c = jvmpi->GetCurrentThreadCpuTime());
        if (c < *last_cpu)
            FAIL("GetCurrentThreadCpuTime went back from %lld to %lld", (long long)*last_cpu, (long long)c);
        *last_cpu = c;
        n_cputime++;
        break;
    }
    default:
        TIMED("RawMonitorWait", jvmpi->RawMonitorWait(lock, 1));
        n_waits++;
        break;
    }
    if (opt_heap > 0 && now_ms() >= *next_heap) {
        JVMPI_HeapDumpArg a;
        a.heap_dump_level = JVMPI_DUMP_LEVEL_0;
        rc = request("RequestEvent(HEAP_DUMP)", JVMPI_EVENT_HEAP_DUMP, &a, &r);
        n_heap_dumps++;
        if (rc != JVMPI_SUCCESS || !r.got)
            FAIL("RequestEvent(HEAP_DUMP, level 0): rc=%d event=%d", (int)rc, r.got);
        *next_heap = now_ms() + opt_heap;
    }
}

static void sampler(void *arg)
{
    (void)arg;
    JNIEnv *self = current_env();
    JVMPI_CallFrame *frames = calloc((size_t)opt_depth, sizeof *frames);
    long long next_heap = now_ms() + opt_heap;
    jlong last_cpu = 0;
    long k = 0;
    while (!stop) {
        TIMED("RawMonitorEnter", jvmpi->RawMonitorEnter(lock));
        if (!stop) {
            sample_round(self, frames);
            if (opt_calls && !stop)
                other_call(self, k++, &next_heap, &last_cpu);
            n_rounds++;
        }
        jvmpi->RawMonitorExit(lock);
        if (opt_period > 0)
            usleep((useconds_t)opt_period * 1000);
    }
    free(frames);
    jvmpi->RawMonitorEnter(lock);
    sampler_done = 1;
    jvmpi->RawMonitorNotifyAll(lock);
    jvmpi->RawMonitorExit(lock);
}

/* ---- handlers ---- */

static void on_class_load(JVMPI_Event *ev, int requested)
{
    jobjectID cid = ev->u.class_load.class_id;
    const char *name = ev->u.class_load.class_name;
    struct req *r = requested ? pending(JVMPI_EVENT_CLASS_LOAD) : NULL;
    if (r != NULL && r->arg == cid)
        r->got = 1;
    struct cls *c = pm_find(&classes, cid);
    if (c != NULL && (c->flags & C_UNLOADED)) {
        /* an id used again after its class unloaded */
        c->flags = 0;
        free(c->methods);
        c->methods = NULL;
        c->nmethods = 0;
    }
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        pm_put(&classes, cid, c);
    }
    if (c->name == NULL || strcmp(c->name, S(name)) != 0) {
        free(c->name);
        c->name = strdup(S(name));
    }
    if (c->methods == NULL) {
        c->nmethods = ev->u.class_load.num_methods;
        c->methods = calloc((size_t)c->nmethods + 1, sizeof *c->methods);
        for (int i = 0; i < c->nmethods; i++)
            c->methods[i] = ev->u.class_load.methods[i].method_id;
    }
    if (requested) {
        c->flags |= C_REQUESTED;
        n_requested_loads++;
        return;
    }
    if (c->flags & C_LOADED)
        return; /* a second unrequested CLASS_LOAD: counted nowhere */
    if (c->flags & C_FRAME)
        n_late++;
    c->flags |= C_LOADED;
    n_class_loads++;
    if (prefix(name, "LoadStormCargo"))
        n_cargo++;
    if (strcmp(S(name), "java.lang.Class") == 0)
        jlc_id = cid;
    if (is_stable(S(name)) && nstable < MAXSTABLE)
        stable[nstable++] = cid;
}

static void on_thread_start(JVMPI_Event *ev, int requested)
{
    JNIEnv *e = ev->u.thread_start.thread_env_id;
    if (requested) {
        struct req *r = pending(JVMPI_EVENT_THREAD_START);
        if (r != NULL && r->arg == ev->u.thread_start.thread_id) {
            r->got = 1;
            r->answer = (jobjectID)e;
        }
        return;
    }
    n_thread_starts++;
    const char *name = S(ev->u.thread_start.thread_name);
    if (prefix(name, "storm-short-"))
        n_short++;
    else if (prefix(name, "storm-"))
        n_storm++;
    if (live_index(e) >= 0) {
        FAIL("second THREAD_START for the live thread %p (%s)", (void *)e, name);
        return;
    }
    if (nlive >= MAXLIVE)
        return;
    struct thr *t = calloc(1, sizeof *t);
    t->env = e;
    t->magic = 0x5a4d;
    snprintf(t->name, sizeof t->name, "%s", name);
    live[nlive++] = t;
    jvmpi->SetThreadLocalStorage(e, t);
}

static void on_thread_end(JVMPI_Event *ev)
{
    int i = live_index(ev->env_id);
    if (i < 0)
        return;
    live[i] = live[--nlive];
}

static void on_alloc(JVMPI_Event *ev, int requested)
{
    jobjectID cid = ev->u.obj_alloc.class_id;
    if (requested) {
        struct req *r = pending(JVMPI_EVENT_OBJECT_ALLOC);
        if (r != NULL && r->arg == ev->u.obj_alloc.obj_id) {
            r->got = 1;
            r->answer = cid;
            r->is_array = ev->u.obj_alloc.is_array;
        }
    } else {
        n_allocs++;
        if (cid == NULL && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT)
            n_null_class_allocs++;
    }
    /* Definitions on demand, as HPROF made a site's class known before the site. */
    if (cid != NULL) {
        struct cls *c = pm_find(&classes, cid);
        if (c == NULL || (c->flags & C_UNLOADED))
            define_class(cid, "an OBJECT_ALLOC");
    }
}

static void on_dump(JVMPI_Event *ev, jint type)
{
    struct req *r = pending(type);
    if (r != NULL)
        r->got = 1;
    if (type == JVMPI_EVENT_HEAP_DUMP) {
        char *b = ev->u.heap_dump.begin, *e = ev->u.heap_dump.end;
        if (b == NULL || e < b)
            FAIL("HEAP_DUMP begin %p end %p", (void *)b, (void *)e);
        else
            n_heap_records += (e - b) / (long)(1 + sizeof(void *));
    } else if (type == JVMPI_EVENT_OBJECT_DUMP) {
        if (ev->u.object_dump.data == NULL)
            FAIL("OBJECT_DUMP without data");
    }
}

static void shut_down(void)
{
    stop = 1;
    for (int i = 0; i < 500 && !sampler_done; i++)
        jvmpi->RawMonitorWait(lock, 10);
    if (!sampler_done)
        FAIL("the sampler did not stop within 5 s");
    long missing = 0;
    for (size_t i = 0; i < classes.cap; i++) {
        struct cls *c = classes.k[i] ? classes.v[i] : NULL;
        if (c != NULL && (c->flags & C_FRAME) && !(c->flags & C_LOADED)) {
            missing++;
            if (missing <= 5)
                FAIL("class %s (%p), named by a frame, never got its CLASS_LOAD", S(c->name),
                     (void *)classes.k[i]);
        }
    }
    if (missing > 5)
        FAIL("... %ld classes named by frames never got their CLASS_LOAD", missing);
    if (gc_other_thread)
        FAIL("%ld GC_FINISH events came on another thread than their GC_START", gc_other_thread);
    say("loads cargo=%ld storm_threads=%ld short_threads=%ld", n_cargo, n_storm, n_short);
    say("summary rounds=%ld samples=%ld frames=%ld empty=%ld not_run=%ld frame_requests=%ld "
        "late_class_loads=%ld null_class_after_resume=%ld ondemand=%ld alloc_requests=%ld "
        "thread_requests=%ld class_requests=%ld monitor_dumps=%ld heap_dumps=%ld heap_records=%ld "
        "object_dumps=%ld lists=%ld list_exiting=%ld status=%ld thread_objects=%ld tls=%ld "
        "roundtrips=%ld gc_disables=%ld cputime=%ld waits=%ld brackets=%ld class_loads=%ld "
        "requested_loads=%ld class_unloads=%ld thread_starts=%ld allocs=%ld frees=%ld "
        "null_class_allocs=%ld monitor_events=%ld missing_loads=%ld fails=%d",
        n_rounds, n_samples, n_frames, n_empty, n_notrun, n_frame_requests, n_late,
        n_null_class_after, n_ondemand, n_alloc_req, n_thread_req, n_class_req, n_mon_dumps,
        n_heap_dumps, n_heap_records, n_obj_dumps, n_lists, n_list_invalid, n_status,
        n_thread_obj, n_tls, n_roundtrip, n_gc_disable, n_cputime, n_waits, n_brackets,
        n_class_loads, n_requested_loads, n_class_unloads, n_thread_starts, n_allocs, n_frees,
        n_null_class_allocs, n_mon_events, missing, g_fails);
    say("slowest %s %.1f ms", slowest_name, slowest_ns / 1e6);
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    if (type == JVMPI_EVENT_GC_START) {
        jvmpi->RawMonitorEnter(lock);
        gc_thread = pthread_self();
        in_gc = 1;
        n_brackets++;
        return; /* held until GC_FINISH */
    }
    if (type == JVMPI_EVENT_GC_FINISH) {
        if (!in_gc || !pthread_equal(gc_thread, pthread_self()))
            gc_other_thread++;
        in_gc = 0;
        jvmpi->RawMonitorExit(lock);
        return;
    }
    jvmpi->RawMonitorEnter(lock);
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev, requested);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD: {
        struct cls *c = pm_find(&classes, ev->u.class_unload.class_id);
        if (c != NULL)
            c->flags |= C_UNLOADED;
        n_class_unloads++;
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev, requested);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev, requested);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        n_frees++;
        break;
    case JVMPI_EVENT_HEAP_DUMP:
    case JVMPI_EVENT_MONITOR_DUMP:
    case JVMPI_EVENT_OBJECT_DUMP:
        on_dump(ev, type);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        n_mon_events++;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        jint rc = jvmpi->CreateSystemThread("sampler_lock", JVMPI_NORMAL_PRIORITY, sampler);
        say("init done classes=%ld threads=%d sampler rc=%d", n_class_loads, nlive, (int)rc);
        if (rc != JNI_OK) {
            FAIL("CreateSystemThread failed");
            sampler_done = 1;
        }
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        break;
    }
    jvmpi->RawMonitorExit(lock);
}

static void parse_options(const char *o)
{
    while (o != NULL && *o) {
        const char *end = strchr(o, ',');
        size_t n = end ? (size_t)(end - o) : strlen(o);
        char w[64];
        snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), o);
        if (strcmp(w, "alloc") == 0)
            opt_alloc = 1;
        else if (strcmp(w, "monitor") == 0)
            opt_monitor = 1;
        else if (strcmp(w, "calls=all") == 0)
            opt_calls = 1;
        else if (strcmp(w, "calls=trace") == 0)
            opt_calls = 0;
        else if (strcmp(w, "resolve=during") == 0)
            opt_during = 1;
        else if (strcmp(w, "resolve=after") == 0)
            opt_during = 0;
        else if (strncmp(w, "period=", 7) == 0)
            opt_period = atoi(w + 7);
        else if (strncmp(w, "heap=", 5) == 0)
            opt_heap = atoi(w + 5);
        else if (strncmp(w, "depth=", 6) == 0 && atoi(w + 6) > 0)
            opt_depth = atoi(w + 6);
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
    lock = jvmpi->RawMonitorCreate("_sampler_lock_data");
    static const jint base[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_CLASS_UNLOAD,
                                JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                                JVMPI_EVENT_GC_START, JVMPI_EVENT_GC_FINISH,
                                JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    static const jint alloc[] = {JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE};
    static const jint mon[] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                               JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
                               JVMPI_EVENT_MONITOR_WAITED};
    enable_events(base, NELEMS(base), 1);
    if (opt_alloc)
        enable_events(alloc, NELEMS(alloc), 1);
    if (opt_monitor)
        enable_events(mon, NELEMS(mon), 1);
    say("loaded alloc=%d monitor=%d calls=%s resolve=%s period=%d heap=%d depth=%d", opt_alloc,
        opt_monitor, opt_calls ? "all" : "trace", opt_during ? "during" : "after", opt_period,
        opt_heap, opt_depth);
    return JNI_OK;
}
