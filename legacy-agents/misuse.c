/* misuse.c — a JDK 1.3-style JVMPI agent that misuses every JVMPI function on purpose.
 *
 * The bad-input matrix of tests/it/lifecycle/bad_input.sh. Driven by its option string: "case=all"
 * runs every case, "case=NAME[,case=NAME...]" only those. Each case makes one kind of bad call (a
 * NULL, garbage, freed or dead argument, a call from the wrong thread or at the wrong time,
 * an unbalanced pair), prints what the JVMPI call returned on stdout as
 * "misuse: case NAME <result>", and carries on: a misuse at run time must never stop the VM.
 * Around each case it writes "misuse: >>> NAME" and "misuse: <<< NAME" to stderr, the stream
 * the shim logs to, so that the test can find the shim's log line for each case between the
 * two markers. The agent judges nothing itself except its own set-up ("misuse: FAIL ...");
 * the expected answers live in the test, next to the documentation they come from.
 *
 * Where the cases run: in JVM_OnLoad (calls that are too early), in the JVM_INIT_DONE handler
 * (RunGC from a handler), then on a system thread "misuse-runner" while the application
 * (tests/java/Misuse.java) waits for the system property misuse.done, and on a raw pthread
 * the VM does not know. Handler cases (RunGC inside GC_START, CLASS_LOAD, OBJECT_ALLOC and
 * THREAD_START handlers) are armed by the runner and executed by the handler. The last case
 * runs in an atexit() handler, after JVM_SHUT_DOWN. Ids that must be dead (a freed object,
 * an ended thread) are made first and checked to be dead before they are used.
 *
 * Written as agents of that era were: jvmpi.h, jni.h and libc (with pthreads), JVM_OnLoad,
 * GetEnv, a NotifyEvent switch.
 */
#include <jvmpi.h>

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIT_NAME "misuse"
#include "kit/out.h"
#include "kit/checked.h"

/* ---- output ---- */

static __thread const char *cur_case; /* the case running on this thread */

/* The result line of the current case. */
static void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result(const char *fmt, ...)
{
    char line[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("case %s %s", cur_case ? cur_case : "?", line);
}

static const char *P(const void *p) { return p ? "nonNULL" : "NULL"; }

/* ---- options: which cases ---- */

#define MAX_WANT 64
static char *want_names[MAX_WANT];
static int n_want, want_all;

static int wanted(const char *name)
{
    for (int i = 0; i < n_want; i++)
        if (strcmp(want_names[i], name) == 0)
            return 1;
    return want_all;
}

static void parse_options(const char *options)
{
    if (options == NULL)
        return;
    char *copy = strdup(options), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "case=all") == 0)
            want_all = 1;
        else if (strncmp(t, "case=", 5) == 0 && n_want < MAX_WANT)
            want_names[n_want++] = strdup(t + 5);
    }
    free(copy);
}

/* ---- state shared with the event handler ---- */

static JNIEnv *env_main, *env_runner;
static volatile int init_done;

/* The short-lived system thread whose env and thread id are used once it has ended. */
static volatile JNIEnv *env_short;
static volatile jobjectID short_thread_id;
static volatile int short_ended;

/* Handler cases: armed by the runner, executed once by the handler. */
static volatile int arm_gc_start, arm_class_load, arm_object_alloc, arm_thread_start;
static volatile int did_gc_start, did_class_load, did_object_alloc, did_thread_start;
static volatile int gc_starts, gc_finishes, class_hooks;
static volatile JNIEnv *alloc_env_seen;

/* Garbage that is safe to pass: buffers the agent owns, never JVMPI objects. */
static unsigned char garbage_buf[256];
static unsigned char zero_buf[256];
#define GARBAGE ((void *)garbage_buf)
#define WILD ((void *)0x1234)           /* an unmapped small address */

static jobjectID id_live, id_freed, id_class, id_thread_self;
static jobject live_ref;
static jmethodID mid_valid;
static JVMPI_RawMonitor mon_valid, mon_destroyed;

static JNIEnv *jni_env(void)
{
    JNIEnv *e = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&e, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    return e;
}

static void sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

/* Poll a flag set by another thread, for at most ms. */
static int wait_flag(volatile int *flag, int ms)
{
    for (int i = 0; i < ms && !*flag; i++)
        sleep_ms(1);
    return *flag;
}

/* GC_START count moved past `before` within ms? */
static int wait_gc_after(int before, int ms)
{
    for (int i = 0; i < ms && gc_starts <= before; i++)
        sleep_ms(1);
    return gc_starts > before;
}

/* ---- the cases ---- */

