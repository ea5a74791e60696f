/* cputime.c — the calling thread's CPU time (GetCurrentThreadCpuTime), read in user space
 * where the kernel allows it, else clock_gettime(CLOCK_THREAD_CPUTIME_ID).
 *
 * Tracers ask for the thread's CPU time on every method entry and exit. The thread CPU
 * clock has no vDSO path: clock_gettime(CLOCK_THREAD_CPUTIME_ID) is a system call (about
 * 0.8-1.4 us on a virtual machine, docs/performance.md). Linux offers a user-space read of
 * the same figure through perf's self-monitoring page: a software TASK_CLOCK event opened
 * on the thread (perf_event_open, pid 0, any CPU) and its first page mapped. The kernel
 * rewrites that page, under its seqlock `lock`, each time the task is scheduled in (a task
 * event is scheduled with its task), and, when it sets cap_user_time, also gives
 * the conversion of the time-stamp counter to its clock (time_offset, time_mult,
 * time_shift; time_cycles and time_mask with cap_user_time_short). Two ways follow.
 *
 * "perf page" (cap_user_time set: a stable TSC is the kernel's clock): while the thread
 * runs and reads the page, its CPU time is
 *
 *     time_running + (time_offset + tsc * time_mult >> time_shift, done in two halves)
 *
 * (include/uapi/linux/perf_event.h, the comment of struct perf_event_mmap_page). Correct
 * only if the page is rewritten at schedule-in: a kernel that did so only at other times
 * would make the read count wall time since the update; so the first thread that finds
 * cap_user_time checks it once for the process: over a 200 us sleep the page's figure must
 * grow as clock_gettime's does, not by the sleep. The running time counts from the event's
 * opening, so each thread keeps a base (clock_gettime minus the page at opening).
 *
 * "perf switches" (cap_user_time clear, as on a virtual machine whose clock is kvm-clock:
 * this one): the page still tells, by its lock, whether the thread has been scheduled in
 * again since it last looked, and a thread that has not been has run all along, so
 * its CPU time grows as CLOCK_MONOTONIC does, which the vDSO reads in user space. So each
 * thread keeps a base, one clock_gettime of its CPU time, the CLOCK_MONOTONIC reading
 * right after it and the lock's value around both; while the lock keeps that value, the
 * figure is the base plus the monotonic time since. A changed lock (a switch), a base over
 * CPUTIME_RESYNC_NS old or a base whose bracket was wide (the thread preempted by the
 * hypervisor in the middle of it) takes a new base with one system call: one a time slice
 * and at most one a millisecond, instead of one a call. What the monotonic time counts and
 * the kernel's does not: interrupts it accounts apart (IRQ_TIME_ACCOUNTING) and time it
 * knows the hypervisor stole, within one millisecond at most; measured here, the two agree
 * within what a clock_gettime bracket can resolve (under 1 us, docs/performance.md). The
 * first thread that finds cap_user_time clear checks once for the process that the lock
 * changes over a sleep, that CLOCK_MONOTONIC costs under a quarter of the system call (it
 * has no vDSO path on some clock sources) and that the two agree over 50 us of running.
 *
 * In both ways the figure returned is kept monotonic per thread (rounding across an update,
 * a new base a little behind the last figure). Where perf_event_open is refused
 * (perf_event_paranoid 3, seccomp) or fails, or a check fails, the answer is clock_gettime,
 * with no warning: a process-wide flag then stops further threads from trying. A thread
 * decides on its first call; one that uses the page holds one descriptor and one mapped
 * page, released at its end by a thread-specific-data destructor. At most 256 threads (and
 * a sixteenth of the descriptor limit) hold one at a time; others use clock_gettime. A
 * forked child reopens (the inherited event counts the parent's thread). The fast paths
 * read and write only the thread's own record, so a signal handler may call in: a base is
 * invalidated before it is rewritten and published last.
 */
