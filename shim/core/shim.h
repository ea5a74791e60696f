/* shim.h — the shim's global state, module interfaces and lock order.
 *
 * jvmpishim is one JVMTI agent (one jvmtiEnv, shared by everything) that hosts up to
 * SHIM_MAX_INSTANCES legacy JVMPI agents. JVMPI functions take no context argument, so
 * every instance has its own JVMPI_Interface whose function pointers are per-slot
 * trampolines (interface.c) that pass the instance to the shared implementation, and its
 * own proxy JavaVM (loader.c) so GetEnv(JVMPI_VERSION_1) can tell which agent asks.
 *
 * Identity (see docs/design.md): a thread is named by its JNIEnv* (threads.c keeps
 * env <-> jthread), a virtual thread by a JNIEnv-shaped record of its own (vthreads.c);
 * jmethodIDs are JVMTI's, passed through; object ids are JVMTI tags.
 *
 * Locks. No shim mutex is ever held while calling the agent's NotifyEvent, and none is
 * held across a JVMTI or JNI call that can wait for another Java thread; the exceptions
 * are listed with their reason. A thread holding one lock takes only locks listed below it:
 *   1. g_shim.life_lock      lifecycle: start gate, shutdown (events/events.c, face/lifecycle.c)
 *   2. gate_lock             the GC gate's condition (events/gate.c)
 *   3. reg_lock              thread registry (threads.c); a record's wait_lock (leaf) is
 *                            held across JNI NewLocalRef/NewGlobalRef of its wait object
 *   4. registry_lock         raw monitor slots (rawmon.c): create, destroy, the dump's copy;
 *                            then holders_lock (leaf: the threads that use raw monitors).
 *                            Enter, Exit, Wait and NotifyAll take neither: a thread blocked
 *                            for the agent waits on the monitor's futex word, holding no lock
 *   5. class_lock, mid_lock, ann_lock (classes/: announcements and definitions in
 *      progress, waited on), methods_lock, bodies_lock, big_lock, free_lock, br_lock (who
 *      posts a GC bracket), pending_lock, held_lock, q_lock (worker queue),
 *      install_lock (JNI table), owed_lock (monitors.c: contentions owed an EXIT),
 *      mc_lock (classes/method_class.c: adding to the table of GetMethodClass answers),
 *      layout_lock (dumps/layout.c: class layouts kept between dumps), extras_lock
 *      (dumps/classextras.c: a class's constant pool, signers and protection domain kept for
 *      OBJECT_DUMP), key_lock (classes/:
 *      class loaders' private tags), guard_lock (state.c: held threads wait on it),
 *      names_lock (events/record.c: per recording, the ids named and the class table of
 *      dump summaries), client_lock (face/clients.c: a slot given to a library that asks
 *      the JavaVM for JVMPI):
 *      leaves guarding one table each
 *   6. tag_lock              ids.c: held across GetTag+SetTag only, to make tagging
 *                            atomic; the tag map neither waits for Java threads nor calls
 *                            back, so it cannot deadlock
 *      idx_lock              ids.c: the id index, held across an index pass (a heap
 *                            iteration at a safepoint) and a lookup's NewLocalRef; its
 *                            waiters wait in native code, and the pass takes no shim lock
 *      kept[].lock           ids.c: a shard of the kept table, held across its JNI calls
 *   7. log_lock              log.c, a leaf
 * report/report.c's write_lock (a report file being rewritten) takes notes_lock (a leaf) and
 * log_lock; its signal handlers take no lock.
 * bci.c's mode_lock serializes retransformation passes; it is held across
 * RetransformClasses, whose ClassFileLoadHook runs on the same thread and takes only
 * chunk_lock (a leaf, for new probe ids); ctor_lock (a leaf) guards the constructor table. Probes never take it, and the thread holding it
 * waits in native code, so it cannot hold up the safepoint the retransformation needs.
 * Threads waiting on any of these wait in native code, so they never hold up a safepoint.
 * Every lock held across a JNI or JVMTI call is taken inside a critical section of the
 * suspension guard (below), begun with no other shim lock held, so that no thread an agent
 * suspends stops while it holds one.
 */
#ifndef JVMPISHIM_SHIM_H
#define JVMPISHIM_SHIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jni.h>
#include <jvmti.h>

#include "jvmpi.h"
#include "core/log.h"
#include "core/options.h"
#include "core/stripe.h"

#define SHIM_MAX_INSTANCES 4
#define SHIM_NUM_EVENTS (JVMPI_MAX_EVENT_TYPE_VAL + 1)
#define SHIM_NUM_FUNCTIONS 28 /* JVMPI_Interface entries after NotifyEvent */

