/* classes.c — the class table; CLASS_LOAD, CLASS_UNLOAD, CLASS_LOAD_HOOK; GetMethodClass.
 *
 * CLASS_LOAD comes on the defining thread, from JVMTI ClassLoad, where HotSpot posted it
 * (inside the definition, after the class's hook): JVMTI lists methods and fields only once
 * a class is prepared, so the class is linked there first (cb_class_load); a class that
 * cannot be linked there gets it at ClassPrepare, still before <clinit>. Between a class's
 * hook and its CLASS_LOAD other threads leave the announcement to its definer and wait for
 * it (pending_defs, class_rec.definer). Its payload (class_info) is built from
 * JVMTI queries: the dotted name, SourceFile (NULL when absent, as HotSpot), the count of
 * directly implemented interfaces, methods in class-file order (can_maintain_original_
 * method_order) with start_lineno = line of bci 0 and end_lineno = line of the last bci
 * (-1 for native and abstract methods, as HotSpot), and static and instance fields in
 * REVERSE declaration order — HotSpot's FieldStream order, which heap dumps also use.
 *
 * Definition before use: every event carrying a class or method id first calls
 * classes_id_announced(), which posts CLASS_LOAD to each instance that enabled it and has
 * not yet seen the class (bit per instance in the record; a thread that finds another one
 * mid-announcement waits for it, without a time limit: no claim is ever held by a thread
 * stopped at the start gate; inside a JVMPI call nothing waits for another thread or links a
 * class: see announce()). That covers classes loaded before the agent, hidden
 * classes and classes first seen on compiler or service threads. At start-up the loaded
 * classes are replayed (HotSpot did that too).
 *
 * CLASS_UNLOAD: JVMTI has no class-unload event, but a class's mirror dies with it, so the
 * mirror's tag comes back in ObjectFree. ObjectFree may not call JNI, so the unload is
 * queued for the shim's worker thread, which posts it; a CLASS_LOAD request for that id
 * inside the handler is answered from the info kept for classes of non-boot loaders (only
 * those can unload). The record is dropped after the handler returns.
 *
 * Locks: class_lock and mid_lock (leaves; held for table edits and lookups only); ann_lock
 * (a leaf; guards pending_defs, and its condition is waited on for announcements and
 * definers).
 */
#include "classes/classes.h"
#include "classes/agent_natives.h"
#include "core/api.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/report.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

/* Registered by methods/ (classes.h). */
static jclass (*up_probe_class)(void);
static void (*up_on_unload)(void);

void classes_set_probe_class(jclass (*probe_class)(void))
{
    up_probe_class = probe_class;
}

void classes_set_on_unload(void (*on_unload)(void))
{
    up_on_unload = on_unload;
}

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

static struct class_rec *by_tag;
static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;

/* CLASS_UNLOAD needs the payload of every class that may unload saved before it goes: the
 * classes prepared while it was off (that may unload) are counted, and the count at the
 * last walk of the loaded classes is kept, plus one (0: no walk yet). */
static _Atomic uint64_t prepared_unsaved, unload_walked_at;

static void note_methods_of(const jmethodID *ms, jint n, jlong class_tag);

/* ---- class_info ---- */

static void info_free(struct class_info *ci)
{
    if (ci == NULL)
        return;
    free(ci->name);
    free(ci->source);
    for (jint i = 0; i < ci->num_methods; i++) {
        free(ci->methods[i].method_name);
        free(ci->methods[i].method_signature);
    }
    for (jint i = 0; i < ci->num_statics; i++) {
        free(ci->statics[i].field_name);
        free(ci->statics[i].field_signature);
    }
    for (jint i = 0; i < ci->num_instances; i++) {
        free(ci->instances[i].field_name);
        free(ci->instances[i].field_signature);
    }
    free(ci->methods);
    free(ci->statics);
    free(ci->instances);
    free(ci);
}

static char *jvmti_strdup(char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)s);
    return d;
}

/* "Ljava/lang/String;" -> "java.lang.String"; "[I" stays "[I"; '/' -> '.' throughout,
 * as Class.getName() does. A hidden class's JVMTI name ends in ".0x..." (the only '.' an
 * internal name can have); Class.getName() writes that one as '/'. */
static char *external_name(const char *sig)
{
    size_t n = strlen(sig);
    const char *p = sig;
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        p = sig + 1;
        n -= 2;
    }
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t hidden_dot = n;
    for (size_t i = 0; i < n; i++) {
        out[i] = p[i] == '/' ? '.' : p[i];
        if (p[i] == '.')
            hidden_dot = i;
    }
    if (hidden_dot < n && sig[0] == 'L')
        out[hidden_dot] = '/';
    out[n] = '\0';
    return out;
}

/* Line of a bytecode index: the entry with the greatest start <= bci; -1 if none. */
static jint line_of(const jvmtiLineNumberEntry *t, jint n, jlocation bci)
{
    jint line = -1;
    jlocation best = -1;
    for (jint i = 0; i < n; i++)
        if (t[i].start_location <= bci && t[i].start_location > best) {
            best = t[i].start_location;
            line = t[i].line_number;
        }
    return line;
}

static void method_lines(jmethodID m, jint *start, jint *end)
{
    *start = *end = -1;
    jint n = 0;
    jvmtiLineNumberEntry *t = NULL;
    jlocation lo = 0, hi = 0;
    if ((*g_shim.jvmti)->GetLineNumberTable(g_shim.jvmti, m, &n, &t) != JVMTI_ERROR_NONE)
        return; /* native, abstract, or compiled without -g:lines */
    if ((*g_shim.jvmti)->GetMethodLocation(g_shim.jvmti, m, &lo, &hi) == JVMTI_ERROR_NONE) {
        *start = line_of(t, n, 0);
        *end = line_of(t, n, hi < 0 ? 0 : hi);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)t);
}

static struct class_info *info_build(JNIEnv *jni, jclass cls)
{
    jvmtiEnv *j = g_shim.jvmti;
    struct class_info *ci = calloc(1, sizeof *ci);
    if (ci == NULL)
        return NULL;
    char *sig = NULL;
    if (!jvmti_ok_at((*j)->GetClassSignature(j, cls, &sig, NULL), LOG_WARN,
                     "GetClassSignature for CLASS_LOAD")) {
        free(ci);
        return NULL;
    }
    ci->name = external_name(sig);
    bool is_array = sig[0] == '[';
    (*j)->Deallocate(j, (unsigned char *)sig);
    if (is_array)
        return ci; /* HotSpot: arrays have no source, interfaces, methods or fields */

    char *src = NULL;
    if ((*j)->GetSourceFileName(j, cls, &src) == JVMTI_ERROR_NONE)
        ci->source = jvmti_strdup(src);

    jint ni = 0;
    jclass *ifs = NULL;
    if ((*j)->GetImplementedInterfaces(j, cls, &ni, &ifs) == JVMTI_ERROR_NONE) {
        ci->num_interfaces = ni;
        for (jint i = 0; i < ni; i++)
            (*jni)->DeleteLocalRef(jni, ifs[i]);
        (*j)->Deallocate(j, (unsigned char *)ifs);
    }

    jint nm = 0;
    jmethodID *ms = NULL;
    if ((*j)->GetClassMethods(j, cls, &nm, &ms) == JVMTI_ERROR_NONE) {
        note_methods_of(ms, nm, ids_tag(ids_peek(cls)));
        ci->methods = calloc(nm ? nm : 1, sizeof *ci->methods);
        for (jint i = 0; ci->methods && i < nm; i++) {
            char *name = NULL, *msig = NULL;
            if ((*j)->GetMethodName(j, ms[i], &name, &msig, NULL) != JVMTI_ERROR_NONE)
                continue;
            if (name != NULL && strncmp(name, BCI_NATIVE_PREFIX, strlen(BCI_NATIVE_PREFIX)) == 0) {
                /* A native renamed by method-event instrumentation (bci.c): the agent knows
                 * the method by its wrapper, which has the original name. */
                (*j)->Deallocate(j, (unsigned char *)name);
                (*j)->Deallocate(j, (unsigned char *)msig);
                continue;
            }
            JVMPI_Method *m = &ci->methods[ci->num_methods++];
            m->method_name = jvmti_strdup(name);
            m->method_signature = jvmti_strdup(msig);
            m->method_id = ms[i];
            method_lines(ms[i], &m->start_lineno, &m->end_lineno);
        }
        (*j)->Deallocate(j, (unsigned char *)ms);
    }

    jint nf = 0;
    jfieldID *fs = NULL;
    if ((*j)->GetClassFields(j, cls, &nf, &fs) == JVMTI_ERROR_NONE) {
        ci->statics = calloc(nf ? nf : 1, sizeof *ci->statics);
        ci->instances = calloc(nf ? nf : 1, sizeof *ci->instances);
        /* JVMTI lists fields in declaration order; JVMPI (HotSpot) used the reverse. */
        for (jint i = nf - 1; ci->statics && ci->instances && i >= 0; i--) {
            char *name = NULL, *fsig = NULL;
            jint mods = 0;
            if ((*j)->GetFieldName(j, cls, fs[i], &name, &fsig, NULL) != JVMTI_ERROR_NONE)
                continue;
            (*j)->GetFieldModifiers(j, cls, fs[i], &mods);
            JVMPI_Field *f = (mods & 0x0008) ? &ci->statics[ci->num_statics++]
                                             : &ci->instances[ci->num_instances++];
            f->field_name = jvmti_strdup(name);
            f->field_signature = jvmti_strdup(fsig);
        }
        (*j)->Deallocate(j, (unsigned char *)fs);
    }
    return ci;
}

