/* rawmon.c — a JDK 1.3-style JVMPI agent that exercises raw monitors and thread basics.
 *
 * All checks run from the JVM_INIT_DONE handler: on the VM's main thread inside the handler
 * (default), or, with the agent option "async", on a system thread started by the handler,
 * which sets the Java system property jvmpishim.test.done=rawmon via JNI when it is finished
 * (the WaitProp workload waits for it). Helper system threads are started with
 * CreateSystemThread. Every observation is one line "rawmon: ..." on stdout, flushed;
 * violations are "rawmon: FAIL ...". The last line of the checks is "rawmon: done".
 *
 * Checked: CreateSystemThread (JNI_ERR before INIT_DONE and for priority 7; priorities
 * 1, 5, 10 run f(NULL) on a new daemon Java thread of that name and priority), raw monitor
 * names copied, RAW_MONITOR_CONTENDED_ENTER/ENTERED/EXIT under real contention (right name,
 * id, thread), none for a '_'-prefixed name, reentrancy, Wait with a timeout, Wait(0) until
 * NotifyAll, NULL and destroyed monitors ignored, Exit by a non-owner ignored, thread-local
 * storage, GetCurrentThreadCpuTime, and that a thread blocked in RawMonitorEnter for a
 * second uses next to no CPU (it sleeps, not spins).
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "rawmon"
#include "kit/out.h"
#include "kit/checked.h"

static int opt_async;

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Poll *flag until it is at least want, for up to ms milliseconds. */
static int wait_flag(volatile int *flag, int want, int ms)
{
    long long end = now_ms() + ms;
    while (__sync_fetch_and_add(flag, 0) < want) {
        if (now_ms() > end)
            return 0;
        usleep(200);
    }
    return 1;
}
static void set_flag(volatile int *flag, int v)
{
    __sync_synchronize();
    *flag = v;
    __sync_synchronize();
}

/* ---- monitors known to the event handler ---------------------------------------------- */

enum { EV_ENTER, EV_ENTERED, EV_EXIT };
#define MAXMON 16
static struct known {
    JVMPI_RawMonitor id;
    char name[32];
    const char *agent_buf;       /* the buffer the agent passed to RawMonitorCreate */
    volatile int count[3];
    JNIEnv *volatile enter_env;  /* expected thread of ENTER/ENTERED (NULL = any) */
    JNIEnv *volatile exit_env;   /* expected thread of EXIT (NULL = any) */
} known[MAXMON];
static volatile int nknown;
static volatile int g_unknown_events;

static struct known *remember(JVMPI_RawMonitor id, const char *name, const char *buf)
{
    struct known *k = &known[nknown];
    k->id = id;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->agent_buf = buf;
    __sync_synchronize();
    nknown++;
    return k;
}

static JVMPI_RawMonitor create(const char *name, struct known **kp)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%s", name);
    JVMPI_RawMonitor m = jvmpi->RawMonitorCreate(buf);
    if (m == NULL)
        FAIL("RawMonitorCreate(%s) returned NULL", name);
    struct known *k = remember(m, name, buf);
    /* The VM must have copied the name: scribble over ours. */
    memset(buf, 'X', strlen(buf));
    if (kp != NULL)
        *kp = k;
    return m;
}

static const char *ev_name(int i)
{
    return i == EV_ENTER ? "RAW_MONITOR_CONTENDED_ENTER"
         : i == EV_ENTERED ? "RAW_MONITOR_CONTENDED_ENTERED" : "RAW_MONITOR_CONTENDED_EXIT";
}

