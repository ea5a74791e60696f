/* walk.c — levels 1 and 2 of a heap dump (and OBJECT_DUMP of a class mirror): the
 * FollowReferences walk, and the mirrors of the primitive classes.
 *
 * The walk's callbacks hand each reference to the record of its referrer (records.c).
 * Roots are buffered, so that they come out in HotSpot's order: first the per-thread ones,
 * JAVA_FRAME and JNI_LOCAL (obj, JNIEnv*, u4 frame number counted N..1 from the top frame,
 * as HotSpot did), then the others in the order JVMTI reports them (HotSpot sorted each kind
 * by address; the order carries no meaning): JNI_GLOBAL (obj, handle: JVMTI does not tell
 * the handle, so it is NULL), STICKY_CLASS for system classes, MONITOR_USED. JVMTI's THREAD
 * and OTHER roots get no record: HotSpot emitted only these six kinds (never THREAD_OBJ,
 * UNKNOWN or THREAD_BLOCK); their objects are dumped all the same.
 *
 * Mirrors of primitive classes (int.class, ...) are instances of java.lang.Class, as in
 * HotSpot; JVMTI's walk reports them only as roots and referees, so their fields are read
 * with JNI before the walk (prim_mirrors) and their records written after it
 * (prim_records).
 */
#include "core/api.h"
#include "core/ids.h"
#include "core/worker.h"
#include "dumps/internal.h"

#include <stdlib.h>
#include <string.h>

static JNIEnv *thread_env(struct walk *w, jlong thread_tag, jint *frames)
{
    for (size_t i = 0; i < w->nthr; i++)
        if (w->thr_tags[i] == (thread_tag & TAG_ID_MASK)) {
            *frames = w->thr_frames[i];
            return w->thr_envs[i];
        }
    *frames = 0;
    return NULL;
}

/* ---- mirrors of primitive classes ---- */

/* A field of o (an object, or a class for a static field) as the walk would have reported
 * it: the raw bits of a primitive; for a reference, 0 and the referee as a new local
 * reference in *ref (NULL for null), which the caller turns into an id. */
jlong jni_value(JNIEnv *jni, jobject o, const struct hfield *f, bool is_static,
                       jobject *ref)
{
#define JNI_GET(T) (is_static ? (*jni)->GetStatic##T##Field(jni, (jclass)o, f->fid) \
                              : (*jni)->Get##T##Field(jni, o, f->fid))
    *ref = NULL;
    switch (f->type) {
    case 'Z': return JNI_GET(Boolean);
    case 'B': return (uint8_t)JNI_GET(Byte);
    case 'C': return JNI_GET(Char);
    case 'S': return (uint16_t)JNI_GET(Short);
    case 'I': return (uint32_t)JNI_GET(Int);
    case 'J': return JNI_GET(Long);
    case 'F': {
        jfloat x = JNI_GET(Float);
        uint32_t bits;
        memcpy(&bits, &x, 4);
        return bits;
    }
    case 'D': {
        jdouble x = JNI_GET(Double);
        jlong v;
        memcpy(&v, &x, 8);
        return v;
    }
    default:
        *ref = JNI_GET(Object);
        return 0;
    }
#undef JNI_GET
}

/* A field of obj as the walk would have reported it: raw bits, or the referee's id. */
static jlong jni_field(JNIEnv *jni, jobject obj, const struct hfield *f)
{
    jobject r;
    jlong v = jni_value(jni, obj, f, false, &r);
    if (r != NULL) {
        v = ids_tag(ids_of(jni, r));
        (*jni)->DeleteLocalRef(jni, r);
    }
    return v;
}

/* Before the walk, and before the other threads are held (tagging takes a lock a held
 * thread might own): the nine mirrors (int.class ... void.class), from
 * Class.getPrimitiveClass, which is native and runs no Java code, and at levels 1 and 2
 * their fields. The walk does not follow those fields, so an object reachable only from a
 * primitive mirror (a cached name, reflection data) is named but has no record. */
