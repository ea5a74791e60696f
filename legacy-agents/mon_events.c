/* mon_events.c — a JDK 1.3-style JVMPI agent that watches Java monitor events
 * (tests/it/monitors/mon_events.sh, workload tests/java/MonEvents.java).
 *
 * Enables THREAD_START/END, CLASS_LOAD, MONITOR_CONTENDED_ENTER/ENTERED/EXIT and
 * MONITOR_WAIT/WAITED. The object of every monitor event is identified as a profiler does
 * it: RequestEvent(OBJECT_ALLOC, id) (with GC disabled) gives its class id, CLASS_LOAD gave
 * the class name. Threads are named from THREAD_START.
 *
 * Prints, one line each (prefix "mon: "):
 *   ev <TYPE> obj=<id> class=<name> env=<thread name> [timeout=<ms>]  per monitor event
 *     for objects of the workload's classes (MonLock, MonWaitLock, MonHandoffLock)
 *   thread end name=<thread name>                  THREAD_END of the workload's mon-* threads
 *   FAIL ...                                       a rule broken inside a handler
 *   summary ...                                    at JVM_SHUT_DOWN: counts for MonLock
 * Checked in the handlers: every event of a MonLock names the same id; ENTER and ENTERED
 * come on mon-contender's thread with env_id = that thread; EXIT (shim semantics: posted on
 * the contender's thread just before ENTERED, env_id = the previous owner) names
 * mon-holder and is directly followed on the same thread by ENTERED of the same object.
 * At the first MONITOR_WAIT on a MonWaitLock (on main) the agent also reads MonEvents.LOCK
 * and .WLOCK through JNI and prints their jobject2jobjectID ids ("jni LOCK=.. WLOCK=..").
 * Handshake: after each MONITOR_CONTENDED_ENTER of MonLock the agent stores the count in
 * the static MonEvents.enterSeen (jobjectID2jobject of the class id from CLASS_LOAD, then
 * SetStaticIntField), so that mon-holder releases LOCK only after the handler ran.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "mon"
#include "kit/out.h"
#include "kit/checked.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- threads and classes from THREAD_START / CLASS_LOAD -------------------------------- */

#define MAXTHR 512
static struct { JNIEnv *env; char name[64]; int ended; } thr[MAXTHR];
static int nthr;

static const char *thread_name(JNIEnv *env)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = nthr - 1; i >= 0; i--)
        if (thr[i].env == env) {
            n = thr[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n; /* entries are never reused or freed */
}

static JNIEnv *thread_env(const char *name)
{
    JNIEnv *e = NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nthr; i++)
        if (strcmp(thr[i].name, name) == 0)
            e = thr[i].env;
    pthread_mutex_unlock(&mu);
    return e;
}

struct cls { jobjectID id; char *name; };
static jobjectID monevents_class;
static struct cls *classes;
static int ncls, capcls;

static const char *class_name(jobjectID id)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = ncls - 1; i >= 0; i--)
        if (classes[i].id == id) {
            n = classes[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- object -> class, by RequestEvent(OBJECT_ALLOC) ----------------------------------- */

static __thread jobjectID tl_req_obj, tl_req_class;
static __thread int tl_req_got;

#define MAXOBJ 256
static struct { jobjectID obj, cls; } objs[MAXOBJ];
static int nobjs;

static jobjectID class_of(jobjectID obj)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nobjs; i++)
        if (objs[i].obj == obj) {
            jobjectID c = objs[i].cls;
            pthread_mutex_unlock(&mu);
            return c;
        }
    pthread_mutex_unlock(&mu);
    tl_req_obj = obj;
    tl_req_got = 0;
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj);
    jvmpi->EnableGC();
    if (rc != JVMPI_SUCCESS || !tl_req_got) {
        FAIL("RequestEvent(OBJECT_ALLOC, %p) rc=%d delivered=%d", (void *)obj, (int)rc, tl_req_got);
        return NULL;
    }
    pthread_mutex_lock(&mu);
    if (nobjs < MAXOBJ) {
        objs[nobjs].obj = obj;
        objs[nobjs].cls = tl_req_class;
        nobjs++;
    }
    pthread_mutex_unlock(&mu);
    return tl_req_class;
}

/* ---- monitor events ------------------------------------------------------------------ */

static struct {
    int enter, entered, exit;
    int enter_on_contender, entered_on_contender, exit_env_holder, exit_on_contender;
    int exit_before_entered, entered_without_exit;
    int wait, waited;
    jobjectID obj;      /* the MonLock id (first seen) */
    int other_ids;      /* events naming another MonLock id */
} lk;
static jobjectID g_wait_obj;
static int g_wait_other_ids;

static __thread jobjectID tl_exit_obj;  /* EXIT just seen on this thread, for this object */
static __thread JNIEnv *tl_self_env;

static const char *ev_name(int t)
{
    switch (t) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: return "MONITOR_CONTENDED_ENTER";
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED: return "MONITOR_CONTENDED_ENTERED";
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: return "MONITOR_CONTENDED_EXIT";
    case JVMPI_EVENT_MONITOR_WAIT: return "MONITOR_WAIT";
    case JVMPI_EVENT_MONITOR_WAITED: return "MONITOR_WAITED";
    default: return "?";
    }
}

