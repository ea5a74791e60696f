/* calltrace.c — GetCallTrace: JVMTI GetStackTrace plus a cached bci -> line lookup.
 *
 * Frames come top first with the JVMTI jmethodID (the same ids as CLASS_LOAD and method
 * events) and the JVMPI line number: -3 for native methods, -1 where the class has no line
 * table, else the line whose range holds the bci. HotSpot returned 0 frames for a thread
 * other than the caller unless the agent had suspended it; JVMTI can walk a running thread
 * safely, so the shim always returns its real stack.
 *
 * Line tables are fetched once per method and kept sorted in a hash (lines_lock, a leaf,
 * not held across JVMTI calls). Before a trace is returned, the classes of its methods are
 * announced to agents that enabled CLASS_LOAD, so a method id in a trace is never unknown.
 */
#include "api.h"
#include "bci.h"
#include "calltrace.h"
#include "classes.h"
#include "threads.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct line_entry {
    jlocation start;
    jint line;
};

struct method_lines {
    jmethodID method;           /* key */
    jmethodID current;          /* the id agents get (calltrace_current_version) */
    jint n;                     /* -3: native; 0: no table */
    struct line_entry *lines;   /* sorted by start */
    bool announced;             /* its class went through classes_method_announced */
    UT_hash_handle hh;
};

static struct method_lines *cache;
static pthread_rwlock_t lines_lock = PTHREAD_RWLOCK_INITIALIZER;

static int by_start(const void *a, const void *b)
{
    const struct line_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The method of cls named name (minus skip leading bytes) with signature sig, or NULL. */
static jmethodID method_named(jclass cls, const char *name, const char *sig)
{
    jvmtiEnv *jvmti = g_shim.jvmti;
    jmethodID cur = NULL;
    jint n = 0;
    jmethodID *all = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, cls, &n, &all) != JVMTI_ERROR_NONE)
        return NULL;
    for (jint i = 0; i < n && cur == NULL; i++) {
        char *nm = NULL, *sg = NULL;
        if ((*jvmti)->GetMethodName(jvmti, all[i], &nm, &sg, NULL) == JVMTI_ERROR_NONE &&
            strcmp(nm, name) == 0 && strcmp(sg, sig) == 0)
            cur = all[i];
        (*jvmti)->Deallocate(jvmti, (unsigned char *)nm);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sg);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)all);
    return cur;
}

/* The id agents know for the method JVMTI names m:
 *  - Frames and compiled code of a method that runs as it was before its class was
 *    rewritten for method events (methods=bci retransforms the classes loaded before
 *    JVM_OnLoad; a thread that was inside one keeps running the old code) belong to the
 *    obsolete version, whose jmethodID no CLASS_LOAD lists and no method event uses: the
 *    current version's id.
 *  - A native renamed by method-event instrumentation ("$$jvmpi$$name", bci.c; its frame
 *    and its compiled native wrapper carry that name): the method of the original name,
 *    the Java wrapper that CLASS_LOAD lists and method events report.
 * m itself if neither applies (or the other method cannot be found). */
