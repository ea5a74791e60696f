/* classextras.c — what only a heap walk tells of a class, kept for the OBJECT_DUMPs of class
 * objects that follow: its resolved constant-pool entries, signers and protection domain.
 *
 * A CLASS_DUMP record needs, besides what JNI and JVMTI give one class at a time (superclass,
 * loader, interfaces, statics: jnirecords.c, mirror_by_jni), three things that only
 * FollowReferences reports. A FollowReferences is a safepoint operation with a price of its
 * own whatever it starts from, which grows with the heap on JDK 17 (its object marker
 * restores mark words: 4.8 ms a class at 1 M live objects) and is about 0.1 ms on JDK 25.
 * A heap analyzer asks OBJECT_DUMP for every id of its dump, hundreds or thousands of class
 * objects among them. So the first such request runs one walk for all loaded classes (from
 * an Object[] of them: the walk visits the array's elements and nothing further) and keeps,
 * per class id, those three things; the record itself is read with JNI at each request, so
 * its statics are the values of that moment, as HotSpot read them in place.
 *
 * A heap dump at level 1 or 2 uses the same set for the classes its walk does not reach
 * (their loader unreachable: iterate.c), after its iterations.
 *
 * The kept set answers until a heap dump begins (each drops it: the next analysis starts
 * afresh) or a class is retransformed (its constant pool is renumbered). Collections do not
 * end it: ids are tags, which a collection does not change, an unloaded class's entry is
 * never asked for again, and a program that collects all the time (a storm of threads
 * loading classes) would otherwise rebuild the set at nearly every request. An entry a class
 * resolves after the set was built is missing from its later records, where HotSpot's class
 * dumps listed no constant-pool entry at all (docs/mapping.md, OBJECT_DUMP). A class loaded
 * since has no entry: its request walks from its own mirror, as before.
 *
 * extras_lock is a leaf: held to look an entry up or swap the set, across no JVM call; the
 * set is built with no lock held, and of two threads building at once the first to finish
 * installs its set.
 */
#include "core/api.h"
#include "core/ids.h"
#include "dumps/internal.h"
#include "methods/bci.h"

#include <stdlib.h>
#include <string.h>

struct extra {
    jlong id;                   /* key: the class id */
    jlong signers_id, pd_id;
    jint n_cp;
    struct dumpbuf cp;          /* the entries as a CLASS_DUMP writes them (walk.c ref_cb) */
    UT_hash_handle hh;
};

struct extras_set {
    struct extra *by_id;
    uint64_t bci_at, dumps_at;  /* the counts when the set was built */
};

static pthread_mutex_t extras_lock = PTHREAD_MUTEX_INITIALIZER;
static struct extras_set *current;
static _Atomic uint64_t dumps_done;

static void set_free(struct extras_set *s)
{
    if (s == NULL)
        return;
    struct extra *e, *tmp;
    HASH_ITER(hh, s->by_id, e, tmp) {
        HASH_DEL(s->by_id, e);
        db_free(&e->cp);
        free(e);
    }
    free(s);
}

static bool set_valid(const struct extras_set *s)
{
    return s != NULL && s->bci_at == bci_retransform_count() &&
           s->dumps_at == atomic_load(&dumps_done);
}

/* A heap dump begins. */
void class_extras_drop(void)
{
    atomic_fetch_add(&dumps_done, 1);
    pthread_mutex_lock(&extras_lock);
    struct extras_set *old = current;
    current = NULL;
    pthread_mutex_unlock(&extras_lock);
    set_free(old);
}

/* The walk: the array's elements are visited (the classes); of a class's references only the
 * three kinds kept here are looked at, and nothing is visited from it. */
struct build {
    struct walk *w;
    struct extras_set *s;
    struct extra *cur;          /* the referrer of the last reference: they come together */
    size_t entries;
};

static jint JNICALL extras_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                              jlong class_tag, jlong referrer_class_tag, jlong size,
                              jlong *tag_ptr, jlong *referrer_tag_ptr, jint length, void *ud)
{
    (void)referrer_class_tag;
    (void)length;
    struct build *b = ud;
    if (referrer_tag_ptr == NULL)
        return 0;
    if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT)
        return JVMTI_VISIT_OBJECTS; /* only the array has elements here: a class */
    if (kind != JVMTI_HEAP_REFERENCE_CONSTANT_POOL && kind != JVMTI_HEAP_REFERENCE_SIGNERS &&
        kind != JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN)
        return 0;
    struct walk *w = b->w;
    if (w->hook_id != 0 && (*tag_ptr & TAG_ID_MASK) == w->hook_id)
        return 0; /* the probe class: named nowhere (walk.c ref_cb) */
    jlong cid = *referrer_tag_ptr & TAG_ID_MASK;
    if (b->cur == NULL || b->cur->id != cid) {
        HASH_FIND(hh, b->s->by_id, &cid, sizeof cid, b->cur);
        if (b->cur == NULL)
            return 0; /* a class without an id when the list was made */
    }
    struct extra *e = b->cur;
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
        db_u2(&e->cp, (uint16_t)info->constant_pool.index);
        db_u1(&e->cp, JVMPI_CLASS);
        put_id(&e->cp, id);
        e->n_cp++;
        b->entries++;
        break;
    case JVMTI_HEAP_REFERENCE_SIGNERS: e->signers_id = id; break;
    default: e->pd_id = id; break;
    }
    return 0;
}

