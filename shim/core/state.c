/* state.c — the shim's global state: g_shim, the calling thread's JNIEnv, per-thread blocks.
 *
 * What every layer reads and nothing above core/ owns: the one `struct shim` (shim.h), the
 * JNIEnv cached per thread, the blocks larger per-thread arrays live in, the depth of the
 * shim's own Java work on this thread, and which agent instance a code address belongs to.
 * The entry point (agent.c) fills g_shim in Agent_OnLoad; the areas only read it.
 */
#include "core/api.h"

#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct shim g_shim = {
    .life_lock = PTHREAD_MUTEX_INITIALIZER,
    .life_cond = PTHREAD_COND_INITIALIZER,
};

static _Thread_local JNIEnv *tl_jni;
_Thread_local JNIEnv *shim_vthread_env; /* see shim.h */

/* A thread's blocks (shim_thread_block) are a list under one thread-specific key, whose
 * destructor frees them at thread exit and clears the thread-local pointers they hang on. */
struct thread_block {
    struct thread_block *next;
    void *slot;                 /* the owning thread's pointer to data */
    max_align_t data[];
};
static pthread_key_t block_key;
static pthread_once_t block_once = PTHREAD_ONCE_INIT;
static bool block_key_ok;

static void blocks_free(void *p)
{
    for (struct thread_block *b = p, *next; b != NULL; b = next) {
        next = b->next;
        memset(b->slot, 0, sizeof(void *));
        free(b);
    }
}

static void block_key_make(void)
{
    block_key_ok = pthread_key_create(&block_key, blocks_free) == 0;
}

void *shim_thread_block(void *slot, size_t size)
{
    pthread_once(&block_once, block_key_make);
    struct thread_block *b = block_key_ok ? calloc(1, sizeof *b + size) : NULL;
    if (b != NULL) {
        b->slot = slot;
        b->next = pthread_getspecific(block_key);
        if (pthread_setspecific(block_key, b) != 0) {
            free(b);
            b = NULL;
        }
    }
    static _Atomic bool warned;
    if (b == NULL && !atomic_exchange(&warned, true))
        log_warn("no per-thread block of %zu bytes (out of memory, or no thread-specific key): "
                 "threads go without their caches, more slowly", size);
    return b != NULL ? (void *)b->data : NULL;
}