/* The JavaVM handed to a legacy agent: a JNIInvokeInterface_ pointer first (that is all a
 * JavaVM is in C), then the instance it belongs to. */
struct proxy_vm {
    const struct JNIInvokeInterface_ *functions;
    struct instance *inst;
};

/* One loaded legacy agent. */
struct instance {
    int slot;
    bool used;
    struct shim_options opts;
    void *dl;                                   /* dlopen handle of the agent */
    char *resolved_path;                        /* where the agent was found */
    /* The file the agent's image was read from, to read its symbols: a private copy is
     * deleted once mapped, so for a second agent of one library it is the copy's source.
     * NULL if the file is not known (dladdr then names it). */
    char *image_file;
    bool deepbind;                              /* loaded RTLD_DEEPBIND: its exports collided */
    void *lib_base;                             /* its load address (dladdr), to know its calls */
    jint (JNICALL *jvm_onload)(JavaVM *, char *, void *);
    JVMPI_Interface iface;                      /* the table the agent sees and writes */
    struct JNIInvokeInterface_ vm_functions;    /* proxy JavaVM function table */
    struct proxy_vm vm;
    bool got_interface;                         /* GetEnv(JVMPI_VERSION_*) was called */
    /* A library of the program that asked GetEnv(JVMPI_*) itself, with no JVM_OnLoad
     * (face/clients.c): when and on which thread it first asked, for the report. */
    bool client;
    struct {
        int64_t wall;                           /* time(NULL) of its first GetEnv */
        int phase;                              /* g_shim.phase then */
        const char *how;                        /* "JNI_OnLoad", "a native method", ... */
        char thread[64];                        /* the asking thread's name */
    } asked;
    /* Events the agent enabled: bit t set <=> EnableEvent(t) succeeded and no
     * DisableEvent(t) since. Read lock-free on every event. */
    _Atomic uint64_t enabled;
    /* Usage, for the migration report (report/, counted in events/counters.c): calls per JVMPI function; EnableEvent
     * and RequestEvent calls per event type and how many were refused; deliveries per
     * event type, counted on the delivering thread's stripe so that no cache line is
     * shared between threads on the per-event path; JVMPI calls likewise (agents call
     * GetCallTrace, RawMonitorEnter and the like from their event handlers). */
    struct {
        _Alignas(64) _Atomic uint64_t n[SHIM_NUM_FUNCTIONS];
    } calls[STRIPES];
    _Atomic uint64_t enable_calls[SHIM_NUM_EVENTS], enable_refused[SHIM_NUM_EVENTS];
    _Atomic uint64_t request_calls[SHIM_NUM_EVENTS], request_failed[SHIM_NUM_EVENTS];
    struct {
        _Alignas(64) _Atomic uint64_t n[SHIM_NUM_EVENTS];
    } delivered[STRIPES];
};

enum shim_phase {
    PHASE_ONLOAD = 0,   /* Agent_OnLoad done, waiting for VMInit */
    PHASE_STARTING,     /* VMInit: JVM_OnLoad and startup replay running on init_thread */
    PHASE_LIVE,         /* JVM_INIT_DONE posted */
    PHASE_SHUTTING,     /* JVM_SHUT_DOWN being delivered on shutdown_thread */
    PHASE_DEAD          /* SHUT_DOWN handled (or ProfilerExit): no more events */
};

struct shim {
    jvmtiEnv *jvmti;
    JavaVM *vm;                         /* the real VM */
    jint jvmti_version;
    int jdk_major;                      /* from GetVersionNumber */
    jvmtiCapabilities caps;             /* what Agent_OnLoad obtained */

    struct instance inst[SHIM_MAX_INSTANCES];
    int ninst;

    pthread_mutex_t life_lock;
    pthread_cond_t life_cond;
    _Atomic int phase;                  /* enum shim_phase */
    pthread_t init_thread;              /* runs VMInit: exempt from the start gate */
    pthread_t shutdown_thread;          /* runs the JVM_SHUT_DOWN handler */
    _Atomic int profiler_exit;          /* ProfilerExit in progress: no SHUT_DOWN */
    struct striped inflight;            /* in flight on threads without a record (events.c) */
    bool check_dumps;                   /* checkdumps option: validate every dump built */
    bool attached;                      /* loaded by Agent_OnAttach into a running JVM */
};

extern struct shim g_shim;

/* JVMTI callbacks return at once from JVM_SHUT_DOWN on: nothing they would post can be
 * delivered, and JVMTI calls fail in the dead phase. */
static inline bool shim_quiet(void)
{
    return atomic_load_explicit(&g_shim.phase, memory_order_relaxed) >= PHASE_SHUTTING;
}

