/* clients.c — JVMPI for every native library of the program: the JVM's one JavaVM answers
 * GetEnv(JVMPI_VERSION_1, 1_1, 1_2) for any library, on any attached thread, at any time.
 *
 * HotSpot 1.2-1.4's jni_GetEnv served the JVMPI versions to whoever asked, and ordinary JNI
 * libraries (System.loadLibrary) used that: a game's library holding GC off around a frame,
 * a thread-dump viewer requesting MONITOR_DUMP. Every way a library reaches the JavaVM
 * (JNI_OnLoad's argument, JNI GetJavaVM, JNI_GetCreatedJavaVMs) yields the JVM's one
 * JavaVM struct (HotSpot's main_vm, in libjvm's writable .data), whose first word points at
 * the JVM's JNIInvokeInterface_ (in .data.rel.ro, read-only). So the shim points that word
 * at its own copy of the table, whose GetEnv answers the JVMPI versions and hands every
 * other request, and every other function, to the JVM's.
 *
 * A JVMPI function carries no context, so each client gets an instance slot of its own
 * (face/interface.c's trampolines, its own NotifyEvent, mask, TLS, counters), found by the
 * library that asked: the GetEnv caller's return address, through dladdr, names it. A
 * legacy= agent asking the real VM gets its own interface back. Libraries share the slots
 * with the legacy= agents; when none is left, GetEnv answers JNI_EVERSION, as a JVM
 * without JVMPI does, with one warning naming the library (docs/mapping.md).
 */
#include "events/events.h"
#include "report/report.h"
#include "face/face.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct JNIInvokeInterface_ *vm_orig; /* the JVM's table */
static struct JNIInvokeInterface_ vm_hooked;       /* the copy main_vm points at */
static struct shim_options client_opts;            /* the -agentpath without legacy= */
static bool client_opts_given;
static int nclients;
/* Leaf (rank 5): slots being given to clients, and the libraries refused, each said once. */
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
#define REFUSED_MAX 16
static const void *refused[REFUSED_MAX];
static int nrefused;

static bool jvmpi_version(jint v)
{
    return v == JVMPI_VERSION_1 || v == JVMPI_VERSION_1_1 || v == JVMPI_VERSION_1_2;
}

void clients_set_options(const struct shim_options *o)
{
    if (client_opts_given)
        return; /* the first -agentpath without legacy= settles them */
    client_opts_given = true;
    client_opts.log_level = o->log_level;
    client_opts.methods = o->methods;
    client_opts.vthreads = o->vthreads;
    client_opts.report_file = o->report_file != NULL ? strdup(o->report_file) : NULL;
    if (o->record_file != NULL)
        log_warn("record=%s: recording serves legacy= agents only; the libraries that ask "
                 "for JVMPI themselves are not recorded (report= covers them)", o->record_file);
}

bool clients_report_wanted(void)
{
    return client_opts.report_file != NULL;
}

/* The report file of the n-th client (0-based): report= of the -agentpath without legacy=
 * for the first, PATH.SLOT for the others; without it, beside the first legacy agent's. */
static char *client_report_path(int n, int slot)
{
    const char *base = client_opts.report_file;
    bool exact = base != NULL && n == 0;
    if (base == NULL && g_shim.ninst > 0)
        base = g_shim.inst[0].opts.report_file;
    if (base == NULL)
        return NULL;
    if (exact)
        return strdup(base);
    size_t len = strlen(base) + 16;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%s.%d", base, slot);
    return p;
}