JNIEnv *shim_current_jni(void)
{
    if (tl_jni != NULL)
        return tl_jni;
    JNIEnv *e = NULL;
    if (g_shim.vm == NULL ||
        (*g_shim.vm)->GetEnv(g_shim.vm, (void **)&e, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    /* Not cached: a thread may detach and its JNIEnv die; ThreadStart sets tl_jni. */
    return e;
}

void shim_set_current_jni(JNIEnv *jni)
{
    tl_jni = jni;
}

/* The instance whose library contains code address pc (a caller's return address), or
 * NULL: how JNI calls are told apart by agent (memory/jniref.c). */
struct instance *shim_instance_at(const void *pc)
{
    Dl_info di;
    if (pc == NULL || dladdr(pc, &di) == 0)
        return NULL;
    for (int i = 0; i < g_shim.ninst; i++)
        if (g_shim.inst[i].lib_base != NULL && g_shim.inst[i].lib_base == di.dli_fbase)
            return &g_shim.inst[i];
    return NULL;
}

_Thread_local int shim_own_java_depth; /* see shim_own_java() in shim.h */
_Thread_local int shim_call_depth;     /* see shim_in_call() in shim.h */
_Thread_local int shim_monitors_owned; /* see shim.h */

/* The JVMPI functions' names, in table order (log lines, the migration report). */
const char *const jvmpi_fn_names[FN_COUNT] = {
#define NAME_X(ret, name, params, args) #name,
#define NAME_V(name, params, args) #name,
    JVMPI_FUNCTIONS(NAME_X, NAME_V)
#undef NAME_X
#undef NAME_V
};

/* ---- the suspension guard (shim.h) ---- */

_Thread_local struct shim_guard *shim_tl_guard;
_Thread_local struct shim_guard *shim_tl_vguard;
static struct shim_guard *(*guard_finder)(void);
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static pthread_cond_t guard_cond = PTHREAD_COND_INITIALIZER;

void shim_guard_set_finder(struct shim_guard *(*find)(void))
{
    guard_finder = find;
}

struct shim_guard *shim_guard_self_slow(void)
{
    struct shim_guard *g = guard_finder != NULL ? guard_finder() : NULL;
    shim_tl_guard = g;
    return g;
}

void shim_guard_wait(struct shim_guard *g)
{
    pthread_mutex_lock(&guard_lock);
    while (atomic_load(&g->hold) > 0)
        pthread_cond_wait(&guard_cond, &guard_lock);
    pthread_mutex_unlock(&guard_lock);
}

/* The sections are short (tagging, an index pass, a retransformation), so a suspender that
 * finds its target inside one yields and tries again, for at most about 100 ms. */
bool shim_guard_hold(struct shim_guard *g)
{
    for (int i = 0; i < 2000; i++) {
        atomic_fetch_add(&g->hold, 1);
        if (atomic_load(&g->crit) == 0)
            return true;
        shim_guard_release(g);
        if (i < 50) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    return false;
}

void shim_guard_release(struct shim_guard *g)
{
    pthread_mutex_lock(&guard_lock);
    atomic_fetch_sub(&g->hold, 1);
    pthread_cond_broadcast(&guard_cond);
    pthread_mutex_unlock(&guard_lock);
}

/* ---- JDK 21's can_support_virtual_threads ---- */

bool shim_take_vthreads_capability(void)
{
    /* The shim is compiled against JDK 17's jvmti.h, which does not name it: it is the bit
     * after can_generate_sampled_object_alloc_events (JVMTI 21). */
    jvmtiCapabilities probe, want, pot;
    memset(&probe, 0, sizeof probe);
    probe.can_generate_sampled_object_alloc_events = 1;
    const unsigned char *pb = (const unsigned char *)&probe;
    size_t bit = (size_t)-1;
    for (size_t i = 0; i < sizeof probe * 8 && bit == (size_t)-1; i++)
        if (pb[i / 8] & (1u << (i % 8)))
            bit = i + 1;
    if (bit == (size_t)-1 || bit >= sizeof want * 8)
        return false;
    memset(&want, 0, sizeof want);
    ((unsigned char *)&want)[bit / 8] = (unsigned char)(1u << (bit % 8));
    if (!jvmti_ok_at((*g_shim.jvmti)->GetPotentialCapabilities(g_shim.jvmti, &pot), LOG_INFO,
                     "GetPotentialCapabilities, looking for can_support_virtual_threads") ||
        !(((unsigned char *)&pot)[bit / 8] & (1u << (bit % 8))))
        return false; /* a JVM before JVMTI 21: no virtual threads */
    return jvmti_ok_at((*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want), LOG_WARN,
                       "AddCapabilities(can_support_virtual_threads)");
}

/* ---- the JVM's exit window ----
 * HotSpot (seen on JDK 25) deadlocks if a safepoint is requested while the thread that ends
 * the VM waits in post_vm_death for another thread's batch of ObjectFree events: it waits
 * there without being safepoint-safe, and the posting thread stops at the safepoint when its
 * batch returns to the VM. Native stacks of such a hang: DestroyJavaVM in
 * JvmtiTagMap::flush_object_free_events (wait_without_safepoint_check), the Service Thread in
 * SafepointSynchronize::block under JvmtiExport::post_object_free, the VM thread in
 * SafepointSynchronize::synchronize_threads, and the thread that asked for the safepoint in
 * VMThread::execute (there: FollowReferences). So the shim starts no heap walk of its own
 * choosing once the VM is ending: the launcher's thread is back as DestroyJavaVM and no other
 * non-daemon thread lives. Found by looking (GetAllThreads, GetThreadInfo: neither needs a
 * safepoint) only when a walk is due; once true it stays true (the VM ends from there,
 * whatever threads its shutdown hooks start). A look that fails (a thread list JVMTI does not
 * give, in the wrong phase) answers false: the walk goes ahead as it always did. System.exit
 * gives no such sign: there, the walk's callers wait for the frees of a collection to come
 * first, which leaves the window almost closed. */
static _Atomic bool exit_near;

bool shim_exit_near(void)
{
    if (atomic_load_explicit(&exit_near, memory_order_acquire))
        return true;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL || g_shim.jvmti == NULL || (*jni)->PushLocalFrame(jni, 16) != JNI_OK)
        return false;
    jint n = 0;
    jthread *all = NULL;
    bool destroying = false, others = false;
    if (jvmti_ok_at((*g_shim.jvmti)->GetAllThreads(g_shim.jvmti, &n, &all), LOG_DEBUG,
                    "GetAllThreads, looking whether the VM is ending")) {
        for (jint i = 0; i < n && !others; i++) {
            jvmtiThreadInfo ti;
            memset(&ti, 0, sizeof ti);
            if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, all[i], &ti),
                             LOG_DEBUG, "GetThreadInfo, looking whether the VM is ending"))
                continue; /* ended meanwhile */
            if (ti.name != NULL && strcmp(ti.name, "DestroyJavaVM") == 0)
                destroying = true;
            else if (!ti.is_daemon)
                others = true;
            jvmti_free(g_shim.jvmti, ti.name);
            if (ti.thread_group != NULL)
                (*jni)->DeleteLocalRef(jni, ti.thread_group);
            if (ti.context_class_loader != NULL)
                (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
            (*jni)->DeleteLocalRef(jni, all[i]);
        }
        jvmti_free(g_shim.jvmti, all);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    if (destroying && !others) {
        if (!atomic_exchange_explicit(&exit_near, true, memory_order_acq_rel))
            log_debug("the VM is ending (DestroyJavaVM, no other non-daemon thread): no more "
                      "heap walks of the shim's own choosing");
        return true;
    }
    return false;
}
