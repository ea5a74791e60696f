/* ids.c — jobjectIDs: one opaque id per object, held as the object's JVMTI tag.
 *
 * JVMPI ids were raw oops that moved with GC (hence OBJECT_MOVE). Here the id lives in the
 * object's tag (layout in ids.h): stable for the object's life, so OBJECT_MOVE is never
 * needed, and there is no per-object side table — the JVM's tag map is the table. Ids are
 * multiples of 8 counted from a base (they look like aligned pointers to agents that hash
 * them), never reused, so an id seen after its object died is detectably stale. Class ids
 * are the ids of their java.lang.Class objects; classes and threads also have side tables
 * in their modules.
 *
 * Tagging an untagged object is GetTag + SetTag, which JVMTI does not make atomic; two
 * threads tagging the same object at once would both set a tag. A small lock makes the
 * check-then-set atomic. It is held only across these two tag-map calls, which neither
 * block on other Java threads nor call back into the shim, so it cannot deadlock (a thread
 * waiting on it sits in native code and does not hold up a safepoint).
 */
#include "ids.h"

#include <stdlib.h>
#include <string.h>

#define ID_STEP 8
#define ID_BASE ((jlong)0x10000 * ID_STEP)

static _Atomic jlong next_tag = ID_BASE; /* the next serial (id bits only) */
static pthread_mutex_t tag_lock = PTHREAD_MUTEX_INITIALIZER;

bool ids_plausible(jobjectID id)
{
    jlong t = ids_tag(id);
    return t >= ID_BASE && (t & ~TAG_ID_MASK) == 0 && t < atomic_load(&next_tag);
}

jobjectID ids_peek(jobject obj)
{
    jlong tag = 0;
    if (obj == NULL)
        return NULL;
    if ((*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag) != JVMTI_ERROR_NONE)
        return NULL;
    return ids_from_tag(tag);
}

jobjectID ids_of(JNIEnv *jni, jobject obj)
{
    (void)jni;
    if (obj == NULL)
        return NULL;
    jlong tag = 0;
    jvmtiError err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err != JVMTI_ERROR_NONE) {
        jvmti_ok_at(err, LOG_WARN, "GetTag of an object to give it a jobjectID");
        return NULL;
    }
    if (tag != 0)
        return ids_from_tag(tag);
    /* The id space is 41 bits: more than two trillion objects before it could wrap. */
    pthread_mutex_lock(&tag_lock);
    err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err == JVMTI_ERROR_NONE && tag == 0) {
        tag = atomic_fetch_add(&next_tag, ID_STEP);
        err = (*g_shim.jvmti)->SetTag(g_shim.jvmti, obj, tag);
        if (err != JVMTI_ERROR_NONE)
            tag = 0;
    }
    pthread_mutex_unlock(&tag_lock);
    if (err != JVMTI_ERROR_NONE)
        jvmti_ok_at(err, LOG_WARN, "tagging an object to give it a jobjectID");
    return ids_from_tag(tag);
}

jobjectID ids_claim_allocated(JNIEnv *jni, jobject obj, jlong size_bytes, jlong *tag_out)
{
    (void)jni;
    jlong tag = 0;
    bool claimed = false;
    pthread_mutex_lock(&tag_lock);
    jvmtiError err = (*g_shim.jvmti)->GetTag(g_shim.jvmti, obj, &tag);
    if (err == JVMTI_ERROR_NONE && !(tag & TAG_ALLOCATED)) {
        jlong t = tag == 0 ? ids_new_tag(size_bytes, TAG_ALLOCATED)
                           : ids_retag(tag, size_bytes, TAG_ALLOCATED);
        err = (*g_shim.jvmti)->SetTag(g_shim.jvmti, obj, t);
        if (err == JVMTI_ERROR_NONE) {
            tag = t;
            claimed = true;
        }
    }
    pthread_mutex_unlock(&tag_lock);
    if (err != JVMTI_ERROR_NONE)
        jvmti_ok_at(err, LOG_WARN, "tagging an object to announce its allocation");
    *tag_out = claimed ? tag : 0;
    return ids_from_tag(tag);
}

jlong ids_new_tag(jlong size_bytes, jlong flags)
{
    jlong words = (size_bytes + 7) / 8;
    if (words > TAG_SIZE_MAX_WORDS)
        words = 0; /* too large for the tag: memory.c keeps its size aside */
    return atomic_fetch_add(&next_tag, ID_STEP) | flags | (jlong)((uint64_t)words << TAG_SIZE_SHIFT);
}

/* Heap-iteration callback: find the full tag whose id bits are *user_data. */
static jint JNICALL find_full_tag(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                  void *user_data)
{
    (void)class_tag; (void)size; (void)length;
    jlong *want = user_data;
    if ((*tag_ptr & TAG_ID_MASK) == want[0]) {
        want[1] = *tag_ptr;
        return JVMTI_VISIT_ABORT;
    }
    return 0;
}

jobject ids_resolve(JNIEnv *jni, jobjectID id, const char **why)
{
    (void)jni;
    *why = NULL;
    if (id == NULL) {
        *why = "NULL id";
        return NULL;
    }
    if (!ids_plausible(id)) {
        *why = "not an id the shim issued";
        return NULL;
    }
    jlong tag = ids_tag(id);
    jint n = 0;
    jobject *objs = NULL;
    /* The tag map is the table. Most tags are the bare id; tags of objects whose allocation
     * was reported also hold flags and size, so those are found by id bits first. */
    jlong want[2] = {tag, 0};
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = find_full_tag;
    if ((*g_shim.jvmti)->GetObjectsWithTags(g_shim.jvmti, 1, &tag, &n, &objs, NULL) ==
            JVMTI_ERROR_NONE && n > 0) {
        jobject r = objs[0];
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)objs);
        return r;
    }
    if (objs != NULL)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)objs);
    objs = NULL;
    n = 0;
    jvmti_ok_at((*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, JVMTI_HEAP_FILTER_UNTAGGED,
                                                    NULL, &hc, want),
                LOG_WARN, "IterateThroughHeap to resolve a jobjectID");
    if (want[1] == 0) {
        *why = "its object is no longer alive";
        return NULL;
    }
    tag = want[1];
    if (!jvmti_ok_at((*g_shim.jvmti)->GetObjectsWithTags(g_shim.jvmti, 1, &tag, &n, &objs, NULL),
                     LOG_WARN, "GetObjectsWithTags to resolve a jobjectID")) {
        *why = "JVMTI lookup failed";
        return NULL;
    }
    jobject r = n > 0 ? objs[0] : NULL;
    if (objs != NULL)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)objs);
    if (r == NULL)
        *why = "its object is no longer alive";
    return r;
}
