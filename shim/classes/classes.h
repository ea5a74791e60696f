/* classes.h — the class table, CLASS_LOAD / CLASS_UNLOAD / CLASS_LOAD_HOOK and GetMethodClass,
 * as other folders call them (classes/internal.h says which file holds what). */
#ifndef JVMPISHIM_CLASSES_H
#define JVMPISHIM_CLASSES_H

#include "core/shim.h"

/* The JVMTI native-method prefix of natives that got a Java wrapper (methods/bci.c): the
 * class table, the natives binder and call traces see through it. */
#define BCI_NATIVE_PREFIX "$$jvmpi$$"

/* The id of a class, making sure every instance that enabled CLASS_LOAD has been told
 * about it first (definition before use). For events that carry a class id. Inside a JVMPI
 * call (a dump or a request the agent made, GetCallTrace, GetMethodClass) it waits for no
 * other thread and links nothing: a class being defined or announced on another thread, or
 * not yet linked, gets its id at once and its CLASS_LOAD from that thread or at its next
 * use, as on HotSpot, whose dumps and call traces could name classes still in their
 * CLASS_LOAD (shim.h, shim_in_call). */
jobjectID classes_id_announced(JNIEnv *jni, jclass cls);
/* The same, and whether every instance listening for CLASS_LOAD now has been told about the
 * class (false while an announcement was left to a later use). True stays true for the
 * class while classes_announce_gen() and g_shim.ninst do not change: an agent switching
 * CLASS_LOAD on, or a new instance, may need the class announced again at its next use. */
jobjectID classes_id_announced_all(JNIEnv *jni, jclass cls, bool *all);
uint64_t classes_announce_gen(void);
/* Link cls if it is not yet (as reflection would: no static initializer runs), so that its
 * members can be listed when an agent asks for its CLASS_LOAD from inside a JVMPI call, where
 * it could not be linked; inside a call the worker links it in the background. */
void classes_prepare(JNIEnv *jni, jclass cls);
/* The id of a class with a table record, announcing nothing (arrays, unprepared classes). */
jobjectID classes_register(JNIEnv *jni, jclass cls);
/* Same for the class declaring a method; returns the class id. */
jobjectID classes_method_announced(JNIEnv *jni, jmethodID mid);
/* Called from ObjectFree: was this tag a class mirror? (then CLASS_UNLOAD is queued) */
bool classes_on_free(jlong tag);

/* OBJECT_ALLOC's is_array and class_id for objects of class cls (cached per class). */
bool classes_alloc_info(JNIEnv *jni, jclass cls, jint *is_array, jobjectID *class_id);
/* ThreadEnd, on the ending thread: drop its allocation-path class cache. */
void classes_thread_end(JNIEnv *jni);
/* JVMPI type code of a field/array signature character ('I' -> JVMPI_INT, 'L'/'[' -> JVMPI_CLASS). */
jint classes_type_code(char sig);
/* Method ids handed to agents: GetMethodClass accepts them without a scan. */
void classes_note_methods(const jmethodID *ms, jint n);
/* Is the java.lang.Class instance `mirror` a loaded class or a primitive type? A Class
 * object a definition left behind when it failed (the JVM freed its class) is neither, and
 * no class function may be given it: only its Java fields and its identity are safe (table.c,
 * "Class objects that are no class"). O(1) for a class with a record or seen loaded before. */
bool classes_mirror_loaded(JNIEnv *jni, jobject mirror);
/* A local ref to the class with this id, or NULL. */
jclass classes_local_ref(JNIEnv *jni, jobjectID id);

void classes_module_init(void);
void classes_module_callbacks(jvmtiEventCallbacks *cb);
void classes_replay(JNIEnv *jni);

/* What classes/ asks of methods/ above it, registered by methods_module_init: the shim's
 * probe class (never announced to agents; NULL while there is none), and what to drop when
 * a class unloads (cached line tables). */
void classes_set_probe_class(jclass (*probe_class)(void));
void classes_set_on_unload(void (*on_unload)(void));

#endif