/* EnableEvent / DisableEvent / RequestEvent with numbers that name no event. */
static void c_enable_neg(void) { result("rc=%d", (int)jvmpi->EnableEvent(-1, NULL)); }
static void c_enable_zero(void) { result("rc=%d", (int)jvmpi->EnableEvent(0, NULL)); }
static void c_enable_1000(void) { result("rc=%d", (int)jvmpi->EnableEvent(1000, NULL)); }
static void c_enable_unused(void) { result("rc=%d", (int)jvmpi->EnableEvent(20, NULL)); }
static void c_enable_past_max(void) { result("rc=%d", (int)jvmpi->EnableEvent(JVMPI_MAX_EVENT_TYPE_VAL + 1, NULL)); }
static void c_enable_int_min(void) { result("rc=%d", (int)jvmpi->EnableEvent(INT_MIN, NULL)); }
static void c_enable_request_only(void) { result("rc=%d", (int)jvmpi->EnableEvent(JVMPI_EVENT_HEAP_DUMP, NULL)); }
static void c_disable_neg(void) { result("rc=%d", (int)jvmpi->DisableEvent(-1, NULL)); }
static void c_disable_zero(void) { result("rc=%d", (int)jvmpi->DisableEvent(0, NULL)); }
static void c_disable_1000(void) { result("rc=%d", (int)jvmpi->DisableEvent(1000, NULL)); }
static void c_disable_unused(void) { result("rc=%d", (int)jvmpi->DisableEvent(20, NULL)); }
static void c_disable_request_only(void) { result("rc=%d", (int)jvmpi->DisableEvent(JVMPI_EVENT_MONITOR_DUMP, NULL)); }
static void c_request_neg(void) { result("rc=%d", (int)jvmpi->RequestEvent(-1, NULL)); }
static void c_request_zero(void) { result("rc=%d", (int)jvmpi->RequestEvent(0, NULL)); }
static void c_request_1000(void) { result("rc=%d", (int)jvmpi->RequestEvent(1000, NULL)); }
static void c_request_unused(void) { result("rc=%d", (int)jvmpi->RequestEvent(20, NULL)); }
static void c_request_method_entry(void) { result("rc=%d", (int)jvmpi->RequestEvent(JVMPI_EVENT_METHOD_ENTRY, NULL)); }
static void c_request_gc_start(void) { result("rc=%d", (int)jvmpi->RequestEvent(JVMPI_EVENT_GC_START, NULL)); }

/* RequestEvent with ids of the wrong kind, or of nothing. */
static void req(jint type, void *arg) { result("rc=%d", (int)jvmpi->RequestEvent(type, arg)); }
static void c_req_alloc_null(void) { req(JVMPI_EVENT_OBJECT_ALLOC, NULL); }
static void c_req_alloc_wild(void) { req(JVMPI_EVENT_OBJECT_ALLOC, WILD); }
static void c_req_alloc_freed(void) { req(JVMPI_EVENT_OBJECT_ALLOC, id_freed); }
static void c_req_alloc_env(void) { req(JVMPI_EVENT_OBJECT_ALLOC, env_runner); }
static void c_req_objdump_null(void) { req(JVMPI_EVENT_OBJECT_DUMP, NULL); }
static void c_req_objdump_wild(void) { req(JVMPI_EVENT_OBJECT_DUMP, WILD); }
static void c_req_objdump_freed(void) { req(JVMPI_EVENT_OBJECT_DUMP, id_freed); }
static void c_req_thread_null(void) { req(JVMPI_EVENT_THREAD_START, NULL); }
static void c_req_thread_wild(void) { req(JVMPI_EVENT_THREAD_START, WILD); }
static void c_req_thread_classid(void) { req(JVMPI_EVENT_THREAD_START, id_class); }
static void c_req_thread_object(void) { req(JVMPI_EVENT_THREAD_START, id_live); }
static void c_req_thread_dead(void) { req(JVMPI_EVENT_THREAD_START, (void *)short_thread_id); }
static void c_req_class_null(void) { req(JVMPI_EVENT_CLASS_LOAD, NULL); }
static void c_req_class_wild(void) { req(JVMPI_EVENT_CLASS_LOAD, WILD); }
static void c_req_class_threadid(void) { req(JVMPI_EVENT_CLASS_LOAD, id_thread_self); }
static void c_req_class_object(void) { req(JVMPI_EVENT_CLASS_LOAD, id_live); }
static void c_req_class_freed(void) { req(JVMPI_EVENT_CLASS_LOAD, id_freed); }
static void c_req_heapdump_level7(void)
{
    JVMPI_HeapDumpArg a = {7};
    req(JVMPI_EVENT_HEAP_DUMP, &a);
}
static void c_req_heapdump_level_neg(void)
{
    JVMPI_HeapDumpArg a = {-1};
    req(JVMPI_EVENT_HEAP_DUMP, &a);
}

