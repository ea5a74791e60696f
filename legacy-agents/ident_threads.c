/* ident_threads.c — a JDK 1.3-style JVMPI agent that checks thread identity
 * (tests/it/threads/ident_threads.sh, workload tests/java/IdentThreads.java).
 *
 * Enabled: THREAD_START, THREAD_END, CLASS_LOAD, CLASS_LOAD_HOOK, JVM_INIT_DONE, JVM_SHUT_DOWN.
 * Checked by the agent itself ("ident_threads: FAIL ..." on violation):
 *  - THREAD_START: no second one for an env that is alive; replayed ones (before
 *    JVM_INIT_DONE, posted on the thread that ran JVM_OnLoad) carry no REQUESTED bit, and
 *    that thread is main;
 *    live ones come on the new thread (event env_id == thread_env_id);
 *    GetThreadObject(thread_env_id) == thread_id; jobjectID2jobject(thread_id) is a Thread
 *    whose getName() is thread_name (and, for live starts, the current thread), and
 *    jobject2jobjectID of it gives thread_id back.
 *  - THREAD_END: for a started, not yet ended env, on that thread, with the START payload.
 *  - every other event names (env_id) a thread whose THREAD_START was delivered.
 *  - RequestEvent(THREAD_START, main's id) posts a REQUESTED THREAD_START for main on the
 *    calling thread before returning; garbage / NULL / non-thread / dead-thread ids post
 *    nothing.
 * Printed for the test: every THREAD_START/END, the replayed names, CLASS_LOAD of the
 * workload's classes with the name of the thread they came on, a summary.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "ident_threads"
#define KIT_LINE 2048
#include "kit/out.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

/* ---- the thread table (protected by `lock`) ------------------------------------------ */

struct trec {
    JNIEnv *env;
    jobjectID tid;
    char name[128], group[128], parent[128];
    int replayed, ended;
};
#define MAXT 1024
static struct trec T[MAXT];
static int nT;

/* Live record of env (started, not ended), or NULL. Caller holds lock. */
static struct trec *live(JNIEnv *env)
{
    for (int i = nT - 1; i >= 0; i--)
        if (T[i].env == env && !T[i].ended)
            return &T[i];
    return NULL;
}
/* Any record of env, even ended (latest first). Caller holds lock. */
static struct trec *ever(JNIEnv *env)
{
    for (int i = nT - 1; i >= 0; i--)
        if (T[i].env == env)
            return &T[i];
    return NULL;
}

static volatile int init_done, shut_down;
static JNIEnv *replay_event_env;        /* env_id of the first replayed THREAD_START */
static int n_replay, n_live_start, n_end, n_requested, n_null_env, n_checked_events;
static char replay_names[4096];
static JNIEnv *main_env;
static jobjectID main_tid;
static JNIEnv *onload_env;              /* the thread that ran JVM_OnLoad (main) */
static JNIEnv *dead_worker_env;         /* a worker that ended, for a late request */
static jobjectID dead_worker_tid;
static char dead_worker_name[128];

/* The last REQUESTED THREAD_START, for the code that asked for it. */
static volatile int req_count;
static char req_name[128], req_group[128], req_parent[128];
static JNIEnv *req_thread_env, *req_event_env;
static jobjectID req_tid;

static void copy(char *dst, const char *src, size_t n)
{
    snprintf(dst, n, "%s", src ? src : "NULL");
}

