/* mem_alloc.c — a JDK 1.3-style JVMPI agent that checks OBJECT_ALLOC (tests/it/memory/mem_alloc.sh,
 * workload tests/java/MemAlloc.java, counted class tests/java/MemMarker.java).
 *
 * Options (one word): onload | marker | thread | none
 *   onload  OBJECT_ALLOC and ARENA_NEW enabled in JVM_OnLoad (start-up replay expected)
 *   marker  ARENA_NEW in JVM_OnLoad; OBJECT_ALLOC enabled in the CLASS_LOAD handler of
 *           MemAlloc$Enable (on main, right before the workload's burst)
 *   thread  as marker, but OBJECT_ALLOC is enabled by the agent's system thread, woken by
 *           that handler; it then sets the system property jvmpishim.mem.enabled (JNI)
 *   none    no memory event at all: the agent must see no OBJECT_ALLOC
 * Always enabled: CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN.
 *
 * Every unrequested OBJECT_ALLOC is checked live (FAIL lines, the first 5 of each kind;
 * "mem_alloc: fails KIND=N" in the totals): arena_id 1, announced
 * before by ARENA_NEW {1, "Java heap"} (when enabled); is_array one of NORMAL_OBJECT, CLASS,
 * BOOLEAN..LONG; class_id non-NULL for instances and object arrays, NULL for primitive
 * arrays; every class_id announced by CLASS_LOAD before; size > 0 and a multiple of 8; no
 * obj_id reported twice. The workload's phases (marker classes, see MemAlloc.java) split
 * the counts: MemMarker instances, MemMarker[] (class_id MemMarker, is_array CLASS) and
 * int[] (per size) on main, on the mem-worker thread and elsewhere, printed as
 *   mem_alloc: count phase=<P> thread=<main|worker|other> markers=.. marker_arrays=.. ints=..
 *   mem_alloc: sizes phase=<P> ... marker=<min>-<max> marker_array=<min>-<max>
 *   mem_alloc: intsize phase=<P> thread=main size=<S> count=<C>
 * Before JVM_INIT_DONE it counts the start-up replay by kind:
 *   mem_alloc: replay total=.. normal=.. normal_noclass=.. objarrays=.. primarrays=..
 *              strings=.. bytearrays=.. bytes64k=.. requested=..
 * (bytes64k: byte[65536]s, the size of the arrays the shim allocates itself at start-up)
 * and requests the first three replayed "instances" without a class again, to show what
 * they really are ("mem_alloc: replay_noclass_sample ...").
 * In the End handler (main, objects alive): for every object the workload keeps from the
 * burst, jobject2jobjectID must be an id OBJECT_ALLOC reported with that object's kind
 * (printed "mem_alloc: kept ..."); RequestEvent(OBJECT_ALLOC, id) of the first kept
 * MemMarker, int[] and MemMarker[] must post one REQUESTED event on this thread before returning with
 * the fields of the original event ("mem_alloc: request KIND ..."); a fresh String too; a
 * garbage id (0x1234) and NULL give JVMPI_FAIL and no event.
 * In the Done handler: every class announced with 0 methods (not an array) is requested
 * again; if it now has methods, its one CLASS_LOAD was incomplete ("classes ... incomplete=").
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_RawMonitor lock, sync_mon;
static char mode[32] = "onload";

/* Violations: counted per kind (the totals line lists them), the first 5 of each printed. */
enum { F_ARENA, F_ARENA_FIRST, F_IS_ARRAY, F_PRIM_CLASS, F_NO_CLASS, F_UNDEFINED_CLASS, F_SIZE,
       F_NULL_ID, F_TWICE, F_OTHER, NFAIL };
static const char *fail_name[NFAIL] = {"arena", "before_arena_new", "is_array", "prim_with_class",
                                       "class_null", "class_undefined", "size", "null_id",
                                       "reported_twice", "other"};
static volatile int fail_counts[NFAIL];
#define KIT_NAME "mem_alloc"
#define KIT_LINE 2048
#define FAIL(...) FAILK(F_OTHER, __VA_ARGS__)
#define KIT_PMAP_FIRST (1 << 16)
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

