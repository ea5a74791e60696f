/* nallocs.c — a native JVMTI agent doing ballocs' job the way a user porting it by hand
 * would: SampledObjectAlloc with SetHeapSamplingInterval(0) set in Agent_OnLoad (so every
 * allocation is reported), each new object tagged with a counter (an object id) so that
 * ObjectFree reports it, GarbageCollectionStart/Finish counted. Prints at VMDeath:
 *   nallocs: allocs=N alloc_bytes=B frees=F gc_start=S gc_finish=E tag_failures=X
 *   nallocs-mem: malloc_in_use=M
 * The second line is the process's malloc figure (all arenas), which the harness compares
 * with the one the shim prints at the same point (JVMPISHIM_MEMSTATS).
 */
#include <jvmti.h>

#include <malloc.h>
#include <stdio.h>
#include <string.h>

static volatile long long allocs, alloc_bytes, frees, gc_start, gc_finish, tag_failures;
static volatile long long next_tag;

static void JNICALL on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject obj,
                             jclass cls, jlong size)
{
    (void)jni; (void)thread; (void)cls;
    jlong tag = __atomic_add_fetch(&next_tag, 1, __ATOMIC_RELAXED);
    if ((*jvmti)->SetTag(jvmti, obj, tag) != JVMTI_ERROR_NONE)
        __atomic_fetch_add(&tag_failures, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&alloc_bytes, size, __ATOMIC_RELAXED);
}

static void JNICALL on_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti; (void)tag;
    __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    __atomic_fetch_add(&gc_start, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    __atomic_fetch_add(&gc_finish, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti; (void)jni;
    printf("nallocs: allocs=%lld alloc_bytes=%lld frees=%lld gc_start=%lld gc_finish=%lld "
           "tag_failures=%lld\n", allocs, alloc_bytes, frees, gc_start, gc_finish, tag_failures);
    struct mallinfo2 mi = mallinfo2();
    printf("nallocs-mem: malloc_in_use=%zu\n", mi.uordblks + mi.hblkhd);
    fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK || jvmti == NULL)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_sampled_object_alloc_events = 1;
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = 1;
    caps.can_generate_garbage_collection_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "nallocs: AddCapabilities failed\n");
        return JNI_ERR;
    }
    if ((*jvmti)->SetHeapSamplingInterval(jvmti, 0) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "nallocs: SetHeapSamplingInterval(0) failed\n");
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.SampledObjectAlloc = on_alloc;
    cb.ObjectFree = on_free;
    cb.GarbageCollectionStart = on_gc_start;
    cb.GarbageCollectionFinish = on_gc_finish;
    cb.VMDeath = on_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent evs[] = {JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, JVMTI_EVENT_OBJECT_FREE,
                        JVMTI_EVENT_GARBAGE_COLLECTION_START,
                        JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, JVMTI_EVENT_VM_DEATH};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL) != JVMTI_ERROR_NONE) {
            fprintf(stderr, "nallocs: SetEventNotificationMode(%d) failed\n", (int)evs[i]);
            return JNI_ERR;
        }
    return JNI_OK;
}