/* An application class: inside Object.wait FindClass would use the boot loader, so ask
 * ClassLoader.getSystemClassLoader().loadClass(name). */
static jclass app_class(JNIEnv *jni, const char *name)
{
    jclass cl = (*jni)->FindClass(jni, "java/lang/ClassLoader");
    if (cl == NULL)
        return NULL;
    jmethodID gs = (*jni)->GetStaticMethodID(jni, cl, "getSystemClassLoader", "()Ljava/lang/ClassLoader;");
    jmethodID lc = (*jni)->GetMethodID(jni, cl, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
    jobject ldr = gs ? (*jni)->CallStaticObjectMethod(jni, cl, gs) : NULL;
    jstring n = (*jni)->NewStringUTF(jni, name);
    jclass c = ldr && lc && n ? (jclass)(*jni)->CallObjectMethod(jni, ldr, lc, n) : NULL;
    if ((*jni)->ExceptionCheck(jni))
        c = NULL;
    (*jni)->DeleteLocalRef(jni, cl);
    return c;
}

/* The ids through JNI: MonEvents.LOCK and .WLOCK via jobject2jobjectID (GC disabled). */
static void jni_crosscheck(JNIEnv *jni)
{
    jclass c = app_class(jni, "MonEvents");
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("loading class MonEvents through JNI failed");
        return;
    }
    jfieldID fl = (*jni)->GetStaticFieldID(jni, c, "LOCK", "LMonLock;");
    jfieldID fw = (*jni)->GetStaticFieldID(jni, c, "WLOCK", "LMonWaitLock;");
    if (fl == NULL || fw == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("MonEvents.LOCK/WLOCK not found");
        return;
    }
    jobject l = (*jni)->GetStaticObjectField(jni, c, fl);
    jobject w = (*jni)->GetStaticObjectField(jni, c, fw);
    jvmpi->DisableGC();
    jobjectID il = jvmpi->jobject2jobjectID(l), iw = jvmpi->jobject2jobjectID(w);
    jvmpi->EnableGC();
    say("jni LOCK=%p WLOCK=%p", (void *)il, (void *)iw);
    (*jni)->DeleteLocalRef(jni, l);
    (*jni)->DeleteLocalRef(jni, w);
    (*jni)->DeleteLocalRef(jni, c);
}

/* MonEvents.<field> = n, on the current thread (no Java code runs). */
static void handshake_field(JNIEnv *jni, const char *field, int n)
{
    jvmpi->DisableGC();
    jclass c = monevents_class ? (jclass)jvmpi->jobjectID2jobject(monevents_class) : NULL;
    jvmpi->EnableGC();
    jfieldID f = c ? (*jni)->GetStaticFieldID(jni, c, field, "I") : NULL;
    if (f == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("handshake: MonEvents.%s not found (class id %p)", field, (void *)monevents_class);
    } else {
        (*jni)->SetStaticIntField(jni, c, f, n);
    }
    if (c)
        (*jni)->DeleteLocalRef(jni, c);
}

static void handshake(JNIEnv *jni, int n)
{
    handshake_field(jni, "enterSeen", n);
}

