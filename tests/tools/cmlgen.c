/* cmlgen.c — a native JVMTI agent that listens for compiled code, as a JIT-symbol writer or
 * a sampling profiler does (tests/it/methods/jit_twice.sh). Loaded beside the shim in the same JVM.
 *
 * It takes can_generate_compiled_method_load_events, enables CompiledMethodLoad, and calls
 * GenerateEvents(COMPILED_METHOD_LOAD) at VMInit and then 5 more times, 100 ms apart, from
 * its own agent thread: each call replays every compiled method to this environment. It
 * counts what it got and prints "cmlgen: loads=N generates=G" at exit.
 */
#include <jni.h>
#include <jvmti.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static jvmtiEnv *jvmti;
static atomic_long loads;
static atomic_int generates;

static void JNICALL on_load(jvmtiEnv *e, jmethodID m, jint size, const void *addr, jint n,
                            const jvmtiAddrLocationMap *map, const void *info)
{
    (void)e; (void)m; (void)size; (void)addr; (void)n; (void)map; (void)info;
    atomic_fetch_add(&loads, 1);
}

static void generate(void)
{
    if ((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD) == JVMTI_ERROR_NONE)
        atomic_fetch_add(&generates, 1);
}

static void JNICALL gen_thread(jvmtiEnv *e, JNIEnv *jni, void *arg)
{
    (void)e; (void)jni; (void)arg;
    for (int i = 0; i < 5; i++) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        generate();
    }
}

static void JNICALL on_vm_init(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
    (void)e; (void)t;
    generate();
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID ctor = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "cmlgen");
    jobject th = ctor ? (*jni)->NewObject(jni, tc, ctor, name) : NULL;
    if (th == NULL || (*jvmti)->RunAgentThread(jvmti, th, gen_thread, NULL,
                                               JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE)
        fprintf(stderr, "cmlgen: cannot start its thread\n");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.CompiledMethodLoad = on_load;
    cb.VMInit = on_vm_init;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    printf("cmlgen: loads=%ld generates=%d\n", atomic_load(&loads), atomic_load(&generates));
    fflush(stdout);
}
