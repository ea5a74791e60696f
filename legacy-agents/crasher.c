/* crasher.c — a JDK 1.3-style JVMPI agent with a bug: it dereferences NULL in its
 * CLASS_LOAD handler when the class it was told to watch is loaded.
 *
 * Old agents kept per-class records in their own tables and trusted that every lookup
 * succeeded; a class they did not expect (here: the one named by the option) made the
 * lookup return NULL, and the handler wrote through it. The migration report must record
 * such a crash (signal, library, symbol, the event being delivered) and the JVM must still
 * write its hs_err file and exit as it does for any native crash.
 *
 * The other classic crash was an assert: "assert" makes it an allocation profiler that, on
 * its first OBJECT_ALLOC of a class it has no record of, asks RequestEvent(CLASS_LOAD) for
 * the class and asserts JVMPI_SUCCESS, but passes the event's obj_id where the class_id
 * belongs (the two fields sit side by side). The shim refuses the id with a warning, the
 * assert fails and abort() ends the process (SIGABRT, for which the JVM has no handler and
 * writes no hs_err file). The report must carry that warning, the rejected id and the
 * abort, as they stood at the crash.
 *
 * Options: class=NAME (the class whose CLASS_LOAD crashes; default: never crash), assert, or
 * natives: at JVM_INIT_DONE, bind AgentNatives.answer()I to this library's code with JNI
 * RegisterNatives, through the JNIEnv the event names, as old agents bound the natives of
 * their Java-side helper classes. Observations on stdout prefixed "crasher: ". Without class=, it is a
 * harmless agent that counts THREAD_START and CLASS_LOAD and prints "crasher: live" at
 * JVM_INIT_DONE: a run to end with a signal.
 */
#include <jvmpi.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static char watch[256];
static int opt_natives;

/* AgentNatives.answer()I */
JNIEXPORT jint JNICALL crasher_answer(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return 42;
}

static void bind_natives(JNIEnv *env)
{
    JNINativeMethod m;
    jclass c = (*env)->FindClass(env, "AgentNatives");
    if (c == NULL) {
        (*env)->ExceptionClear(env);
        printf("crasher: no class AgentNatives\n");
        return;
    }
    m.name = "answer";
    m.signature = "()I";
    m.fnPtr = (void *)crasher_answer;
    printf("crasher: RegisterNatives rc=%d\n", (int)(*env)->RegisterNatives(env, c, &m, 1));
}
static long n_class_load, n_thread_start;

struct class_record {
    const char *name;
    long loads;
};
static struct class_record known[4] = {{"java/lang/Object", 0}, {"java/lang/String", 0}};

/* The agent's own table: NULL for a class it did not expect. */
struct class_record *crasher_lookup(const char *name)
{
    int i;
    for (i = 0; i < 4; i++)
        if (known[i].name != NULL && strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}

/* Exported, as most old agents' functions were: dladdr can name it. */
void crasher_class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    n_class_load++;
    if (watch[0] != '\0' && name != NULL && strcmp(name, watch) == 0) {
        struct class_record *r = crasher_lookup(name);
        printf("crasher: CLASS_LOAD %s: about to write through %p\n", name, (void *)r);
        fflush(stdout);
        r->loads++; /* the bug: r is NULL for this class */
    }
}

static int opt_assert;

/* Exported: the crash record names the agent's frame that called abort(). */
void crasher_alloc(JVMPI_Event *ev)
{
    static int asked;
    jint rc;
    if (asked || ev->u.obj_alloc.class_id == NULL)
        return;
    asked = 1;
    printf("crasher: OBJECT_ALLOC: asking for its class\n");
    fflush(stdout);
    rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, ev->u.obj_alloc.obj_id); /* the bug */
    assert(rc == JVMPI_SUCCESS);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        crasher_class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        crasher_alloc(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        n_thread_start++;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (opt_natives)
            bind_natives(ev->env_id);
        printf("crasher: live\n");
        fflush(stdout);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("crasher: shut down class_load=%ld thread_start=%ld\n", n_class_load, n_thread_start);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && strncmp(options, "class=", 6) == 0)
        snprintf(watch, sizeof watch, "%s", options + 6);
    if (options != NULL && strcmp(options, "natives") == 0)
        opt_natives = 1;
    if (options != NULL && strcmp(options, "assert") == 0)
        opt_assert = 1;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    if (opt_assert)
        jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    return JNI_OK;
}
