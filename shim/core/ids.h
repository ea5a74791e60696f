/* ids.h — jobjectIDs as JVMTI tags (ids.c).
 *
 * Tag layout (64 bits): bits 3..43 the object's serial — the jobjectID is exactly these
 * bits, so it is a multiple of 8 and never changes; bit 0 "OBJECT_ALLOC was posted for
 * it"; bit 2 "kept": the id resolves through the kept table (ids.c); bits 44..63 the
 * object's size in 8-byte words when the shim learned it at allocation (0: unknown, or too
 * large: see memory/alloc.c), so OBJECT_FREE and the GC statistics know what died without a
 * per-object side table.
 *
 * Invariant: an object is tagged only when its id is handed to an agent (an event, a dump,
 * a function's result) or it is a class mirror, so memory/gc.c posts OBJECT_FREE for every
 * tagged object that dies (CLASS_UNLOAD for mirrors). Tag nothing for the shim's own use.
 */
#ifndef JVMPISHIM_IDS_H
#define JVMPISHIM_IDS_H

#include "core/shim.h"

/* i386: a jobjectID has 32 bits, so the id is bits 3..31 and bits 32..43 stay 0; the ids
 * are reissued after the space wraps, never while live (core/idspace.h). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define TAG_ID_MASK ((jlong)0x00000FFFFFFFFFF8LL)
#else
#define TAG_ID_MASK ((jlong)0x00000000FFFFFFF8LL)
#define IDS_32 1
#endif
#define TAG_ALLOCATED ((jlong)1)
#define TAG_KEPT ((jlong)4)
#define TAG_SIZE_SHIFT 44
#define TAG_SIZE_MAX_WORDS ((1LL << 20) - 1)
/* The one exception to "tag nothing for the shim's own use": objects the shim makes for
 * itself that a heap walk would otherwise meet (the arrays memory/alloc.c allocates at VMInit to
 * reset the main thread's sampling point, the Field objects classes/announce.c gets to link a
 * class).
 * Id bits 0: no event, no free, no sweep, no dump, no index entry ever names one. */
#define TAG_SHIM_OWN ((jlong)2)

/* The id of obj, tagging it if it has none yet. NULL for a NULL ref. */
jobjectID ids_of(JNIEnv *jni, jobject obj);
/* The same for an id handed to an agent with the object at hand (a class, a thread, a
 * monitor, a receiver, a JNI reference's object, jobject2jobjectID): from then on the id
 * resolves in O(1) (ids_resolve), without a heap pass. ids_keep_tagged does it for an
 * object whose full tag the caller has just read. */
jobjectID ids_of_kept(JNIEnv *jni, jobject obj);
void ids_keep_tagged(JNIEnv *jni, jobject obj, jlong tag);
/* The id of obj; if no OBJECT_ALLOC was posted for it yet, marks it as posted (with its
 * size) and sets *tag to its full tag, else sets *tag to 0. Atomic against other callers. */
jobjectID ids_claim_allocated(JNIEnv *jni, jobject obj, jlong size_bytes, jlong *tag);
/* The id obj already has, or NULL (never tags). */
jobjectID ids_peek(jobject obj);
/* A fresh tag for an object just allocated (no other thread can see it yet). */
jlong ids_new_tag(jlong size_bytes, jlong flags);
/* The same id with flags and the size set (a tag the shim made before it knew the size). */
static inline jlong ids_retag(jlong tag, jlong size_bytes, jlong flags)
{
    jlong words = (size_bytes + 7) / 8;
    if (words > TAG_SIZE_MAX_WORDS)
        words = 0;
    return (tag & (TAG_ID_MASK | TAG_KEPT)) | flags | (jlong)((uint64_t)words << TAG_SIZE_SHIFT);
}
/* A local ref for a live id, or NULL (and *why says why, a message ids_bad_kind can
 * classify) for NULL, garbage and dead ids. O(1) amortized (ids.c). */
