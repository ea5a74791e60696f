/* nmethods2.c — the native JVMTI port of bmethods2 (the methods2 scenario), written the way
 * a user porting METHOD_ENTRY2 by hand would: MethodEntry, and for a non-static method the
 * receiver by GetLocalInstance(thread, 0) and its id as a tag (GetTag; SetTag with a new
 * serial when it has none); MethodExit counted; per-thread padded slots as in bmethods2.c;
 * at VMDeath:
 *   nmethods2: entries=N exits=M receivers=R
 */
#include <jvmti.h>

#include <stdio.h>
#include <string.h>

#define SLOTS 256
static struct slot {
    volatile long long entries, exits, receivers;
    char pad[64 - 3 * sizeof(long long)];
} __attribute__((aligned(64))) slots[SLOTS];
static volatile int next_slot;
static __thread struct slot *mine;

static struct slot *my_slot(void)
{
    if (mine == NULL)
        mine = &slots[__atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % SLOTS];
    return mine;
}

static volatile long long next_id = 8;

static void JNICALL on_entry(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID m)
{
    __atomic_fetch_add(&my_slot()->entries, 1, __ATOMIC_RELAXED);
    jint mods = 0;
    jobject self = NULL;
    if ((*jvmti)->GetMethodModifiers(jvmti, m, &mods) != JVMTI_ERROR_NONE || (mods & 0x0008))
        return; /* static: no receiver */
    if ((*jvmti)->GetLocalInstance(jvmti, thread, 0, &self) != JVMTI_ERROR_NONE || self == NULL)
        return;
    jlong tag = 0;
    (*jvmti)->GetTag(jvmti, self, &tag);
    if (tag == 0)
        (*jvmti)->SetTag(jvmti, self, __atomic_fetch_add(&next_id, 8, __ATOMIC_RELAXED));
    __atomic_fetch_add(&my_slot()->receivers, 1, __ATOMIC_RELAXED);
    (*jni)->DeleteLocalRef(jni, self);
}

static void JNICALL on_exit_(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID m,
                             jboolean by_exception, jvalue rv)
{
    (void)jvmti; (void)jni; (void)thread; (void)m; (void)by_exception; (void)rv;
    __atomic_fetch_add(&my_slot()->exits, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti; (void)jni;
    long long entries = 0, exits = 0, receivers = 0;
    for (int i = 0; i < SLOTS; i++) {
        entries += slots[i].entries;
        exits += slots[i].exits;
        receivers += slots[i].receivers;
    }
    printf("nmethods2: entries=%lld exits=%lld receivers=%lld\n", entries, exits, receivers);
    fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_method_entry_events = 1;
    caps.can_generate_method_exit_events = 1;
    caps.can_access_local_variables = 1;
    caps.can_tag_objects = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "nmethods2: AddCapabilities failed\n");
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.MethodEntry = on_entry;
    cb.MethodExit = on_exit_;
    cb.VMDeath = on_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent evs[] = {JVMTI_EVENT_METHOD_ENTRY, JVMTI_EVENT_METHOD_EXIT, JVMTI_EVENT_VM_DEATH};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL) != JVMTI_ERROR_NONE) {
            fprintf(stderr, "nmethods2: SetEventNotificationMode(%d) failed\n", (int)evs[i]);
            return JNI_ERR;
        }
    return JNI_OK;
}
