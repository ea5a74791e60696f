/* ident_classes.c — a JDK 1.3-style JVMPI agent that prints the CLASS_LOAD payload of the
 * workload's classes (tests/it/classes/ident_classes.sh, workload tests/java/IdentClasses.java).
 *
 * Enabled: CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. For every class whose name starts with
 * "Ident" it prints, in the format of tests/java/IdentClassFacts.java (the test's
 * class-file oracle), prefixed "ident_classes: load " (or "request " for REQUESTED events):
 *    CLASS <name> src=<source|NULL> ifaces=<n> methods=<n> statics=<n> instances=<n>
 *    M <class> <method> <signature> <start_lineno> <end_lineno>
 *    S <class> <field> <signature>      (the order CLASS_LOAD gives)
 *    I <class> <field> <signature>
 * Checked for every class (FAIL lines): GetMethodClass(method_id) == class_id for each
 * method, inside the CLASS_LOAD handler (each call timed: one that blocks > 1 s is a
 * FAIL, and the agent then stops asking inside handlers) and again for all methods from
 * the IdentClasses$Done handler; method ids unique; class ids unique among live classes;
 * a CLASS_LOAD before JVM_INIT_DONE has no REQUESTED bit.
 * The same for java.lang.Object, java.lang.Thread, java.util.ArrayList (replayed) and
 * java.util.zip.Adler32 (loaded by the workload).
 * When IdentClasses$Done loads (on main, after the workload used its classes), the agent
 * runs its id checks in that handler:
 *  - RequestEvent(CLASS_LOAD, id) of every Ident class: rc 0, a REQUESTED event, same
 *    payload (printed again with "request ");
 *  - array classes ([I, [Ljava/lang/String;, [[D) via FindClass + jobject2jobjectID:
 *    REQUESTED with the array name, no source, no members;
 *  - garbage / NULL / non-class ids: JVMPI_FAIL, no event; int.class printed only;
 *  - jobjectID2jobject(class id) is that class (Class.getName) and jobject2jobjectID of it
 *    gives the id back; jobjectID2jobject(garbage) is NULL; GetMethodClass(NULL) is NULL.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define KIT_NAME "ident_classes"
#define KIT_LINE 4096
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;

static volatile int slow_in_handler, n_in_handler;

static struct pmap classes;     /* class id -> strdup(name) */
static struct pmap methods;     /* method id -> class id */

/* Ident classes seen, for the late requests. */
#define MAXC 64
static struct {
    char name[128];
    jobjectID id;
} ident[MAXC];
static int nident;

static volatile int init_done;
static int n_classes, n_methods, n_requested;
static volatile int req_count;
static char req_name[256], req_src[256];
static jobjectID req_id;
static int req_counts[4]; /* methods, statics, instances, interfaces */

static void print_class(const char *tag, JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    say("%s CLASS %s src=%s ifaces=%d methods=%d statics=%d instances=%d", tag, S(cn),
        S(ev->u.class_load.source_name), (int)ev->u.class_load.num_interfaces,
        (int)ev->u.class_load.num_methods, (int)ev->u.class_load.num_static_fields,
        (int)ev->u.class_load.num_instance_fields);
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        say("%s M %s %s %s %d %d", tag, S(cn), S(m->method_name), S(m->method_signature),
            (int)m->start_lineno, (int)m->end_lineno);
    }
    for (jint i = 0; i < ev->u.class_load.num_static_fields; i++)
        say("%s S %s %s %s", tag, S(cn), S(ev->u.class_load.statics[i].field_name),
            S(ev->u.class_load.statics[i].field_signature));
    for (jint i = 0; i < ev->u.class_load.num_instance_fields; i++)
        say("%s I %s %s %s", tag, S(cn), S(ev->u.class_load.instances[i].field_name),
            S(ev->u.class_load.instances[i].field_signature));
}