static void fill_event(JVMPI_Event *ev, const struct class_info *ci, jlong tag)
{
    ev->u.class_load.class_name = ci->name;
    ev->u.class_load.source_name = ci->source;
    ev->u.class_load.num_interfaces = ci->num_interfaces;
    ev->u.class_load.num_methods = ci->num_methods;
    ev->u.class_load.methods = ci->num_methods ? ci->methods : NULL;
    ev->u.class_load.num_static_fields = ci->num_statics;
    ev->u.class_load.statics = ci->num_statics ? ci->statics : NULL;
    ev->u.class_load.num_instance_fields = ci->num_instances;
    ev->u.class_load.instances = ci->num_instances ? ci->instances : NULL;
    ev->u.class_load.class_id = ids_from_tag(tag);
}

/* ---- the table ---- */

static struct class_rec *rec_find(jlong tag)
{
    struct class_rec *r;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    pthread_mutex_unlock(&class_lock);
    return r;
}

/* The record of class id tag with a reference the caller drops with rec_release, or NULL:
 * for lookups by id, whose class may be unloading meanwhile. */
static struct class_rec *rec_acquire(jlong tag)
{
    struct class_rec *r;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r != NULL)
        atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&class_lock);
    return r;
}

static void rec_release(JNIEnv *jni, struct class_rec *r)
{
    if (r == NULL || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    if (r->ref != NULL && jni != NULL)
        (*jni)->DeleteWeakGlobalRef(jni, r->ref);
    info_free(atomic_load(&r->saved));
    free(r);
}

/* The record of cls, created (and the class tagged) on first sight. Records live until
 * their class unloads, so the pointer stays valid for the caller's event. */
static struct class_rec *rec_of(JNIEnv *jni, jclass cls)
{
    jobjectID id = ids_of_kept(jni, cls);
    if (id == NULL)
        return NULL;
    jlong tag = ids_tag(id);
    struct class_rec *r = rec_find(tag);
    if (r != NULL)
        return r;
    struct class_rec *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->tag = tag;
    n->refs = 1;
    n->ref = (*jni)->NewWeakGlobalRef(jni, cls);
    jobject loader = NULL;
    (*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &loader);
    n->may_unload = loader != NULL;
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r == NULL) {
        HASH_ADD(hh, by_tag, tag, sizeof n->tag, n);
        r = n;
        n = NULL;
    }
    pthread_mutex_unlock(&class_lock);
    if (n != NULL) {
        (*jni)->DeleteWeakGlobalRef(jni, n->ref);
        free(n);
    }
    return r;
}

/* Keep the CLASS_LOAD payload of a class that can unload, for CLASS_UNLOAD handlers. */
static void ensure_saved(JNIEnv *jni, struct class_rec *r, jclass cls)
{
    if (!r->may_unload || atomic_load(&r->saved) != NULL || cls == NULL)
        return;
    struct class_info *ci = info_build(jni, cls), *none = NULL;
    if (ci != NULL && !atomic_compare_exchange_strong(&r->saved, &none, ci))
        info_free(ci);
}

/* False if nothing was delivered: the class's members could not be read (it is being
 * unloaded), or the agent gets no more events. */
static bool post_class_load(JNIEnv *jni, struct instance *inst, struct class_rec *r,
                            jclass cls, bool requested)
{
    struct class_info *ci = atomic_load(&r->saved);
    if (ci == NULL && cls != NULL) {
        /* One copy per class, kept with the record until its CLASS_UNLOAD was delivered:
         * agents keep the names' pointers (HotSpot's stayed readable while the class was
         * loaded), and a CLASS_LOAD request inside a CLASS_UNLOAD handler is answered from
         * it. Built when first announced (the class is linked by then). */
        ci = info_build(jni, cls);
        struct class_info *none = NULL;
        if (ci != NULL && !atomic_compare_exchange_strong(&r->saved, &none, ci)) {
            info_free(ci);
            ci = none;
        }
    }
    if (ci == NULL)
        return false;
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_CLASS_LOAD | (requested ? JVMPI_REQUESTED_EVENT : 0), jni);
    fill_event(&ev, ci, r->tag);
    return event_post(inst, &ev);
}

/* Classes whose CLASS_LOAD this thread is delivering right now (handlers nest). */
#define ANNOUNCING_MAX 32
static _Thread_local struct class_rec **tl_announcing; /* ANNOUNCING_MAX (shim_thread_block) */
static _Thread_local int tl_announcing_n;

/* Room to note one more class being announced on this thread. */
static bool announcing_room(void)
{
    if (tl_announcing == NULL)
        tl_announcing = shim_thread_block(&tl_announcing, ANNOUNCING_MAX * sizeof *tl_announcing);
    return tl_announcing != NULL && tl_announcing_n < ANNOUNCING_MAX;
}

static bool announcing_here(const struct class_rec *r)
{
    for (int k = 0; k < tl_announcing_n; k++)
        if (tl_announcing[k] == r)
            return true;
    return false;
}

/* A class can be named before it is prepared (an array of it was allocated, the start-up
 * world holds it): JVMTI lists its methods and fields only once it is linked. HotSpot's
 * CLASS_LOAD came at definition, with all members, so link it now — through reflection,
 * which links without running static initializers. */
/* Depth of ensure_linked on this thread: the classes its linking prepares are announced as
 * usual (a superclass whose own link failed at its ClassLoad gets its CLASS_LOAD here, still
 * before its subclass's), although the rest of that Java work is the shim's own. */
static _Thread_local int tl_linking;

static void ensure_linked(JNIEnv *jni, jclass cls)
{
    jint st = 0;
    if (cls == NULL || (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st) != JVMTI_ERROR_NONE ||
        (st & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)))
        return;
    /* Class.getDeclaredFields0(publicOnly), the native behind getDeclaredFields: HotSpot's
     * JVM_GetClassDeclaredFields links the class first (k->link_class). Called directly it
     * runs no Java code and builds no reflection cache; asking for public fields only, it
     * allocates one array and a Field per public field. The public getDeclaredFields is the
     * fallback on a JVM without it. */
    jclass cc = (*jni)->GetObjectClass(jni, cls);
    jmethodID m = (*jni)->GetMethodID(jni, cc, "getDeclaredFields0", "(Z)[Ljava/lang/reflect/Field;");
    if (m == NULL) {
        (*jni)->ExceptionClear(jni);
        m = (*jni)->GetMethodID(jni, cc, "getDeclaredFields", "()[Ljava/lang/reflect/Field;");
    }
    shim_own_java_begin(); /* the Field[] and the code linking runs are the shim's */
    tl_linking++;
    jobject r = m ? (*jni)->CallObjectMethod(jni, cls, m, JNI_TRUE) : NULL;
    tl_linking--;
    shim_own_java_end();
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni); /* e.g. a verify error: the class keeps its state, and
                                        the JVM verifies it again, and throws, at first use */
    if (r) {
        /* The Field[] and its Fields are the shim's: marked so that no sweep, dump or free
         * ever names them (ids.h, TAG_SHIM_OWN). */
        jint n = (*jni)->GetArrayLength(jni, r);
        for (jint i = 0; i < n; i++) {
            jobject f = (*jni)->GetObjectArrayElement(jni, r, i);
            if (f != NULL) {
                (*g_shim.jvmti)->SetTag(g_shim.jvmti, f, TAG_SHIM_OWN);
                (*jni)->DeleteLocalRef(jni, f);
            }
        }
        (*g_shim.jvmti)->SetTag(g_shim.jvmti, r, TAG_SHIM_OWN);
        (*jni)->DeleteLocalRef(jni, r);
    }
    (*jni)->DeleteLocalRef(jni, cc);
}

/* Threads waiting for an announcement another thread is making, or for a definer. */
static pthread_mutex_t ann_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static pthread_cond_t ann_cond = PTHREAD_COND_INITIALIZER;

/* Definitions in progress: a class's CLASS_LOAD_HOOK (JVMTI ClassFileLoadHook) has run on a
 * thread, its JVMTI ClassLoad not yet. The JVM makes a class visible to other threads (in its
 * dictionary) just before it posts ClassLoad on the defining thread; a thread that finds it
 * in that gap, links it and runs its code must still leave the CLASS_LOAD to the definer and
 * wait for it, or an agent that pairs hook and CLASS_LOAD by thread misses the pair.
 * Recorded only while an agent has CLASS_LOAD_HOOK on (the JVMTI hook is on then anyway):
 * without a hook nothing is paired, and the thread that wins that race posts the CLASS_LOAD
 * itself, still before any use of the class. Keyed by internal name and defining loader; entries go at the ClassLoad of
 * that name and loader (all of them: a thread that lost a race to define the same class gets
 * none). A definition that fails after its hook leaves its entry, which matters only to a
 * class of that name and loader that is never announced; the list is capped. Under ann_lock. */
