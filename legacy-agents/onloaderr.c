/* onloaderr.c — a broken agent for set-up error tests: JVM_OnLoad prints a line and returns
 * JNI_ERR, as a JDK 1.3 agent did when it could not initialise. The VM must not start. */
#include <jvmpi.h>

#include <stdio.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)jvm;
    (void)reserved;
    printf("onloaderr: JVM_OnLoad called options=[%s], returning JNI_ERR\n",
           options ? options : "(null)");
    fflush(stdout);
    return JNI_ERR;
}
