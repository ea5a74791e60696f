/* worker.h — the shim's own background thread for deferred deliveries (worker.c). */
#ifndef JVMPISHIM_WORKER_H
#define JVMPISHIM_WORKER_H

#include "core/shim.h"

typedef void (*worker_fn)(JNIEnv *jni, void *arg);
/* Queue fn(arg) to run on the worker thread. Safe from any thread and from JVMTI
 * callbacks that may not call JNI or JVMTI (ObjectFree): it only takes a leaf mutex and
 * mallocs. Returns false if the worker is gone (after shutdown). */
bool worker_submit(worker_fn fn, void *arg);
void worker_start(JNIEnv *jni);     /* VMInit */
void worker_stop(void);             /* VMDeath: drop what is queued, let the thread end */
bool worker_is_self(void);
/* The worker's JNIEnv (NULL before it runs). The worker is the shim's, as HotSpot's own
 * threads were HotSpot's: no THREAD_START/END, not in dumps' thread lists. */
JNIEnv *worker_env(void);
/* Is t the worker's java.lang.Thread? (Its ThreadStart comes before worker_env is known.) */
bool worker_is_thread(JNIEnv *jni, jobject t);

/* A new, unstarted java.lang.Thread in the "system" group (a local ref), or NULL. */
jthread shim_new_system_thread(JNIEnv *jni, const char *name);

#endif