struct pending_def {
    char *name;                 /* internal, "a/b/C" */
    jlong loader;               /* loader_key(): 0 for the boot loader */
    JNIEnv *jni;                /* the defining thread */
    struct pending_def *next;
};
static struct pending_def *pending_defs;
static _Atomic int npending;
#define PENDING_MAX 4096

struct class_key {
    char *name;                 /* internal name (malloc) */
    jobject loader;             /* local reference or NULL */
    jlong lkey;                 /* loader_key(loader) */
};

/* Class loaders are told apart under ann_lock without a JNI call (IsSameObject enters the
 * VM, where a thread an agent suspends would stop holding the lock: shim.h): each loader
 * gets a serial, kept as its tag in a JVMTI environment of the shim's own, whose tags are
 * private to it (no id, no OBJECT_FREE) and go with the loader. The boot loader is 0; -1
 * when that environment could not be had (no definition is then recorded). */
static jvmtiEnv *key_env;
static _Atomic jlong next_loader_key = 1;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */

static jlong loader_key(jobject loader)
{
    if (loader == NULL)
        return 0;
    if (key_env == NULL)
        return -1;
    jlong k = 0;
    if ((*key_env)->GetTag(key_env, loader, &k) == JVMTI_ERROR_NONE && k != 0)
        return k;
    shim_crit_begin(); /* JVMTI calls under a shim lock */
    pthread_mutex_lock(&key_lock);
    if ((*key_env)->GetTag(key_env, loader, &k) == JVMTI_ERROR_NONE && k == 0) {
        k = atomic_fetch_add(&next_loader_key, 1);
        if (!jvmti_ok_at((*key_env)->SetTag(key_env, loader, k), LOG_WARN,
                         "tagging a class loader to tell definitions apart"))
            k = -1;
    }
    pthread_mutex_unlock(&key_lock);
    shim_crit_end();
    return k != 0 ? k : -1;
}

static void loader_keys_init(void)
{
    jvmtiEnv *e = NULL;
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_tag_objects = 1;
    if ((*g_shim.vm)->GetEnv(g_shim.vm, (void **)&e, JVMTI_VERSION_1_2) != JNI_OK || e == NULL) {
        log_warn("CLASS_LOAD: no JVMTI environment to tell class loaders apart; a class found "
                 "by another thread while it is being defined is announced by that thread");
        return;
    }
    if (!jvmti_ok_at((*e)->AddCapabilities(e, &c), LOG_WARN,
                     "AddCapabilities(can_tag_objects) to tell class loaders apart")) {
        (*e)->DisposeEnvironment(e);
        return;
    }
    key_env = e;
}

static bool class_key_of(JNIEnv *jni, jclass cls, struct class_key *k)
{
    (void)jni;
    char *sig = NULL;
    k->name = NULL;
    k->loader = NULL;
    k->lkey = -1;
    if ((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL) != JVMTI_ERROR_NONE)
        return false;
    size_t n = strlen(sig);
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        k->name = malloc(n - 1);
        if (k->name != NULL) {
            memcpy(k->name, sig + 1, n - 2);
            k->name[n - 2] = '\0';
        }
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
    if (k->name == NULL)
        return false;
    (*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &k->loader);
    k->lkey = loader_key(k->loader);
    return k->lkey >= 0;
}

static void class_key_free(JNIEnv *jni, struct class_key *k)
{
    free(k->name);
    if (k->loader != NULL)
        (*jni)->DeleteLocalRef(jni, k->loader);
}

static bool pending_match(const struct pending_def *p, const char *name, jlong lkey)
{
    return p->loader == lkey && strcmp(p->name, name) == 0;
}

/* At a hook: this thread is about to define name in loader. */
static void pending_add(JNIEnv *jni, const char *name, jobject loader)
{
    struct pending_def *p = malloc(sizeof *p);
    if (p == NULL || (p->name = strdup(name)) == NULL) {
        free(p);
        return;
    }
    p->loader = loader_key(loader);
    p->jni = jni;
    if (p->loader < 0) {
        free(p->name);
        free(p);
        return;
    }
    struct pending_def *drop = NULL;
    pthread_mutex_lock(&ann_lock);
    p->next = pending_defs;
    pending_defs = p;
    if (atomic_fetch_add(&npending, 1) + 1 > PENDING_MAX) {
        /* The oldest entries are left over from definitions that failed. */
        struct pending_def **pp = &pending_defs;
        for (int i = 0; *pp && i < PENDING_MAX / 2; i++)
            pp = &(*pp)->next;
        drop = *pp;
        *pp = NULL;
        for (struct pending_def *d = drop; d; d = d->next)
            atomic_fetch_sub(&npending, 1);
    }
    pthread_mutex_unlock(&ann_lock);
    while (drop != NULL) {
        struct pending_def *n = drop->next;
        free(drop->name);
        free(drop);
        drop = n;
    }
}

/* Has loader already defined (or recorded as initiating loader) a class of this name?
 * ClassLoader.findLoadedClass0, the native behind findLoadedClass, called directly: no Java
 * code runs. */
static bool already_loaded(JNIEnv *jni, jobject loader, const char *name)
{
    static _Atomic(jmethodID) flc;
    jmethodID m = atomic_load(&flc);
    if (m == NULL) {
        jclass cl = (*jni)->FindClass(jni, "java/lang/ClassLoader");
        m = cl ? (*jni)->GetMethodID(jni, cl, "findLoadedClass0", "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
        if (cl)
            (*jni)->DeleteLocalRef(jni, cl);
        if (m == NULL) {
            (*jni)->ExceptionClear(jni);
            return false;
        }
        atomic_store(&flc, m);
    }
    jstring n = (*jni)->NewStringUTF(jni, name);
    jobject c = n ? (*jni)->CallObjectMethod(jni, loader, m, n) : NULL;
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (n)
        (*jni)->DeleteLocalRef(jni, n);
    if (c)
        (*jni)->DeleteLocalRef(jni, c);
    return c != NULL;
}

/* Is another thread defining a class of this name and loader? Caller holds ann_lock. */
static bool pending_other_locked(JNIEnv *jni, const struct class_key *k)
{
    for (struct pending_def *p = pending_defs; p; p = p->next)
        if (p->jni != jni && pending_match(p, k->name, k->lkey))
            return true;
    return false;
}

/* Unlinks the entries of name and loader (only those of thread only, if not NULL); caller
 * holds ann_lock, frees the list after. */
static struct pending_def *pending_take_locked(const struct class_key *k, JNIEnv *only)
{
    struct pending_def *taken = NULL, **pp = &pending_defs;
    while (*pp) {
        struct pending_def *p = *pp;
        if ((only == NULL || p->jni == only) && pending_match(p, k->name, k->lkey)) {
            *pp = p->next;
            p->next = taken;
            taken = p;
            atomic_fetch_sub(&npending, 1);
        } else {
            pp = &p->next;
        }
    }
    return taken;
}

static void pending_free(struct pending_def *p)
{
    while (p != NULL) {
        struct pending_def *n = p->next;
        free(p->name);
        free(p);
        p = n;
    }
}

/* At a hook: record this thread's definition, unless the loader has the class already: then
 * this definition is a duplicate that will fail (or lose to the one that won), and would
 * leave a stale entry that a later user of the class could wait on. Checked after the entry
 * is in: a definition that wins meanwhile takes the entry out at its ClassLoad. */
static void pending_begin(JNIEnv *jni, const char *name, jobject loader)
{
    pending_add(jni, name, loader);
    if (loader == NULL || !already_loaded(jni, loader, name))
        return;
    struct class_key k = {.name = (char *)name, .loader = loader, .lkey = loader_key(loader)};
    pthread_mutex_lock(&ann_lock);
    struct pending_def *taken = pending_take_locked(&k, jni);
    pthread_mutex_unlock(&ann_lock);
    pending_free(taken);
}

/* Is the class being defined by another thread, which will post its CLASS_LOAD? */
static bool defined_elsewhere(JNIEnv *jni, struct class_rec *r, jclass cls)
{
    JNIEnv *d = atomic_load(&r->definer);
    if (d != NULL)
        return d != jni;
    if (atomic_load(&r->loaded) || atomic_load(&npending) == 0)
        return false;
    struct class_key k;
    if (!class_key_of(jni, cls, &k))
        return false;
    pthread_mutex_lock(&ann_lock);
    bool other = !atomic_load(&r->loaded) && pending_other_locked(jni, &k);
    pthread_mutex_unlock(&ann_lock);
    class_key_free(jni, &k);
    return other;
}

/* Wait until no other thread is defining the class: its definer has posted the CLASS_LOAD
 * (or could not link it, and left it to whoever needs it). Not on the init thread during
 * start-up: other threads become definers only past the start gate. */
static void wait_for_definer(JNIEnv *jni, struct class_rec *r, jclass cls)
{
    if (atomic_load(&g_shim.phase) < PHASE_LIVE)
        return;
    JNIEnv *d = atomic_load(&r->definer);
    if (d == jni || (d == NULL && (atomic_load(&r->loaded) || atomic_load(&npending) == 0)))
        return;
    struct class_key k;
    bool keyed = !atomic_load(&r->loaded) && class_key_of(jni, cls, &k);
    pthread_mutex_lock(&ann_lock);
    for (;;) {
        d = atomic_load(&r->definer);
        if ((d != NULL && d != jni) ||
            (d == NULL && keyed && !atomic_load(&r->loaded) && pending_other_locked(jni, &k))) {
            pthread_cond_wait(&ann_cond, &ann_lock);
            continue;
        }
        break;
    }
    pthread_mutex_unlock(&ann_lock);
    if (keyed)
        class_key_free(jni, &k);
}

static struct class_rec *rec_of_cached(JNIEnv *jni, jclass cls);

/* Wait until the CLASS_LOAD of super (a superclass or interface of a class this thread is
 * about to announce) is not in progress on another thread: neither its definer's (the JVM
 * put it in its dictionary, where this thread found it while parsing its subclass, but the
 * definer has not posted yet) nor another thread's delivery of it (claimed, its handler not
 * yet returned). This thread's own claims do not count (handlers nest). Without a time
 * limit, like the other waits: only a definer's link or an agent's handler holds it up.
 * With wait false (inside a JVMPI call, which waits for no handler) only tells whether it
 * would have waited. */
static bool wait_for_super(JNIEnv *jni, jclass super, bool wait)
{
    struct class_rec *r = rec_of_cached(jni, super);
    if (r == NULL || announcing_here(r) || !announcing_room())
        return false;
    if (!wait && defined_elsewhere(jni, r, super))
        return true;
    if (wait)
        wait_for_definer(jni, r, super);
    uint32_t on = 0;
    for (int i = 0; i < g_shim.ninst; i++)
        if (event_on(&g_shim.inst[i], JVMPI_EVENT_CLASS_LOAD))
            on |= 1u << i;
    if (!(atomic_load(&r->claimed) & ~atomic_load(&r->announced) & on))
        return false;
    if (!wait)
        return true;
    pthread_mutex_lock(&ann_lock);
    while (atomic_load(&r->claimed) & ~atomic_load(&r->announced) & on)
        pthread_cond_wait(&ann_cond, &ann_lock);
    pthread_mutex_unlock(&ann_lock);
    return false;
}

/* HotSpot posted the CLASS_LOAD of a superclass and of the interfaces defined during a
 * class's parse before that class's own, on the same thread. Another thread may have put the
 * superclass or an interface into the JVM's dictionary and not yet posted its CLASS_LOAD
 * when this thread finds it there (or another thread may be delivering it right now): the
 * class's own CLASS_LOAD waits for those first, so no agent is told of a class before the
 * direct supertypes that are being announced. Called after the class is linked (JVMTI lists
 * interfaces of prepared classes only). By induction over the hierarchy (each supertype's
 * own announcement waited for its supertypes), the order holds all the way up; the waits go
 * up the hierarchy only, so they cannot form a cycle among themselves. With wait false,
 * returns whether some supertype's CLASS_LOAD is still on its way elsewhere. */
static bool wait_for_supers(JNIEnv *jni, jclass cls, bool wait)
{
    jint st = 0;
    if (cls == NULL || atomic_load(&g_shim.phase) < PHASE_LIVE ||
        (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st) != JVMTI_ERROR_NONE ||
        (st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) ||
        !(st & JVMTI_CLASS_STATUS_PREPARED))
        return false;
    bool busy = false;
    jclass sup = (*jni)->GetSuperclass(jni, cls);
    if (sup != NULL) {
        busy = wait_for_super(jni, sup, wait);
        (*jni)->DeleteLocalRef(jni, sup);
    }
    jint ni = 0;
    jclass *ifs = NULL;
    if ((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, cls, &ni, &ifs) != JVMTI_ERROR_NONE)
        return busy;
    for (jint i = 0; i < ni; i++) {
        if (!busy)
            busy = wait_for_super(jni, ifs[i], wait);
        (*jni)->DeleteLocalRef(jni, ifs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)ifs);
    return busy;
}

static bool class_prepared(jclass cls)
{
    jint st = 0;
    return cls != NULL &&
           (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st) == JVMTI_ERROR_NONE &&
           (st & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY |
                  JVMTI_CLASS_STATUS_PRIMITIVE));
}

