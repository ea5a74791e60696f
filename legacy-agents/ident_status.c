/* ident_status.c — a JDK 1.3-style JVMPI agent for thread control: GetThreadStatus,
 * SuspendThread/ResumeThread, SuspendThreadList/ResumeThreadList, ThreadHasRun
 * (tests/it/threads/ident_status.sh, workload tests/java/IdentStatus.java).
 *
 * Enabled: THREAD_START, THREAD_END, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. Threads are
 * found by name in the agent's THREAD_START table. When IdentStatus$Go loads, its handler
 * (on main) wakes the tester system thread and waits for it. The tester prints one line per
 * observation; progress of the spinning threads is read from the workload's static
 * counters (spinCount, intrCount) through JNI. FAIL lines only for things that must hold
 * whatever the expected values (a counter moving while suspended, results not written).
 * The expected values are asserted by the test script.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIT_NAME "ident_status"
#define KIT_LINE 2048
#include "kit/out.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock, go_mon;

#define MAXT 256
static struct {
    char name[64];
    JNIEnv *env;
    int ended;
} T[MAXT];
static int nT;
static jobjectID status_class_id;
static jclass status_class;
static volatile int go, done;
static int not_a_thread; /* its address is a garbage env */
#define GARBAGE ((JNIEnv *)&not_a_thread)

static JNIEnv *env_of(const char *name)
{
    JNIEnv *e = NULL;
    jvmpi->RawMonitorEnter(lock);
    for (int i = nT - 1; i >= 0 && e == NULL; i--)
        if (strcmp(T[i].name, name) == 0 && !T[i].ended)
            e = T[i].env;
    jvmpi->RawMonitorExit(lock);
    if (e == NULL)
        FAIL("no live thread named %s", name);
    return e;
}

static jlong counter(JNIEnv *jni, const char *field)
{
    jfieldID fid = (*jni)->GetStaticFieldID(jni, status_class, field, "J");
    if (fid == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("no static field %s", field);
        return -1;
    }
    return (*jni)->GetStaticLongField(jni, status_class, fid);
}

static void msleep(int ms) { usleep((useconds_t)ms * 1000); }

/* An agent thread that blocks entering a raw monitor the tester holds. */
static JVMPI_RawMonitor contended;
static volatile int raw_entered;
static void raw_blocker(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(contended);
    raw_entered = 1;
    jvmpi->RawMonitorExit(contended);
}

/* Wait (up to 3 s) until the counter moves past `from`; returns whether it did. The thread
 * may need a moment to be scheduled again on a busy machine. */
static int progressed(JNIEnv *jni, const char *field, jlong from)
{
    for (int i = 0; i < 300; i++) {
        if (counter(jni, field) != from)
            return 1;
        msleep(10);
    }
    return 0;
}

static const char *fmt_results(const jint *r, int n, char *buf, size_t sz)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && l < sz; i++)
        l += snprintf(buf + l, sz - l, "%s%d", i ? "," : "", (int)r[i]);
    return buf;
}

/* Suspend with SuspendThread, report status and progress, resume, report progress. */
static void suspend_one(JNIEnv *jni, const char *name, const char *field)
{
    JNIEnv *e = env_of(name);
    if (e == NULL)
        return;
    jvmpi->SuspendThread(e);
    jint st = jvmpi->GetThreadStatus(e);
    if (field == NULL) {
        jvmpi->ResumeThread(e);
        jint after = jvmpi->GetThreadStatus(e);
        say("suspend %s status=0x%x after_resume=0x%x", name, (unsigned)st, (unsigned)after);
        return;
    }
    jlong c1 = counter(jni, field);
    msleep(150);
    jlong c2 = counter(jni, field);
    jint st2 = jvmpi->GetThreadStatus(e);
    jvmpi->ResumeThread(e);
    int moved = progressed(jni, field, c2);
    say("suspend %s status=0x%x status_later=0x%x progress_while_suspended=%lld progress_after_resume=%s",
        name, (unsigned)st, (unsigned)st2, (long long)(c2 - c1), moved ? "yes" : "no");
    if (c2 != c1)
        FAIL("%s made progress while suspended (%lld -> %lld)", name, (long long)c1, (long long)c2);
    if (!moved)
        FAIL("%s made no progress after ResumeThread", name);
}

/* Suspend, resume, wait 200 ms (for a spinning thread: also until its counter moved, so
 * that it surely ran), suspend: ThreadHasRun, then resume. */
static jboolean has_run(JNIEnv *jni, JNIEnv *e, const char *field)
{
    jvmpi->SuspendThread(e);
    jlong c = field ? counter(jni, field) : 0;
    jvmpi->ResumeThread(e);
    msleep(200);
    if (field)
        progressed(jni, field, c);
    jvmpi->SuspendThread(e);
    jboolean r = jvmpi->ThreadHasRun(e);
    jvmpi->ResumeThread(e);
    return r;
}

