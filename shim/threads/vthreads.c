/* vthreads.c — virtual threads (JDK 21 and later) as JVMPI threads of their own.
 *
 * JVMPI names a thread by an env_id that stays the same for the thread's life, and agents
 * keep their promises per env_id: a shadow stack, a table, a trace. A virtual thread has no
 * JNIEnv: it runs on a carrier (a ForkJoinPool worker) and may block in the middle of a
 * method and go on on another. With vthreads=threads (the default where the JVM has them)
 * each virtual thread gets a record of its own in the thread registry, whose env_id is the
 * record's jni_table field: a JNIEnv whose functions run on the calling thread's own
 * (memory/jnienv.c), so an agent that calls JNI through the env_id of an event acts on the
 * current thread, as on HotSpot. The record is made at JVMTI VirtualThreadStart (THREAD_START
 * posted there, on the virtual thread), found again at each mount through the virtual
 * thread's JVMTI thread-local storage, and dropped at VirtualThreadEnd (THREAD_END first).
 * While a virtual thread is mounted, its carrier's thread-local shim_vthread_env names it,
 * and the switchboard gives every event the carrier's JNIEnv would carry the virtual
 * thread's env_id instead (events.c); the carrier keeps its own env_id for its own events.
 *
 * Mount and unmount are HotSpot's extension events com.sun.hotspot.events.VirtualThreadMount
 * and VirtualThreadUnmount, found by name (GetExtensionEvents). Measured on JDK 25: a virtual
 * thread gets VirtualThreadStart then Mount before its task runs, Unmount then
 * VirtualThreadEnd after it; both orders are taken (Start sets the carrier's mark too, End
 * reads the record from the thread-local storage). A virtual thread the shim never saw start
 * (running before an attach) gets its record and THREAD_START at its next mount.
 *
 * CPU time: JVMTI has none for a virtual thread (GetThreadCpuTime and
 * GetCurrentThreadCpuTime answer JVMTI_ERROR_UNSUPPORTED_OPERATION on JDK 25). The shim sums
 * its carriers' thread CPU time between mount and unmount, but only once some agent has
 * asked for a virtual thread's CPU time: reading a thread clock costs a system call, which a
 * run that never asks does not pay at every mount. Time before that first question is not
 * counted.
 *
 * The shim is compiled against JDK 17's jvmti.h, which names neither the capability
 * (can_support_virtual_threads, the bit after can_generate_sampled_object_alloc_events) nor
 * the events (VirtualThreadStart 87 and VirtualThreadEnd 88, whose callback slots follow
 * SampledObjectAlloc): they are found from their neighbours, and a JVM without them (JDK 17)
 * offers neither, so nothing changes there.
 */
#include "core/api.h"
#include "events/report.h"
#include "memory/memory.h"
#include "threads/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VTHREAD_START_EVENT 87
#define VTHREAD_END_EVENT 88
#define MOUNT_EVENT_ID "com.sun.hotspot.events.VirtualThreadMount"
#define UNMOUNT_EVENT_ID "com.sun.hotspot.events.VirtualThreadUnmount"

static bool active;
static jint mount_index = -1, unmount_index = -1;
static _Atomic bool cpu_counting; /* some agent asked for a virtual thread's CPU time */
static _Atomic long records_live, records_peak, records_made; /* JVMPISHIM_MEMSTATS */

bool vthreads_on(void)
{
    return active;
}

/* The two extension events' indexes. */
static bool find_mount_events(void)
{
    jint n = 0;
    jvmtiExtensionEventInfo *ev = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetExtensionEvents(g_shim.jvmti, &n, &ev), LOG_INFO,
                     "GetExtensionEvents, looking for the virtual-thread mount events"))
        return false;
    for (jint i = 0; i < n; i++) {
        if (ev[i].id != NULL && strcmp(ev[i].id, MOUNT_EVENT_ID) == 0)
            mount_index = ev[i].extension_event_index;
        else if (ev[i].id != NULL && strcmp(ev[i].id, UNMOUNT_EVENT_ID) == 0)
            unmount_index = ev[i].extension_event_index;
        for (jint k = 0; k < ev[i].param_count; k++)
            jvmti_free(g_shim.jvmti, ev[i].params[k].name);
        jvmti_free(g_shim.jvmti, ev[i].params);
        jvmti_free(g_shim.jvmti, ev[i].id);
        jvmti_free(g_shim.jvmti, ev[i].short_description);
    }
    jvmti_free(g_shim.jvmti, ev);
    return mount_index >= 0 && unmount_index >= 0;
}

