/* methods.h — posting method and instruction events (methods.c), shared by the JVMTI
 * method-event path and the bytecode-instrumentation path (bci.c). */
#ifndef JVMPISHIM_METHODS_H
#define JVMPISHIM_METHODS_H

#include "core/shim.h"

/* METHOD_ENTRY2 (receiver: self if have_self, else read from the frame at local_depth for
 * an instance method) then METHOD_ENTRY, to the agents that enabled each. */
void methods_post_entry(JNIEnv *jni, jmethodID m, jobject self, bool have_self, jint local_depth);
void methods_post_exit(JNIEnv *jni, jmethodID m);

/* Constructors rewritten with their super(...)/this(...) call bracketed (bci.c): their
 * METHOD_ENTRY2 waits until `this` can be named, so that no thread is stopped to read it.
 * methods_ctor_enter on entry (defers ENTRY2 and ENTRY, or posts ENTRY at once when ENTRY2
 * is off); methods_ctor_super_call just before the super(...)/this(...) call, so the next
 * constructor entered on this thread constructs the same object; methods_ctor_ready with
 * `this` once a constructor's super(...)/this(...) returned, or once an entry probe that
 * passes `this` follows a super call (java.lang.Object.<init>): it posts what waits, in
 * order. Any other event posted meanwhile on the thread posts them first, with receivers
 * read from the frames (JVMTI GetLocalInstance): the rare case of code that runs before a
 * super(...) call. */
void methods_ctor_enter(JNIEnv *jni, jmethodID m);
void methods_ctor_super_call(void);
bool methods_ctor_super_called(void);
void methods_ctor_ready(JNIEnv *jni, jobject self);
/* INSTRUCTION_START, built by the caller; the method's class is announced first. */
void methods_post_instruction(JNIEnv *jni, jmethodID m, JVMPI_Event *ev);

/* Start-up (modules.c, face/lifecycle.c). */
void methods_module_init(void);
void methods_module_callbacks(jvmtiEventCallbacks *cb);
void methods_replay(JNIEnv *jni);

#endif
