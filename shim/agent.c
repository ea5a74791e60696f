/* agent.c — the JVMTI agent: Agent_OnLoad, the JVMTI callbacks, and the JVMPI lifecycle
 * (JVM_INIT_DONE, JVM_SHUT_DOWN, DATA_DUMP/RESET_REQUEST, ProfilerExit).
 *
 * Agent_OnLoad (also reached by -Xrunjvmpishim, since the shim exports no JVM_OnLoad)
 * parses options, dlopens the legacy agent and takes every JVMTI capability the shim may
 * need: most can only be had in the OnLoad phase. Each further -agentpath of the same
 * library adds an instance to the same jvmtiEnv, so all agents share one id space.
 *
 * VMInit plays the part of JDK 1.4's late -Xrun initialisation: on the main thread, with
 * JNI available, it calls each agent's JVM_OnLoad, replays the world the agent missed,
 * lifts the start gate and posts JVM_INIT_DONE. VMDeath posts JVM_SHUT_DOWN once on the
 * exiting thread; afterwards the agent hears nothing, and JVMPI calls from its other
 * threads park (lifecycle_call_allowed), as HotSpot's disengage() made them do, so they
 * cannot touch what the agent freed in its shutdown handler.
 */
#include "core/api.h"
#include "classes/natives.h"
#include "methods/bci.h"
#include "events/report.h"
#include "events/events.h"
#include "core/ids.h"
#include "memory/memory.h"
#include "core/worker.h"

#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct shim g_shim = {
    .life_lock = PTHREAD_MUTEX_INITIALIZER,
    .life_cond = PTHREAD_COND_INITIALIZER,
};

static _Thread_local JNIEnv *tl_jni;

/* A thread's blocks (shim_thread_block) are a list under one thread-specific key, whose
 * destructor frees them at thread exit and clears the thread-local pointers they hang on. */
struct thread_block {
    struct thread_block *next;
    void *slot;                 /* the owning thread's pointer to data */
    max_align_t data[];
};
static pthread_key_t block_key;
static pthread_once_t block_once = PTHREAD_ONCE_INIT;
static bool block_key_ok;

static void blocks_free(void *p)
{
    for (struct thread_block *b = p, *next; b != NULL; b = next) {
        next = b->next;
        memset(b->slot, 0, sizeof(void *));
        free(b);
    }
}

static void block_key_make(void)
{
    block_key_ok = pthread_key_create(&block_key, blocks_free) == 0;
}

void *shim_thread_block(void *slot, size_t size)
{
    pthread_once(&block_once, block_key_make);
    struct thread_block *b = block_key_ok ? calloc(1, sizeof *b + size) : NULL;
    if (b != NULL) {
        b->slot = slot;
        b->next = pthread_getspecific(block_key);
        if (pthread_setspecific(block_key, b) != 0) {
            free(b);
            b = NULL;
        }
    }
    static _Atomic bool warned;
    if (b == NULL && !atomic_exchange(&warned, true))
        log_warn("no per-thread block of %zu bytes (out of memory, or no thread-specific key): "
                 "threads go without their caches, more slowly", size);
    return b != NULL ? (void *)b->data : NULL;
}

