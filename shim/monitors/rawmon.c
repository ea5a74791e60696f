/* rawmon.c — JVMPI raw monitors, owned by the shim, and RAW_MONITOR_CONTENDED_* events.
 *
 * JVMPI raw monitors are reentrant locks with wait/notifyAll that agents use from any
 * thread, Java or not, including inside event handlers, often around every event: tens of
 * millions of enter/exit pairs a run. JVMTI raw monitors would do, but they post no
 * contention events, and JVMPI wants RAW_MONITOR_CONTENDED_ENTER/ENTERED/EXIT (and the
 * monitor dump wants owner, contenders and waiters). So the shim implements them itself,
 * at HotSpot's price: an uncontended Enter is one compare-and-swap on the monitor's own
 * lock word and Exit one exchange, with no lock shared between monitors. The lock word is
 * a futex (0 free, 1 held, 2 held with threads maybe asleep on it), as a glibc mutex is;
 * the owner's thread and recursion count sit beside it. A contended Enter on a monitor that
 * is seldom contended first spins for about 2 us reading the word (most agents hold their
 * monitor for less); on one whose recent exits mostly had contenders, or once the spin is
 * over, it sleeps on the word as a glibc mutex waiter does, so that the running owner keeps
 * the monitor's line and takes the monitor again without a hand-over. The exit touches the
 * line only before it lets go (besides the wake). RawMonitorWait sleeps on a second futex
 * word that NotifyAll moves on.
 *
 * Monitors live in slots of chunks that are never freed, and the JVMPI_RawMonitor handed
 * out is not an address but a handle: a tag (the top 16 bits; on i386 the low 3), the slot's
 * generation and its index. A call first checks the tag, finds the slot by index and compares the slot's
 * current id with the handle: NULL, garbage and destroyed ids are told apart and ignored
 * with a warning (HotSpot's magic check ignored them silently), without reading anything
 * but the shim's own slots, and a destroyed slot's next monitor has another generation.
 * A slot freed by RawMonitorDestroy is reused only when no thread is blocked on it or
 * waiting in it and no monitor dump holds a copy of it, so a thread still blocked on a
 * destroyed monitor never takes a newer one's lock; its name buffer is never freed.
 *
 * Each thread that uses raw monitors has a record in its thread-local storage (struct
 * holder): its identity as an owner, its JNIEnv, and what it is blocked on (Enter
 * contended, Wait, the re-entry after Wait) and how. It is listed from the thread's first
 * call until it exits, and MONITOR_DUMP finds owners, contenders and waiters through the
 * list; the blocking paths take no lock. Contenders are counted on the monitor for
 * CONTENDED_EXIT.
 *
 * Names starting with '_' post no events (the spec's rule; hprof names its own lock
 * "_hprof_dump_lock"). Events are posted with no lock held: ENTER before blocking,
 * ENTERED after acquiring, EXIT after releasing when threads were waiting to enter.
 * Locks: registry_lock (creating, destroying, the dump's copy), then holders_lock (the
 * list of per-thread records; leaf). Neither is taken by Enter, Exit, Wait or NotifyAll,
 * except holders_lock once when a thread first calls.
 */
#include "core/api.h"
#include "events/events.h"
#include "events/report.h"
#include "monitors/rawmon.h"
#include "threads/threads.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The handle's layout is pointer-sized.
 * 64 bits: RM_TAG << 48 | generation << RM_IDX_BITS | slot index; never NULL, never a
 * canonical user-space address, so a pointer or a truncated id passed back is told apart at
 * once.
 * 32 bits (i386): every value is a user-space address there, so the tag is in the low three
 * bits instead: generation << (RM_IDX_BITS + 3) | slot index << 3 | 5. Never NULL, never a
 * 4-aligned address (what malloc, a stack slot or a struct member of a pointer returns), and
 * never a small integer an agent would confuse with one (the tag makes it at least 5 and odd).
 * Fewer bits: 65536 monitors live at once and 8192 generations a slot (x86-64: 2^20, 2^28). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define RM_TAG 0x4a50u /* "JP" */