jobject ids_resolve(JNIEnv *jni, jobjectID id, const char **why);
/* A JVMTI environment of the shim's own with can_tag_objects, whose tags are private to it,
 * for one heap pass: DisposeEnvironment drops all its tags at once. NULL (and a warning) if
 * none can be had. */
jvmtiEnv *ids_scan_env(void);
/* In a scan environment: every loaded class and primitive type tagged IDS_SCAN_CLASS,
 * java.lang.Class IDS_SCAN_CLASS_CLASS. An object whose class then has no tag there is a
 * dormant object of the CDS archive (its class never loaded in this run), and a Class object
 * with no tag there is no class (a dormant mirror, or what a failed definition left): the
 * class metadata either points at is not there, and a JNI reference to one (the collector's
 * keep-alive during its concurrent marking) crashes that marking in ClassLoaderData::oops_do.
 * A heap pass must make a reference to neither. False (and a warning) if the classes could
 * not be listed. */
#define IDS_SCAN_CLASS 2
#define IDS_SCAN_CLASS_CLASS 3
bool ids_scan_tag_classes(JNIEnv *jni, jvmtiEnv *scan);
/* Objects at hand: an event that names objects it holds local refs to opens a scope before
 * it takes their ids and closes it after its delivery; ids_hand records (id, ref) on this
 * thread while a scope is open, so a request from the handler resolves the id at once. */
#define IDS_HAND_MAX 16
struct ids_hand_entry {
    jlong id;
    jobject ref;
};
extern _Thread_local struct ids_hand_entry *ids_tl_hand; /* IDS_HAND_MAX, made on first use */
extern _Thread_local int ids_tl_hand_n, ids_tl_hand_depth;
struct ids_hand_entry *ids_hand_block(void);
static inline int ids_hand_open(void)
{
    ids_tl_hand_depth++;
    return ids_tl_hand_n;
}
static inline void ids_hand_close(int mark)
{
    ids_tl_hand_n = mark;
    ids_tl_hand_depth--;
}
static inline void ids_hand(jobjectID id, jobject obj)
{
    int n = ids_tl_hand_n;
    if (ids_tl_hand_depth > 0 && id != NULL && obj != NULL && n < IDS_HAND_MAX) {
        struct ids_hand_entry *h = ids_tl_hand;
        if (__builtin_expect(h == NULL, 0) && (h = ids_hand_block()) == NULL)
            return;
        h[n].id = (jlong)(uintptr_t)id;
        h[n].ref = obj;
        ids_tl_hand_n = n + 1;
    }
}
/* An id the agent passed that could not be used is logged as a warning once per kind per
 * agent; the others at level info, all of them counted (in the migration report per call
 * site, and in one line per kind at shutdown: ids_bad_summary). O(1). */
enum { IDS_BAD_NULL, IDS_BAD_GARBAGE, IDS_BAD_DEAD, IDS_BAD_KIND, IDS_BAD_OTHER, IDS_BAD_KINDS };
struct instance;
int ids_bad_kind(const char *why);          /* the kind of a why from ids_resolve */
int ids_bad_level(struct instance *inst, int kind);
void ids_bad_summary(void);
/* Every id issued so far lies in [ids_first(), ids_next()), a multiple of 8. */
jlong ids_first(void);
jlong ids_next(void);
/* The primitive types' mirrors (Integer.TYPE and the others), which GetLoadedClasses does
 * not list: local references, NULL where one could not be read. Read from the wrapper
 * classes' TYPE fields, which runs no Java code (they are initialized before any agent). */
#define IDS_NPRIMS 9
void ids_primitive_mirrors(JNIEnv *jni, jobject out[IDS_NPRIMS]);

/* Could id have been issued by the shim? Cheap, never touches memory the id names. */
bool ids_plausible(jobjectID id);

static inline jlong ids_tag(jobjectID id) { return (jlong)(uintptr_t)id; }
static inline jobjectID ids_from_tag(jlong tag) { return (jobjectID)(uintptr_t)(tag & TAG_ID_MASK); }
static inline jlong tag_size_bytes(jlong tag) { return (jlong)((uint64_t)tag >> TAG_SIZE_SHIFT) * 8; }

#endif
