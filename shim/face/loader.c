/* loader.c — find, dlopen and start a legacy JVMPI agent; the proxy JavaVM it talks to.
 *
 * Agent_OnLoad resolves and dlopens the agent (so a missing library, an unresolved symbol
 * or a missing JVM_OnLoad refuses VM start with JNI_ERR); JVM_OnLoad itself runs later, in
 * VMInit, because JDK 1.2-1.4 ran -Xrun agents late in VM creation with a JNIEnv available
 * and agents depend on GetEnv(JNI_VERSION_1_2) working there (inside Agent_OnLoad it fails
 * with JNI_EDETACHED).
 *
 * The agent gets a proxy JavaVM per instance: GetEnv answers JVMPI_VERSION_1, 1_1 and 1_2
 * with that instance's JVMPI_Interface (version field JVMPI_VERSION_1_2, as HotSpot 1.4.2),
 * and every other request and every other JavaVM function goes to the real VM. The real
 * VM must never see GetEnv(JVMPI_*): it would print "JVMPI ... no longer supported".
 */
#include "core/elfsym.h"
#include "face/face.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct instance *inst_of(JavaVM *vm)
{
    return ((struct proxy_vm *)vm)->inst;
}

static jint JNICALL pvm_DestroyJavaVM(JavaVM *vm)
{
    (void)vm;
    return (*g_shim.vm)->DestroyJavaVM(g_shim.vm);
}

static jint JNICALL pvm_AttachCurrentThread(JavaVM *vm, void **penv, void *args)
{
    (void)vm;
    return (*g_shim.vm)->AttachCurrentThread(g_shim.vm, penv, args);
}

static jint JNICALL pvm_DetachCurrentThread(JavaVM *vm)
{
    (void)vm;
    return (*g_shim.vm)->DetachCurrentThread(g_shim.vm);
}

static jint JNICALL pvm_AttachCurrentThreadAsDaemon(JavaVM *vm, void **penv, void *args)
{
    (void)vm;
    return (*g_shim.vm)->AttachCurrentThreadAsDaemon(g_shim.vm, penv, args);
}

static jint JNICALL pvm_GetEnv(JavaVM *vm, void **penv, jint version)
{
    struct instance *inst = inst_of(vm);
    if (version == JVMPI_VERSION_1 || version == JVMPI_VERSION_1_1 ||
        version == JVMPI_VERSION_1_2) {
        if (penv == NULL) {
            log_error("GetEnv(JVMPI_VERSION 0x%x) called with a NULL result pointer",
                      (unsigned)version);
            return JNI_ERR;
        }
        /* HotSpot 1.4.2 reported 1_2 whatever was asked; so do we. Unlike HotSpot, a
         * second GetEnv does not silently disable the agent's events. */
        inst->got_interface = true;
        *penv = &inst->iface;
        log_debug("agent %d: GetEnv(JVMPI 0x%x) -> JVMPI_Interface %p", inst->slot,
                  (unsigned)version, (void *)&inst->iface);
        return JNI_OK;
    }
    return (*g_shim.vm)->GetEnv(g_shim.vm, penv, version);
}

void loader_init_proxy_vm(struct instance *inst)
{
    memset(&inst->vm_functions, 0, sizeof inst->vm_functions);
    inst->vm_functions.DestroyJavaVM = pvm_DestroyJavaVM;
    inst->vm_functions.AttachCurrentThread = pvm_AttachCurrentThread;
    inst->vm_functions.DetachCurrentThread = pvm_DetachCurrentThread;
    inst->vm_functions.GetEnv = pvm_GetEnv;
    inst->vm_functions.AttachCurrentThreadAsDaemon = pvm_AttachCurrentThreadAsDaemon;
    inst->vm.functions = &inst->vm_functions;
    inst->vm.inst = inst;
}

/* Directory of libjvmpishim.so itself: the last place a bare agent name is looked for,
 * as the JDK's own lib directory was for -Xrun. */
static bool shim_dir(char *buf, size_t len)
{
    Dl_info info;
    if (dladdr((void *)shim_dir, &info) == 0 || info.dli_fname == NULL)
        return false;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", info.dli_fname);
    snprintf(buf, len, "%s", dirname(tmp));
    return true;
}

