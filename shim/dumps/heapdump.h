/* heapdump.h — the dumps area to the shim: its rows of the switchboard (heapdump.c). */
#ifndef JVMPISHIM_HEAPDUMP_H
#define JVMPISHIM_HEAPDUMP_H

/* Registers HEAP_DUMP, OBJECT_DUMP and MONITOR_DUMP, RequestEvent only (the onload hook of
 * the dumps row in modules.c). */
void dumps_module_init(void);

#endif
