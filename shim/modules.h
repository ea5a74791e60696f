/* modules.h — the table of contents of the shim's areas (modules.c), for the entry point. */
#ifndef JVMPISHIM_MODULES_H
#define JVMPISHIM_MODULES_H

#include "core/shim.h"

/* Hand the table of area modules to the lifecycle (face.h), which runs every phase over
 * it. Called once, before the first phase (Agent_OnLoad or Agent_OnAttach). */
void modules_register(void);

#endif