/* Thread functions with NULL, garbage and ended threads. */
static void c_threadobj_null(void) { result("ret=%s", P(jvmpi->GetThreadObject(NULL))); }
static void c_threadobj_garbage(void) { result("ret=%s", P(jvmpi->GetThreadObject(GARBAGE))); }
static void c_threadobj_dead(void) { result("ret=%s", P(jvmpi->GetThreadObject((JNIEnv *)env_short))); }
static void c_suspend_null(void) { jvmpi->SuspendThread(NULL); result("returned"); }
static void c_suspend_garbage(void) { jvmpi->SuspendThread(GARBAGE); result("returned"); }
static void c_suspend_dead(void) { jvmpi->SuspendThread((JNIEnv *)env_short); result("returned"); }
static void c_resume_null(void) { jvmpi->ResumeThread(NULL); result("returned"); }
static void c_resume_garbage(void) { jvmpi->ResumeThread(GARBAGE); result("returned"); }
static void c_resume_dead(void) { jvmpi->ResumeThread((JNIEnv *)env_short); result("returned"); }
static void c_status_null(void) { result("ret=%d", (int)jvmpi->GetThreadStatus(NULL)); }
static void c_status_garbage(void) { result("ret=%d", (int)jvmpi->GetThreadStatus(GARBAGE)); }
static void c_status_dead(void) { result("ret=%d", (int)jvmpi->GetThreadStatus((JNIEnv *)env_short)); }
static void c_hasrun_null(void) { result("ret=%d", (int)jvmpi->ThreadHasRun(NULL)); }
static void c_hasrun_garbage(void) { result("ret=%d", (int)jvmpi->ThreadHasRun(GARBAGE)); }
static void c_hasrun_dead(void) { result("ret=%d", (int)jvmpi->ThreadHasRun((JNIEnv *)env_short)); }
static void c_suspendlist_bad_entries(void)
{
    JNIEnv *list[3] = {NULL, GARBAGE, (JNIEnv *)env_short};
    jint res[3] = {-7, -7, -7};
    jvmpi->SuspendThreadList(3, list, res);
    result("results=%d,%d,%d", (int)res[0], (int)res[1], (int)res[2]);
}
static void c_resumelist_bad_entries(void)
{
    JNIEnv *list[3] = {NULL, GARBAGE, (JNIEnv *)env_short};
    jint res[3] = {-7, -7, -7};
    jvmpi->ResumeThreadList(3, list, res);
    result("results=%d,%d,%d", (int)res[0], (int)res[1], (int)res[2]);
}
static void c_suspendlist_null_list(void)
{
    jint res[2] = {-7, -7};
    jvmpi->SuspendThreadList(2, NULL, res);
    result("results=%d,%d", (int)res[0], (int)res[1]);
}
static void c_suspendlist_neg_count(void)
{
    JNIEnv *list[1] = {env_main};
    jint res[1] = {-7};
    jvmpi->SuspendThreadList(-1, list, res);
    result("results=%d status_main=%d", (int)res[0], (int)jvmpi->GetThreadStatus(env_main));
}
static void c_resumelist_null_results(void)
{
    JNIEnv *list[1] = {env_main};
    jvmpi->ResumeThreadList(1, list, NULL);
    result("returned");
}
static void c_tls_set_null(void) { jvmpi->SetThreadLocalStorage(NULL, (void *)0x77); result("get_null=%s", P(jvmpi->GetThreadLocalStorage(NULL))); }
static void c_tls_set_garbage(void) { jvmpi->SetThreadLocalStorage(GARBAGE, (void *)0x77); result("returned"); }
static void c_tls_set_dead(void) { jvmpi->SetThreadLocalStorage((JNIEnv *)env_short, (void *)0x77); result("returned"); }
static void c_tls_get_null(void) { result("ret=%s", P(jvmpi->GetThreadLocalStorage(NULL))); }
static void c_tls_get_garbage(void) { result("ret=%s", P(jvmpi->GetThreadLocalStorage(GARBAGE))); }

/* Object and method ids. */
static void c_id2obj_null(void) { result("ret=%s", P(jvmpi->jobjectID2jobject(NULL))); }
static void c_id2obj_wild(void) { result("ret=%s", P(jvmpi->jobjectID2jobject(WILD))); }
static void c_id2obj_freed(void) { result("ret=%s", P(jvmpi->jobjectID2jobject(id_freed))); }
/* An id far above every one issued: near the top of x86-64's 41-bit id space; on i386 the
 * top multiple of 8 of the 32 bits, which a run reaches only after some 500 M objects. */
#define FAR_ID ((jobjectID)(sizeof(void *) == 4 ? (unsigned long)0xfffffff8UL : (unsigned long)0x7ffffff8000ULL))
static void c_id2obj_far(void) { result("ret=%s", P(jvmpi->jobjectID2jobject(FAR_ID))); }
static void c_obj2id_null(void) { result("ret=%s", P(jvmpi->jobject2jobjectID(NULL))); }
static void c_methodclass_null(void) { result("ret=%s", P(jvmpi->GetMethodClass(NULL))); }
static void c_methodclass_zeroed(void) { result("ret=%s", P(jvmpi->GetMethodClass((jmethodID)zero_buf))); }
static void c_methodclass_wild(void) { result("ret=%s", P(jvmpi->GetMethodClass((jmethodID)WILD))); }
static void c_methodclass_garbage(void) { result("ret=%s", P(jvmpi->GetMethodClass((jmethodID)GARBAGE))); }
static void c_methodclass_objid(void) { result("ret=%s", P(jvmpi->GetMethodClass((jmethodID)id_class))); }
/* The right use, with an id from JNI rather than from an event: it must still work. */
static void c_methodclass_jni(void) { result("ret=%s", jvmpi->GetMethodClass(mid_valid) ? "class" : "NULL"); }

/* GetCallTrace with bad traces. num_frames starts at 77 so that "untouched" shows. */
static void trace_of(JNIEnv *env, int with_frames, jint depth)
{
    JVMPI_CallFrame frames[8];
    JVMPI_CallTrace t;
    t.env_id = env;
    t.num_frames = 77;
    t.frames = with_frames ? frames : NULL;
    jvmpi->GetCallTrace(&t, depth);
    result("num_frames=%d", (int)t.num_frames);
}
static void c_trace_null_env(void) { trace_of(NULL, 1, 8); }
static void c_trace_garbage_env(void) { trace_of(GARBAGE, 1, 8); }
static void c_trace_dead_env(void) { trace_of((JNIEnv *)env_short, 1, 8); }
static void c_trace_null_trace(void) { jvmpi->GetCallTrace(NULL, 8); result("returned"); }
static void c_trace_null_frames(void) { trace_of(env_main, 0, 8); }
static void c_trace_depth0(void) { trace_of(env_main, 1, 0); }
static void c_trace_depth_neg(void) { trace_of(env_main, 1, -5); }