/* ---- state (under lock) -------------------------------------------------------------- */

struct rec { /* the fields an OBJECT_ALLOC reported, kept for burst objects on main */
    jint arena, is_array, size;
    jobjectID class_id;
    int kind;
};

enum { K_MARKER, K_MARKER_ARRAY, K_INT, K_OTHER, NKIND };
enum { T_MAIN, T_WORKER, T_OTHER, NTHR };
static const char *thr_name[NTHR] = {"main", "worker", "other"};
#define NPHASE 6
static const char *phase_name[NPHASE] = {"startup", "pre", "burst", "end", "disabled", "done"};

static struct pmap classes;    /* class id -> strdup(name) */
static struct pmap objects;    /* obj id -> struct rec * (burst, main) or (void *)1 */
static volatile int phase;     /* index into phase_name, set on main by the marker handlers */
static volatile int init_done;
static JNIEnv *main_env, *worker_env, *onload_env;
static jobjectID marker_cid, string_cid, memalloc_cid;
static int arena_events, arena_ok;
static long counts[NPHASE][NTHR][NKIND];
static jint msize_min[NPHASE], msize_max[NPHASE], asize_min[NPHASE], asize_max[NPHASE];
#define NSIZES 32
static struct { jint size; long count; } intsizes[NPHASE][NSIZES];
static int nintsizes[NPHASE];
static long total_unrequested, total_requested, replay_total, replay_requested;
static long replay_normal, replay_noclass, replay_objarr, replay_primarr, replay_strings,
    replay_bytes, replay_bytes64k;
#define NSAMPLE 3
static jobjectID noclass_sample[NSAMPLE]; /* replayed "instances" with class_id NULL */

static long class_class_seen;

/* Is id java.lang.Class's own Class object? */
static int is_class_class(jobjectID id)
{
    JNIEnv *e = current_env();
    if (e == NULL || id == NULL)
        return 0;
    jobject o = jvmpi->jobjectID2jobject(id);
    jclass cc = (*e)->FindClass(e, "java/lang/Class");
    int same = o != NULL && cc != NULL && (*e)->IsSameObject(e, o, cc);
    if ((*e)->ExceptionCheck(e))
        (*e)->ExceptionClear(e);
    if (cc)
        (*e)->DeleteLocalRef(e, cc);
    if (o)
        (*e)->DeleteLocalRef(e, o);
    return same;
}

/* Capture of REQUESTED OBJECT_ALLOC (RequestEvent is synchronous, on the caller's thread). */
static volatile int req_count;
static JVMPI_Event req_ev;
static JNIEnv *req_thread_env;

static void minmax(jint *mn, jint *mx, jint v)
{
    if (*mn == 0 || v < *mn)
        *mn = v;
    if (v > *mx)
        *mx = v;
}

static void on_arena_new(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    arena_events++;
    if (ev->u.new_arena.arena_id == 1 && ev->u.new_arena.arena_name != NULL &&
        strcmp(ev->u.new_arena.arena_name, "Java heap") == 0)
        arena_ok = 1;
    int n = arena_events;
    jvmpi->RawMonitorExit(lock);
    say("arena_new id=%d name=%s n=%d", (int)ev->u.new_arena.arena_id,
        S(ev->u.new_arena.arena_name), n);
}