/* Linking a class runs Java code (ensure_linked), which can wait for other threads: for a
 * thread that holds its loader's lock, or the class's init lock, while it sits in a
 * CLASS_LOAD_HOOK, CLASS_LOAD or ClassPrepare handler. Inside a JVMPI call that is a wait
 * for another thread's handler, which may in turn wait for the caller's lock (shim.h), so a
 * call links only when no such handler can be waiting for it: the caller owns no raw
 * monitor of any agent (the locks agents of the era took), or it delivers JVM_SHUT_DOWN
 * (no other thread is in a handler then). Otherwise the worker links the class in the
 * background, so that the next event or request that names it finds it prepared; its
 * CLASS_LOAD comes at that next use, on that thread. */
static bool call_may_link(void)
{
    return !shim_in_call() || shim_monitors_owned == 0 ||
           (atomic_load(&g_shim.phase) == PHASE_SHUTTING &&
            pthread_equal(pthread_self(), g_shim.shutdown_thread));
}

static _Thread_local bool tl_link_quietly; /* the worker links: it announces nothing */

static void link_on_worker(JNIEnv *jni, void *arg)
{
    jclass g = arg;
    tl_link_quietly = true;
    ensure_linked(jni, g);
    tl_link_quietly = false;
    (*jni)->DeleteGlobalRef(jni, g);
}

static void link_later(JNIEnv *jni, jclass cls)
{
    jclass g = (*jni)->NewGlobalRef(jni, cls);
    if (g != NULL && !worker_submit(link_on_worker, g))
        (*jni)->DeleteGlobalRef(jni, g);
}

/* Post CLASS_LOAD to every instance that enabled it and has not had it. Exactly one
 * thread posts per instance; others wait until it is delivered. A use of the class from
 * inside its own CLASS_LOAD handler (the agent asks GetMethodClass for its methods) does
 * not wait: the agent is being told about the class at that very moment.
 *
 * Inside a JVMPI call (GetCallTrace, GetMethodClass, a dump or a request the agent makes,
 * perhaps holding the lock another thread's CLASS_LOAD handler waits for) nothing here
 * waits or links (shim.h): a class another thread is defining or delivering, or one whose
 * supertype's CLASS_LOAD is still on its way elsewhere, is left to that thread (HotSpot's
 * CLASS_LOAD came from the defining thread too, and a call trace could name a class whose
 * CLASS_LOAD had not reached the agent yet); a class not yet linked is linked only where
 * that cannot wait for a handler (call_may_link), else by the worker, and then announced at
 * its next use. */
static void announce(JNIEnv *jni, struct class_rec *r, jclass cls)
{
    if (announcing_here(r))
        return;
    bool in_call = shim_in_call();
    if (in_call && defined_elsewhere(jni, r, cls)) {
        report_note(REP_CALL_NO_WAIT, "a class another thread was defining was left to that "
                    "thread's CLASS_LOAD");
        return;
    }
    /* The probe class is the shim's: never announced. */
    jclass hook = up_probe_class != NULL ? up_probe_class() : NULL;
    if (hook != NULL && cls != NULL && (*jni)->IsSameObject(jni, cls, hook))
        return;
    bool any = false;
    for (int i = 0; i < g_shim.ninst && !any; i++)
        any = event_on(&g_shim.inst[i], JVMPI_EVENT_CLASS_LOAD) &&
              !(atomic_load(&r->announced) & (1u << i));
    if (!any)
        return;
    if (!in_call) {
        /* No claim is ever held by a thread stopped at the start gate: such a thread waits
         * there first, so the start-up announcement on the init thread, which needs every
         * class it meets defined, makes each definition itself instead of waiting for one
         * that cannot come before the gate opens. */
        events_gate_wait();
        /* A class being defined on another thread (between its JVMTI ClassLoad and its
         * CLASS_LOAD): that thread posts it, as HotSpot did, so wait for it. It is not held
         * up by the start gate (it waited there before it became the definer). */
        wait_for_definer(jni, r, cls);
        ensure_linked(jni, cls);
        /* Its superclass and interfaces first, if their CLASS_LOAD is still to come
         * elsewhere. */
        wait_for_supers(jni, cls, true);
    } else if (!class_prepared(cls) && call_may_link()) {
        ensure_linked(jni, cls);
    } else if (!class_prepared(cls)) {
        link_later(jni, cls);
        report_note(REP_CALL_NO_WAIT, "a class not yet linked was not announced inside a "
                    "JVMPI call made holding a raw monitor (linking runs Java code); the "
                    "worker links it, and its CLASS_LOAD comes at its next use");
        return;
    }
    if (in_call && wait_for_supers(jni, cls, false)) {
        report_note(REP_CALL_NO_WAIT, "a class whose supertype's CLASS_LOAD was on its way "
                    "on another thread was left to its next use");
        return;
    }
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        uint32_t bit = 1u << i;
        if (!event_on(inst, JVMPI_EVENT_CLASS_LOAD) || (atomic_load(&r->announced) & bit))
            continue;
        if (!(atomic_fetch_or(&r->claimed, bit) & bit)) {
            bool pushed = announcing_room();
            if (pushed)
                tl_announcing[tl_announcing_n++] = r;
            post_class_load(jni, inst, r, cls, false);
            if (pushed)
                tl_announcing_n--;
            pthread_mutex_lock(&ann_lock);
            atomic_fetch_or(&r->announced, bit);
            pthread_cond_broadcast(&ann_cond);
            pthread_mutex_unlock(&ann_lock);
            continue;
        }
        /* Another thread is delivering it: the agent's CLASS_LOAD handler runs there, past
         * the start gate (see above). Wait for it to return, with no time limit: HotSpot too
         * let no thread use a class before its CLASS_LOAD handler had returned on the
         * defining thread; only the agent's own handler can hold this up. Not inside a JVMPI
         * call: the agent may hold the lock that handler waits for. */
        if (in_call)
            continue;
        pthread_mutex_lock(&ann_lock);
        while (!(atomic_load(&r->announced) & bit))
            pthread_cond_wait(&ann_cond, &ann_lock);
        pthread_mutex_unlock(&ann_lock);
    }
}