bool vthreads_onload(void)
{
    if (!find_mount_events())
        return false;
    if (!shim_take_vthreads_capability())
        return false;
    active = true;
    log_debug("virtual threads: each a JVMPI thread of its own (mount events %d/%d)",
              (int)mount_index, (int)unmount_index);
    return true;
}

/* The JDK's virtual-thread plumbing: java.lang.VirtualThread and jdk.internal.vm.Continuation
 * with their nested classes. Their methods run across a mount: entered on the carrier and
 * left on the virtual thread or the other way round (JDK 21's VirtualThread.run around
 * VirtualThreadStart, JDK 25's VirtualThread.mount, whose exit JVMTI hides while it shows
 * its entry), so their method events would break the nesting of both. name: a class's
 * internal name. */
static bool prefix_of(const char *name, const char *cls)
{
    size_t n = strlen(cls);
    return strncmp(name, cls, n) == 0 && (name[n] == '\0' || name[n] == '$');
}

bool vthreads_plumbing_class(const char *name)
{
    return active && name != NULL &&
           (prefix_of(name, "java/lang/VirtualThread") ||
            prefix_of(name, "jdk/internal/vm/Continuation"));
}

/* The carrier's side of a mount, VirtualThread.runContinuation: it mounts the virtual
 * thread, runs it until it yields or ends, and unmounts it. Around the part where the virtual
 * thread runs (from VirtualThreadStart or the mount event to the unmount event or
 * VirtualThreadEnd) are the mount transitions, where the JDK runs instrumented methods
 * (Thread.isInterrupted, the JavaLangAccess calls of Continuation.run) on the carrier. While a
 * virtual thread is in a transition, JVMTI functions that name any virtual thread wait for it
 * (SuspendThread of one waits for every transition to end), so no agent handler may run then:
 * one that waits for a lock held by a thread inside such a call (a sampler suspending threads
 * under its lock) would never return. JVMTI posts none of its own events there; bci.c gives
 * runContinuation probes that call vthreads_carrier_enter and _leave, and the carrier posts
 * nothing inside it except while the virtual thread is mounted (shim_own_java). The state,
 * per carrier: */
enum { CARRY_NONE, CARRY_SILENT, CARRY_MOUNTED };
static _Thread_local unsigned char tl_carry;

bool vthreads_transition_method(const char *cls, const char *name, const char *desc)
{
    return active && strcmp(cls, "java/lang/VirtualThread") == 0 && strcmp(desc, "()V") == 0 &&
           strcmp(name, "runContinuation") == 0;
}

void vthreads_carrier_enter(void)
{
    if (tl_carry == CARRY_NONE) {
        shim_own_java_begin();
        tl_carry = CARRY_SILENT;
    }
}

void vthreads_carrier_leave(void)
{
    if (tl_carry == CARRY_SILENT)
        shim_own_java_end();
    tl_carry = CARRY_NONE;
}

/* The virtual thread runs (true) or has stopped running (false) on this carrier. */
static void carrier_runs_it(bool runs)
{
    if (runs && tl_carry == CARRY_SILENT) {
        shim_own_java_end();
        tl_carry = CARRY_MOUNTED;
    } else if (!runs && tl_carry == CARRY_MOUNTED) {
        shim_own_java_begin();
        tl_carry = CARRY_SILENT;
    }
}

/* ---- CPU time ---- */

static jlong clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return -1;
    return (jlong)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* r is mounted on the calling carrier from now on: its CPU counts from here. */
static void cpu_mount(struct thread_rec *r)
{
    clockid_t c;
    if (pthread_getcpuclockid(pthread_self(), &c) != 0)
        return;
    jlong now = clock_ns(c);
    pthread_mutex_lock(&r->wait_lock);
    r->vt_carrier_clock = c;
    r->vt_mount_cpu = now;
    pthread_mutex_unlock(&r->wait_lock);
}

static void cpu_unmount(struct thread_rec *r)
{
    pthread_mutex_lock(&r->wait_lock);
    if (r->vt_mount_cpu >= 0) {
        jlong now = clock_ns(r->vt_carrier_clock);
        if (now >= r->vt_mount_cpu)
            r->vt_cpu_ns += now - r->vt_mount_cpu;
        r->vt_mount_cpu = -1;
    }
    pthread_mutex_unlock(&r->wait_lock);
}

