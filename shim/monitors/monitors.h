/* monitors.h — the Java monitor events' one entry point outside monitors.c.
 *
 * MONITOR_CONTENDED_EXIT is synthesized from the contender's side (monitors.c); an owner
 * that ends before its contender wakes posts the EXITs it owes itself, as HotSpot did.
 */
#ifndef JVMPISHIM_MONITORS_H
#define JVMPISHIM_MONITORS_H

#include "core/shim.h"

/* On an ending thread, just before its THREAD_END: post MONITOR_CONTENDED_EXIT for every
 * contention that saw this thread own the monitor and whose contender has not got it yet
 * (the ending thread has released it). env: the ending thread's env_id. */
void monitors_owner_ending(JNIEnv *env);

/* Start-up (modules.c). */
void monitors_module_init(void);
void monitors_module_callbacks(jvmtiEventCallbacks *cb);

#endif
