/* internal.h — what the parts of the object events share, and nothing of memory.h's API.
 *
 * The object events are split by job: alloc.c posts OBJECT_ALLOC (the JVMTI sampling it
 * rests on, the first use of an object JVMTI never reported, RequestEvent), gc.c posts the
 * GC bracket with the OBJECT_FREEs it carries, memory.c holds the start-up side (the rows,
 * the heap walk that announces what existed, the statistics), facts.c keeps what the last
 * heap dump saw of each object, for the OBJECT_ALLOC requests after it. They share the tracked heap,
 * the figures GC_FINISH reports: alloc.c adds to it, gc.c takes from it. Its counters are
 * touched on every allocation and every free, so they are static inline here over one
 * array; everything else crosses files once per collection, sweep, large object or option
 * change. The
 * shared functions are named mem_*.
 */
#ifndef JVMPISHIM_MEMORY_INTERNAL_H
#define JVMPISHIM_MEMORY_INTERNAL_H

#include "core/shim.h"

#include <stdatomic.h>
#include <stddef.h>

/* Tracked heap: objects whose OBJECT_ALLOC was posted and that have not been freed.
 * Counted per stripe slot (an allocating thread uses the slot of its JNIEnv) so that
 * threads allocating at once share no cache line; only GC_FINISH and the statistics sum
 * the slots (alloc.c holds the array). */
struct mem_live_slot {
    _Atomic jlong objects, bytes;
    char pad[64 - 2 * sizeof(jlong)];
};
extern struct mem_live_slot mem_live[STRIPES];

static inline void mem_live_add(int slot, jlong objects, jlong bytes)
{
    atomic_fetch_add_explicit(&mem_live[slot].objects, objects, memory_order_relaxed);
    atomic_fetch_add_explicit(&mem_live[slot].bytes, bytes, memory_order_relaxed);
}

static inline void mem_live_sum(jlong *objects, jlong *bytes)
{
    jlong o = 0, b = 0;
    for (int i = 0; i < STRIPES; i++) {
        o += atomic_load_explicit(&mem_live[i].objects, memory_order_relaxed);
        b += atomic_load_explicit(&mem_live[i].bytes, memory_order_relaxed);
    }
    *objects = o;
    *bytes = b;
}

/* ---- facts.c ---- */
/* GarbageCollectionFinish: the dump's facts no longer hold. */
void mem_facts_gc_finished(void);
/* A requested OBJECT_ALLOC answered from the last dump's facts: its class id and size, and
 * whether this request is the first to announce it (then it is counted in the tracked
 * heap, and its claim kept). False if the last dump did not list id, or a collection ran
 * since. */
bool mem_facts_claim(jlong id, jlong *class_id, jlong *size, bool *claimed_now);
/* ObjectFree of an object without TAG_ALLOCATED: its size if a request claimed it (its
 * free leaves the tracked heap), else -1. */
jlong mem_facts_claimed_size(jlong id);

/* ---- alloc.c ---- */
/* The size of an object too large for its tag, taken out of the table (0 if not there):
 * its free takes it out of the tracked heap. */
jlong mem_big_size_take(jlong id);
/* Sizes held aside for large objects: how many, and the bytes the table takes. */
size_t mem_big_sizes(size_t *bytes);
/* The start-up sweep (memory.c) brackets its heap walk with these: while it runs, and for
 * each thread's first few callbacks after it, an allocation callback checks whether the
 * sweep announced its object already. */
void mem_sweep_begin(void);
void mem_sweep_end(void);
/* The sweep announced every object that existed: from here on, while OBJECT_ALLOC stays
 * on, an object without its flag is one JVMTI never reported. */
void mem_alloc_now_complete(void);
/* Start-up (memory_module_init, memory_module_callbacks): the OBJECT_ALLOC row and its
 * JVMTI callback. */
void mem_alloc_register(void);
void mem_alloc_callbacks(jvmtiEventCallbacks *cb);

/* ---- gc.c ---- */
/* Run the collection that retires every TLAB for OBJECT_ALLOC; its GC bracket is hidden
 * from the agents, as HotSpot hid the one it ran on enabling. Synchronous. */
void mem_hidden_collection(void);
/* The queue of frees waiting for the next bracket: its bytes now and at its peak. */
void mem_free_queue_bytes(size_t *now, size_t *peak);
/* Start-up: the OBJECT_FREE, GC_START and GC_FINISH rows and their JVMTI callbacks. */
void mem_gc_register(void);
void mem_gc_callbacks(jvmtiEventCallbacks *cb);

#endif
