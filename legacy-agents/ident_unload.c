/* ident_unload.c — a JDK 1.3-style JVMPI agent for CLASS_UNLOAD and CLASS_LOAD_HOOK
 * (tests/it/classes/ident_unload.sh, workload tests/java/IdentUnload.java).
 *
 * Enabled: CLASS_LOAD, CLASS_UNLOAD, CLASS_LOAD_HOOK, JVM_INIT_DONE, JVM_SHUT_DOWN.
 *  - CLASS_LOAD: remembers id -> name of every class; prints "load NAME id=ID" for Ident*.
 *  - CLASS_UNLOAD: the id must be a class announced before (FAIL otherwise). Inside the
 *    handler RequestEvent(CLASS_LOAD, id) must post one REQUESTED CLASS_LOAD with that id and
 *    the same name before returning. Prints "unload NAME id=ID rc=.. events=.. ...". For
 *    IdentUnloadee it sets the system property ident.unloads to the count so far (JNI),
 *    which the workload waits for.
 *  - CLASS_LOAD_HOOK: class_data must be a class file, new_class_data/new_class_data_len
 *    preset to class_data/class_data_len, malloc_f set. For the class whose bytes contain
 *    the UTF-8 constant HOOK_ORIGINAL_TEXT it returns a malloc_f copy with that constant
 *    replaced by HOOK_REWRITTEN_TXT (same length); for the one containing HOOK_GARBAGE_CASE it
 *    returns 64 bytes of garbage (the shim must reject them). Prints "hook NAME ...".
 *  - IdentUnload$Done (CLASS_LOAD): every id unloaded so far must now be dead: RequestEvent
 *    gives JVMPI_FAIL and posts nothing, jobjectID2jobject gives NULL.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "ident_unload"
#define KIT_LINE 2048
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

/* ---- id -> name map (kit/pmap.h; caller holds lock) --------------------------------- */

static struct pmap names; /* class id -> strdup(name) */

#define MAXU 8192
static jobjectID unloaded[MAXU];
static int nunloaded, n_unloadee, n_hooks, n_hook_preset_bad;

static volatile int req_count;
static char req_name[256];
static jobjectID req_id;
static int req_methods;

/* ---- class file helpers -------------------------------------------------------------- */

