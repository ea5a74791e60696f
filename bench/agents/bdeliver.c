/* bdeliver.c — a JDK 1.3-style JVMPI agent with an (almost) empty handler for one event
 * kind, for the delivery scenario (bench/delivery.sh): what the shim itself adds to
 * delivering one event, measured against the floor of the same mechanism.
 *
 * The option names the event: entry (METHOD_ENTRY), entry2 (METHOD_ENTRY2), exit
 * (METHOD_EXIT), insn (INSTRUCTION_START), alloc (OBJECT_ALLOC), or tls (METHOD_ENTRY whose
 * handler does GetThreadLocalStorage and SetThreadLocalStorage, as a per-thread profiler
 * does around every event). The handler counts the event in a plain thread-local counter
 * and nothing else, so what a profile puts under the shim's entry point and outside this
 * handler is the shim's own share. At JVM_SHUT_DOWN it prints
 *   bdeliver: kind=K events=N
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static jint kind = -1;
static int tls;
static __thread long long mine;
static long long total;
static volatile int lock;

static void notify(JVMPI_Event *ev)
{
    if (ev->event_type == kind) {
        if (tls) {
            void *p = jvmpi->GetThreadLocalStorage(ev->env_id);
            jvmpi->SetThreadLocalStorage(ev->env_id, (char *)p + 1);
        }
        mine++;
        return;
    }
    if (ev->event_type == JVMPI_EVENT_THREAD_END || ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
        while (__sync_lock_test_and_set(&lock, 1))
            ;
        total += mine;
        mine = 0;
        __sync_lock_release(&lock);
        if (ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
            printf("bdeliver: kind=%d events=%lld\n", (int)kind, total);
            fflush(stdout);
        }
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    static const struct { const char *name; jint ev; } kinds[] = {
        {"entry", JVMPI_EVENT_METHOD_ENTRY}, {"entry2", JVMPI_EVENT_METHOD_ENTRY2},
        {"exit", JVMPI_EVENT_METHOD_EXIT}, {"insn", JVMPI_EVENT_INSTRUCTION_START},
        {"alloc", JVMPI_EVENT_OBJECT_ALLOC}, {"tls", JVMPI_EVENT_METHOD_ENTRY},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (options != NULL && strcmp(options, kinds[i].name) == 0) {
            kind = kinds[i].ev;
            tls = strcmp(options, "tls") == 0;
        }
    if (kind < 0) {
        fprintf(stderr, "bdeliver: option entry|entry2|exit|insn|alloc|tls needed\n");
        return JNI_ERR;
    }
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bdeliver: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(kind, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bdeliver: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
