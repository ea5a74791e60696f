/* agent.c — the entry point: Agent_OnLoad, Agent_OnAttach, Agent_OnUnload and the JVMTI
 * callback table.
 *
 * Agent_OnLoad (also reached by -Xrunjvmpishim, since the shim exports no JVM_OnLoad)
 * parses options, dlopens the legacy agent and takes every JVMTI capability the shim may
 * need: most can only be had in the OnLoad phase. Each further -agentpath of the same
 * library adds an instance to the same jvmtiEnv, so all agents share one id space. The
 * callbacks set here are the lifecycle's own (VMInit, VMDeath, DataDumpRequest); each area
 * adds its own in its module's callbacks hook (modules.c, the table of contents).
 * Nothing below this file includes anything from it.
 */
#include "classes/agent_natives.h"
#include "events/events.h"
#include "report/report.h"
#include "face/face.h"
#include "modules.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The capabilities the shim may need, each with the JVMPI feature that needs it. Most can
 * only be had in the OnLoad phase. Missing ones are not fatal: the events that need them
 * answer JVMPI_NOT_AVAILABLE with a warning (the modules' onload hooks read g_shim.caps). */
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

    if (!jvmti_ok((*g_shim.jvmti)->GetPotentialCapabilities(g_shim.jvmti, &pot),
                  "GetPotentialCapabilities in Agent_OnLoad"))
        return;
    unsigned char *w = (unsigned char *)&want, *p = (unsigned char *)&pot;
    for (size_t i = 0; i < sizeof want; i++)
        w[i] &= p[i];
    if (!jvmti_ok((*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want),
                  "AddCapabilities in Agent_OnLoad")) {
        /* Take them one by one so a single exclusive capability held by another agent
         * (e.g. sampled allocation) does not cost us all the others. */
        for (size_t i = 0; i < sizeof want * 8; i++) {
            if (!(w[i / 8] & (1u << (i % 8))))
                continue;
            jvmtiCapabilities one;
            memset(&one, 0, sizeof one);
            ((unsigned char *)&one)[i / 8] = (unsigned char)(1u << (i % 8));
            jvmti_ignore((*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &one),
                         "AddCapabilities of one: a refused one is missing from the caps read "
                         "below, and its events say so");
        }
    }
    jvmti_ok((*g_shim.jvmti)->GetCapabilities(g_shim.jvmti, &g_shim.caps),
             "GetCapabilities in Agent_OnLoad");
}

static void JNICALL cb_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)thread;
    lifecycle_vm_init(jni);
}

static void JNICALL cb_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    lifecycle_vm_death(jni);
}

static void JNICALL cb_data_dump(jvmtiEnv *jvmti)
{
    (void)jvmti;
    lifecycle_data_dump();
}

/* JDK 21's jvmtiEventCallbacks is JDK 17's, then VirtualThreadStart and VirtualThreadEnd:
 * struct callback_table (face.h) is passed whole to a JVM that knows them. */
_Static_assert(offsetof(struct callback_table, vthread_start) == sizeof(jvmtiEventCallbacks),
               "VirtualThreadStart follows SampledObjectAlloc");
_Static_assert(offsetof(struct callback_table, vthread_end) ==
                   sizeof(jvmtiEventCallbacks) + sizeof(void *),
               "VirtualThreadEnd follows VirtualThreadStart");

/* methods= and vthreads= of the first agent: one mechanism, one answer, for all agents. */
static int methods_choice, vthreads_choice;
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
    jvmti_ok((*g_shim.jvmti)->GetVersionNumber(g_shim.jvmti, &ver),
             "GetVersionNumber in Agent_OnLoad");
    g_shim.jvmti_version = ver;
    g_shim.jdk_major = (ver >> 16) & 0x0fff; /* JVMTI 11+ encodes the JDK major */
    events_init();
    request_capabilities();
    modules_register();
    /* The areas' rows, in the table's order (modules.c): what this JVM cannot give is known
     * now, from the capabilities. */
    struct start_choice choice = {
        .bci = methods_choice != METHODS_JVMTI,
        .vthreads_own = vthreads_choice != VTHREADS_CARRIERS,
        .report = report_at_load,
    };
    lifecycle_onload(&choice);

    /* The larger table (JDK 21's VirtualThreadStart/End) is passed only where a module
     * filled those slots, which it does only where the JVM knows the events. */
    struct callback_table t;
    memset(&t, 0, sizeof t);
    t.cb.VMInit = cb_vm_init;
    t.cb.VMDeath = cb_vm_death;
    t.cb.DataDumpRequest = cb_data_dump;
    lifecycle_callbacks(&t);
    jint size = t.extended ? (jint)offsetof(struct callback_table, extended)
                           : (jint)sizeof t.cb;
    /* Every library of the program may ask the JavaVM for JVMPI (face/clients.c). */
    if (!g_shim.attached)
        clients_install(vm);
    if (!jvmti_ok((*g_shim.jvmti)->SetEventCallbacks(g_shim.jvmti, &t.cb, size),
                  "SetEventCallbacks in Agent_OnLoad"))
        return JNI_ERR;
    jvmtiEvent always[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (!jvmti_ok((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                               always[i], NULL),
                      "enabling VMInit/VMDeath in Agent_OnLoad"))
            return JNI_ERR;
    return lifecycle_enable();
}

