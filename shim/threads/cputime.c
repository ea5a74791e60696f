/* cputime.c — the calling thread's CPU time (GetCurrentThreadCpuTime), read in user space
 * where the kernel allows it, else clock_gettime(CLOCK_THREAD_CPUTIME_ID).
 *
 * Tracers ask for the thread's CPU time on every method entry and exit. The thread CPU
 * clock has no vDSO path: clock_gettime(CLOCK_THREAD_CPUTIME_ID) is a system call (about
 * 0.8-1.4 us on a virtual machine, docs/performance.md). Linux offers a user-space read of
 * the same figure through perf's self-monitoring page: a software TASK_CLOCK event opened
 * on the thread (perf_event_open, pid 0, any CPU) and its first page mapped. The kernel
 * writes into that page, under its seqlock `lock`, the event's running time as of the
 * page's last update, and, when it sets cap_user_time, the conversion of the time-stamp
 * counter to its clock (time_offset, time_mult, time_shift; time_cycles and time_mask with
 * cap_user_time_short). For a task event the page is updated each time the task is
 * scheduled in, so while the thread runs and reads it, its CPU time is
 *
 *     time_running + (time_offset + tsc * time_mult >> time_shift, done in two halves)
 *
 * (include/uapi/linux/perf_event.h, the comment of struct perf_event_mmap_page). Correct
 * only if that update at schedule-in happens: the kernel documents the extrapolation for
 * counters that are running, and a TASK_CLOCK event runs exactly while its task does. A
 * kernel that updated the page only at other times would make the read count wall time
 * since the update; so the first thread that finds cap_user_time checks it once for the
 * process: over a 200 us sleep the page's figure must grow as clock_gettime's does, not by
 * the sleep. The running time counts from the event's opening, so each thread keeps a base
 * (clock_gettime minus the page at opening), and the figure returned is kept monotonic.
 *
 * Where cap_user_time is clear (a virtual machine whose clock is kvm-clock rather than a
 * stable TSC, as here; any architecture but x86), where perf_event_open is refused
 * (perf_event_paranoid 3, seccomp) or fails, the answer is clock_gettime, with no warning:
 * a process-wide flag then stops further threads from trying. A thread decides on its first
 * call; one that uses the page holds one descriptor and one mapped page, released at its
 * end by a thread-specific-data destructor. At most 256 threads (and a sixteenth of the
 * descriptor limit) hold one at a time; others use clock_gettime. A forked child reopens (the inherited event
 * counts the parent's thread).
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

enum { UNTRIED = 0, PAGE, CLOCK };

struct cpuclock {
    int how;                                    /* UNTRIED, PAGE or CLOCK */
    int fd;
    const volatile struct perf_event_mmap_page *pg;
    int64_t base;                               /* clock_gettime - page, at opening */
    int64_t last;                               /* the last figure returned (PAGE) */
    unsigned fork_gen;                          /* forks when it was opened */
};
static _Thread_local struct cpuclock tl_clock;

static _Atomic bool page_off;                   /* a probe failed: nobody tries any more */
static _Atomic int page_checked;                /* 0 not yet, 1 checked fine, -1 failed */
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
#endif

/* The first call on a thread (or after a fork): try the page, else settle on the clock. */
static __attribute__((noinline, cold)) int64_t clock_first(struct cpuclock *c)
{
    if (c->how == PAGE)     /* a forked child: the event counts the parent's thread */
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
        /* cap_user_time clear: the system's clock, not the thread's; so for every thread. */
        atomic_store(&page_off, true);
        log_debug("thread CPU time: the perf page offers no user-space time (cap_user_time "
                  "clear); clock_gettime");
        page_close(c);
        return clock_now();
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