jlong vthreads_cpu(struct thread_rec *r)
{
    if (!atomic_load_explicit(&cpu_counting, memory_order_relaxed) &&
        !atomic_exchange(&cpu_counting, true))
        log_debug("virtual threads: CPU time counted from now on");
    /* The caller itself, mounted here since before the first question: count from now. */
    if (r->env == shim_vthread_env && r->vt_mount_cpu < 0)
        cpu_mount(r);
    pthread_mutex_lock(&r->wait_lock);
    jlong ns = r->vt_cpu_ns;
    if (r->vt_mount_cpu >= 0) {
        jlong now = clock_ns(r->vt_carrier_clock);
        if (now >= r->vt_mount_cpu)
            ns += now - r->vt_mount_cpu;
    }
    pthread_mutex_unlock(&r->wait_lock);
    return ns;
}

/* ---- the records ---- */

/* A new record for virtual thread vt, the current thread: in the registry and in vt's JVMTI
 * thread-local storage. Counted for the migration report. */
static struct thread_rec *rec_new(JNIEnv *jni, jthread vt)
{
    struct thread_rec *r = calloc(1, sizeof *r);
    if (r == NULL) {
        log_error("virtual threads: out of memory for a thread record: this virtual thread's "
                  "events carry its carrier's env_id");
        return NULL;
    }
    r->jni_table = jnienv_borrowed_table();
    r->env = (JNIEnv *)&r->jni_table;
    r->vt_mount_cpu = -1;
    pthread_mutex_init(&r->wait_lock, NULL);
    r->ref = (*jni)->NewGlobalRef(jni, vt);
    atomic_store(&r->refs, 1); /* the registry's */
    if (!jvmti_ok_at((*g_shim.jvmti)->SetThreadLocalStorage(g_shim.jvmti, NULL, r), LOG_WARN,
                     "SetThreadLocalStorage of a virtual thread at its start")) {
        if (r->ref != NULL)
            (*jni)->DeleteGlobalRef(jni, r->ref);
        pthread_mutex_destroy(&r->wait_lock);
        free(r);
        return NULL;
    }
    threads_add(r);
    atomic_fetch_add_explicit(&records_made, 1, memory_order_relaxed);
    long live = atomic_fetch_add_explicit(&records_live, 1, memory_order_relaxed) + 1;
    long peak = atomic_load_explicit(&records_peak, memory_order_relaxed);
    while (live > peak && !atomic_compare_exchange_weak(&records_peak, &peak, live))
        ;
    if (report_count(REP_VIRTUAL_THREAD) > 0) {
        report_note(REP_VIRTUAL_THREAD, "(not formatted)");
    } else {
        jvmtiThreadInfo ti;
        memset(&ti, 0, sizeof ti);
        bool named = jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, vt, &ti), LOG_INFO,
                                 "GetThreadInfo of the first virtual thread, for the report");
        report_note(REP_VIRTUAL_THREAD, "virtual thread \"%s\" was a JVMPI thread of its own "
                    "(vthreads=threads), env_id %p", named && ti.name ? ti.name : "?",
                    (void *)r->env);
        if (named) {
            jvmti_free(g_shim.jvmti, ti.name);
            if (ti.thread_group != NULL)
                (*jni)->DeleteLocalRef(jni, ti.thread_group);
            if (ti.context_class_loader != NULL)
                (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
        }
    }
    return r;
}

/* The current virtual thread's record, if the shim made one. */
static struct thread_rec *rec_current(void)
{
    void *p = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadLocalStorage(g_shim.jvmti, NULL, &p), LOG_WARN,
                     "GetThreadLocalStorage of a virtual thread at its mount or end"))
        return NULL;
    return p;
}

/* r (or none) is the virtual thread on this carrier now: its env_id names the carrier's
 * events, its guard (shim.h) covers the carrier's critical sections. */
static void set_mounted(struct thread_rec *r)
{
    events_set_vthread(r != NULL ? r->env : NULL);
    shim_tl_vguard = r != NULL ? &r->guard : NULL;
}

/* r is the virtual thread on this carrier now; its THREAD_START goes out if it has not. */
static void mounted(JNIEnv *jni, struct thread_rec *r, bool first)
{
    carrier_runs_it(true);
    set_mounted(r);
    if (atomic_load_explicit(&cpu_counting, memory_order_relaxed))
        cpu_mount(r);
    if (first && atomic_load(&g_shim.phase) >= PHASE_STARTING)
        threads_announce(jni, r);
}