static void on_raw_monitor(int which, JVMPI_Event *ev)
{
    struct known *k = NULL;
    for (int i = 0; i < nknown; i++)
        if (known[i].id == ev->u.raw_monitor.id)
            k = &known[i];
    const char *name = ev->u.raw_monitor.name;
    if (k == NULL) {
        __sync_add_and_fetch(&g_unknown_events, 1);
        FAIL("%s for unknown monitor id %p name %s", ev_name(which),
             (void *)ev->u.raw_monitor.id, name ? name : "(null)");
        return;
    }
    int n = __sync_add_and_fetch(&k->count[which], 1);
    if (name == NULL || strcmp(name, k->name) != 0)
        FAIL("%s for monitor %s carries name '%s'", ev_name(which), k->name,
             name ? name : "(null)");
    if (name == k->agent_buf)
        FAIL("%s for monitor %s carries the agent's own name buffer", ev_name(which), k->name);
    if (k->name[0] == '_')
        FAIL("%s posted for monitor %s whose name starts with '_'", ev_name(which), k->name);
    JNIEnv *want = which == EV_EXIT ? k->exit_env : k->enter_env;
    if (want != NULL && ev->env_id != want)
        FAIL("%s for %s on env %p, expected %p", ev_name(which), k->name,
             (void *)ev->env_id, (void *)want);
    if (which == EV_ENTERED && n > k->count[EV_ENTER])
        FAIL("%s for %s before its CONTENDED_ENTER (%d entered, %d enter)", ev_name(which),
             k->name, n, k->count[EV_ENTER]);
}

/* ---- helper threads ------------------------------------------------------------------ */

struct job {
    void (*fn)(void *);
    void *arg;
    volatile int started;
    volatile int done;
    JNIEnv *env;
    pthread_t self;
};
static struct job *volatile g_pending;
static volatile int g_nonnull_arg;

static void trampoline(void *arg)
{
    struct job *j = g_pending;
    if (arg != NULL) {
        __sync_add_and_fetch(&g_nonnull_arg, 1);
        FAIL("CreateSystemThread function got arg %p, expected NULL", arg);
    }
    g_pending = NULL;
    j->env = current_env();
    j->self = pthread_self();
    if (j->env == NULL)
        FAIL("a CreateSystemThread thread has no JNIEnv (GetEnv failed)");
    set_flag(&j->started, 1);
    j->fn(j->arg);
    set_flag(&j->done, 1);
}

/* Start fn(arg) on a new system thread and wait until it runs. Jobs are never freed (a few
 * dozen bytes), so a thread that outlives a failed check touches no freed memory. */
static struct job *spawn(const char *name, jint prio, void (*fn)(void *), void *arg)
{
    struct job *j = calloc(1, sizeof *j);
    j->fn = fn;
    j->arg = arg;
    g_pending = j;
    __sync_synchronize();
    jint rc = jvmpi->CreateSystemThread((char *)name, prio, trampoline);
    if (rc != JNI_OK) {
        g_pending = NULL;
        FAIL("CreateSystemThread(%s, %d) returned %d", name, (int)prio, (int)rc);
        return NULL;
    }
    if (!wait_flag(&j->started, 1, 5000)) {
        FAIL("system thread %s did not start within 5 s", name);
        return NULL;
    }
    return j;
}

static int join(struct job *j, int ms)
{
    return j != NULL && wait_flag(&j->done, 1, ms);
}

/* ---- CreateSystemThread ------------------------------------------------------------- */

static volatile int g_onload_thread_ran;
static void onload_thread(void *arg)
{
    (void)arg;
    set_flag(&g_onload_thread_ran, 1);
}

struct prio_result {
    jint prio;
    char name[64];
    jint java_prio;
    int daemon;
};

