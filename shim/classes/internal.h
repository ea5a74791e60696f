/* internal.h — what the parts of classes/ share, and nothing other folders call.
 *
 * classes/ is split by job: table.c (the class table: records, ids, reference counts, the
 * per-thread cache, OBJECT_ALLOC's class conventions, CLASS_UNLOAD), info.c (the CLASS_LOAD
 * payload: built from JVMTI, kept, posted), announce.c (definition before use: who
 * announces a class and when, definitions in progress, linking, the JVMTI ClassLoad and
 * ClassPrepare callbacks, the start-up replay), classes.c (the module: its event rows and
 * callbacks, RequestEvent(CLASS_LOAD), CLASS_LOAD_HOOK), method_class.c (GetMethodClass and
 * the method ids JVMTI may be given), agent_natives.c (the agent library's own JNI
 * natives). They share the class record, the payload and the functions declared here; the
 * locks each part takes are its own (core/shim.h, the lock order).
 */
#ifndef JVMPISHIM_CLASSES_INTERNAL_H
#define JVMPISHIM_CLASSES_INTERNAL_H

#include "classes/classes.h"

#include <uthash.h>

struct class_info {
    char *name;
    char *source;
    jint num_interfaces;
    jint num_methods, num_statics, num_instances;
    JVMPI_Method *methods;
    JVMPI_Field *statics, *instances;
};

struct class_rec {
    jlong tag;                  /* key: the class id */
    jweak ref;                  /* weak: the table must not keep classes alive */
    _Atomic(struct class_info *) saved; /* the CLASS_LOAD payload, built once, kept */
    bool may_unload;            /* defined by a class loader (boot classes never unload) */
    _Atomic uint32_t claimed;   /* bit per instance: CLASS_LOAD being posted */
    _Atomic uint32_t announced; /* bit per instance: CLASS_LOAD delivered */
    /* The thread defining the class, from its JVMTI ClassLoad until its CLASS_LOAD is out
     * (see cb_class_load): other threads leave the announcement to it and wait for it. */
    _Atomic(JNIEnv *) definer;
    _Atomic bool loaded;        /* its JVMTI ClassLoad came (the definer is known) */
    bool unloaded;
    /* References: 1 for the table (dropped after CLASS_UNLOAD), 1 per lookup by id in
     * progress (rec_acquire): the worker's CLASS_UNLOAD must not free a record a request
     * for the same id is reading. */
    _Atomic int refs;
    /* OBJECT_ALLOC conventions for instances of this class, computed on first use. */
    _Atomic bool alloc_known;
    jint alloc_is_array;        /* JVMPI_NORMAL_OBJECT, JVMPI_CLASS or JVMPI_BOOLEAN.. */
    jobjectID alloc_class_id;   /* the class, the element class, or NULL (primitive array) */
    UT_hash_handle hh;
};


/* ---- table.c ---- */

/* The record of cls, created (and the class tagged) on first sight; NULL if the class has
 * no id. Records live until their class unloads. */
struct class_rec *rec_of(JNIEnv *jni, jclass cls);
/* rec_of through this thread's cache (no class_lock on a hit): for per-event paths. */
struct class_rec *rec_of_cached(JNIEnv *jni, jclass cls);
/* The record of class id tag with a reference the caller drops with rec_release, or NULL. */
struct class_rec *rec_acquire(jlong tag);
void rec_release(JNIEnv *jni, struct class_rec *r);
/* Keep the CLASS_LOAD payload of a class that can unload, for CLASS_UNLOAD handlers. */
void ensure_saved(JNIEnv *jni, struct class_rec *r, jclass cls);
/* Classes that may unload prepared while CLASS_UNLOAD was off (see unload_changed). */
extern _Atomic uint64_t prepared_unsaved;
/* CLASS_UNLOAD's on_change: save the payload of the classes loaded before it was on. */
void unload_changed(int t, bool any);

/* ---- info.c ---- */

struct class_info *info_build(JNIEnv *jni, jclass cls);
void info_free(struct class_info *ci);
/* Post r's CLASS_LOAD to inst (requested: as the answer to RequestEvent); false if
 * nothing was delivered. */
bool post_class_load(JNIEnv *jni, struct instance *inst, struct class_rec *r, jclass cls,
                     bool requested);

/* ---- announce.c ---- */

/* Post r's CLASS_LOAD to every instance that enabled it and has not had it. */
void announce(JNIEnv *jni, struct class_rec *r, jclass cls);
/* classes_id_announced, also giving the instances that have had the class's CLASS_LOAD. */
jobjectID id_announced(JNIEnv *jni, jclass cls, uint32_t *announced);
/* Is cls prepared (or an array or primitive class, which never are)? */
bool class_prepared(jclass cls);
/* Link cls now, as reflection would (no static initializer runs). */
void ensure_linked(JNIEnv *jni, jclass cls);
/* May this thread link a class now (linking runs Java code)? */
bool call_may_link(void);
/* Have the worker link cls in the background. */
void link_later(JNIEnv *jni, jclass cls);
/* At a CLASS_LOAD_HOOK: this thread is about to define name in loader. */
void pending_begin(JNIEnv *jni, const char *name, jobject loader);
/* At module init: the JVMTI environment that tells class loaders apart. */
void loader_keys_init(void);
void JNICALL cb_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls);
void JNICALL cb_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls);

/* ---- method_class.c ---- */

/* Note the methods of the class with id class_tag (0: not known here). */
void note_methods_of(const jmethodID *ms, jint n, jlong class_tag);

#endif
