/* nnothing.c — a native JVMTI agent that enables nothing: gets a jvmtiEnv and returns.
 * The baseline for "a profiler is loaded but idle".
 */
#include <jvmti.h>

#include <stdio.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
        fprintf(stderr, "nnothing: GetEnv(JVMTI) failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
