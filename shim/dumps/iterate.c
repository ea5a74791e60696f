/* iterate.c — every object in the heap, by IterateThroughHeap: level 0 of a heap dump, and
 * at levels 1 and 2 the objects the walk did not reach.
 *
 * HotSpot's HeapDumper iterated the whole heap at every level (object_iterate): objects
 * that are unreachable but not yet collected were dumped like the others, and a profiler
 * that dumps at JVM_SHUT_DOWN, after main returned, counted the program's data there. JVMTI's
 * FollowReferences reaches only what is reachable; IterateThroughHeap visits every object.
 * Level 0 needs only each object's type and id: one heap iteration writes it (cheaper than
 * following references). Levels 1 and 2 keep the walk, which reports references, roots and
 * the class-level facts, and then iterate the heap for the objects the walk did not reach;
 * those are read with JNI (their references as they stand: nothing can change an
 * unreachable object), through the id index (one pass, core/ids.c), while the other threads
 * are still held, so no collection takes them first.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "dumps/internal.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

static bool is_prim_mirror(const struct walk *w, jlong id)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == id)
            return true;
    return false;
}

/* Objects no dump shows: the shim's own (the priming arrays, the probe class's mirror) and
 * the JVM's heap fillers. */
static bool not_dumped(struct walk *w, jlong class_tag, jlong tag)
{
    if (tag == TAG_SHIM_OWN || (w->hook_id != 0 && (tag & TAG_ID_MASK) == w->hook_id))
        return true;
    struct hclass *oc = class_tag != 0 ? hclass_find(w, class_tag & TAG_ID_MASK) : NULL;
    return oc != NULL && oc->filler;
}

/* Note the object at ordinal ord for the second iteration (see unreached_records). */
static jint note_unreached(struct walk *w, uint64_t ord, jlong id, jlong class_tag, jlong size)
{
    if (w->n_unreached + 2 > w->unreached_cap) {
        size_t cap = w->unreached_cap ? w->unreached_cap * 2 : 2 * 1024;
        jlong *p = realloc(w->unreached, cap * sizeof *p);
        if (p == NULL) {
            w->failed = true;
            return JVMTI_VISIT_ABORT;
        }
        w->unreached = p;
        w->unreached_cap = cap;
        uint64_t *o = realloc(w->ord, cap / 2 * sizeof *o);
        if (o == NULL) {
            w->failed = true;
            return JVMTI_VISIT_ABORT;
        }
        w->ord = o;
        jlong *z = realloc(w->ord_size, cap / 2 * sizeof *z);
        if (z == NULL) {
            w->failed = true;
            return JVMTI_VISIT_ABORT;
        }
        w->ord_size = z;
    }
    w->ord_size[w->n_unreached / 2] = size;
    w->ord[w->n_unreached / 2] = ord;
    w->unreached[w->n_unreached++] = id;
    w->unreached[w->n_unreached++] = class_tag & TAG_ID_MASK;
    return 0;
}

/* An object of a class the dump has no layout for (see fix above). */
static bool class_unknown(struct walk *w, jlong class_tag)
{
    return class_tag == 0 || hclass_find(w, class_tag & TAG_ID_MASK) == NULL;
}

/* What both iterations do first with the object they are shown: count its ordinal, skip
 * what no dump shows, and leave an object of a class the dump does not know for
 * unreached_records, untagged (it may be a dormant object of the CDS archive, of a class this
 * run has not loaded, which no dump shows; the walk wrote no record for it either). True if
 * the object is the caller's to dump, with its ordinal and id; else *rc is the callback's
 * answer. */