/* Raw monitors: NULL, destroyed, never created. */
static void rm_all(JVMPI_RawMonitor m, int op)
{
    switch (op) {
    case 0: jvmpi->RawMonitorEnter(m); break;
    case 1: jvmpi->RawMonitorExit(m); break;
    case 2: jvmpi->RawMonitorWait(m, 0); break;    /* would wait forever if it waited */
    case 3: jvmpi->RawMonitorNotifyAll(m); break;
    default: jvmpi->RawMonitorDestroy(m); break;
    }
    result("returned");
}
static void c_rm_enter_null(void) { rm_all(NULL, 0); }
static void c_rm_exit_null(void) { rm_all(NULL, 1); }
static void c_rm_wait_null(void) { rm_all(NULL, 2); }
static void c_rm_notify_null(void) { rm_all(NULL, 3); }
static void c_rm_destroy_null(void) { rm_all(NULL, 4); }
static void c_rm_enter_destroyed(void) { rm_all(mon_destroyed, 0); }
static void c_rm_exit_destroyed(void) { rm_all(mon_destroyed, 1); }
static void c_rm_wait_destroyed(void) { rm_all(mon_destroyed, 2); }
static void c_rm_notify_destroyed(void) { rm_all(mon_destroyed, 3); }
static void c_rm_destroy_destroyed(void) { rm_all(mon_destroyed, 4); }
static void c_rm_enter_garbage(void) { rm_all((JVMPI_RawMonitor)GARBAGE, 0); }
static void c_rm_exit_garbage(void) { rm_all((JVMPI_RawMonitor)GARBAGE, 1); }
static void c_rm_wait_garbage(void) { rm_all((JVMPI_RawMonitor)GARBAGE, 2); }
static void c_rm_notify_garbage(void) { rm_all((JVMPI_RawMonitor)GARBAGE, 3); }
static void c_rm_destroy_garbage(void) { rm_all((JVMPI_RawMonitor)GARBAGE, 4); }
static void c_rm_exit_not_owned(void)
{
    jvmpi->RawMonitorExit(mon_valid);
    /* Still usable, and really not owned by anyone now: enter, exit. */
    jvmpi->RawMonitorEnter(mon_valid);
    jvmpi->RawMonitorExit(mon_valid);
    result("returned usable=yes");
}
static void c_rm_wait_not_owned(void) { jvmpi->RawMonitorWait(mon_valid, 0); result("returned"); }
static void c_rm_notify_not_owned(void) { jvmpi->RawMonitorNotifyAll(mon_valid); result("returned"); }
static void c_rm_create_null_name(void)
{
    JVMPI_RawMonitor m = jvmpi->RawMonitorCreate(NULL);
    if (m != NULL) {
        jvmpi->RawMonitorEnter(m);
        jvmpi->RawMonitorExit(m);
        jvmpi->RawMonitorDestroy(m);
    }
    result("ret=%s", P(m));
}

/* A monitor held by another (raw) thread while this one exits and destroys it. */
static JVMPI_RawMonitor mon_other;
static volatile int other_owns, other_release;
static void *other_owner(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(mon_other);
    other_owns = 1;
    while (!other_release)
        sleep_ms(1);
    jvmpi->RawMonitorExit(mon_other);
    other_owns = 0;
    return NULL;
}
static pthread_t other_tid;
static int other_start(void)
{
    mon_other = jvmpi->RawMonitorCreate("misuse_other");
    other_owns = other_release = 0;
    if (pthread_create(&other_tid, NULL, other_owner, NULL) != 0)
        return 0;
    return wait_flag(&other_owns, 10000);
}
static void other_stop(void)
{
    other_release = 1;
    pthread_join(other_tid, NULL);
}
static void c_rm_exit_other_owner(void)
{
    if (!other_start()) {
        say("FAIL could not set up a monitor owned by another thread");
        return;
    }
    jvmpi->RawMonitorExit(mon_other);
    /* The owner must still own it: the second Exit of ours changes nothing either. */
    other_stop();
    jvmpi->RawMonitorEnter(mon_other);
    jvmpi->RawMonitorExit(mon_other);
    jvmpi->RawMonitorDestroy(mon_other);
    result("returned usable=yes");
}
static void c_rm_destroy_other_owner(void)
{
    if (!other_start()) {
        say("FAIL could not set up a monitor owned by another thread");
        return;
    }
    jvmpi->RawMonitorDestroy(mon_other);
    other_stop();
    /* Not destroyed: it still works. */
    jvmpi->RawMonitorEnter(mon_other);
    jvmpi->RawMonitorExit(mon_other);
    jvmpi->RawMonitorDestroy(mon_other);
    result("returned usable=yes");
}

/* CreateSystemThread misuse (the too-early call is made in JVM_OnLoad). */
static volatile int never_ran;
static void never_f(void *arg) { (void)arg; never_ran = 1; }
static void c_cst_onload(void) { result("rc=%d", (int)jvmpi->CreateSystemThread("misuse-early", JVMPI_NORMAL_PRIORITY, never_f)); }
static void c_cst_null_f(void) { result("rc=%d", (int)jvmpi->CreateSystemThread("misuse-nullf", JVMPI_NORMAL_PRIORITY, NULL)); }
static void c_cst_priority_7(void)
{
    jint rc = jvmpi->CreateSystemThread("misuse-prio7", 7, never_f);
    sleep_ms(50);
    result("rc=%d ran=%s", (int)rc, never_ran ? "yes" : "no");
}

