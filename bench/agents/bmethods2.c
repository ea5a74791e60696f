/* bmethods2.c — a JDK 1.3-style JVMPI agent counting METHOD_ENTRY2 (with receiver ids)
 * and METHOD_EXIT (the methods2 scenario).
 *
 * Enables both events in JVM_OnLoad, counts them and the entries that carried a receiver
 * id, and prints the counts at JVM_SHUT_DOWN:
 *   bmethods2: entries=N exits=M receivers=R
 * Each thread counts in its own padded slot (atomic increments, slots shared only past
 * SLOTS threads), so that the agent's own counting adds no cache line that all threads
 * write: the threads scenarios measure the shim's per-event path, not the agent's.
 */
#include <jvmpi.h>

#include <stdio.h>

#define SLOTS 256
static JVMPI_Interface *jvmpi;
static struct slot {
    volatile long long entries, exits, receivers;
    char pad[64 - 3 * sizeof(long long)];
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
    case JVMPI_EVENT_METHOD_ENTRY2:
        __sync_fetch_and_add(&my_slot()->entries, 1);
        if (event->u.method_entry2.obj_id != NULL)
            __sync_fetch_and_add(&my_slot()->receivers, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        __sync_fetch_and_add(&my_slot()->exits, 1);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        long long entries = 0, exits = 0, receivers = 0;
        for (int i = 0; i < SLOTS; i++) {
            entries += slots[i].entries;
            exits += slots[i].exits;
            receivers += slots[i].receivers;
        }
        printf("bmethods2: entries=%lld exits=%lld receivers=%lld\n", entries, exits, receivers);
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
        fprintf(stderr, "bmethods2: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "bmethods2: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
