/* tdview.c — a thread-dump viewer's JNI library, written as in 2002: no JVM_OnLoad, loaded
 * with System.loadLibrary("tdview"), it gets JVMPI itself from the JavaVM of GetJavaVM
 * (tests/it/lifecycle/client_tdview.sh, workload tests/java/TdApp.java).
 *
 *   TdView.init()  GetJavaVM, GetEnv(JVMPI_VERSION_1) into a static JVMPI_Interface
 *                  pointer, NotifyEvent set; nothing enabled (requests only).
 *   TdView.dump()  RequestEvent(MONITOR_DUMP). The handler, which must run on this thread
 *                  before RequestEvent returns, walks the dump; for each Java monitor it
 *                  converts the object id to a jobject (jobjectID2jobject), takes its class
 *                  with JNI and back to an id (jobject2jobjectID), and requests that class's
 *                  CLASS_LOAD, and each owner's and waiter's THREAD_START (GetThreadObject),
 *                  nested inside the dump's handler. Back in the native: each monitor's label
 *                  (its String field "name", read through JNI from jobjectID2jobject), and
 *                  for every owner and waiter GetThreadStatus, SuspendThread, the status
 *                  again, GetCallTrace with a buffer doubled until the trace fits,
 *                  GetMethodClass of each frame (method names from the requested
 *                  CLASS_LOAD), ResumeThread.
 * Lines start with "tdview: "; violations are "tdview: FAIL ...".
 */
#include <jvmpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "tdview"
#define KIT_LINE 4096
#include "kit/out.h"

static JVMPI_Interface *jvmpi; /* the 1.3 way: one static pointer */
static JavaVM *jvm;
static int in_dump, dump_events, nested_ok, nested_outside;

#define MAXMON 32
#define MAXW 16
struct mon {
    jobjectID obj, cls;
    JNIEnv *owner;
    unsigned entry;
    int nenter, nnotify;
    JNIEnv *enter[MAXW], *notify[MAXW];
};
static struct mon mons[MAXMON];
static int nmons;

#define MAXNAMES 256
static struct { JNIEnv *env; char name[64]; } threads[MAXNAMES];
static int nthreads;
static struct { jobjectID id; char name[128]; int nm; jmethodID mid[64]; char mname[64][48]; } classes[MAXNAMES];
static int nclasses;

static const char *thread_name(JNIEnv *e)
{
    for (int i = 0; i < nthreads; i++)
        if (threads[i].env == e)
            return threads[i].name;
    return "?";
}

static int class_known(jobjectID id)
{
    for (int i = 0; i < nclasses; i++)
        if (classes[i].id == id)
            return i;
    return -1;
}

static uint32_t rd_u4(const unsigned char **p)
{
    uint32_t v = ((uint32_t)(*p)[0] << 24) | ((uint32_t)(*p)[1] << 16) | ((uint32_t)(*p)[2] << 8) | (*p)[3];
    *p += 4;
    return v;
}

static void *rd_ptr(const unsigned char **p)
{
    void *v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

static void want_thread(JNIEnv *e)
{
    if (e == NULL || strcmp(thread_name(e), "?") != 0)
        return;
    jobjectID t = jvmpi->GetThreadObject(e);
    if (t == NULL || jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, t) != JVMPI_SUCCESS)
        FAIL("RequestEvent(THREAD_START) for env %p", (void *)e);
}

static void want_class(jobjectID c)
{
    if (c != NULL && class_known(c) < 0 && jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, c) != JVMPI_SUCCESS)
        FAIL("RequestEvent(CLASS_LOAD) for class id %p", (void *)c);
}