/* classes_id_announced, also giving the instances that have had the class's CLASS_LOAD. */
static jobjectID id_announced(JNIEnv *jni, jclass cls, uint32_t *announced)
{
    *announced = 0;
    if (cls == NULL)
        return NULL;
    /* Through the per-thread cache: monitor events and METHOD_ENTRY2 come here for every
     * event, and must not all take class_lock. */
    struct class_rec *r = rec_of_cached(jni, cls);
    if (r == NULL)
        return NULL;
    if ((atomic_load(&r->announced) & ((1u << g_shim.ninst) - 1)) != ((1u << g_shim.ninst) - 1))
        announce(jni, r, cls);
    *announced = atomic_load(&r->announced);
    return ids_from_tag(r->tag);
}

jobjectID classes_id_announced(JNIEnv *jni, jclass cls)
{
    uint32_t announced;
    return id_announced(jni, cls, &announced);
}

void classes_prepare(JNIEnv *jni, jclass cls)
{
    if (class_prepared(cls))
        return;
    if (call_may_link())
        ensure_linked(jni, cls);
    else
        link_later(jni, cls);
}

jobjectID classes_register(JNIEnv *jni, jclass cls)
{
    struct class_rec *r = cls ? rec_of(jni, cls) : NULL;
    return r ? ids_from_tag(r->tag) : NULL;
}

jobjectID classes_method_announced(JNIEnv *jni, jmethodID mid)
{
    jclass cls = NULL;
    if (mid == NULL || (*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, mid, &cls) !=
                           JVMTI_ERROR_NONE)
        return NULL;
    jobjectID id = classes_id_announced(jni, cls);
    (*jni)->DeleteLocalRef(jni, cls);
    return id;
}

/* HotSpot's OBJECT_ALLOC conventions: an instance names its class (NORMAL_OBJECT); an
 * object array names its ELEMENT class with is_array = JVMPI_CLASS; a primitive array has
 * is_array = its type code (JVMPI_BOOLEAN..JVMPI_LONG, the newarray codes) and no class. */
static const struct { char sig; jint code; } prim_codes[] = {
    {'Z', JVMPI_BOOLEAN}, {'C', JVMPI_CHAR},  {'F', JVMPI_FLOAT}, {'D', JVMPI_DOUBLE},
    {'B', JVMPI_BYTE},    {'S', JVMPI_SHORT}, {'I', JVMPI_INT},   {'J', JVMPI_LONG},
};

jint classes_type_code(char sig)
{
    for (size_t i = 0; i < sizeof prim_codes / sizeof prim_codes[0]; i++)
        if (prim_codes[i].sig == sig)
            return prim_codes[i].code;
    return JVMPI_CLASS;
}

/* Per-thread cache class tag -> record for the allocation path (no class_lock there).
 * Records live until their class unloads, and a dead class's tag is never seen again. */
#define CCACHE 64
struct ccache_slot {
    jlong id;                   /* compared before the record is touched: a record freed
                                   at unload is only reachable through its own, dead id */
    struct class_rec *r;
};
static _Thread_local struct ccache_slot *tl_ccache; /* CCACHE slots (shim_thread_block) */

/* In front of it, the class this thread allocated most, held by the thread's own weak
 * reference: IsSameObject against it is one JNI call, where reading the class's tag takes
 * the tag-map lock and walks a hash chain of the whole tag map (profiled on JDK 17: a
 * quarter of what the shim added per allocation). A class takes the place only when two
 * allocations of it in a row missed, so a thread alternating between classes does not
 * churn weak references; it is dropped at ThreadEnd. A live class that matches cannot
 * have had its record freed (that happens only after the class unloads), and the id is
 * checked against tl_ccache before the record is used. */
static _Thread_local struct {
    jweak ref;
    jlong id;
    jlong missed;               /* id of the last class that missed, 0 after a hit */
} tl_mru;

static struct class_rec *rec_of_cached(JNIEnv *jni, jclass cls)
{
    if (__builtin_expect(tl_ccache == NULL, 0) &&
        (tl_ccache = shim_thread_block(&tl_ccache, CCACHE * sizeof *tl_ccache)) == NULL)
        return rec_of(jni, cls);
    if (tl_mru.ref != NULL && (*jni)->IsSameObject(jni, cls, tl_mru.ref)) {
        unsigned k = (unsigned)((tl_mru.id >> 3) % CCACHE);
        if (tl_ccache[k].id == tl_mru.id) {
            tl_mru.missed = 0;
            return tl_ccache[k].r;
        }
    }
    jlong tag = 0;
    struct class_rec *r = NULL;
    if ((*g_shim.jvmti)->GetTag(g_shim.jvmti, cls, &tag) == JVMTI_ERROR_NONE && tag != 0) {
        jlong id = tag & TAG_ID_MASK;
        unsigned k = (unsigned)((id >> 3) % CCACHE);
        if (tl_ccache[k].id == id)
            r = tl_ccache[k].r;
    }
    if (r == NULL) {
        r = rec_of(jni, cls);
        if (r == NULL)
            return NULL;
        unsigned k = (unsigned)((r->tag >> 3) % CCACHE);
        tl_ccache[k].id = r->tag;
        tl_ccache[k].r = r;
    }
    if (tl_mru.missed != r->tag) {
        tl_mru.missed = r->tag;
        return r;
    }
    jweak w = (*jni)->NewWeakGlobalRef(jni, cls);
    if (w != NULL) {
        if (tl_mru.ref != NULL)
            (*jni)->DeleteWeakGlobalRef(jni, tl_mru.ref);
        tl_mru.ref = w;
        tl_mru.id = r->tag;
    }
    tl_mru.missed = 0;
    return r;
}

void classes_thread_end(JNIEnv *jni)
{
    if (tl_mru.ref != NULL)
        (*jni)->DeleteWeakGlobalRef(jni, tl_mru.ref);
    tl_mru.ref = NULL;
    tl_mru.id = tl_mru.missed = 0;
}

bool classes_alloc_info(JNIEnv *jni, jclass cls, jint *is_array, jobjectID *class_id)
{
    struct class_rec *r = rec_of_cached(jni, cls);
    if (r == NULL)
        return false;
    if (!atomic_load_explicit(&r->alloc_known, memory_order_acquire)) {
        char *sig = NULL;
        jint kind = JVMPI_NORMAL_OBJECT;
        jobjectID cid = ids_from_tag(r->tag);
        if ((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL) ==
                JVMTI_ERROR_NONE && sig[0] == '[') {
            kind = classes_type_code(sig[1]);
            cid = NULL;
            if (kind == JVMPI_CLASS) {
                /* The element class: java.lang.Class.getComponentType(). */
                jclass cc = (*jni)->GetObjectClass(jni, cls);
                jmethodID gct = (*jni)->GetMethodID(jni, cc, "getComponentType",
                                                    "()Ljava/lang/Class;");
                shim_own_java_begin();
                jobject elem = gct ? (*jni)->CallObjectMethod(jni, cls, gct) : NULL;
                shim_own_java_end();
                if ((*jni)->ExceptionCheck(jni))
                    (*jni)->ExceptionClear(jni);
                if (elem != NULL) {
                    /* An agent may ask CLASS_LOAD for the element class from its handler,
                     * inside a JVMPI call, where it could not be linked (announce()). */
                    classes_prepare(jni, elem);
                    cid = classes_id_announced(jni, elem);
                    (*jni)->DeleteLocalRef(jni, elem);
                }
                (*jni)->DeleteLocalRef(jni, cc);
            }
        } else {
            announce(jni, r, cls);
        }
        if (sig)
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
        r->alloc_is_array = kind;
        r->alloc_class_id = cid;
        atomic_store_explicit(&r->alloc_known, true, memory_order_release);
    } else if (r->alloc_class_id != NULL &&
               (atomic_load(&r->announced) & ((1u << g_shim.ninst) - 1)) !=
                   ((1u << g_shim.ninst) - 1) &&
               r->alloc_is_array == JVMPI_NORMAL_OBJECT) {
        announce(jni, r, cls);
    }
    *is_array = r->alloc_is_array;
    *class_id = r->alloc_class_id;
    return true;
}

/* The class of a class id, as a local ref (NULL if unknown or unloaded). */
jclass classes_local_ref(JNIEnv *jni, jobjectID id)
{
    struct class_rec *r = rec_acquire(ids_tag(id));
    jclass c = r != NULL && !r->unloaded && r->ref != NULL ? (*jni)->NewLocalRef(jni, r->ref) : NULL;
    rec_release(jni, r);
    return c;
}

