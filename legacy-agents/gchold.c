/* gchold.c — a game client's JNI library, written as in 2002: no JVM_OnLoad, loaded with
 * System.loadLibrary("gchold"); its init() native gets JVMPI from GetJavaVM's JavaVM and keeps
 * it in a static pointer, then Java threads call DisableGC/EnableGC around frame-critical
 * work (tests/it/lifecycle/client_gc.sh, workload tests/java/GcApp.java). To know the
 * collector really was held back, it also takes GC_START/GC_FINISH and counts a GC_START that
 * comes while any thread is inside a frame (a thread counts itself in after DisableGC
 * returns and out before it calls EnableGC, so a count above 0 means GC is disabled).
 * Lines start with "gchold: "; violations are "gchold: FAIL ...".
 */
#include <jvmpi.h>

#define KIT_NAME "gchold"
#include "kit/out.h"

static JVMPI_Interface *jvmpi;
static volatile int in_frame, gc_starts, gc_finishes, starts_in_frame, frames;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_GC_START:
        __sync_fetch_and_add(&gc_starts, 1);
        if (__sync_fetch_and_add(&in_frame, 0) > 0) {
            __sync_fetch_and_add(&starts_in_frame, 1);
            FAIL("GC_START while %d thread(s) had GC disabled", in_frame);
        }
        break;
    case JVMPI_EVENT_GC_FINISH:
        __sync_fetch_and_add(&gc_finishes, 1);
        break;
    default:
        FAIL("event %d it did not enable", (int)ev->event_type);
    }
}

JNIEXPORT jboolean JNICALL Java_GcHold_init(JNIEnv *env, jclass cls)
{
    JavaVM *vm;
    (void)cls;
    if ((*env)->GetJavaVM(env, &vm) != 0 ||
        (*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) {
        say("FAIL GetEnv(JVMPI_VERSION_1_1) failed");
        return JNI_FALSE;
    }
    jvmpi->NotifyEvent = notify_event;
    if (jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL) != JVMPI_SUCCESS)
        FAIL("EnableEvent(GC_START/GC_FINISH)");
    say("init version=0x%x", (unsigned)jvmpi->version);
    return JNI_TRUE;
}

JNIEXPORT void JNICALL Java_GcHold_frameBegin(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    jvmpi->DisableGC();
    __sync_fetch_and_add(&in_frame, 1);
}

JNIEXPORT void JNICALL Java_GcHold_frameEnd(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    __sync_fetch_and_add(&frames, 1);
    __sync_fetch_and_sub(&in_frame, 1);
    jvmpi->EnableGC();
}

/* The collections the library has seen end (GC_FINISH), or -1 while one has started and not
 * ended: the game waits for its last collection's bracket before it writes its summary. */
JNIEXPORT jint JNICALL Java_GcHold_finished(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return gc_starts == gc_finishes ? gc_finishes : -1;
}

JNIEXPORT void JNICALL Java_GcHold_summary(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    say("summary frames=%d gc_start=%d gc_finish=%d starts_in_frame=%d fails=%d", frames,
        gc_starts, gc_finishes, starts_in_frame, g_fails);
}