/* Ask the Java side about a thread object: its name, and whether it is the current thread. */
static void check_thread_object(JNIEnv *jni, JVMPI_Event *ev, const char *what, int live_start)
{
    jobjectID tid = ev->u.thread_start.thread_id;
    const char *tname = ev->u.thread_start.thread_name;
    if (jni == NULL) {
        FAIL("%s %s: no JNIEnv on the event's thread", what, S(tname));
        return;
    }
    jvmpi->DisableGC();
    jobjectID via_env = jvmpi->GetThreadObject(ev->u.thread_start.thread_env_id);
    jobject ref = jvmpi->jobjectID2jobject(tid);
    jobjectID back = ref ? jvmpi->jobject2jobjectID(ref) : NULL;
    jvmpi->EnableGC();
    if (via_env != tid)
        FAIL("%s %s: GetThreadObject(thread_env_id %p) = %p, thread_id = %p", what, S(tname),
             (void *)ev->u.thread_start.thread_env_id, (void *)via_env, (void *)tid);
    if (ref == NULL) {
        FAIL("%s %s: jobjectID2jobject(thread_id %p) = NULL", what, S(tname), (void *)tid);
        return;
    }
    if (back != tid)
        FAIL("%s %s: jobject2jobjectID(jobjectID2jobject(%p)) = %p", what, S(tname),
             (void *)tid, (void *)back);
    if ((*jni)->PushLocalFrame(jni, 16) != 0) {
        FAIL("PushLocalFrame failed");
        return;
    }
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID getName = tc ? (*jni)->GetMethodID(jni, tc, "getName", "()Ljava/lang/String;") : NULL;
    jmethodID cur = tc ? (*jni)->GetStaticMethodID(jni, tc, "currentThread", "()Ljava/lang/Thread;") : NULL;
    if (getName == NULL || cur == NULL || !(*jni)->IsInstanceOf(jni, ref, tc)) {
        (*jni)->ExceptionClear(jni);
        FAIL("%s %s: thread_id %p is not a java.lang.Thread", what, S(tname), (void *)tid);
    } else {
        jstring js = (jstring)(*jni)->CallObjectMethod(jni, ref, getName);
        const char *jn = js ? (*jni)->GetStringUTFChars(jni, js, NULL) : NULL;
        if (jn == NULL || tname == NULL || strcmp(jn, tname) != 0)
            FAIL("%s: thread_name '%s' but the Thread object's getName() is '%s'", what, S(tname),
                 S(jn));
        if (jn)
            (*jni)->ReleaseStringUTFChars(jni, js, jn);
        if (live_start) {
            jobject me = (*jni)->CallStaticObjectMethod(jni, tc, cur);
            if (!(*jni)->IsSameObject(jni, me, ref))
                FAIL("%s %s: live THREAD_START, but thread_id is not Thread.currentThread()",
                     what, S(tname));
        }
        (*jni)->ExceptionClear(jni);
    }
    (*jni)->PopLocalFrame(jni, NULL);
}

static void on_requested_start(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    copy(req_name, ev->u.thread_start.thread_name, sizeof req_name);
    copy(req_group, ev->u.thread_start.group_name, sizeof req_group);
    copy(req_parent, ev->u.thread_start.parent_name, sizeof req_parent);
    req_thread_env = ev->u.thread_start.thread_env_id;
    req_event_env = ev->env_id;
    req_tid = ev->u.thread_start.thread_id;
    n_requested++;
    struct trec *r = live(req_thread_env);
    if (r == NULL)
        FAIL("REQUESTED THREAD_START %s for env %p whose THREAD_START never came", req_name,
             (void *)req_thread_env);
    else if (strcmp(r->name, req_name) || strcmp(r->group, req_group) ||
             strcmp(r->parent, req_parent) || r->tid != req_tid)
        FAIL("REQUESTED THREAD_START %s/%s/%s id %p differs from its THREAD_START %s/%s/%s id %p",
             req_name, req_group, req_parent, (void *)req_tid, r->name, r->group, r->parent,
             (void *)r->tid);
    __sync_add_and_fetch(&req_count, 1);
    jvmpi->RawMonitorExit(lock);
    say("requested THREAD_START name=%s group=%s parent=%s same_thread=%s",
        S(ev->u.thread_start.thread_name), S(ev->u.thread_start.group_name),
        S(ev->u.thread_start.parent_name), ev->env_id == current_env() ? "yes" : "no");
}

