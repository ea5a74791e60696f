/* ndump.c — the floor of any JVMTI heap dump: one FollowReferences walk that tags objects.
 *
 * A native JVMTI agent, the third configuration of the dump scenario. On each
 * DataDumpRequest (SIGQUIT) it runs one FollowReferences over the reachable heap whose
 * callback gives every untagged object a new tag and does nothing else: what any JVMTI
 * port of a heap dump must do at least to give objects stable ids, with no record built.
 * It prints, as bdump does,
 *   DUMP_MS <ms> OBJECTS <objects newly tagged> REFS <callbacks> RC <JVMTI error>
 * so the harness can time it against the shim's dump and jcmd's. jvmti.h and libc only.
 *
 * Options, for measuring what a level-2 dump costs beyond the floor (not used by the
 * harness): "prims" also asks the walk for primitive field values and primitive array
 * elements (callbacks that do nothing), as the shim's level-2 walk does; "iterate" then
 * runs an IterateThroughHeap with the same callbacks, the second pass a dump would need if
 * it took object records from a heap iteration and only references from the walk. Each
 * adds its time to the line: PRIMS 1, ITERATE_MS <ms>.
 */
#include <jvmti.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static jvmtiEnv *jvmti;
static jlong next_tag;
static long long tagged, refs;
static int opt_prims, opt_iterate;

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

static jint JNICALL prim_field_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                  jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
                                  jvmtiPrimitiveType type, void *ud)
{
    (void)kind; (void)info; (void)object_class_tag; (void)object_tag_ptr; (void)value;
    (void)type; (void)ud;
    return 0;
}

static jint JNICALL prim_array_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                  jvmtiPrimitiveType type, const void *elements, void *ud)
{
    (void)class_tag; (void)size; (void)tag_ptr; (void)count; (void)type; (void)elements;
    (void)ud;
    return 0;
}

static jint JNICALL iter_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)class_tag; (void)size; (void)tag_ptr; (void)length; (void)ud;
    return 0;
}

static void JNICALL data_dump(jvmtiEnv *env)
{
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = ref_cb;
    if (opt_prims) {
        cb.primitive_field_callback = prim_field_cb;
        cb.array_primitive_value_callback = prim_array_cb;
    }
    tagged = refs = 0;
    double t0 = now_ms();
    jvmtiError err = (*env)->FollowReferences(env, 0, NULL, NULL, &cb, NULL);
    double t1 = now_ms();
    printf("DUMP_MS %.1f OBJECTS %lld REFS %lld RC %d", t1 - t0, tagged, refs, (int)err);
    if (opt_prims)
        printf(" PRIMS 1");
    if (opt_iterate) {
        jvmtiHeapCallbacks ic;
        memset(&ic, 0, sizeof ic);
        ic.heap_iteration_callback = iter_cb;
        ic.primitive_field_callback = prim_field_cb;
        ic.array_primitive_value_callback = prim_array_cb;
        t0 = now_ms();
        (*env)->IterateThroughHeap(env, 0, NULL, &ic, NULL);
        printf(" ITERATE_MS %.1f", now_ms() - t0);
    }
    printf("\n");
    fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    opt_prims = options != NULL && strstr(options, "prims") != NULL;
    opt_iterate = options != NULL && strstr(options, "iterate") != NULL;
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