#define RM_IDX_BITS 20
#define RM_GEN_BITS 28
#define RM_IDX_SHIFT 0
#define RM_TAG_OF(v) ((v) >> 48)
_Static_assert(16 + RM_GEN_BITS + RM_IDX_BITS == 64, "a raw monitor handle is a 64-bit tag | generation | index");
#else
#define RM_TAG 5u
#define RM_IDX_BITS 16
#define RM_GEN_BITS 13
#define RM_IDX_SHIFT 3
#define RM_TAG_OF(v) ((v) & 7u)
_Static_assert(RM_IDX_SHIFT + RM_GEN_BITS + RM_IDX_BITS == 32, "a raw monitor handle is generation | index | 3-bit tag");
#endif
#define RM_CHUNK_BITS 8
#define RM_CHUNK (1u << RM_CHUNK_BITS)
#define RM_MAX_CHUNKS (1u << (RM_IDX_BITS - RM_CHUNK_BITS))
#define RM_IDX_MASK ((1u << RM_IDX_BITS) - 1)
#define RM_GEN_MASK ((1u << RM_GEN_BITS) - 1)
#define RM_INDEX_OF(v) ((uint32_t)((v) >> RM_IDX_SHIFT) & RM_IDX_MASK)

struct holder;

struct rawmon {
    /* What the owner writes: one cache line per monitor, which an Enter takes for writing
     * at its first touch (the compare-and-swap), so that under contention each Enter and
     * each Exit moves the line between CPUs once. The count of contenders is on it too: a
     * contender counts itself out once it holds the monitor, and the owner reads it as it
     * lets go, both right after touching the lock word. */
    _Alignas(64) _Atomic uint32_t word; /* 0 free, 1 held, 2 held, sleepers possible */
    int count;                          /* the owner's recursion count (owner only) */
    _Atomic(struct holder *) owner;     /* the owning thread's record, NULL when free */
    _Atomic int contenders;             /* threads blocked in RawMonitorEnter */
    _Atomic uint32_t heat;              /* recent exits with contenders (owner writes; see spin) */
    /* Waits: their own line. */
    _Alignas(64) _Atomic int waiters;   /* threads in RawMonitorWait */
    _Atomic uint32_t notify_seq;        /* futex word of RawMonitorWait: NotifyAll adds 1 */
    _Atomic int busy;                   /* threads in Wait or posting, dumps holding it */
    /* Set when the slot is given a monitor (registry_lock), read by every call (the id) and
     * by events and dumps: written only at create and destroy, so every CPU keeps a shared
     * copy while the line above moves. */
    _Alignas(64) _Atomic uintptr_t id;  /* the live monitor's JVMPI id; 0 when destroyed */
    _Atomic(char *) name;               /* our copy (see set_name) */
    size_t name_cap;
    bool silent;                        /* name starts with '_': no events */
    uint32_t gen, index;
    struct rawmon *next_free;           /* FIFO of destroyed slots (registry_lock) */
};

static struct rawmon *_Atomic chunks[RM_MAX_CHUNKS];
static _Atomic uint32_t n_slots;        /* slots handed out so far, destroyed included */
static struct rawmon *free_head, *free_tail;
static size_t n_live;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uintptr_t make_id(uint32_t gen, uint32_t index)
{
#if UINTPTR_MAX > 0xFFFFFFFFu
    return (uintptr_t)RM_TAG << 48 | (uintptr_t)gen << RM_IDX_BITS | index;
#else
    return (uintptr_t)gen << (RM_IDX_BITS + RM_IDX_SHIFT) | (uintptr_t)index << RM_IDX_SHIFT | RM_TAG;
#endif
}

static inline struct rawmon *slot_at(uint32_t index)
{
    struct rawmon *c = atomic_load_explicit(&chunks[index >> RM_CHUNK_BITS], memory_order_acquire);
    return c != NULL ? &c[index & (RM_CHUNK - 1)] : NULL;
}

/* The live monitor id names, or NULL: no lock, and nothing read outside the slots. */
static inline struct rawmon *find(JVMPI_RawMonitor id)
{
    uintptr_t v = (uintptr_t)id;
    if (__builtin_expect(RM_TAG_OF(v) != RM_TAG, 0))
        return NULL;
    struct rawmon *m = slot_at(RM_INDEX_OF(v));
    if (__builtin_expect(m == NULL, 0))
        return NULL;
    /* Acquire: the name and flags set before the id was published are visible. */
    return atomic_load_explicit(&m->id, memory_order_acquire) == v ? m : NULL;
}

