/* lifecycle.c — the JVMPI lifecycle: JVM_INIT_DONE, JVM_SHUT_DOWN, DATA_DUMP/RESET_REQUEST,
 * ProfilerExit, and what is refused or parked after shutdown.
 *
 * VMInit plays the part of JDK 1.4's late -Xrun initialisation: on the main thread, with
 * JNI available, lifecycle_start calls each agent's JVM_OnLoad, replays the world the agent
 * missed, lifts the start gate and posts JVM_INIT_DONE (on an attach, on the attaching
 * thread). VMDeath posts JVM_SHUT_DOWN once on the exiting thread; afterwards the agent
 * hears nothing, and JVMPI calls from its other threads park (lifecycle_call_allowed), as
 * HotSpot's disengage() made them do, so they cannot touch what the agent freed in its
 * shutdown handler. The entry point (agent.c) calls in here from its JVMTI callbacks.
 *
 * What each area does at each phase is not written here: modules.c's table (struct
 * area_module, face.h) says it, and this file runs each phase over the table in its order,
 * at the point of the JVMPI lifecycle the phase belongs to.
 */
#include "core/ids.h"
#include "events/events.h"
#include "report/report.h"
#include "face/face.h"
#include "methods/bci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the area modules' phases ---- */

static const struct area_module *modules;
static size_t nmodules;

void lifecycle_set_modules(const struct area_module *mods, size_t n)
{
    modules = mods;
    nmodules = n;
}

/* Run hook `h` of every module that has one, in table order. */
#define EACH_MODULE(h, ...)                                                                 \
    do {                                                                                    \
        for (size_t i_ = 0; i_ < nmodules; i_++)                                            \
            if (modules[i_].h != NULL)                                                      \
                modules[i_].h(__VA_ARGS__);                                                 \
    } while (0)

void lifecycle_onload(const struct start_choice *c)
{
    EACH_MODULE(onload, c);
}

void lifecycle_callbacks(struct callback_table *t)
{
    EACH_MODULE(callbacks, t);
}

jint lifecycle_enable(void)
{
    for (size_t i = 0; i < nmodules; i++)
        if (modules[i].enable != NULL && modules[i].enable() != JNI_OK) {
            log_error("%s: the JVMTI events it always needs could not be enabled",
                      modules[i].name);
            return JNI_ERR;
        }
    return JNI_OK;
}

/* End the VM with status code through Runtime.halt: the VM's own orderly exit path,
 * without shutdown hooks (callers set profiler_exit first, so VMDeath posts no
 * JVM_SHUT_DOWN, as HotSpot posted none on ProfilerExit); _exit if that fails. */
static _Noreturn void halt_vm(JNIEnv *jni, jint code)
{
    if (jni != NULL) {
        jclass rt = (*jni)->FindClass(jni, "java/lang/Runtime");
        jmethodID get = rt ? (*jni)->GetStaticMethodID(jni, rt, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
        jmethodID halt = rt ? (*jni)->GetMethodID(jni, rt, "halt", "(I)V") : NULL;
        jobject r = get ? (*jni)->CallStaticObjectMethod(jni, rt, get) : NULL;
        if ((*jni)->ExceptionCheck(jni)) { /* JNI allows no other call with one pending */
            (*jni)->ExceptionClear(jni);
            r = NULL;
        }
        if (r != NULL && halt != NULL)
            (*jni)->CallVoidMethod(jni, r, halt, code);
    }
    _exit(code);
}

/* The thread that runs exit()'s handlers: there the agent's atexit() handlers and library
 * destructors run after JVM_SHUT_DOWN, and a JVMPI call they make must be refused, not
 * parked: parking that thread would stop the process from ever ending. Known once our own
 * handler runs, which is registered when the agents go dead, so that it runs before any
 * handler an agent registered earlier (exit() runs them last-in, first-out). */
static _Atomic int exit_handlers_running;
static pthread_t exit_handlers_thread;

static void note_exit_handlers(void)
{
    exit_handlers_thread = pthread_self();
    atomic_store(&exit_handlers_running, 1);
}

static void watch_exit_handlers(void)
{
    static _Atomic int registered;
    if (!atomic_exchange(&registered, 1))
        atexit(note_exit_handlers);
}

/* A set-up error found after Agent_OnLoad (JVM_OnLoad failed, no NotifyEvent): the user
 * asked for a profiler and would not get one, so the VM must not run the program. This is
 * as close to "refuse VM start" as VMInit allows: halt with status 1, the status java
 * gives when VM creation fails. */
static void refuse_start(JNIEnv *jni)
{
    log_error("the JVM will not run without the profiler it was asked to load: exiting");
    report_write_all("a refused start (the agent failed to start)");
    fflush(stdout);
    fflush(stderr);
    log_vm_ending();
    atomic_store(&g_shim.profiler_exit, 1);
    atomic_store(&g_shim.phase, PHASE_DEAD);
    watch_exit_handlers();
    halt_vm(jni, 1);
}

static void post_simple(jint type, JNIEnv *jni)
{
    JVMPI_Event ev;
    event_init(&ev, type, jni);
    event_post_all(&ev);
}

/* Start the agents: JVM_OnLoad of each, the replay of what exists, then JVM_INIT_DONE.
 * Runs on the VMInit thread, or on the attaching thread when loaded into a running JVM.
 * Returns false if an agent failed to start (nothing has been posted then). */
bool lifecycle_start(JNIEnv *jni)
{
    shim_set_current_jni(jni);
    g_shim.init_thread = pthread_self();
    atomic_store(&g_shim.phase, PHASE_STARTING);
    /* The report's header, and its signal handlers, before any agent code runs. */
    report_begin();

    EACH_MODULE(live, jni);
    /* The shim's own Java set-up, before any agent listens: what the worker and the probes
     * need later is loaded and linked now, and posts nothing (shim_own_java). */
    shim_own_java_begin();
    EACH_MODULE(own_java, jni);
    shim_own_java_end();
    for (int i = 0; i < g_shim.ninst; i++)
        if (!g_shim.inst[i].client && loader_call_onload(&g_shim.inst[i]) != JNI_OK)
            return false; /* a library that asked for JVMPI itself has no JVM_OnLoad */
    EACH_MODULE(onload_done);

    /* The start-up replay. HotSpot's order after JVM_OnLoad was objects, then classes, then
     * threads, then JVM_INIT_DONE, so OBJECT_ALLOC named classes before their CLASS_LOAD;
     * the table's order gives each class before the first object that names it (definition
     * before use), then the remaining classes, then threads. Other threads' events wait at
     * the gate until it is done. */
    EACH_MODULE(replay, jni);

    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_LIVE);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);

    post_simple(JVMPI_EVENT_JVM_INIT_DONE, jni);
    report_checkpoint("JVM_INIT_DONE delivered");
    return true;
}