/* The calling thread's name, for the report (JVMTI: a live thread only). */
static void thread_name(JNIEnv *jni, char *out, size_t n)
{
    snprintf(out, n, "?");
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if (g_shim.jvmti != NULL &&
        jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, NULL, &ti), LOG_DEBUG,
                    "GetThreadInfo of a library asking for JVMPI (for the report)") &&
        ti.name != NULL) {
        snprintf(out, n, "%s", ti.name);
        jvmti_free(g_shim.jvmti, ti.name);
    }
    if (ti.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (ti.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
}

/* How the library got here: its JNI_OnLoad, or (most often) a native method it exports. */
static const char *asked_how(const Dl_info *di)
{
    if (di->dli_sname == NULL)
        return "its code";
    if (strcmp(di->dli_sname, "JNI_OnLoad") == 0)
        return "JNI_OnLoad";
    if (strncmp(di->dli_sname, "Java_", 5) == 0)
        return "a native method";
    return "its code";
}

/* The instance of the library at base, made if new; NULL (said once) if no slot is left. */
static struct instance *client_for(JNIEnv *jni, const void *base, const Dl_info *di, int phase)
{
    const char *name = di->dli_fname != NULL ? di->dli_fname : "(code outside any library)";
    char thread[64];
    thread_name(jni, thread, sizeof thread); /* JVMTI, outside the lock */
    pthread_mutex_lock(&client_lock);
    /* Code dladdr cannot place (base NULL) is one client of its own, never an agent whose
     * load address was not learned. */
    for (int i = 0; i < g_shim.ninst; i++)
        if (g_shim.inst[i].lib_base == base && (base != NULL || g_shim.inst[i].client)) {
            pthread_mutex_unlock(&client_lock);
            return &g_shim.inst[i];
        }
    int slot = g_shim.ninst;
    if (slot >= SHIM_MAX_INSTANCES) {
        bool said = false;
        for (int i = 0; i < nrefused && !said; i++)
            said = refused[i] == base;
        if (!said && nrefused < REFUSED_MAX)
            refused[nrefused++] = base;
        pthread_mutex_unlock(&client_lock);
        if (!said) {
            char names[1024] = "";
            size_t used = 0;
            for (int i = 0; i < SHIM_MAX_INSTANCES; i++) {
                const struct instance *o = &g_shim.inst[i];
                int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                 o->resolved_path ? o->resolved_path : "?");
                if (w > 0 && (size_t)w < sizeof names - used)
                    used += (size_t)w;
            }
            log_warn("%s asked for JVMPI (GetEnv(JVMPI_VERSION_1) on thread \"%s\"), but all "
                     "%d JVMPI slots are taken (%s): it gets JNI_EVERSION, as from a JVM "
                     "without JVMPI", name, thread, SHIM_MAX_INSTANCES, names);
        }
        return NULL;
    }
    struct instance *inst = &g_shim.inst[slot];
    memset(inst, 0, sizeof *inst);
    inst->slot = slot;
    inst->client = true;
    inst->opts.log_level = client_opts.log_level;
    inst->opts.legacy = strdup(name);
    inst->opts.report_file = client_report_path(nclients, slot);
    inst->resolved_path = strdup(name);
    inst->image_file = strdup(name);
    inst->lib_base = (void *)(uintptr_t)base;
    inst->asked.wall = (int64_t)time(NULL);
    inst->asked.phase = phase;
    inst->asked.how = asked_how(di);
    snprintf(inst->asked.thread, sizeof inst->asked.thread, "%s", thread);
    interface_init(inst);
    loader_init_proxy_vm(inst);
    inst->used = true;
    nclients++;
    /* Published last: every loop over the instances reads ninst, then the slots below it. */
    __atomic_store_n(&g_shim.ninst, slot + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&client_lock);
    report_add_agent(inst);
    log_info("agent %d: %s asked for JVMPI from %s on thread \"%s\"%s", slot, name,
             inst->asked.how, thread,
             phase < PHASE_LIVE ? " before JVM_INIT_DONE" : "");
    return inst;
}