static __attribute__((noinline, cold)) void bad_id(struct instance *inst, JVMPI_RawMonitor id,
                                                   const char *fn)
{
    uintptr_t v = (uintptr_t)id;
    if (id == NULL)
        report_misuse(inst, LOG_WARN, "%s(NULL): not a raw monitor; ignored", fn);
    else if (RM_TAG_OF(v) == RM_TAG && RM_INDEX_OF(v) < atomic_load(&n_slots))
        report_misuse(inst, LOG_WARN, "%s(%p): unknown or destroyed raw monitor (destroyed); "
                                      "ignored", fn, (void *)id);
    else
        report_misuse(inst, LOG_WARN, "%s(%p): unknown or destroyed raw monitor (not one "
                                      "RawMonitorCreate returned); ignored", fn, (void *)id);
}

static void post_raw(int type, struct rawmon *m, JVMPI_RawMonitor id)
{
    if (m->silent || !events_any(type))
        return;
    JVMPI_Event ev;
    event_init(&ev, type, shim_current_jni());
    ev.u.raw_monitor.name = m->name;
    ev.u.raw_monitor.id = id;
    event_post_all(&ev);
}

/* ---- the lock word ---- */

static void futex_wait(_Atomic uint32_t *w, uint32_t val, const struct timespec *rel)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, rel, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int n)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline bool try_lock(struct rawmon *m)
{
    uint32_t free_ = 0;
    return atomic_compare_exchange_strong_explicit(&m->word, &free_, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* How long a contender spins before it sleeps: about RM_SPIN_NS, or not at all on a hot
 * monitor (below). Agents hold their raw
 * monitor for a table update around an event, well under a microsecond, while a futex sleep
 * and wake-up cost two system calls and two context switches, several microseconds; so a
 * short spin takes most contended Enters without sleeping, and the bound keeps a contender
 * from burning CPU while the owner holds the monitor long or is itself off the CPU (2 CPUs,
 * 8 threads). The bound is counted in PAUSEs, whose cost varies 20-fold between CPUs (about
 * 130 ns on a virtualised EPYC, 5 ns on older cores), so it is calibrated once, at the first
 * contention: RM_SPIN_NS over the measured cost of one, within [4, 400]. */
#define RM_SPIN_NS 2000
static _Atomic int spin_limit; /* 0: not measured yet */

/* A monitor's heat: each last Exit multiplies it by 7/8 and adds RM_HEAT_STEP when threads
 * were blocked to enter, so it tends to RM_HEAT_STEP * 8 times the share of recent exits
 * that were contended. Above RM_HOT (a quarter of them) contenders do not spin: where
 * threads keep the monitor taken back to back, a spinner takes it at each release and the
 * monitor's line moves between CPUs at every Enter, while a sleeping waiter leaves the
 * running owner to take it again from its own cache, as a glibc mutex does (bench/calls.sh
 * contend1: 2.3-3.4x a mutex with the spin, 1.5-1.6x without; docs/performance.md). A
 * monitor contended now and then (a handler's table update, the case the spin is for)
 * stays cool and its contenders spin. */
#define RM_HEAT_STEP 32u
#define RM_HOT 64u

static __attribute__((noinline, cold)) int spin_calibrate(void)
{
    long long best = -1; /* the least of three: a preemption inflates one */
    for (int k = 0; k < 3; k++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 32; i++)
            cpu_relax();
        clock_gettime(CLOCK_MONOTONIC, &b);
        long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        if (best < 0 || ns < best)
            best = ns;
    }
    long long per = best / 32 > 0 ? best / 32 : 1;
    int n = (int)(RM_SPIN_NS / per);
    n = n < 4 ? 4 : n > 400 ? 400 : n;
    atomic_store_explicit(&spin_limit, n, memory_order_relaxed);
    return n;
}

/* Block until the word is ours. On a cool monitor, first a bounded spin: read the word (no
 * writes, so the owner's line is not taken from it) and try it when it reads free. Then the
 * three-state futex lock ("Futexes are tricky", mutex 3, as glibc's lll_lock_wait): mark it
 * 2 (held, sleepers possible), unless it already is, and sleep while it stays held. Nothing
 * else on the line is written here: a count of sleepers that let the exit skip the wake
 * after the last sleeper had taken the monitor cost two more transfers of the line per
 * sleep, more than the wake it saved (docs/performance.md). This protocol, with Enter's
 * compare-and-swap and Exit's exchange, is model-checked (tests/model/rawmon_lock.pml, run
 * by tests/check-model.sh: mutual exclusion, no lost wake-up); a change here changes the
 * model with it. */
static void lock_blocking(struct rawmon *m)
{
    int spins = atomic_load_explicit(&spin_limit, memory_order_relaxed);
    if (__builtin_expect(spins == 0, 0))
        spins = spin_calibrate();
    if (atomic_load_explicit(&m->heat, memory_order_relaxed) > RM_HOT)
        spins = 0;
    for (int i = 0; i < spins; i++) {
        uint32_t w = atomic_load_explicit(&m->word, memory_order_relaxed);
        if (w == 0 && try_lock(m))
            return;
        cpu_relax();
    }
    uint32_t c = atomic_load_explicit(&m->word, memory_order_relaxed) == 2
                     ? 2 : atomic_exchange(&m->word, 2);
    while (c != 0) {
        futex_wait(&m->word, 2, NULL);
        c = atomic_exchange(&m->word, 2);
    }
}

/* Both on the owning thread, which counts the monitors it owns (shim_monitors_owned, shim.h:
 * a JVMPI call made while owning none may link a class). */
static inline void take(struct rawmon *m, struct holder *me, int count)
{
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = count;
    shim_monitors_owned++;
}

/* Give up ownership entirely. After the exchange the line belongs to whoever takes the
 * monitor next, so nothing on it is read again (but for the wake, which only the kernel
 * reads). */
static inline void unlock_owned(struct rawmon *m)
{
    shim_monitors_owned--;
    m->count = 0;
    atomic_store_explicit(&m->owner, NULL, memory_order_relaxed);
    if (atomic_exchange(&m->word, 0) == 2)
        futex_wake(&m->word, 1);
}

/* Threads blocked in RawMonitorEnter: the release about to be made is a CONTENDED_EXIT.
 * Read just before the release, while the line is still the owner's (read after it, the
 * read would take the line back from the next owner and cost it another transfer). A thread
 * that starts to block between the read and the release is not counted: that exit posts no
 * CONTENDED_EXIT, while the thread still posts its CONTENDED_ENTER and ENTERED. */
static inline bool contended(struct rawmon *m)
{
    return atomic_load_explicit(&m->contenders, memory_order_relaxed) > 0;
}

/* The last Exit's: whether the release is contended, and the monitor's heat updated with it
 * (see lock_blocking), both on the owner's line before it lets go. */
static inline bool exit_note(struct rawmon *m)
{
    bool c = contended(m);
    uint32_t h = atomic_load_explicit(&m->heat, memory_order_relaxed);
    atomic_store_explicit(&m->heat, h - (h >> 3) + (c ? RM_HEAT_STEP : 0), memory_order_relaxed);
    return c;
}

/* ---- the threads that use raw monitors ---- */

/* One per thread, in its thread-local storage: its identity as an owner, its JNIEnv for
 * dumps, and what it is blocked on. Listed (for MONITOR_DUMP) from its first raw monitor
 * call until it exits. */
struct holder {
    _Atomic(JNIEnv *) env;              /* the thread's JNIEnv; NULL while it has none */
    _Atomic(JNIEnv *) vt;               /* the virtual thread mounted at its last call, or NULL */
    _Atomic(struct rawmon *) on;        /* the monitor it is blocked on, or NULL */
    _Atomic bool waiting;               /* blocked in RawMonitorWait (else to enter) */
    bool listed;                        /* in holders (written by its thread, holders_lock) */
    unsigned recheck;                   /* calls since its env was looked up while NULL */
    struct holder *next, **prevp;       /* holders_lock */
};
static _Thread_local struct holder tl_holder;
static struct holder *holders;
static size_t n_holders;
static pthread_mutex_t holders_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t holder_key;        /* its destructor takes a thread off the list */
static pthread_once_t holder_once = PTHREAD_ONCE_INIT;
static bool holder_key_ok;

static void holder_unlist(void *p)
{
    struct holder *h = p;
    pthread_mutex_lock(&holders_lock);
    if (h->listed) {
        *h->prevp = h->next;
        if (h->next != NULL)
            h->next->prevp = h->prevp;
        h->listed = false;
        n_holders--;
    }
    pthread_mutex_unlock(&holders_lock);
}

static void holder_key_make(void)
{
    holder_key_ok = pthread_key_create(&holder_key, holder_unlist) == 0;
}

static __attribute__((noinline)) struct holder *me_slow(struct holder *h)
{
    atomic_store_explicit(&h->env, shim_current_jni(), memory_order_relaxed);
    if (!h->listed) {
        pthread_once(&holder_once, holder_key_make);
        if (holder_key_ok && pthread_setspecific(holder_key, h) == 0) {
            pthread_mutex_lock(&holders_lock);
            h->next = holders;
            h->prevp = &holders;
            if (holders != NULL)
                holders->prevp = &h->next;
            holders = h;
            h->listed = true;
            n_holders++;
            pthread_mutex_unlock(&holders_lock);
        }
    }
    return h;
}

/* The calling thread's record. A thread the JVM does not know (no JNIEnv) looks its env up
 * again every 256 calls, so that one attached later shows in dumps with it (until then, and
 * for a dump taken before, as NULL); looking up on every call (JNI GetEnv) would cost more
 * than the call. */
static inline struct holder *me(void)
{
    struct holder *h = &tl_holder;
    __asm__("" : "+r"(h)); /* one thread-local lookup, not one per use */
    /* A virtual thread calling from a handler on its carrier owns and waits as itself in
     * dumps (its env_id); it cannot unmount inside the call. */
    JNIEnv *vt = shim_vthread_env;
    if (__builtin_expect(vt != atomic_load_explicit(&h->vt, memory_order_relaxed), 0))
        atomic_store_explicit(&h->vt, vt, memory_order_relaxed);
    if (__builtin_expect(!h->listed, 0) ||
        (__builtin_expect(atomic_load_explicit(&h->env, memory_order_relaxed) == NULL, 0) &&
         (++h->recheck & 255) == 0))
        return me_slow(h);
    return h;
}

static void blocked_on(struct holder *h, struct rawmon *m, bool waiting)
{
    atomic_store_explicit(&h->waiting, waiting, memory_order_relaxed);
    atomic_store_explicit(&h->on, m, memory_order_release);
}

static void set_raw_state(struct thread_rec *self, int state)
{
    if (self != NULL)
        atomic_store(&self->raw_state, state);
}

/* The thread record GetThreadStatus reads, for a Java thread (the agent's own pthreads have
 * none, and looking for one would cost a JNI GetEnv each time). */
static struct thread_rec *java_self(const struct holder *h)
{
    return atomic_load_explicit(&h->env, memory_order_relaxed) != NULL ? threads_self() : NULL;
}

/* ---- slots ---- */

static struct rawmon *new_slot(void)
{
    uint32_t i = atomic_load(&n_slots);
    if (i > RM_IDX_MASK)
        return NULL;
    if (slot_at(i) == NULL) {
        struct rawmon *c = aligned_alloc(64, RM_CHUNK * sizeof *c);
        if (c == NULL)
            return NULL;
        memset(c, 0, RM_CHUNK * sizeof *c);
        for (uint32_t k = 0; k < RM_CHUNK; k++)
            c[k].index = (i & ~(RM_CHUNK - 1)) + k;
        atomic_store_explicit(&chunks[i >> RM_CHUNK_BITS], c, memory_order_release);
    }
    atomic_store(&n_slots, i + 1);
    return slot_at(i);
}

/* The slot's name buffer is never freed, only replaced by a larger one (the old one is
 * left as it is): an event or a dump that read the name pointer of a monitor that another
 * thread destroys and whose slot a new monitor takes meanwhile reads valid memory, at worst
 * the new name, instead of freed memory. The last byte stays NUL. registry_lock held. */
static bool set_name(struct rawmon *m, const char *name)
{
    size_t len = strlen(name) + 1;
    char *buf = atomic_load_explicit(&m->name, memory_order_relaxed);
    if (len > m->name_cap) {
        size_t cap = 32;
        while (cap < len)
            cap *= 2;
        if ((buf = calloc(1, cap)) == NULL)
            return false;
        m->name_cap = cap;
    }
    memcpy(buf, name, len);
    atomic_store_explicit(&m->name, buf, memory_order_release);
    return true;
}

/* A destroyed slot nobody is blocked on, oldest first, or a new one. registry_lock held. */
static struct rawmon *claim_slot(void)
{
    for (size_t tries = 0; free_head != NULL && tries < 64; tries++) {
        struct rawmon *m = free_head;
        free_head = m->next_free;
        if (free_head == NULL)
            free_tail = NULL;
        m->next_free = NULL;
        if (atomic_load(&m->busy) == 0 && atomic_load(&m->contenders) == 0 &&
            atomic_load(&m->waiters) == 0)
            return m;
        if (free_tail != NULL)
            free_tail->next_free = m;
        else
            free_head = m;
        free_tail = m;
    }
    return new_slot();
}

/* ---- the JVMPI functions ---- */

static void free_slot(struct rawmon *m)
{
    if (free_tail != NULL)
        free_tail->next_free = m;
    else
        free_head = m;
    free_tail = m;
}

JVMPI_RawMonitor jvmpi_RawMonitorCreate(struct instance *inst, char *name)
{
    if (name == NULL) /* HotSpot crashed here (strlen(NULL)) */
        report_misuse(inst, LOG_INFO, "RawMonitorCreate(NULL name): created an unnamed monitor");
    /* The name is copied: agents pass stack buffers, and events and dumps show our copy. */
    const char *named = name ? name : "";
    pthread_mutex_lock(&registry_lock);
    struct rawmon *m = claim_slot();
    if (m == NULL || !set_name(m, named)) {
        if (m != NULL)
            free_slot(m);
        pthread_mutex_unlock(&registry_lock);
        log_error("agent %d: RawMonitorCreate(\"%s\"): %s: NULL", inst->slot, named,
                  m != NULL ? "out of memory" : "no room for another raw monitor");
        return NULL;
    }
    m->silent = named[0] == '_';
    m->gen = (m->gen + 1) & RM_GEN_MASK;
    if (m->gen == 0)
        m->gen = 1;
    atomic_store(&m->word, 0);
    atomic_store(&m->heat, 0);
    m->count = 0;
    atomic_store(&m->owner, NULL);
    uintptr_t id = make_id(m->gen, m->index);
    atomic_store_explicit(&m->id, id, memory_order_release);
    n_live++;
    pthread_mutex_unlock(&registry_lock);
    log_debug("agent %d: RawMonitorCreate(\"%s\") -> %p", inst->slot, named, (void *)id);
    return (JVMPI_RawMonitor)id;
}

/* Contended: say so before blocking, with no lock held. */
static __attribute__((noinline)) void enter_contended(struct rawmon *m, JVMPI_RawMonitor id,
                                                      struct holder *self)
{
    /* Counted until it has the monitor, which also keeps the slot from reuse meanwhile. */
    atomic_fetch_add(&m->contenders, 1);
    blocked_on(self, m, false);
    post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, m, id);
    struct thread_rec *rec = java_self(self);
    set_raw_state(rec, JVMPI_THREAD_MONITOR_WAIT);
    lock_blocking(m);
    set_raw_state(rec, 0);
    take(m, self, 1);
    blocked_on(self, NULL, false);
    atomic_fetch_sub(&m->contenders, 1);
    post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, m, id);
}