static void on_dump(JVMPI_Event *ev, JNIEnv *jni)
{
    const unsigned char *p = (const unsigned char *)ev->u.monitor_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.monitor_dump.end;
    nmons = 0;
    while (p < end) {
        int type = *p++;
        struct mon m;
        memset(&m, 0, sizeof m);
        if (type == JVMPI_MONITOR_JAVA) {
            m.obj = rd_ptr(&p);
        } else if (type == JVMPI_MONITOR_RAW) {
            rd_ptr(&p);
            rd_ptr(&p);
        } else {
            FAIL("monitor dump: record type %d", type);
            return;
        }
        m.owner = rd_ptr(&p);
        m.entry = rd_u4(&p);
        uint32_t n = rd_u4(&p);
        for (uint32_t i = 0; i < n; i++) {
            JNIEnv *e = rd_ptr(&p);
            if (m.nenter < MAXW)
                m.enter[m.nenter++] = e;
        }
        n = rd_u4(&p);
        for (uint32_t i = 0; i < n; i++) {
            JNIEnv *e = rd_ptr(&p);
            if (m.nnotify < MAXW)
                m.nnotify++, m.notify[m.nnotify - 1] = e;
        }
        if (type != JVMPI_MONITOR_JAVA || nmons >= MAXMON)
            continue;
        /* The object's class: id -> jobject -> JNI -> id, then its CLASS_LOAD, nested. */
        jobject o = jvmpi->jobjectID2jobject(m.obj);
        if (o == NULL) {
            FAIL("jobjectID2jobject(%p) of a dumped monitor gave NULL", (void *)m.obj);
            continue;
        }
        jclass c = (*jni)->GetObjectClass(jni, o);
        m.cls = jvmpi->jobject2jobjectID(c);
        if (jvmpi->jobject2jobjectID(o) != m.obj)
            FAIL("jobject2jobjectID(jobjectID2jobject(%p)) is not the same id", (void *)m.obj);
        (*jni)->DeleteLocalRef(jni, c);
        (*jni)->DeleteLocalRef(jni, o);
        want_class(m.cls);
        want_thread(m.owner);
        for (int i = 0; i < m.nenter; i++)
            want_thread(m.enter[i]);
        for (int i = 0; i < m.nnotify; i++)
            want_thread(m.notify[i]);
        mons[nmons++] = m;
    }
}