jmethodID calltrace_current_version(jmethodID m)
{
    jvmtiEnv *jvmti = g_shim.jvmti;
    jboolean obsolete = JNI_FALSE;
    if ((*jvmti)->IsMethodObsolete(jvmti, m, &obsolete) != JVMTI_ERROR_NONE)
        return m;
    jclass cls = NULL;
    char *name = NULL, *sig = NULL;
    jmethodID cur = NULL;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
        bool renamed = strncmp(name, BCI_NATIVE_PREFIX, strlen(BCI_NATIVE_PREFIX)) == 0;
        if ((obsolete || renamed) &&
            (*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE)
            cur = method_named(cls, renamed ? name + strlen(BCI_NATIVE_PREFIX) : name, sig);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    JNIEnv *jni = shim_current_jni();
    if (cls != NULL && jni != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    return cur != NULL ? cur : m;
}

static struct method_lines *lines_of(jmethodID m)
{
    struct method_lines *ml;
    pthread_rwlock_rdlock(&lines_lock);
    HASH_FIND_PTR(cache, &m, ml);
    pthread_rwlock_unlock(&lines_lock);
    if (ml != NULL)
        return ml;
    ml = calloc(1, sizeof *ml);
    if (ml == NULL)
        return NULL;
    ml->method = m;
    ml->current = calltrace_current_version(m);
    classes_note_methods(&ml->current, 1);
    jboolean native = JNI_FALSE;
    (*g_shim.jvmti)->IsMethodNative(g_shim.jvmti, m, &native);
    if (native) {
        ml->n = -3;
    } else {
        jint n = 0;
        jvmtiLineNumberEntry *t = NULL;
        if ((*g_shim.jvmti)->GetLineNumberTable(g_shim.jvmti, m, &n, &t) == JVMTI_ERROR_NONE) {
            ml->lines = malloc(sizeof *ml->lines * (n ? n : 1));
            if (ml->lines != NULL) {
                for (jint i = 0; i < n; i++) {
                    ml->lines[i].start = t[i].start_location;
                    ml->lines[i].line = t[i].line_number;
                }
                qsort(ml->lines, n, sizeof *ml->lines, by_start);
                ml->n = n;
            }
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)t);
        }
    }
    struct method_lines *old;
    pthread_rwlock_wrlock(&lines_lock);
    HASH_FIND_PTR(cache, &m, old);
    if (old == NULL)
        HASH_ADD_PTR(cache, method, ml);
    pthread_rwlock_unlock(&lines_lock);
    if (old != NULL) {
        free(ml->lines);
        free(ml);
        ml = old;
    }
    return ml;
}

jint calltrace_line(jmethodID m, jlocation bci)
{
    struct method_lines *ml = lines_of(m);
    if (ml == NULL || ml->n == 0)
        return -1;
    if (ml->n < 0)
        return -3;
    /* The last entry whose start <= bci. */
    jint lo = 0, hi = ml->n - 1, found = -1;
    while (lo <= hi) {
        jint mid = (lo + hi) / 2;
        if (ml->lines[mid].start <= bci) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found < 0 ? -1 : ml->lines[found].line;
}

#define STACK_CHUNK 64

jint calltrace_fill(JNIEnv *jni, jthread t, JVMPI_CallFrame *frames, jint depth)
{
    /* One frame more than asked: a thread inside a method-event probe has the probe's
     * native frame on top, which is the shim's and is dropped. */
    jvmtiFrameInfo buf[STACK_CHUNK + 1];
    jvmtiFrameInfo *fi = depth < STACK_CHUNK ? buf : malloc(sizeof *fi * ((size_t)depth + 1));
    if (fi == NULL)
        return 0;
    jint n = 0;
    jvmtiError err = (*g_shim.jvmti)->GetStackTrace(g_shim.jvmti, t, 0, depth + 1, fi, &n);
    if (err != JVMTI_ERROR_NONE) {
        if (err != JVMTI_ERROR_THREAD_NOT_ALIVE)
            jvmti_ok_at(err, LOG_INFO, "GetCallTrace: GetStackTrace");
        n = 0;
    }
    jint skip = (n > 0 && bci_is_hook_method(fi[0].method)) ? 1 : 0;
    n -= skip;
    jint out = 0;
    for (jint i = 0; i < n && out < depth; i++) {
        jvmtiFrameInfo *f = &fi[i + skip];
        struct method_lines *ml = lines_of(f->method);
        frames[out].method_id = ml != NULL ? ml->current : f->method;
        frames[out].lineno = calltrace_line(f->method, f->location); /* the running version's */
        if (ml != NULL && !ml->announced && jni != NULL &&
            events_any(JVMPI_EVENT_CLASS_LOAD)) {
            classes_method_announced(jni, f->method);
            ml->announced = g_shim.ninst == 1; /* with several agents, ask every time */
        }
        /* A renamed native's frame stands for the native the agent knows; the Java wrapper
         * right below it, the same method to the agent, is not shown twice. */
        if (ml != NULL && ml->n == -3 && ml->current != f->method && i + 1 < n &&
            fi[i + skip + 1].method == ml->current)
            i++;
        out++;
    }
    if (fi != buf)
        free(fi);
    return out;
}

void jvmpi_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    if (trace == NULL) {
        report_misuse(inst, LOG_WARN, "GetCallTrace(NULL trace): ignored");
        return;
    }
    trace->num_frames = 0;
    if (depth <= 0) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(depth %d): no frames", (int)depth);
        return;
    }
    if (trace->frames == NULL) {
        report_misuse(inst, LOG_WARN, "GetCallTrace with trace->frames NULL: no frames");
        return;
    }
    JNIEnv *env = trace->env_id;
    if (env == NULL) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(env_id NULL): no frames");
        return;
    }
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL) {
        report_misuse(inst, LOG_WARN,
                      "GetCallTrace from a thread the JVM does not know: no frames");
        return;
    }
    if (env == jni) {
        trace->num_frames = calltrace_fill(jni, NULL, trace->frames, depth);
        return;
    }
    struct thread_rec *r = threads_acquire(env);
    if (r == NULL || r->ref == NULL) {
        report_misuse(inst, LOG_INFO, "GetCallTrace(env_id %p): no such thread: no frames",
                                      (void *)env);
        threads_release(r);
        return;
    }
    trace->num_frames = calltrace_fill(jni, r->ref, trace->frames, depth);
    threads_release(r);
}

