/* monitors.c — Java monitor events: MONITOR_CONTENDED_ENTER / ENTERED / EXIT and
 * MONITOR_WAIT / WAITED.
 *
 * ENTER and ENTERED come from JVMTI MonitorContendedEnter / Entered, on the contending
 * thread, with the lock object's id. JVMTI has no event for the owner's release, so
 * MONITOR_CONTENDED_EXIT is delivered as seen from the contender's side: when a thread
 * starts to wait for a monitor, the shim notes its owner (GetObjectMonitorUsage); when the
 * thread then gets the monitor, that owner has exited it, and the shim posts
 * MONITOR_CONTENDED_EXIT {object} with env_id = that owner, on the contender's thread,
 * just before MONITOR_CONTENDED_ENTERED. HotSpot posted it on the exiting thread itself;
 * the pairing of EXIT with the next ENTERED is the same. An owner that reaches its
 * THREAD_END while a contender it was seen holding still waits to be woken has released
 * the monitor: it posts that EXIT itself, on its own thread, before its THREAD_END (as on
 * HotSpot), so no EXIT is lost to a contender that wakes only after the owner has ended and
 * none names a thread the agent has seen end. The contentions owed an EXIT are a list under
 * owed_lock (a leaf; contention is the slow path: the contender is about to block). The
 * hand-over is decided under that lock: in one critical section an ending owner claims
 * every contention no contender is posting yet and marks itself (mon_ending), so no
 * contender starts an EXIT naming it from then on; it posts the claimed EXITs and waits (at
 * most 2 s) for those a contender was posting, so that every EXIT naming it reaches the
 * agent before its THREAD_END.
 *
 * MONITOR_WAIT carries the requested timeout (ms), MONITOR_WAITED the elapsed time in ms
 * measured by the shim between the two JVMTI events (HotSpot measured it too). Thread.sleep
 * is not reported: JVMTI has no event for it (HotSpot 1.4.2 did not post one either).
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "events/events.h"
#include "memory/memory.h"
#include "monitors/monitors.h"
#include "threads/threads.h"

#include <stdlib.h>
#include <time.h>

/* One contention owed a MONITOR_CONTENDED_EXIT: posted by whichever comes first, the
 * contender getting the monitor or the owner ending. */
struct owed_exit {
    JNIEnv *owner;              /* the owner seen when the contention began */
    jobject lock;               /* global ref to the monitor's object */
    bool posted;                /* the owner posted it at its THREAD_END */
    bool posting;               /* the contender is posting it now */
    struct owed_exit *prev, *next;
};
static pthread_mutex_t owed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t owed_cond = PTHREAD_COND_INITIALIZER; /* a contender's post ended */
static struct owed_exit *owed_head;

/* A thread's contention owed an EXIT and the start of its wait are kept in its thread record
 * (mon_owed, mon_wait_start): a virtual thread that blocks may go on on another carrier. */

/* Take e off the list. Under owed_lock. */
static void owed_unlink(struct owed_exit *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        owed_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

/* A contention nobody will post an EXIT for: off the list and freed. */
static void owed_drop(JNIEnv *jni, struct owed_exit *e)
{
    pthread_mutex_lock(&owed_lock);
    owed_unlink(e);
    pthread_mutex_unlock(&owed_lock);
    (*jni)->DeleteGlobalRef(jni, e->lock);
    free(e);
}

static jobjectID object_id(JNIEnv *jni, jobject o)
{
    return memory_id_announced(jni, o);
}

static void post_monitor(jint type, JNIEnv *env, JNIEnv *jni, jobject o)
{
    JVMPI_Event ev;
    int hand = ids_hand_open(); /* o is at hand for requests from the handler */
    event_init(&ev, type, env);
    ev.u.monitor.object = object_id(jni, o);
    event_post_all(&ev);
    ids_hand_close(hand);
}

static void JNICALL cb_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject o)
{
    if (shim_quiet() || shim_own_java())
        return;
    (void)t;
    struct thread_rec *self = threads_self();
    if (self != NULL)
        self->mon_owed = NULL;
    if (events_any(JVMPI_EVENT_MONITOR_CONTENDED_EXIT)) {
        jvmtiMonitorUsage u;
        if (jvmti_ok_at((*jvmti)->GetObjectMonitorUsage(jvmti, o, &u), LOG_DEBUG,
                        "GetObjectMonitorUsage: the owner that owes MONITOR_CONTENDED_EXIT "
                        "(none is posted)")) {
            if (u.owner != NULL) {
                JNIEnv *owner = threads_env_of(jni, u.owner);
                (*jni)->DeleteLocalRef(jni, u.owner);
                struct owed_exit *e = owner ? calloc(1, sizeof *e) : NULL;
                if (e != NULL && (e->lock = (*jni)->NewGlobalRef(jni, o)) != NULL) {
                    e->owner = owner;
                    pthread_mutex_lock(&owed_lock);
                    e->next = owed_head;
                    if (owed_head)
                        owed_head->prev = e;
                    owed_head = e;
                    pthread_mutex_unlock(&owed_lock);
                    if (self != NULL)
                        self->mon_owed = e;
                    else
                        owed_drop(jni, e); /* nobody to post it: no record for this thread */
                } else if (e != NULL) {
                    free(e);
                    log_warn("MONITOR_CONTENDED_EXIT: no global reference for the contended "
                             "object: this EXIT is not posted");
                }
            }
            for (jint i = 0; i < u.waiter_count; i++)
                (*jni)->DeleteLocalRef(jni, u.waiters[i]);
            for (jint i = 0; i < u.notify_waiter_count; i++)
                (*jni)->DeleteLocalRef(jni, u.notify_waiters[i]);
            jvmti_free(jvmti, u.waiters);
            jvmti_free(jvmti, u.notify_waiters);
        }
    }
    if (events_any(JVMPI_EVENT_MONITOR_CONTENDED_ENTER))
        post_monitor(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, jni, jni, o);
}

