/* jniref.c — JNI_GLOBALREF_ALLOC / FREE and JNI_WEAK_GLOBALREF_ALLOC / FREE; and JNI
 * GetJavaVM answered with the agent's proxy JavaVM.
 *
 * The JNI function table is replaced once, at VMInit. GetJavaVM called from a legacy
 * agent's code returns that agent's proxy JavaVM, so GetEnv(JVMPI_VERSION_1) on it works
 * as it did on JDK 1.2-1.4 (on the real VM it fails and the JVM prints "JVMPI ... no longer
 * supported"); from anyone else it returns the real VM.
 *
 * JVMTI has no events for JNI references, but it lets an agent replace the JNI function
 * table (SetJNIFunctionTable). The shim's copy has NewGlobalRef, DeleteGlobalRef,
 * NewWeakGlobalRef and DeleteWeakGlobalRef call the VM's and then, when the event is
 * enabled, post it on the calling thread. Calls
 * the shim itself makes are not reported (the return address lies in the shim); so are
 * not references the VM creates internally without going through the table (measured: a
 * few at start-up, and HotSpot 1.4.2 excluded VM-internal references too). JDK native
 * libraries call through the table and are reported.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "events/events.h"
#include "memory/memory.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

static jniNativeInterface *orig;         /* the VM's table (JVMTI-allocated copy) */
static _Atomic bool installed;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t shim_lo, shim_hi;       /* the shim's own code: its calls are not posted */

static bool from_shim(void *ret)
{
    uintptr_t a = (uintptr_t)ret;
    return a >= shim_lo && a < shim_hi;
}

static jobjectID obj_id(JNIEnv *jni, jobject o)
{
    return memory_id_announced(jni, o);
}

static void post_alloc(JNIEnv *jni, jint type, jobject obj, jobject ref)
{
    JVMPI_Event ev;
    event_init(&ev, type, jni);
    ev.u.jni_globalref_alloc.obj_id = obj_id(jni, obj);
    ev.u.jni_globalref_alloc.ref_id = ref;
    event_post_all(&ev);
}

static void post_free(JNIEnv *jni, jint type, jobject ref)
{
    JVMPI_Event ev;
    event_init(&ev, type, jni);
    ev.u.jni_globalref_free.ref_id = ref;
    event_post_all(&ev);
}

/* The VM's own functions: the table replaced at VMInit, or the current one if it was not. */
static const struct JNINativeInterface_ *vm_fns(JNIEnv *env)
{
    return orig != NULL ? orig : *env;
}

/* Each call with the address it returns to: what the shim calls itself posts nothing, and
 * a call that comes through a virtual thread's env_id (jnienv.c) passes the agent's. */
jobject jniref_new_global(JNIEnv *env, jobject o, void *caller)
{
    jobject r = vm_fns(env)->NewGlobalRef(env, o);
    if (r != NULL && events_any(JVMPI_EVENT_JNI_GLOBALREF_ALLOC) && !from_shim(caller))
        post_alloc(env, JVMPI_EVENT_JNI_GLOBALREF_ALLOC, o, r);
    return r;
}

void jniref_delete_global(JNIEnv *env, jobject r, void *caller)
{
    bool post = r != NULL && events_any(JVMPI_EVENT_JNI_GLOBALREF_FREE) && !from_shim(caller);
    vm_fns(env)->DeleteGlobalRef(env, r);
    if (post)
        post_free(env, JVMPI_EVENT_JNI_GLOBALREF_FREE, r);
}

jweak jniref_new_weak(JNIEnv *env, jobject o, void *caller)
{
    jweak r = vm_fns(env)->NewWeakGlobalRef(env, o);
    if (r != NULL && events_any(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC) && !from_shim(caller))
        post_alloc(env, JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, o, r);
    return r;
}

void jniref_delete_weak(JNIEnv *env, jweak r, void *caller)
{
    bool post = r != NULL && events_any(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE) && !from_shim(caller);
    vm_fns(env)->DeleteWeakGlobalRef(env, r);
    if (post)
        post_free(env, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, r);
}

jint jniref_get_java_vm(JNIEnv *env, JavaVM **vm, void *caller)
{
    jint rc = vm_fns(env)->GetJavaVM(env, vm);
    struct instance *inst = shim_instance_at(caller);
    /* A library that asked for JVMPI itself (face/clients.c) keeps the JVM's JavaVM, the
     * one its JNI_OnLoad was given: its GetEnv answers JVMPI already. */
    if (rc == JNI_OK && vm != NULL && inst != NULL && !inst->client)
        *vm = (JavaVM *)&inst->vm;
    return rc;
}

static jobject JNICALL w_NewGlobalRef(JNIEnv *env, jobject o)
{
    return jniref_new_global(env, o, __builtin_return_address(0));
}

static void JNICALL w_DeleteGlobalRef(JNIEnv *env, jobject r)
{
    jniref_delete_global(env, r, __builtin_return_address(0));
}

static jweak JNICALL w_NewWeakGlobalRef(JNIEnv *env, jobject o)
{
    return jniref_new_weak(env, o, __builtin_return_address(0));
}

static void JNICALL w_DeleteWeakGlobalRef(JNIEnv *env, jweak r)
{
    jniref_delete_weak(env, r, __builtin_return_address(0));
}

static jint JNICALL w_GetJavaVM(JNIEnv *env, JavaVM **vm)
{
    return jniref_get_java_vm(env, vm, __builtin_return_address(0));
}

/* The executable segment of the shim's own library. */
static int find_text(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if ((void *)info->dlpi_addr != base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            shim_lo = info->dlpi_addr + ph->p_vaddr;
            shim_hi = shim_lo + ph->p_memsz;
        }
    }
    return 1;
}

static void install(void)
{
    if (atomic_load(&installed))
        return;
    shim_crit_begin(); /* JVMTI calls under a shim lock (shim.h) */
    pthread_mutex_lock(&install_lock);
    if (!atomic_load(&installed)) {
        Dl_info di;
        if (dladdr((void *)install, &di) != 0)
            dl_iterate_phdr(find_text, di.dli_fbase);
        jniNativeInterface *cur = NULL;
        if (jvmti_ok((*g_shim.jvmti)->GetJNIFunctionTable(g_shim.jvmti, &cur),
                     "GetJNIFunctionTable for JNI global-reference events")) {
            orig = cur;
            jniNativeInterface mine = *cur;
            mine.NewGlobalRef = w_NewGlobalRef;
            mine.DeleteGlobalRef = w_DeleteGlobalRef;
            mine.NewWeakGlobalRef = w_NewWeakGlobalRef;
            mine.DeleteWeakGlobalRef = w_DeleteWeakGlobalRef;
            mine.GetJavaVM = w_GetJavaVM;
            if (jvmti_ok((*g_shim.jvmti)->SetJNIFunctionTable(g_shim.jvmti, &mine),
                         "SetJNIFunctionTable for JNI global-reference events"))
                atomic_store(&installed, true);
        }
    }
    pthread_mutex_unlock(&install_lock);
    shim_crit_end();
}

void jniref_install_always(void)
{
    install();
}

void jniref_module_init(void)
{
    struct event_row row = {.kind = EVK_ON};
    for (int t = JVMPI_EVENT_JNI_GLOBALREF_ALLOC; t <= JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE; t++)
        events_register(t, &row);
}
