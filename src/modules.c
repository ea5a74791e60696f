/* modules.c — the table of contents of start-up: which area module hooks in where.
 *
 * agent.c calls these at fixed points (Agent_OnLoad, VMInit); each area module adds its
 * event rows, JVMTI callbacks and always-on JVMTI events here, so agent.c stays generic.
 */
#include "api.h"
#include "threads.h"

void modules_init(void)
{
}

void modules_callbacks(jvmtiEventCallbacks *cb)
{
    threads_module_callbacks(cb);
}

jint modules_enable_always(void)
{
    return threads_module_enable();
}

void replay_startup(JNIEnv *jni)
{
    (void)jni;
}

void threads_post_exiting_thread_end(JNIEnv *jni)
{
    (void)jni;
}