JNIEnv *shim_current_jni(void)
{
    if (tl_jni != NULL)
        return tl_jni;
    JNIEnv *e = NULL;
    if (g_shim.vm == NULL ||
        (*g_shim.vm)->GetEnv(g_shim.vm, (void **)&e, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    /* Not cached: a thread may detach and its JNIEnv die; ThreadStart sets tl_jni. */
    return e;
}

void shim_set_current_jni(JNIEnv *jni)
{
    tl_jni = jni;
}

/* The capabilities the shim may need, each with the JVMPI feature that needs it. Most can
 * only be had in the OnLoad phase. Missing ones are not fatal: the events that need them
 * answer JVMPI_NOT_AVAILABLE with a warning (modules_init reads g_shim.caps). */
static void request_capabilities(void)
{
    jvmtiCapabilities want, pot;
    memset(&want, 0, sizeof want);
    want.can_tag_objects = 1;                   /* jobjectIDs are tags */
    want.can_get_source_file_name = 1;          /* CLASS_LOAD source_name */
    want.can_get_line_numbers = 1;              /* CLASS_LOAD lines, GetCallTrace */
    want.can_signal_thread = 1;
    want.can_get_current_thread_cpu_time = 1;
    want.can_get_thread_cpu_time = 1;           /* ThreadHasRun */
    want.can_suspend = 1;                       /* SuspendThread and lists */
    want.can_get_monitor_info = 1;              /* MONITOR_CONTENDED_EXIT: the owner */
    want.can_get_owned_monitor_info = 1;
    want.can_get_current_contended_monitor = 1;
    want.can_generate_monitor_events = 1;       /* MONITOR_* events */
    want.can_generate_garbage_collection_events = 1;
    want.can_generate_object_free_events = 1;
    want.can_generate_all_class_hook_events = 1; /* CLASS_LOAD_HOOK */
    want.can_generate_compiled_method_load_events = 1;
    want.can_generate_method_entry_events = 1;
    want.can_generate_method_exit_events = 1;
    want.can_get_bytecodes = 1;
    want.can_maintain_original_method_order = 1; /* CLASS_LOAD methods in class-file order */
    want.can_get_constant_pool = 1;
    want.can_generate_sampled_object_alloc_events = 1; /* OBJECT_ALLOC */
    want.can_generate_vm_object_alloc_events = 1;
    want.can_generate_single_step_events = 1;   /* INSTRUCTION_START */
    want.can_access_local_variables = 1;        /* METHOD_ENTRY2 receivers (GetLocalInstance) */

    jvmtiError err = (*g_shim.jvmti)->GetPotentialCapabilities(g_shim.jvmti, &pot);
    if (!jvmti_ok(err, "GetPotentialCapabilities in Agent_OnLoad"))
        return;
    unsigned char *w = (unsigned char *)&want, *p = (unsigned char *)&pot;
    for (size_t i = 0; i < sizeof want; i++)
        w[i] &= p[i];
    err = (*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want);
    if (!jvmti_ok(err, "AddCapabilities in Agent_OnLoad")) {
        /* Take them one by one so a single exclusive capability held by another agent
         * (e.g. sampled allocation) does not cost us all the others. */
        for (size_t i = 0; i < sizeof want * 8; i++) {
            if (!(w[i / 8] & (1u << (i % 8))))
                continue;
            jvmtiCapabilities one;
            memset(&one, 0, sizeof one);
            ((unsigned char *)&one)[i / 8] = (unsigned char)(1u << (i % 8));
            (void)(*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &one);
        }
    }
    (*g_shim.jvmti)->GetCapabilities(g_shim.jvmti, &g_shim.caps);
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
static bool start_agents(JNIEnv *jni)
{
    shim_set_current_jni(jni);
    g_shim.init_thread = pthread_self();
    atomic_store(&g_shim.phase, PHASE_STARTING);
    /* The report's header, and its signal handlers, before any agent code runs. */
    report_begin();

    threads_init_live(jni);
    jniref_install_always();
    /* The shim's own Java set-up, before any agent listens: what the worker and the probes
     * need later is loaded and linked now, and posts nothing (shim_own_java). */
    shim_own_java_begin();
    memory_preload(jni);
    memory_prime_sampling(jni);
    bci_start(jni);
    shim_own_java_end();
    for (int i = 0; i < g_shim.ninst; i++)
        if (loader_call_onload(&g_shim.inst[i]) != JNI_OK)
            return false;
    memory_onload_done();

    /* HotSpot's order after JVM_OnLoad: objects, classes, threads, then JVM_INIT_DONE;
     * other threads' events wait at the gate until the replay is done. */
    replay_startup(jni);

    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_LIVE);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);

    post_simple(JVMPI_EVENT_JVM_INIT_DONE, jni);
    report_checkpoint("JVM_INIT_DONE delivered");
    return true;
}

static void JNICALL cb_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)thread;
    if (!start_agents(jni))
        refuse_start(jni);
}

static void JNICALL cb_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
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
    /* HotSpot posted a collection's frees during it: those of the last collections come
     * before JVM_SHUT_DOWN, whose handler is where agents write their "live" figures. */
    memory_deliver_frees(jni, true);
    memory_print_stats();
    /* HotSpot posted THREAD_END for the exiting thread, then JVM_SHUT_DOWN. */
    threads_post_exiting_thread_end(jni);
    post_simple(JVMPI_EVENT_JVM_SHUT_DOWN, jni);
    pthread_mutex_lock(&g_shim.life_lock);
    atomic_store(&g_shim.phase, PHASE_DEAD);
    pthread_cond_broadcast(&g_shim.life_cond);
    pthread_mutex_unlock(&g_shim.life_lock);
    watch_exit_handlers();
    worker_stop();
    bci_stop();
    log_debug("JVM_SHUT_DOWN delivered; the agents hear nothing more");
    ids_bad_summary();
    report_write_all("JVM_SHUT_DOWN (the JVM's normal exit)");
}

