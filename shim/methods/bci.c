/* bci.c — METHOD_ENTRY/ENTRY2/EXIT and INSTRUCTION_START by bytecode instrumentation.
 *
 * JVMTI MethodEntry/MethodExit keep every thread in the interpreter. Instead, as JDK 5's
 * HPROF did, the shim rewrites class bytes (shim/classfile/classfile.c) so that each method calls a
 * static native hook of java.lang.JvmpiShimHook on entry and before each exit (with a
 * catch-all handler, so exceptions balance), and, for INSTRUCTION_START, before each
 * bytecode with the operands the branch or switch will test. The JIT compiles the probes
 * like any other call, so instrumented code keeps running compiled.
 *
 * A second JVMTI environment, able to retransform, does the rewriting in its
 * ClassFileLoadHook; the main environment (which runs the agents' CLASS_LOAD_HOOK) cannot,
 * so on a retransformation the JVM hands this one the bytes as the agents left them and
 * the agents' hook runs once per class, as in JDK 1.x. Nothing is rewritten while no agent
 * wants these events: enabling one retransforms every loaded class, and disabling the last
 * retransforms them back, so a run that never asks pays nothing.
 *
 * Each instrumented method gets a 32-bit probe id (a chunked table, never freed, read
 * without locks); its jmethodID is learned on the first probe from the caller's frame.
 * Natives of classes loaded after VMInit get a non-native wrapper (JVMTI native-method
 * prefix); natives of classes loaded before it cannot (a class cannot gain methods once
 * loaded) and get no method events, nor do hidden classes, which JVMTI never hooks, nor
 * the JDK's virtual-thread plumbing while virtual threads are JVMPI threads (vthreads.c):
 * only VirtualThread.runContinuation gets probes, which keep the carrier's events off during
 * the mount transitions it runs.
 * The shim's own Java calls made while serving a probe (reflection when announcing a
 * class) are not reported: a per-thread flag makes nested probes return at once.
 * Constructors report a throw through exitThrow: when their own super(...)/this(...) call
 * throws, no handler of theirs can run (classfile.c), so exitThrow also ends the callers
 * that stand at that call (ctor table: method id -> the call's offset).
 */
#include "classes/classes.h"
#include "classfile/classfile.h"
#include "core/api.h"
#include "core/ids.h"
#include "core/worker.h"
#include "events/events.h"
#include "methods/bci.h"
#include "methods/calltrace.h"
#include "methods/methods.h"
#include "threads/threads.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#define HOOK_CLASS "java/lang/JvmpiShimHook"
#define NATIVE_PREFIX BCI_NATIVE_PREFIX

static jvmtiEnv *benv;              /* the retransformation-capable environment */
static bool available, started;
static jclass hook_cls;             /* global ref */
static jmethodID hook_mids[CF_HOOK_COUNT];
static _Atomic unsigned want;       /* probes new loads get: CF_METHOD_PROBES|CF_INSN_PROBES */
static unsigned applied;            /* what the loaded classes have (under mode_lock) */
static pthread_mutex_t mode_lock = PTHREAD_MUTEX_INITIALIZER; /* serializes passes */
static _Thread_local int tl_in_probe;

/* ---- probe ids ---- */

struct probe {
    _Atomic(jmethodID) method;      /* learned on the first probe */
    uint8_t *code;                  /* original bytecode, for INSTRUCTION_START */
    uint32_t code_len;
    uint32_t init_bci1;             /* constructors: 1 + rewritten offset of super(...), or 0 */
    bool bracket;                   /* the carrier's side of a mount (vthreads.c) */
};
#define CHUNK_BITS 12
#define CHUNK (1 << CHUNK_BITS)
#define MAX_CHUNKS 16384            /* 64 M probe ids */
static struct probe *_Atomic chunks[MAX_CHUNKS];
static _Atomic int32_t next_id = 1;
static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long rewritten_classes, rewritten_methods, skipped_methods, failed_classes;

static struct probe *probe_at(int32_t id)
{
    if (id <= 0 || (id >> CHUNK_BITS) >= MAX_CHUNKS)
        return NULL;
    struct probe *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return c ? &c[id & (CHUNK - 1)] : NULL;
}

