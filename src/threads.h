/* threads.h — the thread registry (threads.c owns it). */
#ifndef JVMPISHIM_THREADS_H
#define JVMPISHIM_THREADS_H

#include "shim.h"
#include <uthash.h>

struct thread_rec {
    JNIEnv *env;                        /* key: the JVMPI thread id */
    jthread ref;                        /* global ref to the java.lang.Thread */
    void *tls[SHIM_MAX_INSTANCES];      /* SetThreadLocalStorage, per agent */
    _Atomic int refs;
    bool ended;
    UT_hash_handle hh;
};

struct thread_rec *threads_acquire(JNIEnv *env);   /* NULL if unknown; else release it */
void threads_release(struct thread_rec *r);
struct thread_rec *threads_self(void);              /* the caller's own (borrowed) */
JNIEnv *threads_env_of(JNIEnv *jni, jthread t);     /* NULL if unknown */

struct thread_snap {
    JNIEnv *env;
    jthread thread;     /* a local ref */
};
size_t threads_snapshot(JNIEnv *jni, struct thread_snap **out);

void threads_module_callbacks(jvmtiEventCallbacks *cb);
jint threads_module_enable(void);

#endif