/* DisableGC / EnableGC out of balance, and RunGC in awkward places. */
static void c_enablegc_unbalanced(void)
{
    jvmpi->EnableGC();
    /* Brackets still come: a collection now is followed by GC_START. */
    int before = gc_starts;
    jvmpi->RunGC();
    result("bracket_after=%s", wait_gc_after(before, 10000) ? "yes" : "no");
}
static void c_disablegc_rungc(void)
{
    int before = gc_starts;
    jvmpi->DisableGC();
    jvmpi->DisableGC(); /* nested */
    jvmpi->RunGC();
    sleep_ms(300);
    int held = gc_starts == before;
    jvmpi->EnableGC();
    sleep_ms(100);
    int held2 = gc_starts == before;
    jvmpi->EnableGC();
    result("held=%s held_nested=%s bracket_after=%s", held ? "yes" : "no", held2 ? "yes" : "no",
           wait_gc_after(before, 10000) ? "yes" : "no");
}
static void c_rungc_in_gc_start(void)
{
    arm_gc_start = 1;
    int before = gc_starts;
    jvmpi->RunGC();
    int did = wait_flag(&did_gc_start, 10000);
    /* The collection run inside the handler gets its own bracket after this one. */
    int next = wait_gc_after(before + 1, 10000);
    result("handler_ran=%s next_bracket=%s", did ? "yes" : "no", next ? "yes" : "no");
}
static void c_rungc_in_class_load(void)
{
    JNIEnv *jni = jni_env();
    arm_class_load = 1;
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jclass c = (*jni)->FindClass(jni, "MisuseLoadee");
    if (c == NULL)
        (*jni)->ExceptionClear(jni);
    int did = wait_flag(&did_class_load, 10000);
    jvmpi->DisableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    result("enable=%d loaded=%s handler_ran=%s", (int)rc, P(c), did ? "yes" : "no");
}
static void c_rungc_in_object_alloc(void)
{
    JNIEnv *jni = jni_env();
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    arm_object_alloc = 1;
    jbyteArray a = (*jni)->NewByteArray(jni, 100);
    int did = wait_flag(&did_object_alloc, 10000);
    jvmpi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    arm_object_alloc = 0;
    result("enable=%d array=%s handler_ran=%s on_this_thread=%s", (int)rc, P(a),
           did ? "yes" : "no", alloc_env_seen == env_runner ? "yes" : "no");
}
static void c_rungc_in_thread_start(void)
{
    /* Armed before the short-lived thread started (see prepare()). */
    result("handler_ran=%s", did_thread_start ? "yes" : "no");
}
static void c_rungc_in_init_done(void)
{
    /* In the JVM_INIT_DONE handler, on main: the collection happens and RunGC returns. */
    JNIEnv *jni = jni_env();
    jclass oc = (*jni)->FindClass(jni, "java/lang/Object");
    jobject o = (*jni)->AllocObject(jni, oc);
    jweak w = (*jni)->NewWeakGlobalRef(jni, o);
    (*jni)->DeleteLocalRef(jni, o);
    jvmpi->RunGC();
    int gone = (*jni)->IsSameObject(jni, w, NULL);
    (*jni)->DeleteWeakGlobalRef(jni, w);
    result("returned collected=%s", gone ? "yes" : "no");
}

/* ---- calls from a thread the VM does not know ---- */

static void c_raw_tls_null(void) { jvmpi->SetThreadLocalStorage(NULL, (void *)0x55); result("returned"); }
static void c_raw_tls_garbage(void) { jvmpi->SetThreadLocalStorage(GARBAGE, (void *)0x55); result("returned"); }
static void c_raw_tls_other(void)
{
    /* Setting another thread's storage is what the env argument is for: it works. */
    void *old = jvmpi->GetThreadLocalStorage(env_runner);
    jvmpi->SetThreadLocalStorage(env_runner, (void *)0x5a5a);
    void *got = jvmpi->GetThreadLocalStorage(env_runner);
    result("got=%p", got);
    jvmpi->SetThreadLocalStorage(env_runner, old);
}
static void c_raw_trace(void) { trace_of(env_main, 1, 8); }
static void c_raw_req_alloc(void) { req(JVMPI_EVENT_OBJECT_ALLOC, id_live); }
static void c_raw_req_thread(void) { req(JVMPI_EVENT_THREAD_START, id_thread_self); }
static void c_raw_req_class(void) { req(JVMPI_EVENT_CLASS_LOAD, id_class); }
static void c_raw_req_objdump(void) { req(JVMPI_EVENT_OBJECT_DUMP, id_live); }
static void c_raw_req_heapdump(void) { req(JVMPI_EVENT_HEAP_DUMP, NULL); }
static void c_raw_id2obj(void) { result("ret=%s", P(jvmpi->jobjectID2jobject(id_live))); }
static void c_raw_obj2id(void) { result("ret=%s", P(jvmpi->jobject2jobjectID(live_ref))); }
static void c_raw_threadobj(void) { result("ret=%s", P(jvmpi->GetThreadObject(env_main))); }
static void c_raw_methodclass(void) { result("ret=%s", P(jvmpi->GetMethodClass(mid_valid))); }
static void c_raw_status(void) { result("ret=%d", (int)jvmpi->GetThreadStatus(env_main)); }
static void c_raw_hasrun(void) { result("ret=%d", (int)jvmpi->ThreadHasRun(env_main)); }
static void c_raw_suspend(void)
{
    jvmpi->SuspendThread(env_main);
    jint st = jvmpi->GetThreadStatus(env_main);
    jvmpi->ResumeThread(env_main);
    result("returned status=%d", (int)st);
}
static void c_raw_rungc(void) { jvmpi->RunGC(); result("returned"); }
static void c_raw_disable_enable_gc(void) { jvmpi->DisableGC(); jvmpi->EnableGC(); result("returned"); }
static void c_raw_cpu(void) { result("cpu_ok=%s", jvmpi->GetCurrentThreadCpuTime() >= 0 ? "yes" : "no"); }
static void c_raw_rawmon(void)
{
    jvmpi->RawMonitorEnter(mon_valid);
    jvmpi->RawMonitorNotifyAll(mon_valid);
    jvmpi->RawMonitorWait(mon_valid, 1);
    jvmpi->RawMonitorExit(mon_valid);
    result("returned");
}
static void c_raw_enable(void) { result("rc=%d", (int)jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL)); }
static volatile int raw_created_ran;
static void raw_created_f(void *arg) { (void)arg; raw_created_ran = 1; }
static void c_raw_create_system_thread(void)
{
    jint rc = jvmpi->CreateSystemThread("misuse-from-raw", JVMPI_NORMAL_PRIORITY, raw_created_f);
    result("rc=%d ran=%s", (int)rc, wait_flag(&raw_created_ran, 10000) ? "yes" : "no");
}