/* The shim starts once: at its VMInit, or earlier, when a library asks the JavaVM for JVMPI
 * from another agent's VMInit that the JVM runs first (face/clients.c). */
static _Atomic int vm_init_started;

void lifecycle_vm_init(JNIEnv *jni)
{
    if (atomic_exchange(&vm_init_started, 1))
        return;
    if (!lifecycle_start(jni))
        refuse_start(jni);
}

void lifecycle_vm_death(JNIEnv *jni)
{
    log_vm_ending();
    if (atomic_load(&g_shim.profiler_exit))
        return;
    int expect = PHASE_LIVE;
    g_shim.shutdown_thread = pthread_self();
    if (!atomic_compare_exchange_strong(&g_shim.phase, &expect, PHASE_SHUTTING)) {
        /* never got live (or already shutting down): nothing to tell the agents */
        report_write_all("the JVM's exit before JVM_INIT_DONE");
        return;
    }
    /* From here only this thread delivers events. Deliveries other threads had already
     * begun may finish first (bounded: a handler blocked on this thread must not hang the
     * exit), so the agent's shutdown handler does not race its own event handlers. */
    for (int i = 0; i < 400 && (events_inflight() > 0 || gc_bracket_open()); i++) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* What the areas owe before JVM_SHUT_DOWN (modules.c): the frees of the last
     * collections, then THREAD_END of the exiting thread, as HotSpot posted them. Requests
     * other threads make are answered, on them, until its handler has returned: HotSpot's
     * calls worked until disengage() (an agent's sampler runs until its shutdown handler
     * stops it, and that handler may wait for the lock the sampler holds around a request). */
    EACH_MODULE(death, jni);
    post_simple(JVMPI_EVENT_JVM_SHUT_DOWN, jni);
    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_DEAD);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);
    /* A request already past the phase check is delivered before the shim's teardown
     * (bounded: a handler blocked for ever must not hang the exit); later calls park. */
    for (int i = 0; i < 400 && events_inflight() > 0; i++) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    watch_exit_handlers();
    EACH_MODULE(stop);
    log_debug("JVM_SHUT_DOWN delivered; the agents hear nothing more");
    ids_bad_summary();
    report_write_all("JVM_SHUT_DOWN");
}

void lifecycle_data_dump(void)
{
    JNIEnv *jni = shim_current_jni();
    /* What the areas owe first (modules.c): the frees of a collection that has finished,
     * since the agent writes its figures here (HotSpot posted them during the collection). */
    if (events_any(JVMPI_EVENT_DATA_DUMP_REQUEST))
        EACH_MODULE(data_dump, jni);
    /* HotSpot posted both, back to back, for one SIGQUIT. */
    post_simple(JVMPI_EVENT_DATA_DUMP_REQUEST, jni);
    post_simple(JVMPI_EVENT_DATA_RESET_REQUEST, jni);
}

