/* modules.c — the table of contents: which area does what at each phase of the shim's life.
 *
 * One row per area module, in the order every phase runs them; one column per phase
 * (struct area_module, face/face.h). The lifecycle runs each phase over this table at its
 * point of the JVMPI lifecycle: onload, callbacks and enable in Agent_OnLoad (agent.c);
 * live, own_java, onload_done and replay in VMInit (or the attach) around the agents'
 * JVM_OnLoad; data_dump on SIGQUIT; death and stop around JVM_SHUT_DOWN
 * (face/lifecycle.c). To know who does what when, read this table; each hook is one call
 * into its area.
 *
 * The order is the start-up replay's, which HotSpot's order after JVM_OnLoad fixes:
 * objects, then classes, then threads (the worker runs first, since the replay's class
 * announcements may need it, and the agent library's natives are bound before any class
 * of the agent's runs). The other phases do not depend on the order between areas, except
 * where a comment says so below. A few hooks need one line of glue (an option, two calls);
 * those are the small functions above the table.
 */
#include "classes/agent_natives.h"
#include "classes/classes.h"
#include "core/worker.h"
#include "dumps/heapdump.h"
#include "events/record.h"
#include "face/face.h"
#include "memory/memory.h"
#include "methods/bci.h"
#include "methods/methods.h"
#include "modules.h"
#include "monitors/monitors.h"
#include "report/report.h"
#include "threads/threads.h"

/* ---- glue: hooks that are more than one call ---- */

static void memory_on_load(const struct start_choice *c)
{
    (void)c;
    memory_module_init();
    memory_onload(); /* the sampling interval, before any thread allocates */
}

static void memory_callbacks(struct callback_table *t)
{
    memory_module_callbacks(&t->cb);
}

static void memory_own_java(JNIEnv *jni)
{
    memory_preload(jni);
    memory_prime_sampling(jni);
}

/* Before JVM_SHUT_DOWN, whose handler is where agents write their "live" figures: the
 * frees of the last collections (HotSpot posted a collection's frees during it). */
static void memory_on_death(JNIEnv *jni)
{
    memory_deliver_frees(jni, true);
    memory_print_stats();
}

static void memory_on_data_dump(JNIEnv *jni)
{
    memory_deliver_frees(jni, false);
}

static void classes_on_load(const struct start_choice *c)
{
    (void)c;
    classes_module_init();
    /* The recording (events/record.c) names classes through the class table. */
    record_set_class_ref(classes_local_ref);
}

static void classes_callbacks(struct callback_table *t)
{
    classes_module_callbacks(&t->cb);
}

/* Virtual threads as JVMPI threads of their own, where this JVM has them and
 * vthreads=carriers was not asked for (threads/vthreads.c). */
static bool vthreads_active;

static void vthreads_on_load(const struct start_choice *c)
{
    vthreads_active = c->vthreads_own && vthreads_onload();
}

static void vthreads_on_callbacks(struct callback_table *t)
{
    if (!vthreads_active)
        return;
    vthreads_callbacks(&t->vthread_start, &t->vthread_end);
    t->extended = true;
}

static jint vthreads_on_enable(void)
{
    if (vthreads_active)
        vthreads_enable();
    return JNI_OK;
}

/* The statistics line first, then THREAD_END of the exiting thread, which HotSpot posted
 * just before JVM_SHUT_DOWN. */
static void threads_on_death(JNIEnv *jni)
{
    vthreads_print_stats();
    threads_post_exiting_thread_end(jni);
}

static void threads_on_load(const struct start_choice *c)
{
    (void)c;
    threads_module_init();
}

static void threads_callbacks(struct callback_table *t)
{
    threads_module_callbacks(&t->cb);
}

static void threads_live(JNIEnv *jni)
{
    (void)threads_init_live(jni); /* it says what it could not learn itself */
}

static void jniref_on_load(const struct start_choice *c)
{
    (void)c;
    jniref_module_init();
}

static void jniref_live(JNIEnv *jni)
{
    (void)jni;
    jniref_install_always();
}

/* Method events by class rewriting (a second JVMTI environment, methods/bci.c) unless the
 * first agent asked for JVMTI's: set up before the rows, which depend on it. */
static void methods_on_load(const struct start_choice *c)
{
    if (c->bci)
        bci_init();
    methods_module_init();
}

