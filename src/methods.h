/* methods.h — posting method and instruction events (methods.c), shared by the JVMTI
 * method-event path and the bytecode-instrumentation path (bci.c). */
#ifndef JVMPISHIM_METHODS_H
#define JVMPISHIM_METHODS_H

#include "shim.h"

/* METHOD_ENTRY2 (receiver: self if have_self, else read from the frame at local_depth for
 * an instance method) then METHOD_ENTRY, to the agents that enabled each. */
void methods_post_entry(JNIEnv *jni, jmethodID m, jobject self, bool have_self, jint local_depth);
void methods_post_exit(JNIEnv *jni, jmethodID m);
/* INSTRUCTION_START, built by the caller; the method's class is announced first. */
void methods_post_instruction(JNIEnv *jni, jmethodID m, JVMPI_Event *ev);

#endif