bool lifecycle_call_allowed(const char *fn)
{
    if (atomic_load(&g_shim.phase) < PHASE_DEAD)
        return true;
    if ((atomic_load(&g_shim.profiler_exit) == 0 &&
         pthread_equal(pthread_self(), g_shim.shutdown_thread)) ||
        (atomic_load(&exit_handlers_running) &&
         pthread_equal(pthread_self(), exit_handlers_thread))) {
        log_info("%s called after JVM_SHUT_DOWN returned: refused", fn);
        return false;
    }
    /* Another thread of the agent, after shutdown: park it until the process ends, as
     * HotSpot did, so it cannot run into state the agent freed in its shutdown handler.
     * It sleeps in native code, so it does not hold up the VM's exit. */
    log_debug("%s called after JVM_SHUT_DOWN from another thread: parked until exit", fn);
    for (;;)
        pause();
}

void jvmpi_ProfilerExit(struct instance *inst, jint code)
{
    log_info("agent %d: ProfilerExit(%d)", inst->slot, (int)code);
    /* Called inside JVM_SHUT_DOWN, on the thread that runs VMDeath: the VM is in its exit
     * sequence already, and Runtime.halt would wait for that sequence to end, on this very
     * thread (before_exit waits while another call is running it): the VM would hang. */
    bool in_vm_death = atomic_load(&g_shim.phase) == PHASE_SHUTTING &&
                       pthread_equal(pthread_self(), g_shim.shutdown_thread);
    /* HotSpot ran vm_exit(code) without before_exit: no THREAD_END, no JVM_SHUT_DOWN. */
    log_vm_ending();
    atomic_store(&g_shim.profiler_exit, 1);
    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_DEAD);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);
    watch_exit_handlers();
    char how[160];
    snprintf(how, sizeof how, "ProfilerExit(%d) from agent %d: the JVM halted at once (no "
                            "shutdown hooks, no JVM_SHUT_DOWN)", (int)code, inst->slot);
    report_write_all(how);
    fflush(stdout);
    fflush(stderr);
    if (in_vm_death)
        exit(code); /* as vm_exit ended: atexit handlers run, stdio is flushed */
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL &&
        (*g_shim.vm)->AttachCurrentThreadAsDaemon(g_shim.vm, (void **)&jni, NULL) != JNI_OK)
        jni = NULL;
    halt_vm(jni, code);
}

/* The shim gives up in a running JVM it was attached to: the JVM must go on as if the
 * shim had never come. Nothing is posted any more, threads waiting at the start gate are
 * let go, and agent threads that call in are parked (as after a ProfilerExit). */
void lifecycle_attach_abandon(const char *why)
{
    log_error("attach: %s; the shim stays inactive in this JVM", why);
    atomic_store(&g_shim.profiler_exit, 1);
    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_DEAD);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);
    if (g_shim.jvmti == NULL)
        return;
    /* No more callbacks, the heap sampling interval back to the JVM's default, and the
     * capabilities (sampled allocation is exclusive) free for other agents. */
    jvmtiEventCallbacks none;
    memset(&none, 0, sizeof none);
    jvmtiEnv *j = g_shim.jvmti;
    jvmti_ok_at((*j)->SetEventCallbacks(j, &none, sizeof none), LOG_WARN,
                "clearing the callbacks after a failed attach");
    if (g_shim.caps.can_generate_sampled_object_alloc_events)
        jvmti_ok_at((*j)->SetHeapSamplingInterval(j, 512 * 1024), LOG_WARN,
                    "restoring the heap sampling interval after a failed attach");
    jvmti_ok_at((*j)->RelinquishCapabilities(j, &g_shim.caps), LOG_WARN,
                "relinquishing capabilities after a failed attach");
}

/* What cannot be had late: JVMTI grants some capabilities only in the OnLoad phase. The
 * events that need them answer JVMPI_NOT_AVAILABLE, saying so. */
void lifecycle_attach_mark_unavailable(void)
{
    static const char late[] = "because JVMTI grants its capability only at JVM start and the "
                               "shim was attached to a running JVM";
    /* Method events come from class rewriting, which works late too; only without it do
     * they need the OnLoad-only JVMTI method-event capabilities. */
    if (!bci_available()) {
        if (!g_shim.caps.can_generate_method_entry_events) {
            events_set_unavailable(JVMPI_EVENT_METHOD_ENTRY, late);
            events_set_unavailable(JVMPI_EVENT_METHOD_ENTRY2, late);
        }
        if (!g_shim.caps.can_generate_method_exit_events)
            events_set_unavailable(JVMPI_EVENT_METHOD_EXIT, late);
        if (!g_shim.caps.can_access_local_variables)
            events_set_unavailable(JVMPI_EVENT_METHOD_ENTRY2, late);
    }
    if (!g_shim.caps.can_get_owned_monitor_info || !g_shim.caps.can_get_current_contended_monitor)
        events_set_unavailable(JVMPI_EVENT_MONITOR_DUMP, late);
}
