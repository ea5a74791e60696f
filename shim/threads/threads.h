/* threads.h — the thread registry (threads.c owns it). */
#ifndef JVMPISHIM_THREADS_H
#define JVMPISHIM_THREADS_H

#include "core/shim.h"
#include "events/events.h"
#include <uthash.h>

struct thread_rec {
    JNIEnv *env;                        /* key: the JVMPI thread id */
    jthread ref;                        /* global ref to the java.lang.Thread */
    void *tls[SHIM_MAX_INSTANCES];      /* SetThreadLocalStorage, per agent */
    _Atomic int refs;
    _Atomic uint32_t claimed;           /* bit per instance: THREAD_START being posted */
    _Atomic uint32_t announced;         /* bit per instance: THREAD_START delivered */
    bool end_posted;                    /* THREAD_END already posted (exiting thread) */
    bool mon_ending;                    /* monitors.c: owes no more EXITs (under owed_lock) */
    char *group_name, *parent_name;     /* as THREAD_START said: THREAD_END repeats them
                                           (JDK 17 clears a thread's group before ThreadEnd) */
    /* JVMPI thread control (thrctl.c) */
    bool jvmpi_suspended;               /* suspended by JVMPI SuspendThread(List) */
    jint status_at_suspend;             /* GetThreadStatus answers this while suspended */
    jlong cpu_at_suspend;               /* thread CPU time at the last JVMPI suspension */
    bool has_run;                       /* CPU consumed between the last two suspensions */
    _Atomic int raw_state;              /* blocked in a shim raw monitor: JVMPI status */
    /* The object this thread waits on in Object.wait (JVMTI gives no other way on every
     * JDK: GetCurrentContendedMonitor of a waiting thread is NULL on JDK 25). */
    pthread_mutex_t wait_lock;          /* guards wait_obj and the thrctl fields above */
    jobject wait_obj;                   /* global ref while waiting, else NULL */
    /* Held by a JVMPI suspension while the thread is outside the shim's critical sections
     * (shim.h, shim_guard): threads_suspend_guarded / threads_resume_guarded. */
    struct shim_guard guard;
    bool ended;
    UT_hash_handle hh;
};

struct thread_rec *threads_acquire(JNIEnv *env);   /* NULL if unknown; else release it */
/* Hold r's guard (shim.h) before JVMTI suspends its thread: false if the thread stayed in a
 * critical section of the shim (then it is not suspended now). Release after resuming. */
bool threads_hold_guard(struct thread_rec *r);
void threads_release_guard(struct thread_rec *r);
void threads_release(struct thread_rec *r);
struct thread_rec *threads_self(void);              /* the caller's own (borrowed) */
JNIEnv *threads_env_of(JNIEnv *jni, jthread t);     /* NULL if unknown */

struct thread_snap {
    JNIEnv *env;
    jthread thread;     /* a local ref */
};
size_t threads_snapshot(JNIEnv *jni, struct thread_snap **out);

/* Definition before use: make sure every instance that enabled THREAD_START has been told
 * about the calling thread. Cheap when it has (a thread-local check). False while the
 * thread's Thread object is still being built (its THREAD_START could not name it yet):
 * the caller holds its event back with threads_hold_event. */
bool threads_announce_self(JNIEnv *jni);
/* An event of the current thread while its Thread object is being built (a thread
 * attaching through JNI): kept with the thread's trace at this moment (trace, if the event
 * was held before and has one, else taken now), and posted after its THREAD_START with
 * that trace for GetCallTrace in its handler. False if it cannot be kept (then the caller
 * announces the thread and posts at once). */
bool threads_hold_event(struct instance *inst, const JVMPI_Event *ev,
                        const struct calltrace_snap *trace);
/* Announce the current thread now, whatever its state, and post what was held back. */
void threads_announce_self_now(JNIEnv *jni);
void threads_replay(JNIEnv *jni);

void threads_module_init(void);
void threads_module_callbacks(jvmtiEventCallbacks *cb);
jint threads_module_enable(void);

/* The registry's life: VMInit, JVMTI ThreadStart / ThreadEnd, and the exiting thread's
 * THREAD_END at shutdown. */
jint threads_init_live(JNIEnv *jni);    /* VMInit: calibrate env mapping, learn existing threads */
void threads_on_start(JNIEnv *jni, jthread t);
void threads_on_end(JNIEnv *jni, jthread t);
bool threads_env_is_current(JNIEnv *env);
void threads_post_exiting_thread_end(JNIEnv *jni);

/* What threads/ asks of the areas above it, registered by them at start-up (their module
 * init): the stack of an event held back (methods/calltrace.c), and the
 * MONITOR_CONTENDED_EXITs a thread that ends still owes (monitors/monitors.c). */
void threads_set_snapshots(void (*take_from)(struct calltrace_snap *s, jmethodID from),
                           void (*release)(struct calltrace_snap *s));
void threads_set_owner_ending(void (*fn)(JNIEnv *jni));

#endif