static void late_checks(JNIEnv *jni);

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    jobjectID cid = ev->u.class_load.class_id;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    /* Also a few JDK classes: replayed at start-up (loaded before the agent, from the CDS
     * archive) and one the workload loads later. */
    int is_ident = cn != NULL && (strncmp(cn, "Ident", 5) == 0 || strcmp(cn, "java.lang.Object") == 0 ||
                                  strcmp(cn, "java.lang.Thread") == 0 ||
                                  strcmp(cn, "java.util.ArrayList") == 0 ||
                                  strcmp(cn, "java.util.zip.Adler32") == 0);
    if (cn == NULL || cid == NULL)
        FAIL("CLASS_LOAD with class_name %s class_id %p", S(cn), (void *)cid);
    if (requested) {
        jvmpi->RawMonitorEnter(lock);
        snprintf(req_name, sizeof req_name, "%s", S(cn));
        snprintf(req_src, sizeof req_src, "%s", S(ev->u.class_load.source_name));
        req_id = cid;
        req_counts[0] = ev->u.class_load.num_methods;
        req_counts[1] = ev->u.class_load.num_static_fields;
        req_counts[2] = ev->u.class_load.num_instance_fields;
        req_counts[3] = ev->u.class_load.num_interfaces;
        n_requested++;
        __sync_add_and_fetch(&req_count, 1);
        jvmpi->RawMonitorExit(lock);
        if (is_ident || (cn && cn[0] == '['))
            print_class("request", ev);
        return;
    }
    /* Every method belongs to this class. Asked inside the handler (an agent builds its
     * method -> class map right here); each call is timed: a call that blocks is reported
     * once and the agent stops asking inside handlers (late_checks asks for all). */
    jvmpi->DisableGC();
    for (jint i = 0; i < ev->u.class_load.num_methods && !slow_in_handler; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        long long t0 = now_ms();
        jobjectID owner = jvmpi->GetMethodClass(m->method_id);
        long long dt = now_ms() - t0;
        __sync_add_and_fetch(&n_in_handler, 1);
        if (dt > 1000) {
            slow_in_handler = 1;
            FAIL("GetMethodClass(%s.%s%s) inside the CLASS_LOAD handler of its class took %lld ms "
                 "(no more GetMethodClass calls inside handlers)", S(cn), S(m->method_name),
                 S(m->method_signature), dt);
        }
        if (owner != cid)
            FAIL("%s.%s%s: GetMethodClass = %p, class_id = %p", S(cn), S(m->method_name),
                 S(m->method_signature), (void *)owner, (void *)cid);
    }
    jvmpi->EnableGC();
    jvmpi->RawMonitorEnter(lock);
    void *old = NULL;
    if (pm_get(&classes, cid, &old))
        FAIL("second CLASS_LOAD for class id %p: %s (first: %s)", (void *)cid, S(cn), (char *)old);
    else
        pm_put(&classes, cid, strdup(S(cn)));
    n_classes++;
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        if (m->method_id == NULL) {
            FAIL("%s.%s: method_id NULL", S(cn), S(m->method_name));
            continue;
        }
        if (pm_get(&methods, m->method_id, &old))
            FAIL("%s.%s%s: method_id %p already announced by class %p", S(cn), S(m->method_name),
                 S(m->method_signature), (void *)m->method_id, old);
        pm_put(&methods, m->method_id, cid);
        n_methods++;
    }
    if (is_ident && nident < MAXC) {
        snprintf(ident[nident].name, sizeof ident[nident].name, "%s", cn);
        ident[nident].id = cid;
        nident++;
    }
    jvmpi->RawMonitorExit(lock);
    if (is_ident) {
        print_class("load", ev);
        if (strcmp(cn, "IdentClasses$Done") == 0)
            late_checks(current_env());
    }
}

/* RequestEvent(CLASS_LOAD, id): returns rc; *got = events posted during the call. */
static jint request(jobjectID id, int *got)
{
    int before = req_count;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
    *got = req_count - before;
    return rc;
}