void jvmpi_RawMonitorEnter(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = find(id);
    if (__builtin_expect(m == NULL, 0)) {
        bad_id(inst, id, "RawMonitorEnter");
        return;
    }
    struct holder *self = me();
    /* The compare-and-swap first: it fails when this thread already owns the monitor (the
     * word is not 0 then), and reading the owner before it would fetch the line shared and
     * then again for writing. */
    if (__builtin_expect(try_lock(m), 1)) {
        take(m, self, 1);
        return;
    }
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == self) {
        m->count++;
        return;
    }
    enter_contended(m, id, self);
}

static __attribute__((noinline, cold)) void not_owner(struct instance *inst, struct rawmon *m,
                                                      const char *fn, const char *outcome)
{
    report_misuse(inst, LOG_INFO, "%s(\"%s\"): the calling thread does not own it; %s", fn,
                  m->name, outcome);
}

void jvmpi_RawMonitorExit(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = find(id);
    if (__builtin_expect(m == NULL, 0)) {
        bad_id(inst, id, "RawMonitorExit");
        return;
    }
    if (__builtin_expect(atomic_load_explicit(&m->owner, memory_order_relaxed) != me(), 0)) {
        not_owner(inst, m, "RawMonitorExit", "ignored");
        return;
    }
    if (--m->count > 0)
        return;
    bool was_contended = exit_note(m);
    unlock_owned(m);
    if (__builtin_expect(was_contended, 0))
        post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, m, id);
}

