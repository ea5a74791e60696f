/* mon_dump.c — a JDK 1.3-style JVMPI agent that takes a MONITOR_DUMP of a known monitor
 * state (tests/it/monitors/mon_dump.sh, workload tests/java/MonDump.java).
 *
 * At JVM_INIT_DONE it starts the system thread md-control, which
 *   1. creates the raw monitor "md_raw_lock" (R) and three system threads: md-raw-waiter
 *      enters R and calls RawMonitorWait(R, 0); md-raw-owner then enters R and holds it
 *      (sleeping); md-raw-enterer then blocks in RawMonitorEnter(R);
 *   2. waits for the system property jvmpishim.md.ready (set by MonDump when its threads
 *      md-A, md-B, md-C are in place), reading it through JNI;
 *   3. calls RequestEvent(MONITOR_DUMP, NULL); the handler writes the buffer (begin..end)
 *      byte for byte to ./monitor.dump, walks it and prints every record (for RAW records
 *      the name string read through the char* in the dump), and prints num_traces, each
 *      trace's env (named from THREAD_START) and threads_status[i];
 *   4. names the class of each JAVA record's object (RequestEvent(OBJECT_ALLOC) with GC
 *      disabled, class id -> CLASS_LOAD name);
 *   5. releases its threads and sets jvmpishim.md.done=ok.
 * Output lines start with "md: "; violations are "md: FAIL ...".
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define KIT_NAME "md"
#define KIT_LINE 4096
#include "kit/out.h"
#include "kit/checked.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int wait_flag(volatile int *flag, int ms)
{
    long long end = now_ms() + ms;
    while (!__sync_fetch_and_add(flag, 0)) {
        if (now_ms() > end)
            return 0;
        usleep(1000);
    }
    return 1;
}

/* ---- threads and classes ------------------------------------------------------------- */

#define MAXTHR 1024
static struct { JNIEnv *env; char name[64]; int ended; } thr[MAXTHR];
static int nthr;