static void request_array(JNIEnv *jni, const char *jni_name, const char *want, jclass elem)
{
    /* FindClass resolves with the caller's loader (here the boot loader, inside
     * Class.forName0): arrays of application classes come from NewObjectArray. */
    jclass c = NULL;
    if (elem != NULL) {
        jobjectArray a = (*jni)->NewObjectArray(jni, 0, elem, NULL);
        c = a ? (*jni)->GetObjectClass(jni, a) : NULL;
    } else {
        c = (*jni)->FindClass(jni, jni_name);
    }
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        FAIL("FindClass(%s) failed", jni_name);
        return;
    }
    jobjectID id = jvmpi->jobject2jobjectID(c);
    int got;
    jint rc = request(id, &got);
    jvmpi->RawMonitorEnter(lock);
    int ok = rc == JVMPI_SUCCESS && got == 1 && strcmp(req_name, want) == 0 && req_id == id &&
             strcmp(req_src, "NULL") == 0 && req_counts[0] == 0 && req_counts[1] == 0 &&
             req_counts[2] == 0 && req_counts[3] == 0;
    say("array %s rc=%d events=%d name=%s src=%s members=%d/%d/%d/%d id_ok=%s", jni_name, (int)rc,
        got, got ? req_name : "-", got ? req_src : "-", req_counts[0], req_counts[1], req_counts[2],
        req_counts[3], req_id == id ? "yes" : "no");
    jvmpi->RawMonitorExit(lock);
    if (!ok)
        FAIL("RequestEvent(CLASS_LOAD, %s class id) is not one REQUESTED array event named %s",
             jni_name, want);
    (*jni)->DeleteLocalRef(jni, c);
}

static void expect_fail(const char *what, jobjectID id)
{
    int got;
    jint rc = request(id, &got);
    say("request %s rc=%d events=%d", what, (int)rc, got);
    if (rc != JVMPI_FAIL || got != 0)
        FAIL("RequestEvent(CLASS_LOAD, %s) returned %d and posted %d events", what, (int)rc, got);
}