static void prio_fn(void *arg)
{
    struct prio_result *r = arg;
    JNIEnv *jni = current_env();
    if (jni == NULL)
        return;
    if ((*jni)->PushLocalFrame(jni, 16) != 0)
        return;
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID cur = tc ? (*jni)->GetStaticMethodID(jni, tc, "currentThread", "()Ljava/lang/Thread;") : NULL;
    jobject t = cur ? (*jni)->CallStaticObjectMethod(jni, tc, cur) : NULL;
    if (t != NULL) {
        jmethodID gn = (*jni)->GetMethodID(jni, tc, "getName", "()Ljava/lang/String;");
        jmethodID gp = (*jni)->GetMethodID(jni, tc, "getPriority", "()I");
        jmethodID id = (*jni)->GetMethodID(jni, tc, "isDaemon", "()Z");
        jstring s = (*jni)->CallObjectMethod(jni, t, gn);
        if (s != NULL) {
            const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
            if (c != NULL) {
                snprintf(r->name, sizeof r->name, "%s", c);
                (*jni)->ReleaseStringUTFChars(jni, s, c);
            }
        }
        r->java_prio = (*jni)->CallIntMethod(jni, t, gp);
        r->daemon = (*jni)->CallBooleanMethod(jni, t, id);
    }
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionDescribe(jni);
        (*jni)->ExceptionClear(jni);
        FAIL("JNI exception in a system thread");
    }
    (*jni)->PopLocalFrame(jni, NULL);
}

static void never_fn(void *arg)
{
    (void)arg;
    FAIL("the thread of a refused CreateSystemThread ran");
}

static void check_system_threads(JNIEnv *main_env)
{
    jint rc = jvmpi->CreateSystemThread("prio7", 7, never_fn);
    say("create_system_thread prio=7 rc=%d", (int)rc);
    if (rc != JNI_ERR)
        FAIL("CreateSystemThread with priority 7 returned %d, expected JNI_ERR", (int)rc);

    static const jint prios[] = {JVMPI_MINIMUM_PRIORITY, JVMPI_NORMAL_PRIORITY,
                                 JVMPI_MAXIMUM_PRIORITY};
    for (size_t i = 0; i < 3; i++) {
        struct prio_result r;
        memset(&r, 0, sizeof r);
        r.prio = prios[i];
        char name[32];
        snprintf(name, sizeof name, "rawmon-prio%d", (int)prios[i]);
        int nonnull_before = g_nonnull_arg;
        struct job *j = spawn(name, prios[i], prio_fn, &r);
        if (j == NULL)
            continue;
        if (!join(j, 5000)) {
            FAIL("system thread %s did not finish", name);
            continue;
        }
        int newthread = j->env != main_env && !pthread_equal(j->self, pthread_self());
        say("create_system_thread prio=%d rc=0 ran=yes arg=%s newthread=%s name=%s "
            "java_priority=%d daemon=%s",
            (int)prios[i], g_nonnull_arg == nonnull_before ? "NULL" : "non-NULL",
            newthread ? "yes" : "no", r.name, (int)r.java_prio, r.daemon ? "yes" : "no");
        if (!newthread)
            FAIL("CreateSystemThread(%s) ran f on the calling thread", name);
        if (strcmp(r.name, name) != 0)
            FAIL("system thread is named '%s', expected '%s'", r.name, name);
        if (r.java_prio != prios[i])
            FAIL("system thread %s has Java priority %d, expected %d", name, (int)r.java_prio,
                 (int)prios[i]);
        if (!r.daemon)
            FAIL("system thread %s is not a daemon thread", name);
    }
}

/* ---- contention --------------------------------------------------------------------- */

struct contention {
    JVMPI_RawMonitor m;
    int rounds;
    volatile int a_holding;      /* round number A holds the monitor for (1-based) */
    volatile int b_done;         /* last round B finished */
    volatile int blocked;        /* rounds in which B's Enter blocked >= 10 ms */
    struct known *k;
};

static void holder_a(void *arg)
{
    struct contention *c = arg;
    c->k->exit_env = current_env();
    for (int r = 1; r <= c->rounds; r++) {
        jvmpi->RawMonitorEnter(c->m);
        set_flag(&c->a_holding, r);
        sleep_ms(20);
        jvmpi->RawMonitorExit(c->m);
        if (!wait_flag(&c->b_done, r, 5000)) {
            FAIL("contention on %s: thread B stuck in round %d", c->k->name, r);
            return;
        }
    }
}