static unsigned u2(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

/* The internal name of the class a class file defines, or "?". */
static void class_name(const unsigned char *d, int len, char *out, size_t n)
{
    snprintf(out, n, "?");
    if (len < 10 || u2(d) != 0xCAFE || u2(d + 2) != 0xBABE)
        return;
    int count = (int)u2(d + 8);
    long *off = calloc((size_t)count + 1, sizeof *off);
    if (off == NULL)
        return;
    long p = 10;
    for (int i = 1; i < count && p < len; i++) {
        off[i] = p;
        int tag = d[p];
        switch (tag) {
        case 1: p += 3 + (p + 2 < len ? u2(d + p + 1) : 0); break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: p += 5; break;
        case 5: case 6: p += 9; i++; break;
        case 7: case 8: case 16: case 19: case 20: p += 3; break;
        case 15: p += 4; break;
        default: free(off); return;
        }
    }
    if (p + 4 <= len) {
        unsigned this_class = u2(d + p + 2);
        if (this_class > 0 && (int)this_class < count && d[off[this_class]] == 7) {
            unsigned ni = u2(d + off[this_class] + 1);
            if (ni > 0 && (int)ni < count && d[off[ni]] == 1) {
                unsigned l = u2(d + off[ni] + 1);
                snprintf(out, n, "%.*s", (int)l, (const char *)d + off[ni] + 3);
            }
        }
    }
    free(off);
}

static long find(const unsigned char *d, int len, const char *s)
{
    size_t n = strlen(s);
    for (long i = 0; i + (long)n <= len; i++)
        if (memcmp(d + i, s, n) == 0)
            return i;
    return -1;
}

static void on_hook(JVMPI_Event *ev)
{
    unsigned char *d = ev->u.class_load_hook.class_data;
    int len = ev->u.class_load_hook.class_data_len;
    char name[256];
    __sync_add_and_fetch(&n_hooks, 1);
    if (d == NULL || len < 10 || u2(d) != 0xCAFE || u2(d + 2) != 0xBABE) {
        FAIL("CLASS_LOAD_HOOK class_data %p len %d is not a class file", (void *)d, len);
        return;
    }
    class_name(d, len, name, sizeof name);
    int preset = ev->u.class_load_hook.new_class_data == d &&
                 ev->u.class_load_hook.new_class_data_len == len;
    if (!preset) {
        __sync_add_and_fetch(&n_hook_preset_bad, 1);
        FAIL("CLASS_LOAD_HOOK %s: new_class_data %p/%d not preset to class_data %p/%d", name,
             (void *)ev->u.class_load_hook.new_class_data,
             (int)ev->u.class_load_hook.new_class_data_len, (void *)d, len);
    }
    if (ev->u.class_load_hook.malloc_f == NULL) {
        FAIL("CLASS_LOAD_HOOK %s: malloc_f NULL", name);
        return;
    }
    long at = find(d, len, "HOOK_ORIGINAL_TEXT");
    if (at >= 0) {
        unsigned char *nd = ev->u.class_load_hook.malloc_f((unsigned)len);
        memcpy(nd, d, (size_t)len);
        memcpy(nd + at, "HOOK_REWRITTEN_TXT", 18);
        ev->u.class_load_hook.new_class_data = nd;
        ev->u.class_load_hook.new_class_data_len = len;
        say("hook %s rewrote constant at %ld len=%d", name, at, len);
        return;
    }
    if (find(d, len, "HOOK_GARBAGE_CASE") >= 0) {
        unsigned char *nd = ev->u.class_load_hook.malloc_f(64);
        memset(nd, 'G', 64);
        ev->u.class_load_hook.new_class_data = nd;
        ev->u.class_load_hook.new_class_data_len = 64;
        say("hook %s returned 64 garbage bytes", name);
        return;
    }
    if (strncmp(name, "Ident", 5) == 0)
        say("hook %s unchanged len=%d preset=%s", name, len, preset ? "yes" : "no");
}

/* ---- CLASS_LOAD / CLASS_UNLOAD -------------------------------------------------------- */

static void stale_checks(void);

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    jobjectID id = ev->u.class_load.class_id;
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        jvmpi->RawMonitorEnter(lock);
        snprintf(req_name, sizeof req_name, "%s", S(cn));
        req_id = id;
        req_methods = ev->u.class_load.num_methods;
        __sync_add_and_fetch(&req_count, 1);
        jvmpi->RawMonitorExit(lock);
        return;
    }
    jvmpi->RawMonitorEnter(lock);
    void *old = NULL;
    if (pm_get(&names, id, &old) && old != NULL)
        FAIL("second CLASS_LOAD for id %p: %s (first %s)", (void *)id, S(cn), (char *)old);
    pm_put(&names, id, strdup(S(cn)));
    jvmpi->RawMonitorExit(lock);
    if (cn != NULL && strncmp(cn, "Ident", 5) == 0) {
        say("load %s id=%p", cn, (void *)id);
        if (strcmp(cn, "IdentUnload$Done") == 0)
            stale_checks();
    }
}

static void set_unloads_property(int n)
{
    JNIEnv *jni = current_env();
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 16) != 0) {
        FAIL("CLASS_UNLOAD handler: no JNIEnv");
        return;
    }
    char v[32];
    snprintf(v, sizeof v, "%d", n);
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID sp = sys ? (*jni)->GetStaticMethodID(jni, sys, "setProperty",
                                                   "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;")
                       : NULL;
    if (sp != NULL)
        (*jni)->CallStaticObjectMethod(jni, sys, sp, (*jni)->NewStringUTF(jni, "ident.unloads"),
                                       (*jni)->NewStringUTF(jni, v));
    if (sp == NULL || (*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        FAIL("cannot set ident.unloads through JNI");
    }
    (*jni)->PopLocalFrame(jni, NULL);
}

