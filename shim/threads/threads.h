/* threads.h — the thread registry (threads.c owns it), JVMPI thread control's view of a
 * record (thrctl.c), and virtual threads as JVMPI threads (vthreads.c). */
#ifndef JVMPISHIM_THREADS_H
#define JVMPISHIM_THREADS_H

#include "core/shim.h"
#include "events/events.h"
#include <stddef.h>
#include <time.h>
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
    /* A virtual thread (vthreads.c): its env_id is &jni_table, a JNIEnv whose functions run
     * on the calling thread's own JNIEnv (memory/jnienv.c); NULL for a platform thread. */
    const struct JNINativeInterface_ *jni_table;
    /* The CPU time its carriers spent while it was mounted, counted once an agent asks for
     * CPU time (vthreads.c): ns so far, and the carrier's clock at this mount (-1: this
     * mount is not counted). Written by the carrier it is mounted on, under wait_lock. */
    jlong vt_cpu_ns, vt_mount_cpu;
    clockid_t vt_carrier_clock;
    /* monitors.c: this thread's contention owed a MONITOR_CONTENDED_EXIT and the start of
     * its Object.wait, kept per JVMPI thread (a virtual thread that blocks may go on on
     * another carrier). */
    void *mon_owed;
    struct timespec mon_wait_start;
    UT_hash_handle hh;
};

struct thread_rec *threads_acquire(JNIEnv *env);   /* NULL if unknown; else release it */
/* Hold r's guard (shim.h) before JVMTI suspends its thread: false if the thread stayed in a
 * critical section of the shim (then it is not suspended now). Release after resuming. */
bool threads_hold_guard(struct thread_rec *r);
void threads_release_guard(struct thread_rec *r);
void threads_release(struct thread_rec *r);
/* The caller's own (borrowed): the mounted virtual thread's on a carrier that carries one. */
struct thread_rec *threads_self(void);
/* The env_id of thread t (a virtual thread's too), or NULL if unknown; not validated. */
JNIEnv *threads_env_of(JNIEnv *jni, jthread t);

struct thread_snap {
    JNIEnv *env;
    jthread thread;     /* a local ref */
};
size_t threads_snapshot(JNIEnv *jni, struct thread_snap **out);

void threads_replay(JNIEnv *jni);

void threads_module_init(void);
void threads_module_callbacks(jvmtiEventCallbacks *cb);
jint threads_module_enable(void);

/* The registry's life outside the JVMTI ThreadStart / ThreadEnd callbacks (threads.c):
 * VMInit, and the exiting thread's THREAD_END at shutdown. */
jint threads_init_live(JNIEnv *jni);    /* VMInit: calibrate env mapping, learn existing threads */
/* env names the calling JVMPI thread (shim_current_env: a mounted virtual thread, else the
 * thread's own JNIEnv). */
bool threads_env_is_current(JNIEnv *env);
/* env names the calling thread or, while it carries a virtual thread, that carrier: the
 * threads a JVMPI function must not suspend. */
bool threads_env_is_self(JNIEnv *env);
void threads_post_exiting_thread_end(JNIEnv *jni);

/* ---- virtual threads (vthreads.c), JDK 21 and later, vthreads=threads ----
 * Agent_OnLoad: take can_support_virtual_threads and find the mount and unmount extension
 * events; false if this JVM has not all of them (a JVM before JDK 21: nothing changes).
 * Then the VirtualThreadStart/End callbacks into their slots (JDK 21's table: the two after
 * SampledObjectAlloc), and the events switched on after SetEventCallbacks. */
bool vthreads_onload(void);
void vthreads_callbacks(void **slot_start, void **slot_end);
jint vthreads_enable(void);
bool vthreads_on(void);
/* The record of a virtual thread's env_id, valid while the env_id is (borrowed). */
static inline struct thread_rec *vthreads_rec(JNIEnv *env)
{
    return (struct thread_rec *)((char *)env - offsetof(struct thread_rec, jni_table));
}
/* The class (internal name) is the JDK's virtual-thread plumbing, whose methods post no
 * method events while virtual threads are JVMPI threads (vthreads.c says why). */
bool vthreads_plumbing_class(const char *name);
/* Method `name` `desc` of class `cls` (internal names) is the carrier's side of a mount
 * (VirtualThread.runContinuation), whose transitions must post nothing (vthreads.c says
 * why): bci.c gives it probes that call vthreads_carrier_enter at its entry and
 * vthreads_carrier_leave at its exit, a throw included. */
bool vthreads_transition_method(const char *cls, const char *name, const char *desc);
void vthreads_carrier_enter(void);
void vthreads_carrier_leave(void);
/* CPU time of virtual thread r in ns (its carriers' while it was mounted), counted from the
 * first call of any agent that asks for CPU time; -1 if this JVM cannot say. */
jlong vthreads_cpu(struct thread_rec *r);

/* JVMPISHIM_MEMSTATS (at shutdown, with memory_print_stats): the virtual threads' records
 * alive now, at most, and made in all, and the size of one. */
void vthreads_print_stats(void);
void vthreads_record_freed(void);   /* threads.c, as a virtual thread's record is freed */

/* For vthreads.c: the registry's own operations on a record it built. */
void threads_add(struct thread_rec *r);             /* into the registry, which holds one ref */
void threads_remove(struct thread_rec *r);          /* out of it: freed with the last ref */
void threads_announce(JNIEnv *jni, struct thread_rec *r);  /* THREAD_START to who wants it */
void threads_post_end(JNIEnv *jni, struct thread_rec *r);  /* THREAD_END, on that thread */

/* What threads/ asks of the areas above it, registered by them at start-up (their module
 * init): the stack of an event held back (methods/calltrace.c: take returns a snapshot
 * threads/ keeps by pointer, or NULL; release frees it), and the
 * MONITOR_CONTENDED_EXITs a thread that ends still owes (monitors/monitors.c). */
void threads_set_snapshots(struct calltrace_snap *(*take)(const struct calltrace_snap *at),
                           void (*release)(struct calltrace_snap *s));
void threads_set_owner_ending(void (*fn)(JNIEnv *env)); /* env: the ending thread's env_id */

#endif
