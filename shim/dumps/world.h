/* world.h — every live thread held still, with its trace: what the heap and monitor dumps
 * describe (world.c). */
#ifndef JVMPISHIM_DUMPS_WORLD_H
#define JVMPISHIM_DUMPS_WORLD_H

#include "core/shim.h"
#include "threads/threads.h"

/* The calling thread is traced but not suspended; threads already suspended stay so
 * afterwards. */
struct world {
    size_t n;
    struct thread_snap *snap;   /* env and thread (local ref) of each */
    JVMPI_CallTrace *traces;    /* one per thread, in snap's order */
    JVMPI_CallFrame *frames;
    bool *held;                 /* suspended by world_hold: its suspension is not its state */
    struct thread_rec **recs;   /* the held threads' records, their guards held (shim.h) */
};
/* Suspend every other live thread and trace each to depth frames. False if out of memory
 * (w is then still to be freed). */
bool world_hold(JNIEnv *jni, struct world *w, jint depth);
void world_resume(struct world *w);          /* let the held threads go (idempotent) */
void world_free(JNIEnv *jni, struct world *w);

#endif