/* After raw_enable: the event it enabled from the unknown thread really comes. */
static void c_raw_enable_effect(void)
{
    JNIEnv *jni = jni_env();
    int before = class_hooks;
    jclass c = (*jni)->FindClass(jni, "MisuseHooked");
    if (c == NULL)
        (*jni)->ExceptionClear(jni);
    jvmpi->DisableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL);
    result("loaded=%s delivered=%s", P(c), class_hooks > before ? "yes" : "no");
}

/* ---- the table ---- */

enum where { ONLOAD, INIT, RUNNER, RAW, AFTER_RAW };
struct mcase {
    const char *name;
    enum where where;
    void (*run)(void);
    int only_by_name;   /* not part of case=all (see the comment where it is listed) */
};

#define C(n, w) {#n, w, c_##n, 0}
#define C_BY_NAME(n, w) {#n, w, c_##n, 1}
static const struct mcase cases[] = {
    C(cst_onload, ONLOAD),
    C(rungc_in_init_done, INIT),
    C(enable_neg, RUNNER), C(enable_zero, RUNNER), C(enable_1000, RUNNER),
    C(enable_unused, RUNNER), C(enable_past_max, RUNNER), C(enable_int_min, RUNNER),
    C(enable_request_only, RUNNER),
    C(disable_neg, RUNNER), C(disable_zero, RUNNER), C(disable_1000, RUNNER),
    C(disable_unused, RUNNER), C(disable_request_only, RUNNER),
    C(request_neg, RUNNER), C(request_zero, RUNNER), C(request_1000, RUNNER),
    C(request_unused, RUNNER), C(request_method_entry, RUNNER), C(request_gc_start, RUNNER),
    C(req_alloc_null, RUNNER), C(req_alloc_wild, RUNNER), C(req_alloc_freed, RUNNER),
    C(req_alloc_env, RUNNER), C(req_objdump_null, RUNNER), C(req_objdump_wild, RUNNER),
    C(req_objdump_freed, RUNNER), C(req_thread_null, RUNNER), C(req_thread_wild, RUNNER),
    C(req_thread_classid, RUNNER), C(req_thread_object, RUNNER), C(req_thread_dead, RUNNER),
    C(req_class_null, RUNNER), C(req_class_wild, RUNNER), C(req_class_threadid, RUNNER),
    C(req_class_object, RUNNER), C(req_class_freed, RUNNER), C(req_heapdump_level7, RUNNER),
    C(req_heapdump_level_neg, RUNNER),
    C(threadobj_null, RUNNER), C(threadobj_garbage, RUNNER), C(threadobj_dead, RUNNER),
    C(suspend_null, RUNNER), C(suspend_garbage, RUNNER), C(suspend_dead, RUNNER),
    C(resume_null, RUNNER), C(resume_garbage, RUNNER), C(resume_dead, RUNNER),
    C(status_null, RUNNER), C(status_garbage, RUNNER), C(status_dead, RUNNER),
    C(hasrun_null, RUNNER), C(hasrun_garbage, RUNNER), C(hasrun_dead, RUNNER),
    C(suspendlist_bad_entries, RUNNER), C(resumelist_bad_entries, RUNNER),
    C(suspendlist_null_list, RUNNER), C(suspendlist_neg_count, RUNNER),
    C(resumelist_null_results, RUNNER),
    C(tls_set_null, RUNNER), C(tls_set_garbage, RUNNER), C(tls_set_dead, RUNNER),
    C(tls_get_null, RUNNER), C(tls_get_garbage, RUNNER),
    C(id2obj_null, RUNNER), C(id2obj_wild, RUNNER), C(id2obj_freed, RUNNER),
    C(id2obj_far, RUNNER), C(obj2id_null, RUNNER),
    C(methodclass_null, RUNNER), C(methodclass_zeroed, RUNNER),
    /* A jmethodID is a pointer that JVMTI dereferences unchecked (these crashed HotSpot
     * 1.4.2): the shim hands JVMTI only ids of methods of loaded classes. */
    C(methodclass_wild, RUNNER), C(methodclass_garbage, RUNNER),
    C(methodclass_objid, RUNNER), C(methodclass_jni, RUNNER),
    C(trace_null_env, RUNNER), C(trace_garbage_env, RUNNER), C(trace_dead_env, RUNNER),
    C(trace_null_trace, RUNNER), C(trace_null_frames, RUNNER), C(trace_depth0, RUNNER),
    C(trace_depth_neg, RUNNER),
    C(rm_enter_null, RUNNER), C(rm_exit_null, RUNNER), C(rm_wait_null, RUNNER),
    C(rm_notify_null, RUNNER), C(rm_destroy_null, RUNNER),
    C(rm_enter_destroyed, RUNNER), C(rm_exit_destroyed, RUNNER), C(rm_wait_destroyed, RUNNER),
    C(rm_notify_destroyed, RUNNER), C(rm_destroy_destroyed, RUNNER),
    C(rm_enter_garbage, RUNNER), C(rm_exit_garbage, RUNNER), C(rm_wait_garbage, RUNNER),
    C(rm_notify_garbage, RUNNER), C(rm_destroy_garbage, RUNNER),
    C(rm_exit_not_owned, RUNNER), C(rm_wait_not_owned, RUNNER), C(rm_notify_not_owned, RUNNER),
    C(rm_exit_other_owner, RUNNER), C(rm_destroy_other_owner, RUNNER),
    C(rm_create_null_name, RUNNER),
    C(cst_null_f, RUNNER), C(cst_priority_7, RUNNER),
    C(enablegc_unbalanced, RUNNER), C(disablegc_rungc, RUNNER), C(rungc_in_gc_start, RUNNER),
    C(rungc_in_class_load, RUNNER), C(rungc_in_object_alloc, RUNNER),
    C(rungc_in_thread_start, RUNNER),
    C(raw_tls_null, RAW), C(raw_tls_garbage, RAW), C(raw_tls_other, RAW), C(raw_trace, RAW),
    C(raw_req_alloc, RAW), C(raw_req_thread, RAW), C(raw_req_class, RAW),
    C(raw_req_objdump, RAW), C(raw_req_heapdump, RAW), C(raw_id2obj, RAW), C(raw_obj2id, RAW),
    C(raw_threadobj, RAW), C(raw_methodclass, RAW), C(raw_status, RAW), C(raw_hasrun, RAW),
    C(raw_suspend, RAW), C(raw_rungc, RAW), C(raw_disable_enable_gc, RAW), C(raw_cpu, RAW),
    C(raw_rawmon, RAW), C(raw_enable, RAW),
    C(raw_create_system_thread, RAW), /* last on the raw thread: it attaches the thread */
    C(raw_enable_effect, AFTER_RAW),
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int wanted_case(const struct mcase *c)
{
    for (int i = 0; i < n_want; i++)
        if (strcmp(want_names[i], c->name) == 0)
            return 1;
    return want_all && !c->only_by_name;
}

static void run_one(const struct mcase *c)
{
    cur_case = c->name;
    fprintf(stderr, "misuse: >>> %s\n", c->name);
    fflush(stderr);
    c->run();
    fprintf(stderr, "misuse: <<< %s\n", c->name);
    fflush(stderr);
    cur_case = NULL;
}

static int run_where(enum where w)
{
    int n = 0;
    for (int i = 0; i < NCASES; i++)
        if (cases[i].where == w && wanted_case(&cases[i])) {
            run_one(&cases[i]);
            n++;
        }
    return n;
}

static int any_where(enum where w)
{
    for (int i = 0; i < NCASES; i++)
        if (cases[i].where == w && wanted_case(&cases[i]))
            return 1;
    return 0;
}

/* ---- set-up on the runner ---- */

static void short_f(void *arg)
{
    (void)arg;
    /* Returns at once: its env and thread id are used once THREAD_END has come. */
}

static void *raw_main(void *arg)
{
    (void)arg;
    JNIEnv *e = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&e, JNI_VERSION_1_2) != JNI_EDETACHED)
        say("FAIL the raw thread is known to the VM");
    run_where(RAW);
    return NULL;
}