static int32_t probe_new(void)
{
    int32_t id = atomic_fetch_add(&next_id, 1);
    if ((id >> CHUNK_BITS) >= MAX_CHUNKS)
        return -1;
    if (atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire) == NULL) {
        pthread_mutex_lock(&chunk_lock);
        if (chunks[id >> CHUNK_BITS] == NULL) {
            struct probe *c = calloc(CHUNK, sizeof *c);
            if (c == NULL) {
                pthread_mutex_unlock(&chunk_lock);
                return -1;
            }
            atomic_store_explicit(&chunks[id >> CHUNK_BITS], c, memory_order_release);
        }
        pthread_mutex_unlock(&chunk_lock);
    }
    return id;
}

/* Constructors by method id: where their super(...)/this(...) call is, in the code they run
 * now (the version whose probes last learned the id). Looked up only when a constructor is
 * left by a throw. ctor_lock is a leaf. */
struct ctor {
    jmethodID method;
    uint32_t init_bci;
    UT_hash_handle hh;
};
static struct ctor *ctors;
static pthread_rwlock_t ctor_lock = PTHREAD_RWLOCK_INITIALIZER;

static void ctor_note(jmethodID m, uint32_t init_bci)
{
    struct ctor *c;
    pthread_rwlock_wrlock(&ctor_lock);
    HASH_FIND_PTR(ctors, &m, c);
    if (c == NULL && (c = malloc(sizeof *c)) != NULL) {
        c->method = m;
        HASH_ADD_PTR(ctors, method, c);
    }
    if (c != NULL)
        c->init_bci = init_bci;
    pthread_rwlock_unlock(&ctor_lock);
}

static bool ctor_init_bci(jmethodID m, uint32_t *bci)
{
    struct ctor *c;
    pthread_rwlock_rdlock(&ctor_lock);
    HASH_FIND_PTR(ctors, &m, c);
    if (c != NULL)
        *bci = c->init_bci;
    pthread_rwlock_unlock(&ctor_lock);
    return c != NULL;
}

/* The instrumented method calling the hook is the frame below the hook's own. */
static jmethodID probe_method(struct probe *p)
{
    jmethodID m = atomic_load_explicit(&p->method, memory_order_acquire);
    if (m != NULL)
        return m;
    jlocation loc;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetFrameLocation(g_shim.jvmti, NULL, 1, &m, &loc),
                     LOG_DEBUG, "method events: GetFrameLocation of a probe's caller"))
        return NULL;
    if (p->init_bci1 != 0)
        ctor_note(m, p->init_bci1 - 1);
    atomic_store_explicit(&p->method, m, memory_order_release);
    return m;
}

/* A constructor was left by a throw (its exitThrow ran). Its caller, if that is a
 * constructor standing at its own super(...)/this(...) call, was left by the same
 * exception, which no handler may catch there: post its METHOD_EXIT too, and so on up.
 * Depth 0 is the hook, 1 the constructor that threw, 2 its caller. */
static void unwind_constructors(JNIEnv *jni)
{
    for (jint d = 2;; d++) {
        jmethodID m = NULL;
        jlocation loc = -1;
        uint32_t at = 0;
        /* No frame at depth d (NO_MORE_FRAMES): the top of the stack was reached. */
        if (!jvmti_ok_at((*g_shim.jvmti)->GetFrameLocation(g_shim.jvmti, NULL, d, &m, &loc),
                         LOG_DEBUG, "method events: GetFrameLocation of a constructor's caller") ||
            !ctor_init_bci(m, &at) || loc != (jlocation)at)
            return;
        methods_post_exit(jni, m);
    }
}

/* ---- the hooks ---- */

/* Common entry of every hook: NULL if nothing is to be posted. */
static inline struct probe *probe_begin(jint id)
{
    if (tl_in_probe || shim_quiet() || shim_own_java())
        return NULL;
    return probe_at(id);
}

enum probe_kind { PROBE_ENTRY, PROBE_EXIT, PROBE_EXIT_THROW };

/* Entry (with or without a receiver the probe passed) or exit of the method of probe id;
 * a constructor's exit by a throw also ends the callers that threw with it. */
