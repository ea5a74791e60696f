/* test_jnienv.c — the JNIEnv lent to a virtual thread (shim/memory/jnienv.c), without a JVM.
 *
 * jnienv.c is compiled into this test with the two things it needs from the rest of the
 * shim replaced: the calling thread's own JNIEnv (shim_current_jni) is a fake whose every
 * JNI function records its name, its JNIEnv and its first arguments, and jniref's functions
 * record the return address they were given. Checked: each function of the lent table runs
 * the same function through the calling thread's own JNIEnv, with the arguments it was given
 * (variadic ones through their V form, with the variadic arguments intact); the
 * global-reference functions and GetJavaVM reach jniref.c with the caller's return address,
 * not the trampoline's; with no JNIEnv on the calling thread every call returns zero and one
 * error is logged; every slot of JDK 17's table is filled.
 */
#include "memory/jnienv.c"
#include "unit.h"

#include <stdint.h>

/* ---- the calling thread's own JNIEnv: a fake that records what reaches it ---- */

static struct JNINativeInterface_ real_table;
static const struct JNINativeInterface_ *real_fns = &real_table;
static JNIEnv *real_env = (JNIEnv *)&real_fns;
static bool have_env = true;

JNIEnv *shim_current_jni(void)
{
    return have_env ? real_env : NULL;
}

/* Marks every parameter of a fake used, whatever its type. */
static void used(JNIEnv *env, ...)
{
    (void)env;
}

static const char *last_fn;
static JNIEnv *last_env;
static long last_a, last_b;       /* integer arguments seen, by the V forms as well */
static double last_d;

#define R_FN(ret, name, params, args)                                                       \
    static ret JNICALL r_##name params                                                      \
    {                                                                                       \
        used args;                                                                          \
        last_fn = #name;                                                                    \
        last_env = env;                                                                     \
        return (ret)0;                                                                      \
    }
#define R_FN_V(name, params, args)                                                          \
    static void JNICALL r_##name params                                                     \
    {                                                                                       \
        used args;                                                                          \
        last_fn = #name;                                                                    \
        last_env = env;                                                                     \
    }
#define R_FN_VA(ret, name, params, args, last)                                              \
    static ret JNICALL r_##name(UNPAREN params, ...)                                        \
    {                                                                                       \
        used args;                                                                          \
        last_fn = #name " (variadic: should have gone to its V form)";                     \
        last_env = env;                                                                     \
        return (ret)0;                                                                      \
    }
#define R_FN_VA_V(name, params, args, last)                                                 \
    static void JNICALL r_##name(UNPAREN params, ...)                                       \
    {                                                                                       \
        used args;                                                                          \
        last_fn = #name " (variadic: should have gone to its V form)";                     \
        last_env = env;                                                                     \
    }
JNI_FUNCTIONS(R_FN, R_FN_V, R_FN_VA, R_FN_VA_V)

/* V forms that also keep their arguments: (int, double) after the method id. */
static jint JNICALL r_CallIntMethodV2(JNIEnv *env, jobject obj, jmethodID m, va_list ap)
{
    last_fn = "CallIntMethodV";
    last_env = env;
    last_a = (long)(intptr_t)obj + (long)(intptr_t)m;
    last_b = va_arg(ap, int);
    last_d = va_arg(ap, double);
    return 42;
}

static void JNICALL r_CallStaticVoidMethodV2(JNIEnv *env, jclass c, jmethodID m, va_list ap)
{
    last_fn = "CallStaticVoidMethodV";
    last_env = env;
    last_a = (long)(intptr_t)c + (long)(intptr_t)m;
    last_b = va_arg(ap, long);
}

static jint JNICALL r_GetVersion2(JNIEnv *env)
{
    last_fn = "GetVersion";
    last_env = env;
    return 0x00010008;
}

/* ---- jniref.c: what the global-reference functions and GetJavaVM pass on ---- */

static void *last_caller;

jobject jniref_new_global(JNIEnv *env, jobject o, void *caller)
{
    last_fn = "jniref_new_global";
    last_env = env;
    last_caller = caller;
    return o;
}

void jniref_delete_global(JNIEnv *env, jobject r, void *caller)
{
    (void)r;
    last_fn = "jniref_delete_global";
    last_env = env;
    last_caller = caller;
}

jweak jniref_new_weak(JNIEnv *env, jobject o, void *caller)
{
    last_fn = "jniref_new_weak";
    last_env = env;
    last_caller = caller;
    return o;
}

void jniref_delete_weak(JNIEnv *env, jweak r, void *caller)
{
    (void)r;
    last_fn = "jniref_delete_weak";
    last_env = env;
    last_caller = caller;
}

jint jniref_get_java_vm(JNIEnv *env, JavaVM **vm, void *caller)
{
    last_fn = "jniref_get_java_vm";
    last_env = env;
    last_caller = caller;
    *vm = (JavaVM *)0x1234;
    return JNI_OK;
}

/* A call site of the agent's: the return address jniref.c gets must lie in this function
 * (not inlined, so its code is its own), not in jnienv.c's trampoline. */
static __attribute__((noinline)) jobject call_new_global(JNIEnv *lent, jobject o)
{
    return (*lent)->NewGlobalRef(lent, o);
}