/* One walk over every loaded, linked instance class. NULL if it failed (then each request
 * walks from its own mirror). */
static struct extras_set *build(struct walk *w)
{
    JNIEnv *jni = w->jni;
    double t0 = now_s();
    struct extras_set *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->bci_at = bci_retransform_count();
    s->dumps_at = atomic_load(&dumps_done);
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs), LOG_INFO,
                     "GetLoadedClasses for the class extras of OBJECT_DUMP (each class then "
                     "walks alone)")) {
        free(s);
        return NULL;
    }
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    bool pushed = (*jni)->PushLocalFrame(jni, 16) == 0, ok = false;
    jobjectArray arr = NULL;
    if (pushed && n > 0) {
        /* java.lang.Object: the superclass of java.lang.Class */
        jclass cc = (*jni)->GetObjectClass(jni, cs[0]);
        jclass oc = cc != NULL ? (*jni)->GetSuperclass(jni, cc) : NULL;
        arr = oc != NULL ? (*jni)->NewObjectArray(jni, n, oc, NULL) : NULL;
        if (arr == NULL)
            (*jni)->ExceptionClear(jni); /* out of memory: each class then walks alone */
    }
    jint k = 0;
    for (jint i = 0; i < n; i++) {
        jint st = 0;
        jlong t = 0;
        if (arr != NULL &&
            jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st), LOG_DEBUG,
                        "GetClassStatus for the class extras of OBJECT_DUMP") &&
            !(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) &&
            (st & JVMTI_CLASS_STATUS_PREPARED) &&
            jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, cs[i], &t), LOG_DEBUG,
                        "GetTag of a class for the class extras of OBJECT_DUMP") &&
            (t & TAG_ID_MASK) != 0 && (t & TAG_ID_MASK) != w->hook_id) {
            jlong cid = t & TAG_ID_MASK;
            struct extra *e;
            HASH_FIND(hh, s->by_id, &cid, sizeof cid, e);
            if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) {
                e->id = cid;
                db_init(&e->cp, 64);
                HASH_ADD(hh, s->by_id, id, sizeof e->id, e);
                (*jni)->SetObjectArrayElement(jni, arr, k++, cs[i]);
            }
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
    struct build b = {.w = w, .s = s};
    if (arr != NULL && k > 0) {
        jvmtiHeapCallbacks hc;
        memset(&hc, 0, sizeof hc);
        hc.heap_reference_callback = extras_cb;
        shim_crit_begin(); /* as run_walk */
        ok = jvmti_ok_at((*g_shim.jvmti)->FollowReferences(g_shim.jvmti, 0, NULL, arr, &hc, &b),
                         LOG_WARN, "FollowReferences for the class extras of OBJECT_DUMP (each "
                         "class then walks alone)");
        shim_crit_end();
    }
    size_t bytes = 0;
    struct extra *e, *tmp;
    HASH_ITER(hh, s->by_id, e, tmp) {
        if (e->cp.oom)
            ok = false; /* out of memory: not kept, rather than kept short */
        bytes += sizeof *e + e->cp.cap;
    }
    if (pushed)
        (*jni)->PopLocalFrame(jni, NULL);
    if (!ok) {
        set_free(s);
        return NULL;
    }
    log_info("OBJECT_DUMP: kept the constant-pool entries, signers and protection domains of "
             "%d classes (%zu entries, %zu bytes) in %.0f ms", k, b.entries, bytes,
             (now_s() - t0) * 1e3);
    return s;
}

/* Copy the kept extras of class id into w (signers, protection domain, constant pool).
 * False if the current set has none for it. */
static bool take(struct walk *w, jlong id)
{
    bool found = false;
    pthread_mutex_lock(&extras_lock);
    if (set_valid(current)) {
        struct extra *e;
        HASH_FIND(hh, current->by_id, &id, sizeof id, e);
        w->cp.len = 0;
        if (e != NULL)
            db_bytes(&w->cp, e->cp.p, e->cp.len);
        found = e != NULL && !w->cp.oom;
        /* Out of memory: nothing half copied for the walk that then runs instead. */
        w->signers_id = found ? e->signers_id : 0;
        w->pd_id = found ? e->pd_id : 0;
        w->n_cp = found ? e->n_cp : 0;
        if (!found)
            w->cp.len = 0;
    }
    pthread_mutex_unlock(&extras_lock);
    return found;
}

bool class_extras_take(struct walk *w, jlong id)
{
    if (take(w, id))
        return true;
    pthread_mutex_lock(&extras_lock);
    bool have = set_valid(current);
    pthread_mutex_unlock(&extras_lock);
    if (have)
        return false; /* a class loaded since the set was built */
    struct extras_set *s = build(w);
    if (s == NULL)
        return false;
    pthread_mutex_lock(&extras_lock);
    struct extras_set *old = NULL;
    if (set_valid(current)) {
        old = s; /* another thread installed one meanwhile */
    } else {
        old = current;
        current = s;
    }
    pthread_mutex_unlock(&extras_lock);
    set_free(old);
    return take(w, id);
}
