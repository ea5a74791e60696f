/* lifecycle.c — a JDK 1.3-style JVMPI agent that observes the life of the VM.
 *
 * Written exactly as a JVMPI agent of that era: jvmpi.h, JVM_OnLoad, GetEnv, NotifyEvent,
 * libc only. One observation per line on stdout, prefixed "lifecycle: ", flushed at once
 * (the VM may end abruptly). Violations it can see itself are printed as
 * "lifecycle: FAIL <what>".
 *
 * In JVM_OnLoad it prints its option string verbatim, checks JNI GetEnv, asks for the JVMPI
 * interface with versions 1, 1_1 and 1_2, and enables JVM_INIT_DONE, JVM_SHUT_DOWN,
 * DATA_DUMP_REQUEST and DATA_RESET_REQUEST. Every event is printed with a sequence number
 * and whether env_id is the JNIEnv of the current thread.
 *
 * Options (comma-separated; unknown tokens ignored, since tests also pass exotic strings):
 *   exit=N        ProfilerExit(N) inside the JVM_INIT_DONE handler
 *   threadexit=N  INIT_DONE starts a system thread that sleeps 200 ms, then ProfilerExit(N)
 *   shutcalls     inside JVM_SHUT_DOWN: DisableEvent, raw monitor calls, CPU time
 *   nodump        INIT_DONE disables DATA_DUMP_REQUEST again (it must then not arrive)
 *   daemon        INIT_DONE starts a system thread that keeps using a raw monitor and
 *                 GetCurrentThreadCpuTime (every ~0.3 ms); SHUT_DOWN frees the state it uses.
 *                 The VM must not let the thread return from a JVMPI call after shutdown.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "lifecycle"
#include "kit/out.h"
#include "kit/jvm.h"

static volatile int g_seq;

static int opt_exit = -1;
static int opt_threadexit = -1;
static int opt_shutcalls;
static int opt_daemon;
static int opt_nodump;

/* daemon mode: g_mon guards g_state, which the SHUT_DOWN handler frees. */
struct daemon_state {
    long counter;
};
static JVMPI_RawMonitor g_mon;
static struct daemon_state *volatile g_state;
static volatile long long g_shutdown_done_ns;   /* when the SHUT_DOWN handler returned
                                                   (monotonic ns; 0 before) */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *event_name(jint t)
{
    switch (t) {
    case JVMPI_EVENT_JVM_INIT_DONE: return "JVM_INIT_DONE";
    case JVMPI_EVENT_JVM_SHUT_DOWN: return "JVM_SHUT_DOWN";
    case JVMPI_EVENT_DATA_DUMP_REQUEST: return "DATA_DUMP_REQUEST";
    case JVMPI_EVENT_DATA_RESET_REQUEST: return "DATA_RESET_REQUEST";
    default: return "UNEXPECTED";
    }
}

/* Parse "name=N" anywhere among the comma-separated tokens. */
static void parse_options(const char *options)
{
    if (options == NULL)
        return;
    char *copy = strdup(options);
    if (copy == NULL)
        return;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "exit=", 5) == 0)
            opt_exit = atoi(tok + 5);
        else if (strncmp(tok, "threadexit=", 11) == 0)
            opt_threadexit = atoi(tok + 11);
        else if (strcmp(tok, "shutcalls") == 0)
            opt_shutcalls = 1;
        else if (strcmp(tok, "daemon") == 0)
            opt_daemon = 1;
        else if (strcmp(tok, "nodump") == 0)
            opt_nodump = 1;
    }
    free(copy);
}

static void exiter(void *arg)
{
    say("exiter thread started arg=%p", arg);
    usleep(200 * 1000);
    say("exiter calling ProfilerExit(%d)", opt_threadexit);
    jvmpi->ProfilerExit(opt_threadexit);
    say("FAIL ProfilerExit(%d) returned on the exiter thread", opt_threadexit);
}

/* A JVMPI call that began clearly after the SHUT_DOWN handler returned must never return:
 * the VM parks such calls (HotSpot's disengage() made every JVMPI function block). The margin
 * covers the few instructions between the handler's last statement and the VM noticing. */
#define AFTER_SHUTDOWN_MARGIN_NS 3000000LL
static void check_after(long long began, const char *fn)
{
    long long done = g_shutdown_done_ns;
    if (done != 0 && began > done + AFTER_SHUTDOWN_MARGIN_NS) {
        say("FAIL daemon touched freed state: %s returned %lld us after JVM_SHUT_DOWN", fn,
            (now_ns() - done) / 1000);
        for (;;)
            pause();
    }
}