void prim_mirrors(struct walk *w)
{
    static const char *const names[9] = {"boolean", "byte", "char", "short", "int", "long",
                                         "float", "double", "void"};
    JNIEnv *jni = w->jni;
    w->prim_min = 1;
    w->prim_max = 0;
    struct hclass *cc = hclass_find(w, w->class_class_id);
    jclass ccl = (*jni)->FindClass(jni, "java/lang/Class");
    jmethodID m = ccl ? (*jni)->GetStaticMethodID(jni, ccl, "getPrimitiveClass",
                                                  "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
    if (m == NULL || cc == NULL) {
        (*jni)->ExceptionClear(jni);
        if (ccl)
            (*jni)->DeleteLocalRef(jni, ccl);
        log_warn("heap dump: no java.lang.Class layout or Class.getPrimitiveClass: "
                 "primitive mirrors are not dumped");
        return;
    }
    bool fields = w->level >= 1 && cc->n_inst > 0;
    if (fields && (w->prim_vals = calloc(9 * (size_t)cc->n_inst, sizeof *w->prim_vals)) == NULL) {
        w->failed = true;
        return;
    }
    for (int i = 0; i < 9; i++) {
        jstring n = (*jni)->NewStringUTF(jni, names[i]);
        shim_own_java_begin();
        jobject c = n ? (*jni)->CallStaticObjectMethod(jni, ccl, m, n) : NULL;
        shim_own_java_end();
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        if (n)
            (*jni)->DeleteLocalRef(jni, n);
        jobjectID id = c ? ids_of(jni, c) : NULL;
        if (id != NULL) {
            jlong t = ids_tag(id);
            for (jint k = 0; fields && k < cc->n_inst; k++)
                w->prim_vals[(size_t)w->n_prims * (size_t)cc->n_inst + (size_t)k] =
                    jni_field(jni, c, &cc->inst[k]);
            w->prim_ids[w->n_prims++] = t;
            w->prims_unseen++;
            if (w->prim_min > w->prim_max) {
                w->prim_min = w->prim_max = t;
            } else {
                if (t < w->prim_min) w->prim_min = t;
                if (t > w->prim_max) w->prim_max = t;
            }
        }
        if (c)
            (*jni)->DeleteLocalRef(jni, c);
    }
    (*jni)->DeleteLocalRef(jni, ccl);
}

static void prim_mark(struct walk *w, jlong id)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == id && !w->prim_seen[i]) {
            w->prim_seen[i] = true;
            w->prims_unseen--;
        }
}

/* After the walk: one record per mirror the walk reached, or (OBJECT_DUMP) for the
 * requested mirror: an instance of java.lang.Class with the fields read before the walk. */
void prim_records(struct walk *w)
{
    struct hclass *cc = hclass_find(w, w->class_class_id);
    if (cc == NULL)
        return;
    for (int i = 0; i < w->n_prims; i++) {
        if (w->single ? w->prim_ids[i] != w->single_tag : !w->prim_seen[i])
            continue;
        finish_current(w);
        w->cur_tag = w->prim_ids[i];
        w->cur_class = cc->id;
        w->cur_size = 0;
        w->cur_len = -1;
        for (jint k = 0; w->prim_vals != NULL && k < cc->n_inst; k++) {
            struct hfield *f = &cc->inst[k];
            if (ensure_slots(w, f->index + 1)) {
                w->slots[f->index] = w->prim_vals[(size_t)i * (size_t)cc->n_inst + (size_t)k];
                w->slot_gen[f->index] = w->gen;
            }
        }
        finish_current(w);
    }
}

