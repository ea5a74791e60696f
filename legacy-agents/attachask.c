/* attachask.c — a JNI library, written as in 2002, that asks for JVMPI on a thread it
 * started and attached itself (asking once before it attaches, which must fail with
 * JNI_EDETACHED): AttachThreads.start() records the calling (main) thread's
 * JNIEnv and starts a pthread, which finds the JavaVM with JNI_GetCreatedJavaVMs, attaches as
 * "attach-asker", calls GetEnv(JVMPI_VERSION_1_2) (and checks that JNI GetJavaVM gives the same
 * JavaVM afterwards) and then, from that thread: a raw monitor,
 * its own thread-local storage, GetCurrentThreadCpuTime, RequestEvent(THREAD_START) of its own
 * Thread (GetThreadObject), and SuspendThread / GetThreadStatus / GetCallTrace /
 * GetMethodClass / RequestEvent(CLASS_LOAD) / ResumeThread of the main thread, which spins in
 * LateApp.spin() until the library says it is done (tests/it/lifecycle/client_late.sh); the
 * asker suspends main only once main has called done(), i.e. is in spin().
 * Lines start with "attachask: "; violations are "attachask: FAIL ...".
 */
#include <jvmpi.h>

#include <pthread.h>
#include <string.h>
#include <time.h>

#define KIT_NAME "attachask"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;
static JNIEnv *main_env, *my_env;
static volatile int done;
static volatile int spinning; /* main has called done(): it is in LateApp.spin() */
static char trace_names[1024];
static char want_class_name[128];
static jobjectID want_class_id;
static int thread_start_self;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
        if (ev->u.thread_start.thread_env_id == my_env &&
            strcmp(ev->u.thread_start.thread_name, "attach-asker") == 0)
            thread_start_self = 1;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        want_class_id = ev->u.class_load.class_id;
        strncpy(want_class_name, ev->u.class_load.class_name, sizeof want_class_name - 1);
        for (int i = 0; i < ev->u.class_load.num_methods; i++) {
            size_t k = strlen(trace_names);
            snprintf(trace_names + k, sizeof trace_names - k, " %s.%s", ev->u.class_load.class_name,
                     ev->u.class_load.methods[i].method_name);
        }
        break;
    default:
        FAIL("event %d it did not ask for", (int)ev->event_type);
    }
}

static void *asker(void *arg)
{
    JavaVM *vm;
    jsize n = 0;
    JNIEnv *env;
    JavaVMAttachArgs aa = {JNI_VERSION_1_2, "attach-asker", NULL};
    (void)arg;
    if (JNI_GetCreatedJavaVMs(&vm, 1, &n) != JNI_OK || n != 1) {
        FAIL("JNI_GetCreatedJavaVMs");
        done = 1;
        return NULL;
    }
    /* Not attached yet: HotSpot answered JNI_EDETACHED, JVMPI or not. */
    void *none = &n;
    jint rc0 = (*vm)->GetEnv(vm, &none, JVMPI_VERSION_1);
    say("detached rc=%d null=%d", (int)rc0, none == NULL);
    if ((*vm)->AttachCurrentThread(vm, (void **)&env, &aa) != JNI_OK) {
        FAIL("AttachCurrentThread");
        done = 1;
        return NULL;
    }
    my_env = env;
    jint rc = (*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_2);
    if (rc != JNI_OK || jvmpi == NULL) {
        say("GetEnv(JVMPI_VERSION_1_2) on an attached thread refused rc=%d", (int)rc);
        (*vm)->DetachCurrentThread(vm);
        done = 1;
        return NULL;
    }
    jvmpi->NotifyEvent = notify_event;
    JavaVM *vm2 = NULL;
    (*env)->GetJavaVM(env, &vm2);
    say("attached version=0x%x same_vm=%d", (unsigned)jvmpi->version, vm2 == vm);
    JVMPI_RawMonitor m = jvmpi->RawMonitorCreate("attachask_lock");
    jvmpi->RawMonitorEnter(m);
    static int mine;
    jvmpi->SetThreadLocalStorage(env, &mine);
    if (jvmpi->GetThreadLocalStorage(env) != &mine)
        FAIL("thread-local storage of the attached thread");
    jlong cpu = jvmpi->GetCurrentThreadCpuTime();
    jvmpi->RawMonitorExit(m);
    if (jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, jvmpi->GetThreadObject(env)) != JVMPI_SUCCESS ||
        !thread_start_self)
        FAIL("RequestEvent(THREAD_START) of its own thread");
    /* The main thread, spinning in LateApp.spin(): wait until it got there (it may still be
     * returning from start() on a slow machine), 10 s at most. */
    for (int i = 0; i < 10000 && !spinning; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    jvmpi->SuspendThread(main_env);
    jint st = jvmpi->GetThreadStatus(main_env);
    JVMPI_CallFrame frames[64];
    JVMPI_CallTrace t = {main_env, 0, frames};
    jvmpi->GetCallTrace(&t, 64);
    jvmpi->ResumeThread(main_env);
    char methods[2048] = "";
    for (int i = 0; i < t.num_frames; i++) {
        jobjectID c = jvmpi->GetMethodClass(frames[i].method_id);
        trace_names[0] = 0;
        if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, c) != JVMPI_SUCCESS || want_class_id != c)
            FAIL("RequestEvent(CLASS_LOAD) of frame %d's class", i);
        /* The method's name: CLASS_LOAD lists "Class.name" for each; find this frame's. */
        size_t k = strlen(methods);
        snprintf(methods + k, sizeof methods - k, "%s%s", i ? "," : "", want_class_name);
    }
    say("main trace status=%d frames=%d classes=%s cpu=%s thread_start_self=%d", (int)st,
        (int)t.num_frames, methods, cpu > 0 ? "yes" : "no", thread_start_self);
    jvmpi->RawMonitorDestroy(m);
    (*vm)->DetachCurrentThread(vm);
    done = 1;
    return NULL;
}

JNIEXPORT void JNICALL Java_AttachThreads_start(JNIEnv *env, jclass cls)
{
    pthread_t th;
    (void)cls;
    main_env = env;
    pthread_create(&th, NULL, asker, NULL);
    pthread_detach(th);
}

JNIEXPORT jboolean JNICALL Java_AttachThreads_done(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    spinning = 1;
    return done ? JNI_TRUE : JNI_FALSE;
}