/* Materials: live and freed ids, an ended thread, a destroyed monitor. */
static int prepare(JNIEnv *jni)
{
    env_runner = jni;
    memset(garbage_buf, 0x5a, sizeof garbage_buf);
    if (mon_valid == NULL)
        mon_valid = jvmpi->RawMonitorCreate("misuse_valid");
    mon_destroyed = jvmpi->RawMonitorCreate("misuse_destroyed");
    jvmpi->RawMonitorDestroy(mon_destroyed);

    jclass oc = (*jni)->FindClass(jni, "java/lang/Object");
    jobject o = (*jni)->AllocObject(jni, oc);
    live_ref = (*jni)->NewGlobalRef(jni, o);
    id_live = jvmpi->jobject2jobjectID(live_ref);
    (*jni)->DeleteLocalRef(jni, o);

    o = (*jni)->AllocObject(jni, oc);
    id_freed = jvmpi->jobject2jobjectID(o);
    jweak w = (*jni)->NewWeakGlobalRef(jni, o);
    (*jni)->DeleteLocalRef(jni, o);
    jvmpi->RunGC();
    int collected = (*jni)->IsSameObject(jni, w, NULL);
    (*jni)->DeleteWeakGlobalRef(jni, w);

    jclass sc = (*jni)->FindClass(jni, "java/lang/String");
    id_class = jvmpi->jobject2jobjectID(sc);
    id_thread_self = jvmpi->GetThreadObject(jni);
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    mid_valid = (*jni)->GetStaticMethodID(jni, sys, "currentTimeMillis", "()J");

    /* An ended thread. Its THREAD_START handler also runs the RunGC-in-THREAD_START case. */
    arm_thread_start = wanted("rungc_in_thread_start");
    jint rc = jvmpi->CreateSystemThread("misuse-shortlived", JVMPI_NORMAL_PRIORITY, short_f);
    int ended = rc == JNI_OK && wait_flag(&short_ended, 10000);
    /* THREAD_END is posted before the shim forgets the thread: wait until it has. */
    int forgotten = 0;
    for (int i = 0; ended && i < 5000 && !forgotten; i++) {
        forgotten = jvmpi->GetThreadObject((JNIEnv *)env_short) == NULL;
        if (!forgotten)
            sleep_ms(1);
    }
    /* The values the shim should name in its log lines, for the test. */
    say("addresses garbage=%p dead=%p freed=%p classid=%p selfthread=%p live=%p deadthread=%p "
        "destroyed=%p main=%p runner=%p far=%p", GARBAGE, (void *)env_short, (void *)id_freed,
        (void *)id_class, (void *)id_thread_self, (void *)id_live, (void *)short_thread_id,
        (void *)mon_destroyed, (void *)env_main, (void *)env_runner, (void *)FAR_ID);
    say("materials live=%s freed=%s freed_collected=%s class=%s thread_self=%s mid=%s "
        "short_env=%s short_id=%s short_ended=%s short_forgotten=%s",
        P(id_live), P(id_freed), collected ? "yes" : "no", P(id_class), P(id_thread_self),
        P(mid_valid), P((void *)env_short), P((void *)short_thread_id), ended ? "yes" : "no",
        forgotten ? "yes" : "no");
    if (!collected || id_live == NULL || id_freed == NULL || id_class == NULL ||
        id_thread_self == NULL || mid_valid == NULL || !ended || !forgotten ||
        short_thread_id == NULL) {
        say("FAIL could not prepare the materials");
        return 0;
    }
    return 1;
}