static jint JNICALL ref_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                           jlong class_tag, jlong referrer_class_tag, jlong size,
                           jlong *tag_ptr, jlong *referrer_tag_ptr, jint length, void *ud)
{
    struct walk *w = ud;
    if (w->hook_id != 0 && (*tag_ptr & TAG_ID_MASK) == w->hook_id)
        return 0; /* the probe class: not shown, not followed */
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    if (length >= 0)
        len_put(w, id, length); /* the referee is an array: its record needs the length */
    if (w->prims_unseen > 0 && id >= w->prim_min && id <= w->prim_max)
        prim_mark(w, id);
    if (w->single) {
        /* OBJECT_DUMP: only references from the initial object; visit nothing else. */
        if (referrer_tag_ptr == NULL || (*referrer_tag_ptr & TAG_ID_MASK) != w->single_tag)
            return 0;
    }
    if (referrer_tag_ptr == NULL) {
        /* A root. */
        if (w->level == 0 || w->single)
            return JVMTI_VISIT_OBJECTS;
        jint frames = 0;
        JNIEnv *env;
        switch (kind) {
        case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
            env = thread_env(w, info->stack_local.thread_tag, &frames);
            if (env != NULL && env == worker_env())
                break; /* the shim's own thread is not shown */
            db_u1(&w->thread_roots, JVMPI_GC_ROOT_JAVA_FRAME);
            put_id(&w->thread_roots, id);
            db_ptr(&w->thread_roots, env);
            db_u4(&w->thread_roots, frames > 0 ? (uint32_t)(frames - info->stack_local.depth) : (uint32_t)-1);
            break;
        case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
            env = thread_env(w, info->jni_local.thread_tag, &frames);
            if (env != NULL && env == worker_env())
                break;
            db_u1(&w->thread_roots, JVMPI_GC_ROOT_JNI_LOCAL);
            put_id(&w->thread_roots, id);
            db_ptr(&w->thread_roots, env);
            db_u4(&w->thread_roots, frames > 0 ? (uint32_t)(frames - info->jni_local.depth) : (uint32_t)-1);
            break;
        case JVMTI_HEAP_REFERENCE_JNI_GLOBAL:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_JNI_GLOBAL);
            put_id(&w->other_roots, id);
            db_ptr(&w->other_roots, NULL);
            break;
        case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_STICKY_CLASS);
            put_id(&w->other_roots, id);
            break;
        case JVMTI_HEAP_REFERENCE_MONITOR:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_MONITOR_USED);
            put_id(&w->other_roots, id);
            break;
        default:
            /* THREAD (a live thread's object) and OTHER: HotSpot wrote no root record for
             * these (THREAD_OBJ and UNKNOWN were defined but never emitted, and a strict
             * reader stops at them), so none is written; the objects are dumped all the
             * same, and a thread object is named by the JAVA_FRAME roots of the frames
             * that hold it. */
            break;
        }
        return JVMTI_VISIT_OBJECTS;
    }
    /* A reference from an object: it belongs to the referrer's record. */
    switch_to(w, referrer_tag_ptr, referrer_class_tag, 0, -1);
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_CLASS:
        w->cur_class = class_tag == 0 ? w->cur_class : (referrer_class_tag & TAG_ID_MASK);
        break;
    case JVMTI_HEAP_REFERENCE_FIELD:
    case JVMTI_HEAP_REFERENCE_STATIC_FIELD:
        if (ensure_slots(w, info->field.index + 1)) {
            w->slots[info->field.index] = id;
            w->slot_gen[info->field.index] = w->gen;
        }
        break;
    case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT:
        if (ensure_elems(w, info->array.index + 1)) {
            w->elems[info->array.index] = id;
            if (info->array.index >= w->elems_used)
                w->elems_used = info->array.index + 1;
        }
        break;
    case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
        db_u2(&w->cp, (uint16_t)info->constant_pool.index);
        db_u1(&w->cp, JVMPI_CLASS);
        put_id(&w->cp, id);
        w->n_cp++;
        break;
    case JVMTI_HEAP_REFERENCE_SUPERCLASS: w->super_id = id; break;
    case JVMTI_HEAP_REFERENCE_CLASS_LOADER: w->loader_id = id; break;
    case JVMTI_HEAP_REFERENCE_SIGNERS: w->signers_id = id; break;
    case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN: w->pd_id = id; break;
    case JVMTI_HEAP_REFERENCE_INTERFACE:
        if (w->n_ifaces == w->ifaces_cap) {
            jint c = w->ifaces_cap ? w->ifaces_cap * 2 : 8;
            jlong *p = realloc(w->ifaces, sizeof *p * (size_t)c);
            if (p == NULL)
                break;
            w->ifaces = p;
            w->ifaces_cap = c;
        }
        w->ifaces[w->n_ifaces++] = id;
        break;
    default:
        break;
    }
    return w->single ? 0 : JVMTI_VISIT_OBJECTS;
}