static void late_checks(JNIEnv *jni)
{
    say("late checks: %d Ident classes", nident);
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 64) != 0) {
        FAIL("no JNIEnv in the CLASS_LOAD handler");
        return;
    }
    jvmpi->DisableGC();
    for (int i = 0; i < nident; i++) {
        if (strcmp(ident[i].name, "IdentClasses$Done") == 0)
            continue;
        int got;
        jint rc = request(ident[i].id, &got);
        jvmpi->RawMonitorEnter(lock);
        int ok = rc == JVMPI_SUCCESS && got == 1 && strcmp(req_name, ident[i].name) == 0 &&
                 req_id == ident[i].id;
        jvmpi->RawMonitorExit(lock);
        say("request %s rc=%d events=%d %s", ident[i].name, (int)rc, got, ok ? "ok" : "WRONG");
        if (!ok)
            FAIL("RequestEvent(CLASS_LOAD, id of %s) returned %d, %d events, name %s", ident[i].name,
                 (int)rc, got, req_name);
    }
    request_array(jni, "[I", "[I", NULL);
    request_array(jni, "[Ljava/lang/String;", "[Ljava.lang.String;", NULL);
    request_array(jni, "[[D", "[[D", NULL);
    for (int i = 0; i < nident; i++)
        if (strcmp(ident[i].name, "IdentShapes") == 0)
            request_array(jni, "[LIdentShapes;", "[LIdentShapes;",
                          (jclass)jvmpi->jobjectID2jobject(ident[i].id));

    expect_fail("garbage", (jobjectID)(long)0x1234);
    expect_fail("NULL", NULL);
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID cur = (*jni)->GetStaticMethodID(jni, tc, "currentThread", "()Ljava/lang/Thread;");
    jobject me = (*jni)->CallStaticObjectMethod(jni, tc, cur);
    expect_fail("thread-object", jvmpi->jobject2jobjectID(me));
    /* int.class: HotSpot crashed; print what the shim does. */
    jclass ic = (*jni)->FindClass(jni, "java/lang/Integer");
    jfieldID tf = (*jni)->GetStaticFieldID(jni, ic, "TYPE", "Ljava/lang/Class;");
    jobject prim = (*jni)->GetStaticObjectField(jni, ic, tf);
    int got;
    jint rc = request(jvmpi->jobject2jobjectID(prim), &got);
    say("request int.class rc=%d events=%d (not asserted)", (int)rc, got);

    /* jobjectID <-> jobject round trips for class ids. */
    jclass cc = (*jni)->FindClass(jni, "java/lang/Class");
    jmethodID getName = (*jni)->GetMethodID(jni, cc, "getName", "()Ljava/lang/String;");
    int roundtrips = 0;
    for (int i = 0; i < nident; i++) {
        jobject c = jvmpi->jobjectID2jobject(ident[i].id);
        if (c == NULL) {
            FAIL("jobjectID2jobject(id of %s) = NULL", ident[i].name);
            continue;
        }
        jstring js = (*jni)->CallObjectMethod(jni, c, getName);
        const char *n = js ? (*jni)->GetStringUTFChars(jni, js, NULL) : NULL;
        if (n == NULL || strcmp(n, ident[i].name) != 0)
            FAIL("jobjectID2jobject(id of %s) is class %s", ident[i].name, S(n));
        if (n)
            (*jni)->ReleaseStringUTFChars(jni, js, n);
        jobjectID back = jvmpi->jobject2jobjectID(c);
        if (back != ident[i].id)
            FAIL("jobject2jobjectID(jobjectID2jobject(%p)) = %p (%s)", (void *)ident[i].id,
                 (void *)back, ident[i].name);
        else
            roundtrips++;
        (*jni)->DeleteLocalRef(jni, c);
    }
    say("roundtrip class ids ok=%d of %d", roundtrips, nident);

    /* GetMethodClass for every method announced so far, outside its class's handler. */
    jvmpi->RawMonitorEnter(lock);
    size_t nm = 0;
    void **mids = calloc(methods.n + 1, sizeof *mids), **cids = calloc(methods.n + 1, sizeof *cids);
    for (size_t i = 0; i < methods.cap; i++)
        if (methods.k[i] != NULL) {
            mids[nm] = methods.k[i];
            cids[nm++] = methods.v[i];
        }
    jvmpi->RawMonitorExit(lock);
    long long t0 = now_ms();
    int wrong = 0;
    for (size_t i = 0; i < nm; i++)
        if (jvmpi->GetMethodClass((jmethodID)mids[i]) != (jobjectID)cids[i])
            wrong++;
    say("GetMethodClass outside handlers: checked=%zu wrong=%d ms=%lld; inside handlers: checked=%d slow=%d",
        nm, wrong, now_ms() - t0, n_in_handler, slow_in_handler);
    if (wrong)
        FAIL("GetMethodClass gave the wrong class for %d of %zu methods", wrong, nm);
    free(mids);
    free(cids);
    jobject g1 = jvmpi->jobjectID2jobject((jobjectID)(long)0x1234);
    jobject g2 = jvmpi->jobjectID2jobject(NULL);
    /* Looks like a shim id (aligned, in range of issued ones?) but is not a live object. */
    jobject g3 = jvmpi->jobjectID2jobject((jobjectID)((char *)ident[0].id + 8 * 1000003L));
    jobjectID m0 = jvmpi->GetMethodClass(NULL);
    say("garbage ids: jobjectID2jobject(0x1234)=%s (NULL)=%s (far)=%s GetMethodClass(NULL)=%s",
        g1 ? "ref" : "NULL", g2 ? "ref" : "NULL", g3 ? "ref" : "NULL", m0 ? "id" : "NULL");
    if (g1 || g2 || g3 || m0)
        FAIL("a garbage id resolved to an object");
    jvmpi->EnableGC();
    (*jni)->ExceptionClear(jni);
    (*jni)->PopLocalFrame(jni, NULL);
    say("late checks done");
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        if (!init_done && (ev->event_type & JVMPI_REQUESTED_EVENT))
            FAIL("REQUESTED CLASS_LOAD %s before JVM_INIT_DONE", S(ev->u.class_load.class_name));
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        init_done = 1;
        say("JVM_INIT_DONE classes=%d methods=%d", n_classes, n_methods);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        say("summary classes=%d methods=%d requested=%d fails=%d", n_classes, n_methods,
            n_requested, g_fails);
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        FAIL("event type %d was never enabled", (int)ev->event_type);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_ident_classes_lock");
    static const jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE,
                              JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 0);
    say("loaded");
    return JNI_OK;
}