static void set_done_property(JNIEnv *jni)
{
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID sp = sys ? (*jni)->GetStaticMethodID(jni, sys, "setProperty",
                                                   "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;")
                       : NULL;
    if (sp != NULL) {
        jstring k = (*jni)->NewStringUTF(jni, "misuse.done");
        jstring v = (*jni)->NewStringUTF(jni, "yes");
        (*jni)->CallStaticObjectMethod(jni, sys, sp, k, v);
    }
    if (sp == NULL || (*jni)->ExceptionCheck(jni)) {
        say("FAIL could not set misuse.done through JNI");
        (*jni)->ExceptionClear(jni);
    }
}

static void runner_main(void *arg)
{
    (void)arg;
    JNIEnv *jni = jni_env();
    int n = 0;
    if (jni != NULL && prepare(jni)) {
        /* GC brackets are counted for the GC cases. */
        jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL);
        jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL);
        n += run_where(RUNNER);
        if (any_where(RAW)) {
            pthread_t t;
            if (pthread_create(&t, NULL, raw_main, NULL) == 0)
                pthread_join(t, NULL);
            else
                say("FAIL pthread_create");
            for (int i = 0; i < NCASES; i++)
                if (cases[i].where == RAW && wanted_case(&cases[i]))
                    n++;
        }
        n += run_where(AFTER_RAW);
    }
    say("runner done cases=%d", n);
    set_done_property(jni);
}

/* ---- after JVM_SHUT_DOWN ---- */

static volatile int shut_down_seen;
static void at_exit_calls(void)
{
    cur_case = "after_shutdown_atexit";
    fprintf(stderr, "misuse: >>> %s\n", cur_case);
    fflush(stderr);
    jlong cpu = jvmpi->GetCurrentThreadCpuTime();
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->RawMonitorEnter(mon_valid);
    jvmpi->RawMonitorExit(mon_valid);
    result("returned shut_down_seen=%s cpu=%s enable=%d", shut_down_seen ? "yes" : "no",
           cpu == -1 ? "-1" : "other", (int)rc);
    fprintf(stderr, "misuse: <<< %s\n", cur_case);
    fflush(stderr);
}

/* ---- events ---- */

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        env_main = ev->env_id;
        init_done = 1;
        run_where(INIT);
        if (any_where(RUNNER) || any_where(RAW) || any_where(AFTER_RAW)) {
            jint rc = jvmpi->CreateSystemThread("misuse-runner", JVMPI_NORMAL_PRIORITY, runner_main);
            if (rc != JNI_OK)
                say("FAIL CreateSystemThread(misuse-runner) rc=%d", (int)rc);
        } else {
            set_done_property(jni_env());
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down_seen = 1;
        say("JVM_SHUT_DOWN");
        break;
    case JVMPI_EVENT_THREAD_START:
        if (ev->u.thread_start.thread_name != NULL &&
            strcmp(ev->u.thread_start.thread_name, "misuse-shortlived") == 0) {
            env_short = ev->u.thread_start.thread_env_id;
            short_thread_id = ev->u.thread_start.thread_id;
            if (arm_thread_start) {
                arm_thread_start = 0;
                jvmpi->RunGC();
                did_thread_start = 1;
            }
        }
        break;
    case JVMPI_EVENT_THREAD_END:
        if (env_short != NULL && ev->env_id == env_short)
            short_ended = 1;
        break;
    case JVMPI_EVENT_GC_START:
        gc_starts++;
        if (arm_gc_start) {
            arm_gc_start = 0;
            jvmpi->RunGC();
            did_gc_start = 1;
        }
        break;
    case JVMPI_EVENT_GC_FINISH:
        gc_finishes++;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (arm_class_load && ev->u.class_load.class_name != NULL &&
            strcmp(ev->u.class_load.class_name, "MisuseLoadee") == 0) {
            arm_class_load = 0;
            jvmpi->RunGC();
            did_class_load = 1;
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (arm_object_alloc && ev->env_id == env_runner) {
            arm_object_alloc = 0;
            alloc_env_seen = ev->env_id;
            jvmpi->RunGC();
            did_object_alloc = 1;
        }
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        class_hooks++; /* the shim preset new_class_data: the class loads unchanged */
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    parse_options(options);
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
    run_where(ONLOAD);
    if (wanted("after_shutdown_atexit")) {
        if (mon_valid == NULL)
            mon_valid = jvmpi->RawMonitorCreate("misuse_valid");
        atexit(at_exit_calls);
    }
    say("JVM_OnLoad done");
    return JNI_OK;
}
