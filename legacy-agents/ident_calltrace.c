/* ident_calltrace.c — a JDK 1.3-style JVMPI agent that checks GetCallTrace
 * (tests/it/methods/ident_calltrace.sh, workload tests/java/IdentTrace.java).
 *
 * Enabled: THREAD_START, THREAD_END, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. Method ids
 * are resolved only through the agent's own table built from CLASS_LOAD (an unknown
 * method id in a trace is a FAIL: definition before use). Frames print as
 * "Class.method:line" (-3 native), top first, like the workload's own printStack.
 *  - CLASS_LOAD IdentTrigger (main runs `new IdentTrigger()`): trace of the calling thread
 *    inside the handler ("selftrace ...").
 *  - CLASS_LOAD IdentTrace$Go: wakes the tracer system thread (CreateSystemThread in
 *    JVM_INIT_DONE) and waits in the handler until it is done. The tracer then
 *      traces the running spinner 20 times; suspends it (its Java counter, read through
 *      JNI, must not move), traces it twice (equal), resumes it (counter moves again);
 *      checks depth 1 / 2 / 0 / -1, a NULL and a garbage env_id (0 frames, frames past
 *      num_frames untouched); traces the sleeper (top frame native, -3), itself (no Java
 *      frames), the ended thread ident-short (0 frames), and main (blocked in the handler).
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define KIT_NAME "ident_calltrace"
#define KIT_LINE 8192
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock, go_mon;

/* ---- method table (kit/pmap.h; caller holds lock) ------------------------------------ */

struct meth {
    char *cls, *name, *sig;
    jint start, end;
};
static struct pmap methods;

#define MAXT 256
static struct {
    char name[64];
    JNIEnv *env;
    int ended;
} T[MAXT];
static int nT;

static jobjectID trace_class_id; /* IdentTrace */
static jobject trace_class;      /* global ref, for the tracer */
static volatile int go, done;

/* Find a thread by name (the latest; live_only: not ended). Takes lock. */
static JNIEnv *env_of(const char *name, int live_only)
{
    JNIEnv *e = NULL;
    jvmpi->RawMonitorEnter(lock);
    for (int i = nT - 1; i >= 0 && e == NULL; i--)
        if (strcmp(T[i].name, name) == 0 && (!live_only || !T[i].ended))
            e = T[i].env;
    jvmpi->RawMonitorExit(lock);
    return e;
}
static int env_live(JNIEnv *env)
{
    int live = 0;
    jvmpi->RawMonitorEnter(lock);
    for (int i = 0; i < nT; i++)
        if (T[i].env == env && !T[i].ended)
            live = 1;
    jvmpi->RawMonitorExit(lock);
    return live;
}

/* "Class.method:line ..." for n frames; FAIL for a method id no CLASS_LOAD announced. */
static void fmt_trace(const char *what, JVMPI_CallFrame *f, int n, char *out, size_t sz)
{
    size_t l = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        void *mv = NULL;
        jvmpi->RawMonitorEnter(lock);
        int known = pm_get(&methods, f[i].method_id, &mv);
        jvmpi->RawMonitorExit(lock);
        struct meth *m = mv;
        if (!known) {
            FAIL("%s: frame %d method id %p was never announced in a CLASS_LOAD", what, i,
                 (void *)f[i].method_id);
            l += snprintf(out + l, sz - l, "%s?%p:%d", i ? " " : "", (void *)f[i].method_id,
                          (int)f[i].lineno);
        } else {
            if (f[i].lineno == -3 && !(m->start == -1 && m->end == -1))
                FAIL("%s: frame %d %s.%s has lineno -3 but is not native (lines %d-%d)", what, i,
                     m->cls, m->name, (int)m->start, (int)m->end);
            l += snprintf(out + l, sz - l, "%s%s.%s:%d", i ? " " : "", m->cls, m->name,
                          (int)f[i].lineno);
        }
        if (l >= sz)
            break;
    }
}

static int trace(JNIEnv *env, JVMPI_CallFrame *frames, int depth)
{
    JVMPI_CallTrace tr;
    tr.env_id = env;
    tr.frames = frames;
    tr.num_frames = 55;
    jvmpi->GetCallTrace(&tr, depth);
    return tr.num_frames;
}

/* ---- the tracer (system thread) ------------------------------------------------------ */

static jlong counter(JNIEnv *jni)
{
    static jfieldID fid;
    if (fid == NULL)
        fid = (*jni)->GetStaticFieldID(jni, (jclass)trace_class, "counter", "J");
    return fid ? (*jni)->GetStaticLongField(jni, (jclass)trace_class, fid) : -1;
}