static void contender_b(void *arg)
{
    struct contention *c = arg;
    c->k->enter_env = current_env();
    for (int r = 1; r <= c->rounds; r++) {
        if (!wait_flag(&c->a_holding, r, 5000)) {
            FAIL("contention on %s: thread A stuck in round %d", c->k->name, r);
            return;
        }
        long long t0 = now_ms();
        jvmpi->RawMonitorEnter(c->m);
        if (now_ms() - t0 >= 10)
            c->blocked++;
        jvmpi->RawMonitorExit(c->m);
        set_flag(&c->b_done, r);
    }
}

static void contend(const char *name, int rounds, int expect_events)
{
    struct contention *cp = calloc(1, sizeof *cp);   /* never freed: threads may outlive a failed check */
    cp->rounds = rounds;
    cp->m = create(name, &cp->k);
    struct job *a = spawn("rawmon-holder", JVMPI_NORMAL_PRIORITY, holder_a, cp);
    struct job *b = spawn("rawmon-contender", JVMPI_NORMAL_PRIORITY, contender_b, cp);
    if (!join(a, 30000) || !join(b, 5000)) {
        FAIL("contention on %s did not finish", name);
        return;
    }
    struct known *k = cp->k;
    say("contention %s rounds=%d blocked=%d enter=%d entered=%d exit=%d", name, rounds,
        cp->blocked, k->count[EV_ENTER], k->count[EV_ENTERED], k->count[EV_EXIT]);
    if (expect_events) {
        if (k->count[EV_ENTER] < 1)
            FAIL("no RAW_MONITOR_CONTENDED_ENTER for %s", name);
        if (k->count[EV_ENTER] != k->count[EV_ENTERED])
            FAIL("%s: %d CONTENDED_ENTER but %d CONTENDED_ENTERED", name, k->count[EV_ENTER],
                 k->count[EV_ENTERED]);
        if (k->count[EV_ENTER] < cp->blocked)
            FAIL("%s: Enter blocked in %d rounds but only %d CONTENDED_ENTER", name,
                 cp->blocked, k->count[EV_ENTER]);
        if (k->count[EV_EXIT] < 1)
            FAIL("no RAW_MONITOR_CONTENDED_EXIT for %s", name);
        if (cp->blocked < 1)
            say("note: no round of %s blocked >= 10 ms (machine very busy?)", name);
    } else {
        if (k->count[EV_ENTER] + k->count[EV_ENTERED] + k->count[EV_EXIT] != 0)
            FAIL("contention events posted for %s", name);
    }
}

/* ---- reentrancy, non-owner exit ----------------------------------------------------- */

struct enter_job {
    JVMPI_RawMonitor m;
    volatile int entered;
};
static void enter_and_exit(void *arg)
{
    struct enter_job *e = arg;
    jvmpi->RawMonitorEnter(e->m);
    set_flag(&e->entered, 1);
    jvmpi->RawMonitorExit(e->m);
}
static void exit_only(void *arg)
{
    jvmpi->RawMonitorExit(((struct enter_job *)arg)->m);
}

static void check_reentrancy(void)
{
    struct enter_job *e = calloc(1, sizeof *e);
    e->m = create("reent", NULL);
    jvmpi->RawMonitorEnter(e->m);
    jvmpi->RawMonitorEnter(e->m);
    jvmpi->RawMonitorExit(e->m);
    spawn("rawmon-reent", JVMPI_NORMAL_PRIORITY, enter_and_exit, e);
    sleep_ms(100);
    int early = e->entered;
    jvmpi->RawMonitorExit(e->m);
    int later = wait_flag(&e->entered, 1, 3000);
    say("reentrancy entered_while_held_once=%s entered_after_release=%s", early ? "yes" : "no",
        later ? "yes" : "no");
    if (early)
        FAIL("another thread entered a monitor entered twice and exited once");
    if (!later)
        FAIL("another thread could not enter after two Enter and two Exit");
}