/* ---- symbol collisions ----
 * The launcher loads libjvm RTLD_GLOBAL, and JDK 25's libjvm exports functions with short
 * common names (threads, events, debug, verify, find, help, flush, ...). An agent's own
 * reference to an exported global of the same name (a C agent's non-static "threads"
 * table) binds to the first definition in the global scope: libjvm's, so the agent writes
 * into the JVM's code. RTLD_DEEPBIND makes the agent's own definitions win, but it also
 * binds the agent's malloc/free to libc's ahead of an allocator preloaded into the JVM.
 * So the shim uses it only when a collision exists: it reads the agent's defined global
 * symbols from its .dynsym (core/elfsym.c) and asks dlsym(RTLD_DEFAULT) for each. Weak definitions (C++
 * template instances) and the names every shared object defines are not collisions. */

static bool ordinary_export(const char *n)
{
    static const char *const every_so[] = {"_init", "_fini", "_edata", "_end", "__bss_start",
                                           "JVM_OnLoad", "JVM_OnUnload", NULL};
    for (int i = 0; every_so[i]; i++)
        if (strcmp(n, every_so[i]) == 0)
            return true;
    return n[0] == '\0';
}

struct collisions {
    char *out;
    size_t outlen, used;
    int n;
};

/* A defined global symbol of default visibility that the global scope defines too. */
static bool collision_symbol(const struct elfsym *sym, void *ctx)
{
    struct collisions *c = ctx;
    unsigned type = sym->type;
    if (!sym->defined || sym->bind != STB_GLOBAL || sym->visibility != STV_DEFAULT ||
        (type != STT_OBJECT && type != STT_FUNC && type != STT_COMMON && type != STT_TLS &&
         type != STT_GNU_IFUNC) ||
        ordinary_export(sym->name) || dlsym(RTLD_DEFAULT, sym->name) == NULL)
        return true;
    c->n++;
    int w = snprintf(c->out + c->used, c->outlen - c->used, "%s%s", c->used ? ", " : "",
                     sym->name);
    if (w > 0 && (size_t)w < c->outlen - c->used)
        c->used += (size_t)w;
    return true;
}

/* The agent's exported names already defined in the global scope, comma-separated into
 * out (truncated); returns how many. 0 if the file is not a readable ELF64 object. */
static int symbol_collisions(const char *path, char *out, size_t outlen)
{
    out[0] = '\0';
    struct collisions c = {.out = out, .outlen = outlen};
    char err[256];
    if (elfsym_each(path, collision_symbol, &c, err, sizeof err) < 0) {
        /* dlopen says next whether the file loads at all; if it does, it loads without
         * RTLD_DEEPBIND, and this line says why no collision was looked for. */
        log_info("%s: its dynamic symbols cannot be read (%s): loaded without a check for "
                 "names the process already defines", path, err);
        return 0;
    }
    return c.n;
}

/* dlopen an agent image: RTLD_DEEPBIND only if its exports collide (see above). */
static void *dlopen_agent(struct instance *inst, const char *path)
{
    char names[1024];
    int n = symbol_collisions(path, names, sizeof names);
    int deep = 0;
    if (n > 0) {
        static bool warned;
        deep = RTLD_DEEPBIND;
        if (!warned) {
            warned = true;
            log_warn("a legacy agent exports global names that the JVM process already "
                     "defines (JDK 25's libjvm exports threads, events, debug, ...): it is "
                     "loaded with RTLD_DEEPBIND so that its own definitions win; its malloc "
                     "and free then bind to libc's, ahead of any allocator preloaded into "
                     "the JVM");
        }
        log_info("agent %d: %s: %d exported name%s already defined in the process: %s",
                 inst->slot, path, n, n == 1 ? "" : "s", names);
    }
    inst->deepbind = n > 0;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL | deep);
}

/* An agent library of the other architecture cannot be loaded here; the message names the
 * shim that loads it (make i386 builds the i386 one; installed, each is in its multiarch
 * directory). */
#if defined(__i386__)
#define SHIM_ARCH "i386 (ELF32)"
#define OTHER_SHIM_HINT "the x86-64 shim on a 64-bit JDK: -agentpath:<prefix>/lib/x86_64-linux-gnu/" \
    "libjvmpishim.so (build/libjvmpishim.so in the source tree)"