static jint JNICALL prim_field_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                  jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
                                  jvmtiPrimitiveType type, void *ud)
{
    (void)kind; (void)type;
    struct walk *w = ud;
    if (w->single && (*object_tag_ptr & TAG_ID_MASK) != w->single_tag)
        return 0;
    switch_to(w, object_tag_ptr, object_class_tag, 0, -1);
    if (ensure_slots(w, info->field.index + 1)) {
        w->slots[info->field.index] = value.j; /* raw bits; put_value narrows by type */
        switch (type) {
        case JVMTI_PRIMITIVE_TYPE_BOOLEAN: w->slots[info->field.index] = value.z; break;
        case JVMTI_PRIMITIVE_TYPE_BYTE: w->slots[info->field.index] = (uint8_t)value.b; break;
        case JVMTI_PRIMITIVE_TYPE_CHAR: w->slots[info->field.index] = value.c; break;
        case JVMTI_PRIMITIVE_TYPE_SHORT: w->slots[info->field.index] = (uint16_t)value.s; break;
        case JVMTI_PRIMITIVE_TYPE_INT: w->slots[info->field.index] = (uint32_t)value.i; break;
        case JVMTI_PRIMITIVE_TYPE_FLOAT: {
            uint32_t bits;
            memcpy(&bits, &value.f, 4);
            w->slots[info->field.index] = bits;
            break;
        }
        default: break; /* long, double: all 64 bits */
        }
        w->slot_gen[info->field.index] = w->gen;
    }
    return 0;
}

static jint JNICALL prim_array_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                  jvmtiPrimitiveType type, const void *elements, void *ud)
{
    struct walk *w = ud;
    if (w->single && (*tag_ptr & TAG_ID_MASK) != w->single_tag)
        return 0;
    switch_to(w, tag_ptr, class_tag, size, count);
    w->cur_len = count;
    w->cur_size = size;
    int es = 1;
    switch (type) {
    case JVMTI_PRIMITIVE_TYPE_CHAR: case JVMTI_PRIMITIVE_TYPE_SHORT: es = 2; break;
    case JVMTI_PRIMITIVE_TYPE_INT: case JVMTI_PRIMITIVE_TYPE_FLOAT: es = 4; break;
    case JVMTI_PRIMITIVE_TYPE_LONG: case JVMTI_PRIMITIVE_TYPE_DOUBLE: es = 8; break;
    default: es = 1; break;
    }
    if (w->level >= 2) {
        /* One buffer for the whole dump, grown by doubling: no malloc per array. */
        size_t need = (size_t)count * (size_t)es;
        if (need > w->prim_copy_cap) {
            size_t cap = w->prim_copy_cap ? w->prim_copy_cap : 4096;
            while (cap < need)
                cap *= 2;
            unsigned char *p = realloc(w->prim_copy, cap);
            if (p == NULL) {
                w->failed = true;
                return 0;
            }
            w->prim_copy = p;
            w->prim_copy_cap = cap;
        }
        memcpy(w->prim_copy, elements, need);
        w->prim_copy_len = need;
    }
    return 0;
}

bool run_walk(struct walk *w, jobject initial)
{
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_reference_callback = ref_cb;
    /* Primitive field values only where they are written (level 2): each callback costs
     * JVMTI a tag lookup, and every object is seen anyway as the referrer of its class.
     * Arrays report their length through the array callback, so it stays at level 1. */
    if (w->level >= 2 || w->single)
        hc.primitive_field_callback = prim_field_cb;
    if (w->level >= 1 || w->single)
        hc.array_primitive_value_callback = prim_array_cb;
    /* A heap walk of every thread's objects starts with HotSpot's escape barrier for every
     * thread; a walker suspended inside it would make every thread's next JVMTI call wait
     * for ever, the resume included (measured on JDK 25, memory/gc.c flush_frees). So the walk
     * is a critical section (shim.h): a JVMPI suspender leaves the walker running. */
    shim_crit_begin();
    jvmtiError err = (*g_shim.jvmti)->FollowReferences(g_shim.jvmti, 0, NULL, initial, &hc, w);
    shim_crit_end();
    bool ok = jvmti_ok(err, "FollowReferences for a heap dump");
    finish_current(w);
    return ok;
}
