/* worker.c — one shim-owned Java thread that runs deferred work in order.
 *
 * Some JVMPI events cannot be delivered where JVMTI reports their cause: ObjectFree runs
 * on the Service Thread in a context where neither JNI nor most of JVMTI may be called,
 * yet an agent's CLASS_UNLOAD handler may do both. Such work is queued here and run on a
 * JVMTI agent thread ("JVMPI shim worker"), a daemon Java thread that has a JNIEnv, in
 * submission order. The queue lock is a leaf and is never held while running a task.
 */
#include "core/worker.h"

#include <stdlib.h>

struct task {
    worker_fn fn;
    void *arg;
    struct task *next;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct task *q_head, *q_tail;
static bool q_stopped, q_started;
static pthread_t worker_thread;
static JNIEnv *_Atomic w_env;
static jobject w_thread; /* global ref, set before the thread starts */

bool worker_submit(worker_fn fn, void *arg)
{
    struct task *t = malloc(sizeof *t);
    if (t == NULL)
        return false;
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&q_lock);
    if (q_stopped) {
        pthread_mutex_unlock(&q_lock);
        free(t);
        return false;
    }
    if (q_tail)
        q_tail->next = t;
    else
        q_head = t;
    q_tail = t;
    pthread_cond_signal(&q_cond);
    pthread_mutex_unlock(&q_lock);
    return true;
}

bool worker_is_thread(JNIEnv *jni, jobject t)
{
    return jni != NULL && t != NULL && w_thread != NULL && (*jni)->IsSameObject(jni, t, w_thread);
}

JNIEnv *worker_env(void)
{
    return atomic_load_explicit(&w_env, memory_order_relaxed);
}

bool worker_is_self(void)
{
    return q_started && pthread_equal(pthread_self(), worker_thread);
}

static void JNICALL worker_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    (void)arg;
    worker_thread = pthread_self();
    atomic_store(&w_env, jni);
    shim_set_current_jni(jni);
    /* Everything the worker runs is the shim's own work: its allocations, class loads and
     * monitor events post nothing (shim_own_java); it posts only what its tasks post. */
    shim_own_java_begin();
    for (;;) {
        pthread_mutex_lock(&q_lock);
        while (q_head == NULL && !q_stopped)
            pthread_cond_wait(&q_cond, &q_lock);
        if (q_stopped) {
            pthread_mutex_unlock(&q_lock);
            return;
        }
        struct task *t = q_head;
        q_head = t->next;
        if (q_head == NULL)
            q_tail = NULL;
        pthread_mutex_unlock(&q_lock);
        (*jni)->PushLocalFrame(jni, 32);
        t->fn(jni, t->arg);
        (*jni)->PopLocalFrame(jni, NULL);
        free(t);
    }
}

static jobject system_group(JNIEnv *jni)
{
    jint n = 0;
    jthreadGroup *groups = NULL;
    jobject g = NULL;
    if (jvmti_ok((*g_shim.jvmti)->GetTopThreadGroups(g_shim.jvmti, &n, &groups),
                 "CreateSystemThread: GetTopThreadGroups") && n > 0) {
        g = groups[0]; /* the "system" group is the only top-level group */
        for (jint i = 1; i < n; i++)
            (*jni)->DeleteLocalRef(jni, groups[i]);
    }
    jvmti_free(g_shim.jvmti, groups);
    return g;
}

jthread shim_new_system_thread(JNIEnv *jni, const char *name)
{
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID ctor = tc ? (*jni)->GetMethodID(jni, tc, "<init>",
                                              "(Ljava/lang/ThreadGroup;Ljava/lang/String;)V")
                        : NULL;
    jobject group = ctor ? system_group(jni) : NULL;
    jstring jname = (*jni)->NewStringUTF(jni, name);
    jthread t = (ctor && group && jname) ? (*jni)->NewObject(jni, tc, ctor, group, jname) : NULL;
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionDescribe(jni);
        (*jni)->ExceptionClear(jni);
        t = NULL;
    }
    if (group)
        (*jni)->DeleteLocalRef(jni, group);
    if (jname)
        (*jni)->DeleteLocalRef(jni, jname);
    return t;
}

void worker_start(JNIEnv *jni)
{
    /* In the "system" group, like the threads CreateSystemThread makes for agents. */
    jthread t = shim_new_system_thread(jni, "JVMPI shim worker");
    if (t == NULL) {
        (*jni)->ExceptionClear(jni);
        log_error("cannot create the shim's worker thread: CLASS_UNLOAD, OBJECT_FREE and "
                  "GC_START/GC_FINISH will not be delivered");
        return;
    }
    q_started = true;
    w_thread = (*jni)->NewGlobalRef(jni, t);
    if (!jvmti_ok((*g_shim.jvmti)->RunAgentThread(g_shim.jvmti, t, worker_main, NULL,
                                                  JVMTI_THREAD_NORM_PRIORITY),
                  "starting the shim's worker thread"))
        q_started = false;
}

void worker_stop(void)
{
    pthread_mutex_lock(&q_lock);
    q_stopped = true;
    /* Pending tasks are dropped, not run: the agent hears nothing after shutdown. Their
     * arguments belong to the modules that queued them (still in their tables). */
    while (q_head != NULL) {
        struct task *t = q_head;
        q_head = t->next;
        free(t);
    }
    q_tail = NULL;
    pthread_cond_broadcast(&q_cond);
    pthread_mutex_unlock(&q_lock);
}