#define SENT_LINE (-777)
#define SENT_MID ((jmethodID)(long)0xdead0)

static void check_depth(const char *label, JNIEnv *env, int depth, int want_max, int want_exact)
{
    JVMPI_CallFrame f[8];
    for (int i = 0; i < 8; i++) {
        f[i].lineno = SENT_LINE;
        f[i].method_id = SENT_MID;
    }
    int n = trace(env, f, depth);
    int untouched = 1;
    for (int i = n < 0 ? 0 : n; i < 8; i++)
        if (f[i].lineno != SENT_LINE || f[i].method_id != SENT_MID)
            untouched = 0;
    char buf[1024] = "";
    if (n > 0 && n <= 8)
        fmt_trace(label, f, n, buf, sizeof buf);
    say("depth %s d=%d n=%d untouched=%s%s%s", label, depth, n, untouched ? "yes" : "no",
        n > 0 ? " trace=" : "", buf);
    if (n < 0 || n > want_max || (want_exact >= 0 && n != want_exact))
        FAIL("GetCallTrace(%s, depth %d) gave %d frames", label, depth, n);
    if (!untouched)
        FAIL("GetCallTrace(%s, depth %d) wrote past num_frames %d", label, depth, n);
}

static void tracer(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    jvmpi->RawMonitorEnter(go_mon);
    while (!go)
        jvmpi->RawMonitorWait(go_mon, 0);
    jvmpi->RawMonitorExit(go_mon);
    say("tracer: go");

    JNIEnv *spinner = env_of("ident-spinner", 1), *sleeper = env_of("ident-sleeper", 1);
    JNIEnv *mainenv = env_of("main", 1), *shortenv = env_of("ident-short", 0);
    if (!spinner || !sleeper || !mainenv || !shortenv)
        FAIL("tracer: no THREAD_START for spinner %p sleeper %p main %p short %p",
             (void *)spinner, (void *)sleeper, (void *)mainenv, (void *)shortenv);
    JVMPI_CallFrame f[32], g[32];
    char first[4096], buf[4096];

    if (spinner != NULL) {
        /* a. the running spinner, not suspended */
        int same = 0, n0 = 0;
        first[0] = '\0';
        for (int k = 0; k < 20; k++) {
            int n = trace(spinner, f, 10);
            fmt_trace("running spinner", f, n, buf, sizeof buf);
            if (k == 0) {
                n0 = n;
                snprintf(first, sizeof first, "%s", buf);
            }
            same += strcmp(buf, first) == 0;
            usleep(2000);
        }
        say("running spinner n=%d same=%d/20 trace=%s", n0, same, first);

        /* b. suspended */
        jvmpi->SuspendThread(spinner);
        jlong c1 = counter(jni);
        usleep(100000);
        jlong c2 = counter(jni);
        int n1 = trace(spinner, f, 10);
        usleep(50000);
        int n2 = trace(spinner, g, 10);
        int equal = n1 == n2;
        for (int i = 0; equal && i < n1; i++) /* field by field: the struct has padding */
            equal = f[i].lineno == g[i].lineno && f[i].method_id == g[i].method_id;
        fmt_trace("suspended spinner", f, n1, buf, sizeof buf);
        jlong c3 = counter(jni);
        jvmpi->ResumeThread(spinner);
        jlong c4 = c3;
        for (int i = 0; i < 300 && c4 == c3; i++) { /* up to 3 s on a busy machine */
            usleep(10000);
            c4 = counter(jni);
        }
        say("suspended spinner n=%d twice_equal=%s progress_while_suspended=%lld trace=%s", n1,
            equal ? "yes" : "no", (long long)(c3 - c1), buf);
        say("resumed spinner progress=%s", c4 > c3 ? "yes" : "no");
        if (c3 != c1 || c2 != c1)
            FAIL("the spinner's counter moved while it was suspended (%lld -> %lld -> %lld)",
                 (long long)c1, (long long)c2, (long long)c3);
        if (!equal)
            FAIL("two traces of the suspended spinner differ");
        if (c4 <= c3)
            FAIL("the spinner did not run after ResumeThread");

        /* c. depth */
        check_depth("spinner", spinner, 1, 1, 1);
        check_depth("spinner", spinner, 2, 2, 2);
        check_depth("spinner", spinner, 0, 0, 0);
        check_depth("spinner", spinner, -1, 0, 0);
    }
    check_depth("NULL-env", NULL, 8, 0, 0);
    int local;
    check_depth("garbage-env", (JNIEnv *)&local, 8, 0, 0);

    /* d. the sleeper: top frame native */
    if (sleeper != NULL) {
        int n = trace(sleeper, f, 10);
        fmt_trace("sleeper", f, n, buf, sizeof buf);
        say("sleeper n=%d top_lineno=%d trace=%s", n, n > 0 ? (int)f[0].lineno : 0, buf);
    }
    /* e. itself: a system thread has no Java frames */
    int ns = trace(jni, f, 10);
    say("self (system thread) n=%d", ns);
    /* f. a thread that ended */
    if (shortenv != NULL) {
        int reused = env_live(shortenv);
        int n = trace(shortenv, f, 10);
        say("ended thread n=%d%s", n, reused ? " (env reused by a live thread)" : "");
        if (n != 0 && !reused)
            FAIL("GetCallTrace of an ended thread's env gave %d frames", n);
    }
    /* g. main, blocked in our CLASS_LOAD handler */
    if (mainenv != NULL) {
        int n = trace(mainenv, f, 12);
        fmt_trace("main", f, n, buf, sizeof buf);
        say("main n=%d trace=%s", n, buf);
    }

    jvmpi->RawMonitorEnter(go_mon);
    done = 1;
    jvmpi->RawMonitorNotifyAll(go_mon);
    jvmpi->RawMonitorExit(go_mon);
}