static void method_probe(JNIEnv *jni, jint id, enum probe_kind kind, jobject self, bool have_self)
{
    struct probe *p = probe_begin(id);
    if (__builtin_expect(p == NULL || p->bracket, 0)) {
        /* The carrier's side of a mount (vthreads.c): its exit comes while the carrier's
         * events are off, which probe_begin answers with NULL. */
        if (p == NULL && !tl_in_probe && shim_own_java())
            p = probe_at(id);
        if (p != NULL && p->bracket && kind == PROBE_ENTRY)
            vthreads_carrier_enter();
        else if (p != NULL && p->bracket)
            vthreads_carrier_leave();
        return;
    }
    tl_in_probe = 1;
    jmethodID m = probe_method(p);
    /* An entry that passes `this` right after a superCall is the super constructor that
     * needs no deferring (java.lang.Object.<init>): it names the waiting constructors'
     * object. */
    if (m != NULL && kind == PROBE_ENTRY && have_self && methods_ctor_super_called())
        methods_ctor_ready(jni, self);
    if (m != NULL && kind == PROBE_ENTRY)
        methods_post_entry(jni, m, self, have_self, 1); /* depth 1: below the probe */
    else if (m != NULL)
        methods_post_exit(jni, m);
    if (m != NULL && kind == PROBE_EXIT_THROW)
        unwind_constructors(jni);
    tl_in_probe = 0;
}

static void JNICALL h_enter(JNIEnv *jni, jclass c, jint id)
{
    (void)c;
    method_probe(jni, id, PROBE_ENTRY, NULL, false);
}

static void JNICALL h_enterObj(JNIEnv *jni, jclass c, jobject self, jint id)
{
    (void)c;
    method_probe(jni, id, PROBE_ENTRY, self, true);
}

static void JNICALL h_exit(JNIEnv *jni, jclass c, jint id)
{
    (void)c;
    method_probe(jni, id, PROBE_EXIT, NULL, false);
}

static void JNICALL h_exitThrow(JNIEnv *jni, jclass c, jint id)
{
    (void)c;
    method_probe(jni, id, PROBE_EXIT_THROW, NULL, false);
}

static void JNICALL h_enterCtor(JNIEnv *jni, jclass c, jint id)
{
    (void)c;
    struct probe *p = probe_begin(id);
    if (p == NULL)
        return;
    tl_in_probe = 1;
    jmethodID m = probe_method(p);
    if (m != NULL)
        methods_ctor_enter(jni, m);
    tl_in_probe = 0;
}

static void JNICALL h_superCall(JNIEnv *jni, jclass c, jint id)
{
    (void)jni; (void)c;
    if (probe_begin(id) != NULL)
        methods_ctor_super_call();
}

static void JNICALL h_ctorReady(JNIEnv *jni, jclass c, jobject self, jint id)
{
    (void)c;
    if (events_deferred_n == 0 && !methods_ctor_super_called())
        return; /* the common case once the innermost constructor has named the object */
    struct probe *p = probe_begin(id);
    if (p == NULL)
        return;
    tl_in_probe = 1;
    methods_ctor_ready(jni, self);
    tl_in_probe = 0;
}

static void insn(JNIEnv *jni, jint id, jint bci, jint v1, jint v2)
{
    struct probe *p = probe_begin(id);
    if (p == NULL || p->code == NULL)
        return;
    tl_in_probe = 1;
    jmethodID m = probe_method(p);
    struct cf_branch br;
    if (m != NULL && cf_branch_outcome(p->code, p->code_len, (uint32_t)bci, v1, v2, &br) == 0) {
        JVMPI_Event ev;
        event_init(&ev, JVMPI_EVENT_INSTRUCTION_START, jni);
        ev.u.instruction.method_id = m;
        ev.u.instruction.offset = bci;
        switch (br.kind) {
        case CF_BR_IF:
            ev.u.instruction.u.if_info.is_true = br.taken ? JNI_TRUE : JNI_FALSE;
            break;
        case CF_BR_TABLESWITCH:
            ev.u.instruction.u.tableswitch_info.key = br.key;
            ev.u.instruction.u.tableswitch_info.low = br.low;
            ev.u.instruction.u.tableswitch_info.hi = br.high;
            break;
        case CF_BR_LOOKUPSWITCH:
            ev.u.instruction.u.lookupswitch_info.chosen_pair_index = br.chosen_pair_index;
            ev.u.instruction.u.lookupswitch_info.pairs_total = br.pairs_total;
            break;
        default:
            break;
        }
        methods_post_instruction(jni, m, &ev);
    }
    tl_in_probe = 0;
}