static void daemon_loop(void *arg)
{
    (void)arg;
    JVMPI_RawMonitor mon = g_mon;
    long iterations = 0;
    int gone_reported = 0;
    say("daemon thread started");
    for (;;) {
        long long began = now_ns();
        jlong cpu = jvmpi->GetCurrentThreadCpuTime();
        (void)cpu;
        check_after(began, "GetCurrentThreadCpuTime");
        began = now_ns();
        jvmpi->RawMonitorEnter(mon);
        check_after(began, "RawMonitorEnter");
        struct daemon_state *s = g_state;
        if (s != NULL) {
            s->counter++;
        } else if (!gone_reported) {
            /* Entered while the handler was still running: legitimate (HotSpot too). */
            gone_reported = 1;
            say("daemon saw the state gone (entered before the handler returned; not an error)");
        }
        jvmpi->RawMonitorExit(mon);
        if (++iterations == 50)
            say("daemon running (50 iterations)");
        usleep(250);
    }
}

static void on_init_done(void)
{
    if (opt_nodump) {
        jint rc = jvmpi->DisableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL);
        say("nodump DisableEvent(DATA_DUMP_REQUEST) rc=%d", (int)rc);
    }
    if (opt_exit >= 0) {
        say("calling ProfilerExit(%d) in JVM_INIT_DONE", opt_exit);
        jvmpi->ProfilerExit(opt_exit);
        say("FAIL ProfilerExit(%d) returned", opt_exit);
    }
    if (opt_threadexit >= 0) {
        jint rc = jvmpi->CreateSystemThread("exiter", JVMPI_NORMAL_PRIORITY, exiter);
        say("CreateSystemThread(exiter) rc=%d", (int)rc);
    }
    if (opt_daemon) {
        g_mon = jvmpi->RawMonitorCreate("lifecycle_daemon");
        if (g_mon == NULL)
            say("FAIL RawMonitorCreate(lifecycle_daemon) returned NULL");
        g_state = calloc(1, sizeof *g_state);
        jint rc = jvmpi->CreateSystemThread("lifecycle-daemon", JVMPI_NORMAL_PRIORITY, daemon_loop);
        say("CreateSystemThread(lifecycle-daemon) rc=%d", (int)rc);
    }
}

static void on_shut_down(void)
{
    if (opt_shutcalls) {
        jint rc = jvmpi->DisableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL);
        say("shutcalls DisableEvent(DATA_DUMP_REQUEST) rc=%d", (int)rc);
        JVMPI_RawMonitor m = jvmpi->RawMonitorCreate("lifecycle_shut");
        say("shutcalls RawMonitorCreate %s", m != NULL ? "ok" : "NULL");
        if (m != NULL) {
            jvmpi->RawMonitorEnter(m);
            jvmpi->RawMonitorEnter(m);     /* reentrant */
            jvmpi->RawMonitorExit(m);
            jvmpi->RawMonitorExit(m);
            jvmpi->RawMonitorDestroy(m);
            say("shutcalls RawMonitorEnter/Exit/Destroy returned");
        }
        jlong c1 = jvmpi->GetCurrentThreadCpuTime();
        volatile unsigned long x = 0;
        for (unsigned long i = 0; i < 20000000UL; i++)
            x += i;
        (void)x;
        jlong c2 = jvmpi->GetCurrentThreadCpuTime();
        say("shutcalls GetCurrentThreadCpuTime %s (%lld -> %lld ns)",
            (c1 > 0 && c2 > c1) ? "ok" : "bad", (long long)c1, (long long)c2);
        if (!(c1 > 0 && c2 > c1))
            say("FAIL GetCurrentThreadCpuTime inside JVM_SHUT_DOWN: %lld -> %lld",
                (long long)c1, (long long)c2);
        if (rc != JVMPI_SUCCESS)
            say("FAIL DisableEvent inside JVM_SHUT_DOWN returned %d", (int)rc);
        if (m == NULL)
            say("FAIL RawMonitorCreate inside JVM_SHUT_DOWN returned NULL");
        say("shutcalls done");
    }
    if (opt_daemon && g_state != NULL) {
        jvmpi->RawMonitorEnter(g_mon);
        struct daemon_state *s = g_state;
        long n = s->counter;
        g_state = NULL;
        memset(s, 0xdd, sizeof *s);
        free(s);
        /* Released on purpose: the daemon may enter it now; it must never return into agent
         * code once this handler has returned. */
        jvmpi->RawMonitorExit(g_mon);
        say("daemon state freed after %ld iterations", n);
        if (n < 1)
            say("note: the daemon thread had not run yet");
    }
}