/* ---- JVMTI callbacks ---- */

/* CLASS_LOAD on the defining thread. HotSpot posted it inside the definition, on the thread
 * that defined the class, after its CLASS_LOAD_HOOK (and after the CLASS_LOAD of the
 * superclass and interfaces defined during its parse), before any code of it could run:
 * coverage agents pair each CLASS_LOAD with the hook before it on the same thread. JVMTI's
 * ClassLoad comes there, but JVMTI lists methods and fields only once the class is prepared
 * (GetClassMethods: CLASS_NOT_PREPARED), and HotSpot's CLASS_LOAD carried them. So the class
 * is linked here, on the defining thread, as reflection would link it (ensure_linked: no
 * static initializer runs), and its CLASS_LOAD is posted at once. Until then this thread is
 * the class's definer: a thread that links the class meanwhile (it found it in the
 * dictionary) leaves the announcement to it, and a thread that would use it waits for it.
 * When linking fails here (a verify error, which the JVM raises again at first use; or a
 * superclass linked during its subclass's parse whose verification needs that very
 * subclass: a ClassCircularityError while the subclass is still being defined), the class
 * keeps its state and its CLASS_LOAD comes at its ClassPrepare: for a superclass, while its
 * subclass is linked on this same thread, before the subclass's CLASS_LOAD. */
static void JNICALL cb_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls)
{
    (void)jvmti;
    (void)thread;
    if (atomic_load(&g_shim.phase) < PHASE_STARTING)
        return;
    bool on = !shim_quiet() && events_any(JVMPI_EVENT_CLASS_LOAD);
    if (!on && atomic_load(&npending) == 0)
        return;
    if (on)
        events_gate_wait(); /* before it is the definer: see announce() */
    struct class_key k;
    bool keyed = atomic_load(&npending) > 0 && class_key_of(jni, cls, &k);
    struct class_rec *r = on ? rec_of(jni, cls) : NULL;
    /* From the hook's entry to the record's definer in one step, for threads waiting. */
    pthread_mutex_lock(&ann_lock);
    struct pending_def *taken = keyed ? pending_take_locked(&k, NULL) : NULL;
    if (r != NULL) {
        atomic_store(&r->definer, jni);
        atomic_store(&r->loaded, true);
    }
    pthread_cond_broadcast(&ann_cond);
    pthread_mutex_unlock(&ann_lock);
    pending_free(taken);
    if (keyed)
        class_key_free(jni, &k);
    if (r == NULL)
        return;
    ensure_linked(jni, cls);
    jint st = 0;
    (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st);
    if (st & JVMTI_CLASS_STATUS_PREPARED)
        classes_id_announced(jni, cls);
    pthread_mutex_lock(&ann_lock);
    atomic_store(&r->definer, NULL);
    pthread_cond_broadcast(&ann_cond);
    pthread_mutex_unlock(&ann_lock);
    /* Another thread may have linked it after our attempt failed, while we were still its
     * definer (its ClassPrepare then left it to us). */
    if (!(st & JVMTI_CLASS_STATUS_PREPARED) &&
        (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st) == JVMTI_ERROR_NONE &&
        (st & JVMTI_CLASS_STATUS_PREPARED))
        classes_id_announced(jni, cls);
}

static void JNICALL cb_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls)
{
    natives_class_prepare(jni, cls); /* even after ProfilerExit: the application runs on */
    /* A class the shim's own Java work prepares is announced on first use instead, except
     * the classes a link for an announcement prepares (see tl_linking). */
    if (shim_quiet() || (shim_own_java() && tl_linking == 0) || tl_link_quietly)
        return;
    (void)jvmti;
    (void)thread;
    struct class_rec *r = rec_of(jni, cls);
    /* While a thread defines the class (its ClassLoad links it), that thread posts the
     * CLASS_LOAD once the link returns: not here, where the JVM holds the class's init lock,
     * nor on another thread that links it meanwhile (even before that thread's ClassLoad:
     * see pending_defs). */
    if (r == NULL || (atomic_load(&r->definer) == NULL && !defined_elsewhere(jni, r, cls)))
        classes_id_announced(jni, cls);
    if (r == NULL || !r->may_unload)
        return;
    /* Counted before the check, and the enabling thread sets the bit before it reads the
     * count (both sequentially consistent): a class prepared while CLASS_UNLOAD is being
     * enabled is either saved here or seen by the walk. */
    if (!events_any(JVMPI_EVENT_CLASS_UNLOAD))
        atomic_fetch_add(&prepared_unsaved, 1);
    if (events_any(JVMPI_EVENT_CLASS_UNLOAD))
        ensure_saved(jni, r, cls);
}

void classes_replay(JNIEnv *jni)
{
    if (!events_any(JVMPI_EVENT_CLASS_LOAD) && !events_any(JVMPI_EVENT_CLASS_UNLOAD))
        return;
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses for the start-up CLASS_LOAD replay"))
        return;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    int posted = 0;
    for (jint i = 0; i < n; i++) {
        jint st = 0;
        (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st);
        /* HotSpot replayed every instance class in its dictionary, linked or not: a class
         * defined before the agent and linked later gets its CLASS_LOAD here, not at its
         * ClassPrepare on whatever thread links it (announce() links it first). */
        if (!(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE | JVMTI_CLASS_STATUS_ERROR))) {
            classes_id_announced(jni, cs[i]);
            posted++;
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)cs);
    log_debug("start-up replay: %d classes", posted);
}

/* ---- CLASS_UNLOAD ---- */

static void post_unload(JNIEnv *jni, void *arg)
{
    struct class_rec *r = arg;
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_CLASS_UNLOAD, jni);
    ev.u.class_unload.class_id = ids_from_tag(r->tag);
    event_post_all(&ev);
    pthread_mutex_lock(&class_lock);
    HASH_DEL(by_tag, r);
    pthread_mutex_unlock(&class_lock);
    rec_release(jni, r); /* the table's reference; a request reading it keeps its own */
}

bool classes_on_free(jlong tag)
{
    struct class_rec *r;
    tag &= TAG_ID_MASK;
    pthread_mutex_lock(&class_lock);
    HASH_FIND(hh, by_tag, &tag, sizeof tag, r);
    if (r != NULL)
        r->unloaded = true;
    pthread_mutex_unlock(&class_lock);
    if (r == NULL)
        return false;
    if (up_on_unload != NULL)
        up_on_unload(); /* its methods' cached line tables */
    if (!worker_submit(post_unload, r))
        log_debug("class id %p unloaded after shutdown: no CLASS_UNLOAD", (void *)(intptr_t)tag);
    return true;
}

/* ---- RequestEvent(CLASS_LOAD, class id) ---- */

static void refuse_not_linked(struct instance *inst, jobjectID id, jclass cls)
{
    char *sig = NULL;
    (*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL);
    static _Atomic bool warned;
    int level = atomic_exchange(&warned, true) ? LOG_INFO : LOG_WARN;
    log_msg(level, "agent %d: RequestEvent(CLASS_LOAD, %p): class %s is loaded but not yet "
           "linked; JVMTI lists its methods and fields only once it is linked, and linking it "
           "here, while the caller owns a raw monitor, could wait for another thread's event "
           "handler that waits for that monitor: JVMPI_FAIL (the shim links it now in the "
           "background: a request made later succeeds)%s",
           inst->slot, (void *)id, sig ? sig : "?",
           level == LOG_WARN ? "; further cases are logged at level info" : "");
    report_note(REP_CALL_NO_WAIT, "RequestEvent(CLASS_LOAD) for a class not yet linked: "
                "JVMPI_FAIL, and the worker links it");
    if (sig)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
}

static jint request_class_load(struct instance *inst, JNIEnv *jni, void *arg)
{
    jobjectID id = arg;
    if (id == NULL || !ids_plausible(id)) {
        ids_bad(inst, id ? IDS_BAD_GARBAGE : IDS_BAD_NULL,
                "RequestEvent(CLASS_LOAD, %p): not a class id: JVMPI_FAIL", (void *)id);
        return JVMPI_FAIL;
    }
    struct class_rec *r = rec_acquire(ids_tag(id));
    if (r != NULL && r->unloaded) {
        jint urc = JVMPI_FAIL;
        if (atomic_load(&r->saved) != NULL && post_class_load(jni, inst, r, NULL, true))
            urc = JVMPI_SUCCESS; /* from the copy kept for unloading */
        rec_release(jni, r);
        return urc;
    }
    (*jni)->PushLocalFrame(jni, 16);
    jobject cls = r ? (*jni)->NewLocalRef(jni, r->ref) : NULL;
    const char *why = NULL;
    if (cls == NULL)
        cls = ids_resolve(jni, id, &why);
    jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
    jint rc = JVMPI_FAIL;
    if (cls == NULL) {
        ids_bad(inst, ids_bad_kind(why), "RequestEvent(CLASS_LOAD, %p): %s: JVMPI_FAIL",
                (void *)id, why ? why : "class unloaded");
    } else if (!(*jni)->IsInstanceOf(jni, cls, class_class)) {
        ids_bad(inst, IDS_BAD_KIND, "RequestEvent(CLASS_LOAD, %p): the object is not a class: "
                                    "JVMPI_FAIL", (void *)id);
    } else {
        jint st = 0;
        (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st);
        if (st & JVMTI_CLASS_STATUS_PRIMITIVE) {
            report_misuse(inst, LOG_WARN, "RequestEvent(CLASS_LOAD, %p): a primitive type has no "
                                          "class data: JVMPI_FAIL", (void *)id);
        } else {
            struct class_rec *cr = rec_of(jni, cls);
            if (cr != NULL && atomic_load(&cr->saved) == NULL && !class_prepared(cls) &&
                call_may_link())
                ensure_linked(jni, cls);
            if (cr != NULL && atomic_load(&cr->saved) == NULL && !class_prepared(cls)) {
                /* A class named before it was linked (a dump holds its mirror), asked for
                 * by a caller that owns a raw monitor: JVMTI lists its members only once it
                 * is linked, and linking here could wait for another thread's handler
                 * (call_may_link). The worker links it; a request after that succeeds. */
                link_later(jni, cls);
                refuse_not_linked(inst, id, cls);
            } else if (cr != NULL) {
                if (post_class_load(jni, inst, cr, cls, true))
                    rc = JVMPI_SUCCESS;
                else
                    ids_bad(inst, IDS_BAD_DEAD, "RequestEvent(CLASS_LOAD, %p): the class is "
                            "being unloaded (its members cannot be read): JVMPI_FAIL", (void *)id);
            }
        }
    }
    (*jni)->PopLocalFrame(jni, NULL);
    rec_release(jni, r);
    return rc;
}

