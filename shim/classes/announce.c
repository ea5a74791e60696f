/* announce.c — definition before use: who posts a class's CLASS_LOAD, and when; the
 * JVMTI ClassLoad and ClassPrepare callbacks; the start-up replay.
 *
 * CLASS_LOAD comes on the defining thread, from JVMTI ClassLoad, where HotSpot posted it
 * (inside the definition, after the class's hook): JVMTI lists methods and fields only once
 * a class is prepared, so the class is linked there first (cb_class_load); a class that
 * cannot be linked there gets it at ClassPrepare, still before <clinit>. Between a class's
 * hook and its CLASS_LOAD other threads leave the announcement to its definer and wait for
 * it (pending_defs, class_rec.definer).
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
 * Locks: ann_lock (a leaf; guards pending_defs, and its condition is waited on for
 * announcements and definers); key_lock (a leaf; numbering class loaders).
 */
#include "classes/agent_natives.h"
#include "classes/internal.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "events/report.h"

#include <stdlib.h>
#include <string.h>

/* Registered by methods/ (classes.h). */
static jclass (*up_probe_class)(void);

void classes_set_probe_class(jclass (*probe_class)(void))
{
    up_probe_class = probe_class;
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

void ensure_linked(JNIEnv *jni, jclass cls)
{
    jint st = 0;
    if (cls == NULL ||
        !jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st), LOG_DEBUG,
                     "GetClassStatus of a class to link") ||
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
                jvmti_ignore((*g_shim.jvmti)->SetTag(g_shim.jvmti, f, TAG_SHIM_OWN),
                             "SetTag of the shim's own Field: an untagged one is only "
                             "garbage an agent may see");
                (*jni)->DeleteLocalRef(jni, f);
            }
        }
        jvmti_ignore((*g_shim.jvmti)->SetTag(g_shim.jvmti, r, TAG_SHIM_OWN),
                     "SetTag of the shim's own Field[]: an untagged one is only garbage an "
                     "agent may see");
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
    if (jvmti_ok_at((*key_env)->GetTag(key_env, loader, &k), LOG_DEBUG,
                    "GetTag of a class loader's number") && k != 0)
        return k;
    shim_crit_begin(); /* JVMTI calls under a shim lock */
    pthread_mutex_lock(&key_lock);
    if (jvmti_ok_at((*key_env)->GetTag(key_env, loader, &k), LOG_DEBUG,
                    "GetTag of a class loader's number") && k == 0) {
        k = atomic_fetch_add(&next_loader_key, 1);
        if (!jvmti_ok_at((*key_env)->SetTag(key_env, loader, k), LOG_WARN,
                         "tagging a class loader to tell definitions apart"))
            k = -1;
    }
    pthread_mutex_unlock(&key_lock);
    shim_crit_end();
    return k != 0 ? k : -1;
}

void loader_keys_init(void)
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
        jvmti_ignore((*e)->DisposeEnvironment(e),
                     "DisposeEnvironment of an environment the shim does not use");
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
    if (!jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL), LOG_DEBUG,
                     "GetClassSignature to match a class with definitions in progress"))
        return false;
    size_t n = strlen(sig);
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        k->name = malloc(n - 1);
        if (k->name != NULL) {
            memcpy(k->name, sig + 1, n - 2);
            k->name[n - 2] = '\0';
        }
    }
    jvmti_free(g_shim.jvmti, sig);
    if (k->name == NULL)
        return false;
    jvmti_ignore((*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &k->loader),
                 "GetClassLoader to match a definition: the boot loader's key if it fails");
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
void pending_begin(JNIEnv *jni, const char *name, jobject loader)
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
        !jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st), LOG_DEBUG,
                     "GetClassStatus of a class whose supertypes go first") ||
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
    if (!jvmti_ok_at((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, cls, &ni, &ifs),
                     LOG_DEBUG, "GetImplementedInterfaces of a class whose supertypes go first"))
        return busy;
    for (jint i = 0; i < ni; i++) {
        if (!busy)
            busy = wait_for_super(jni, ifs[i], wait);
        (*jni)->DeleteLocalRef(jni, ifs[i]);
    }
    jvmti_free(g_shim.jvmti, ifs);
    return busy;
}

bool class_prepared(jclass cls)
{
    jint st = 0;
    return cls != NULL &&
           jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st), LOG_DEBUG,
                       "GetClassStatus: is the class prepared?") &&
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
bool call_may_link(void)
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

void link_later(JNIEnv *jni, jclass cls)
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
void announce(JNIEnv *jni, struct class_rec *r, jclass cls)
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

jobjectID id_announced(JNIEnv *jni, jclass cls, uint32_t *announced)
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

jobjectID classes_id_announced_all(JNIEnv *jni, jclass cls, bool *all)
{
    uint32_t announced;
    jobjectID id = id_announced(jni, cls, &announced);
    bool done = id != NULL;
    for (int i = 0; i < g_shim.ninst && done; i++)
        done = (announced & (1u << i)) || !event_on(&g_shim.inst[i], JVMPI_EVENT_CLASS_LOAD);
    *all = done;
    return id;
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

jobjectID classes_method_announced(JNIEnv *jni, jmethodID mid)
{
    jclass cls = NULL;
    if (mid == NULL ||
        !jvmti_ok_at((*g_shim.jvmti)->GetMethodDeclaringClass(g_shim.jvmti, mid, &cls), LOG_DEBUG,
                     "GetMethodDeclaringClass for the class id of a method event"))
        return NULL;
    jobjectID id = classes_id_announced(jni, cls);
    (*jni)->DeleteLocalRef(jni, cls);
    return id;
}

/* ---- the JVMTI callbacks ---- */

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
void JNICALL cb_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls)
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
    jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st),
                 "GetClassStatus after linking at ClassLoad: not prepared if it fails, and "
                 "the CLASS_LOAD comes at the class's next use");
    if (st & JVMTI_CLASS_STATUS_PREPARED)
        classes_id_announced(jni, cls);
    pthread_mutex_lock(&ann_lock);
    atomic_store(&r->definer, NULL);
    pthread_cond_broadcast(&ann_cond);
    pthread_mutex_unlock(&ann_lock);
    /* Another thread may have linked it after our attempt failed, while we were still its
     * definer (its ClassPrepare then left it to us). */
    if (!(st & JVMTI_CLASS_STATUS_PREPARED) &&
        jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st), LOG_DEBUG,
                    "GetClassStatus: did another thread link the class meanwhile?") &&
        (st & JVMTI_CLASS_STATUS_PREPARED))
        classes_id_announced(jni, cls);
}

void JNICALL cb_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass cls)
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
        jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st),
                     "GetClassStatus in the start-up replay: a class it fails for is "
                     "announced like any instance class");
        /* HotSpot replayed every instance class in its dictionary, linked or not: a class
         * defined before the agent and linked later gets its CLASS_LOAD here, not at its
         * ClassPrepare on whatever thread links it (announce() links it first). */
        if (!(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE | JVMTI_CLASS_STATUS_ERROR))) {
            classes_id_announced(jni, cs[i]);
            posted++;
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
    log_debug("start-up replay: %d classes", posted);
}
