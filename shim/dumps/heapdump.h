/* heapdump.h — HEAP_DUMP and OBJECT_DUMP requests (heapdump.c) and the dump checker
 * (dumpcheck.c). */
#ifndef JVMPISHIM_HEAPDUMP_H
#define JVMPISHIM_HEAPDUMP_H

#include "core/shim.h"

jint heapdump_request(struct instance *inst, JNIEnv *jni, void *arg);
jint objectdump_request(struct instance *inst, JNIEnv *jni, void *arg);

/* RequestEvent(MONITOR_DUMP) (monitordump.c). */
jint monitordump_request(struct instance *inst, JNIEnv *jni, void *arg);

#endif