static jint JNICALL hooked_GetEnv(JavaVM *vm, void **penv, jint version)
{
    if (__builtin_expect(!jvmpi_version(version), 1))
        return vm_orig->GetEnv(vm, penv, version);
    void *ra = __builtin_return_address(0);
    if (penv == NULL) {
        log_error("GetEnv(JVMPI_VERSION 0x%x) called with a NULL result pointer",
                  (unsigned)version);
        return JNI_ERR;
    }
    *penv = NULL;
    /* HotSpot answered JNI_EDETACHED to a thread the JVM does not know, JVMPI or not. */
    JNIEnv *jni = NULL;
    jint rc = vm_orig->GetEnv(vm, (void **)&jni, JNI_VERSION_1_2);
    if (rc != JNI_OK)
        return rc;
    Dl_info di;
    memset(&di, 0, sizeof di);
    const void *base = dladdr(ra, &di) != 0 ? di.dli_fbase : NULL;
    int phase = atomic_load(&g_shim.phase);
    /* A legacy agent (or a library that asked before) gets its own interface at any time;
     * the calls then follow the shutdown rule. */
    struct instance *inst = NULL;
    for (int i = 0; i < g_shim.ninst && inst == NULL; i++)
        if (g_shim.inst[i].lib_base != NULL && g_shim.inst[i].lib_base == base)
            inst = &g_shim.inst[i];
    if (inst == NULL) {
        const char *name = di.dli_fname != NULL ? di.dli_fname : "code outside any library";
        if (phase == PHASE_ONLOAD) {
            /* The JVM is live but the shim's VMInit has not come: another agent listed
             * before the shim on the command line (a -javaagent's premain) loads the
             * library from its own VMInit. The shim starts now, on this thread, as its
             * VMInit would have (the legacy agents' JVM_OnLoad, the replay, JVM_INIT_DONE);
             * its VMInit then finds it started. Before the live phase no library runs. */
            jvmtiPhase jp = JVMTI_PHASE_ONLOAD;
            if (g_shim.jvmti == NULL ||
                !jvmti_ok((*g_shim.jvmti)->GetPhase(g_shim.jvmti, &jp),
                          "GetPhase for a library asking for JVMPI early") ||
                jp != JVMTI_PHASE_LIVE) {
                log_warn("%s asked for JVMPI before the JVM was live: JNI_EVERSION", name);
                return JNI_EVERSION;
            }
            log_info("%s asks for JVMPI before the shim's VMInit: the shim starts now", name);
            lifecycle_vm_init(jni);
            phase = atomic_load(&g_shim.phase);
            /* Started by this call, or already under way on the thread running the shim's
             * VMInit (a library asking from there asks in PHASE_STARTING, not here). */
        }
        if (phase >= PHASE_SHUTTING) {
            log_info("%s asked for JVMPI after JVM_SHUT_DOWN: JNI_EVERSION", name);
            return JNI_EVERSION;
        }
        inst = client_for(jni, base, &di, phase);
        if (inst == NULL)
            return JNI_EVERSION;
    }
    inst->got_interface = true;
    *penv = &inst->iface;
    log_debug("agent %d: GetEnv(JVMPI 0x%x) on the JavaVM -> JVMPI_Interface %p", inst->slot,
              (unsigned)version, (void *)&inst->iface);
    return JNI_OK;
}

bool clients_install(JavaVM *vm)
{
    if (vm_orig != NULL)
        return true;
    /* Pinned: the JavaVM outlives any unloading of agent libraries, and points here. */
    Dl_info di;
    if (dladdr((void *)clients_install, &di) == 0 || di.dli_fname == NULL ||
        dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == NULL) {
        log_warn("libjvmpishim.so could not pin itself in memory: the program's libraries "
                 "get no JVMPI (GetEnv(JVMPI_*) answers as the JVM does)");
        return false;
    }
    vm_orig = *vm;
    vm_hooked = *vm_orig;
    vm_hooked.GetEnv = hooked_GetEnv;
    /* One aligned pointer store: a thread reading it sees either table, and both work. */
    const struct JNIInvokeInterface_ *mine = &vm_hooked;
    __atomic_store_n(vm, mine, __ATOMIC_RELEASE);
    log_debug("the JavaVM %p answers GetEnv(JVMPI_*) for every library", (void *)vm);
    return true;
}