static void on_alloc(JVMPI_Event *ev)
{
    jint arena = ev->u.obj_alloc.arena_id, is_array = ev->u.obj_alloc.is_array;
    jint size = ev->u.obj_alloc.size;
    jobjectID cid = ev->u.obj_alloc.class_id, id = ev->u.obj_alloc.obj_id;

    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        jvmpi->RawMonitorEnter(lock);
        req_ev = *ev;
        req_thread_env = current_env();
        total_requested++;
        if (!init_done)
            replay_requested++;
        req_count++;
        jvmpi->RawMonitorExit(lock);
        return;
    }

    jvmpi->RawMonitorEnter(lock);
    total_unrequested++;
    int ph = phase;
    if (arena != 1)
        FAILK(F_ARENA, "OBJECT_ALLOC id %p: arena_id %d, expected 1", (void *)id, (int)arena);
    if (strcmp(mode, "none") != 0 && !arena_ok)
        FAILK(F_ARENA_FIRST, "OBJECT_ALLOC id %p before ARENA_NEW {1, \"Java heap\"}", (void *)id);
    int prim = is_array >= JVMPI_BOOLEAN && is_array <= JVMPI_LONG;
    if (!prim && is_array != JVMPI_NORMAL_OBJECT && is_array != JVMPI_CLASS)
        FAILK(F_IS_ARRAY, "OBJECT_ALLOC id %p: is_array %d is not a JVMPI type", (void *)id, (int)is_array);
    void *nm = NULL;
    if (prim && cid != NULL)
        FAILK(F_PRIM_CLASS, "OBJECT_ALLOC id %p: primitive array (is_array %d) with class_id %p", (void *)id,
             (int)is_array, (void *)cid);
    /* The one object HotSpot announced without a class: java.lang.Class's own Class object
     * (class_id NULL, NORMAL_OBJECT), so that chains of class lookups end. */
    int class_class = !prim && cid == NULL && is_array == JVMPI_NORMAL_OBJECT && is_class_class(id);
    if (class_class)
        class_class_seen++;
    if (!prim && cid == NULL && !class_class)
        FAILK(F_NO_CLASS, "OBJECT_ALLOC id %p: is_array %d with class_id NULL (size %d, %s)", (void *)id,
             (int)is_array, (int)size, init_done ? "live" : "start-up replay");
    if (cid != NULL && !pm_get(&classes, cid, &nm))
        FAILK(F_UNDEFINED_CLASS, "OBJECT_ALLOC id %p: class_id %p used before its CLASS_LOAD", (void *)id,
             (void *)cid);
    if (size <= 0 || size % 8 != 0)
        FAILK(F_SIZE, "OBJECT_ALLOC id %p: size %d", (void *)id, (int)size);
    if (id == NULL)
        FAILK(F_NULL_ID, "OBJECT_ALLOC with obj_id NULL");
    else if (pm_get(&objects, id, NULL))
        FAILK(F_TWICE, "OBJECT_ALLOC id %p reported twice (class %s is_array %d size %d, %s, "
              "%s thread)", (void *)id, nm ? (char *)nm : cid ? "?" : "NULL", (int)is_array,
              (int)size,
              init_done ? "after JVM_INIT_DONE" : "before JVM_INIT_DONE",
              ev->env_id == onload_env ? "JVM_OnLoad's" : "another");

    int kind = K_OTHER;
    if (marker_cid != NULL && cid == marker_cid && is_array == JVMPI_NORMAL_OBJECT)
        kind = K_MARKER;
    else if (marker_cid != NULL && cid == marker_cid && is_array == JVMPI_CLASS)
        kind = K_MARKER_ARRAY;
    else if (is_array == JVMPI_INT && cid == NULL)
        kind = K_INT;
    int thr = T_OTHER;
    if (main_env != NULL && ev->env_id == main_env)
        thr = T_MAIN;
    else if (worker_env != NULL && ev->env_id == worker_env)
        thr = T_WORKER;
    counts[ph][thr][kind]++;
    if (kind == K_MARKER)
        minmax(&msize_min[ph], &msize_max[ph], size);
    if (kind == K_MARKER_ARRAY)
        minmax(&asize_min[ph], &asize_max[ph], size);
    if (kind == K_INT && thr == T_MAIN && ph > 0) {
        int i;
        for (i = 0; i < nintsizes[ph] && intsizes[ph][i].size != size; i++)
            ;
        if (i < NSIZES) {
            if (i == nintsizes[ph]) {
                nintsizes[ph]++;
                intsizes[ph][i].size = size;
            }
            intsizes[ph][i].count++;
        }
    }
    if (id != NULL) {
        void *val = (void *)1;
        if (ph == 2 && thr == T_MAIN && kind != K_OTHER) {
            struct rec *r = malloc(sizeof *r);
            r->arena = arena;
            r->is_array = is_array;
            r->size = size;
            r->class_id = cid;
            r->kind = kind;
            val = r;
        }
        pm_put(&objects, id, val);
    }
    if (!init_done) {
        replay_total++;
        if (is_array == JVMPI_NORMAL_OBJECT)
            replay_normal++;
        if (is_array == JVMPI_NORMAL_OBJECT && cid == NULL && !class_class &&
            replay_noclass++ < NSAMPLE)
            noclass_sample[replay_noclass - 1] = id;
        if (is_array == JVMPI_CLASS)
            replay_objarr++;
        if (prim)
            replay_primarr++;
        if (string_cid != NULL && cid == string_cid && is_array == JVMPI_NORMAL_OBJECT)
            replay_strings++;
        if (is_array == JVMPI_BYTE)
            replay_bytes++;
        if (is_array == JVMPI_BYTE && size == 65536 + 16) /* byte[65536] */
            replay_bytes64k++;
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- checks in the End handler -------------------------------------------------------- */

/* RequestEvent(OBJECT_ALLOC, id): rc; *got = REQUESTED events posted during the call. */
static jint request(jobjectID id, int *got)
{
    int before = req_count;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    *got = req_count - before;
    return rc;
}

static void request_check(const char *what, jobjectID id, JNIEnv *jni, jobjectID want_cid,
                          jint want_is_array)
{
    int got = 0;
    jint rc = request(id, &got);
    jvmpi->RawMonitorEnter(lock);
    JVMPI_Event e = req_ev;
    JNIEnv *on = req_thread_env;
    void *v = NULL;
    int known = pm_get(&objects, id, &v);
    struct rec *r = (known && v != (void *)1) ? v : NULL;
    void *cn = NULL;
    if (got && e.u.obj_alloc.class_id)
        pm_get(&classes, e.u.obj_alloc.class_id, &cn);
    jvmpi->RawMonitorExit(lock);
    if (rc != JVMPI_SUCCESS || got != 1) {
        say("request %s id=%p rc=%d events=%d", what, (void *)id, (int)rc, got);
        return;
    }
    int requested = (e.event_type & JVMPI_REQUESTED_EVENT) != 0 &&
                    (e.event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_OBJECT_ALLOC;
    const char *match = "n/a";
    if (r != NULL)
        match = (r->arena == e.u.obj_alloc.arena_id && r->class_id == e.u.obj_alloc.class_id &&
                 r->is_array == e.u.obj_alloc.is_array && r->size == e.u.obj_alloc.size)
                    ? "yes"
                    : "no";
    int conv = e.u.obj_alloc.class_id == want_cid && e.u.obj_alloc.is_array == want_is_array;
    say("request %s rc=%d events=%d requested=%d same_thread=%d env_id_ok=%d id_ok=%d arena=%d "
        "class=%s is_array=%d size=%d conventions=%s match_alloc=%s",
        what, (int)rc, got, requested, on == jni, e.env_id == jni, e.u.obj_alloc.obj_id == id,
        (int)e.u.obj_alloc.arena_id, cn ? (char *)cn : (e.u.obj_alloc.class_id ? "?" : "NULL"),
        (int)e.u.obj_alloc.is_array, (int)e.u.obj_alloc.size, conv ? "ok" : "WRONG", match);
    if (r != NULL && strcmp(match, "yes") != 0)
        say("request %s original: arena=%d class_id=%p is_array=%d size=%d; requested class_id=%p",
            what, (int)r->arena, (void *)r->class_id, (int)r->is_array, (int)r->size,
            (void *)e.u.obj_alloc.class_id);
}

/* The workload's static Object[] field NAME of MemAlloc (NULL if not reachable). */
static jobjectArray static_array(JNIEnv *jni, jclass memalloc, const char *name)
{
    jfieldID f = (*jni)->GetStaticFieldID(jni, memalloc, name, "[Ljava/lang/Object;");
    if (f == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("no static field MemAlloc.%s", name);
        return NULL;
    }
    return (jobjectArray)(*jni)->GetStaticObjectField(jni, memalloc, f);
}

/* Every kept object's id (jobject2jobjectID) must be one OBJECT_ALLOC reported, with its
 * kind; returns how many were. */
static void check_kept(JNIEnv *jni, jclass memalloc, const char *field, int want_kind)
{
    jobjectArray a = static_array(jni, memalloc, field);
    if (a == NULL)
        return;
    jsize n = (*jni)->GetArrayLength(jni, a);
    int found = 0, wrong_kind = 0, null_ids = 0, not_reported = 0;
    for (jsize i = 0; i < n; i++) {
        jobject o = (*jni)->GetObjectArrayElement(jni, a, i);
        jobjectID id = jvmpi->jobject2jobjectID(o);
        (*jni)->DeleteLocalRef(jni, o);
        if (id == NULL) {
            null_ids++;
            continue;
        }
        void *v = NULL;
        jvmpi->RawMonitorEnter(lock);
        int known = pm_get(&objects, id, &v);
        jvmpi->RawMonitorExit(lock);
        if (!known) {
            not_reported++;
            continue;
        }
        found++;
        if (want_kind != K_OTHER && (v == (void *)1 || ((struct rec *)v)->kind != want_kind))
            wrong_kind++;
    }
    say("kept %s objects=%d reported=%d wrong_kind=%d not_reported=%d null_ids=%d", field,
        (int)n, found, wrong_kind, not_reported, null_ids);
    (*jni)->DeleteLocalRef(jni, a);
}

static void end_checks(JNIEnv *jni)
{
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 64) != 0) {
        FAIL("End handler: no JNIEnv");
        return;
    }
    jvmpi->DisableGC();
    jclass memalloc = memalloc_cid ? (jclass)jvmpi->jobjectID2jobject(memalloc_cid) : NULL;
    if (memalloc == NULL) {
        FAIL("jobjectID2jobject(class id of MemAlloc) gave NULL");
    } else {
        if (strcmp(mode, "none") != 0) {
            check_kept(jni, memalloc, "keepM", K_MARKER);
            check_kept(jni, memalloc, "keepI", K_INT);
            check_kept(jni, memalloc, "keepA", K_MARKER_ARRAY);
            check_kept(jni, memalloc, "keepW", K_OTHER); /* worker thread: not recorded by kind */
        }
        const char *fields[] = {"keepM", "keepI", "keepA"};
        const char *what[] = {"marker", "int_array", "marker_array"};
        jobjectID cids[] = {marker_cid, NULL, marker_cid};
        jint kinds[] = {JVMPI_NORMAL_OBJECT, JVMPI_INT, JVMPI_CLASS};
        for (int i = 0; i < 3; i++) {
            jobjectArray a = static_array(jni, memalloc, fields[i]);
            jobject o = a ? (*jni)->GetObjectArrayElement(jni, a, 0) : NULL;
            jobjectID id = o ? jvmpi->jobject2jobjectID(o) : NULL;
            request_check(what[i], id, jni, cids[i], kinds[i]);
        }
    }
    jobject s = (*jni)->NewStringUTF(jni, "mem_alloc request");
    request_check("string", jvmpi->jobject2jobjectID(s), jni, string_cid, JVMPI_NORMAL_OBJECT);
    int got = 0;
    jint rc = request((jobjectID)(size_t)0x1234, &got);
    say("request garbage id=0x1234 rc=%d events=%d", (int)rc, got);
    rc = request(NULL, &got);
    say("request NULL rc=%d events=%d", (int)rc, got);
    jvmpi->EnableGC();
    (*jni)->PopLocalFrame(jni, NULL);
}

