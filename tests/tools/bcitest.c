/* bcitest.c — a native JVMTI test agent that proves shim/classfile/classfile.c on a real JVM.
 *
 * It rewrites EVERY class it is given with cf_instrument(): in ClassFileLoadHook from VMStart
 * on (JDK classes included), and at VMInit it retransforms every already-loaded modifiable
 * class the hook has not rewritten. The hook class is generated (cf_make_hook_class) and
 * defined in java/lang, a package of java.base that every module reads, with JNI DefineClass
 * at VMStart. (A java/lang class cannot come from -Xbootclasspath/a: the boot loader looks
 * for java.base's packages in the runtime image only. A hook class in the boot loader's
 * unnamed module was callable from the JDK's own modules, but a named module of the
 * application loader got IllegalAccessError without JVMTI AddModuleReads.) Its natives are
 * bound with RegisterNatives before any rewritten code can run; HotSpot then logs
 * "Re-registering of platform native method" (jni+resolve warning). Run it with bytecode
 * verification for every class (tests/it/methods/bci_rewrite.sh): a wrong rewrite is a VerifyError.
 *
 * The hooks count entries and exits per method id and keep a per-thread shadow stack (C
 * thread locals): every exit must be of the innermost open frame, except constructor frames
 * left open by an exception before super()/this() returned (the documented gap), which are
 * counted; ThreadEnd reports each thread's depth and counts. For one chosen
 * method the instruction probes are recorded (bci, values) with the branch outcome that
 * cf_branch_outcome() computes from the original bytecode. The workload's native methods are
 * bound two ways through the wrapper's prefix: automatic lookup of Java_BciNative_* exported
 * here, and RegisterNatives with the original name at ClassPrepare.
 *
 *   -agentpath:libbcitest.so=out=FILE[,flags=N][,trace=C.m(D)][,watch=PREFIX][,dump=C+...]
 *                           [,dumpdir=DIR][,prefix=P]
 * watch: report entries and exits of every method whose Class.name(desc) starts with PREFIX.
 * flags: 1 method probes, 2 instruction probes, 4 wrap natives (default 7).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "classfile/classfile.h"

#include <jni.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOOK "java/lang/JvmpiBciTestHook"
#define MAX_IDS (1 << 21)
#define MAX_TRACE 200000

static jvmtiEnv *jvmti;
static FILE *out;
static unsigned flags = CF_METHOD_PROBES | CF_INSN_PROBES | CF_WRAP_NATIVES;
static char prefix[64] = "$$bcitest$$";
static char trace_name[512], dumpdir[1024] = ".";
static char *watch_list, *dump_list;
static atomic_int ready;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* per method id */
static _Atomic long *n_enter, *n_exit;
static char **id_name; /* "Class.name(desc)" */
static atomic_int next_id;
static atomic_int trace_mid = -1;
static uint8_t *trace_code;
static uint32_t trace_code_len;

struct trec {
    int32_t bci, kind, v1, v2;
};
static struct trec *trace;
static atomic_int ntrace;

static _Atomic long c_hooked, c_rewritten, c_unchanged, c_errors, c_methods, c_wrapped, c_skipped,
    c_jdk_classes, c_jdk_methods, c_early, c_retrans, c_retrans_err, c_time_ns, c_cpu_ns, c_insn, c_bytes_in,
    c_bytes_out;

/* names of classes rewritten at their first load, and of those that got native wrappers */
struct nameset {
    char **v;
    size_t n, cap;
};
static struct nameset seen_first, wrapped;

/* per thread: a shadow stack of method ids, to match every exit with its entry */
struct tstate {
    int32_t *st;
    int n, cap;
    long entries, gaps, orphans, mismatches, unwound;
};
static __thread struct tstate T;
static uint8_t *id_init; /* 1 for constructors (their frames may lack an exit: the gap) */
static uint32_t *id_init_bci; /* constructors: 1 + rewritten offset of super(...)/this(...) */
static _Atomic long c_fail_reports;

static bool set_has(struct nameset *s, const char *name)
{
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->v[k], name) == 0)
            return true;
    return false;
}
static void set_add(struct nameset *s, const char *name)
{
    if (set_has(s, name))
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = strdup(name);
}