void jvmpi_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor id, jlong ms)
{
    struct rawmon *m = find(id);
    if (m == NULL) {
        bad_id(inst, id, "RawMonitorWait");
        return;
    }
    struct holder *self = me();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != self) {
        not_owner(inst, m, "RawMonitorWait", "returns at once");
        return;
    }
    atomic_fetch_add(&m->busy, 1);
    int saved = m->count;
    /* Read while owning: a NotifyAll can only come once we let go, and it moves the word. */
    uint32_t seq = atomic_load(&m->notify_seq);
    atomic_fetch_add(&m->waiters, 1);
    blocked_on(self, m, true);
    struct thread_rec *rec = java_self(self);
    set_raw_state(rec, JVMPI_THREAD_CONDVAR_WAIT);
    /* The release happens now: say so now, not when the wait ends. */
    bool was_contended = contended(m);
    unlock_owned(m);
    if (was_contended)
        post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, m, id);
    struct timespec deadline = {0, 0};
    if (ms > 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        jlong s = ms / 1000;
        deadline.tv_sec = s > (jlong)(INT_MAX) ? INT_MAX : deadline.tv_sec + (time_t)s;
        deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    /* JVMPI: ms <= 0 waits until notified. Spurious wake-ups go round again. */
    while (atomic_load(&m->notify_seq) == seq) {
        if (ms <= 0) {
            futex_wait(&m->notify_seq, seq, NULL);
            continue;
        }
        struct timespec now, rel;
        clock_gettime(CLOCK_MONOTONIC, &now);
        rel.tv_sec = deadline.tv_sec - now.tv_sec;
        rel.tv_nsec = deadline.tv_nsec - now.tv_nsec;
        if (rel.tv_nsec < 0) {
            rel.tv_sec--;
            rel.tv_nsec += 1000000000L;
        }
        if (rel.tv_sec < 0)
            break;
        futex_wait(&m->notify_seq, seq, &rel);
    }
    atomic_fetch_sub(&m->waiters, 1);
    /* Back in: waiting to enter again, without contention events (HotSpot posted none). */
    set_raw_state(rec, JVMPI_THREAD_MONITOR_WAIT);
    blocked_on(self, m, false);
    if (!try_lock(m))
        lock_blocking(m);
    take(m, self, saved);
    blocked_on(self, NULL, false);
    set_raw_state(rec, 0);
    atomic_fetch_sub(&m->busy, 1);
}