static void methods_callbacks(struct callback_table *t)
{
    methods_module_callbacks(&t->cb);
}

static void methods_own_java(JNIEnv *jni)
{
    bci_start(jni);
}

static void monitors_on_load(const struct start_choice *c)
{
    (void)c;
    monitors_module_init();
}

static void monitors_callbacks(struct callback_table *t)
{
    monitors_module_callbacks(&t->cb);
}

static void dumps_on_load(const struct start_choice *c)
{
    (void)c;
    dumps_module_init();
}

/* The migration report counts virtual threads (where the threads module does not make them
 * threads of their own) and native binds, when report= was given at load. */
static bool report_vthreads, report_natives;

static void report_on_load(const struct start_choice *c)
{
    report_vthreads = c->report && !vthreads_active && report_vthreads_onload();
    report_natives = c->report && report_natives_onload();
}

static void report_callbacks(struct callback_table *t)
{
    if (report_vthreads) {
        report_vthreads_callbacks(&t->vthread_start);
        t->extended = true;
    }
    if (report_natives)
        report_natives_callbacks(&t->cb);
}

static jint report_enable(void)
{
    if (report_vthreads)
        report_vthreads_enable();
    if (report_natives)
        report_natives_enable();
    return JNI_OK;
}

static void worker_replay(JNIEnv *jni)
{
    worker_start(jni);
}

/* ---- the table ---- */

static const struct area_module table[] = {
    /* core/worker.c: the shim's own thread (GC brackets, class linking); first to start,
     * last to need stopping. */
    {.name = "worker", .replay = worker_replay, .stop = worker_stop},
    /* classes/agent_natives.c: the agent library's own JNI natives, bound before its
     * classes run. */
    {.name = "agent natives", .replay = natives_bind_loaded},
    /* memory/: OBJECT_ALLOC / FREE, GC brackets, arenas. */
    {.name = "memory",
     .onload = memory_on_load,
     .callbacks = memory_callbacks,
     .own_java = memory_own_java,
     .onload_done = memory_onload_done,
     .replay = memory_replay,
     .data_dump = memory_on_data_dump,
     .death = memory_on_death},
    /* classes/: the class table, CLASS_LOAD / UNLOAD / LOAD_HOOK. */
    {.name = "classes", .onload = classes_on_load, .callbacks = classes_callbacks,
     .replay = classes_replay},
    /* threads/vthreads.c: virtual threads (JDK 21+); before threads/ only so that its
     * statistics line comes before the exiting thread's THREAD_END. */
    {.name = "virtual threads",
     .onload = vthreads_on_load,
     .callbacks = vthreads_on_callbacks,
     .enable = vthreads_on_enable},
    /* threads/: the registry, THREAD_START / END. Its live hook learns the threads that
     * exist before any agent code runs. */
    {.name = "threads",
     .onload = threads_on_load,
     .callbacks = threads_callbacks,
     .enable = threads_module_enable,
     .live = threads_live,
     .replay = threads_replay,
     .death = threads_on_death},
    /* memory/jniref.c: JNI_GLOBALREF_* and the JNI table interception. */
    {.name = "JNI references", .onload = jniref_on_load, .live = jniref_live},
    /* methods/: METHOD_* by class rewriting or JVMTI, compiled methods, GetCallTrace. */
    {.name = "methods",
     .onload = methods_on_load,
     .callbacks = methods_callbacks,
     .own_java = methods_own_java,
     .replay = methods_replay,
     .stop = bci_stop},
    /* monitors/: monitor events and raw monitors. */
    {.name = "monitors", .onload = monitors_on_load, .callbacks = monitors_callbacks},
    /* dumps/: HEAP_DUMP, OBJECT_DUMP, MONITOR_DUMP (request-only rows); the CDS archive's
     * subgraph classes loaded before any agent runs (archive.c). */
    {.name = "dumps", .onload = dumps_on_load, .own_java = dumps_load_archive_anchors},
    /* report/: the migration report's own JVMTI events; after virtual threads, whose
     * choice it reads. */
    {.name = "report", .onload = report_on_load, .callbacks = report_callbacks,
     .enable = report_enable},
};

void modules_register(void)
{
    lifecycle_set_modules(table, sizeof table / sizeof table[0]);
}