/* ---- holding every thread still (heap and monitor dumps) ---- */

bool world_hold(JNIEnv *jni, struct world *w, jint depth)
{
    memset(w, 0, sizeof *w);
    threads_self();
    w->n = threads_snapshot(jni, &w->snap);
    size_t n = w->n ? w->n : 1;
    jthread *susp = calloc(n, sizeof *susp);
    jvmtiError *serr = calloc(n, sizeof *serr);
    size_t *idx = calloc(n, sizeof *idx);
    w->traces = calloc(n, sizeof *w->traces);
    w->frames = calloc(n * (size_t)depth, sizeof *w->frames);
    w->held = calloc(n, sizeof *w->held);
    bool ok = susp && serr && idx && w->traces && w->frames && w->held;
    if (ok) {
        jint ns = 0;
        for (size_t i = 0; i < w->n; i++)
            if (w->snap[i].thread != NULL && w->snap[i].env != jni) {
                idx[ns] = i;
                susp[ns++] = w->snap[i].thread;
            }
        if (ns > 0)
            (*g_shim.jvmti)->SuspendThreadList(g_shim.jvmti, ns, susp, serr);
        for (jint k = 0; k < ns; k++)
            w->held[idx[k]] = serr[k] == JVMTI_ERROR_NONE;
        for (size_t i = 0; i < w->n; i++) {
            w->traces[i].env_id = w->snap[i].env;
            w->traces[i].frames = &w->frames[i * (size_t)depth];
            if (w->snap[i].thread != NULL)
                w->traces[i].num_frames = calltrace_fill(jni, w->snap[i].thread,
                                                         w->traces[i].frames, depth);
        }
    }
    free(susp);
    free(serr);
    free(idx);
    return ok;
}

void world_resume(struct world *w)
{
    for (size_t i = 0; w->held && i < w->n; i++)
        if (w->held[i]) {
            (*g_shim.jvmti)->ResumeThread(g_shim.jvmti, w->snap[i].thread);
            w->held[i] = false;
        }
}

void world_free(JNIEnv *jni, struct world *w)
{
    world_resume(w);
    for (size_t i = 0; i < w->n; i++)
        if (w->snap[i].thread)
            (*jni)->DeleteLocalRef(jni, w->snap[i].thread);
    free(w->snap);
    free(w->traces);
    free(w->frames);
    free(w->held);
    memset(w, 0, sizeof *w);
}
