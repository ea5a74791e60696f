/* layout.c — the class layouts a heap or object dump writes its records by.
 *
 * Field references and primitive fields come from JVMTI with its field index (interface
 * fields of the whole hierarchy first, then each class's fields from java.lang.Object down,
 * in GetClassFields order); a class's layout maps them to JVMPI's order: the class's own
 * fields in reverse declaration order, then its superclass's, and so on, the order
 * CLASS_LOAD lists them in. The layout also gives the instance size a CLASS_DUMP names,
 * computed from the fields (12-byte header, 4-byte references: compressed oops and class
 * pointers, the default; 8-aligned). Layouts are made before the walk, with JNI and JVMTI,
 * into the walk's table (a hash, then an open-addressing index for the per-record lookup),
 * and those of prepared classes are kept between dumps (layout_cache).
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "dumps/internal.h"

#include <stdlib.h>
#include <string.h>

/* Layouts of prepared classes outlive a dump: a class's fields, supers and interfaces never
 * change (RedefineClasses may not change them), and ids are never reused, so a layout made
 * once is right for every later dump: a second heap dump and every OBJECT_DUMP skip the
 * JVMTI field queries that would be most of an OBJECT_DUMP's time. The walk's records borrow
 * the cached field arrays. Entries stay after their class is unloaded (a few hundred bytes
 * per class ever dumped). layout_lock is a leaf. */
static struct hclass *layout_cache;
static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;

static bool layout_cached(jlong id, struct hclass *out)
{
    struct hclass *c;
    pthread_mutex_lock(&layout_lock);
    HASH_FIND(hh, layout_cache, &id, sizeof id, c);
    if (c != NULL) {
        *out = *c;
        memset(&out->hh, 0, sizeof out->hh);
        out->stat_types = NULL;
        out->borrowed = true;
    }
    pthread_mutex_unlock(&layout_lock);
    return c != NULL;
}

/* Keep a copy of hc's layout; hc then borrows the cache's arrays. */
static void layout_keep(struct hclass *hc)
{
    struct hclass *c = malloc(sizeof *c);
    if (c == NULL)
        return;
    *c = *hc;
    memset(&c->hh, 0, sizeof c->hh);
    c->stat_types = NULL;
    pthread_mutex_lock(&layout_lock);
    struct hclass *old;
    HASH_FIND(hh, layout_cache, &c->id, sizeof c->id, old);
    if (old == NULL) {
        HASH_ADD(hh, layout_cache, id, sizeof c->id, c);
        hc->borrowed = true;
    }
    pthread_mutex_unlock(&layout_lock);
    if (old != NULL)
        free(c); /* another dump kept it first; hc keeps its own arrays */
}

static size_t ctab_slot(jlong id, size_t mask)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 24) & mask;
}

struct hclass *hclass_find(struct walk *w, jlong id)
{
    if (w->ctab == NULL) {
        struct hclass *c;
        HASH_FIND(hh, w->classes, &id, sizeof id, c);
        return c;
    }
    for (size_t i = ctab_slot(id, w->cmask);; i = (i + 1) & w->cmask) {
        struct hclass *c = w->ctab[i];
        if (c == NULL || c->id == id)
            return c;
    }
}

/* After build_classes: the open-addressing index, at most half full. */
void index_classes(struct walk *w)
{
    size_t n = HASH_COUNT(w->classes), cap = 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    w->ctab = calloc(cap, sizeof *w->ctab);
    if (w->ctab == NULL)
        return; /* hclass_find falls back to the hash */
    w->cmask = cap - 1;
    for (struct hclass *c = w->classes; c != NULL; c = c->hh.next) {
        size_t i = ctab_slot(c->id, w->cmask);
        while (w->ctab[i] != NULL)
            i = (i + 1) & w->cmask;
        w->ctab[i] = c;
    }
}

/* ---- class layouts (before the walk, with JNI and JVMTI) ---- */

static void collect_interfaces(JNIEnv *jni, jclass c, jclass **seen, jint *n, jint *cap)
{
    jint ni = 0;
    jclass *is = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, c, &ni, &is),
                     LOG_DEBUG, "GetImplementedInterfaces for a dump's class layout"))
        return;
    for (jint i = 0; i < ni; i++) {
        bool dup = false;
        for (jint k = 0; k < *n && !dup; k++)
            dup = (*jni)->IsSameObject(jni, (*seen)[k], is[i]);
        if (!dup) {
            if (*n == *cap) {
                jint nc = *cap ? *cap * 2 : 8;
                jclass *p = realloc(*seen, sizeof *p * (size_t)nc);
                if (p == NULL)
                    continue;
                *seen = p;
                *cap = nc;
            }
            (*seen)[(*n)++] = is[i];
            collect_interfaces(jni, is[i], seen, n, cap);
        }
    }
    jvmti_free(g_shim.jvmti, is);
}