static void print_counts(void)
{
    jvmpi->RawMonitorEnter(lock);
    for (int p = 0; p < NPHASE; p++) {
        for (int t = 0; t < NTHR; t++)
            say("count phase=%s thread=%s markers=%ld marker_arrays=%ld ints=%ld", phase_name[p],
                thr_name[t], counts[p][t][K_MARKER], counts[p][t][K_MARKER_ARRAY],
                counts[p][t][K_INT]);
        say("sizes phase=%s marker=%d-%d marker_array=%d-%d", phase_name[p], (int)msize_min[p],
            (int)msize_max[p], (int)asize_min[p], (int)asize_max[p]);
        for (int i = 0; i < nintsizes[p]; i++)
            say("intsize phase=%s thread=main size=%d count=%ld", phase_name[p],
                (int)intsizes[p][i].size, intsizes[p][i].count);
    }
    say("totals unrequested=%ld requested=%ld arena_events=%d fails=%d", total_unrequested,
        total_requested, arena_events, g_fails);
    for (int k = 0; k < NFAIL; k++)
        if (fail_counts[k])
            say("fails %s=%d", fail_name[k], fail_counts[k]);
    jvmpi->RawMonitorExit(lock);
}

/* ---- enabling from a system thread ----------------------------------------------------- */