/* The first -agentpath's choices, then the one-time set-up with them. */
static jint settle_first(JavaVM *vm, const struct shim_options *opts)
{
    methods_choice = opts->methods;
    vthreads_choice = opts->vthreads;
    report_at_load = opts->report_file != NULL;
    return shim_init_once(vm);
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
    events_instance_published(inst);
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    struct shim_options opts;
    char err[1024];
    if (options_parse(options, &opts, err, sizeof err) != 0) {
        fprintf(stderr, "jvmpishim: error: %s\n", err);
        fprintf(stderr, "jvmpishim: usage: -agentpath:libjvmpishim.so[=[OPTION,...][legacy=AGENT[:AGENT_OPTIONS]]] (=help for all)\n");
        return JNI_ERR;
    }
    if (opts.help) {
        fputs(options_help(), stdout);
        fflush(stdout);
        exit(0);
    }
    bool first = g_shim.jvmti == NULL;
    if (first || opts.log_level_set || opts.log_file != NULL)
        if (!log_configure(opts.log_level, opts.log_file))
            return JNI_ERR;
    if (opts.legacy == NULL) {
        /* No legacy agent: the shim serves the libraries of the program that ask the JavaVM
         * for JVMPI themselves (face/clients.c); its options are theirs. */
        clients_set_options(&opts);
        if (opts.report_file != NULL)
            report_expect_agents(opts.report_file);
        if (first && settle_first(vm, &opts) != JNI_OK)
            return JNI_ERR;
        log_info("no legacy= agent in this -agentpath: JVMPI is served to the libraries that "
                 "ask for it (GetEnv(JVMPI_VERSION_1))");
        options_free(&opts);
        return JNI_OK;
    }
    if (g_shim.ninst >= SHIM_MAX_INSTANCES) {
        log_error("legacy=%s: at most %d legacy agents can run in one JVM", opts.legacy,
                  SHIM_MAX_INSTANCES);
        return JNI_ERR;
    }
    if (first) {
        if (settle_first(vm, &opts) != JNI_OK)
            return JNI_ERR;
    } else {
        if (opts.methods != METHODS_DEFAULT && opts.methods != methods_choice)
            log_warn("legacy=%s: methods= applies to every agent and was settled by the first "
                     "one; ignored here", opts.legacy);
        if (opts.vthreads != VTHREADS_DEFAULT &&
            (opts.vthreads == VTHREADS_CARRIERS) != (vthreads_choice == VTHREADS_CARRIERS))
            log_warn("legacy=%s: vthreads= applies to every agent and was settled by the first "
                     "one; ignored here", opts.legacy);
    }

    return add_instance(&opts);
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
    if (opts.legacy == NULL) {
        fprintf(stderr, "jvmpishim: attach: error: no legacy=AGENT: an attach starts a legacy "
                        "agent (the program's own libraries get JVMPI only from a shim loaded "
                        "at start, -agentpath or -Xrun)\n");
        options_free(&opts);
        return JNI_ERR;
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
    vthreads_choice = opts.vthreads;
    if (shim_init_once(vm) != JNI_OK) {
        lifecycle_attach_abandon("JVMTI set-up failed");
        return JNI_ERR;
    }
    lifecycle_attach_mark_unavailable();
    log_info("attached to a running JVM: starting %s", g_shim.inst[0].resolved_path);
    if (!lifecycle_start(jni)) {
        report_write_all("a refused start (the agent failed to start after attach)");
        lifecycle_attach_abandon("the legacy agent failed to start");
        return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
}