static bool object_seen(struct walk *w, jlong class_tag, jlong size, jlong *tag_ptr,
                        uint64_t *ord_out, jlong *id, jint *rc)
{
    uint64_t ord = *ord_out = w->ord_at++;
    *rc = 0;
    if (not_dumped(w, class_tag, *tag_ptr))
        return false;
    /* A Class object that is none of the classes the dump knows (build_classes tagged every
     * loaded class, prim_mirrors the primitive types): the mirror a failed definition left,
     * or a dormant mirror of the CDS archive, of a class this run has not loaded. Both point
     * at class metadata that is not there (freed, or never loaded): a JNI reference to one
     * makes it a root, and the collector's next marking of it crashed the JVM (SIGSEGV in
     * ClassLoaderData::oops_do). No id, no record: never named, never resolved. */
    if (class_tag != 0 && (class_tag & TAG_ID_MASK) == w->class_class_id &&
        ((*tag_ptr & TAG_ID_MASK) == 0 ||
         (hclass_find(w, *tag_ptr & TAG_ID_MASK) == NULL && !is_prim_mirror(w, *tag_ptr & TAG_ID_MASK))))
        return false;
    if (class_unknown(w, class_tag)) {
        *rc = note_unreached(w, ord, *tag_ptr & TAG_ID_MASK, class_tag, size);
        return false;
    }
    *id = tag_or_new(w, tag_ptr, class_tag, size);
    if (w->facts != NULL) {
        /* A request answered from the last dump's facts announced the object: its tag says
         * so from now on (memory/facts.c, claims). */
        if (!(*tag_ptr & TAG_ALLOCATED) && memory_facts_was_claimed(w->facts, *id))
            *tag_ptr = ids_retag(*tag_ptr, size, TAG_ALLOCATED);
        memory_facts_add(w->facts, *tag_ptr, class_tag & TAG_ID_MASK, size);
    }
    return true;
}

static jint JNICALL level0_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)length;
    struct walk *w = ud;
    uint64_t ord;
    jlong id = 0;
    jint rc;
    if (!object_seen(w, class_tag, size, tag_ptr, &ord, &id, &rc))
        return rc;
    db_u1(&w->objs, (uint8_t)level0_type(hclass_find(w, class_tag & TAG_ID_MASK)));
    put_id(&w->objs, id);
    w->records++;
    return 0;
}

static jint JNICALL unreached_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)length;
    struct walk *w = ud;
    uint64_t ord;
    jlong id = 0;
    jint rc;
    if (!object_seen(w, class_tag, size, tag_ptr, &ord, &id, &rc))
        return rc;
    if (vis_has(w, id) || is_prim_mirror(w, id))
        return 0;
    return note_unreached(w, ord, id, class_tag, size);
}

static bool iterate(struct walk *w, jvmtiHeapIterationCallback cb, const char *what)
{
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = cb;
    shim_crit_begin(); /* HotSpot's escape barrier: see run_walk() */
    jvmtiError err = (*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, 0, NULL, &hc, w);
    shim_crit_end();
    return jvmti_ok_at(err, LOG_WARN, what);
}

bool level0_records(struct walk *w)
{
    return iterate(w, level0_cb, "IterateThroughHeap for a level-0 heap dump");
}

/* The objects the walk did not reach, as local references, without an index of the whole
 * heap: IterateThroughHeap visits the objects in the same order again while nothing
 * allocates or collects (the other threads are held), so a second iteration, in a JVMTI
 * environment of the shim's own, tags exactly the ordinals the first one found unreached,
 * and GetObjectsWithTags there returns them: the cost is that of the unreached objects, not
 * of the heap (an index pass over 1 M objects takes 3 s for 14 000 unreached ones). Each
 * object's id is then read from its tag in the main environment and checked against the
 * list; any the second iteration missed (the heap changed after all) are resolved through
 * the id index. */
/* The scan environment's tags: loaded classes and java.lang.Class as ids_scan_tag_classes
 * sets them; an unreached object with an id, and one with none yet. */
#define SCAN_UNREACHED 1
#define SCAN_UNREACHED_NOID 5