static void fill_real_table(void)
{
#define S_FN(ret, name, params, args) real_table.name = r_##name;
#define S_FN_V(name, params, args) real_table.name = r_##name;
#define S_FN_VA(ret, name, params, args, last) real_table.name = r_##name;
#define S_FN_VA_V(name, params, args, last) real_table.name = r_##name;
    JNI_FUNCTIONS(S_FN, S_FN_V, S_FN_VA, S_FN_VA_V)
    real_table.CallIntMethodV = r_CallIntMethodV2;
    real_table.CallStaticVoidMethodV = r_CallStaticVoidMethodV2;
    real_table.GetVersion = r_GetVersion2;
}

int main(void)
{
    fill_real_table();
    const struct JNINativeInterface_ *face = jnienv_borrowed_table();
    /* A virtual thread's env_id: a word that points at the lent table. */
    const struct JNINativeInterface_ *vt_word = face;
    JNIEnv *lent = (JNIEnv *)&vt_word;

    /* Every slot up to JDK 17's last function is filled; none is the fake's own. */
    void *const *slots = (void *const *)&face->GetVersion;
    size_t n = (sizeof *face - offsetof(struct JNINativeInterface_, GetVersion)) / sizeof(void *);
    size_t empty = 0;
    for (size_t i = 0; i < n; i++)
        empty += slots[i] == NULL;
    CHECK_EQ_INT(empty, 0);
    CHECK(face->reserved0 == NULL && face->reserved3 == NULL, "reserved slots set");

    /* A plain function: the same one, through the calling thread's own JNIEnv. */
    CHECK_EQ_INT((*lent)->GetVersion(lent), 0x00010008);
    CHECK_STR(last_fn, "GetVersion");
    CHECK(last_env == real_env, "GetVersion ran with env %p, not the thread's own %p",
          (void *)last_env, (void *)real_env);
    (*lent)->FindClass(lent, "java/lang/String");
    CHECK_STR(last_fn, "FindClass");
    CHECK(last_env == real_env, "FindClass ran with the lent env");
    (*lent)->ExceptionClear(lent);
    CHECK_STR(last_fn, "ExceptionClear");
    (*lent)->ReleasePrimitiveArrayCritical(lent, NULL, NULL, 0);
    CHECK_STR(last_fn, "ReleasePrimitiveArrayCritical");
    (*lent)->GetModule(lent, NULL);
    CHECK_STR(last_fn, "GetModule");

    /* Variadic ones: their V form, with the variadic arguments as given. */
    last_b = 0;
    jint r = (*lent)->CallIntMethod(lent, (jobject)(intptr_t)16, (jmethodID)(intptr_t)32, 7, 2.5);
    CHECK_EQ_INT(r, 42);
    CHECK_STR(last_fn, "CallIntMethodV");
    CHECK(last_env == real_env, "CallIntMethodV ran with the lent env");
    CHECK_EQ_INT(last_a, 48);
    CHECK_EQ_INT(last_b, 7);
    CHECK(last_d == 2.5, "the double argument arrived as %g", last_d);
    (*lent)->CallStaticVoidMethod(lent, (jclass)(intptr_t)8, (jmethodID)(intptr_t)4, 99L);
    CHECK_STR(last_fn, "CallStaticVoidMethodV");
    CHECK_EQ_INT(last_a, 12);
    CHECK_EQ_INT(last_b, 99);
    (*lent)->NewObject(lent, NULL, NULL);
    CHECK_STR(last_fn, "NewObjectV");
    (*lent)->CallNonvirtualBooleanMethod(lent, NULL, NULL, NULL);
    CHECK_STR(last_fn, "CallNonvirtualBooleanMethodV");

    /* Global references and GetJavaVM: jniref.c, with the caller's return address. */
    jobject g = call_new_global(lent, (jobject)(intptr_t)0x40);
    CHECK(g == (jobject)(intptr_t)0x40, "NewGlobalRef's result lost");
    CHECK_STR(last_fn, "jniref_new_global");
    CHECK(last_env == real_env, "jniref_new_global got the lent env");
    uintptr_t at = (uintptr_t)last_caller, site = (uintptr_t)call_new_global;
    CHECK(at > site && at < site + 256, "NewGlobalRef passed %p as the caller, not an address "
          "in its caller at %p", last_caller, (void *)site);
    (*lent)->DeleteGlobalRef(lent, g);
    CHECK_STR(last_fn, "jniref_delete_global");
    (*lent)->NewWeakGlobalRef(lent, g);
    CHECK_STR(last_fn, "jniref_new_weak");
    (*lent)->DeleteWeakGlobalRef(lent, g);
    CHECK_STR(last_fn, "jniref_delete_weak");
    JavaVM *vm = NULL;
    CHECK_EQ_INT((*lent)->GetJavaVM(lent, &vm), JNI_OK);
    CHECK_STR(last_fn, "jniref_get_java_vm");
    CHECK(vm == (JavaVM *)0x1234, "GetJavaVM's answer lost");

    /* A thread with no JNIEnv of its own: nothing runs, zero comes back. */
    have_env = false;
    last_fn = NULL;
    CHECK_EQ_INT((*lent)->GetVersion(lent), 0);
    CHECK_EQ_INT((*lent)->CallIntMethod(lent, NULL, NULL, 1, 1.0), 0);
    CHECK(last_fn == NULL, "%s ran on a thread without a JNIEnv", last_fn);
    CHECK(face == jnienv_borrowed_table(), "the table is made once");
    return UNIT_END();
}