/* ---- CLASS_LOAD_HOOK ---- */

/* Buffers the agent got from malloc_f during the current hook, on this thread. Only these
 * are freed afterwards: an agent may also hand back a buffer of its own (HotSpot's
 * resource-area malloc_f freed itself), which the shim copies and leaves alone. */
static _Thread_local void **tl_hook_bufs;
static _Thread_local size_t tl_hook_n, tl_hook_cap;

static void *hook_malloc(unsigned int n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        return NULL;
    if (tl_hook_n == tl_hook_cap) {
        size_t cap = tl_hook_cap ? tl_hook_cap * 2 : 4;
        void **v = realloc(tl_hook_bufs, cap * sizeof *v);
        if (v == NULL) {
            free(p);
            return NULL;
        }
        tl_hook_bufs = v;
        tl_hook_cap = cap;
    }
    tl_hook_bufs[tl_hook_n++] = p;
    return p;
}

/* Free what malloc_f handed out since mark (hooks nest when a handler loads a class). */
static void hook_free_since(size_t mark)
{
    for (size_t i = mark; i < tl_hook_n; i++)
        free(tl_hook_bufs[i]);
    tl_hook_n = mark;
}

static void JNICALL cb_class_file_load_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined,
                                            jobject loader, const char *name,
                                            jobject protection_domain, jint len,
                                            const unsigned char *data, jint *new_len,
                                            unsigned char **new_data)
{
    (void)protection_domain;
    if (redefined == NULL && name != NULL && !shim_quiet() &&
        atomic_load(&g_shim.phase) >= PHASE_STARTING && events_any(JVMPI_EVENT_CLASS_LOAD))
        pending_begin(jni, name, loader);
    const unsigned char *cur = data;
    jint cur_len = len;
    unsigned char *copy = NULL;         /* our copy of the latest accepted rewrite */
    size_t mark = tl_hook_n;
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (!event_on(inst, JVMPI_EVENT_CLASS_LOAD_HOOK))
            continue;
        JVMPI_Event ev;
        event_init(&ev, JVMPI_EVENT_CLASS_LOAD_HOOK, jni);
        ev.u.class_load_hook.class_data = (unsigned char *)cur;
        ev.u.class_load_hook.class_data_len = cur_len;
        /* HotSpot never initialised these and read them back unconditionally; we preset
         * "unchanged" so an agent that leaves them alone changes nothing. */
        ev.u.class_load_hook.new_class_data = (unsigned char *)cur;
        ev.u.class_load_hook.new_class_data_len = cur_len;
        ev.u.class_load_hook.malloc_f = hook_malloc;
        if (!event_post(inst, &ev))
            continue;
        unsigned char *nd = ev.u.class_load_hook.new_class_data;
        jint nl = ev.u.class_load_hook.new_class_data_len;
        if (nd == NULL || nd == cur)
            continue; /* unchanged */
        if (nl < 10 || nl > (1 << 30) || nd[0] != 0xCA || nd[1] != 0xFE || nd[2] != 0xBA ||
            nd[3] != 0xBE) {
            log_error("agent %d: CLASS_LOAD_HOOK for %s returned %d bytes that are not a class "
                      "file; the class is loaded unchanged", inst->slot, name ? name : "?",
                      (int)nl);
            continue;
        }
        unsigned char *c = malloc((size_t)nl);
        if (c == NULL)
            continue;
        memcpy(c, nd, (size_t)nl);
        free(copy);
        copy = c;
        cur = c;
        cur_len = nl;
    }
    hook_free_since(mark);
    if (copy != NULL) {
        unsigned char *out = NULL;
        if (jvmti_ok((*jvmti)->Allocate(jvmti, cur_len, &out), "CLASS_LOAD_HOOK: Allocate")) {
            memcpy(out, copy, (size_t)cur_len);
            *new_data = out;
            *new_len = cur_len;
        }
        free(copy);
    }
}

/* Tag the classes loaded before CLASS_UNLOAD was enabled, so their unloading is seen:
 * a walk of the loaded classes (0.1-2 ms for a few thousand). Classes prepared while it is
 * on save their info themselves, so an agent that switches it off and on again pays for
 * the walk again only if classes that may unload were prepared meanwhile. */
static void unload_walk(JNIEnv *jni);

static void unload_changed(int t, bool any)
{
    (void)t;
    if (!any || atomic_load(&g_shim.phase) < PHASE_STARTING)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return;
    /* Two agents enabling it at once may both walk: saving is idempotent. */
    uint64_t seen = atomic_load(&prepared_unsaved);
    if (atomic_load(&unload_walked_at) == seen + 1)
        return;
    unload_walk(jni);
    atomic_store(&unload_walked_at, seen + 1);
}

static void unload_walk(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses when CLASS_UNLOAD was enabled"))
        return;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        jobject loader = NULL;
        (*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cs[i], &loader);
        if (loader != NULL) {
            jint st = 0;
            struct class_rec *r = rec_of(jni, cs[i]);
            (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st);
            if (r != NULL && (st & JVMTI_CLASS_STATUS_PREPARED))
                ensure_saved(jni, r, cs[i]);
            (*jni)->DeleteLocalRef(jni, loader);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)cs);
}

void classes_module_init(void)
{
    loader_keys_init();
    struct event_row load = {.kind = EVK_ON,
                             .jvmti = {JVMTI_EVENT_CLASS_PREPARE},
                             .request = request_class_load};
    events_register(JVMPI_EVENT_CLASS_LOAD, &load);
    /* Always: a definition in progress (its hook seen) must end at its ClassLoad even if
     * CLASS_LOAD is switched off in between, or threads would wait for it forever. */
    events_need_always(JVMTI_EVENT_CLASS_LOAD);
    struct event_row unload = {.kind = EVK_ON,
                               .jvmti = {JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_OBJECT_FREE},
                               .on_change = unload_changed};
    events_register(JVMPI_EVENT_CLASS_UNLOAD, &unload);
    struct event_row hook = {.kind = EVK_ON,
                             .jvmti = {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK}};
    events_register(JVMPI_EVENT_CLASS_LOAD_HOOK, &hook);
}

void classes_module_callbacks(jvmtiEventCallbacks *cb)
{
    cb->ClassLoad = cb_class_load;
    cb->ClassPrepare = cb_class_prepare;
    cb->ClassFileLoadHook = cb_class_file_load_hook;
}

/* ---- the method ids JVMTI may be given ----
 *
 * JVMTI dereferences a jmethodID unchecked (HotSpot: Method::checked_resolve_jmethod_id
 * reads through it), so a wild pointer from an agent kills the VM. GetMethodClass therefore
 * passes JVMTI only ids that are methods of a class the JVM loaded: a set of such ids. The
 * ids the shim hands out (CLASS_LOAD's lists, method events, call traces) go into it as they
 * are handed out, so the usual call is one lookup; an id that is not in it yet (one from
 * JNI's GetMethodID) makes the shim scan the loaded classes. An id of a class that has since unloaded
 * stays in the set: HotSpot keeps its slot, which then resolves to nothing, and JVMTI
 * answers INVALID_METHODID safely; the set also keeps the class id CLASS_LOAD gave with the
 * method, which GetMethodClass answers then. A rejected id goes into a small ring, so an agent that
 * repeats the same bad id does not pay for a scan each time. */
struct mid_rec {
    jmethodID mid;
    jlong class_tag;    /* its class's id as CLASS_LOAD gave it, 0 if not known */
    UT_hash_handle hh;
};
static struct mid_rec *known_mids;
static jmethodID bad_mids[16];
static unsigned bad_next;
static pthread_mutex_t mid_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf, like class_lock */