static void on_thread_start(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        on_requested_start(ev);
        return;
    }
    JNIEnv *tenv = ev->u.thread_start.thread_env_id;
    const char *name = ev->u.thread_start.thread_name;
    /* The start-up replay runs on the thread that called JVM_OnLoad, before JVM_INIT_DONE.
     * Threads started meanwhile (the shim's own worker) may post their own THREAD_START
     * just before JVM_INIT_DONE: the start gate opens before it is posted, as in HotSpot. */
    int replay = !init_done && ev->env_id == onload_env;
    if (tenv == NULL)
        FAIL("THREAD_START %s with thread_env_id NULL", S(name));
    if (ev->u.thread_start.thread_id == NULL)
        FAIL("THREAD_START %s with thread_id NULL", S(name));

    jvmpi->RawMonitorEnter(lock);
    struct trec *dup = live(tenv);
    if (dup != NULL) {
        FAIL("second THREAD_START for live env %p: '%s' (first was '%s')", (void *)tenv, S(name),
             dup->name);
    }
    if (nT < MAXT) {
        struct trec *r = &T[nT++];
        memset(r, 0, sizeof *r);
        r->env = tenv;
        r->tid = ev->u.thread_start.thread_id;
        copy(r->name, name, sizeof r->name);
        copy(r->group, ev->u.thread_start.group_name, sizeof r->group);
        copy(r->parent, ev->u.thread_start.parent_name, sizeof r->parent);
        r->replayed = replay;
    }
    if (replay) {
        n_replay++;
        if (replay_event_env == NULL)
            replay_event_env = ev->env_id;
        else if (ev->env_id != replay_event_env)
            FAIL("replayed THREAD_START %s came on env %p, earlier ones on %p", S(name),
                 (void *)ev->env_id, (void *)replay_event_env);
        size_t l = strlen(replay_names);
        snprintf(replay_names + l, sizeof replay_names - l, "%s%s", l ? "|" : "", S(name));
        if (name != NULL && strcmp(name, "main") == 0) {
            main_env = tenv;
            main_tid = ev->u.thread_start.thread_id;
        }
    } else {
        n_live_start++;
        if (ev->env_id != tenv)
            FAIL("live THREAD_START %s on env %p, but thread_env_id is %p", S(name),
                 (void *)ev->env_id, (void *)tenv);
    }
    jvmpi->RawMonitorExit(lock);

    say("THREAD_START %s name=%s group=%s parent=%s", replay ? "replay" : "live", S(name),
        S(ev->u.thread_start.group_name), S(ev->u.thread_start.parent_name));
    check_thread_object(current_env(), ev, replay ? "replayed THREAD_START" : "THREAD_START",
                        !replay);
}

static void on_thread_end(JVMPI_Event *ev)
{
    const char *name = ev->u.thread_start.thread_name;
    jvmpi->RawMonitorEnter(lock);
    struct trec *r = live(ev->env_id);
    char rname[128] = "?";
    if (r == NULL) {
        struct trec *e = ever(ev->env_id);
        FAIL("THREAD_END (%s) for env %p: %s", S(name), (void *)ev->env_id,
             e ? "already ended" : "no THREAD_START came for it");
    } else {
        copy(rname, r->name, sizeof rname);
        if (ev->u.thread_start.thread_env_id != ev->env_id)
            FAIL("THREAD_END %s: thread_env_id %p but env_id %p", r->name,
                 (void *)ev->u.thread_start.thread_env_id, (void *)ev->env_id);
        if (name == NULL || strcmp(name, r->name) != 0 ||
            strcmp(S(ev->u.thread_start.group_name), r->group) != 0 ||
            strcmp(S(ev->u.thread_start.parent_name), r->parent) != 0)
            FAIL("THREAD_END payload %s/%s/%s differs from THREAD_START %s/%s/%s", S(name),
                 S(ev->u.thread_start.group_name), S(ev->u.thread_start.parent_name), r->name,
                 r->group, r->parent);
        if (ev->u.thread_start.thread_id != r->tid)
            FAIL("THREAD_END %s: thread_id %p, THREAD_START had %p", r->name,
                 (void *)ev->u.thread_start.thread_id, (void *)r->tid);
        r->ended = 1;
        if (strncmp(r->name, "ident-worker-", 13) == 0) {
            dead_worker_env = r->env;
            dead_worker_tid = r->tid;
            copy(dead_worker_name, r->name, sizeof dead_worker_name);
        }
    }
    n_end++;
    jvmpi->RawMonitorExit(lock);
    say("THREAD_END name=%s start_name=%s", S(name), rname);
}

