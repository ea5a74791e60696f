/* agent_natives.c — the agent library's own JNI natives (Java_<class>_<method>), bound as
 * HotSpot bound natives found in -Xrun libraries.
 *
 * Agents shipped a small Java class (a control API, a listener) whose `native` methods the
 * agent library itself exported, and never called System.loadLibrary: HotSpot's native
 * lookup searched the -Xrun libraries after the class loader's. Today's JVM searches the
 * -agentpath libraries (libjvmpishim.so), not a library the shim dlopened, so the call
 * fails with UnsatisfiedLinkError (under the method-event prefix when methods=bci wrapped
 * the native). JVMTI has no hook on a failed lookup, so the shim binds them ahead:
 *
 *  - When an agent library is opened, its dynamic symbol table (core/elfsym.c) is
 *    searched for defined functions named Java_*. None (the usual case): nothing else
 *    happens, no class pays anything. Otherwise every possible mangled class part of those
 *    names (up to each '_' that is not an escape) goes into a small hash set, and
 *    ClassPrepare is kept on.
 *  - At ClassPrepare (and once for the classes already loaded at start-up), the class's
 *    JNI-mangled name is looked up in the set: one GetClassSignature and one hash lookup
 *    per class. Only a class that matches has its methods listed; each native method whose
 *    short or long JNI name the agent exports (the name without the methods=bci prefix)
 *    is bound with RegisterNatives, to the method as it is now named.
 * A class loader's own library cannot then override the agent's export for that method
 * (HotSpot asked the loader first); an agent exports those names for its own class only.
 */
#include "classes/classes.h"
#include "classes/agent_natives.h"
#include "core/api.h"
#include "core/elfsym.h"
#include "events/events.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct cls_key {
    char *mangled;              /* JNI-mangled binary class name */
    uint32_t insts;             /* bit per instance exporting natives for it */
    UT_hash_handle hh;
};
static struct cls_key *keys;    /* written at Agent_OnLoad only, then read-only */
static int nsyms;

/* ---- JNI name mangling (JNI spec, "Resolving Native Method Names") ---- */

struct sbuf {
    char *p;
    size_t n, cap;
};

static bool sb_put(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return true;
}

/* Append the mangled form of modified UTF-8 s[0..n): '/' -> '_', '_' -> "_1", ';' -> "_2",
 * '[' -> "_3", other non-alphanumerics as "_0xxxx" (UTF-16 units). */
static bool mangle(struct sbuf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        char tmp[8];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            tmp[0] = (char)c;
            if (!sb_put(b, tmp, 1))
                return false;
            i++;
            continue;
        }
        const char *esc = c == '/' ? "_" : c == '_' ? "_1" : c == ';' ? "_2" : c == '[' ? "_3" : NULL;
        if (esc != NULL) {
            if (!sb_put(b, esc, strlen(esc)))
                return false;
            i++;
            continue;
        }
        unsigned cp = c;
        if ((c & 0xe0) == 0xc0 && i + 1 < n) {
            cp = ((c & 0x1fu) << 6) | (u[i + 1] & 0x3fu);
            i += 2;
        } else if ((c & 0xf0) == 0xe0 && i + 2 < n) {
            cp = ((c & 0x0fu) << 12) | ((u[i + 1] & 0x3fu) << 6) | (u[i + 2] & 0x3fu);
            i += 3;
        } else {
            i++;
        }
        snprintf(tmp, sizeof tmp, "_0%04x", cp & 0xffffu);
        if (!sb_put(b, tmp, 6))
            return false;
    }
    return true;
}

/* ---- the agent's exports ---- */

/* Every mangled class part a symbol Java_<class>_<method>[__<sig>] can have: the text up to
 * each '_' that is not followed by an escape digit. */
static void add_symbol(const char *sym, int slot)
{
    const char *body = sym + 5; /* after "Java_" */
    for (const char *p = body; *p; p++) {
        if (*p != '_' || p == body || (p[1] >= '0' && p[1] <= '3'))
            continue;
        size_t n = (size_t)(p - body);
        struct cls_key *k;
        HASH_FIND(hh, keys, body, n, k);
        if (k == NULL) {
            k = calloc(1, sizeof *k);
            if (k == NULL || (k->mangled = strndup(body, n)) == NULL) {
                free(k);
                return;
            }
            HASH_ADD_KEYPTR(hh, keys, k->mangled, n, k);
        }
        k->insts |= 1u << slot;
    }
    nsyms++;
}

struct scan {
    int slot;
    int found;
};

/* A defined Java_* function (global or weak) of the agent library. */
static bool scan_symbol(const struct elfsym *sym, void *ctx)
{
    struct scan *sc = ctx;
    if (sym->defined && sym->type == STT_FUNC &&
        (sym->bind == STB_GLOBAL || sym->bind == STB_WEAK) &&
        strncmp(sym->name, "Java_", 5) == 0) {
        add_symbol(sym->name, sc->slot);
        sc->found++;
    }
    return true;
}

/* The defined Java_* functions in the dynamic symbol table of the ELF file at path; -1 if
 * it cannot be read, with the reason in err. */
static int scan_file(const char *path, int slot, char *err, size_t errlen)
{
    struct scan sc = {.slot = slot, .found = 0};
    if (elfsym_each(path, scan_symbol, &sc, err, errlen) < 0)
        return -1;
    return sc.found;
}