static jint JNICALL ordinal_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)length;
    struct walk *w = ud;
    if (w->ord_next < w->n_unreached / 2 && w->ord_at == w->ord[w->ord_next]) {
        /* Only an object of a loaded class, and of java.lang.Class only a loaded class or
         * primitive type, may get a reference (ids_scan_tag_classes). An object whose class
         * has no tag here is a dormant object of the CDS archive, of a class this run never
         * loaded: listed (object_seen could not tell it), never tagged. A Class object that
         * is no class (object_seen listed none), or an object of another size, at a listed
         * ordinal means the heap changed between the iterations (a thread's allocation
         * buffer filled differently): the ordinals say nothing from here on, and what is
         * left resolves through the id index, which makes no reference to either kind. */
        bool mirror_ok = class_tag != IDS_SCAN_CLASS_CLASS || *tag_ptr == IDS_SCAN_CLASS ||
                         *tag_ptr == IDS_SCAN_CLASS_CLASS;
        if (size != w->ord_size[w->ord_next] || (class_tag != 0 && !mirror_ok)) {
            w->ord_shifted = true;
            return JVMTI_VISIT_ABORT;
        }
        if (class_tag != 0)
            *tag_ptr = w->unreached[2 * w->ord_next] != 0 ? SCAN_UNREACHED : SCAN_UNREACHED_NOID;
        w->ord_next++;
    }
    w->ord_at++;
    return w->ord_next < w->n_unreached / 2 ? 0 : JVMTI_VISIT_ABORT;
}

static size_t unreached_find(const struct walk *w, jlong id)
{
    size_t n = w->n_unreached / 2;
    for (size_t k = vis_slot(id, w->un_cap); w->un_idx[k] != 0; k = (k + 1) & (w->un_cap - 1))
        if (w->unreached[2 * (w->un_idx[k] - 1)] == id)
            return w->un_idx[k] - 1;
    return n;
}

/* The class of o, which the dump did not know: announced (its CLASS_LOAD first), given a
 * layout, and noted for o's OBJECT_ALLOC (fix). */
static struct hclass *learn_class(struct walk *w, jobject o, jlong id, jlong *cid)
{
    JNIEnv *jni = w->jni;
    jclass c = (*jni)->GetObjectClass(jni, o);
    jobjectID cidn = c != NULL ? classes_id_announced(jni, c) : NULL;
    struct hclass *hc = cidn != NULL ? hclass_find(w, ids_tag(cidn)) : NULL;
    if (cidn != NULL && hc == NULL) {
        jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
        build_class(w, c, class_class);
        if (class_class != NULL)
            (*jni)->DeleteLocalRef(jni, class_class);
        free(w->ctab); /* index_classes again, with the new class */
        w->ctab = NULL;
        index_classes(w);
        hc = hclass_find(w, ids_tag(cidn));
    }
    if (c != NULL)
        (*jni)->DeleteLocalRef(jni, c);
    if (cidn != NULL && id != 0 && w->n_fix + 2 > w->fix_cap) {
        size_t cap = w->fix_cap ? 2 * w->fix_cap : 64;
        jlong *f = realloc(w->fix, cap * sizeof *f);
        if (f != NULL) {
            w->fix = f;
            w->fix_cap = cap;
        }
    }
    if (cidn != NULL && id != 0 && w->n_fix + 2 <= w->fix_cap) {
        w->fix[w->n_fix++] = id;
        w->fix[w->n_fix++] = ids_tag(cidn);
    }
    *cid = ids_tag(cidn);
    return hc;
}

static int cmp_pair(const void *a, const void *b)
{
    jlong x = *(const jlong *)a, y = *(const jlong *)b;
    return x < y ? -1 : x > y;
}

/* The OBJECT_ALLOCs still to announce name the classes learn_class found. */
void apply_fixes(struct walk *w)
{
    if (w->n_fix == 0 || w->fix == NULL)
        return;
    qsort(w->fix, w->n_fix / 2, 2 * sizeof *w->fix, cmp_pair);
    for (size_t i = 0; i + 2 < w->nfresh; i += 3) {
        jlong key = w->fresh[i] & TAG_ID_MASK;
        jlong *f = bsearch(&key, w->fix, w->n_fix / 2, 2 * sizeof *w->fix, cmp_pair);
        if (f != NULL)
            w->fresh[i + 1] = f[1];
    }
}

