/* heapdump.h — the dumps area to the shim: its rows of the switchboard (heapdump.c). */
#ifndef JVMPISHIM_HEAPDUMP_H
#define JVMPISHIM_HEAPDUMP_H

#include <jni.h>

/* Registers HEAP_DUMP, OBJECT_DUMP and MONITOR_DUMP, RequestEvent only (the onload hook of
 * the dumps row in modules.c). */
void dumps_module_init(void);

/* Loads the classes that anchor the CDS archive's heap subgraphs, so that no dormant
 * archived object a dump or the id index reaches holds objects of a class without a loader
 * (archive.c; the own_java hook of the dumps row, before any agent runs). */
void dumps_load_archive_anchors(JNIEnv *jni);

#endif