static void JNICALL h_insn(JNIEnv *jni, jclass c, jint id, jint bci)
{
    (void)c;
    insn(jni, id, bci, 0, 0);
}
static void JNICALL h_insnInt(JNIEnv *jni, jclass c, jint v, jint id, jint bci)
{
    (void)c;
    insn(jni, id, bci, v, 0);
}
static void JNICALL h_insnInt2(JNIEnv *jni, jclass c, jint v1, jint v2, jint id, jint bci)
{
    (void)c;
    insn(jni, id, bci, v1, v2);
}
static void JNICALL h_insnObj(JNIEnv *jni, jclass c, jobject o, jint id, jint bci)
{
    (void)c;
    insn(jni, id, bci, o == NULL, 0);
}
static void JNICALL h_insnObj2(JNIEnv *jni, jclass c, jobject a, jobject b, jint id, jint bci)
{
    (void)c;
    insn(jni, id, bci, (*jni)->IsSameObject(jni, a, b) ? 1 : 0, 0);
}

/* The JVM links the hook class's natives by these names: it searches the agent libraries
 * named on the command line, and the boot loader's native libraries, for the natives of
 * boot classes. RegisterNatives would work too, but makes the JVM warn on stdout, once per
 * native, that a platform class's natives came from another loader (jni+resolve): in an
 * attached JVM, that is the application's output. */
#define HOOK_EXPORT(ret, name, params, args)                                                   \
    JNIEXPORT ret JNICALL Java_java_lang_JvmpiShimHook_##name params { h_##name args; }
HOOK_EXPORT(void, enter, (JNIEnv *j, jclass c, jint id), (j, c, id))
HOOK_EXPORT(void, enterObj, (JNIEnv *j, jclass c, jobject o, jint id), (j, c, o, id))
HOOK_EXPORT(void, exit, (JNIEnv *j, jclass c, jint id), (j, c, id))
HOOK_EXPORT(void, insn, (JNIEnv *j, jclass c, jint id, jint bci), (j, c, id, bci))
HOOK_EXPORT(void, insnInt, (JNIEnv *j, jclass c, jint v, jint id, jint bci), (j, c, v, id, bci))
HOOK_EXPORT(void, insnInt2, (JNIEnv *j, jclass c, jint a, jint b, jint id, jint bci),
            (j, c, a, b, id, bci))
HOOK_EXPORT(void, insnObj, (JNIEnv *j, jclass c, jobject o, jint id, jint bci), (j, c, o, id, bci))
HOOK_EXPORT(void, insnObj2, (JNIEnv *j, jclass c, jobject a, jobject b, jint id, jint bci),
            (j, c, a, b, id, bci))
HOOK_EXPORT(void, exitThrow, (JNIEnv *j, jclass c, jint id), (j, c, id))
HOOK_EXPORT(void, enterCtor, (JNIEnv *j, jclass c, jint id), (j, c, id))
HOOK_EXPORT(void, superCall, (JNIEnv *j, jclass c, jint id), (j, c, id))
HOOK_EXPORT(void, ctorReady, (JNIEnv *j, jclass c, jobject o, jint id), (j, c, o, id))

static void *const hook_fns[CF_HOOK_COUNT] = {
    [CF_HOOK_ENTER] = (void *)h_enter,         [CF_HOOK_ENTER_OBJ] = (void *)h_enterObj,
    [CF_HOOK_EXIT] = (void *)h_exit,           [CF_HOOK_INSN] = (void *)h_insn,
    [CF_HOOK_INSN_INT] = (void *)h_insnInt,   [CF_HOOK_INSN_INT2] = (void *)h_insnInt2,
    [CF_HOOK_INSN_OBJ] = (void *)h_insnObj,   [CF_HOOK_INSN_OBJ2] = (void *)h_insnObj2,
    [CF_HOOK_EXIT_THROW] = (void *)h_exitThrow, [CF_HOOK_ENTER_CTOR] = (void *)h_enterCtor,
    [CF_HOOK_SUPER_CALL] = (void *)h_superCall, [CF_HOOK_CTOR_READY] = (void *)h_ctorReady,
};

jclass bci_hook_class(void)
{
    return hook_cls;
}

bool bci_is_hook_method(jmethodID m)
{
    if (!started)
        return false;
    for (int i = 0; i < CF_HOOK_COUNT; i++)
        if (hook_mids[i] == m)
            return true;
    return false;
}