/* ---- events ------------------------------------------------------------------------- */

static void on_class_load(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        return;
    const char *cn = S(ev->u.class_load.class_name);
    jvmpi->RawMonitorEnter(lock);
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *jm = &ev->u.class_load.methods[i];
        struct meth *m = calloc(1, sizeof *m);
        m->cls = strdup(cn);
        m->name = strdup(S(jm->method_name));
        m->sig = strdup(S(jm->method_signature));
        m->start = jm->start_lineno;
        m->end = jm->end_lineno;
        pm_put(&methods, jm->method_id, m);
    }
    if (strcmp(cn, "IdentTrace") == 0)
        trace_class_id = ev->u.class_load.class_id;
    jvmpi->RawMonitorExit(lock);

    if (strcmp(cn, "IdentTrigger") == 0) {
        JVMPI_CallFrame f[20];
        char buf[4096];
        int n = trace(ev->env_id, f, 20);
        fmt_trace("selftrace", f, n, buf, sizeof buf);
        say("selftrace n=%d on_event_thread=%s trace=%s", n,
            ev->env_id == current_env() ? "yes" : "no", buf);
        n = trace(ev->env_id, f, 2);
        fmt_trace("selftrace depth 2", f, n, buf, sizeof buf);
        say("selftrace depth=2 n=%d trace=%s", n, buf);
    } else if (strcmp(cn, "IdentTrace$Go") == 0) {
        JNIEnv *jni = current_env();
        jvmpi->DisableGC();
        jobject c = jvmpi->jobjectID2jobject(trace_class_id);
        jvmpi->EnableGC();
        trace_class = c ? (*jni)->NewGlobalRef(jni, c) : NULL;
        if (trace_class == NULL) {
            FAIL("cannot get IdentTrace from its class id %p", (void *)trace_class_id);
            return;
        }
        jvmpi->RawMonitorEnter(go_mon);
        go = 1;
        jvmpi->RawMonitorNotifyAll(go_mon);
        for (int i = 0; i < 300 && !done; i++)
            jvmpi->RawMonitorWait(go_mon, 100);
        int d = done;
        jvmpi->RawMonitorExit(go_mon);
        say("Go handler: tracer %s", d ? "done" : "did not finish in 30 s");
        if (!d)
            FAIL("tracer did not finish");
    }
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_THREAD_START:
        if (ev->event_type & JVMPI_REQUESTED_EVENT)
            break;
        jvmpi->RawMonitorEnter(lock);
        if (nT < MAXT) {
            snprintf(T[nT].name, sizeof T[nT].name, "%s", S(ev->u.thread_start.thread_name));
            T[nT].env = ev->u.thread_start.thread_env_id;
            T[nT].ended = 0;
            nT++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_THREAD_END:
        jvmpi->RawMonitorEnter(lock);
        for (int i = 0; i < nT; i++)
            if (T[i].env == ev->env_id)
                T[i].ended = 1;
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        jint rc = jvmpi->CreateSystemThread("ident-tracer", JVMPI_NORMAL_PRIORITY, tracer);
        say("JVM_INIT_DONE tracer rc=%d", (int)rc);
        if (rc != JNI_OK)
            FAIL("CreateSystemThread failed");
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("summary fails=%d", g_fails);
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
    lock = jvmpi->RawMonitorCreate("_ident_calltrace_lock");
    go_mon = jvmpi->RawMonitorCreate("_ident_calltrace_go");
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    say("loaded");
    return JNI_OK;
}
