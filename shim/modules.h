/* modules.h — start-up: which area hooks in where (modules.c), for the entry point only. */
#ifndef JVMPISHIM_MODULES_H
#define JVMPISHIM_MODULES_H

#include "core/shim.h"

/* Each area module's start-up hooks, called by agent.c in this order. */
void modules_init(void);                         /* register event rows (Agent_OnLoad) */
void modules_callbacks(jvmtiEventCallbacks *cb); /* fill its JVMTI callbacks */
jint modules_enable_always(void);                /* JVMTI events the shim always needs */

#endif