static void check_nonowner_exit(void)
{
    struct enter_job *e = calloc(1, sizeof *e);
    e->m = create("owned", NULL);
    jvmpi->RawMonitorEnter(e->m);
    struct job *x = spawn("rawmon-nonowner", JVMPI_NORMAL_PRIORITY, exit_only, e);
    if (!join(x, 3000))
        FAIL("Exit by a non-owner did not return");
    spawn("rawmon-enterer", JVMPI_NORMAL_PRIORITY, enter_and_exit, e);
    sleep_ms(100);
    int early = e->entered;
    jvmpi->RawMonitorExit(e->m);
    int later = wait_flag(&e->entered, 1, 3000);
    say("nonowner_exit entered_while_owned=%s entered_after_owner_exit=%s", early ? "yes" : "no",
        later ? "yes" : "no");
    if (early)
        FAIL("RawMonitorExit by a non-owner released the monitor");
    if (!later)
        FAIL("a thread could not enter after the owner exited");
}

/* ---- wait / notify ------------------------------------------------------------------ */

struct notify_job {
    JVMPI_RawMonitor m;
    volatile int notified;
};
static void notifier(void *arg)
{
    struct notify_job *n = arg;
    sleep_ms(150);
    jvmpi->RawMonitorEnter(n->m);
    set_flag(&n->notified, 1);
    jvmpi->RawMonitorNotifyAll(n->m);
    jvmpi->RawMonitorExit(n->m);
}

static void check_wait(void)
{
    JVMPI_RawMonitor m = create("waiter", NULL);
    jvmpi->RawMonitorEnter(m);
    long long t0 = now_ms();
    jvmpi->RawMonitorWait(m, 100);
    long long el = now_ms() - t0;
    jvmpi->RawMonitorExit(m);
    say("wait ms=100 elapsed=%lld", el);
    if (el < 80 || el > 2000)
        FAIL("RawMonitorWait(m, 100) returned after %lld ms", el);

    struct notify_job *n = calloc(1, sizeof *n);
    n->m = create("notify", NULL);
    jvmpi->RawMonitorEnter(n->m);
    spawn("rawmon-notifier", JVMPI_NORMAL_PRIORITY, notifier, n);
    t0 = now_ms();
    int wakeups = 0;
    while (!n->notified && wakeups < 50) {
        jvmpi->RawMonitorWait(n->m, 0);
        wakeups++;
    }
    el = now_ms() - t0;
    int notified = n->notified;
    jvmpi->RawMonitorExit(n->m);
    say("wait ms=0 notified=%s wakeups=%d elapsed=%lld", notified ? "yes" : "no", wakeups, el);
    if (!notified)
        FAIL("RawMonitorWait(m, 0) kept returning without a NotifyAll (%d times)", wakeups);
    else if (wakeups > 5)
        FAIL("RawMonitorWait(m, 0) returned %d times before the NotifyAll", wakeups);
    if (el < 100)
        FAIL("RawMonitorWait(m, 0) returned after %lld ms, before the NotifyAll at ~150 ms", el);
}

/* ---- bad monitors ------------------------------------------------------------------- */

static void check_bad_monitors(void)
{
    jvmpi->RawMonitorEnter(NULL);
    jvmpi->RawMonitorExit(NULL);
    jvmpi->RawMonitorWait(NULL, 10);
    jvmpi->RawMonitorNotifyAll(NULL);
    jvmpi->RawMonitorDestroy(NULL);
    say("null monitor calls returned");

    char buf[] = "doomed";
    JVMPI_RawMonitor d = jvmpi->RawMonitorCreate(buf);
    jvmpi->RawMonitorDestroy(d);
    jvmpi->RawMonitorEnter(d);
    jvmpi->RawMonitorExit(d);
    jvmpi->RawMonitorWait(d, 10);
    jvmpi->RawMonitorNotifyAll(d);
    jvmpi->RawMonitorDestroy(d);
    say("destroyed monitor calls returned");

    /* The VM still works afterwards. */
    JVMPI_RawMonitor m = jvmpi->RawMonitorCreate("after_bad");
    jvmpi->RawMonitorEnter(m);
    jvmpi->RawMonitorExit(m);
    jvmpi->RawMonitorDestroy(m);
    say("monitor after bad calls ok");
}

