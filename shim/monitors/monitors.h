/* monitors.h — the Java monitor events' start-up (monitors.c): their rows and callbacks.
 *
 * MONITOR_CONTENDED_EXIT is synthesized from the contender's side; an owner that ends
 * before its contender wakes posts the EXITs it owes itself, as HotSpot did, through the
 * hook monitors.c registers with threads/ at start-up.
 */
#ifndef JVMPISHIM_MONITORS_H
#define JVMPISHIM_MONITORS_H

#include "core/shim.h"

/* Start-up (modules.c). */
void monitors_module_init(void);
void monitors_module_callbacks(jvmtiEventCallbacks *cb);

#endif