#else
#define SHIM_ARCH "x86-64 (ELF64)"
#define OTHER_SHIM_HINT "the i386 shim on a 32-bit JDK (Debian: openjdk-17-jdk-headless:i386): " \
    "<i386 JDK>/bin/java -agentpath:<prefix>/lib/i386-linux-gnu/libjvmpishim.so=legacy=... " \
    "(build/i386/libjvmpishim.so in the source tree, from make i386)"
#endif

static void *open_path(struct instance *inst, const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "%s is a directory, not a shared library", path);
        return NULL;
    }
    char arch[64];
    bool foreign = false;
    if (elfsym_arch(path, arch, sizeof arch, &foreign) == 0 && foreign) {
        /* dlopen would say only "wrong ELF class": say which shim loads it. */
        snprintf(why, whylen, "%s is an %s library, and this shim is %s: it loads only %s "
                 "agents. Run this agent with %s", path, arch, SHIM_ARCH, SHIM_ARCH,
                 OTHER_SHIM_HINT);
        return NULL;
    }
    dlerror();
    void *h = dlopen_agent(inst, path);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : "dlopen failed");
        return NULL;
    }
    free(inst->resolved_path);
    inst->resolved_path = strdup(path);
    free(inst->image_file);
    inst->image_file = strdup(path);
    return h;
}

/* Copy the agent library already loaded from inst->resolved_path to a private temporary
 * file and dlopen that: a separate image with its own statics. */
static void *open_private_copy(struct instance *inst, char *why, size_t whylen)
{
    Dl_info di;
    const char *src = inst->resolved_path;
    void *sym = NULL;
    for (int i = 0; i < g_shim.ninst && sym == NULL; i++)
        if (g_shim.inst[i].lib_base != NULL)
            sym = *(void **)&g_shim.inst[i].jvm_onload;
    if (strchr(src, '/') == NULL && sym != NULL && dladdr(sym, &di) != 0)
        src = di.dli_fname; /* a bare name: the file the loader found */
    char tmpl[] = "/tmp/jvmpishim-agent-XXXXXX";
    int out = mkstemp(tmpl);
    if (out < 0) {
        snprintf(why, whylen, "mkstemp: %s", strerror(errno));
        return NULL;
    }
    FILE *in = fopen(src, "rb");
    bool ok = in != NULL;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = write(out, buf, n) == (ssize_t)n;
    if (in)
        fclose(in);
    close(out);
    void *h = NULL;
    if (ok) {
        dlerror();
        h = dlopen_agent(inst, tmpl);
        if (h == NULL) {
            snprintf(why, whylen, "%s", dlerror());
        } else {
            free(inst->image_file);
            inst->image_file = strdup(src); /* the same bytes, still on disk */
        }
    } else {
        snprintf(why, whylen, "copying %s: %s", src, strerror(errno));
    }
    unlink(tmpl); /* the mapping stays; the file is not needed any more */
    return h;
}

/* legacy= given before another option ("legacy=/opt/old/libprof.so,log=info") takes the
 * rest of the text as the path. When the path does not load but cutting it at a comma
 * names a file that exists, the message says so. */
static void comma_hint(const char *name, char *out, size_t n)
{
    out[0] = '\0';
    const char *comma = strchr(name, ',');
    if (comma == NULL || strchr(name, '/') == NULL)
        return;
    char cut[2048];
    size_t k = (size_t)(comma - name);
    if (k == 0 || k >= sizeof cut)
        return;
    memcpy(cut, name, k);
    cut[k] = '\0';
    if (access(cut, F_OK) == 0)
        snprintf(out, n, " (%s exists: legacy= must come last, since everything after it, "
                         "commas included, is the agent's path and its options; write "
                         "[OPTION,...]legacy=%s[:AGENT_OPTIONS])", cut, cut);
}

