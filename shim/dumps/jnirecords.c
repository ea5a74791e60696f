/* jnirecords.c — dump records read with JNI, for objects the walk does not write.
 *
 * An OBJECT_DUMP of an instance or an array, an OBJECT_DUMP of a class not yet linked, and
 * the objects a heap dump's walk did not reach (iterate.c) get their record from their
 * fields, elements or class facts read in place, through the same record writer as the
 * walk's (records.c), with references given the ids the walk would give them.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "dumps/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- OBJECT_DUMP without a heap walk ----
 *
 * FollowReferences from one object still costs the whole heap on JDK 17 (its object marker
 * restores every object's mark word when the walk ends: 8 ms per call with 1 M objects).
 * An instance's or an array's record needs only its own fields or elements, which JNI
 * reads in place, as HotSpot's OBJECT_DUMP read them in place without stopping the other
 * threads. A class mirror's record also needs what only the walk reports (resolved
 * constant-pool entries, signers, protection domain): one walk over all classes keeps those
 * for the requests after it (classextras.c), and the rest is read here (mirror_by_jni). */

/* The id of obj's class (never waits for a definition: see build_classes), or 0. */
jlong class_id_of(JNIEnv *jni, jobject obj)
{
    jclass oc = (*jni)->GetObjectClass(jni, obj);
    jobjectID cid = oc ? classes_id_announced(jni, oc) : NULL;
    if (oc)
        (*jni)->DeleteLocalRef(jni, oc);
    return ids_tag(cid);
}

/* The id of a referenced object, as tag_or_new gives it in the walk. */
static jlong jni_walk_field(struct walk *w, jobject o, const struct hfield *f, bool is_static);

static jlong jni_ref_id(struct walk *w, jobject r)
{
    if (r == NULL)
        return 0;
    JNIEnv *jni = w->jni;
    /* A dormant object of the CDS archive, of a class this run never loaded, has no Class
     * object: no Java object, so a null reference, as in HotSpot's own heap dumper (which
     * masks them); its reference is dropped at once (internal.h, "never a reference"). */
    jclass rc = (*jni)->GetObjectClass(jni, r);
    if (rc == NULL)
        return 0;
    (*jni)->DeleteLocalRef(jni, rc);
    jlong t = 0;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, r, &t), LOG_DEBUG,
                     "GetTag of an object a dump reads with JNI"))
        return 0;
    if (t != 0)
        return (t & TAG_ID_MASK) == w->hook_id ? 0 : (t & TAG_ID_MASK);
    /* An object whose class JVMTI cannot name is a dormant object of the CDS archive (of a
     * class this run has not loaded): no Java object, so no id (unreached_write). */
    jlong ctag = class_id_of(jni, r);
    if (ctag == 0)
        return 0;
    if (!w->announce || !fresh_room(w))
        return ids_tag(ids_of(jni, r));
    jlong size = 0;
    jvmti_ignore((*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, r, &size),
                 "GetObjectSize of an object a dump names first: its OBJECT_ALLOC says 0");
    jobjectID id = ids_claim_allocated(jni, r, size, &t);
    if (t != 0)
        fresh_add(w, t, ctag, size); /* announced before the dump is delivered */
    return ids_tag(id);
}

/* The record of `obj` (id), an instance or an array of class hc (not java.lang.Class), read
 * with JNI. */
void record_by_jni(struct walk *w, jobject obj, jlong id, struct hclass *hc)
{
    JNIEnv *jni = w->jni;
    w->cur_tag = id;
    w->cur_class = hc->id;
    w->cur_size = 0;
    w->cur_len = -1;
    if (hc->kind == HC_INSTANCE) {
        if (!ensure_slots(w, hc->nslots + 1)) {
            w->failed = true;
            return;
        }
        for (jint i = 0; i < hc->n_inst; i++) {
            struct hfield *f = &hc->inst[i];
            w->slots[f->index] = jni_walk_field(w, obj, f, false);
            w->slot_gen[f->index] = w->gen;
        }
    } else {
        jint len = (*jni)->GetArrayLength(jni, obj);
        w->cur_len = len;
        if (hc->kind == HC_OBJ_ARRAY) {
            if (len > 0 && !ensure_elems(w, len)) {
                w->failed = true;
                return;
            }
            for (jint i = 0; i < len; i++) {
                jobject e = (*jni)->GetObjectArrayElement(jni, obj, i);
                w->elems[i] = jni_ref_id(w, e);
                if (e)
                    (*jni)->DeleteLocalRef(jni, e);
            }
            w->elems_used = len;
        } else {
            size_t es = (size_t)type_size(hc->elem_type), need = (size_t)len * es;
            if (need > w->prim_copy_cap) {
                unsigned char *p = realloc(w->prim_copy, need);
                if (p == NULL) {
                    w->failed = true;
                    return;
                }
                w->prim_copy = p;
                w->prim_copy_cap = need;
            }
            switch (hc->elem_type) {
            case 'Z': (*jni)->GetBooleanArrayRegion(jni, obj, 0, len, (jboolean *)w->prim_copy); break;
            case 'B': (*jni)->GetByteArrayRegion(jni, obj, 0, len, (jbyte *)w->prim_copy); break;
            case 'C': (*jni)->GetCharArrayRegion(jni, obj, 0, len, (jchar *)w->prim_copy); break;
            case 'S': (*jni)->GetShortArrayRegion(jni, obj, 0, len, (jshort *)w->prim_copy); break;
            case 'I': (*jni)->GetIntArrayRegion(jni, obj, 0, len, (jint *)w->prim_copy); break;
            case 'J': (*jni)->GetLongArrayRegion(jni, obj, 0, len, (jlong *)w->prim_copy); break;
            case 'F': (*jni)->GetFloatArrayRegion(jni, obj, 0, len, (jfloat *)w->prim_copy); break;
            case 'D': (*jni)->GetDoubleArrayRegion(jni, obj, 0, len, (jdouble *)w->prim_copy); break;
            default: need = 0; break;
            }
            w->prim_copy_len = need;
        }
    }
    finish_current(w);
}

