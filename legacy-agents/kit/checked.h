/* kit/checked.h — the start-up calls of a test agent, each reporting its failure.
 *
 * JVM_OnLoad of nearly every agent gets the JVMPI interface, enables a list of events and
 * judges each return code: a refused event is a FAIL line, not a silent gap in the
 * test's output. Include kit/out.h (or declare say() and FAIL yourself) first.
 */
#ifndef KIT_CHECKED_H
#define KIT_CHECKED_H

#include "jvm.h"

/* GetEnv(version) into jvmpi (and jvm into g_jvm); 0 after a "FAIL GetEnv(...) failed"
 * line, and JVM_OnLoad then returns JNI_ERR. The version's name is the one printed. */
#define GET_JVMPI(jvm, version) kit_get_jvmpi((jvm), (version), #version)
KIT_FN int kit_get_jvmpi(JavaVM *jvm, jint version, const char *vname)
{
    g_jvm = jvm;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, version) != JNI_OK || jvmpi == NULL) {
        say("FAIL GetEnv(%s) failed", vname);
        return 0;
    }
    return 1;
}

/* EnableEvent of each of the n types, in order; a refusal is a FAIL line that names the
 * type, with the return code when show_rc (the tests grep either form). */
KIT_FN void enable_events(const jint *ev, int n, int show_rc)
{
    for (int i = 0; i < n; i++) {
        jint rc = jvmpi->EnableEvent(ev[i], NULL);
        if (rc == JVMPI_SUCCESS)
            continue;
        if (show_rc)
            FAIL("EnableEvent(%d) returned %d", (int)ev[i], (int)rc);
        else
            FAIL("EnableEvent(%d) failed", (int)ev[i]);
    }
}
#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* System.setProperty(name, value) from any thread, in a local frame of its own; a missing
 * env or a Java exception is a FAIL line (the workload would otherwise wait in vain). */
KIT_FN void set_property_or_fail(JNIEnv *jni, const char *name, const char *value)
{
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 16) != 0) {
        FAIL("set_property: no JNIEnv");
        return;
    }
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID sp = sys ? (*jni)->GetStaticMethodID(jni, sys, "setProperty",
                                                   "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;")
                       : NULL;
    if (sp != NULL)
        (*jni)->CallStaticObjectMethod(jni, sys, sp, (*jni)->NewStringUTF(jni, name),
                                       (*jni)->NewStringUTF(jni, value));
    if (sp == NULL || (*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        FAIL("cannot set %s through JNI", name);
    }
    (*jni)->PopLocalFrame(jni, NULL);
}

#endif