static void JNICALL cb_vthread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread vt)
{
    (void)jvmti;
    if (shim_quiet())
        return;
    struct thread_rec *r = rec_current(); /* made at a Mount that came first */
    if (r == NULL && (r = rec_new(jni, vt)) == NULL)
        return;
    mounted(jni, r, true);
}

static void JNICALL cb_vthread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread vt)
{
    (void)jvmti; (void)vt;
    struct thread_rec *r = rec_current();
    if (r == NULL) {
        set_mounted(NULL);
        return;
    }
    /* JDK 25 posts this after the last Unmount: the virtual thread is the current thread
     * again for its THREAD_END and whatever the agent does in that handler. */
    set_mounted(r);
    if (!shim_quiet()) {
        threads_post_end(jni, r);
        jvmti_ok_at((*g_shim.jvmti)->SetThreadLocalStorage(g_shim.jvmti, NULL, NULL), LOG_INFO,
                    "SetThreadLocalStorage of a virtual thread at its end");
    }
    set_mounted(NULL);
    carrier_runs_it(false);
    threads_remove(r);
}

static void JNICALL cb_mount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vt)
{
    (void)jvmti;
    struct thread_rec *r = rec_current();
    if (r == NULL) {
        /* Started before the shim was attached: a JVMPI thread from now on. */
        if (shim_quiet() || (r = rec_new(jni, vt)) == NULL)
            return;
        mounted(jni, r, true);
        return;
    }
    mounted(jni, r, false);
}

static void JNICALL cb_unmount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vt)
{
    (void)jvmti; (void)jni; (void)vt;
    JNIEnv *env = shim_vthread_env;
    if (env == NULL)
        return;
    if (atomic_load_explicit(&cpu_counting, memory_order_relaxed))
        cpu_unmount(vthreads_rec(env));
    set_mounted(NULL);
    carrier_runs_it(false);
}

void vthreads_callbacks(void **slot_start, void **slot_end)
{
    if (!active)
        return;
    *slot_start = (void *)(uintptr_t)cb_vthread_start;
    *slot_end = (void *)(uintptr_t)cb_vthread_end;
}

jint vthreads_enable(void)
{
    if (!active)
        return JNI_OK;
    jvmtiEnv *j = g_shim.jvmti;
    bool ok =
        jvmti_ok((*j)->SetExtensionEventCallback(j, mount_index,
                                                 (jvmtiExtensionEvent)(void (*)(void))cb_mount),
                 "setting the VirtualThreadMount callback") &&
        jvmti_ok((*j)->SetExtensionEventCallback(j, unmount_index,
                                                 (jvmtiExtensionEvent)(void (*)(void))cb_unmount),
                 "setting the VirtualThreadUnmount callback") &&
        jvmti_ok((*j)->SetEventNotificationMode(j, JVMTI_ENABLE, (jvmtiEvent)mount_index, NULL),
                 "enabling VirtualThreadMount") &&
        jvmti_ok((*j)->SetEventNotificationMode(j, JVMTI_ENABLE, (jvmtiEvent)unmount_index, NULL),
                 "enabling VirtualThreadUnmount") &&
        jvmti_ok((*j)->SetEventNotificationMode(j, JVMTI_ENABLE,
                                                (jvmtiEvent)VTHREAD_START_EVENT, NULL),
                 "enabling VirtualThreadStart") &&
        jvmti_ok((*j)->SetEventNotificationMode(j, JVMTI_ENABLE,
                                                (jvmtiEvent)VTHREAD_END_EVENT, NULL),
                 "enabling VirtualThreadEnd");
    return ok ? JNI_OK : JNI_ERR;
}

void vthreads_record_freed(void)
{
    atomic_fetch_sub_explicit(&records_live, 1, memory_order_relaxed);
}

void vthreads_print_stats(void)
{
    const char *e = getenv("JVMPISHIM_MEMSTATS");
    if (e == NULL || e[0] == '\0' || e[0] == '0')
        return;
    fprintf(stderr, "jvmpishim: memstats: vthreads mode=%s records_live=%ld records_peak=%ld "
            "records_made=%ld record_bytes=%zu\n", active ? "threads" : "off",
            atomic_load(&records_live), atomic_load(&records_peak), atomic_load(&records_made),
            sizeof(struct thread_rec));
}