/* The record of o, whose id may be 0 (no tag yet: see level0_cb) and whose class cid may be
 * unknown to the dump (learn_class). An object whose class JVMTI cannot name (a dormant
 * object of the CDS archive) has no record and gets no id. */
static void unreached_write(struct walk *w, jobject o, jlong id, jlong cid)
{
    JNIEnv *jni = w->jni;
    struct hclass *hc = cid != 0 ? hclass_find(w, cid) : NULL;
    if (hc == NULL && (hc = learn_class(w, o, id, &cid)) == NULL)
        return;
    if (id == 0) {
        jlong t = 0, size = 0;
        jvmti_ignore((*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, o, &size),
                     "GetObjectSize of an object a dump names first: its OBJECT_ALLOC says 0");
        if (w->announce && fresh_room(w)) {
            id = ids_tag(ids_claim_allocated(jni, o, size, &t));
            if (t != 0)
                fresh_add(w, t, cid, size);
        } else {
            id = ids_tag(ids_of(jni, o));
        }
        if (id == 0)
            return;
    }
    if (w->level == JVMPI_DUMP_LEVEL_0) {
        db_u1(&w->objs, (uint8_t)level0_type(hc));
        put_id(&w->objs, id);
        w->records++;
    } else if (cid == w->class_class_id) {
        /* A class the walk did not reach (its loader unreachable): what only a walk tells of
         * it from the walk over all classes (classextras.c), after the iterations, so the
         * array it allocates shifts no ordinal. */
        struct hclass *self = hclass_find(w, id);
        if (self != NULL && self->kind == HC_INSTANCE && self->linked)
            class_extras_take(w, id);
        mirror_by_jni(w, o, id);
    } else if (hc->kind != HC_OTHER) {
        record_by_jni(w, o, id, hc);
    }
}

/* The unreached pass's environment and its class tags, before the dump's first iteration:
 * tagging the classes may run Java code on this thread (FindClass through the system class
 * loader allocates), and an allocation between the first iteration and the second changes
 * every ordinal after it, which sent all the unreached objects through a full index pass. */
void unreached_prepare(struct walk *w)
{
    JNIEnv *jni = w->jni;
    w->scan = ids_scan_env();
    w->scan_tagged = w->scan != NULL && (*jni)->PushLocalFrame(jni, 32) == JNI_OK;
    if (w->scan_tagged) {
        w->scan_tagged = ids_scan_tag_classes(jni, w->scan);
        (*jni)->PopLocalFrame(jni, NULL);
    }
}

void unreached_drop(struct walk *w)
{
    if (w->scan != NULL)
        jvmti_ignore((*w->scan)->DisposeEnvironment(w->scan),
                     "DisposeEnvironment of a dump's scan environment: nothing else to do");
    w->scan = NULL;
}

/* After the walk (levels 1 and 2), the records of the objects it did not reach, and of those
 * of classes it did not know; after a level-0 iteration, the classes of the latter. */