static void JNICALL cb_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject o)
{
    if (shim_quiet() || shim_own_java())
        return;
    (void)jvmti; (void)t;
    struct thread_rec *self = threads_self();
    struct owed_exit *e = self != NULL ? self->mon_owed : NULL;
    if (self != NULL)
        self->mon_owed = NULL;
    if (e != NULL) {
        /* Not posted by the owner at its THREAD_END, and the owner not ending: post it here.
         * An owner that has begun to end (or has ended: it may take the monitor after its
         * THREAD_END, the JVM notifying joiners under the Thread object's lock) names no
         * thread the agent still knows, so no EXIT names it; HotSpot posted that one on the
         * ending thread, after THREAD_END. */
        struct thread_rec *owner = threads_acquire(e->owner);
        pthread_mutex_lock(&owed_lock);
        bool post = !e->posted && owner != NULL && !owner->mon_ending;
        if (post)
            e->posting = true;
        else
            owed_unlink(e);
        pthread_mutex_unlock(&owed_lock);
        if (post) {
            if (events_any(JVMPI_EVENT_MONITOR_CONTENDED_EXIT))
                post_monitor(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, e->owner, jni, o);
            pthread_mutex_lock(&owed_lock);
            owed_unlink(e);
            pthread_cond_broadcast(&owed_cond);
            pthread_mutex_unlock(&owed_lock);
        }
        if (owner != NULL)
            threads_release(owner);
        (*jni)->DeleteGlobalRef(jni, e->lock);
        free(e);
    }
    if (events_any(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED))
        post_monitor(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, jni, jni, o);
}

/* On an ending thread, just before its THREAD_END (threads/ calls it): post
 * MONITOR_CONTENDED_EXIT for every contention that saw this thread own the monitor and
 * whose contender has not got it yet (the ending thread has released it). env: the ending
 * thread's env_id. */
static void monitors_owner_ending(JNIEnv *env)
{
    JNIEnv *jni = shim_current_jni();
    struct thread_rec *me = threads_acquire(env);
    jobject *locks = NULL;
    size_t n = 0, cap = 0;
    bool busy = false;
    /* In one critical section: from the mark on no contender starts an EXIT naming this
     * thread, and every contention not yet being posted is claimed here (a contender that
     * finds its entry claimed leaves the EXIT to this thread). */
    bool all = true;
    shim_crit_begin(); /* JNI calls under a shim lock (shim.h) */
    pthread_mutex_lock(&owed_lock);
    for (struct owed_exit *e = owed_head; e != NULL; e = e->next) {
        if (e->owner != env || e->posted)
            continue;
        if (e->posting) {
            busy = true;
            continue;
        }
        if (n == cap) {
            size_t c = cap ? cap * 2 : 8;
            jobject *l = realloc(locks, c * sizeof *l);
            if (l == NULL) {
                all = false; /* out of memory: the rest stay with their contenders */
                break;
            }
            locks = l;
            cap = c;
        }
        e->posted = true;
        locks[n++] = (*jni)->NewLocalRef(jni, e->lock); /* the record may go once unlocked */
    }
    if (me != NULL && all)
        me->mon_ending = true;
    pthread_mutex_unlock(&owed_lock);
    shim_crit_end();
    for (size_t i = 0; i < n; i++) {
        if (locks[i] != NULL && events_any(JVMPI_EVENT_MONITOR_CONTENDED_EXIT))
            post_monitor(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, env, jni, locks[i]);
        if (locks[i] != NULL)
            (*jni)->DeleteLocalRef(jni, locks[i]);
    }
    free(locks);
    /* Contenders posting an EXIT that names this thread right now: wait for them, but not
     * for ever (a handler may wait for something this thread holds). */
    if (busy) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 2;
        pthread_mutex_lock(&owed_lock);
        for (;;) {
            bool still = false;
            for (struct owed_exit *e = owed_head; e != NULL && !still; e = e->next)
                still = e->owner == env && e->posting;
            if (!still || pthread_cond_timedwait(&owed_cond, &owed_lock, &deadline) != 0)
                break;
        }
        pthread_mutex_unlock(&owed_lock);
    }
    if (me != NULL)
        threads_release(me);
}