static void notify(JVMPI_Event *event)
{
    int seq = __sync_add_and_fetch(&g_seq, 1);
    jint type = event->event_type & ~JVMPI_REQUESTED_EVENT;
    JNIEnv *cur = current_env();
    int match = cur != NULL && cur == event->env_id;
    say("event %s seq=%d env=%p current=%s%s", event_name(type), seq, (void *)event->env_id,
        match ? "yes" : "no", (event->event_type & JVMPI_REQUESTED_EVENT) ? " requested" : "");
    if (!match)
        say("FAIL env_id %p of %s is not the current thread's JNIEnv %p", (void *)event->env_id,
            event_name(type), (void *)cur);
    if (event->event_type & JVMPI_REQUESTED_EVENT)
        say("FAIL %s arrived flagged JVMPI_REQUESTED_EVENT", event_name(type));
    switch (type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        on_shut_down();
        say("JVM_SHUT_DOWN handler returns");
        if (opt_daemon)
            g_shutdown_done_ns = now_ns();   /* the last thing the handler does */
        __sync_synchronize();
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        if (opt_nodump)
            say("FAIL DATA_DUMP_REQUEST delivered after DisableEvent");
        break;
    case JVMPI_EVENT_DATA_RESET_REQUEST:
        break;
    default:
        say("FAIL event type %d was never enabled", (int)event->event_type);
        break;
    }
}

static const struct {
    const char *name;
    jint version;
} versions[] = {
    {"JVMPI_VERSION_1", JVMPI_VERSION_1},
    {"JVMPI_VERSION_1_1", JVMPI_VERSION_1_1},
    {"JVMPI_VERSION_1_2", JVMPI_VERSION_1_2},
};

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    g_jvm = jvm;
    if (options == NULL)
        say("options=NULL");
    else
        say("options=[%s]", options);
    parse_options(options);

    JNIEnv *jni = NULL;
    jint rc = (*jvm)->GetEnv(jvm, (void **)&jni, JNI_VERSION_1_2);
    say("jni_getenv=%d", (int)rc);
    if (rc != JNI_OK || jni == NULL) {
        say("FAIL GetEnv(JNI_VERSION_1_2) in JVM_OnLoad returned %d", (int)rc);
    } else {
        jclass c = (*jni)->FindClass(jni, "java/lang/String");
        say("findclass java/lang/String %s", c != NULL ? "ok" : "NULL");
        if (c == NULL)
            say("FAIL FindClass(java/lang/String) in JVM_OnLoad");
        else
            (*jni)->DeleteLocalRef(jni, c);
    }

    JVMPI_Interface *first = NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        JVMPI_Interface *itf = NULL;
        rc = (*jvm)->GetEnv(jvm, (void **)&itf, versions[i].version);
        if (rc != JNI_OK || itf == NULL) {
            say("getenv %s rc=%d", versions[i].name, (int)rc);
            say("FAIL GetEnv(%s) returned %d", versions[i].name, (int)rc);
            continue;
        }
        say("getenv %s rc=%d version=0x%x same=%s", versions[i].name, (int)rc,
            (unsigned)itf->version, (first == NULL || first == itf) ? "yes" : "no");
        if (first == NULL)
            first = itf;
    }
    if (first == NULL) {
        say("no JVMPI interface, giving up");
        return JNI_ERR;
    }
    jvmpi = first;
    jvmpi->NotifyEvent = notify;

    static const jint enable[] = {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN,
                                  JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_DATA_RESET_REQUEST};
    for (size_t i = 0; i < sizeof enable / sizeof enable[0]; i++) {
        rc = jvmpi->EnableEvent(enable[i], NULL);
        say("enable %s rc=%d", event_name(enable[i]), (int)rc);
        if (rc != JVMPI_SUCCESS)
            say("FAIL EnableEvent(%s) returned %d", event_name(enable[i]), (int)rc);
    }
    say("JVM_OnLoad returns JNI_OK");
    return JNI_OK;
}
