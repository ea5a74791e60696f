/* classes.c — the classes/ module: its event rows and JVMTI callbacks;
 * RequestEvent(CLASS_LOAD, class id); CLASS_LOAD_HOOK.
 *
 * What the folder does is spread over its parts by job (internal.h lists them); this file
 * wires them into the switchboard: CLASS_LOAD (announce.c, info.c), CLASS_UNLOAD
 * (table.c) and CLASS_LOAD_HOOK (here), and answers an agent's request for a class's
 * CLASS_LOAD, which may find the class unloading, unlinked, or not a class at all.
 */
#include "classes/internal.h"
#include "core/ids.h"
#include "events/events.h"
#include "events/report.h"

#include <stdlib.h>
#include <string.h>

/* ---- RequestEvent(CLASS_LOAD, class id) ---- */

static void refuse_not_linked(struct instance *inst, jobjectID id, jclass cls)
{
    char *sig = NULL;
    jvmti_ignore((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL),
                 "GetClassSignature for a refusal's message: \"?\" names the class then");
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
    jvmti_free(g_shim.jvmti, sig);
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
    } else if (r == NULL && !classes_mirror_loaded(jni, cls)) {
        ids_bad(inst, IDS_BAD_KIND, "RequestEvent(CLASS_LOAD, %p): a Class object left by a "
                                    "definition that failed, no class: JVMPI_FAIL", (void *)id);
    } else {
        jint st = 0;
        jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st),
                     "GetClassStatus for RequestEvent(CLASS_LOAD): a class it fails for is "
                     "not taken for a primitive type, and its members are read as usual");
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


/* Bumped at every switch of CLASS_LOAD by any instance: what callers of
 * classes_id_announced_all learned about a class ("every listener has been told") may no
 * longer hold once an agent starts listening. */
static _Atomic uint64_t announce_gen;

static void load_changed(int t, bool any)
{
    (void)t;
    (void)any;
    atomic_fetch_add(&announce_gen, 1);
}

uint64_t classes_announce_gen(void)
{
    return atomic_load_explicit(&announce_gen, memory_order_acquire);
}

void classes_module_init(void)
{
    loader_keys_init();
    struct event_row load = {.kind = EVK_ON,
                             .jvmti = {JVMTI_EVENT_CLASS_PREPARE},
                             .on_change = load_changed,
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