/* ---- rewriting ---- */

struct rewrite_ctx {
    unsigned flags;
    const char *class_name;
    bool plumbing;      /* the JDK's virtual-thread plumbing: brackets only (vthreads.c) */
};

static int32_t cb_method_id(void *vctx, int index, const char *name, const char *desc,
                            uint16_t access)
{
    struct rewrite_ctx *ctx = vctx;
    (void)index;
    if (access & 0x0400) /* abstract: no code */
        return -1;
    if (ctx->plumbing) {
        if (!vthreads_transition_method(ctx->class_name, name, desc))
            return -1;
        int32_t id = probe_new();
        struct probe *p = probe_at(id);
        if (p != NULL)
            p->bracket = true;
        return id;
    }
    return probe_new();
}

static void cb_method_done(void *vctx, int index, int32_t id, const uint8_t *code,
                           uint32_t code_len)
{
    struct rewrite_ctx *ctx = vctx;
    (void)index;
    atomic_fetch_add_explicit(&rewritten_methods, 1, memory_order_relaxed);
    struct probe *p = probe_at(id);
    if (p == NULL || !(ctx->flags & CF_INSN_PROBES) || code_len == 0)
        return;
    uint8_t *copy = malloc(code_len);
    if (copy != NULL) {
        memcpy(copy, code, code_len);
        p->code_len = code_len;
        p->code = copy;
    }
}

static void cb_init_call(void *vctx, int index, int32_t id, uint32_t new_bci)
{
    (void)vctx; (void)index;
    struct probe *p = probe_at(id);
    if (p != NULL)
        p->init_bci1 = new_bci + 1; /* before the class is defined: no probe has run yet */
}

static void cb_method_skipped(void *vctx, int index, const char *name, const char *desc,
                              const char *why)
{
    struct rewrite_ctx *ctx = vctx;
    (void)index;
    atomic_fetch_add_explicit(&skipped_methods, 1, memory_order_relaxed);
    log_info("method events: %s.%s%s is left uninstrumented: %s", ctx->class_name, name, desc,
             why);
}

static void JNICALL cb_bci_cflh(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
                                const char *name, jobject pd, jint len,
                                const unsigned char *data, jint *new_len,
                                unsigned char **new_data)
{
    (void)jni; (void)loader; (void)pd;
    /* Any redefinition or retransformation, the shim's or another agent's, changes bcis:
     * GetCallTrace's cached line tables go (again after the shim's own passes, below,
     * since a trace between this hook and the new code's installation caches the old). */
    if (redefined != NULL)
        calltrace_invalidate();
    unsigned flags = atomic_load(&want);
    if (flags == 0 || name == NULL || !started || shim_quiet())
        return;
    if (strcmp(name, HOOK_CLASS) == 0)
        return;
    /* The JDK's virtual-thread plumbing posts no method events (its frames run across a
     * mount), but the carrier's side of a mount gets brackets (vthreads.c). */
    bool plumbing = vthreads_plumbing_class(name);
    if (plumbing)
        flags = CF_METHOD_PROBES;
    /* A class gains methods only at its first load. The JDK's own plumbing is left
     * unwrapped: linking a renamed native goes through the Java native-library lookup
     * (jdk.internal.loader.NativeLibrary.findEntry0 on JDK 25), which must not itself
     * need linking again, and java.lang/sun internals run inside that path too. */
    if (redefined == NULL && (flags & CF_METHOD_PROBES) && strncmp(name, "jdk/internal/", 13) != 0 &&
        strncmp(name, "java/lang/", 10) != 0 && strncmp(name, "sun/", 4) != 0)
        flags |= CF_WRAP_NATIVES;
    struct rewrite_ctx ctx = {flags, name, plumbing};
    struct cf_probe_spec spec = {
        .hook_class = HOOK_CLASS,
        .flags = flags,
        .native_prefix = NATIVE_PREFIX,
        .method_id = cb_method_id,
        .method_done = cb_method_done,
        .init_call = cb_init_call,
        .method_skipped = cb_method_skipped,
        .ctx = &ctx,
    };
    uint8_t *out = NULL;
    size_t out_len = 0;
    char err[256];
    int rc = cf_instrument(data, (size_t)len, &spec, &out, &out_len, err, sizeof err);
    if (rc < 0) {
        atomic_fetch_add_explicit(&failed_classes, 1, memory_order_relaxed);
        log_warn("method events: class %s cannot be instrumented, its methods post no method "
                 "events: %s", name, err);
        return;
    }
    if (rc > 0)
        return;
    unsigned char *buf = NULL;
    if (jvmti_ok((*jvmti)->Allocate(jvmti, (jlong)out_len, &buf),
                 "method events: Allocate for an instrumented class")) {
        memcpy(buf, out, out_len);
        *new_data = buf;
        *new_len = (jint)out_len;
        atomic_fetch_add_explicit(&rewritten_classes, 1, memory_order_relaxed);
    }
    free(out);
}