static jint field_count(jclass c)
{
    jint n = 0;
    jfieldID *fs = NULL;
    /* A class not prepared yet has no fields to list (CLASS_NOT_PREPARED). */
    if (!jvmti_ok_at((*g_shim.jvmti)->GetClassFields(g_shim.jvmti, c, &n, &fs), LOG_DEBUG,
                     "GetClassFields for a dump's class layout"))
        return 0;
    jvmti_free(g_shim.jvmti, fs);
    return n;
}

static char sig_type(const char *sig)
{
    return (sig[0] == 'L' || sig[0] == '[') ? 'L' : sig[0];
}

static void layout_class(JNIEnv *jni, struct hclass *hc, jclass cls)
{
    jvmtiEnv *j = g_shim.jvmti;
    /* The superclass chain, bottom (cls) first. */
    jclass chain[256];
    jint depth = 0;
    chain[depth++] = (*jni)->NewLocalRef(jni, cls);
    while (depth < 256) {
        jclass s = (*jni)->GetSuperclass(jni, chain[depth - 1]);
        if (s == NULL)
            break;
        chain[depth++] = s;
    }
    /* Interface fields of the whole hierarchy come first in JVMTI's index space. */
    jclass *ifs = NULL;
    jint nif = 0, capif = 0, iface_fields = 0;
    for (jint d = 0; d < depth; d++)
        collect_interfaces(jni, chain[d], &ifs, &nif, &capif);
    for (jint k = 0; k < nif; k++) {
        iface_fields += field_count(ifs[k]);
        (*jni)->DeleteLocalRef(jni, ifs[k]);
    }
    free(ifs);
    jint direct = 0;
    jclass *dis = NULL;
    if (jvmti_ok_at((*j)->GetImplementedInterfaces(j, cls, &direct, &dis), LOG_DEBUG,
                    "GetImplementedInterfaces for a dump's class layout")) {
        for (jint k = 0; k < direct; k++)
            (*jni)->DeleteLocalRef(jni, dis[k]);
        jvmti_free(j, dis);
    }
    hc->num_interfaces = direct;
    if (depth > 1)
        hc->super_id = ids_tag(ids_of(jni, chain[1]));

    /* base[d]: index of the first field of chain[d] = interface fields + fields of the
     * classes above it. */
    jint base[256], total = iface_fields;
    for (jint d = depth - 1; d >= 0; d--) {
        base[d] = total;
        total += field_count(chain[d]);
    }
    hc->nslots = total;
    hc->inst = calloc(total ? (size_t)total : 1, sizeof *hc->inst);
    hc->stat = calloc(total ? (size_t)total : 1, sizeof *hc->stat);
    jlong computed = 12;
    for (jint d = 0; d < depth && hc->inst && hc->stat; d++) {
        jint nf = 0;
        jfieldID *fs = NULL;
        if (!jvmti_ok_at((*j)->GetClassFields(j, chain[d], &nf, &fs), LOG_DEBUG,
                         "GetClassFields for a dump's class layout"))
            continue;
        for (jint i = nf - 1; i >= 0; i--) { /* reverse declaration order */
            char *name = NULL, *sig = NULL;
            jint mods = 0;
            if (!jvmti_ok_at((*j)->GetFieldName(j, chain[d], fs[i], &name, &sig, NULL),
                             LOG_DEBUG, "GetFieldName for a dump's class layout"))
                continue;
            jvmti_ignore((*j)->GetFieldModifiers(j, chain[d], fs[i], &mods),
                         "GetFieldModifiers for a dump's class layout: an instance field then");
            struct hfield f = {base[d] + i, sig_type(sig), fs[i]};
            if (mods & 0x0008) {
                if (d == 0)
                    hc->stat[hc->n_stat++] = f;
            } else {
                hc->inst[hc->n_inst++] = f;
                computed += f.type == 'L' ? 4 : type_size(f.type); /* compressed oops */
            }
            jvmti_free(j, name);
            jvmti_free(j, sig);
        }
        jvmti_free(j, fs);
    }
    hc->instance_size = (computed + 7) & ~7LL;
    for (jint d = 0; d < depth; d++)
        (*jni)->DeleteLocalRef(jni, chain[d]);
}

