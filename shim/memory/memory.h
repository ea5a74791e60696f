/* memory.h — the object events (OBJECT_ALLOC: alloc.c; OBJECT_FREE and the GC bracket:
 * gc.c; their start-up: memory.c), JNI refs (jniref.c), the JNIEnv lent to virtual threads
 * (jnienv.c). What the object events' files share among themselves is internal.h. */
#ifndef JVMPISHIM_MEMORY_H
#define JVMPISHIM_MEMORY_H

#include "core/shim.h"

/* Before posting what comes after a collection (a dump an agent asked for,
 * DATA_DUMP_REQUEST, JVM_SHUT_DOWN): post, on this thread, the GC bracket of every
 * collection not bracketed yet, with every free JVMTI has for it, as HotSpot had posted
 * them during the collection. Cheap when nothing is pending. at_exit: also wait for a
 * bracket being posted elsewhere to end. */
void memory_deliver_frees(JNIEnv *jni, bool at_exit);
void memory_replay(JNIEnv *jni);
void memory_preload(JNIEnv *jni); /* VMInit, before JVM_OnLoad: what GC_FINISH calls */
/* The id of obj for an event about to name it; announces its class, and the object itself
 * if OBJECT_ALLOC is on and none was posted for it (definition before use). */
jobjectID memory_id_announced(JNIEnv *jni, jobject obj);
/* OBJECT_ALLOC on since start-up (so an object without its flag is one JVMTI never reported). */
bool memory_alloc_complete(void);
/* Post OBJECT_ALLOC for n objects given as (full tag, class tag, size) triples, whose tags
 * already carry the "allocation posted" flag (heap dumps that tagged them first). */
void memory_announce_tags(JNIEnv *jni, const jlong *triples, size_t n);
/* OBJECT_ALLOCs held back on a thread attaching through JNI until its THREAD_START
 * (threads.c), so that the GC bracket never posts such an object's OBJECT_FREE first.
 * held: before holding inst's copy (false: cannot be tracked, post it now). release_begin:
 * before posting it; false if the object died while held (then neither its OBJECT_ALLOC
 * nor its OBJECT_FREE reaches any agent). release_end: after posting it. */
bool memory_alloc_held(struct instance *inst, jobjectID id);
bool memory_alloc_release_begin(struct instance *inst, jobjectID id);
void memory_alloc_release_end(struct instance *inst, jobjectID id);
/* What the last heap dump saw of each object it listed: class and size, so that a requested
 * OBJECT_ALLOC for one of its ids needs neither the object nor a heap pass (facts.c). A dump
 * begins a set before it reads the heap (NULL: none can be kept), adds each object it lists
 * (its full tag, its class's id, its size), and publishes it before its event (or abandons
 * it if the dump failed); the set it replaces is freed then. memory_facts_was_claimed:
 * the previous set says a request claimed id (its tag must get TAG_ALLOCATED now).
 * memory_gc_count counts collections from the first set on. */
struct mem_facts;
struct mem_facts *memory_facts_begin(void);
void memory_facts_add(struct mem_facts *f, jlong tag, jlong class_id, jlong size);
bool memory_facts_was_claimed(const struct mem_facts *next, jlong id);
void memory_facts_publish(struct mem_facts *f);
void memory_facts_abandon(struct mem_facts *f); /* a dump that failed */
uint64_t memory_gc_count(void);
void memory_print_stats(void);      /* VMDeath, if JVMPISHIM_MEMSTATS is set */
void memory_module_init(void);
void memory_onload(void);         /* Agent_OnLoad: sampling interval 0 before threads exist */
void memory_prime_sampling(JNIEnv *jni); /* VMInit on main, before JVM_OnLoad */
void memory_onload_done(void);    /* every JVM_OnLoad has returned */
void memory_module_callbacks(jvmtiEventCallbacks *cb);

void jniref_install_always(void);   /* VMInit: JNI table with GetJavaVM -> proxy JavaVM */
/* The same calls as the replaced table's, for a call made elsewhere on the agent's behalf:
 * caller is the agent's return address (what the shim calls itself posts nothing). */
jobject jniref_new_global(JNIEnv *env, jobject o, void *caller);
void jniref_delete_global(JNIEnv *env, jobject r, void *caller);
jweak jniref_new_weak(JNIEnv *env, jobject o, void *caller);
void jniref_delete_weak(JNIEnv *env, jweak r, void *caller);
jint jniref_get_java_vm(JNIEnv *env, JavaVM **vm, void *caller);
/* The JNI function table of a JNIEnv lent to a JVMPI thread that has none (a virtual
 * thread's env_id): each function runs on the calling thread's own JNIEnv (jnienv.c). */
const struct JNINativeInterface_ *jnienv_borrowed_table(void);

void jniref_module_init(void);     /* Agent_OnLoad: JNI_GLOBALREF_* rows (jniref.c) */

#endif
