/* ids.h — jobjectIDs as JVMTI tags (ids.c). */
#ifndef JVMPISHIM_IDS_H
#define JVMPISHIM_IDS_H

#include "shim.h"

/* The id of obj, tagging it if it has none yet. NULL for a NULL ref. */
jobjectID ids_of(JNIEnv *jni, jobject obj);
/* The id obj already has, or NULL (never tags). */
jobjectID ids_peek(jobject obj);
/* A local ref for a live id, or NULL (and *why says why) for NULL, garbage and dead ids. */
jobject ids_resolve(JNIEnv *jni, jobjectID id, const char **why);
/* Could id have been issued by the shim? Cheap, never touches memory the id names. */
bool ids_plausible(jobjectID id);

static inline jlong ids_tag(jobjectID id) { return (jlong)(intptr_t)id; }
static inline jobjectID ids_from_tag(jlong tag) { return (jobjectID)(intptr_t)tag; }

#endif
