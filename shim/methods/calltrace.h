/* calltrace.h — GetCallTrace's stack traces with JVMPI line numbers, and the stack
 * snapshots of held events (calltrace.c). */
#ifndef JVMPISHIM_CALLTRACE_H
#define JVMPISHIM_CALLTRACE_H

#include "core/shim.h"
#include "events/events.h"

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

/* The current thread's trace, kept with an event that is delivered later than it happened
 * (an event held back while the thread's Thread object is built, threads/threads.c):
 * inside that event's handler, GetCallTrace on the thread returns these frames, the stack
 * as it was when the event happened, not the stack the thread has moved on to. Taken
 * without announcing classes (the thread may not be announced yet); GetCallTrace announces
 * them when it hands the frames out. */
struct calltrace_snap {
    jint n;
    JVMPI_CallFrame *frames;    /* malloc'ed; NULL when n == 0 */
    /* Or, with n == 0: the live stack from the shallowest frame of this method down (a
     * constructor's METHOD_ENTRY2 delivered once the constructors it called have started,
     * methods.c): what the stack was when that method was entered. */
    jmethodID from_method;
};
/* A snapshot to keep with an event held back (threads_set_snapshots), malloc'ed: a copy of
 * at's frames if at has them, else the current thread's stack from the shallowest frame of
 * at->from_method down (at NULL: the whole stack). NULL if out of memory. */
struct calltrace_snap *calltrace_snap_keep(const struct calltrace_snap *at);
/* Free a snapshot calltrace_snap_keep made, and its frames (NULL: nothing). */
void calltrace_snap_free(struct calltrace_snap *s);

#endif
