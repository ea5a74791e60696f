/* jnienv.c — a JNIEnv for a JVMPI thread that has none: the env_id of a virtual thread.
 *
 * Agents of JDK 1.2 used an event's env_id as the JNIEnv * it was on HotSpot, calling JNI
 * through it in their handlers ((*env_id)->FindClass(env_id, ...)). A virtual thread has no
 * JNIEnv of its own: JNI runs on its carrier's. Its env_id (threads/vthreads.c) is a record
 * whose first word points at the table built here, one trampoline per function of JDK 17's
 * JNI table (jnifuncs.h, checked entry by entry against the header), each calling the same
 * function through the calling thread's own JNIEnv. A JNI call acts on the current thread
 * whatever JNIEnv it came through, and in a handler of the virtual thread's event the
 * current thread is that virtual thread, mounted on the carrier whose JNIEnv is used. The
 * variadic functions call their V form. The global-reference functions and GetJavaVM go to
 * jniref.c with the agent's return address, which decides there what they post and which
 * JavaVM they answer. Slots a newer jni.h adds after JDK 17's (IsVirtualThread, ...) are
 * NULL: no JVMPI-era agent calls them.
 *
 * Only a thread the JVM knows has a JNIEnv to lend: a thread that has none (an agent's own
 * pthread) calling through a virtual thread's env_id gets a zero result and one error
 * message; on HotSpot another thread's JNIEnv crashed the VM.
 */
#include "core/api.h"
#include "memory/jnifuncs.h"
#include "memory/memory.h"

#include <stdarg.h>
#include <stddef.h>

/* The calling thread's own JNIEnv, for a call that came through a borrowed one. */
static JNIEnv *own_env(const char *fn)
{
    JNIEnv *env = shim_current_jni();
    if (env == NULL) {
        static _Atomic bool warned;
        if (!atomic_exchange(&warned, true))
            log_error("JNI %s called through a virtual thread's env_id on a thread the JVM "
                      "does not know: nothing done, zero returned (JNI acts on the calling "
                      "thread, and this one has no JNIEnv)", fn);
    }
    return env;
}

#define UNPAREN(...) __VA_ARGS__

#define T_FN(ret, name, params, args)                                                       \
    static ret JNICALL t_##name params                                                      \
    {                                                                                       \
        if ((env = own_env(#name)) == NULL)                                                 \
            return (ret)0;                                                                  \
        return (*env)->name args;                                                           \
    }
#define T_FN_V(name, params, args)                                                          \
    static void JNICALL t_##name params                                                     \
    {                                                                                       \
        if ((env = own_env(#name)) != NULL)                                                 \
            (*env)->name args;                                                              \
    }
#define T_FN_VA(ret, name, params, args, last)                                              \
    static ret JNICALL t_##name(UNPAREN params, ...)                                        \
    {                                                                                       \
        if ((env = own_env(#name)) == NULL)                                                 \
            return (ret)0;                                                                  \
        va_list ap;                                                                         \
        va_start(ap, last);                                                                 \
        ret r = (*env)->name##V(UNPAREN args, ap);                                          \
        va_end(ap);                                                                         \
        return r;                                                                           \
    }
#define T_FN_VA_V(name, params, args, last)                                                 \
    static void JNICALL t_##name(UNPAREN params, ...)                                       \
    {                                                                                       \
        if ((env = own_env(#name)) == NULL)                                                 \
            return;                                                                         \
        va_list ap;                                                                         \
        va_start(ap, last);                                                                 \
        (*env)->name##V(UNPAREN args, ap);                                                  \
        va_end(ap);                                                                         \
    }
JNI_FUNCTIONS(T_FN, T_FN_V, T_FN_VA, T_FN_VA_V)

/* Each entry of the list sits where the header puts it: the table is filled by name, and
 * this makes sure the list (and so the table) has every function up to GetModule. */
enum {
#define I_FN(ret, name, params, args) JNI_IDX_##name,
#define I_FN_V(name, params, args) JNI_IDX_##name,
#define I_FN_VA(ret, name, params, args, last) JNI_IDX_##name,
#define I_FN_VA_V(name, params, args, last) JNI_IDX_##name,
    JNI_FUNCTIONS(I_FN, I_FN_V, I_FN_VA, I_FN_VA_V)
    JNI_IDX_COUNT
};
#define SLOT(name) (offsetof(struct JNINativeInterface_, reserved3) + sizeof(void *) * (1 + JNI_IDX_##name))
#define A_FN(ret, name, params, args) \
    _Static_assert(offsetof(struct JNINativeInterface_, name) == SLOT(name), #name " out of place");
#define A_FN_V(name, params, args) A_FN(void, name, params, args)
#define A_FN_VA(ret, name, params, args, last) A_FN(ret, name, params, args)
#define A_FN_VA_V(name, params, args, last) A_FN(void, name, params, args)
JNI_FUNCTIONS(A_FN, A_FN_V, A_FN_VA, A_FN_VA_V)
_Static_assert(JNI_IDX_GetModule + 1 == JNI_IDX_COUNT, "GetModule, JDK 9's, ends the list");

/* The calls jniref.c serves for agents, with the agent's return address. */
static jobject JNICALL s_NewGlobalRef(JNIEnv *env, jobject o)
{
    if ((env = own_env("NewGlobalRef")) == NULL)
        return NULL;
    return jniref_new_global(env, o, __builtin_return_address(0));
}

static void JNICALL s_DeleteGlobalRef(JNIEnv *env, jobject r)
{
    if ((env = own_env("DeleteGlobalRef")) != NULL)
        jniref_delete_global(env, r, __builtin_return_address(0));
}

static jweak JNICALL s_NewWeakGlobalRef(JNIEnv *env, jobject o)
{
    if ((env = own_env("NewWeakGlobalRef")) == NULL)
        return NULL;
    return jniref_new_weak(env, o, __builtin_return_address(0));
}

static void JNICALL s_DeleteWeakGlobalRef(JNIEnv *env, jweak r)
{
    if ((env = own_env("DeleteWeakGlobalRef")) != NULL)
        jniref_delete_weak(env, r, __builtin_return_address(0));
}

static jint JNICALL s_GetJavaVM(JNIEnv *env, JavaVM **vm)
{
    if ((env = own_env("GetJavaVM")) == NULL)
        return JNI_ERR;
    return jniref_get_java_vm(env, vm, __builtin_return_address(0));
}

static struct JNINativeInterface_ face;
static pthread_once_t face_once = PTHREAD_ONCE_INIT;

static void face_fill(void)
{
#define F_FN(ret, name, params, args) face.name = t_##name;
#define F_FN_V(name, params, args) face.name = t_##name;
#define F_FN_VA(ret, name, params, args, last) face.name = t_##name;
#define F_FN_VA_V(name, params, args, last) face.name = t_##name;
    JNI_FUNCTIONS(F_FN, F_FN_V, F_FN_VA, F_FN_VA_V)
    face.NewGlobalRef = s_NewGlobalRef;
    face.DeleteGlobalRef = s_DeleteGlobalRef;
    face.NewWeakGlobalRef = s_NewWeakGlobalRef;
    face.DeleteWeakGlobalRef = s_DeleteWeakGlobalRef;
    face.GetJavaVM = s_GetJavaVM;
}

const struct JNINativeInterface_ *jnienv_borrowed_table(void)
{
    pthread_once(&face_once, face_fill);
    return &face;
}