void jvmpi_RawMonitorNotifyAll(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = find(id);
    if (m == NULL) {
        bad_id(inst, id, "RawMonitorNotifyAll");
        return;
    }
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != me()) {
        not_owner(inst, m, "RawMonitorNotifyAll", "ignored");
        return;
    }
    atomic_fetch_add(&m->notify_seq, 1);
    if (atomic_load(&m->waiters) > 0)
        futex_wake(&m->notify_seq, INT_MAX);
}

void jvmpi_RawMonitorDestroy(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = find(id);
    if (m == NULL) {
        bad_id(inst, id, "RawMonitorDestroy");
        return;
    }
    struct holder *owner = atomic_load(&m->owner);
    if (owner != NULL && owner != me()) {
        /* HotSpot: destroying a monitor another thread owns fails silently. */
        report_misuse(inst, LOG_WARN, "RawMonitorDestroy(\"%s\"): owned by another thread; not "
                                      "destroyed", m->name);
        return;
    }
    if (owner != NULL)
        unlock_owned(m); /* the owner may destroy: released first, as HotSpot did */
    pthread_mutex_lock(&registry_lock);
    uintptr_t expect = (uintptr_t)id;
    /* Once: two threads destroying the same monitor free its slot once. */
    if (atomic_compare_exchange_strong(&m->id, &expect, 0)) {
        n_live--;
        free_slot(m);
    }
    pthread_mutex_unlock(&registry_lock);
    log_debug("RawMonitorDestroy(\"%s\")", m->name);
}