/* Is mid in the set? Takes mid_lock. */
static bool mid_known(jmethodID mid, bool *known_bad)
{
    struct mid_rec *r = NULL;
    pthread_mutex_lock(&mid_lock);
    HASH_FIND_PTR(known_mids, &mid, r);
    *known_bad = false;
    for (unsigned i = 0; r == NULL && i < sizeof bad_mids / sizeof bad_mids[0]; i++)
        *known_bad = *known_bad || bad_mids[i] == mid;
    pthread_mutex_unlock(&mid_lock);
    return r != NULL;
}

/* Note the methods of the class with id class_tag (0: not known here). */
static void note_methods_of(const jmethodID *ms, jint n, jlong class_tag)
{
    pthread_mutex_lock(&mid_lock);
    for (jint k = 0; k < n; k++) {
        struct mid_rec *r = NULL;
        HASH_FIND_PTR(known_mids, &ms[k], r);
        if (r == NULL && ms[k] != NULL && (r = malloc(sizeof *r)) != NULL) {
            r->mid = ms[k];
            r->class_tag = 0;
            HASH_ADD_PTR(known_mids, mid, r);
        }
        if (r != NULL && r->class_tag == 0)
            r->class_tag = class_tag;
    }
    pthread_mutex_unlock(&mid_lock);
}

void classes_note_methods(const jmethodID *ms, jint n)
{
    note_methods_of(ms, n, 0);
}

/* The class id noted for mid, or 0. */
static jlong mid_class(jmethodID mid)
{
    struct mid_rec *r = NULL;
    pthread_mutex_lock(&mid_lock);
    HASH_FIND_PTR(known_mids, &mid, r);
    jlong t = r != NULL ? r->class_tag : 0;
    pthread_mutex_unlock(&mid_lock);
    return t;
}

/* Adds every method id of every loaded class to the set (JVMTI calls outside the lock). */
static void mid_scan(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses to check a method id passed to GetMethodClass"))
        return;
    for (jint i = 0; i < n; i++) {
        jint nm = 0;
        jmethodID *ms = NULL;
        /* Arrays and primitive classes have no methods; a class not yet prepared answers
         * CLASS_NOT_PREPARED: neither is an error here. */
        if ((*g_shim.jvmti)->GetClassMethods(g_shim.jvmti, cs[i], &nm, &ms) == JVMTI_ERROR_NONE) {
            note_methods_of(ms, nm, ids_tag(ids_peek(cs[i])));
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)ms);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)cs);
}

static bool mid_valid(JNIEnv *jni, jmethodID mid)
{
    bool bad = false;
    if (mid_known(mid, &bad))
        return true;
    if (bad)
        return false;
    mid_scan(jni);
    if (mid_known(mid, &bad))
        return true;
    pthread_mutex_lock(&mid_lock);
    bad_mids[bad_next++ % (sizeof bad_mids / sizeof bad_mids[0])] = mid;
    pthread_mutex_unlock(&mid_lock);
    return false;
}

/* A method's class never changes, nor does the id CLASS_LOAD gave it, so the answers given
 * are kept in a table read without locks (method id -> class id, and which instances had
 * been told of the class by then): a tracer asks on every method event, and the full answer
 * (the id set under mid_lock, GetMethodDeclaringClass, the class record) costs several
 * times HotSpot's pointer chase. The table answers an instance only once that instance has
 * had the class's CLASS_LOAD, or has CLASS_LOAD off: definition before use is kept, and an
 * agent that enables CLASS_LOAD later still gets the class defined on its next ask.
 * Open addressing, entries only added (method ids are never reused), at most half full;
 * a full table is copied into one twice its size, and the old one is kept (readers may be
 * in it): all of them together take at most twice the last one's memory. mc_lock (a leaf)
 * serializes writers. */
struct mc_entry {
    _Atomic(jmethodID) mid;     /* published last: the fields below are set when it is */
    _Atomic(jobjectID) id;
    _Atomic uint32_t announced; /* bit per instance that had the CLASS_LOAD; only grows */
};
struct mc_table {
    struct mc_table *older;
    unsigned shift;             /* 64 - log2(size) */
    size_t size, used;
    struct mc_entry e[];
};
static _Atomic(struct mc_table *) mc_tab;
static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;

static inline size_t mc_slot(const struct mc_table *t, jmethodID mid)
{
    return (size_t)(((uint64_t)(uintptr_t)mid * 0x9E3779B97F4A7C15ull) >> t->shift);
}

static struct mc_entry *mc_find(struct mc_table *t, jmethodID mid)
{
    for (size_t i = mc_slot(t, mid);; i = (i + 1) & (t->size - 1)) {
        jmethodID k = atomic_load_explicit(&t->e[i].mid, memory_order_acquire);
        if (k == mid)
            return &t->e[i];
        if (k == NULL)
            return NULL;
    }
}

/* Into t, which has room (mc_lock held, or t not yet published). */
static void mc_add(struct mc_table *t, jmethodID mid, jobjectID id, uint32_t announced)
{
    size_t i = mc_slot(t, mid);
    while (atomic_load_explicit(&t->e[i].mid, memory_order_relaxed) != NULL)
        i = (i + 1) & (t->size - 1);
    atomic_store_explicit(&t->e[i].id, id, memory_order_relaxed);
    atomic_store_explicit(&t->e[i].announced, announced, memory_order_relaxed);
    atomic_store_explicit(&t->e[i].mid, mid, memory_order_release);
    t->used++;
}

static void mcache_put(jmethodID mid, jobjectID id, uint32_t announced)
{
    if (mid == NULL || id == NULL)
        return;
    pthread_mutex_lock(&mc_lock);
    struct mc_table *t = atomic_load_explicit(&mc_tab, memory_order_relaxed);
    struct mc_entry *e = t != NULL ? mc_find(t, mid) : NULL;
    if (e != NULL) {
        atomic_fetch_or(&e->announced, announced);
    } else if (t != NULL && 2 * (t->used + 1) <= t->size) {
        mc_add(t, mid, id, announced);
    } else {
        size_t size = t != NULL ? 2 * t->size : 1024;
        struct mc_table *n = calloc(1, sizeof *n + size * sizeof n->e[0]);
        if (n != NULL) {
            n->older = t;
            n->size = size;
            n->shift = 64 - (unsigned)__builtin_ctzll(size);
            for (size_t i = 0; t != NULL && i < t->size; i++) {
                jmethodID k = atomic_load_explicit(&t->e[i].mid, memory_order_relaxed);
                if (k != NULL)
                    mc_add(n, k, atomic_load(&t->e[i].id), atomic_load(&t->e[i].announced));
            }
            mc_add(n, mid, id, announced);
            atomic_store_explicit(&mc_tab, n, memory_order_release);
        }
    }
    pthread_mutex_unlock(&mc_lock);
}

static jobjectID method_class_slow(struct instance *inst, jmethodID mid)
{
    JNIEnv *jni = shim_current_jni();
    if (mid == NULL || jni == NULL) {
        report_misuse(inst, LOG_INFO, "GetMethodClass(%p)%s: NULL", (void *)mid,
                                      jni ? "" : " from a thread the JVM does not know");
        return NULL;
    }
    if (!mid_valid(jni, mid)) {
        report_misuse(inst, LOG_WARN, "GetMethodClass(%p): not a method id of any class the "
                      "JVM has loaded: NULL", (void *)mid);
        return NULL;
    }
    jclass cls = NULL;
    jvmtiError err = (*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, mid, &cls);
    jlong known = err == JVMTI_ERROR_INVALID_METHODID ? mid_class(mid) : 0;
    if (known != 0) {
        /* Its class has just unloaded (a sampler traced a frame of it, then asked): the id
         * CLASS_LOAD gave for it, which the agent knows, as HotSpot answered until the
         * class's CLASS_UNLOAD came. Nothing is left to announce. */
        log_info("GetMethodClass(%p): its class %p has unloaded: that id", (void *)mid,
                 (void *)(intptr_t)known);
        mcache_put(mid, ids_from_tag(known), UINT32_MAX);
        return ids_from_tag(known);
    }
    if (err != JVMTI_ERROR_NONE) {
        /* Name the id the agent passed: the usual cause is a stale or made-up one. */
        report_misuse(inst, LOG_WARN, "GetMethodClass(%p): GetMethodDeclaringClass: %s (%d): "
                      "NULL", (void *)mid, jvmti_error_name(err), (int)err);
        return NULL;
    }
    /* Definition before use: an agent that got the method id from JNI learns the class. */
    uint32_t announced;
    jobjectID id = id_announced(jni, cls, &announced);
    (*jni)->DeleteLocalRef(jni, cls);
    mcache_put(mid, id, announced);
    return id;
}

jobjectID jvmpi_GetMethodClass(struct instance *inst, jmethodID mid)
{
    struct mc_table *t = atomic_load_explicit(&mc_tab, memory_order_acquire);
    /* Only a thread the JVM knows gets an answer (the slow path says why not). */
    struct mc_entry *e = t != NULL && mid != NULL && shim_current_jni() != NULL ? mc_find(t, mid)
                                                                              : NULL;
    if (__builtin_expect(e != NULL, 1) &&
        ((atomic_load_explicit(&e->announced, memory_order_relaxed) >> inst->slot) & 1 ||
         !event_on(inst, JVMPI_EVENT_CLASS_LOAD)))
        return atomic_load_explicit(&e->id, memory_order_relaxed);
    return method_class_slow(inst, mid);
}