static volatile int enable_wanted;

static void enabler_thread(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(sync_mon);
    while (!enable_wanted)
        jvmpi->RawMonitorWait(sync_mon, 0);
    jvmpi->RawMonitorExit(sync_mon);
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    say("enable OBJECT_ALLOC from system thread rc=%d", (int)rc);
    set_property_or_fail(current_env(), "jvmpishim.mem.enabled", "1");
}

/* ---- CLASS_LOAD and the phases --------------------------------------------------------- */

/* Classes announced with no methods. A class's CLASS_LOAD is its one announcement, so it
 * must be complete: a later RequestEvent(CLASS_LOAD) must not reveal methods it lacked
 * (a class loaded but not yet linked when it was announced would). */
#define MAXEMPTY 4096
static jobjectID empty_classes[MAXEMPTY];
static int nempty;
static volatile jint req_class_methods;

static void check_empty_classes(void)
{
    int incomplete = 0, printed = 0;
    jvmpi->DisableGC();
    for (int i = 0; i < nempty; i++) {
        req_class_methods = -1;
        if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, empty_classes[i]) != JVMPI_SUCCESS ||
            req_class_methods <= 0)
            continue;
        incomplete++;
        void *nm = NULL;
        jvmpi->RawMonitorEnter(lock);
        pm_get(&classes, empty_classes[i], &nm);
        jvmpi->RawMonitorExit(lock);
        if (printed++ < 5)
            say("class %s: CLASS_LOAD had 0 methods, RequestEvent(CLASS_LOAD) now gives %d",
                nm ? (char *)nm : "?", (int)req_class_methods);
    }
    jvmpi->EnableGC();
    say("classes announced_without_methods=%d incomplete=%d", nempty, incomplete);
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    jobjectID cid = ev->u.class_load.class_id;
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        req_class_methods = ev->u.class_load.num_methods;
        return;
    }
    jvmpi->RawMonitorEnter(lock);
    if (cn != NULL && cid != NULL && !pm_get(&classes, cid, NULL))
        pm_put(&classes, cid, strdup(cn));
    if (cn != NULL && cn[0] != '[' && ev->u.class_load.num_methods == 0 && nempty < MAXEMPTY)
        empty_classes[nempty++] = cid;
    if (cn && strcmp(cn, "MemMarker") == 0)
        marker_cid = cid;
    if (cn && strcmp(cn, "java.lang.String") == 0)
        string_cid = cid;
    if (cn && strcmp(cn, "MemAlloc") == 0)
        memalloc_cid = cid;
    jvmpi->RawMonitorExit(lock);
    if (cn == NULL || strncmp(cn, "MemAlloc$", 9) != 0)
        return;
    const char *m = cn + 9;
    say("marker %s", m);
    if (strcmp(m, "Start") == 0) {
        main_env = ev->env_id;
        phase = 1;
    } else if (strcmp(m, "Enable") == 0) {
        phase = 2;
        if (strcmp(mode, "marker") == 0) {
            jint rc = jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
            say("enable OBJECT_ALLOC in the marker handler rc=%d", (int)rc);
        } else if (strcmp(mode, "thread") == 0) {
            jvmpi->RawMonitorEnter(sync_mon);
            enable_wanted = 1;
            jvmpi->RawMonitorNotifyAll(sync_mon);
            jvmpi->RawMonitorExit(sync_mon);
        }
    } else if (strcmp(m, "WorkerStart") == 0) {
        worker_env = ev->env_id;
    } else if (strcmp(m, "End") == 0) {
        phase = 3;
        end_checks(ev->env_id);
    } else if (strcmp(m, "Disable") == 0) {
        if (strcmp(mode, "none") != 0) {
            jint rc = jvmpi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
            say("disable OBJECT_ALLOC rc=%d", (int)rc);
        }
        phase = 4;
    } else if (strcmp(m, "Done") == 0) {
        phase = 5;
        print_counts();
        check_empty_classes();
    }
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_ARENA_NEW:
        on_arena_new(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        jvmpi->RawMonitorEnter(lock);
        init_done = 1;
        say("replay total=%ld normal=%ld normal_noclass=%ld objarrays=%ld primarrays=%ld "
            "strings=%ld bytearrays=%ld bytes64k=%ld requested=%ld class_class=%ld",
            replay_total, replay_normal, replay_noclass, replay_objarr, replay_primarr,
            replay_strings, replay_bytes, replay_bytes64k, replay_requested, class_class_seen);
        jvmpi->RawMonitorExit(lock);
        /* What are the replayed objects that came without a class? Ask for them again. */
        jvmpi->DisableGC();
        for (int i = 0; i < NSAMPLE && i < replay_noclass; i++) {
            int got = 0;
            jint rc = request(noclass_sample[i], &got);
            void *cn = NULL;
            jvmpi->RawMonitorEnter(lock);
            if (got && req_ev.u.obj_alloc.class_id)
                pm_get(&classes, req_ev.u.obj_alloc.class_id, &cn);
            say("replay_noclass_sample id=%p requested: rc=%d events=%d class=%s is_array=%d "
                "size=%d", (void *)noclass_sample[i], (int)rc, got,
                cn ? (char *)cn : (got && req_ev.u.obj_alloc.class_id) ? "?" : "NULL",
                got ? (int)req_ev.u.obj_alloc.is_array : -1,
                got ? (int)req_ev.u.obj_alloc.size : -1);
            jvmpi->RawMonitorExit(lock);
        }
        jvmpi->EnableGC();
        if (strcmp(mode, "thread") == 0) {
            jint rc = jvmpi->CreateSystemThread("mem_alloc-enabler", JVMPI_NORMAL_PRIORITY,
                                                enabler_thread);
            if (rc != JNI_OK)
                FAIL("CreateSystemThread returned %d", (int)rc);
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("shutdown unrequested=%ld fails=%d", total_unrequested, g_fails);
        break;
    default:
        FAIL("unexpected event %d", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && *options)
        snprintf(mode, sizeof mode, "%s", options);
    if (strcmp(mode, "onload") && strcmp(mode, "marker") && strcmp(mode, "thread") &&
        strcmp(mode, "none")) {
        say("FAIL unknown mode %s", mode);
        return JNI_ERR;
    }
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    onload_env = current_env();
    lock = jvmpi->RawMonitorCreate("_mem_alloc_lock");
    sync_mon = jvmpi->RawMonitorCreate("_mem_alloc_sync");
    jint ev[8];
    int n = 0;
    ev[n++] = JVMPI_EVENT_CLASS_LOAD;
    ev[n++] = JVMPI_EVENT_JVM_INIT_DONE;
    ev[n++] = JVMPI_EVENT_JVM_SHUT_DOWN;
    if (strcmp(mode, "none") != 0)
        ev[n++] = JVMPI_EVENT_ARENA_NEW;
    if (strcmp(mode, "onload") == 0)
        ev[n++] = JVMPI_EVENT_OBJECT_ALLOC;
    enable_events(ev, n, 1);
    say("loaded mode=%s", mode);
    return JNI_OK;
}