void natives_scan(struct instance *inst)
{
    Dl_info di;
    const char *path = inst->image_file;
    if (path == NULL && inst->jvm_onload != NULL && dladdr(*(void **)&inst->jvm_onload, &di) != 0 &&
        di.dli_fname != NULL)
        path = di.dli_fname; /* the file the loader mapped */
    if (path == NULL)
        path = inst->resolved_path;
    if (path == NULL)
        return;
    char err[256];
    int n = scan_file(path, inst->slot, err, sizeof err);
    if (n < 0) {
        /* dlopen took the file, so it is a library the reader finds damaged: any Java_*
         * it exports stays unbound, and the agent's classes would meet UnsatisfiedLinkError. */
        log_warn("agent %d: cannot read the dynamic symbols of %s (%s): natives it exports "
                 "(Java_*) are not bound to their classes", inst->slot, path, err);
        return;
    }
    if (n > 0) {
        log_info("agent %d: exports %d JNI native(s) (Java_*): bound to their classes as "
                 "they are prepared", inst->slot, n);
        events_need_always(JVMTI_EVENT_CLASS_PREPARE);
    }
}

/* ---- binding ---- */

static void bind_method(JNIEnv *jni, jclass cls, const char *mcls, jmethodID mid,
                        uint32_t insts)
{
    jvmtiEnv *j = g_shim.jvmti;
    char *name = NULL, *sig = NULL;
    if (!jvmti_ok_at((*j)->GetMethodName(j, mid, &name, &sig, NULL), LOG_DEBUG,
                     "GetMethodName of a native to bind to the agent's export"))
        return;
    const char *plain = name;
    size_t pl = strlen(BCI_NATIVE_PREFIX);
    if (strncmp(plain, BCI_NATIVE_PREFIX, pl) == 0)
        plain += pl; /* wrapped by methods=bci: the agent exports the original name */
    struct sbuf s = {0};
    void *fn = NULL;
    struct instance *from = NULL;
    if (sb_put(&s, "Java_", 5) && sb_put(&s, mcls, strlen(mcls)) && sb_put(&s, "_", 1) &&
        mangle(&s, plain, strlen(plain))) {
        for (int i = 0; i < g_shim.ninst && fn == NULL; i++)
            if ((insts & (1u << i)) && (fn = dlsym(g_shim.inst[i].dl, s.p)) != NULL)
                from = &g_shim.inst[i];
        const char *close = strchr(sig, ')');
        if (fn == NULL && close != NULL && sb_put(&s, "__", 2) &&
            mangle(&s, sig + 1, (size_t)(close - sig - 1)))
            for (int i = 0; i < g_shim.ninst && fn == NULL; i++)
                if ((insts & (1u << i)) && (fn = dlsym(g_shim.inst[i].dl, s.p)) != NULL)
                    from = &g_shim.inst[i];
    }
    if (fn != NULL) {
        JNINativeMethod nm = {name, sig, fn};
        if ((*jni)->RegisterNatives(jni, cls, &nm, 1) != 0) {
            (*jni)->ExceptionClear(jni);
            log_warn("agent %d: could not bind its native %s to %s%s", from->slot, s.p, name, sig);
        } else {
            log_debug("agent %d: bound its native %s to %s%s", from->slot, s.p, name, sig);
        }
    }
    free(s.p);
    jvmti_free(j, name);
    jvmti_free(j, sig);
}

void natives_class_prepare(JNIEnv *jni, jclass cls)
{
    if (keys == NULL)
        return;
    jvmtiEnv *j = g_shim.jvmti;
    char *csig = NULL;
    if (!jvmti_ok_at((*j)->GetClassSignature(j, cls, &csig, NULL), LOG_DEBUG,
                     "GetClassSignature of a prepared class, to bind the agents' own natives"))
        return;
    size_t n = strlen(csig);
    struct sbuf mc = {0};
    struct cls_key *k = NULL;
    if (n > 2 && csig[0] == 'L' && mangle(&mc, csig + 1, n - 2))
        HASH_FIND(hh, keys, mc.p, mc.n, k);
    jvmti_free(j, csig);
    if (k != NULL) {
        jint nm = 0;
        jmethodID *ms = NULL;
        if (jvmti_ok_at((*j)->GetClassMethods(j, cls, &nm, &ms), LOG_DEBUG,
                        "GetClassMethods of a class whose natives the agent exports")) {
            for (jint i = 0; i < nm; i++) {
                jint mods = 0;
                if (jvmti_ok_at((*j)->GetMethodModifiers(j, ms[i], &mods), LOG_DEBUG,
                                "GetMethodModifiers of a method the agent may export") &&
                    (mods & 0x0100)) /* ACC_NATIVE */
                    bind_method(jni, cls, mc.p, ms[i], k->insts);
            }
            jvmti_free(j, ms);
        }
    }
    free(mc.p);
}

void natives_bind_loaded(JNIEnv *jni)
{
    if (keys == NULL)
        return;
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses to bind the agents' own natives"))
        return;
    for (jint i = 0; i < n; i++) {
        jint st = 0;
        if (jvmti_ok_at((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st), LOG_WARN,
                        "GetClassStatus of a loaded class, to bind the agents' own natives") &&
            (st & JVMTI_CLASS_STATUS_PREPARED) &&
            !(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)))
            natives_class_prepare(jni, cs[i]);
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
}