static void tester(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    jvmpi->RawMonitorEnter(go_mon);
    while (!go)
        jvmpi->RawMonitorWait(go_mon, 0);
    jvmpi->RawMonitorExit(go_mon);
    say("tester: go");
    static const char *names[] = {"st-spin", "st-holder", "st-blocked", "st-waiting",
                                  "st-parked", "st-sleeping", "st-intr", "main"};
    char buf[256];

    /* 1. statuses */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        JNIEnv *e = env_of(names[i]);
        if (e != NULL)
            say("status %s=0x%x", names[i], (unsigned)jvmpi->GetThreadStatus(e));
    }
    JNIEnv *self = jni;
    say("status self=0x%x NULL=0x%x garbage=0x%x", (unsigned)jvmpi->GetThreadStatus(self),
        (unsigned)jvmpi->GetThreadStatus(NULL), (unsigned)jvmpi->GetThreadStatus(GARBAGE));

    /* An agent thread blocked in RawMonitorEnter. */
    contended = jvmpi->RawMonitorCreate("_ident_status_contended");
    jvmpi->RawMonitorEnter(contended);
    if (jvmpi->CreateSystemThread("st-rawblocked", JVMPI_NORMAL_PRIORITY, raw_blocker) != JNI_OK)
        FAIL("CreateSystemThread(st-rawblocked) failed");
    msleep(200);
    JNIEnv *rb = env_of("st-rawblocked");
    if (rb != NULL)
        say("status st-rawblocked=0x%x entered=%d", (unsigned)jvmpi->GetThreadStatus(rb), raw_entered);
    jvmpi->RawMonitorExit(contended);
    for (int i = 0; i < 100 && !raw_entered; i++)
        msleep(10);
    say("st-rawblocked entered after release=%s", raw_entered ? "yes" : "no");

    /* 2. SuspendThread / ResumeThread */
    suspend_one(jni, "st-spin", "spinCount");
    suspend_one(jni, "st-intr", "intrCount");
    suspend_one(jni, "st-waiting", NULL);
    suspend_one(jni, "st-blocked", NULL);
    suspend_one(jni, "st-sleeping", NULL);
    JNIEnv *spin = env_of("st-spin"), *waiting = env_of("st-waiting");
    JNIEnv *sleeping = env_of("st-sleeping");
    if (spin != NULL) {
        /* No nesting: two suspends, one resume. */
        jvmpi->SuspendThread(spin);
        jvmpi->SuspendThread(spin);
        jvmpi->ResumeThread(spin);
        say("double suspend, single resume: progress=%s",
            progressed(jni, "spinCount", counter(jni, "spinCount")) ? "yes" : "no");
        /* ResumeThread of a thread that is not suspended: nothing happens. */
        jvmpi->ResumeThread(spin);
        jvmpi->ResumeThread(NULL);
        jvmpi->ResumeThread(GARBAGE);
    }
    jvmpi->SuspendThread(self);
    jvmpi->SuspendThread(NULL);
    jvmpi->SuspendThread(GARBAGE);
    say("self/NULL/garbage SuspendThread returned");

    /* 3. lists */
    if (spin != NULL && waiting != NULL && sleeping != NULL) {
        JNIEnv *l1[6] = {spin, NULL, self, GARBAGE, waiting, sleeping};
        jint r1[6] = {77, 77, 77, 77, 77, 77};
        jvmpi->SuspendThreadList(6, l1, r1);
        jint st_spin = jvmpi->GetThreadStatus(spin), st_wait = jvmpi->GetThreadStatus(waiting);
        jlong c1 = counter(jni, "spinCount");
        msleep(150);
        jlong c2 = counter(jni, "spinCount");
        say("suspendlist results=%s spin_status=0x%x waiting_status=0x%x progress_while_suspended=%lld",
            fmt_results(r1, 6, buf, sizeof buf), (unsigned)st_spin, (unsigned)st_wait,
            (long long)(c2 - c1));
        if (c2 != c1)
            FAIL("st-spin made progress while suspended by SuspendThreadList");
        JNIEnv *l2[2] = {spin, waiting};
        jint r2[2] = {77, 77};
        jvmpi->SuspendThreadList(2, l2, r2);
        say("suspendlist again results=%s", fmt_results(r2, 2, buf, sizeof buf));
        jvmpi->SuspendThread(spin); /* already suspended: ignored, no nesting */
        JNIEnv *l3[5] = {spin, waiting, sleeping, NULL, GARBAGE};
        jint r3[5] = {77, 77, 77, 77, 77};
        jvmpi->ResumeThreadList(5, l3, r3);
        say("resumelist results=%s progress_after=%s", fmt_results(r3, 5, buf, sizeof buf),
            progressed(jni, "spinCount", counter(jni, "spinCount")) ? "yes" : "no");
        JNIEnv *l4[1] = {spin};
        jint r4[1] = {77};
        jvmpi->ResumeThreadList(1, l4, r4);
        say("resumelist not suspended results=%s", fmt_results(r4, 1, buf, sizeof buf));
        /* The same thread twice in one list. */
        JNIEnv *l6[2] = {spin, spin};
        jint r6[2] = {77, 77}, r7[2] = {77, 77};
        jvmpi->SuspendThreadList(2, l6, r6);
        c1 = counter(jni, "spinCount");
        msleep(100);
        c2 = counter(jni, "spinCount");
        jvmpi->ResumeThreadList(2, l6, r7);
        int moved = progressed(jni, "spinCount", counter(jni, "spinCount"));
        say("duplicate list suspend=%s resume=%s progress_while_suspended=%lld progress_after=%s",
            fmt_results(r6, 2, buf, sizeof buf), fmt_results(r7, 2, buf + 64, sizeof buf - 64),
            (long long)(c2 - c1), moved ? "yes" : "no");
        jint r5[2] = {77, 77};
        jvmpi->SuspendThreadList(0, l2, r5);
        jvmpi->SuspendThreadList(2, NULL, r5);
        jvmpi->SuspendThreadList(2, l2, NULL);
        jvmpi->ResumeThreadList(0, l2, r5);
        jvmpi->ResumeThreadList(2, NULL, r5);
        jvmpi->ResumeThreadList(2, l2, NULL);
        say("empty lists: results untouched=%s spin still runs=%s",
            r5[0] == 77 && r5[1] == 77 ? "yes" : "no",
            progressed(jni, "spinCount", counter(jni, "spinCount")) ? "yes" : "no");
    }

    /* 4. ThreadHasRun */
    if (spin != NULL && waiting != NULL && sleeping != NULL) {
        jboolean a = has_run(jni, spin, "spinCount"), b = has_run(jni, sleeping, NULL);
        jboolean c = has_run(jni, waiting, NULL);
        say("hasrun st-spin=%d st-sleeping=%d st-waiting=%d NULL=%d self=%d garbage=%d", a, b, c,
            jvmpi->ThreadHasRun(NULL), jvmpi->ThreadHasRun(self), jvmpi->ThreadHasRun(GARBAGE));
    }

    /* Everybody must run again: statuses after all of this. */
    for (size_t i = 0; i + 1 < sizeof names / sizeof names[0]; i++) {
        JNIEnv *e = env_of(names[i]);
        if (e != NULL)
            say("final status %s=0x%x", names[i], (unsigned)jvmpi->GetThreadStatus(e));
    }
    int ps = progressed(jni, "spinCount", counter(jni, "spinCount"));
    int pi = progressed(jni, "intrCount", counter(jni, "intrCount"));
    say("final progress st-spin=%s st-intr=%s", ps ? "yes" : "no", pi ? "yes" : "no");

    jvmpi->RawMonitorEnter(go_mon);
    done = 1;
    jvmpi->RawMonitorNotifyAll(go_mon);
    jvmpi->RawMonitorExit(go_mon);
}