/* The shim's own Java work (the worker thread, linking a class before announcing it,
 * retransforming, reading the heap capacity) must produce no JVMPI event: an agent that
 * holds its one lock across a GC bracket would otherwise get an OBJECT_ALLOC or CLASS_LOAD
 * on the bracket thread, inside the bracket. While a thread's depth is above 0, the JVMTI
 * callbacks on that thread (allocation, class load and prepare, class file hook, monitor
 * and method events, probes) return at once. The shim's own explicit posts on such a
 * thread (the GC bracket, CLASS_UNLOAD on the worker) are not affected, and the agent's
 * handler runs with the depth at 0 (event_post): what it does is the agent's. Defined in
 * core/state.c. */
extern _Thread_local int shim_own_java_depth;
static inline bool shim_own_java(void) { return shim_own_java_depth > 0; }
static inline void shim_own_java_begin(void) { shim_own_java_depth++; }
static inline void shim_own_java_end(void) { shim_own_java_depth--; }

/* JVMPI calls in progress on this thread, counted by the trampolines (face/interface.c).
 * An agent calls JVMPI functions while it holds its own locks, and other threads' event
 * handlers wait for those locks: a sampler holds its one lock around GetCallTrace of a
 * thread whose CLASS_LOAD handler waits for that lock. So nothing the shim does inside a
 * call (at any depth: the handlers of requested events run inside RequestEvent) may wait for
 * another thread's event handler, nor run Java code that could (linking a class loads
 * classes, and a thread defining one may be in a CLASS_LOAD handler, holding its loader's
 * lock): where the shim waits or links outside a call, inside one it steps aside and says
 * what it left (docs/design.md, "No JVMPI call waits for a handler"). Defined in
 * core/state.c. */
extern _Thread_local int shim_call_depth;
static inline bool shim_in_call(void) { return shim_call_depth > 0; }
/* JVMPI raw monitors the calling thread owns (monitors/rawmon.c keeps it). A thread inside a
 * call that owns none holds no lock of the agent's that another thread's handler could wait
 * for (agents of the era locked with raw monitors), so it may link a class (classes/announce.c). */
extern _Thread_local int shim_monitors_owned;

/* Suspension guard. JVMTI suspends a thread in native code only when it next enters the VM
 * (a JNI or JVMTI call), so a thread the agent suspends (JVMPI SuspendThread, or the dumps'
 * stop-the-world) could stop inside a JVMTI call made while it holds a shim lock, and the
 * suspender, a sampler that then asks GetCallTrace of that very thread, would wait for the
 * lock for ever. So every section that holds a shim lock across a JNI or JVMTI call is a
 * critical section (shim_crit_begin/end, before taking the lock and after releasing it), and
 * a suspender first holds the target's guard: a thread inside a critical section is not
 * suspended yet (the suspender retries), and a held thread does not enter one (it waits in
 * native code until it is released, as if suspended). A Dekker pairing of two sequentially
 * consistent stores and loads: either the suspender sees the section or the thread sees the
 * hold. Only sections that cannot wait for another thread's handler are critical (a held
 * thread may not be suspendable for their length). threads/ keeps one guard per thread
 * record and finds the calling thread's (shim_guard_set_finder). Defined in core/state.c. */
struct shim_guard {
    _Atomic int crit;   /* critical sections the thread is in (written by it alone) */
    _Atomic int hold;   /* suspenders holding it */
};
extern _Thread_local struct shim_guard *shim_tl_guard;
/* On a carrier, the guard of the virtual thread mounted there (threads/vthreads.c sets it at
 * mount and unmount): a section entered while it runs holds off the suspenders of both, the
 * carrier's and the virtual thread's. It cannot change inside a section (a virtual thread in
 * native code does not unmount). */