bool unreached_records(struct walk *w)
{
    double t0 = now_s();
    JNIEnv *jni = w->jni;
    if (w->level > JVMPI_DUMP_LEVEL_0 &&
        !iterate(w, unreached_cb, "IterateThroughHeap for the objects a heap dump's walk did "
                                  "not reach")) {
        unreached_drop(w);
        return false;
    }
    double t1 = now_s();
    size_t n = w->n_unreached / 2;
    if (n == 0) {
        unreached_drop(w);
        return true;
    }
    w->un_cap = 64;
    while (w->un_cap < 2 * n)
        w->un_cap *= 2;
    w->un_idx = calloc(w->un_cap, sizeof *w->un_idx);
    w->un_done = calloc(n, 1);
    if (w->un_idx == NULL || w->un_done == NULL)
        return !(w->failed = true);
    for (size_t i = 0; i < n; i++) {
        if (w->unreached[2 * i] == 0) {
            w->un_done[i] = 1; /* no id: found by its scan tag (2) alone, or not at all */
            continue;
        }
        size_t k = vis_slot(w->unreached[2 * i], w->un_cap);
        while (w->un_idx[k] != 0)
            k = (k + 1) & (w->un_cap - 1);
        w->un_idx[k] = i + 1;
    }
    jvmtiEnv *scan = w->scan;
    bool tagged = w->scan_tagged;
    jint got = 0;
    jobject *objs = NULL;
    if (scan != NULL && (*jni)->PushLocalFrame(jni, 16) == JNI_OK) {
        jvmtiHeapCallbacks hc;
        memset(&hc, 0, sizeof hc);
        /* The loaded classes have their tag in this environment (unreached_prepare), so
         * that the ordinal iteration tells the objects no reference may be made to
         * (ordinal_cb). */
        jvmtiError err = JVMTI_ERROR_NONE; /* untagged: ids_scan_tag_classes said why */
        hc.heap_iteration_callback = ordinal_cb;
        jlong tags[2] = {SCAN_UNREACHED, SCAN_UNREACHED_NOID}, *stags = NULL;
        w->ord_at = w->ord_next = 0;
        w->ord_shifted = false;
        shim_crit_begin(); /* HotSpot's escape barrier: see run_walk() */
        if (tagged)
            err = (*scan)->IterateThroughHeap(scan, 0, NULL, &hc, w); /* every ordinal */
        shim_crit_end();
        if (w->ord_shifted)
            log_info("heap dump: the heap changed between two iterations at object %llu of "
                     "%zu unreached: the rest resolve through the id index",
                     (unsigned long long)w->ord_next, n);
        if (tagged &&
            jvmti_ok_at(err, LOG_WARN,
                        "IterateThroughHeap to find a heap dump's unreached objects") &&
            jvmti_ok_at((*scan)->GetObjectsWithTags(scan, 2, tags, &got, &objs, &stags), LOG_WARN,
                        "GetObjectsWithTags for a heap dump's unreached objects")) {
            for (jint k = 0; k < got && !w->failed; k++) {
                jlong t = 0;
                jvmti_ignore((*g_shim.jvmti)->GetTag(g_shim.jvmti, objs[k], &t),
                             "GetTag of an unreached object: untagged, it is read as one");
                size_t i = stags[k] == SCAN_UNREACHED ? unreached_find(w, t & TAG_ID_MASK) : n;
                (*jni)->PushLocalFrame(jni, 16);
                if (stags[k] == SCAN_UNREACHED_NOID && t == 0) {
                    unreached_write(w, objs[k], 0, 0);
                } else if (i < n && !w->un_done[i]) {
                    w->un_done[i] = 1;
                    unreached_write(w, objs[k], w->unreached[2 * i], w->unreached[2 * i + 1]);
                }
                (*jni)->PopLocalFrame(jni, NULL);
            }
            jvmti_free(g_shim.jvmti, objs);
            jvmti_free(g_shim.jvmti, stags);
        }
        (*jni)->PopLocalFrame(jni, NULL);
    }
    unreached_drop(w);
    /* What the second iteration missed, through the index (one pass at most). */
    for (size_t i = 0; i < n && !w->failed; i++) {
        if (w->un_done[i])
            continue;
        if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
            w->failed = true;
            break;
        }
        const char *why = NULL;
        jobject o = ids_resolve(jni, ids_from_tag(w->unreached[2 * i]), &why);
        if (o == NULL)
            w->lost++;
        else
            unreached_write(w, o, w->unreached[2 * i], w->unreached[2 * i + 1]);
        (*jni)->PopLocalFrame(jni, NULL);
    }
    if (w->lost > 0)
        log_info("heap dump: %zu unreachable objects were collected before they were read: "
                 "no record", w->lost);
    log_info("heap dump: %zu objects read with JNI (not reached by the walk, or of a class it "
             "did not know; %zu reached): found in %.0f ms, read in %.0f ms", n, w->vis_n,
             (t1 - t0) * 1e3, (now_s() - t1) * 1e3);
    return true;
}