/* ---- thread-local storage ----------------------------------------------------------- */

struct tls_job {
    volatile int ready;
    volatile int checked;
    void *initial;
    void *got;
};
static void tls_thread(void *arg)
{
    struct tls_job *t = arg;
    JNIEnv *env = current_env();
    t->initial = jvmpi->GetThreadLocalStorage(env);
    jvmpi->SetThreadLocalStorage(env, (void *)0x5678);
    t->got = jvmpi->GetThreadLocalStorage(env);
    set_flag(&t->ready, 1);
    wait_flag(&t->checked, 1, 5000);
}

static void check_tls(JNIEnv *env)
{
    void *before = jvmpi->GetThreadLocalStorage(env);
    jvmpi->SetThreadLocalStorage(env, (void *)0x1234);
    void *got = jvmpi->GetThreadLocalStorage(env);
    say("tls initial=%p set=0x1234 got=%p", before, got);
    if (got != (void *)0x1234)
        FAIL("GetThreadLocalStorage returned %p after Set(0x1234)", got);

    struct tls_job *t = calloc(1, sizeof *t);
    struct job *j = spawn("rawmon-tls", JVMPI_NORMAL_PRIORITY, tls_thread, t);
    if (j == NULL || !wait_flag(&t->ready, 1, 5000)) {
        FAIL("TLS thread did not run");
    } else {
        void *cross = jvmpi->GetThreadLocalStorage(j->env);
        void *mine = jvmpi->GetThreadLocalStorage(env);
        say("tls other_thread initial=%p got=%p seen_from_main=%p main_still=%p", t->initial,
            t->got, cross, mine);
        if (t->initial != NULL)
            FAIL("a new thread's thread-local storage is %p, expected NULL", t->initial);
        if (t->got != (void *)0x5678)
            FAIL("GetThreadLocalStorage on a second thread returned %p after Set(0x5678)",
                 t->got);
        if (cross != (void *)0x5678)
            FAIL("GetThreadLocalStorage(other env) returned %p, expected 0x5678", cross);
        if (mine != (void *)0x1234)
            FAIL("thread-local storage not per thread: main sees %p after another thread's Set",
                 mine);
    }
    if (t != NULL)
        set_flag(&t->checked, 1);

    jvmpi->SetThreadLocalStorage(NULL, (void *)0x9999);
    void *gnull = jvmpi->GetThreadLocalStorage(NULL);
    void *mine = jvmpi->GetThreadLocalStorage(env);
    say("tls set(NULL) ignored: get(NULL)=%p main=%p", gnull, mine);
    if (gnull != NULL)
        FAIL("GetThreadLocalStorage(NULL) returned %p", gnull);
    if (mine != (void *)0x1234)
        FAIL("SetThreadLocalStorage(NULL, ..) changed the current thread's value to %p", mine);
    jvmpi->SetThreadLocalStorage(env, NULL);
}

/* ---- CPU time ----------------------------------------------------------------------- */

static long long thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Burn 100 ms of this thread's CPU (as libc counts it, so a loaded machine only makes it take
 * longer), then sleep 100 ms; GetCurrentThreadCpuTime must follow the first and not the
 * second. */