/* Definition before use, for events other than THREAD_START / THREAD_END. Returns the name
 * of the thread (into out). */
static void check_env(JVMPI_Event *ev, const char *what, int allow_ended, char *out, size_t n)
{
    copy(out, "?", n);
    jvmpi->RawMonitorEnter(lock);
    n_checked_events++;
    if (ev->env_id == NULL) {
        n_null_env++;
    } else {
        struct trec *r = live(ev->env_id);
        if (r == NULL && allow_ended)
            r = ever(ev->env_id);
        if (r == NULL)
            FAIL("%s on env %p before its THREAD_START", what, (void *)ev->env_id);
        else
            copy(out, r->name, n);
    }
    jvmpi->RawMonitorExit(lock);
}

static int expect_request(const char *what, jobjectID id, JNIEnv *want_env, const char *want_name)
{
    int before = req_count;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, id);
    int got = req_count - before;
    if (want_name == NULL) {
        say("request %s rc=%d events=%d", what, (int)rc, got);
        if (rc == JVMPI_SUCCESS || got != 0)
            FAIL("RequestEvent(THREAD_START, %s %p) returned %d and posted %d events", what,
                 (void *)id, (int)rc, got);
        return 0;
    }
    jvmpi->RawMonitorEnter(lock);
    int ok = rc == JVMPI_SUCCESS && got == 1 && strcmp(req_name, want_name) == 0 &&
             req_thread_env == want_env && req_tid == id && req_event_env == current_env();
    say("request %s rc=%d events=%d name=%s env_ok=%s id_ok=%s on_caller=%s", what, (int)rc, got,
        got ? req_name : "-", req_thread_env == want_env ? "yes" : "no", req_tid == id ? "yes" : "no",
        req_event_env == current_env() ? "yes" : "no");
    jvmpi->RawMonitorExit(lock);
    if (!ok)
        FAIL("RequestEvent(THREAD_START, %s) did not post one REQUESTED THREAD_START named %s "
             "on the caller before returning", what, want_name);
    return ok;
}

static void on_init_done(JVMPI_Event *ev)
{
    char tn[128];
    check_env(ev, "JVM_INIT_DONE", 0, tn, sizeof tn);
    init_done = 1;
    say("JVM_INIT_DONE on=%s replayed=%d names=%s", tn, n_replay, replay_names);
    if (main_env == NULL)
        FAIL("no THREAD_START for main in the start-up replay");
    if (main_env != onload_env)
        FAIL("main's thread_env_id %p is not the env JVM_OnLoad ran on (%p)", (void *)main_env,
             (void *)onload_env);
    if (ev->env_id != main_env)
        FAIL("JVM_INIT_DONE on env %p, main is %p", (void *)ev->env_id, (void *)main_env);
    if (replay_event_env != main_env)
        FAIL("the replayed THREAD_STARTs came on env %p, not main's %p", (void *)replay_event_env,
             (void *)main_env);
    jvmpi->DisableGC();
    jobjectID mo = jvmpi->GetThreadObject(main_env);
    jobjectID none = jvmpi->GetThreadObject(NULL);
    jvmpi->EnableGC();
    say("GetThreadObject(main)==thread_id %s; GetThreadObject(NULL)=%p", mo == main_tid ? "yes" : "no",
        (void *)none);
    if (mo != main_tid)
        FAIL("GetThreadObject(main env) = %p, THREAD_START said %p", (void *)mo, (void *)main_tid);
    if (none != NULL)
        FAIL("GetThreadObject(NULL) = %p", (void *)none);
    jvmpi->DisableGC();
    expect_request("main@initdone", main_tid, main_env, "main");
    expect_request("garbage", (jobjectID)(long)0x1234, NULL, NULL);
    expect_request("NULL", NULL, NULL, NULL);
    /* A class id is an object id, but not a thread. */
    JNIEnv *jni = current_env();
    jclass sc = (*jni)->FindClass(jni, "java/lang/String");
    jobjectID cid = jvmpi->jobject2jobjectID(sc);
    expect_request("class-id", cid, NULL, NULL);
    (*jni)->DeleteLocalRef(jni, sc);
    jvmpi->EnableGC();
}

