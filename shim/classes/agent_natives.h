/* agent_natives.h — binding the agent library's own JNI natives (agent_natives.c). */
#ifndef JVMPISHIM_AGENT_NATIVES_H
#define JVMPISHIM_AGENT_NATIVES_H

#include "core/shim.h"

/* Agent_OnLoad, after the agent library was opened: note its exported Java_* functions. */
void natives_scan(struct instance *inst);
/* ClassPrepare: bind the class's natives that an agent library exports. */
void natives_class_prepare(JNIEnv *jni, jclass cls);
/* VMInit (or attach): the same for the classes already prepared. */
void natives_bind_loaded(JNIEnv *jni);

#endif
