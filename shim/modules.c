/* modules.c — the table of contents of start-up: which area module hooks in where.
 *
 * agent.c calls these at fixed points (Agent_OnLoad); each area module adds its
 * event rows, JVMTI callbacks and always-on JVMTI events here, so agent.c stays generic.
 */
#include "classes/classes.h"
#include "classes/natives.h"
#include "core/api.h"
#include "core/worker.h"
#include "dumps/heapdump.h"
#include "events/events.h"
#include "events/record.h"
#include "memory/memory.h"
#include "methods/methods.h"
#include "modules.h"
#include "monitors/monitors.h"
#include "threads/threads.h"

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
    record_set_class_ref(classes_local_ref);
    dumps_module_init();
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