/* A field of o (static: of class o) as the walk would have reported it, a reference as the
 * id the walk gives it (cf. jni_field). */
static jlong jni_walk_field(struct walk *w, jobject o, const struct hfield *f, bool is_static)
{
    jobject r;
    jlong v = jni_value(w->jni, o, f, is_static, &r);
    if (r != NULL) {
        v = jni_ref_id(w, r);
        (*w->jni)->DeleteLocalRef(w->jni, r);
    }
    return v;
}

/* The record of a Class object (id) read with JNI, for those the walk does not write: a
 * class not yet linked (JVMTI's walk skips its mirror) is an instance of java.lang.Class,
 * its fields as the program sees them, like a primitive mirror; a linked class the walk did
 * not reach (its loader unreachable, not yet unloaded) gets its CLASS_DUMP from what JNI and
 * JVMTI tell: superclass, loader, interfaces and statics (signers, protection domain and
 * resolved constant-pool entries only a walk reports: those classextras.c put in w, else
 * none); an array class's mirror has a level-0 record only. */
void mirror_by_jni(struct walk *w, jclass cls, jlong id)
{
    JNIEnv *jni = w->jni;
    struct hclass *self = hclass_find(w, id);
    struct hclass *cc = hclass_find(w, w->class_class_id);
    if (cc == NULL || (self != NULL && self->kind != HC_INSTANCE)) {
        /* No record: what classextras.c put in w must not go to the next one. */
        w->signers_id = w->pd_id = 0;
        w->cp.len = 0;
        w->n_cp = 0;
        return;
    }
    w->cur_tag = id;
    w->cur_class = cc->id;
    w->cur_size = 0;
    w->cur_len = -1;
    if (self == NULL || !self->linked) {
        if (!ensure_slots(w, cc->nslots + 1)) {
            w->failed = true;
            return;
        }
        for (jint i = 0; i < cc->n_inst; i++) {
            struct hfield *f = &cc->inst[i];
            w->slots[f->index] = jni_walk_field(w, cls, f, false);
            w->slot_gen[f->index] = w->gen;
        }
        finish_current(w);
        return;
    }
    if (!ensure_slots(w, self->nslots + 1)) {
        w->failed = true;
        return;
    }
    jobject loader = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &loader),
                 "GetClassLoader for a CLASS_DUMP read with JNI: the loader is then NULL");
    w->loader_id = jni_ref_id(w, loader);
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    jint ni = 0;
    jclass *ifs = NULL;
    if (jvmti_ok_at((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, cls, &ni, &ifs),
                    LOG_DEBUG, "GetImplementedInterfaces for a CLASS_DUMP read with JNI")) {
        for (jint i = 0; i < ni; i++) {
            if (w->n_ifaces == w->ifaces_cap) {
                jint c = w->ifaces_cap ? w->ifaces_cap * 2 : 8;
                jlong *p = realloc(w->ifaces, sizeof *p * (size_t)c);
                if (p != NULL) {
                    w->ifaces = p;
                    w->ifaces_cap = c;
                }
            }
            if (w->n_ifaces < w->ifaces_cap)
                w->ifaces[w->n_ifaces++] = jni_ref_id(w, ifs[i]);
            (*jni)->DeleteLocalRef(jni, ifs[i]);
        }
        jvmti_free(g_shim.jvmti, ifs);
    }
    for (jint i = 0; i < self->n_stat; i++) {
        struct hfield *f = &self->stat[i];
        w->slots[f->index] = jni_walk_field(w, cls, f, true);
        w->slot_gen[f->index] = w->gen;
    }
    finish_current(w);
}