static void JNICALL notify_event(JVMPI_Event *ev)
{
    int type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    JNIEnv *jni = NULL;
    (*jvm)->GetEnv(jvm, (void **)&jni, JNI_VERSION_1_2);
    switch (type) {
    case JVMPI_EVENT_MONITOR_DUMP:
        dump_events++;
        in_dump++;
        on_dump(ev, jni);
        in_dump--;
        break;
    case JVMPI_EVENT_THREAD_START:
        if (in_dump)
            nested_ok++;
        else
            nested_outside++;
        if (nthreads < MAXNAMES) {
            threads[nthreads].env = ev->u.thread_start.thread_env_id;
            snprintf(threads[nthreads].name, sizeof threads[nthreads].name, "%s",
                     ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
            nthreads++;
        }
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (in_dump)
            nested_ok++;
        if (nclasses < MAXNAMES) {
            int k = nclasses++;
            classes[k].id = ev->u.class_load.class_id;
            snprintf(classes[k].name, sizeof classes[k].name, "%s", ev->u.class_load.class_name);
            for (int i = 0; i < ev->u.class_load.num_methods && classes[k].nm < 64; i++) {
                int j = classes[k].nm++;
                classes[k].mid[j] = ev->u.class_load.methods[i].method_id;
                snprintf(classes[k].mname[j], sizeof classes[k].mname[j], "%s",
                         ev->u.class_load.methods[i].method_name);
            }
        }
        break;
    default:
        FAIL("event %d that was neither enabled nor requested", type);
    }
}

JNIEXPORT jboolean JNICALL Java_TdView_init(JNIEnv *env, jclass cls)
{
    (void)cls;
    if ((*env)->GetJavaVM(env, &jvm) != 0 ||
        (*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("FAIL GetEnv(JVMPI_VERSION_1) on the JavaVM of GetJavaVM failed");
        return JNI_FALSE;
    }
    jvmpi->NotifyEvent = notify_event;
    say("init version=0x%x", (unsigned)jvmpi->version);
    return JNI_TRUE;
}

/* A method's "Class.name", its class from GetMethodClass and that class's CLASS_LOAD. */
static void method_name(jmethodID mid, char *out, size_t n)
{
    jobjectID c = jvmpi->GetMethodClass(mid);
    want_class(c);
    int k = class_known(c);
    snprintf(out, n, "?");
    if (k < 0)
        return;
    for (int j = 0; j < classes[k].nm; j++)
        if (classes[k].mid[j] == mid) {
            snprintf(out, n, "%s.%s", classes[k].name, classes[k].mname[j]);
            return;
        }
    snprintf(out, n, "%s.?", classes[k].name);
}

static void trace_thread(JNIEnv *e)
{
    const char *name = thread_name(e);
    jint before = jvmpi->GetThreadStatus(e);
    jvmpi->SuspendThread(e);
    jint during = jvmpi->GetThreadStatus(e);
    int depth = 1, tries = 0;
    JVMPI_CallFrame *frames = NULL;
    JVMPI_CallTrace t;
    for (;;) {
        tries++;
        free(frames);
        frames = calloc((size_t)depth, sizeof *frames);
        t.env_id = e;
        t.frames = frames;
        t.num_frames = 0;
        jvmpi->GetCallTrace(&t, depth);
        if (t.num_frames < depth || depth >= 1024)
            break;
        depth *= 2;
    }
    char list[2048] = "";
    size_t used = 0;
    for (int i = 0; i < t.num_frames; i++) {
        char m[192];
        method_name(frames[i].method_id, m, sizeof m);
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", m);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    jvmpi->ResumeThread(e);
    say("thread %s status=%d suspended_status=%d frames=%d tries=%d trace=%s", name, (int)before,
        (int)during, (int)t.num_frames, tries, list);
    free(frames);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void names(JNIEnv **envs, int n, char *out, size_t len)
{
    const char *s[MAXW];
    for (int i = 0; i < n; i++)
        s[i] = thread_name(envs[i]);
    qsort(s, (size_t)n, sizeof s[0], cmp_str);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(out);
        snprintf(out + k, len - k, "%s%s", i ? "," : "", s[i]);
    }
}

JNIEXPORT jint JNICALL Java_TdView_dump(JNIEnv *env, jclass cls)
{
    (void)cls;
    int before = dump_events;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    if (rc != JVMPI_SUCCESS) {
        FAIL("RequestEvent(MONITOR_DUMP) returned %d", (int)rc);
        return -1;
    }
    if (dump_events != before + 1)
        FAIL("MONITOR_DUMP's handler had not run when RequestEvent returned");
    say("dump monitors=%d nested=%d nested_outside=%d", nmons, nested_ok, nested_outside);
    JNIEnv *seen[MAXMON * (2 * MAXW + 1)];
    int nseen = 0;
    for (int i = 0; i < nmons; i++) {
        struct mon *m = &mons[i];
        int k = class_known(m->cls);
        char label[128] = "?";
        jobject o = jvmpi->jobjectID2jobject(m->obj);
        jclass c = o ? (*env)->GetObjectClass(env, o) : NULL;
        jfieldID f = c ? (*env)->GetFieldID(env, c, "name", "Ljava/lang/String;") : NULL;
        if (f == NULL) {
            (*env)->ExceptionClear(env);
        } else {
            jstring s = (*env)->GetObjectField(env, o, f);
            const char *u = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
            if (u) {
                snprintf(label, sizeof label, "%s", u);
                (*env)->ReleaseStringUTFChars(env, s, u);
            }
        }
        char en[512], nt[512];
        names(m->enter, m->nenter, en, sizeof en);
        names(m->notify, m->nnotify, nt, sizeof nt);
        say("monitor %s class=%s owner=%s entry=%u enter=[%s] notify=[%s]", label,
            k >= 0 ? classes[k].name : "?", m->owner ? thread_name(m->owner) : "-", m->entry,
            en, nt);
        JNIEnv *all[2 * MAXW + 1];
        int na = 0;
        if (m->owner)
            all[na++] = m->owner;
        for (int j = 0; j < m->nenter; j++)
            all[na++] = m->enter[j];
        for (int j = 0; j < m->nnotify; j++)
            all[na++] = m->notify[j];
        for (int j = 0; j < na; j++) {
            int dup = 0;
            for (int x = 0; x < nseen; x++)
                dup |= seen[x] == all[j];
            if (!dup && all[j] != env) {
                seen[nseen++] = all[j];
                trace_thread(all[j]);
            }
        }
    }
    say("done fails=%d", g_fails);
    return nmons;
}
