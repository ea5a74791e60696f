/* ndump.c — the floor of any JVMTI heap dump: one FollowReferences walk that tags objects.
 *
 * A native JVMTI agent, the third configuration of the dump scenario. On each
 * DataDumpRequest (SIGQUIT) it runs one FollowReferences over the reachable heap whose
 * callback gives every untagged object a new tag and does nothing else: what any JVMTI
 * port of a heap dump must do at least to give objects stable ids, with no record built.
 * It prints, as bdump does,
 *   DUMP_MS <ms> OBJECTS <objects newly tagged> REFS <callbacks> RC <JVMTI error>
 * so the harness can time it against the shim's dump and jcmd's. jvmti.h and libc only.
 */
#include <jvmti.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static jvmtiEnv *jvmti;
static jlong next_tag;
static long long tagged, refs;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static jint JNICALL ref_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                           jlong class_tag, jlong referrer_class_tag, jlong size,
                           jlong *tag_ptr, jlong *referrer_tag_ptr, jint length, void *ud)
{
    (void)kind; (void)info; (void)class_tag; (void)referrer_class_tag; (void)size;
    (void)referrer_tag_ptr; (void)length; (void)ud;
    refs++;
    if (*tag_ptr == 0) {
        *tag_ptr = ++next_tag;
        tagged++;
    }
    return JVMTI_VISIT_OBJECTS;
}

static void JNICALL data_dump(jvmtiEnv *env)
{
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = ref_cb;
    tagged = refs = 0;
    double t0 = now_ms();
    jvmtiError err = (*env)->FollowReferences(env, 0, NULL, NULL, &cb, NULL);
    double t1 = now_ms();
    printf("DUMP_MS %.1f OBJECTS %lld REFS %lld RC %d\n", t1 - t0, tagged, refs, (int)err);
    fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    jvmtiEventCallbacks ev;
    memset(&ev, 0, sizeof ev);
    ev.DataDumpRequest = data_dump;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventCallbacks(jvmti, &ev, (jint)sizeof ev) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DATA_DUMP_REQUEST,
                                           NULL) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "ndump: JVMTI set-up failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