/* IdentThreads$Done: every worker has been joined. */
static void late_checks(void)
{
    say("late checks on the main thread");
    jvmpi->DisableGC();
    expect_request("main@late", main_tid, main_env, "main");
    if (dead_worker_tid != NULL) {
        char what[160];
        snprintf(what, sizeof what, "dead:%s", dead_worker_name);
        expect_request(what, dead_worker_tid, NULL, NULL);
        /* A dead thread's env names no thread any more. */
        jobjectID o = jvmpi->GetThreadObject(dead_worker_env);
        jvmpi->RawMonitorEnter(lock);
        int reused = live(dead_worker_env) != NULL;
        jvmpi->RawMonitorExit(lock);
        say("GetThreadObject(dead worker env) = %s%s", o ? "an id" : "NULL",
            reused ? " (env reused by a live thread)" : "");
        if (o != NULL && !reused)
            FAIL("GetThreadObject of an ended thread's env returned %p", (void *)o);
    } else {
        FAIL("no worker ended before IdentThreads$Done");
    }
    jvmpi->EnableGC();
    int workers = 0, ended = 0, ingroup = 0;
    jvmpi->RawMonitorEnter(lock);
    for (int i = 0; i < nT; i++)
        if (strncmp(T[i].name, "ident-worker-", 13) == 0) {
            workers++;
            ended += T[i].ended;
            ingroup += strcmp(T[i].group, "identGroup") == 0 && strcmp(T[i].parent, "main") == 0;
        }
    jvmpi->RawMonitorExit(lock);
    say("workers started=%d ended=%d in_identGroup_under_main=%d", workers, ended, ingroup);
}

static void on_class_load(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        return;
    char tn[128];
    check_env(ev, "CLASS_LOAD", 0, tn, sizeof tn);
    const char *cn = ev->u.class_load.class_name;
    if (cn != NULL && strncmp(cn, "IdentThreads", 12) == 0) {
        say("CLASS_LOAD %s on=%s", cn, tn);
        if (strcmp(cn, "IdentThreads$Done") == 0)
            late_checks();
    }
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    char tn[128];
    switch (type) {
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        check_env(ev, "CLASS_LOAD_HOOK", 0, tn, sizeof tn);
        ev->u.class_load_hook.new_class_data = ev->u.class_load_hook.class_data;
        ev->u.class_load_hook.new_class_data_len = ev->u.class_load_hook.class_data_len;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        check_env(ev, "JVM_SHUT_DOWN", 1, tn, sizeof tn);
        shut_down = 1;
        jvmpi->RawMonitorEnter(lock);
        say("summary threads=%d replayed=%d live_starts=%d ends=%d requested=%d checked_events=%d "
            "null_env_events=%d fails=%d", nT, n_replay, n_live_start, n_end, n_requested,
            n_checked_events, n_null_env, g_fails);
        jvmpi->RawMonitorExit(lock);
        say("JVM_SHUT_DOWN on=%s", tn);
        break;
    default:
        FAIL("event type %d was never enabled", (int)ev->event_type);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_ident_threads_lock");
    onload_env = current_env();
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_CLASS_LOAD_HOOK,
                              JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
