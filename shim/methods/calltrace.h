/* calltrace.h — stack traces with JVMPI line numbers (calltrace.c). */
#ifndef JVMPISHIM_CALLTRACE_H
#define JVMPISHIM_CALLTRACE_H

#include "core/shim.h"
#include "events/events.h"
#include "threads/threads.h"

/* The id agents know a method by: m, or for an obsolete version of a method (code that runs
 * as it was before methods=bci rewrote its class) the current version's id. Not cached. */
jmethodID calltrace_current_version(jmethodID m);
/* JVMPI line of (method, bci): -3 native, -1 unknown; cached per method and thread. */
jint calltrace_line(jmethodID m, jlocation bci);
/* Some class was redefined, retransformed or unloaded: every thread's cached line tables
 * are dropped at its next call. Async-signal and ObjectFree safe (one atomic add). */
void calltrace_invalidate(void);
/* Fill frames[0..depth) for thread t (NULL = current); returns the count. */
jint calltrace_fill(JNIEnv *jni, jthread t, JVMPI_CallFrame *frames, jint depth);
/* The same for the current thread, from the shallowest frame of method `from` (the whole
 * stack if it is not among the top frames). */
jint calltrace_fill_from(JNIEnv *jni, jmethodID from, JVMPI_CallFrame *frames, jint depth);

/* Snapshots of the current thread's stack (struct calltrace_snap, events/events.h). */
void calltrace_snap_take(struct calltrace_snap *s);
/* The same from the shallowest frame of method `from` down (NULL: the whole stack). */
void calltrace_snap_take_from(struct calltrace_snap *s, jmethodID from);
void calltrace_snap_free(struct calltrace_snap *s);

/* Every live thread held still, with its trace: what the dumps describe. The calling
 * thread is traced but not suspended; threads already suspended stay so afterwards. */
struct world {
    size_t n;
    struct thread_snap *snap;   /* env and thread (local ref) of each */
    JVMPI_CallTrace *traces;    /* one per thread, in snap's order */
    JVMPI_CallFrame *frames;
    bool *held;                 /* suspended by world_hold: its suspension is not its state */
    struct thread_rec **recs;   /* the held threads' records, their guards held (shim.h) */
};
bool world_hold(JNIEnv *jni, struct world *w, jint depth);
void world_resume(struct world *w);          /* let the held threads go (idempotent) */
void world_free(JNIEnv *jni, struct world *w);

#endif
