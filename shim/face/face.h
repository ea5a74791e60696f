/* face.h — the JVMPI face: loading an agent, its JVMPI_Interface, and the JVMPI lifecycle.
 *
 * What the entry point (agent.c, modules.c) calls to start, serve and stop the legacy
 * agents. Nothing below the face includes this header.
 */
#ifndef JVMPISHIM_FACE_H
#define JVMPISHIM_FACE_H

#include "core/shim.h"

/* ---- loader.c ---- */
/* Resolve and dlopen the agent of inst->opts; no agent code runs. JNI_OK or JNI_ERR (logged). */
jint loader_open(struct instance *inst);
/* Call JVM_OnLoad with the proxy JavaVM. JNI_OK or JNI_ERR (logged). Needs a live JNIEnv. */
jint loader_call_onload(struct instance *inst);
void loader_init_proxy_vm(struct instance *inst);

/* ---- interface.c ---- */
void interface_init(struct instance *inst);
struct instance *interface_instance_of(const JVMPI_Interface *iface);

/* ---- lifecycle.c ---- */
/* Called at the top of every JVMPI function: after shutdown, calls from threads other
 * than the shutdown thread park here until the process ends (HotSpot did the same);
 * returns false on the shutdown thread after its handler returned (call is refused). */
bool lifecycle_call_allowed(const char *fn);
/* Start the agents (VMInit, or the attaching thread): JVM_OnLoad of each, the replay,
 * JVM_INIT_DONE. False if an agent failed to start (nothing was posted then). */
bool lifecycle_start(JNIEnv *jni);
void lifecycle_vm_init(JNIEnv *jni);    /* lifecycle_start, or refuse the VM's start */
void lifecycle_vm_death(JNIEnv *jni);   /* JVM_SHUT_DOWN */
void lifecycle_data_dump(void);         /* DATA_DUMP_REQUEST and DATA_RESET_REQUEST */
/* After a failed attach: the shim stays inactive; and what cannot be had late. */
void lifecycle_attach_abandon(const char *why);
void lifecycle_attach_mark_unavailable(void);

#endif
