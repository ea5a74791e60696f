/* bnothing.c — a JDK 1.3-style JVMPI agent that enables nothing.
 *
 * It gets the JVMPI interface, sets NotifyEvent and returns: the cost of having a JVMPI
 * agent loaded through the shim at all. jvmpi.h and libc only, as agents of the era were.
 */
#include <jvmpi.h>

#include <stdio.h>

static JVMPI_Interface *jvmpi;

static void notify(JVMPI_Event *event)
{
    (void)event;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bnothing: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    return JNI_OK;
}