static bool in_list(const char *list, const char *name)
{
    if (!list)
        return false;
    size_t nl = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '+');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == nl && memcmp(p, name, l) == 0)
            return true;
        p += l + (e ? 1 : 0);
    }
    return false;
}

/* ---- hooks (static natives of the hook class) ---- */
static void JNICALL h_enter(JNIEnv *env, jclass k, jint mid)
{
    (void)env;
    (void)k;
    if (T.n == T.cap) {
        int cap = T.cap ? 2 * T.cap : 256;
        int32_t *p = realloc(T.st, sizeof *p * (size_t)cap);
        if (!p)
            abort();
        T.st = p;
        T.cap = cap;
    }
    T.st[T.n++] = mid;
    T.entries++;
    if ((unsigned)mid < MAX_IDS)
        atomic_fetch_add_explicit(&n_enter[mid], 1, memory_order_relaxed);
}
static void JNICALL h_enter_obj(JNIEnv *env, jclass k, jobject self, jint mid)
{
    if (!self)
        fprintf(out, "bcitest: FAIL enterObj with a null receiver, method %d\n", mid);
    h_enter(env, k, mid);
}
static const char *nm(int32_t mid) { return (unsigned)mid < MAX_IDS && id_name[mid] ? id_name[mid] : "?"; }
/* A constructor's super(...)/this(...) call is bracketed by superCall and ctorReady, both
 * from that constructor's own frame: the innermost open one. */
static void ctor_probe(const char *what, jint mid)
{
    if (T.n > 0 && T.st[T.n - 1] == mid)
        return;
    T.mismatches++;
    if (atomic_fetch_add(&c_fail_reports, 1) < 10)
        fprintf(out, "bcitest: FAIL %s of %s while %s is the innermost open frame\n", what, nm(mid),
                T.n > 0 ? nm(T.st[T.n - 1]) : "none");
}
static void JNICALL h_super_call(JNIEnv *env, jclass k, jint mid)
{
    (void)env;
    (void)k;
    ctor_probe("superCall", mid);
}
static void JNICALL h_ctor_ready(JNIEnv *env, jclass k, jobject self, jint mid)
{
    (void)env;
    (void)k;
    if (!self)
        fprintf(out, "bcitest: FAIL ctorReady with a null receiver, method %d\n", mid);
    ctor_probe("ctorReady", mid);
}
/* An exit must be of the innermost open frame. The only frames allowed to stay open are
 * constructors left by an exception before super()/this() returned (the documented gap):
 * they are unwound here and counted. */
static void JNICALL h_exit(JNIEnv *env, jclass k, jint mid)
{
    (void)env;
    (void)k;
    if ((unsigned)mid < MAX_IDS)
        atomic_fetch_add_explicit(&n_exit[mid], 1, memory_order_relaxed);
    if (T.n > 0 && T.st[T.n - 1] == mid) {
        T.n--;
        return;
    }
    int j = T.n - 1;
    while (j >= 0 && T.st[j] != mid)
        j--;
    if (j < 0) {
        T.orphans++;
        if (atomic_fetch_add(&c_fail_reports, 1) < 10)
            fprintf(out, "bcitest: FAIL exit of %s, which is not open\n", nm(mid));
        return;
    }
    for (int i = T.n - 1; i > j; i--) {
        if ((unsigned)T.st[i] < MAX_IDS && id_init[T.st[i]]) {
            T.gaps++;
        } else {
            T.mismatches++;
            if (atomic_fetch_add(&c_fail_reports, 1) < 10)
                fprintf(out, "bcitest: FAIL exit of %s while %s is open\n", nm(mid), nm(T.st[i]));
        }
    }
    T.n = j;
}
/* A constructor left by a throw: the exit, then every caller frame that is a constructor
 * standing at its own super(...)/this(...) call (rewritten offset from init_call) was left
 * by the same exception: unwound here, as the shim does, and counted. */
