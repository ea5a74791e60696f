/* nonotify.c — a broken agent for set-up error tests: it gets the JVMPI interface and enables
 * JVM_INIT_DONE but never sets NotifyEvent, then returns JNI_OK. The shim must refuse to
 * start (HotSpot would have called a NULL function pointer). */
#include <jvmpi.h>

#include <stdio.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    JVMPI_Interface *jvmpi = NULL;
    (void)options;
    (void)reserved;
    jint rc = (*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1);
    if (rc != JNI_OK || jvmpi == NULL) {
        printf("nonotify: GetEnv(JVMPI_VERSION_1) returned %d\n", (int)rc);
        fflush(stdout);
        return JNI_ERR;
    }
    rc = jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    printf("nonotify: enable JVM_INIT_DONE rc=%d, NotifyEvent left unset\n", (int)rc);
    fflush(stdout);
    return JNI_OK;
}