#include "core/log.h"
#include "threads/cputime.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define CPUTIME_HAVE_TSC 1
static inline uint64_t read_tsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
#else
#define CPUTIME_HAVE_TSC 0
#endif

static int64_t clock_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CLOCK_MONOTONIC, which the vDSO reads in user space on the usual clock sources (tsc,
 * kvm-clock with a stable pvclock, Hyper-V's TSC page). */
static inline int64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "perf switches": the age after which a base is taken again though the thread has not
 * been scheduled in since (it bounds what the monotonic time may count that the kernel
 * does not, and costs one system call a millisecond of uninterrupted running), and the
 * widest bracket of CLOCK_MONOTONIC readings around the system call a base may have (one
 * wider was interrupted, and its reading's moment is not known well enough). */
#define CPUTIME_RESYNC_NS 1000000
#define CPUTIME_BRACKET_NS 4000

/* The page's time from the counter value cyc, as the kernel's header gives it: the
 * multiplication in two halves keeps cyc * time_mult from overflowing. */
uint64_t cputime_page_ns(const struct cputime_page_snap *s, uint64_t cyc)
{
    if (s->user_time_short)
        cyc = s->time_cycles + ((cyc - s->time_cycles) & s->time_mask);
    uint64_t quot = cyc >> s->time_shift;
    uint64_t rem = cyc & (((uint64_t)1 << s->time_shift) - 1);
    uint64_t delta = s->time_offset + quot * s->time_mult + ((rem * s->time_mult) >> s->time_shift);
    return s->time_running + delta;
}

#if CPUTIME_HAVE_TSC
/* One consistent read of the page and the counter; false if cap_user_time is clear. The
 * lock is even outside an update; an odd or changed lock means an update ran: again. */
static bool page_read(const volatile struct perf_event_mmap_page *pg, uint64_t *ns)
{
    struct cputime_page_snap s;
    uint64_t cyc;
    uint32_t seq;
    do {
        seq = pg->lock;
        __atomic_signal_fence(__ATOMIC_ACQUIRE);
        if (!pg->cap_user_time)
            return false;
        s.time_running = pg->time_running;
        s.time_offset = (uint64_t)pg->time_offset;
        s.time_mult = pg->time_mult;
        s.time_shift = pg->time_shift;
        s.user_time_short = pg->cap_user_time_short;
        s.time_cycles = pg->time_cycles;
        s.time_mask = pg->time_mask;
        cyc = read_tsc();
        __atomic_signal_fence(__ATOMIC_ACQUIRE);
    } while ((seq & 1) != 0 || pg->lock != seq);
    *ns = cputime_page_ns(&s, cyc);
    return true;
}
#endif

enum { UNTRIED = 0, PAGE, SWITCHES, CLOCK };

struct cpuclock {
    int how;                                    /* UNTRIED, PAGE, SWITCHES or CLOCK */
    int fd;
    const volatile struct perf_event_mmap_page *pg;
    int64_t base;                               /* PAGE: clock_gettime - page, at opening */
    int64_t last;                               /* the last figure returned (PAGE, SWITCHES) */
    /* SWITCHES: the base, a clock_gettime of the thread's CPU time and the CLOCK_MONOTONIC
     * reading right after it, valid while the page's lock reads seq (odd: no base). */
    int64_t base_cpu, base_mono;
    volatile uint32_t seq;
    unsigned fork_gen;                          /* forks when it was opened */
};
static _Thread_local struct cpuclock tl_clock;

static _Atomic bool page_off;                   /* a probe failed: nobody tries any more */
static _Atomic int page_checked;                /* 0 not yet, 1 checked fine, -1 failed */
static _Atomic int switches_checked;            /* the same for "perf switches" */
static _Atomic unsigned fork_gen;
static pthread_key_t clock_key;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static bool clock_key_ok;

/* Pages open in the process, and how many may be: each holds a descriptor of the
 * program's, so a program of thousands of threads must not run out of them because its
 * profiler reads CPU time. The threads beyond the budget use clock_gettime. */
static _Atomic int pages_open;
static int page_budget(void)
{
    static _Atomic int budget; /* 0: not computed yet */
    int b = atomic_load_explicit(&budget, memory_order_relaxed);
    if (b == 0) {
        struct rlimit rl;
        rlim_t soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
        b = soft == RLIM_INFINITY || soft / 16 > 256 ? 256 : (int)(soft / 16);
        if (b < 1)
            b = 1;
        atomic_store_explicit(&budget, b, memory_order_relaxed);
    }
    return b;
}

static void page_close(struct cpuclock *c)
{
    if (c->pg != NULL)
        munmap((void *)c->pg, (size_t)sysconf(_SC_PAGESIZE));
    if (c->fd >= 0) {
        close(c->fd);
        atomic_fetch_sub(&pages_open, 1);
    }
    c->pg = NULL;
    c->fd = -1;
}

static void clock_end(void *p)
{
    page_close(p);
}

static void after_fork_child(void)
{
    atomic_fetch_add(&fork_gen, 1);
}

static void clock_key_make(void)
{
    clock_key_ok = pthread_key_create(&clock_key, clock_end) == 0;
    pthread_atfork(NULL, NULL, after_fork_child);
}

const char *cputime_source(void)
{
    switch (tl_clock.how) {
    case PAGE:
        return "perf page";
    case SWITCHES:
        return "perf switches";
    case CLOCK:
        return "clock_gettime";
    default:
        return "untried";
    }
}

#if CPUTIME_HAVE_TSC
/* The process-wide check that the page is updated when the thread is scheduled in: over a
 * sleep it must grow with the thread's CPU time, not with the sleep. */
static bool page_check(struct cpuclock *c)
{
    uint64_t p0, p1;
    struct timespec w0, w1, nap = {0, 200000};
    int64_t c0 = clock_now();
    clock_gettime(CLOCK_MONOTONIC, &w0);
    if (!page_read(c->pg, &p0))
        return false;
    nanosleep(&nap, NULL);
    if (!page_read(c->pg, &p1))
        return false;
    int64_t c1 = clock_now();
    clock_gettime(CLOCK_MONOTONIC, &w1);
    int64_t wall = (int64_t)(w1.tv_sec - w0.tv_sec) * 1000000000LL + (w1.tv_nsec - w0.tv_nsec);
    int64_t dp = (int64_t)(p1 - p0), dc = c1 - c0;
    bool ok = dp >= 0 && dp - dc < wall / 4 && dc - dp < wall / 4;
    log_debug("thread CPU time: perf page check over a %lld ns sleep: page +%lld ns, "
              "clock_gettime +%lld ns: %s", (long long)wall, (long long)dp, (long long)dc,
              ok ? "used" : "not used (clock_gettime)");
    return ok;
}

/* The process-wide check of "perf switches": the lock moves when the thread is scheduled
 * in (over a sleep), CLOCK_MONOTONIC is cheap (the least of three timings of 16 reads
 * against two system calls: under a quarter of one), and over 50 us of running without
 * being scheduled out the thread's CPU time grew as CLOCK_MONOTONIC did, within the
 * brackets of the readings and 5 us (the first try of five that was not scheduled out). */
static bool switches_check(const volatile struct perf_event_mmap_page *pg)
{
    struct timespec nap = {0, 200000};
    uint32_t s0 = pg->lock;
    nanosleep(&nap, NULL);
    uint32_t s1 = pg->lock;
    if (s1 == s0 || (s0 & 1) != 0 || (s1 & 1) != 0) {
        log_debug("thread CPU time: the perf page's lock did not move over a sleep (%u, %u): "
                  "clock_gettime", s0, s1);
        return false;
    }
    int64_t mono = -1, cpu = -1;
    for (int k = 0; k < 3; k++) {
        int64_t t0 = mono_now();
        for (int i = 0; i < 16; i++)
            (void)mono_now();
        int64_t t1 = mono_now();
        (void)clock_now();
        (void)clock_now();
        int64_t t2 = mono_now();
        int64_t m = (t1 - t0) / 17, c = (t2 - t1) / 2;
        mono = mono < 0 || m < mono ? m : mono;
        cpu = cpu < 0 || c < cpu ? c : cpu;
    }
    if (mono * 4 >= cpu) {
        log_debug("thread CPU time: CLOCK_MONOTONIC costs %lld ns, the thread's clock %lld ns: "
                  "clock_gettime", (long long)mono, (long long)cpu);
        return false;
    }
    for (int k = 0; k < 5; k++) {
        uint32_t s = pg->lock;
        int64_t w0 = mono_now(), c0 = clock_now(), w1 = mono_now();
        while (mono_now() - w1 < 50000)
            ;
        int64_t w2 = mono_now(), c1 = clock_now(), w3 = mono_now();
        if (pg->lock != s)
            continue; /* scheduled in again meanwhile: nothing to compare */
        int64_t dc = c1 - c0, dw = (w2 + w3) / 2 - (w0 + w1) / 2;
        int64_t slack = (w1 - w0) / 2 + (w3 - w2) / 2 + 5000;
        bool ok = dc - dw <= slack && dw - dc <= slack;
        log_debug("thread CPU time: over %lld ns of running the thread's clock grew %lld ns "
                  "(CLOCK_MONOTONIC %lld ns a read, the thread's clock %lld ns): %s",
                  (long long)dw, (long long)dc, (long long)mono, (long long)cpu,
                  ok ? "perf switches" : "clock_gettime");
        return ok;
    }
    log_debug("thread CPU time: scheduled out in each of five tries of the perf page: "
              "clock_gettime");
    return false;
}

/* A new base for "perf switches": the thread's CPU time by the system call, with the lock
 * around it and CLOCK_MONOTONIC after it (the extrapolation from there lags the kernel's
 * figure by at most the system call's tail, never leads it). Taken only if no schedule-in
 * came between and the bracket was narrow; else none, and the next call tries again. */
static __attribute__((noinline)) int64_t switches_sync(struct cpuclock *c)
{
    c->seq = 1; /* no base while this one is written (a signal handler's call takes its own) */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t s = c->pg->lock;
    int64_t w0 = mono_now();
    int64_t cpu = clock_now();
    int64_t w1 = mono_now();
    if (__builtin_expect(cpu < 0, 0))
        return cpu;
    if (c->pg->lock == s && (s & 1) == 0 && w1 - w0 <= CPUTIME_BRACKET_NS) {
        c->base_cpu = cpu;
        c->base_mono = w1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        c->seq = s;
    }
    int64_t t = cpu > c->last ? cpu : c->last;
    c->last = t;
    return t;
}
#endif

/* The first call on a thread (or after a fork): try the page, else settle on the clock. */
static __attribute__((noinline, cold)) int64_t clock_first(struct cpuclock *c)
{
    if (c->how == PAGE || c->how == SWITCHES) /* a forked child: the event counts the parent's thread */
        page_close(c);
    c->how = CLOCK;
    c->fd = -1;
    c->pg = NULL;
#if CPUTIME_HAVE_TSC
    if (atomic_load_explicit(&page_off, memory_order_relaxed))
        return clock_now();
    pthread_once(&clock_once, clock_key_make);
    if (atomic_load(&pages_open) >= page_budget())
        return clock_now(); /* this thread only: the budget of descriptors is spent */
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        /* Out of descriptors or memory: this thread only. Refused or absent: everyone. */
        if (errno != EMFILE && errno != ENFILE && errno != ENOMEM)
            atomic_store(&page_off, true);
        log_debug("thread CPU time: perf_event_open(TASK_CLOCK): %s; clock_gettime",
                  strerror(errno));
        return clock_now();
    }
    atomic_fetch_add(&pages_open, 1); /* page_close takes it back */
    void *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
    if (pg == MAP_FAILED) {
        close(fd);
        atomic_fetch_sub(&pages_open, 1);
        log_debug("thread CPU time: mmap of the perf page: %s; clock_gettime", strerror(errno));
        return clock_now();
    }
    c->fd = fd;
    c->pg = pg;
    uint64_t p0, p1;
    int64_t now = 0;
    if (!page_read(c->pg, &p0)) {
        /* cap_user_time clear: so for every thread; its lock may still witness switches. */
        int sw = atomic_load(&switches_checked);
        if (sw == 0) {
            sw = switches_check(c->pg) ? 1 : -1;
            atomic_store(&switches_checked, sw);
        }
        if (sw < 0 || !clock_key_ok || pthread_setspecific(clock_key, c) != 0) {
            if (sw < 0)
                atomic_store(&page_off, true);
            page_close(c);
            return clock_now();
        }
        c->last = 0;
        c->seq = 1;
        c->fork_gen = atomic_load(&fork_gen);
        c->how = SWITCHES;
        return switches_sync(c);
    }
    int checked = atomic_load(&page_checked);
    if (checked == 0) {
        checked = page_check(c) ? 1 : -1;
        atomic_store(&page_checked, checked);
    }
    if (checked < 0) {
        atomic_store(&page_off, true);
        page_close(c);
        return clock_now();
    }
    /* The base, taken between two page reads: the clock's figure at their middle. */
    if (!page_read(c->pg, &p0) || (now = clock_now()) < 0 || !page_read(c->pg, &p1)) {
        page_close(c);
        return clock_now();
    }
    if (!clock_key_ok || pthread_setspecific(clock_key, c) != 0) {
        page_close(c);   /* nothing would close it at the thread's end */
        return now;
    }
    c->base = now - (int64_t)(p0 + (p1 - p0) / 2);
    c->last = now;
    c->fork_gen = atomic_load(&fork_gen);
    c->how = PAGE;
    return now;
#else
    return clock_now();
#endif
}

int64_t cputime_now(void)
{
    struct cpuclock *c = &tl_clock;
#if CPUTIME_HAVE_TSC
    if (__builtin_expect(c->how == SWITCHES, 1) &&
        __builtin_expect(c->fork_gen == atomic_load_explicit(&fork_gen, memory_order_relaxed), 1)) {
        /* Not scheduled in since the base (the lock read before and after the clock): the
         * thread ran all the time the monotonic clock counts. */
        uint32_t s = c->pg->lock;
        if (__builtin_expect(s == c->seq, 1)) {
            int64_t w = mono_now();
            int64_t age = w - c->base_mono;
            if (__builtin_expect(c->pg->lock == s, 1) &&
                __builtin_expect((uint64_t)age < CPUTIME_RESYNC_NS, 1)) {
                int64_t t = c->base_cpu + age;
                if (t < c->last)
                    t = c->last;
                c->last = t;
                return t;
            }
        }
        return switches_sync(c);
    }
    if (__builtin_expect(c->how == PAGE, 1) &&
        __builtin_expect(c->fork_gen == atomic_load_explicit(&fork_gen, memory_order_relaxed), 1)) {
        uint64_t p;
        if (__builtin_expect(page_read(c->pg, &p), 1)) {
            int64_t t = c->base + (int64_t)p;
            if (t < c->last)    /* conversion rounding across an update: never backwards */
                t = c->last;
            c->last = t;
            return t;
        }
        /* cap_user_time went clear (the clock source changed): the clock from now on. */
        page_close(c);
        c->how = CLOCK;
        atomic_store(&page_off, true);
        int64_t t = clock_now();
        return t > c->last ? t : c->last;
    }
#endif
    if (__builtin_expect(c->how == CLOCK, 1))
        return clock_now();
    return clock_first(c);
}