/* ---- MONITOR_DUMP ---- */

struct seen {
    const struct holder *h;
    JNIEnv *env;
    uint32_t index;             /* the monitor it is blocked on: slot index */
    bool blocked, waiting;
};

static int by_index(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->blocked != y->blocked)
        return x->blocked ? -1 : 1;   /* the blocked first, by monitor */
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_holder(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h;
}

static JNIEnv **envs_of(const struct seen *s, size_t n, uint32_t index, bool waiting, int *count)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i].blocked && s[i].index == index && s[i].waiting == waiting;
    JNIEnv **v = calloc(k ? (size_t)k : 1, sizeof *v);
    *count = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i].blocked && s[i].index == index && s[i].waiting == waiting)
            v[(*count)++] = s[i].env;
    return v;
}

/* The threads that use raw monitors, as they are now: two copies, by monitor and by thread. */
static size_t holders_copy(struct seen **by_mon, struct seen **by_thread)
{
    pthread_mutex_lock(&holders_lock);
    size_t n = 0;
    struct seen *s = malloc((n_holders ? n_holders : 1) * sizeof *s);
    for (struct holder *h = holders; h != NULL && s != NULL; h = h->next) {
        struct rawmon *m = atomic_load_explicit(&h->on, memory_order_acquire);
        JNIEnv *vt = atomic_load(&h->vt);
        s[n++] = (struct seen){h, vt != NULL ? vt : atomic_load(&h->env), m ? m->index : 0,
                               m != NULL && atomic_load(&m->id) != 0, atomic_load(&h->waiting)};
    }
    pthread_mutex_unlock(&holders_lock);
    struct seen *t = s ? malloc((n ? n : 1) * sizeof *t) : NULL;
    if (t == NULL) {
        free(s);
        *by_mon = *by_thread = NULL;
        return 0;
    }
    memcpy(t, s, n * sizeof *s);
    qsort(s, n, sizeof *s, by_index);
    qsort(t, n, sizeof *t, by_holder);
    *by_mon = s;
    *by_thread = t;
    return n;
}