static void JNICALL h_exit_throw(JNIEnv *env, jclass k, jint mid)
{
    h_exit(env, k, mid);
    for (jint d = 2; T.n > 0; d++) {
        int32_t top = T.st[T.n - 1];
        jmethodID m;
        jlocation loc;
        if ((unsigned)top >= MAX_IDS || !id_init[top] || !id_init_bci[top] ||
            (*jvmti)->GetFrameLocation(jvmti, NULL, d, &m, &loc) != JVMTI_ERROR_NONE ||
            loc != (jlocation)(id_init_bci[top] - 1))
            return;
        atomic_fetch_add_explicit(&n_exit[top], 1, memory_order_relaxed);
        T.n--;
        T.unwound++;
    }
}
static void record(jint mid, jint bci, int kind, jint v1, jint v2)
{
    atomic_fetch_add_explicit(&c_insn, 1, memory_order_relaxed);
    if (mid != atomic_load_explicit(&trace_mid, memory_order_relaxed))
        return;
    int i = atomic_fetch_add(&ntrace, 1);
    if (i < MAX_TRACE)
        trace[i] = (struct trec){bci, kind, v1, v2};
}
static void JNICALL h_insn(JNIEnv *e, jclass k, jint mid, jint bci)
{
    (void)e, (void)k;
    record(mid, bci, 0, 0, 0);
}
static void JNICALL h_insn_int(JNIEnv *e, jclass k, jint v, jint mid, jint bci)
{
    (void)e, (void)k;
    record(mid, bci, 1, v, 0);
}
static void JNICALL h_insn_int2(JNIEnv *e, jclass k, jint v, jint w, jint mid, jint bci)
{
    (void)e, (void)k;
    record(mid, bci, 2, v, w);
}
static void JNICALL h_insn_obj(JNIEnv *e, jclass k, jobject o, jint mid, jint bci)
{
    (void)e, (void)k;
    record(mid, bci, 3, o == NULL, 0);
}
static void JNICALL h_insn_obj2(JNIEnv *e, jclass k, jobject o, jobject p, jint mid, jint bci)
{
    (void)k;
    record(mid, bci, 4, (*e)->IsSameObject(e, o, p) ? 1 : 0, 0);
}

/* ---- the workload's natives (class BciNative) ---- */
JNIEXPORT jint JNICALL Java_BciNative_twice(JNIEnv *env, jclass k, jint x)
{
    (void)env, (void)k;
    return 2 * x;
}
JNIEXPORT void JNICALL Java_BciNative_boom(JNIEnv *env, jclass k, jint x)
{
    (void)k;
    char msg[32];
    snprintf(msg, sizeof msg, "boom %d", x);
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"), msg);
}
static jint JNICALL native_plus(JNIEnv *env, jobject self, jint x)
{
    (void)env, (void)self;
    return x + 1000;
}

/* ---- rewriting ---- */
struct ctx {
    const char *cls;
    bool jdk;
    long methods, wrapped, skipped;
};

static int32_t cb_id(void *vc, int index, const char *name, const char *desc, uint16_t access)
{
    struct ctx *c = vc;
    (void)index, (void)access;
    int id = atomic_fetch_add(&next_id, 1);
    if (id >= MAX_IDS)
        return -1;
    size_t l = strlen(c->cls) + strlen(name) + strlen(desc) + 2;
    char *s = malloc(l);
    snprintf(s, l, "%s.%s%s", c->cls, name, desc);
    id_name[id] = s;
    id_init[id] = strcmp(name, "<init>") == 0;
    if (trace_name[0] && strcmp(s, trace_name) == 0)
        atomic_store(&trace_mid, id);
    return id;
}
static void cb_done(void *vc, int index, int32_t id, const uint8_t *code, uint32_t len)
{
    struct ctx *c = vc;
    (void)index;
    if (len == 0)
        c->wrapped++;
    else
        c->methods++;
    if (id == atomic_load(&trace_mid) && len) {
        pthread_mutex_lock(&lock);
        free(trace_code);
        trace_code = malloc(len);
        memcpy(trace_code, code, len);
        trace_code_len = len;
        pthread_mutex_unlock(&lock);
    }
}
static void cb_init_call(void *vc, int index, int32_t id, uint32_t new_bci)
{
    (void)vc, (void)index;
    if ((unsigned)id < MAX_IDS)
        id_init_bci[id] = new_bci + 1;
}
static void cb_skipped(void *vc, int index, const char *name, const char *desc, const char *why)
{
    struct ctx *c = vc;
    (void)index;
    c->skipped++;
    pthread_mutex_lock(&lock);
    fprintf(out, "bcitest: skip %s.%s%s: %s\n", c->cls, name, desc, why);
    pthread_mutex_unlock(&lock);
}

