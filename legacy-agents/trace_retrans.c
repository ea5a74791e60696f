/* trace_retrans.c — a JDK 1.3-style JVMPI agent that checks GetCallTrace's line numbers
 * across class rewriting (tests/it/methods/calltrace_retransform.sh, workload
 * tests/java/TraceRetrans.java).
 *
 * Enabled: CLASS_LOAD (its own method-id -> name table), THREAD_START, JVM_INIT_DONE.
 * A system thread (CreateSystemThread at JVM_INIT_DONE) waits for "retrans-worker", then
 * samples it 200 times (SuspendThread, GetCallTrace depth 4, ResumeThread) in each of three
 * phases: "before"; "on", after EnableEvent(METHOD_ENTRY) has rewritten the classes and the
 * worker has posted entries from the rewritten code; "off", after DisableEvent restored
 * them. Per phase it prints
 *   trace_retrans: phase P samples=N work=W work_lines=L1:n1,L2:n2,... call_lines=...
 * where work_lines counts the lines of the work() frames on top and call_lines the lines of
 * the loop() frames under them. A line table cached before the rewrite and used after it
 * would put the loop's back edge on the next line; the test wants LINE:work and LINE:call.
 * At the end it sets TraceRetrans.done through JNI so that main exits.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static JavaVM *g_jvm;
static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static JNIEnv *worker;
static volatile long worker_entries;

#define MAXN 4096
static struct { jmethodID id; char name[96]; } names[MAXN];
static int nnames;

static const char *name_of(jmethodID id)
{
    for (int i = 0; i < nnames; i++)
        if (names[i].id == id)
            return names[i].name;
    return "?";
}

struct tally { int line, n; };
static void count(struct tally *t, int *nt, int line)
{
    for (int i = 0; i < *nt; i++)
        if (t[i].line == line) { t[i].n++; return; }
    if (*nt < 16) { t[*nt].line = line; t[*nt].n = 1; (*nt)++; }
}
static void print_tally(char *out, size_t len, struct tally *t, int nt)
{
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < nt && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%d:%d", i ? "," : "", t[i].line, t[i].n);
}

static void phase(const char *label)
{
    struct tally wl[16], cl[16];
    int nw = 0, nc = 0, work = 0;
    JVMPI_CallFrame f[4];
    for (int s = 0; s < 200; s++) {
        JVMPI_CallTrace tr = {worker, 0, f};
        jvmpi->SuspendThread(worker);
        jvmpi->GetCallTrace(&tr, 4);
        jvmpi->ResumeThread(worker);
        jvmpi->RawMonitorEnter(lock);
        const char *top = tr.num_frames >= 2 ? name_of(f[0].method_id) : "";
        const char *below = tr.num_frames >= 2 ? name_of(f[1].method_id) : "";
        if (strcmp(top, "TraceRetrans.work") == 0 && strcmp(below, "TraceRetrans.loop") == 0) {
            work++;
            count(wl, &nw, f[0].lineno);
            count(cl, &nc, f[1].lineno);
        }
        jvmpi->RawMonitorExit(lock);
        usleep(1000);
    }
    char a[256], b[256];
    print_tally(a, sizeof a, wl, nw);
    print_tally(b, sizeof b, cl, nc);
    printf("trace_retrans: phase %s samples=200 work=%d work_lines=%s call_lines=%s\n", label, work, a, b);
    fflush(stdout);
}

static void tracer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3000 && worker == NULL; i++)
        usleep(10000);
    if (worker == NULL) {
        printf("trace_retrans: FAIL no retrans-worker thread\n");
        fflush(stdout);
        return;
    }
    usleep(200000); /* let work() be compiled: the usual state of a sampled program */
    phase("before");
    if (jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) != JVMPI_SUCCESS)
        printf("trace_retrans: FAIL EnableEvent(METHOD_ENTRY)\n");
    long e0 = worker_entries;
    for (int i = 0; i < 500 && worker_entries - e0 < 100; i++)
        usleep(10000);
    printf("trace_retrans: worker entries while on: %s\n", worker_entries - e0 >= 100 ? ">=100" : "too few");
    phase("on");
    jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    usleep(200000);
    phase("off");
    JNIEnv *jni = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&jni, JNI_VERSION_1_2) == JNI_OK && jni != NULL) {
        jclass c = (*jni)->FindClass(jni, "TraceRetrans");
        jfieldID d = c ? (*jni)->GetStaticFieldID(jni, c, "done", "Z") : NULL;
        if (d != NULL)
            (*jni)->SetStaticBooleanField(jni, c, d, JNI_TRUE);
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
    }
    fflush(stdout);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY:
        if (ev->env_id == worker)
            __sync_fetch_and_add(&worker_entries, 1);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->u.class_load.class_name == NULL || strcmp(ev->u.class_load.class_name, "TraceRetrans") != 0)
            break;
        jvmpi->RawMonitorEnter(lock);
        for (jint i = 0; i < ev->u.class_load.num_methods && nnames < MAXN; i++) {
            names[nnames].id = ev->u.class_load.methods[i].method_id;
            snprintf(names[nnames].name, sizeof names[nnames].name, "TraceRetrans.%s",
                     ev->u.class_load.methods[i].method_name);
            nnames++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_THREAD_START:
        if (ev->u.thread_start.thread_name != NULL &&
            strcmp(ev->u.thread_start.thread_name, "retrans-worker") == 0)
            worker = ev->u.thread_start.thread_env_id;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("retrans tracer", JVMPI_NORMAL_PRIORITY, tracer) != JNI_OK)
            printf("trace_retrans: FAIL CreateSystemThread\n");
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("trace_retrans");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    return JNI_OK;
}