size_t rawmon_snapshot(struct rawmon_info **out)
{
    pthread_mutex_lock(&registry_lock);
    struct seen *s, *t;
    size_t nh = holders_copy(&s, &t);
    size_t nb = 0;
    while (nb < nh && s[nb].blocked)
        nb++;
    uint32_t slots = atomic_load(&n_slots);
    struct rawmon_info *v = s ? calloc(n_live ? n_live : 1, sizeof *v) : NULL;
    size_t n = 0;
    for (uint32_t i = 0; v != NULL && i < slots && n < n_live; i++) {
        struct rawmon *m = slot_at(i);
        uintptr_t id = m != NULL ? atomic_load(&m->id) : 0;
        if (id == 0)
            continue;
        struct holder *owner = atomic_load(&m->owner);
        struct seen key = {.index = i, .blocked = true};
        bool blocked = bsearch(&key, s, nb, sizeof *s, by_index) != NULL;
        if (owner == NULL && !blocked)
            continue;
        /* The owner's env, if it is a thread still listed (one that ended holding the
         * monitor is not). */
        struct seen who = {.h = owner};
        const struct seen *o = owner ? bsearch(&who, t, nh, sizeof *t, by_holder) : NULL;
        v[n].id = (JVMPI_RawMonitor)id;
        v[n].name = m->name;
        v[n].owner_env = o != NULL ? o->env : NULL;
        v[n].enter_envs = envs_of(s, nb, i, false, &v[n].n_enter);
        v[n].wait_envs = envs_of(s, nb, i, true, &v[n].n_wait);
        v[n].mon = m;
        atomic_fetch_add(&m->busy, 1); /* keeps the slot and its name until the dump is done */
        n++;
    }
    pthread_mutex_unlock(&registry_lock);
    free(s);
    free(t);
    *out = v;
    return v ? n : 0;
}

void rawmon_snapshot_free(struct rawmon_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].enter_envs);
        free(v[i].wait_envs);
        atomic_fetch_sub(&v[i].mon->busy, 1);
    }
    free(v);
}