extern _Thread_local struct shim_guard *shim_tl_vguard;
struct shim_guard *shim_guard_self_slow(void);
void shim_guard_wait(struct shim_guard *g);
static inline void shim_crit_begin(void)
{
    struct shim_guard *g = shim_tl_guard;
    if (g == NULL && (g = shim_guard_self_slow()) == NULL)
        return;
    int depth = atomic_load_explicit(&g->crit, memory_order_relaxed);
    if (depth > 0) {
        atomic_store_explicit(&g->crit, depth + 1, memory_order_relaxed);
        return;
    }
    struct shim_guard *vg = shim_tl_vguard;
    for (;;) {
        atomic_store(&g->crit, 1);
        if (atomic_load(&g->hold) != 0) {
            atomic_store(&g->crit, 0);
            shim_guard_wait(g);
            continue;
        }
        if (__builtin_expect(vg == NULL, 1))
            return;
        atomic_store(&vg->crit, 1);
        if (atomic_load(&vg->hold) == 0)
            return;
        atomic_store(&vg->crit, 0);
        atomic_store(&g->crit, 0);
        shim_guard_wait(vg);
    }
}
static inline void shim_crit_end(void)
{
    struct shim_guard *g = shim_tl_guard;
    if (g == NULL)
        return;
    int depth = atomic_load_explicit(&g->crit, memory_order_relaxed) - 1;
    struct shim_guard *vg = shim_tl_vguard;
    if (depth == 0 && vg != NULL)
        atomic_store_explicit(&vg->crit, 0, memory_order_release);
    atomic_store_explicit(&g->crit, depth, memory_order_release);
}
/* For a suspender: hold g (true) once its thread is outside every critical section, trying
 * for a bounded time; false if the thread stayed inside (then do not suspend it now). */
bool shim_guard_hold(struct shim_guard *g);
void shim_guard_release(struct shim_guard *g);
/* threads/ tells how to find the calling thread's guard (NULL: a thread no agent can name). */
void shim_guard_set_finder(struct shim_guard *(*find)(void));

/* ---- core/state.c ---- */
/* JDK 21's can_support_virtual_threads, taken if this JVM offers it (false: no virtual
 * threads here, or the JVM refused; a refusal is logged). */
bool shim_take_vthreads_capability(void);
/* The VM is ending (DestroyJavaVM attached, no other non-daemon thread): from then on the
 * shim starts no heap walk of its own choosing (state.c says why). Costs a look at every
 * thread until true; call it only before such a walk. */
bool shim_exit_near(void);
JNIEnv *shim_current_jni(void);         /* JNIEnv of the calling thread, or NULL if not attached */
void shim_set_current_jni(JNIEnv *jni); /* cache it (ThreadStart, VMInit); NULL on ThreadEnd */
/* The env_id of the virtual thread mounted on the calling (carrier) thread, or NULL: set and
 * cleared by threads/vthreads.c at mount and unmount (vthreads=threads, JDK 21 and later).
 * A virtual thread has no JNIEnv of its own; while it runs, the carrier's JNIEnv makes the
 * JNI calls and this names the JVMPI thread. */
extern _Thread_local JNIEnv *shim_vthread_env;
/* The calling thread's JVMPI id: the mounted virtual thread's env_id, else its JNIEnv. */
static inline JNIEnv *shim_current_env(void)
{
    JNIEnv *vt = shim_vthread_env;
    return vt != NULL ? vt : shim_current_jni();
}
/* Thread-local data: the shim's _Thread_local variables must stay within the 512 bytes of
 * static TLS glibc keeps for libraries loaded by dlopen (rtld.optional_static_tls): the
 * x86-64 shim is built initial-exec (one load per access, Makefile) and would not load
 * beyond it; on i386 every access would be a __tls_get_addr call (dynamic TLS cost 6 % of
 * all cycles of the allocs bench, measured on x86-64). tests/check-tls.sh holds the line. A larger per-thread array
 * lives in a block made on first use, reached through one thread-local pointer:
 * shim_thread_block(&tl_ptr, size) makes it (zeroed; NULL if out of memory) for the calling
 * thread, which stores it in tl_ptr; when the thread exits the block is freed and tl_ptr
 * set to NULL. */
void *shim_thread_block(void *slot, size_t size);
/* Big tables filled at random (core/tables.c; the id index, a dump's kept facts): zeroed
 * memory in huge pages where the kernel gives them on request (transparent huge pages in
 * "madvise" mode, Debian's default), so that a random write costs one TLB entry per 2 MB
 * instead of per 4 KB page; small sizes come from calloc. NULL if out of memory. Freed with
 * the size it was made with. */
void *shim_table_alloc(size_t bytes);
void shim_table_free(void *p, size_t bytes);
/* Such a table is filled from a list of records that come in an order random in their keys
 * (a heap walk's, a tag map's): inserted so, each takes a cache and a TLB miss. This copies
 * the n records of src (elem bytes each, starting with their jlong key) into dst, in the
 * order of the table region slot(key, cap) puts them in (a stable counting sort on the
 * slot's top 10 bits; cap a power of two), so that inserting dst in order fills the table
 * region by region, each in cache. False if out of memory (dst is then untouched). */
bool shim_sort_by_region(void *dst, const void *src, size_t n, size_t elem, size_t cap,
                         size_t (*slot)(jlong key, size_t cap));
/* The instance whose library contains code address pc, or NULL. */
struct instance *shim_instance_at(const void *pc);

#endif
