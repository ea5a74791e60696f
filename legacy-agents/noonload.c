/* noonload.c — a broken "agent" for set-up error tests: it exports no JVM_OnLoad (only a
 * similarly named function), so the shim must refuse to start the VM and say why. */
#include <jvmpi.h>

#include <stdio.h>

JNIEXPORT jint JNICALL JVM_OnLoad_missing(JavaVM *jvm, char *options, void *reserved)
{
    (void)jvm;
    (void)options;
    (void)reserved;
    printf("noonload: FAIL this function must never be called\n");
    fflush(stdout);
    return JNI_OK;
}

JNIEXPORT int noonload_marker(void) { return 42; }