/* Remember what the calling thread waits on, for MONITOR_DUMP. */
static void set_wait_obj(JNIEnv *jni, jobject o)
{
    struct thread_rec *r = threads_self();
    if (r == NULL)
        return;
    jobject g = o ? (*jni)->NewGlobalRef(jni, o) : NULL;
    pthread_mutex_lock(&r->wait_lock);
    jobject old = r->wait_obj;
    r->wait_obj = g;
    pthread_mutex_unlock(&r->wait_lock);
    if (old)
        (*jni)->DeleteGlobalRef(jni, old);
}

static void JNICALL cb_monitor_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject o,
                                    jlong timeout)
{
    if (shim_quiet() || shim_own_java())
        return;
    (void)jvmti; (void)t;
    struct thread_rec *self = threads_self();
    if (self != NULL)
        clock_gettime(CLOCK_MONOTONIC, &self->mon_wait_start);
    set_wait_obj(jni, o);
    if (!events_any(JVMPI_EVENT_MONITOR_WAIT))
        return;
    JVMPI_Event ev;
    int hand = ids_hand_open();
    event_init(&ev, JVMPI_EVENT_MONITOR_WAIT, jni);
    ev.u.monitor_wait.object = object_id(jni, o);
    ev.u.monitor_wait.timeout = timeout;
    event_post_all(&ev);
    ids_hand_close(hand);
}

static void JNICALL cb_monitor_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject o,
                                      jboolean timed_out)
{
    if (shim_quiet() || shim_own_java())
        return;
    (void)jvmti; (void)t; (void)timed_out;
    set_wait_obj(jni, NULL);
    if (!events_any(JVMPI_EVENT_MONITOR_WAITED))
        return;
    struct timespec now, start = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct thread_rec *self = threads_self();
    if (self != NULL)
        start = self->mon_wait_start;
    jlong ms = start.tv_sec == 0 ? 0 : (jlong)(now.tv_sec - start.tv_sec) * 1000 +
                                       (now.tv_nsec - start.tv_nsec) / 1000000;
    JVMPI_Event ev;
    int hand = ids_hand_open();
    event_init(&ev, JVMPI_EVENT_MONITOR_WAITED, jni);
    ev.u.monitor_wait.object = object_id(jni, o);
    ev.u.monitor_wait.timeout = ms; /* HotSpot: the time actually waited */
    event_post_all(&ev);
    ids_hand_close(hand);
}

void monitors_module_init(void)
{
    threads_set_owner_ending(monitors_owner_ending);
    bool ok = g_shim.caps.can_generate_monitor_events;
    struct event_row enter = {.kind = EVK_ON, .jvmti = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER}};
    struct event_row entered = {.kind = EVK_ON,
                                .jvmti = {JVMTI_EVENT_MONITOR_CONTENDED_ENTERED}};
    struct event_row exitr = {.kind = EVK_ON,
                              .jvmti = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                                        JVMTI_EVENT_MONITOR_CONTENDED_ENTERED}};
    /* WAITED needs the WAIT callback too, for the start time. */
    struct event_row wait = {.kind = EVK_ON, .jvmti = {JVMTI_EVENT_MONITOR_WAIT}};
    struct event_row waited = {.kind = EVK_ON,
                               .jvmti = {JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED}};
    struct event_row *rows[] = {&enter, &entered, &exitr, &wait, &waited};
    int nums[] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                  JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
                  JVMPI_EVENT_MONITOR_WAITED};
    for (int i = 0; i < 5; i++) {
        if (!ok) {
            rows[i]->kind = EVK_UNAVAILABLE;
            rows[i]->why = "because the JVM refused the monitor-events capability";
        }
        events_register(nums[i], rows[i]);
    }
    if (ok) {
        /* MONITOR_DUMP needs to know which object each waiting thread waits on. */
        events_need_always(JVMTI_EVENT_MONITOR_WAIT);
        events_need_always(JVMTI_EVENT_MONITOR_WAITED);
    }
}

void monitors_module_callbacks(jvmtiEventCallbacks *cb)
{
    cb->MonitorContendedEnter = cb_contended_enter;
    cb->MonitorContendedEntered = cb_contended_entered;
    cb->MonitorWait = cb_monitor_wait;
    cb->MonitorWaited = cb_monitor_waited;
}
