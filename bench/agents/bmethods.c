/* bmethods.c — a JDK 1.3-style JVMPI agent counting METHOD_ENTRY and METHOD_EXIT.
 *
 * Enables both events in JVM_OnLoad, counts them and prints the counts at JVM_SHUT_DOWN:
 *   bmethods: entries=N exits=M
 * Each thread counts in its own padded slot (atomic increments, slots shared only past
 * SLOTS threads), so that the agent's own counting adds no cache line that all threads
 * write: the threads scenarios measure the shim's per-event path, not the agent's.
 */
#include <jvmpi.h>

#include <stdio.h>

#define SLOTS 256
static JVMPI_Interface *jvmpi;
static struct slot {
    volatile long long entries, exits;
    char pad[64 - 2 * sizeof(long long)];
} __attribute__((aligned(64))) slots[SLOTS];
static volatile int next_slot;
static __thread struct slot *mine;

static struct slot *my_slot(void)
{
    if (mine == NULL)
        mine = &slots[__sync_fetch_and_add(&next_slot, 1) % SLOTS];
    return mine;
}

static void notify(JVMPI_Event *event)
{
    switch (event->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY:
        __sync_fetch_and_add(&my_slot()->entries, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        __sync_fetch_and_add(&my_slot()->exits, 1);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        long long entries = 0, exits = 0;
        for (int i = 0; i < SLOTS; i++) {
            entries += slots[i].entries;
            exits += slots[i].exits;
        }
        printf("bmethods: entries=%lld exits=%lld\n", entries, exits);
        fflush(stdout);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bmethods: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bmethods: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