/* RetransformClasses calls that have returned (bci_retransform_count). */
static _Atomic uint64_t retransforms;

uint64_t bci_retransform_count(void)
{
    return atomic_load(&retransforms);
}

/* Retransform every loaded class that can be: the ClassFileLoadHook above then applies
 * (or, with want == 0, leaves out) the probes. */
static void retransform_all(void)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*benv)->GetLoadedClasses(benv, &n, &cs),
                  "method events: GetLoadedClasses to instrument loaded classes"))
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni != NULL)
        (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    jclass *todo = malloc(sizeof *todo * (size_t)(n > 0 ? n : 1));
    jint k = 0;
    for (jint i = 0; todo != NULL && i < n; i++) {
        jboolean mod = JNI_FALSE;
        if (jvmti_ok_at((*benv)->IsModifiableClass(benv, cs[i], &mod), LOG_DEBUG,
                        "method events: IsModifiableClass") && mod &&
            !(jni != NULL && (*jni)->IsSameObject(jni, cs[i], hook_cls)))
            todo[k++] = jni != NULL ? (*jni)->NewGlobalRef(jni, cs[i]) : cs[i];
    }
    /* Not held as local references while retransforming: the ClassPrepare callbacks that
     * RetransformClasses runs on this thread would count them as their own. */
    for (jint i = 0; jni != NULL && i < n; i++)
        (*jni)->DeleteLocalRef(jni, cs[i]);
    /* Batches: one class the JVM refuses must not cost the others their probes. */
    const jint batch = 256;
    for (jint i = 0; i < k; i += batch) {
        jint m = k - i < batch ? k - i : batch;
        jvmtiError be = (*benv)->RetransformClasses(benv, m, todo + i);
        calltrace_invalidate();
        atomic_fetch_add(&retransforms, 1);
        if (jvmti_ok_at(be, LOG_DEBUG, "method events: RetransformClasses of a batch (then "
                                       "each class alone)"))
            continue;
        for (jint j = 0; j < m; j++) {
            jvmtiError e = (*benv)->RetransformClasses(benv, 1, todo + i + j);
            calltrace_invalidate();
            atomic_fetch_add(&retransforms, 1);
            if (e != JVMTI_ERROR_NONE) {
                char *sig = NULL;
                jvmti_ignore((*benv)->GetClassSignature(benv, todo[i + j], &sig, NULL),
                             "GetClassSignature for a log line: the class is then \"?\"");
                log_info("method events: class %s could not be retransformed: %s",
                         sig ? sig : "?", jvmti_error_name(e));
                if (sig)
                    jvmti_free(benv, sig);
            }
        }
    }
    for (jint i = 0; jni != NULL && i < k; i++)
        (*jni)->DeleteGlobalRef(jni, todo[i]);
    free(todo);
    jvmti_free(benv, cs);
}

static unsigned wanted_now(void)
{
    unsigned f = 0;
    if (events_any(JVMPI_EVENT_METHOD_ENTRY) || events_any(JVMPI_EVENT_METHOD_ENTRY2) ||
        events_any(JVMPI_EVENT_METHOD_EXIT))
        f |= CF_METHOD_PROBES;
    if (events_any(JVMPI_EVENT_INSTRUCTION_START))
        f |= CF_INSN_PROBES;
    return f;
}