static void JNICALL cb_data_dump(jvmtiEnv *jvmti)
{
    (void)jvmti;
    JNIEnv *jni = shim_current_jni();
    /* Frees of a collection that has finished come first: the agent writes its figures
     * here (HotSpot posted them during the collection). */
    if (events_any(JVMPI_EVENT_DATA_DUMP_REQUEST))
        memory_deliver_frees(jni, false);
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
    char how[64];
    snprintf(how, sizeof how, "ProfilerExit(%d) from agent %d", (int)code, inst->slot);
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

/* JDK 21's jvmtiEventCallbacks: JDK 17's, then VirtualThreadStart and VirtualThreadEnd. */
struct callbacks21 {
    jvmtiEventCallbacks cb;
    void *vthread_start, *vthread_end;
};
_Static_assert(offsetof(struct callbacks21, vthread_start) == sizeof(jvmtiEventCallbacks),
               "VirtualThreadStart follows SampledObjectAlloc");

/* methods= of the first agent: the mechanism is one for all agents. */
static int methods_choice;
/* report= given to the first agent loaded at start: virtual threads are counted for it. */
static bool report_at_load;

static jint shim_init_once(JavaVM *vm)
{
    g_shim.vm = vm;
    jint rc = (*vm)->GetEnv(vm, (void **)&g_shim.jvmti, JVMTI_VERSION_1_2);
    if (rc != JNI_OK) {
        log_error("GetEnv(JVMTI_VERSION_1_2) failed (%d): this JVM offers no JVMTI", (int)rc);
        return JNI_ERR;
    }
    jint ver = 0;
    (*g_shim.jvmti)->GetVersionNumber(g_shim.jvmti, &ver);
    g_shim.jvmti_version = ver;
    g_shim.jdk_major = (ver >> 16) & 0x0fff; /* JVMTI 11+ encodes the JDK major */
    events_init();
    request_capabilities();
    /* Method events by class rewriting unless the first agent asked for JVMTI's. */
    if (methods_choice != METHODS_JVMTI)
        bci_init();
    modules_init();
    /* Only for a report, which counts them: the capability changes nothing else. */
    bool vthreads = report_at_load && report_vthreads_onload();
    bool natives = report_at_load && report_natives_onload();

    /* JDK 21's table is JDK 17's plus VirtualThreadStart/End after SampledObjectAlloc;
     * the larger size is passed only where the JVM knows the event. */
    struct callbacks21 ext;
    memset(&ext, 0, sizeof ext);
    jvmtiEventCallbacks *cbp = &ext.cb;
    cbp->VMInit = cb_vm_init;
    cbp->VMDeath = cb_vm_death;
    cbp->DataDumpRequest = cb_data_dump;
    modules_callbacks(cbp);
    if (vthreads)
        report_vthreads_callbacks(&ext.vthread_start);
    if (natives)
        report_natives_callbacks(cbp);
    if (!jvmti_ok((*g_shim.jvmti)->SetEventCallbacks(g_shim.jvmti, cbp,
                                                     vthreads ? (jint)sizeof ext : (jint)sizeof ext.cb),
                  "SetEventCallbacks in Agent_OnLoad"))
        return JNI_ERR;
    if (vthreads)
        report_vthreads_enable();
    if (natives)
        report_natives_enable();
    jvmtiEvent always[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (!jvmti_ok((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                               always[i], NULL),
                      "enabling VMInit/VMDeath in Agent_OnLoad"))
            return JNI_ERR;
    return modules_enable_always();
}

/* The next instance: its options, trampolines and proxy JavaVM, and its library opened. */
static jint add_instance(const struct shim_options *opts)
{
    if (opts->check_dumps)
        g_shim.check_dumps = true;
    struct instance *inst = &g_shim.inst[g_shim.ninst];
    inst->slot = g_shim.ninst;
    inst->opts = *opts;
    interface_init(inst);
    loader_init_proxy_vm(inst);
    if (loader_open(inst) != JNI_OK)
        return JNI_ERR;
    natives_scan(inst);
    inst->used = true;
    g_shim.ninst++;
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    struct shim_options opts;
    char err[1024];
    if (options_parse(options, &opts, err, sizeof err) != 0) {
        fprintf(stderr, "jvmpishim: error: %s\n", err);
        fprintf(stderr, "jvmpishim: usage: -agentpath:libjvmpishim.so=[OPTION,...]legacy=AGENT[:AGENT_OPTIONS] (=help for all)\n");
        return JNI_ERR;
    }
    if (opts.help) {
        fputs(options_help(), stdout);
        fflush(stdout);
        exit(0);
    }
    if (g_shim.ninst == 0 || opts.log_level_set || opts.log_file != NULL)
        if (!log_configure(opts.log_level, opts.log_file))
            return JNI_ERR;
    if (g_shim.ninst >= SHIM_MAX_INSTANCES) {
        log_error("legacy=%s: at most %d legacy agents can run in one JVM", opts.legacy,
                  SHIM_MAX_INSTANCES);
        return JNI_ERR;
    }
    if (g_shim.ninst == 0) {
        methods_choice = opts.methods;
        report_at_load = opts.report_file != NULL;
        if (shim_init_once(vm) != JNI_OK)
            return JNI_ERR;
    } else if (opts.methods != METHODS_DEFAULT && opts.methods != methods_choice) {
        log_warn("legacy=%s: methods= applies to every agent and was settled by the first "
                 "one; ignored here", opts.legacy);
    }

    return add_instance(&opts);
}

/* The shim gives up in a running JVM it was attached to: the JVM must go on as if the
 * shim had never come. Nothing is posted any more, threads waiting at the start gate are
 * let go, and agent threads that call in are parked (as after a ProfilerExit). */
static void attach_abandon(const char *why)
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

/* HotSpot unloads an agent library whose Agent_OnAttach fails, but threads may be inside
 * the shim's callbacks, or about to call through the JNI table it replaced, at that
 * moment: so the shim pins itself in memory before it installs anything. */
static bool pin_self(void)
{
    Dl_info di;
    if (dladdr((void *)pin_self, &di) == 0 || di.dli_fname == NULL)
        return false;
    return dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

/* What cannot be had late: JVMTI grants some capabilities only in the OnLoad phase. The
 * events that need them answer JVMPI_NOT_AVAILABLE, saying so. */
static void attach_mark_unavailable(void)
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

/* jcmd <pid> JVMTI.agent_load /abs/libjvmpishim.so "[OPTION,...]legacy=AGENT[:OPTS]": the
 * same options as -agentpath. The agent starts in a consistent world: JVM_OnLoad runs on the
 * attaching thread, the start-up replay announces the threads, classes (and, if it asked for
 * OBJECT_ALLOC, the objects) that exist, then JVM_INIT_DONE. One attach per JVM, and not
 * into a JVM where the shim was loaded at start. */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    struct shim_options opts;
    char err[1024];
    if (options_parse(options, &opts, err, sizeof err) != 0) {
        fprintf(stderr, "jvmpishim: attach: error: %s\n", err);
        return JNI_ERR;
    }
    if (opts.help) {
        fprintf(stderr, "%s", options_help());
        options_free(&opts);
        return JNI_ERR; /* nothing was loaded */
    }
    if (g_shim.ninst > 0 || g_shim.jvmti != NULL) {
        fprintf(stderr, "jvmpishim: attach: error: legacy=%s: the shim is already active in this "
                        "JVM (loaded at start or attached before); one attach per JVM\n",
                opts.legacy);
        options_free(&opts);
        return JNI_ERR;
    }
    if (!log_configure(opts.log_level, opts.log_file)) {
        options_free(&opts);
        return JNI_ERR;
    }
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_2) != JNI_OK || jni == NULL) {
        log_error("attach: the attaching thread has no JNIEnv");
        options_free(&opts);
        return JNI_ERR;
    }
    /* The agent library first: if it cannot be loaded, nothing of the shim is in place. */
    if (!pin_self())
        log_warn("attach: could not pin libjvmpishim.so in memory (%s)", dlerror());
    g_shim.vm = vm;
    g_shim.attached = true;
    if (add_instance(&opts) != JNI_OK)
        return JNI_ERR;
    methods_choice = opts.methods;
    if (shim_init_once(vm) != JNI_OK) {
        attach_abandon("JVMTI set-up failed");
        return JNI_ERR;
    }
    attach_mark_unavailable();
    log_info("attached to a running JVM: starting %s", g_shim.inst[0].resolved_path);
    if (!start_agents(jni)) {
        report_write_all("a refused start (the agent failed to start after attach)");
        attach_abandon("the legacy agent failed to start");
        return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
}