static void on_monitor(int t, JVMPI_Event *ev)
{
    int waitev = t == JVMPI_EVENT_MONITOR_WAIT || t == JVMPI_EVENT_MONITOR_WAITED;
    jobjectID obj = waitev ? ev->u.monitor_wait.object : ev->u.monitor.object;
    /* Which thread are we on? env_id of WAIT/ENTER/ENTERED is the current thread. */
    if (t != JVMPI_EVENT_MONITOR_CONTENDED_EXIT)
        tl_self_env = ev->env_id;
    jobjectID exit_obj = tl_exit_obj;
    tl_exit_obj = NULL;
    if (obj == NULL) {
        if (t != JVMPI_EVENT_MONITOR_WAIT && t != JVMPI_EVENT_MONITOR_WAITED)
            FAIL("%s with a NULL object", ev_name(t));
        return;
    }
    jobjectID cid = class_of(obj);
    const char *cn = cid ? class_name(cid) : "?";
    int is_lock = strcmp(cn, "MonLock") == 0, is_wlock = strcmp(cn, "MonWaitLock") == 0;
    const char *tn = thread_name(ev->env_id);
    if (strcmp(cn, "MonHandoffLock") == 0) {
        /* The hand-off phase: only the event log is checked (order against THREAD_END). */
        say("ev %s obj=%p class=%s env=%s", ev_name(t), (void *)obj, cn, tn);
        if (t == JVMPI_EVENT_MONITOR_CONTENDED_ENTER) {
            /* The waiters' handlers may run at once: count and store under one lock, or a
             * handler that counted 1 could store after the one that counted 2, and the
             * program would never see every waiter. */
            static pthread_mutex_t hand_mu = PTHREAD_MUTEX_INITIALIZER;
            static int hand_enters;
            pthread_mutex_lock(&hand_mu);
            handshake_field(ev->env_id, "handoffEnterSeen", ++hand_enters);
            pthread_mutex_unlock(&hand_mu);
        }
        return;
    }
    if (!is_lock && !is_wlock)
        return; /* the JDK's own monitors */
    if (waitev)
        say("ev %s obj=%p class=%s env=%s timeout=%lld", ev_name(t), (void *)obj, cn, tn,
            (long long)ev->u.monitor_wait.timeout);
    else
        say("ev %s obj=%p class=%s env=%s", ev_name(t), (void *)obj, cn, tn);
    if (is_wlock) {
        static int checked;
        if (t == JVMPI_EVENT_MONITOR_WAIT && !__sync_fetch_and_add(&checked, 1))
            jni_crosscheck(ev->env_id);
        pthread_mutex_lock(&mu);
        if (g_wait_obj == NULL)
            g_wait_obj = obj;
        else if (g_wait_obj != obj)
            g_wait_other_ids++;
        pthread_mutex_unlock(&mu);
        return;
    }
    JNIEnv *contender = thread_env("mon-contender"), *holder = thread_env("mon-holder");
    pthread_mutex_lock(&mu);
    if (lk.obj == NULL)
        lk.obj = obj;
    else if (lk.obj != obj)
        lk.other_ids++;
    int seen = 0;
    switch (t) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        seen = ++lk.enter;
        lk.enter_on_contender += ev->env_id == contender;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        lk.entered++;
        lk.entered_on_contender += ev->env_id == contender;
        if (exit_obj == obj)
            lk.exit_before_entered++;
        else
            lk.entered_without_exit++;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        lk.exit++;
        lk.exit_env_holder += ev->env_id == holder;
        /* On the contender's thread: the last env this thread reported for itself. */
        lk.exit_on_contender += tl_self_env == contender && contender != NULL;
        tl_exit_obj = obj;
        break;
    case JVMPI_EVENT_MONITOR_WAIT: lk.wait++; break;
    case JVMPI_EVENT_MONITOR_WAITED: lk.waited++; break;
    }
    pthread_mutex_unlock(&mu);
    if (seen)
        handshake(ev->env_id, seen);
}

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (t) {
    case JVMPI_EVENT_THREAD_START:
        pthread_mutex_lock(&mu);
        if (nthr < MAXTHR) {
            thr[nthr].env = ev->u.thread_start.thread_env_id;
            snprintf(thr[nthr].name, sizeof thr[nthr].name, "%s",
                     ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
            nthr++;
        }
        pthread_mutex_unlock(&mu);
        if (ev->u.thread_start.thread_name && strncmp(ev->u.thread_start.thread_name, "mon-", 4) == 0)
            say("thread name=%s env=%p", ev->u.thread_start.thread_name,
                (void *)ev->u.thread_start.thread_env_id);
        break;
    case JVMPI_EVENT_THREAD_END: {
        const char *tn = thread_name(ev->env_id);
        if (strncmp(tn, "mon-", 4) == 0)
            say("thread end name=%s", tn);
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&mu);
        if (ncls == capcls) {
            capcls = capcls ? capcls * 2 : 1024;
            classes = realloc(classes, sizeof *classes * (size_t)capcls);
        }
        classes[ncls].id = ev->u.class_load.class_id;
        if (ev->u.class_load.class_name && strcmp(ev->u.class_load.class_name, "MonEvents") == 0)
            monevents_class = ev->u.class_load.class_id;
        classes[ncls].name = strdup(ev->u.class_load.class_name ? ev->u.class_load.class_name : "");
        ncls++;
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT)) {
            FAIL("OBJECT_ALLOC was never enabled");
            break;
        }
        if (ev->u.obj_alloc.obj_id != tl_req_obj)
            FAIL("requested OBJECT_ALLOC for %p names %p", (void *)tl_req_obj,
                 (void *)ev->u.obj_alloc.obj_id);
        tl_req_class = ev->u.obj_alloc.class_id;
        tl_req_got = 1;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        on_monitor(t, ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("JVM_INIT_DONE");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&mu);
        say("summary lock=%p other_ids=%d enter=%d entered=%d exit=%d enter_on_contender=%d "
            "entered_on_contender=%d exit_env_holder=%d exit_on_contender=%d "
            "exit_before_entered=%d entered_without_exit=%d wait=%d waited=%d",
            (void *)lk.obj, lk.other_ids, lk.enter, lk.entered, lk.exit, lk.enter_on_contender,
            lk.entered_on_contender, lk.exit_env_holder, lk.exit_on_contender,
            lk.exit_before_entered, lk.entered_without_exit, lk.wait, lk.waited);
        say("summary waitlock=%p other_ids=%d fails=%d", (void *)g_wait_obj, g_wait_other_ids,
            g_fails);
        pthread_mutex_unlock(&mu);
        break;
    default:
        FAIL("event type %d was never enabled", t);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD,
                              JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                              JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                              JVMPI_EVENT_MONITOR_CONTENDED_EXIT,
                              JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED,
                              JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