jint loader_open(struct instance *inst)
{
    const char *name = inst->opts.legacy;
    char why[2048] = "";
    void *h = NULL;

    if (strchr(name, '/') != NULL) {
        h = open_path(inst, name, why, sizeof why);
        if (h == NULL) {
            char hint[2 * 4096 + 256];
            comma_hint(name, hint, sizeof hint);
            log_error("legacy=%s: cannot load the agent library: %s%s", name, why, hint);
            return JNI_ERR;
        }
    } else {
        /* A bare name, as -Xrun<name> took it: lib<name>.so from LD_LIBRARY_PATH and the
         * system paths (dlopen's own search), then next to libjvmpishim.so. */
        char lib[512], dir[4096], path[4096 + 520];
        snprintf(lib, sizeof lib, "lib%s.so", name);
        dlerror();
        h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        struct link_map *lm = NULL;
        char found[4096] = "";
        if (h != NULL && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name &&
            lm->l_name[0] == '/' && strlen(lm->l_name) < sizeof found) {
            /* dlopen's own search found it; only now is its file known. If its exports
             * collide, load it again with RTLD_DEEPBIND. No agent code has run but its
             * constructors, which then run a second time. */
            snprintf(found, sizeof found, "%s", lm->l_name);
            char names[8];
            if (symbol_collisions(found, names, sizeof names) > 0) {
                dlclose(h);
                h = dlopen_agent(inst, found);
            }
        }
        if (h != NULL) {
            inst->resolved_path = strdup(lib);
            if (found[0] != '\0')
                inst->image_file = strdup(found);
        } else {
            const char *e = dlerror();
            snprintf(why, sizeof why, "%s", e ? e : "not found");
            if (shim_dir(dir, sizeof dir)) {
                snprintf(path, sizeof path, "%s/%s", dir, lib);
                char why2[2048];
                h = open_path(inst, path, why2, sizeof why2);
                if (h == NULL && access(path, F_OK) == 0)
                    snprintf(why, sizeof why, "%s", why2);
            }
        }
        if (h == NULL) {
            log_error("legacy=%s: cannot load lib%s.so (searched LD_LIBRARY_PATH, the system "
                      "library paths and the directory of libjvmpishim.so): %s",
                      name, name, why);
            return JNI_ERR;
        }
    }
    /* The same agent library twice: dlopen would hand back the same image, and two agents
     * would share one set of statics. Load a private copy instead. */
    for (int i = 0; i < g_shim.ninst; i++)
        if (g_shim.inst[i].dl == h) {
            dlclose(h);
            h = open_private_copy(inst, why, sizeof why);
            if (h == NULL) {
                log_error("legacy=%s: cannot load a second copy of the agent library: %s",
                          name, why);
                return JNI_ERR;
            }
            break;
        }
    inst->dl = h;
    dlerror();
    *(void **)&inst->jvm_onload = dlsym(h, "JVM_OnLoad");
    if (inst->jvm_onload == NULL) {
        log_error("legacy=%s: %s exports no JVM_OnLoad: not a JVMPI agent library", name,
                  inst->resolved_path);
        return JNI_ERR;
    }
    Dl_info di;
    if (dladdr(*(void **)&inst->jvm_onload, &di) != 0)
        inst->lib_base = di.dli_fbase;
    log_info("agent %d: loaded %s", inst->slot, inst->resolved_path);
    return JNI_OK;
}

jint loader_call_onload(struct instance *inst)
{
    log_debug("agent %d: calling JVM_OnLoad(options=%s%s%s)", inst->slot,
              inst->opts.agent_options ? "\"" : "",
              inst->opts.agent_options ? inst->opts.agent_options : "NULL",
              inst->opts.agent_options ? "\"" : "");
    /* The agent may scribble on its options (strtok): it gets our private copy. */
    jint rc = inst->jvm_onload((JavaVM *)&inst->vm, inst->opts.agent_options, NULL);
    if (rc != JNI_OK) {
        log_error("legacy=%s: JVM_OnLoad returned %d (%s): the agent refused to start",
                  inst->opts.legacy, (int)rc, rc == JNI_ERR ? "JNI_ERR" : "not JNI_OK");
        return JNI_ERR;
    }
    if (inst->iface.NotifyEvent == NULL) {
        log_error("legacy=%s: JVM_OnLoad returned without setting NotifyEvent in the "
                  "JVMPI_Interface%s: the shim cannot deliver events to it",
                  inst->opts.legacy,
                  inst->got_interface ? "" : " (it never called GetEnv(JVMPI_VERSION_1))");
        return JNI_ERR;
    }
    return JNI_OK;
}