static void on_class_unload(JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_unload.class_id;
    char name[256] = "?";
    jvmpi->RawMonitorEnter(lock);
    void *nv = NULL;
    int known = pm_get(&names, id, &nv) && nv != NULL;
    if (known) {
        snprintf(name, sizeof name, "%s", (char *)nv);
        free(nv);
        pm_put(&names, id, NULL); /* unloaded: a later CLASS_LOAD with this id would be new */
    }
    if (nunloaded < MAXU)
        unloaded[nunloaded++] = id;
    jvmpi->RawMonitorExit(lock);
    if (!known)
        FAIL("CLASS_UNLOAD for id %p: no CLASS_LOAD announced it", (void *)id);

    jvmpi->DisableGC();
    int before = req_count;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
    int got = req_count - before;
    jvmpi->EnableGC();
    jvmpi->RawMonitorEnter(lock);
    int same = got == 1 && req_id == id && strcmp(req_name, name) == 0;
    char rn[256];
    snprintf(rn, sizeof rn, "%s", got ? req_name : "-");
    int rm = req_methods;
    jvmpi->RawMonitorExit(lock);
    int is_unloadee = strcmp(name, "IdentUnloadee") == 0;
    if (is_unloadee || strncmp(name, "Ident", 5) == 0)
        say("unload %s id=%p request rc=%d events=%d requested_name=%s requested_methods=%d", name,
            (void *)id, (int)rc, got, rn, rm);
    if (rc != JVMPI_SUCCESS || !same)
        FAIL("CLASS_UNLOAD %s (%p): RequestEvent(CLASS_LOAD) inside the handler returned %d, %d "
             "events, name %s", name, (void *)id, (int)rc, got, rn);
    if (is_unloadee) {
        jvmpi->RawMonitorEnter(lock);
        int n = ++n_unloadee;
        jvmpi->RawMonitorExit(lock);
        set_unloads_property(n);
    }
}

static void stale_checks(void)
{
    jvmpi->RawMonitorEnter(lock);
    int n = nunloaded;
    jobjectID *ids = malloc(sizeof *ids * (n ? n : 1));
    memcpy(ids, unloaded, sizeof *ids * n);
    jvmpi->RawMonitorExit(lock);
    int failed = 0, events = 0, refs = 0;
    jvmpi->DisableGC();
    for (int i = 0; i < n; i++) {
        int before = req_count;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, ids[i]);
        events += req_count - before;
        failed += rc == JVMPI_FAIL;
        jobject o = jvmpi->jobjectID2jobject(ids[i]);
        if (o != NULL) {
            refs++;
            (*current_env())->DeleteLocalRef(current_env(), o);
        }
    }
    jvmpi->EnableGC();
    say("stale unloaded ids=%d request_failed=%d events=%d resolved=%d", n, failed, events, refs);
    if (failed != n || events != 0 || refs != 0)
        FAIL("ids of unloaded classes still answer: %d of %d requests did not fail, %d events, "
             "%d resolved", n - failed, n, events, refs);
    free(ids);
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        on_hook(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("JVM_INIT_DONE");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("summary hooks=%d hook_preset_bad=%d unloads=%d unloadee_unloads=%d fails=%d", n_hooks,
            n_hook_preset_bad, nunloaded, n_unloadee, g_fails);
        break;
    default:
        FAIL("event type %d was never enabled", (int)ev->event_type);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_ident_unload_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_CLASS_UNLOAD,
                              JVMPI_EVENT_CLASS_LOAD_HOOK, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    say("loaded");
    return JNI_OK;
}