static const char *thread_name(JNIEnv *env)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = nthr - 1; i >= 0; i--)
        if (thr[i].env == env && !thr[i].ended) {
            n = thr[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

struct cls { jobjectID id; char *name; };
static struct cls *classes;
static int ncls, capcls;

static const char *class_name(jobjectID id)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = ncls - 1; i >= 0; i--)
        if (classes[i].id == id) {
            n = classes[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

static __thread jobjectID tl_req_obj, tl_req_class;
static __thread int tl_req_got;

static jobjectID class_of(jobjectID obj)
{
    tl_req_obj = obj;
    tl_req_got = 0;
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj);
    jvmpi->EnableGC();
    if (rc != JVMPI_SUCCESS || !tl_req_got) {
        FAIL("RequestEvent(OBJECT_ALLOC, %p) rc=%d delivered=%d", (void *)obj, (int)rc, tl_req_got);
        return NULL;
    }
    return tl_req_class;
}

/* ---- helper system threads ----------------------------------------------------------- */

struct job {
    void (*fn)(struct job *);
    volatile int started, done;
    JNIEnv *env;
};
static struct job *volatile g_pending;

static void trampoline(void *arg)
{
    (void)arg;
    struct job *j = g_pending;
    g_pending = NULL;
    j->env = current_env();
    __sync_synchronize();
    j->started = 1;
    j->fn(j);
    __sync_synchronize();
    j->done = 1;
}

static struct job *spawn(const char *name, void (*fn)(struct job *))
{
    struct job *j = calloc(1, sizeof *j);
    j->fn = fn;
    g_pending = j;
    __sync_synchronize();
    if (jvmpi->CreateSystemThread((char *)name, JVMPI_NORMAL_PRIORITY, trampoline) != JNI_OK) {
        FAIL("CreateSystemThread(%s) failed", name);
        return j;
    }
    if (!wait_flag(&j->started, 5000))
        FAIL("system thread %s did not start", name);
    else
        say("agent thread %s env=%p", name, (void *)j->env);
    return j;
}

static JVMPI_RawMonitor R;
static volatile int release_raw, waiter_in, owner_in;

static void raw_waiter(struct job *j)
{
    (void)j;
    jvmpi->RawMonitorEnter(R);
    waiter_in = 1;
    while (!release_raw)
        jvmpi->RawMonitorWait(R, 0);
    jvmpi->RawMonitorExit(R);
}

static void raw_owner(struct job *j)
{
    (void)j;
    jvmpi->RawMonitorEnter(R);
    owner_in = 1;
    while (!release_raw)
        usleep(2000);
    jvmpi->RawMonitorNotifyAll(R);
    jvmpi->RawMonitorExit(R);
}

static void raw_enterer(struct job *j)
{
    (void)j;
    jvmpi->RawMonitorEnter(R);
    jvmpi->RawMonitorExit(R);
}

/* ---- the dump ------------------------------------------------------------------------ */

#define MAXJAVA 256
static jobjectID java_objs[MAXJAVA];
static int njava;
static int g_dump_events;

static uint32_t rd_u4(const unsigned char **p)
{
    const unsigned char *q = *p;
    *p += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

static void *rd_ptr(const unsigned char **p)
{
    void *v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

/* "name(env) name(env)..." for n envs at *p */
static void env_list(const unsigned char **p, uint32_t n, char *out, size_t len)
{
    out[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        JNIEnv *e = rd_ptr(p);
        size_t k = strlen(out);
        snprintf(out + k, len - k, "%s%s(%p)", i ? "," : "", thread_name(e), (void *)e);
    }
}

static void on_monitor_dump(JVMPI_Event *ev)
{
    g_dump_events++;
    const unsigned char *p = (const unsigned char *)ev->u.monitor_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.monitor_dump.end;
    say("MONITOR_DUMP requested=%d env=%s bytes=%ld num_traces=%d",
        (ev->event_type & JVMPI_REQUESTED_EVENT) != 0, thread_name(ev->env_id),
        (long)(end - p), (int)ev->u.monitor_dump.num_traces);
    FILE *f = fopen("monitor.dump", "wb");
    if (f == NULL || fwrite(p, 1, (size_t)(end - p), f) != (size_t)(end - p))
        FAIL("writing monitor.dump");
    if (f)
        fclose(f);
#define NEED(n)                                                                     \
    do {                                                                            \
        if ((size_t)(end - p) < (size_t)(n)) {                                      \
            FAIL("monitor dump: truncated record at offset %ld", (long)(p - begin)); \
            goto out;                                                               \
        }                                                                           \
    } while (0)
    const unsigned char *begin = p;
    const size_t P = sizeof(void *);
    while (p < end) {
        int type = *p++;
        char owner_s[128], enter_s[2048], wait_s[2048];
        if (type == JVMPI_MONITOR_JAVA || type == JVMPI_MONITOR_RAW) {
            jobjectID obj = NULL;
            const char *name = NULL;
            JVMPI_RawMonitor id = NULL;
            if (type == JVMPI_MONITOR_JAVA) {
                NEED(2 * P + 8);
                obj = rd_ptr(&p);
            } else {
                NEED(3 * P + 8);
                name = rd_ptr(&p);
                id = rd_ptr(&p);
            }
            JNIEnv *owner = rd_ptr(&p);
            uint32_t entry = rd_u4(&p), n = rd_u4(&p);
            NEED((size_t)n * P + 4);
            env_list(&p, n, enter_s, sizeof enter_s);
            uint32_t m = rd_u4(&p);
            NEED((size_t)m * P);
            env_list(&p, m, wait_s, sizeof wait_s);
            snprintf(owner_s, sizeof owner_s, "%s(%p)", owner ? thread_name(owner) : "-", (void *)owner);
            if (type == JVMPI_MONITOR_JAVA) {
                say("rec JAVA object=%p owner=%s entry=%u enter=%u[%s] notify=%u[%s]", (void *)obj,
                    owner_s, entry, n, enter_s, m, wait_s);
                if (njava < MAXJAVA)
                    java_objs[njava++] = obj;
            } else {
                say("rec RAW name_ptr=%p name=%s id=%p owner=%s entry=%u enter=%u[%s] notify=%u[%s]",
                    (const void *)name, name ? name : "(null)", (void *)id, owner_s, entry, n,
                    enter_s, m, wait_s);
            }
        } else {
            FAIL("monitor dump: record type %d at offset %ld", type, (long)(p - 1 - begin));
            break;
        }
    }
out:
#undef NEED
    if (p != end)
        FAIL("monitor dump: walked past the end (%ld)", (long)(p - end));
    int live = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nthr; i++)
        live += !thr[i].ended;
    pthread_mutex_unlock(&mu);
    say("num_traces=%d live_threads=%d traces=%s status=%s", (int)ev->u.monitor_dump.num_traces,
        live, ev->u.monitor_dump.traces ? "set" : "NULL",
        ev->u.monitor_dump.threads_status ? "set" : "NULL");
    for (jint i = 0; i < ev->u.monitor_dump.num_traces; i++) {
        JVMPI_CallTrace *t = ev->u.monitor_dump.traces ? &ev->u.monitor_dump.traces[i] : NULL;
        JNIEnv *e = t ? t->env_id : NULL;
        say("trace i=%d env=%p name=%s frames=%d status=%d", (int)i, (void *)e, thread_name(e),
            t ? (int)t->num_frames : -1,
            ev->u.monitor_dump.threads_status ? (int)ev->u.monitor_dump.threads_status[i] : -1);
    }
}

static void control(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    say("control env=%p", (void *)jni);
    char name[32];
    snprintf(name, sizeof name, "md_raw_lock");
    R = jvmpi->RawMonitorCreate(name);
    say("raw created id=%p agent_name_buf=%p", (void *)R, (void *)name);
    memset(name, 'X', strlen(name)); /* the VM must have copied it */

    struct job *w = spawn("md-raw-waiter", raw_waiter);
    if (!wait_flag(&waiter_in, 5000))
        FAIL("md-raw-waiter did not enter R");
    usleep(50 * 1000); /* into RawMonitorWait */
    struct job *o = spawn("md-raw-owner", raw_owner);
    if (!wait_flag(&owner_in, 5000))
        FAIL("md-raw-owner did not enter R");
    struct job *e = spawn("md-raw-enterer", raw_enterer);
    long long end = now_ms() + 5000;
    jint st = 0, stw = 0;
    while ((st = jvmpi->GetThreadStatus(e->env)) != JVMPI_THREAD_MONITOR_WAIT && now_ms() < end)
        usleep(2000);
    stw = jvmpi->GetThreadStatus(w->env);
    say("raw threads ready: enterer status=%d waiter status=%d", (int)st, (int)stw);

    char *ready = NULL;
    end = now_ms() + 30000;
    while ((ready = get_property(jni, "jvmpishim.md.ready")) == NULL && now_ms() < end)
        usleep(10 * 1000);
    if (ready == NULL)
        FAIL("jvmpishim.md.ready never set");
    free(ready);
    usleep(200 * 1000);

    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    say("RequestEvent(MONITOR_DUMP) rc=%d events=%d", (int)rc, g_dump_events);
    for (int i = 0; i < njava; i++) {
        jobjectID c = class_of(java_objs[i]);
        say("java monitor object=%p class=%s", (void *)java_objs[i], c ? class_name(c) : "?");
    }

    release_raw = 1;
    __sync_synchronize();
    int joined = wait_flag(&w->done, 5000) & wait_flag(&o->done, 5000) & wait_flag(&e->done, 5000);
    say("raw threads finished=%s", joined ? "yes" : "no");
    jvmpi->RawMonitorDestroy(R);
    say("done fails=%d", g_fails);
    set_property(jni, "jvmpishim.md.done", "ok");
}

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (t) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)";
        pthread_mutex_lock(&mu);
        if (nthr < MAXTHR) {
            thr[nthr].env = ev->u.thread_start.thread_env_id;
            snprintf(thr[nthr].name, sizeof thr[nthr].name, "%s", n);
            nthr++;
        }
        pthread_mutex_unlock(&mu);
        if (strncmp(n, "md-", 3) == 0 || strcmp(n, "main") == 0)
            say("thread name=%s env=%p", n, (void *)ev->u.thread_start.thread_env_id);
        break;
    }
    case JVMPI_EVENT_THREAD_END:
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nthr; i++)
            if (thr[i].env == ev->env_id && !thr[i].ended) {
                thr[i].ended = 1;
                break;
            }
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&mu);
        if (ncls == capcls) {
            capcls = capcls ? capcls * 2 : 1024;
            classes = realloc(classes, sizeof *classes * (size_t)capcls);
        }
        classes[ncls].id = ev->u.class_load.class_id;
        classes[ncls].name = strdup(ev->u.class_load.class_name ? ev->u.class_load.class_name : "");
        ncls++;
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT) || ev->u.obj_alloc.obj_id != tl_req_obj) {
            FAIL("unexpected OBJECT_ALLOC for %p", (void *)ev->u.obj_alloc.obj_id);
            break;
        }
        tl_req_class = ev->u.obj_alloc.class_id;
        tl_req_got = 1;
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        on_monitor_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("md-control", JVMPI_NORMAL_PRIORITY, control) != JNI_OK)
            FAIL("CreateSystemThread(md-control) failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("JVM_SHUT_DOWN fails=%d", g_fails);
        break;
    default:
        FAIL("event type %d was never enabled", t);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    return JNI_OK;
}
