/* modules.c — the table of contents of start-up: which area module hooks in where.
 *
 * agent.c calls these at fixed points (Agent_OnLoad, VMInit); each area module adds its
 * event rows, JVMTI callbacks and always-on JVMTI events here, so agent.c stays generic.
 */
#include "core/api.h"
#include "classes/classes.h"
#include "events/events.h"
#include "dumps/heapdump.h"
#include "memory/memory.h"
#include "classes/natives.h"
#include "threads/threads.h"
#include "core/worker.h"

void methods_module_init(void);
void methods_module_callbacks(jvmtiEventCallbacks *cb);
void methods_replay(JNIEnv *jni);
void monitors_module_init(void);
void jniref_module_init(void);
jint monitordump_request(struct instance *inst, void *arg);
void monitors_module_callbacks(jvmtiEventCallbacks *cb);

/* Runs after the capabilities were obtained: rows can say what this JVM cannot give. */
void modules_init(void)
{
    threads_module_init();
    classes_module_init();
    methods_module_init();
    monitors_module_init();
    memory_module_init();
    memory_onload();
    jniref_module_init();
    struct event_row mdump = {.kind = EVK_REQUEST_ONLY, .request = monitordump_request};
    events_register(JVMPI_EVENT_MONITOR_DUMP, &mdump);
    struct event_row hdump = {.kind = EVK_REQUEST_ONLY, .request = heapdump_request};
    events_register(JVMPI_EVENT_HEAP_DUMP, &hdump);
    struct event_row odump = {.kind = EVK_REQUEST_ONLY, .request = objectdump_request};
    events_register(JVMPI_EVENT_OBJECT_DUMP, &odump);
}

void modules_callbacks(jvmtiEventCallbacks *cb)
{
    threads_module_callbacks(cb);
    classes_module_callbacks(cb);
    methods_module_callbacks(cb);
    monitors_module_callbacks(cb);
    memory_module_callbacks(cb);
}

jint modules_enable_always(void)
{
    return threads_module_enable();
}

/* Start-up replay. HotSpot's order was objects, then classes, then threads, then
 * JVM_INIT_DONE, so OBJECT_ALLOC named classes before their CLASS_LOAD; here each class is
 * announced before the first object that names it (definition before use), then the
 * remaining classes, then threads; JVM_INIT_DONE follows. */
void replay_startup(JNIEnv *jni)
{
    worker_start(jni);
    natives_bind_loaded(jni);
    memory_replay(jni);
    classes_replay(jni);
    threads_replay(jni);
    methods_replay(jni);
}
