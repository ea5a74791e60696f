/* unresolved.c — a broken agent for set-up error tests: it calls a function that exists
 * nowhere. The shared object links (-shared allows undefined symbols) but loading it with
 * RTLD_NOW fails; the shim must report the undefined symbol and refuse to start. */
#include <jvmpi.h>

#include <stdio.h>

extern int jvmpishim_test_no_such_symbol(void);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)jvm;
    (void)options;
    (void)reserved;
    printf("unresolved: FAIL JVM_OnLoad ran, value %d\n", jvmpishim_test_no_such_symbol());
    fflush(stdout);
    return JNI_OK;
}