static void check_cpu_time(void)
{
    jlong c0 = jvmpi->GetCurrentThreadCpuTime();
    long long l0 = thread_cpu_ns(), t0 = now_ms();
    volatile unsigned long x = 0;
    while (thread_cpu_ns() - l0 < 100000000LL && now_ms() - t0 < 10000)
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
    (void)x;
    jlong c1 = jvmpi->GetCurrentThreadCpuTime();
    long long l1 = thread_cpu_ns(), wall = now_ms() - t0;
    sleep_ms(100);
    jlong c2 = jvmpi->GetCurrentThreadCpuTime();
    long long busy = (long long)(c1 - c0), slept = (long long)(c2 - c1), libc = l1 - l0;
    say("cpu busy100ms=%lldns (libc %lldns, wall %lldms) sleep100ms=%lldns", busy, libc, wall,
        slept);
    if (c0 <= 0)
        FAIL("GetCurrentThreadCpuTime returned %lld", (long long)c0);
    if (busy < 50000000LL || busy < libc * 8 / 10)
        FAIL("GetCurrentThreadCpuTime grew by %lld ns while the thread used %lld ns of CPU",
             busy, libc);
    if (busy > libc * 12 / 10 + 20000000LL)
        FAIL("GetCurrentThreadCpuTime grew by %lld ns while the thread used only %lld ns of CPU",
             busy, libc);
    if (slept < 0 || slept > 20000000LL)
        FAIL("GetCurrentThreadCpuTime grew by %lld ns across a 100 ms sleep", slept);
}

/* ---- parking: a blocked Enter sleeps --------------------------------------------------- */

/* Two threads block in RawMonitorEnter while this one holds the monitor for a second; each
 * measures the CPU time its Enter took. A contender that spun instead of sleeping would burn
 * most of that second (the shim spins a few microseconds before it sleeps). */
struct park {
    JVMPI_RawMonitor m;
    volatile int started, inside, overlap;
    volatile long long cpu_ns[2], waited_ms[2];
    volatile int next;
};

static void parker(void *arg)
{
    struct park *p = arg;
    int me = __sync_fetch_and_add(&p->next, 1);
    __sync_fetch_and_add(&p->started, 1);
    long long c0 = thread_cpu_ns(), t0 = now_ms();
    jvmpi->RawMonitorEnter(p->m);
    long long c1 = thread_cpu_ns(), t1 = now_ms();
    if (__sync_fetch_and_add(&p->inside, 1) != 0)
        p->overlap = 1;
    sleep_ms(5);
    __sync_fetch_and_sub(&p->inside, 1);
    jvmpi->RawMonitorExit(p->m);
    p->cpu_ns[me] = c1 - c0;
    p->waited_ms[me] = t1 - t0;
}

static void check_park(void)
{
    struct park *p = calloc(1, sizeof *p);  /* never freed: threads may outlive a failed check */
    p->m = create("parking", NULL);
    jvmpi->RawMonitorEnter(p->m);
    struct job *a = spawn("rawmon-park-a", JVMPI_NORMAL_PRIORITY, parker, p);
    struct job *b = spawn("rawmon-park-b", JVMPI_NORMAL_PRIORITY, parker, p);
    if (!wait_flag(&p->started, 2, 10000)) {
        jvmpi->RawMonitorExit(p->m);
        FAIL("parking: the contenders did not start");
        return;
    }
    sleep_ms(1000);
    jvmpi->RawMonitorExit(p->m);
    if (!join(a, 10000) || !join(b, 10000)) {
        FAIL("parking: the contenders did not finish");
        return;
    }
    say("park held=1000ms cpu_a=%lldus cpu_b=%lldus waited_a=%lldms waited_b=%lldms",
        p->cpu_ns[0] / 1000, p->cpu_ns[1] / 1000, p->waited_ms[0], p->waited_ms[1]);
    for (int i = 0; i < 2; i++) {
        if (p->cpu_ns[i] > 50000000LL)
            FAIL("parking: a contender used %lld us of CPU in an Enter blocked for %lld ms",
                 p->cpu_ns[i] / 1000, p->waited_ms[i]);
        if (p->waited_ms[i] < 500)
            FAIL("parking: a contender entered after %lld ms while the owner held 1000 ms",
                 p->waited_ms[i]);
    }
    if (p->overlap)
        FAIL("parking: both contenders were inside at once");
}