/* The layout record of one class, added to the walk's table (once per class). */
void build_class(struct walk *w, jclass cls, jclass class_class)
{
    JNIEnv *jni = w->jni;
    jobjectID id = classes_id_announced(jni, cls);
    struct hclass *hc = NULL;
    if (id != NULL)
        HASH_FIND(hh, w->classes, &(jlong){ids_tag(id)}, sizeof(jlong), hc);
    if (hc != NULL || id == NULL || (hc = calloc(1, sizeof *hc)) == NULL)
        return;
    if (layout_cached(ids_tag(id), hc)) {
        if (hc->is_class_class)
            w->class_class_id = hc->id;
        HASH_ADD(hh, w->classes, id, sizeof hc->id, hc);
        return;
    }
    (*jni)->PushLocalFrame(jni, 32);
    hc->id = ids_tag(id);
    jint st = 0;
    jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st),
                 "GetClassStatus for a dump's class layout: an unprepared class then");
    char *sig = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL),
                 "GetClassSignature for a dump's class layout: an instance class then");
    if (st & JVMTI_CLASS_STATUS_PRIMITIVE) {
        hc->kind = HC_OTHER;
    } else if (sig != NULL && sig[0] == '[') {
        jint is_array = 0;
        jobjectID elem = NULL;
        classes_alloc_info(jni, cls, &is_array, &elem);
        hc->kind = is_array == JVMPI_CLASS ? HC_OBJ_ARRAY : HC_PRIM_ARRAY;
        hc->elem_type = sig[1];
        hc->elem_id = ids_tag(elem);
    } else {
        hc->kind = HC_INSTANCE;
        hc->linked = (st & JVMTI_CLASS_STATUS_PREPARED) != 0;
        layout_class(jni, hc, cls);
        hc->is_class_class = class_class != NULL && (*jni)->IsSameObject(jni, cls, class_class);
        if (hc->is_class_class)
            w->class_class_id = hc->id;
    }
    /* Heap fillers: the dead space JDK 25 formats as objects of its own classes
     * (jdk.internal.vm.FillerObject, FillerElement[]). No Java object; HotSpot had none. */
    hc->filler = sig != NULL && (strncmp(sig, "Ljdk/internal/vm/Filler", 23) == 0 ||
                                 strncmp(sig, "[Ljdk/internal/vm/Filler", 24) == 0);
    if (sig)
        jvmti_free(g_shim.jvmti, sig);
    /* Before preparation JVMTI lists no fields: such a layout is for this dump only. An
     * array class's element id is cached only once known. */
    if ((st & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY)) &&
        (hc->kind != HC_INSTANCE || (hc->inst != NULL && hc->stat != NULL)) &&
        (hc->kind != HC_OBJ_ARRAY || hc->elem_id != 0))
        layout_keep(hc);
    HASH_ADD(hh, w->classes, id, sizeof hc->id, hc);
    (*jni)->PopLocalFrame(jni, NULL);
}

/* Class layouts before the walk. A heap dump needs every loaded class's; OBJECT_DUMP
 * (single) only those its one record can name: the object's class, java.lang.Class (a
 * primitive mirror's fields, and whether the object is a class), and, for a class mirror,
 * that class. Building every layout would cost an OBJECT_DUMP 10-30 ms with a few thousand
 * classes loaded. */
bool build_classes(struct walk *w, jobject single)
{
    JNIEnv *jni = w->jni;
    jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
    if (single != NULL) {
        jclass oc = (*jni)->GetObjectClass(jni, single);
        if (class_class != NULL)
            build_class(w, class_class, class_class);
        if (oc != NULL)
            build_class(w, oc, class_class);
        jint st = 0;
        /* Not a primitive mirror's: GetLoadedClasses, which the heap dump's table comes
         * from, never lists those, and their record is an instance of java.lang.Class. */
        /* Nor a Class object that is no class (classes_mirror_loaded): no class function
         * may be given it, and its record is an instance of java.lang.Class. */
        if (oc != NULL && class_class != NULL && (*jni)->IsSameObject(jni, oc, class_class) &&
            classes_mirror_loaded(jni, single) &&
            jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, (jclass)single, &st),
                        LOG_DEBUG, "GetClassStatus of an OBJECT_DUMP's class") &&
            !(st & JVMTI_CLASS_STATUS_PRIMITIVE))
            build_class(w, (jclass)single, class_class);
        if (oc != NULL)
            (*jni)->DeleteLocalRef(jni, oc);
        if (class_class != NULL)
            (*jni)->DeleteLocalRef(jni, class_class);
        return true;
    }
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses for a heap dump"))
        return false;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        build_class(w, cs[i], class_class);
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
    if (class_class != NULL)
        (*jni)->DeleteLocalRef(jni, class_class);
    return true;
}

void free_classes(struct walk *w)
{
    free(w->ctab);
    w->ctab = NULL;
    struct hclass *c, *tmp;
    HASH_ITER(hh, w->classes, c, tmp) {
        HASH_DEL(w->classes, c);
        if (!c->borrowed) {
            free(c->inst);
            free(c->stat);
        }
        free(c->stat_types);
        free(c);
    }
}