static void on_class_load(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        return;
    const char *cn = S(ev->u.class_load.class_name);
    if (strcmp(cn, "IdentStatus") == 0)
        status_class_id = ev->u.class_load.class_id;
    if (strcmp(cn, "IdentStatus$Go") != 0)
        return;
    JNIEnv *jni = current_env();
    jvmpi->DisableGC();
    jobject c = jvmpi->jobjectID2jobject(status_class_id);
    jvmpi->EnableGC();
    status_class = c ? (jclass)(*jni)->NewGlobalRef(jni, c) : NULL;
    if (status_class == NULL) {
        FAIL("cannot get IdentStatus from its class id %p", (void *)status_class_id);
        return;
    }
    jvmpi->RawMonitorEnter(go_mon);
    go = 1;
    jvmpi->RawMonitorNotifyAll(go_mon);
    for (int i = 0; i < 300 && !done; i++)
        jvmpi->RawMonitorWait(go_mon, 100);
    int d = done;
    jvmpi->RawMonitorExit(go_mon);
    say("Go handler: tester %s", d ? "done" : "did not finish in 30 s");
    if (!d)
        FAIL("tester did not finish");
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
        jint rc = jvmpi->CreateSystemThread("ident-status-tester", JVMPI_NORMAL_PRIORITY, tester);
        say("JVM_INIT_DONE tester rc=%d", (int)rc);
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
    lock = jvmpi->RawMonitorCreate("_ident_status_lock");
    go_mon = jvmpi->RawMonitorCreate("_ident_status_go");
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    say("loaded");
    return JNI_OK;
}