/* ---- driver ------------------------------------------------------------------------- */

static void run_all(void)
{
    JNIEnv *env = current_env();
    if (env == NULL) {
        FAIL("the checking thread has no JNIEnv");
        return;
    }
    check_system_threads(env);
    contend("mon_a", 20, 1);
    contend("_silent", 20, 0);
    check_reentrancy();
    check_nonowner_exit();
    check_wait();
    check_bad_monitors();
    check_tls(env);
    check_cpu_time();
    check_park();
    if (g_unknown_events)
        FAIL("%d events for monitors the agent never created", g_unknown_events);
    say("checks finished with %d failures", g_fails);
    say("done");
}

static void async_main(void *arg)
{
    (void)arg;
    run_all();
    /* Tell the WaitProp workload: System.setProperty("jvmpishim.test.done", "rawmon"). */
    JNIEnv *jni = current_env();
    jclass sys = jni ? (*jni)->FindClass(jni, "java/lang/System") : NULL;
    jmethodID sp = sys ? (*jni)->GetStaticMethodID(jni, sys, "setProperty",
                                                   "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;")
                       : NULL;
    if (sp != NULL) {
        jstring k = (*jni)->NewStringUTF(jni, "jvmpishim.test.done");
        jstring v = (*jni)->NewStringUTF(jni, "rawmon");
        (*jni)->CallStaticObjectMethod(jni, sys, sp, k, v);
    }
    if (sp == NULL || (*jni)->ExceptionCheck(jni)) {
        FAIL("could not set jvmpishim.test.done via JNI");
        if (jni != NULL)
            (*jni)->ExceptionClear(jni);
    }
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
        on_raw_monitor(EV_ENTER, ev);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
        on_raw_monitor(EV_ENTERED, ev);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        on_raw_monitor(EV_EXIT, ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("event JVM_INIT_DONE");
        if (g_onload_thread_ran)
            FAIL("the thread created in JVM_OnLoad ran");
        if (opt_async) {
            struct job *j = spawn("rawmon-main", JVMPI_NORMAL_PRIORITY, async_main, NULL);
            say("async checks started %s", j ? "ok" : "FAILED");
        } else {
            run_all();
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        for (int i = 0; i < nknown; i++)
            if (known[i].count[EV_ENTER] + known[i].count[EV_ENTERED] + known[i].count[EV_EXIT])
                say("shutdown events %s enter=%d entered=%d exit=%d", known[i].name,
                    known[i].count[EV_ENTER], known[i].count[EV_ENTERED], known[i].count[EV_EXIT]);
        say("event JVM_SHUT_DOWN");
        break;
    default:
        FAIL("event type %d was never enabled", (int)ev->event_type);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    opt_async = options != NULL && strstr(options, "async") != NULL;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;

    jint rc = jvmpi->CreateSystemThread("rawmon-early", JVMPI_NORMAL_PRIORITY, onload_thread);
    say("onload create_system_thread rc=%d", (int)rc);
    if (rc != JNI_ERR)
        FAIL("CreateSystemThread in JVM_OnLoad returned %d, expected JNI_ERR", (int)rc);

    static const jint ev[] = {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
                              JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
                              JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT,
                              JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        rc = jvmpi->EnableEvent(ev[i], NULL);
        say("enable t=%d rc=%d", (int)ev[i], (int)rc);
        if (rc != JVMPI_SUCCESS)
            FAIL("EnableEvent(%d) returned %d", (int)ev[i], (int)rc);
    }
    say("mode=%s", opt_async ? "async" : "sync");
    return JNI_OK;
}