static void dump(const char *name, const unsigned char *b, size_t n)
{
    char path[2048];
    const char *slash = strrchr(name, '/');
    snprintf(path, sizeof path, "%s/%s.class", dumpdir, slash ? slash + 1 : name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

static void JNICALL cb_cflh(jvmtiEnv *j, JNIEnv *env, jclass redefined, jobject loader,
                            const char *name, jobject pd, jint len, const unsigned char *data,
                            jint *new_len, unsigned char **new_data)
{
    (void)env, (void)pd, (void)loader;
    if (!name)
        return; /* defined without a name: not counted */
    if (!atomic_load(&ready)) {
        atomic_fetch_add(&c_early, 1);
        return;
    }
    if (strcmp(name, HOOK) == 0)
        return;
    atomic_fetch_add(&c_hooked, 1);
    bool jdk = strncmp(name, "Bci", 3) != 0;
    unsigned f = flags & (CF_METHOD_PROBES | CF_INSN_PROBES);
    pthread_mutex_lock(&lock);
    /* natives are wrapped only at a first load (retransformation cannot add methods), and
     * again when that class is retransformed: the JVM hands us the original bytes */
    if ((flags & CF_WRAP_NATIVES) && (!redefined || set_has(&wrapped, name)))
        f |= CF_WRAP_NATIVES;
    pthread_mutex_unlock(&lock);
    struct ctx c = {name, jdk, 0, 0, 0};
    struct cf_probe_spec spec = {HOOK, f, prefix, cb_id, cb_done, cb_skipped, cb_init_call, &c};
    uint8_t *o = NULL;
    size_t ol = 0;
    char err[512];
    /* wall time, and this thread's CPU time (the machine may be busy with other work) */
    struct timespec t0, t1, u0, u1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &u0);
    int rc = cf_instrument(data, (size_t)len, &spec, &o, &ol, err, sizeof err);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &u1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_fetch_add(&c_time_ns, (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    atomic_fetch_add(&c_cpu_ns, (u1.tv_sec - u0.tv_sec) * 1000000000L + (u1.tv_nsec - u0.tv_nsec));
    atomic_fetch_add(&c_bytes_in, len);
    pthread_mutex_lock(&lock);
    if (!redefined)
        set_add(&seen_first, name);
    if (rc < 0) {
        c_errors++;
        fprintf(out, "bcitest: error %s: %s\n", name, err);
    } else if (rc == 1) {
        c_unchanged++;
    } else {
        c_rewritten++;
        if (jdk) {
            c_jdk_classes++;
            c_jdk_methods += c.methods + c.wrapped;
        }
        if (c.wrapped && !redefined)
            set_add(&wrapped, name);
    }
    c_methods += c.methods;
    c_wrapped += c.wrapped;
    c_skipped += c.skipped;
    pthread_mutex_unlock(&lock);
    if (rc == 0) {
        unsigned char *nd;
        if ((*j)->Allocate(j, (jlong)ol, &nd) == JVMTI_ERROR_NONE) {
            memcpy(nd, o, ol);
            *new_data = nd;
            *new_len = (jint)ol;
            atomic_fetch_add(&c_bytes_out, (long)ol);
        }
        if (in_list(dump_list, name))
            dump(name, o, ol);
    }
    free(o);
}

/* ---- lifecycle ---- */
static void JNICALL cb_vm_start(jvmtiEnv *j, JNIEnv *env)
{
    (void)j;
    uint8_t *b;
    size_t n;
    char err[256];
    if (cf_make_hook_class(HOOK, &b, &n, err, sizeof err) != 0) {
        fprintf(out, "bcitest: FAIL hook class: %s\n", err);
        return;
    }
    jclass k = (*env)->DefineClass(env, HOOK, NULL, (const jbyte *)b, (jsize)n);
    free(b);
    if (!k) {
        (*env)->ExceptionDescribe(env);
        fprintf(out, "bcitest: FAIL DefineClass %s\n", HOOK);
        return;
    }
    JNINativeMethod nm[CF_HOOK_COUNT];
    void *fn[CF_HOOK_COUNT] = {(void *)h_enter, (void *)h_enter_obj, (void *)h_exit,
                               (void *)h_insn, (void *)h_insn_int, (void *)h_insn_int2,
                               (void *)h_insn_obj, (void *)h_insn_obj2, (void *)h_exit_throw,
                               (void *)h_enter, (void *)h_super_call, (void *)h_ctor_ready};
    for (int h = 0; h < CF_HOOK_COUNT; h++) {
        nm[h].name = (char *)cf_hook_name((enum cf_hook)h);
        nm[h].signature = (char *)cf_hook_desc((enum cf_hook)h);
        nm[h].fnPtr = fn[h];
    }
    if ((*env)->RegisterNatives(env, k, nm, CF_HOOK_COUNT) != 0) {
        (*env)->ExceptionDescribe(env);
        fprintf(out, "bcitest: FAIL RegisterNatives\n");
        return;
    }
    (*env)->NewGlobalRef(env, k);
    atomic_store(&ready, 1);
}

static void JNICALL cb_vm_init(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
    (void)env, (void)thread;
    jint n;
    jclass *cls;
    if ((*j)->GetLoadedClasses(j, &n, &cls) != JVMTI_ERROR_NONE)
        return;
    jclass *todo = malloc(sizeof *todo * (size_t)(n + 1));
    int nt = 0;
    for (int k = 0; k < n; k++) {
        jboolean mod = JNI_FALSE;
        char *sig = NULL;
        if ((*j)->IsModifiableClass(j, cls[k], &mod) != JVMTI_ERROR_NONE || !mod)
            continue;
        if ((*j)->GetClassSignature(j, cls[k], &sig, NULL) != JVMTI_ERROR_NONE)
            continue;
        size_t l = strlen(sig);
        if (sig[0] == 'L' && l > 2) {
            sig[l - 1] = 0;
            pthread_mutex_lock(&lock);
            bool done = set_has(&seen_first, sig + 1) || strcmp(sig + 1, HOOK) == 0;
            pthread_mutex_unlock(&lock);
            if (!done)
                todo[nt++] = cls[k];
        }
        (*j)->Deallocate(j, (unsigned char *)sig);
    }
    /* in batches; a batch that fails is retried class by class to name the culprit */
    for (int k = 0; k < nt; k += 64) {
        int m = nt - k < 64 ? nt - k : 64;
        if ((*j)->RetransformClasses(j, m, todo + k) == JVMTI_ERROR_NONE) {
            c_retrans += m;
            continue;
        }
        for (int i = 0; i < m; i++) {
            jvmtiError e = (*j)->RetransformClasses(j, 1, todo + k + i);
            if (e == JVMTI_ERROR_NONE) {
                c_retrans++;
            } else {
                char *sig = NULL;
                (*j)->GetClassSignature(j, todo[k + i], &sig, NULL);
                fprintf(out, "bcitest: retransform %s failed: error %d\n", sig ? sig : "?", e);
                (*j)->Deallocate(j, (unsigned char *)sig);
                c_retrans_err++;
            }
        }
    }
    free(todo);
    (*j)->Deallocate(j, (unsigned char *)cls);
    fprintf(out, "bcitest: vminit retransformed=%ld failed=%ld\n", (long)c_retrans, (long)c_retrans_err);
    fflush(out);
}

static void JNICALL cb_class_prepare(jvmtiEnv *j, JNIEnv *env, jthread t, jclass k)
{
    (void)t;
    char *sig = NULL;
    if ((*j)->GetClassSignature(j, k, &sig, NULL) != JVMTI_ERROR_NONE)
        return;
    if (strcmp(sig, "LBciNative;") == 0) {
        /* the original name: the JVM finds the prefixed native behind the wrapper */
        JNINativeMethod nm = {"plus", "(I)I", (void *)native_plus};
        if ((*env)->RegisterNatives(env, k, &nm, 1) != 0) {
            (*env)->ExceptionDescribe(env);
            fprintf(out, "bcitest: FAIL RegisterNatives BciNative.plus\n");
        }
    }
    (*j)->Deallocate(j, (unsigned char *)sig);
}

static void report_thread(const char *name)
{
    long open_init = 0;
    for (int i = 0; i < T.n; i++)
        if ((unsigned)T.st[i] < MAX_IDS && id_init[T.st[i]])
            open_init++;
    fprintf(out, "bcitest: thread %s depth=%d open_ctors=%ld gaps=%ld orphans=%ld mismatches=%ld "
                 "unwound=%ld entries=%ld\n",
            name, T.n, open_init, T.gaps, T.orphans, T.mismatches, T.unwound, T.entries);
}

static void JNICALL cb_thread_end(jvmtiEnv *j, JNIEnv *env, jthread t)
{
    (void)env;
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    (*j)->GetThreadInfo(j, t, &ti);
    pthread_mutex_lock(&lock);
    report_thread(ti.name ? ti.name : "?");
    pthread_mutex_unlock(&lock);
    (*j)->Deallocate(j, (unsigned char *)ti.name);
    free(T.st);
    memset(&T, 0, sizeof T);
}

static const char *kind_name[5] = {"insn", "int", "int2", "obj", "obj2"};

static void JNICALL cb_vm_death(jvmtiEnv *j, JNIEnv *env)
{
    (void)j, (void)env;
    pthread_mutex_lock(&lock);
    report_thread("(vmdeath)");
    fprintf(out,
            "bcitest: totals hooked=%ld rewritten=%ld unchanged=%ld errors=%ld early=%ld "
            "methods=%ld wrapped=%ld skipped=%ld retransformed=%ld retransform_errors=%ld "
            "insn_calls=%ld\n",
            (long)c_hooked, (long)c_rewritten, (long)c_unchanged, (long)c_errors, (long)c_early,
            (long)c_methods, (long)c_wrapped, (long)c_skipped, (long)c_retrans,
            (long)c_retrans_err, (long)c_insn);
    fprintf(out, "bcitest: jdk classes=%ld methods=%ld; rewrite time %.1f ms wall, %.1f ms cpu "
                 "for %ld classes (%.1f us cpu each, callbacks included), %ld -> %ld bytes\n",
            (long)c_jdk_classes, (long)c_jdk_methods, (double)c_time_ns / 1e6,
            (double)c_cpu_ns / 1e6, (long)c_hooked,
            c_hooked ? (double)c_cpu_ns / 1e3 / (double)c_hooked : 0.0, (long)c_bytes_in,
            (long)c_bytes_out);
    int nid = atomic_load(&next_id);
    if (nid > MAX_IDS)
        nid = MAX_IDS;
    /* the workload's methods (names starting with watch=PREFIX), summed over every id with
     * that name (a class defined by several loaders) */
    size_t wl = watch_list ? strlen(watch_list) : 0;
    for (int k = 0; wl && k < nid; k++) {
        if (!id_name[k] || strncmp(id_name[k], watch_list, wl) != 0)
            continue;
        bool first = true;
        for (int i = 0; i < k && first; i++)
            if (id_name[i] && strcmp(id_name[i], id_name[k]) == 0)
                first = false;
        if (!first)
            continue;
        long en = 0, ex = 0;
        int ids = 0;
        for (int i = k; i < nid; i++)
            if (id_name[i] && strcmp(id_name[i], id_name[k]) == 0) {
                en += n_enter[i];
                ex += n_exit[i];
                ids++;
            }
        fprintf(out, "bcitest: method %s %ld %ld ids=%d\n", id_name[k], en, ex, ids);
    }
    /* methods whose entries and exits differ (at most 20), for diagnosis */
    for (int k = 0, shown = 0; k < nid && shown < 20; k++)
        if (n_enter[k] != n_exit[k] && id_name[k]) {
            fprintf(out, "bcitest: unbalanced %s entries=%ld exits=%ld\n", id_name[k],
                    (long)n_enter[k], (long)n_exit[k]);
            shown++;
        }
    int nt = atomic_load(&ntrace);
    if (nt > MAX_TRACE)
        nt = MAX_TRACE;
    fprintf(out, "bcitest: trace %s records=%d\n", trace_name, nt);
    for (int k = 0; k < nt; k++) {
        struct cf_branch br;
        char o[64] = "";
        if (trace_code && cf_branch_outcome(trace_code, trace_code_len, (uint32_t)trace[k].bci,
                                            trace[k].v1, trace[k].v2, &br) == 0) {
            if (br.kind == CF_BR_IF)
                snprintf(o, sizeof o, " taken=%d next=%u", br.taken, br.next_bci);
            else if (br.kind == CF_BR_TABLESWITCH)
                snprintf(o, sizeof o, " key=%d low=%d high=%d next=%u", br.key, br.low, br.high,
                         br.next_bci);
            else if (br.kind == CF_BR_LOOKUPSWITCH)
                snprintf(o, sizeof o, " pair=%d of=%d next=%u", br.chosen_pair_index,
                         br.pairs_total, br.next_bci);
        }
        fprintf(out, "bcitest: t %d %s %d %d%s\n", trace[k].bci, kind_name[trace[k].kind],
                trace[k].v1, trace[k].v2, o);
    }
    fprintf(out, "bcitest: end\n");
    fflush(out);
    pthread_mutex_unlock(&lock);
}

static char *opt(const char *opts, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = opts; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l > kl && memcmp(p, key, kl) == 0 && p[kl] == '=')
            return strndup(p + kl + 1, l - kl - 1);
        p += l + (e ? 1 : 0);
    }
    return NULL;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    char *v;
    out = stdout;
    if ((v = opt(options, "out"))) {
        out = fopen(v, "w");
        if (!out) {
            fprintf(stderr, "bcitest: cannot open %s\n", v);
            return JNI_ERR;
        }
        setvbuf(out, NULL, _IOLBF, 0);
        free(v);
    }
    if ((v = opt(options, "flags"))) {
        flags = (unsigned)strtoul(v, NULL, 0);
        free(v);
    }
    if ((v = opt(options, "prefix"))) {
        snprintf(prefix, sizeof prefix, "%s", v);
        free(v);
    }
    if ((v = opt(options, "trace"))) {
        snprintf(trace_name, sizeof trace_name, "%s", v);
        free(v);
    }
    if ((v = opt(options, "dumpdir"))) {
        snprintf(dumpdir, sizeof dumpdir, "%s", v);
        free(v);
    }
    watch_list = opt(options, "watch");
    dump_list = opt(options, "dump");
    n_enter = calloc(MAX_IDS, sizeof *n_enter);
    n_exit = calloc(MAX_IDS, sizeof *n_exit);
    id_name = calloc(MAX_IDS, sizeof *id_name);
    id_init = calloc(MAX_IDS, 1);
    id_init_bci = calloc(MAX_IDS, sizeof *id_init_bci);
    trace = calloc(MAX_TRACE, sizeof *trace);
    if (!n_enter || !n_exit || !id_name || !id_init || !id_init_bci || !trace)
        return JNI_ERR;

    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_retransform_classes = 1;
    caps.can_retransform_any_class = 1;
    caps.can_set_native_method_prefix = 1;
    caps.can_generate_all_class_hook_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "bcitest: capabilities refused\n");
        return JNI_ERR;
    }
    if ((*jvmti)->SetNativeMethodPrefix(jvmti, prefix) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMStart = cb_vm_start;
    cb.VMInit = cb_vm_init;
    cb.VMDeath = cb_vm_death;
    cb.ClassFileLoadHook = cb_cflh;
    cb.ClassPrepare = cb_class_prepare;
    cb.ThreadEnd = cb_thread_end;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent ev[] = {JVMTI_EVENT_VM_START, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH,
                       JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, JVMTI_EVENT_CLASS_PREPARE,
                       JVMTI_EVENT_THREAD_END};
    for (size_t k = 0; k < sizeof ev / sizeof ev[0]; k++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, ev[k], NULL) != JVMTI_ERROR_NONE)
            return JNI_ERR;
    return JNI_OK;
}