/* One pass: bring the loaded classes to what the agents want now. */
static void update_pass(void)
{
    shim_crit_begin(); /* RetransformClasses under a shim lock (shim.h) */
    pthread_mutex_lock(&mode_lock);
    unsigned f = wanted_now();
    if (f != applied && started && !shim_quiet()) {
        atomic_store(&want, f);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        /* Retransforming verifies the new code, which can load classes through Java class
         * loaders on this thread: that is the shim's work, not the program's. */
        int saved = tl_in_probe;
        tl_in_probe = 1;
        shim_own_java_begin();
        retransform_all();
        shim_own_java_end();
        tl_in_probe = saved;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        applied = f;
        log_info("method events: classes %s in %ld ms (%ld classes and %ld methods rewritten so "
                 "far)", f ? "instrumented" : "restored",
                 (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000),
                 atomic_load(&rewritten_classes), atomic_load(&rewritten_methods));
    }
    pthread_mutex_unlock(&mode_lock);
    shim_crit_end();
}

struct pass_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
};

static void pass_on_worker(JNIEnv *jni, void *arg)
{
    struct pass_wait *w = arg;
    shim_set_current_jni(jni);
    update_pass();
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void bci_update(void)
{
    if (!available || !started)
        return;
    if (shim_current_jni() != NULL) {
        update_pass();
        return;
    }
    /* A thread the JVM does not know cannot retransform: the worker does it, and the caller
     * waits, so that the events flow when EnableEvent returns. */
    struct pass_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    if (!worker_submit(pass_on_worker, &w)) {
        log_warn("method events: the shim's worker is gone; loaded classes keep their probes "
                 "as they are");
        return;
    }
    pthread_mutex_lock(&w.mu);
    while (!w.done)
        pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
}

/* ---- set-up ---- */

bool bci_init(void)
{
    if ((*g_shim.vm)->GetEnv(g_shim.vm, (void **)&benv, JVMTI_VERSION_1_2) != JNI_OK ||
        benv == NULL) {
        log_warn("method events: no second JVMTI environment: falling back to JVMTI method "
                 "events (the interpreter)");
        return false;
    }
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_retransform_classes = 1;
    c.can_retransform_any_class = 1;
    c.can_set_native_method_prefix = 1;
    if (!jvmti_ok_at((*benv)->AddCapabilities(benv, &c), LOG_WARN,
                     "method events: AddCapabilities(retransform, native prefix)")) {
        memset(&c, 0, sizeof c);
        c.can_retransform_classes = 1;
        if (!jvmti_ok_at((*benv)->AddCapabilities(benv, &c), LOG_WARN,
                         "method events: AddCapabilities(retransform)"))
            return false;
    }
    jvmti_ignore((*benv)->GetCapabilities(benv, &c),
                 "GetCapabilities: c then holds the capabilities just added");
    if (c.can_set_native_method_prefix)
        jvmti_ok_at((*benv)->SetNativeMethodPrefix(benv, NATIVE_PREFIX), LOG_WARN,
                    "method events: SetNativeMethodPrefix");
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassFileLoadHook = cb_bci_cflh;
    if (!jvmti_ok((*benv)->SetEventCallbacks(benv, &cb, sizeof cb),
                  "method events: SetEventCallbacks") ||
        !jvmti_ok((*benv)->SetEventNotificationMode(benv, JVMTI_ENABLE,
                                                    JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL),
                  "method events: enabling ClassFileLoadHook"))
        return false;
    available = true;
    return true;
}

bool bci_available(void)
{
    return available;
}

/* Call every hook once, zero or NULL for every parameter (id 0 is no probe: nothing is
 * posted), so that each is linked now, before any class has probes: linking can run Java
 * code (ClassLoader.findNative), which must not itself reach an unlinked probe. */
static bool link_hooks(JNIEnv *jni, jclass c)
{
    for (int i = 0; i < CF_HOOK_COUNT; i++) {
        if (hook_mids[i] == NULL)
            return false;
        jvalue args[8];
        memset(args, 0, sizeof args);
        (*jni)->CallStaticVoidMethodA(jni, c, hook_mids[i], args);
        if ((*jni)->ExceptionCheck(jni)) {
            (*jni)->ExceptionClear(jni);
            return false;
        }
    }
    return true;
}

/* A library loaded after start (an attach) is not searched for natives. Loaded again as
 * one of the boot loader's native libraries (BootLoader.getNativeLibraries().loadLibrary
 * (hook class, file), the same on JDK 17 and 25; JNI calls are not subject to module
 * access), it is searched for the boot class's natives by name, and the same mapping is
 * used (dlopen counts a reference). System.load would do it too, but on JDK 24+ it is a
 * restricted method and warns on stderr. If the JDK's internals differ, RegisterNatives
 * follows, with the JVM's warnings. */
static bool boot_load_self(JNIEnv *jni, jclass hook)
{
    Dl_info di;
    if (dladdr((void *)(uintptr_t)bci_start, &di) == 0 || di.dli_fname == NULL ||
        di.dli_fname[0] != '/')
        return false;
    bool ok = false;
    jclass boot = NULL, file_c = NULL, libs_c = NULL;
    jobject libs = NULL, file = NULL;
    jstring path = NULL;
    jmethodID get, load, file_new;
    if ((boot = (*jni)->FindClass(jni, "jdk/internal/loader/BootLoader")) != NULL &&
        (get = (*jni)->GetStaticMethodID(jni, boot, "getNativeLibraries",
                                          "()Ljdk/internal/loader/NativeLibraries;")) != NULL &&
        (libs = (*jni)->CallStaticObjectMethod(jni, boot, get)) != NULL &&
        (libs_c = (*jni)->GetObjectClass(jni, libs)) != NULL &&
        (load = (*jni)->GetMethodID(jni, libs_c, "loadLibrary",
                                    "(Ljava/lang/Class;Ljava/io/File;)Ljdk/internal/loader/NativeLibrary;")) != NULL &&
        (file_c = (*jni)->FindClass(jni, "java/io/File")) != NULL &&
        (file_new = (*jni)->GetMethodID(jni, file_c, "<init>", "(Ljava/lang/String;)V")) != NULL &&
        (path = (*jni)->NewStringUTF(jni, di.dli_fname)) != NULL &&
        (file = (*jni)->NewObject(jni, file_c, file_new, path)) != NULL) {
        jobject lib = (*jni)->CallObjectMethod(jni, libs, load, hook, file);
        ok = lib != NULL && !(*jni)->ExceptionCheck(jni);
        if (lib != NULL)
            (*jni)->DeleteLocalRef(jni, lib);
    }
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (!ok)
        log_info("method events: %s could not be made a boot native library: the probe "
                 "natives are registered instead, and the JVM warns once per native",
                 di.dli_fname);
    jobject refs[] = {boot, file_c, libs_c, libs, file, path};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (refs[i] != NULL)
            (*jni)->DeleteLocalRef(jni, refs[i]);
    return ok;
}

bool bci_start(JNIEnv *jni)
{
    if (!available)
        return false;
    uint8_t *bytes = NULL;
    size_t len = 0;
    char err[256];
    if (cf_make_hook_class(HOOK_CLASS, &bytes, &len, err, sizeof err) != 0) {
        log_error("method events: cannot build the hook class: %s", err);
        available = false;
        return false;
    }
    jclass c = (*jni)->DefineClass(jni, HOOK_CLASS, NULL, (const jbyte *)bytes, (jsize)len);
    free(bytes);
    if (c == NULL) {
        (*jni)->ExceptionDescribe(jni);
        (*jni)->ExceptionClear(jni);
        log_error("method events: cannot define %s in the boot loader", HOOK_CLASS);
        available = false;
        return false;
    }
    JNINativeMethod nm[CF_HOOK_COUNT];
    for (int i = 0; i < CF_HOOK_COUNT; i++) {
        nm[i].name = (char *)cf_hook_name((enum cf_hook)i);
        nm[i].signature = (char *)cf_hook_desc((enum cf_hook)i);
        nm[i].fnPtr = hook_fns[i];
    }
    for (int i = 0; i < CF_HOOK_COUNT; i++)
        hook_mids[i] = (*jni)->GetStaticMethodID(jni, c, nm[i].name, nm[i].signature);
    bool linked = link_hooks(jni, c);
    if (!linked && boot_load_self(jni, c))
        linked = link_hooks(jni, c);
    if (!linked && (*jni)->RegisterNatives(jni, c, nm, CF_HOOK_COUNT) != 0) {
        (*jni)->ExceptionClear(jni);
        log_error("method events: cannot bind the hook natives");
        available = false;
        return false;
    }
    hook_cls = (*jni)->NewGlobalRef(jni, c);
    (*jni)->DeleteLocalRef(jni, c);
    started = true;
    return true;
}

void bci_stop(void)
{
    atomic_store(&want, 0);
}

