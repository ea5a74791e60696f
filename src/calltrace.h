/* calltrace.h — stack traces with JVMPI line numbers (calltrace.c). */
#ifndef JVMPISHIM_CALLTRACE_H
#define JVMPISHIM_CALLTRACE_H

#include "shim.h"

/* JVMPI line of (method, bci): -3 native, -1 unknown; cached per method. */
jint calltrace_line(jmethodID m, jlocation bci);
/* Fill frames[0..depth) for thread t (NULL = current); returns the count. */
jint calltrace_fill(JNIEnv *jni, jthread t, JVMPI_CallFrame *frames, jint depth);

#endif
