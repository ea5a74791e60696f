/* report.c — the migration report's files, checkpoints and end (report=PATH), its signal
 * handlers, and the JVMTI events it alone asks for (virtual thread starts, native binds).
 *
 * The report is written as the run goes: at report_begin (VMInit or attach), after
 * JVM_INIT_DONE and every few seconds (a checkpoint, which says so), and at the end, whose
 * last line is "end of report". A run killed by SIGKILL or a timeout leaves the last
 * checkpoint. The text (text.c) is async-signal-safe, so that a crash handler can rewrite
 * the report as it stood at the crash; each file stays open from report_begin to the end
 * for that.
 *
 * Signals. report_begin chains handlers in front of the JVM's (installed before VMInit):
 *  - SIGTERM, SIGINT: the handler only notes the signal and calls the JVM's handler, which
 *    runs the JVM's shutdown; VMDeath then writes the report, which says so once. Where
 *    the JVM installed none (-Xrs), the report is finished there, and the signal's default
 *    action follows.
 *  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: HotSpot uses SIGSEGV itself (safepoint polls,
 *    implicit null checks, stack banging), so the handler first decides from the pc alone,
 *    against address ranges computed beforehand, whether the signal is the agent's: pc in
 *    the agent library, or in the shim, or in libc at a near-NULL address while the thread
 *    is delivering an event or serving a JVMPI function (SIGABRT: any pc while it is). Any
 *    other signal goes straight to the JVM's handler, with no side effect (not even a
 *    thread-local read, whose first touch on a thread may allocate). For the agent's, the
 *    report is rewritten with the crash record (signal, one attribution used by the summary
 *    too, the symbol by dladdr or, for abort() and libc, the agent's return address found
 *    on the stack, and what follows: the JVM's handler, which on HotSpot writes hs_err, or,
 *    for SIGABRT, which the JVM does not handle, the default action and no hs_err), then
 *    the previous handler runs: the exit status stays the JVM's.
 * With libjsig preloaded the JVM keeps its handlers and calls others only for signals it
 * does not want itself, and expects them to handle those: the shim then installs no handler
 * and the report says so. -Xcheck:jni makes HotSpot warn once that these handlers changed.
 *
 * The report sits above the areas (shim/README.md): it reads what every layer counted
 * (events/report.h, struct instance) and is started and ended by face/ and the entry point.
 */
#include "core/api.h"
#include "events/report.h"
#include "report/internal.h"
#include "report/report.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define CHECKPOINT_SECONDS 2

struct report_run report_run = {.signals_note = ""};

/* Per agent with report=PATH: the file, open from report_begin to the end (a crash handler
 * rewrites it). */
static int rep_fd[SHIM_MAX_INSTANCES] = {-1, -1, -1, -1};
static bool rep_open_failed[SHIM_MAX_INSTANCES];
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: file writes only */
static _Atomic int written;       /* the final report is written (or being written) */
static _Atomic int end_signal;    /* SIGTERM/SIGINT noted by the handler, else 0 */
static _Atomic int crash_claimed; /* the crash record is written (or being written) */
static _Atomic int rewriting;     /* a report file is being truncated and rewritten */

static void sysprop(char *out, size_t n, const char *name)
{
    char *v = NULL;
    out[0] = '\0';
    /* A property JVMTI does not give leaves its place in the header empty. */
    if (g_shim.jvmti != NULL &&
        jvmti_ok_at((*g_shim.jvmti)->GetSystemProperty(g_shim.jvmti, name, &v), LOG_DEBUG,
                    "report: GetSystemProperty for the header's JVM line") &&
        v) {
        snprintf(out, n, "%s", v);
        jvmti_free(g_shim.jvmti, v);
    }
}

/* log.c calls this for every warning it prints; the agent's misuse (log_misuse) is counted
 * apart. */
static void on_shim_warning(const char *line)
{
    report_note(REP_SHIM_WARNING, "%s", line);
}

/* Replace the file's content with this agent's report (the fd stays the same file, for the
 * crash handler). Called with write_lock held. */
static void write_one(struct instance *inst, const char *how, bool final)
{
    int s = inst->slot;
    int fd = rep_fd[s];
    if (fd < 0)
        return;
    /* Dekker with the crash handler (both seq_cst): either it sees `rewriting` and waits
     * for this rewrite to end, or this sees crash_claimed and leaves its record alone. */
    atomic_store(&rewriting, 1);
    if (atomic_load(&crash_claimed)) {
        atomic_store(&rewriting, 0);
        return;
    }
    struct w w = {.fd = fd};
    bool ok = ftruncate(fd, 0) == 0;
    if (ok) {
        write_text(&w, inst, how, final ? TEXT_FINAL : TEXT_CHECKPOINT);
        w_flush(&w);
        ok = !w.failed;
    }
    int err = errno;
    atomic_store(&rewriting, 0);
    if (!ok)
        log_error("agent %d: report=%s: writing the migration report failed: %s", s,
                  inst->opts.report_file, strerror(err));
    else if (final)
        log_info("agent %d: migration report written to %s", s, inst->opts.report_file);
}

/* Open the file (O_APPEND: each rewrite, after ftruncate, starts at the beginning). A
 * failure is an error naming the path; the program runs on. */
static void open_report(struct instance *inst)
{
    int s = inst->slot;
    if (rep_fd[s] >= 0 || rep_open_failed[s] || inst->opts.report_file == NULL)
        return;
    int fd = open(inst->opts.report_file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        rep_open_failed[s] = true; /* said once */
        log_error("agent %d: report=%s: cannot write the migration report: %s", s,
                  inst->opts.report_file, strerror(errno));
        return;
    }
    rep_fd[s] = fd;
}

void report_checkpoint(const char *when)
{
    if (!report_timing)
        return;
    pthread_mutex_lock(&write_lock);
    if (!atomic_load(&written))
        for (int i = 0; i < g_shim.ninst; i++)
            if (rep_fd[i] >= 0)
                write_one(&g_shim.inst[i], when, false);
    pthread_mutex_unlock(&write_lock);
}

static void write_nobody(const char *how);

void report_write_all(const char *how)
{
    pthread_mutex_lock(&write_lock);
    if (atomic_exchange(&written, 1)) {
        pthread_mutex_unlock(&write_lock);
        return;
    }
    /* How the run ended, said once: the JVM's exit, or a signal it shut down on. */
    int sig = atomic_load(&end_signal);
    if (strcmp(how, "JVM_SHUT_DOWN") == 0)
        how = sig == SIGTERM ? "SIGTERM: the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN"
              : sig == SIGINT ? "SIGINT: the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN"
                              : "the JVM's exit (main returned or System.exit): the agent got JVM_SHUT_DOWN";
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        if (inst->opts.report_file == NULL)
            continue;
        if (report_run.jvm_line[0] == '\0') { /* a refused start before report_begin */
            char vm[160], ver[96], vendor[96];
            sysprop(vm, sizeof vm, "java.vm.name");
            sysprop(ver, sizeof ver, "java.vm.version");
            sysprop(vendor, sizeof vendor, "java.vm.vendor");
            snprintf(report_run.jvm_line, sizeof report_run.jvm_line, "%s %s (%s), JVMTI %d.%d",
                     vm, ver, vendor, (g_shim.jvmti_version >> 16) & 0x0fff,
                     (g_shim.jvmti_version >> 8) & 0xff);
        }
        open_report(inst);
        write_one(inst, how, true);
    }
    write_nobody(how);
    pthread_mutex_unlock(&write_lock);
}

static void *checkpoint_loop(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {CHECKPOINT_SECONDS, 0};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (atomic_load(&written))
            return NULL;
        report_checkpoint("checkpoint");
    }
}

/* ---- signals ---- */

struct range {
    uintptr_t lo, hi;
};
static struct range agent_text[SHIM_MAX_INSTANCES], shim_text, libc_text;
static struct sigaction prev_act[NSIG];
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int end_sigs[] = {SIGTERM, SIGINT};

static inline bool in_range(const struct range *r, uintptr_t pc)
{
    return pc >= r->lo && pc < r->hi;
}

/* The executable segments of the object loaded at `base` (dli_fbase). */
struct find_text {
    uintptr_t base;
    struct range r;
};
static int find_text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_text *ft = data;
    uintptr_t first = 0;
    bool have_first = false;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && !have_first) {
            first = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            have_first = true;
        }
    if (!have_first || ((first & ~(uintptr_t)0xfff) != ft->base && info->dlpi_addr != ft->base))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ft->r.hi == 0 || lo < ft->r.lo)
            ft->r.lo = lo;
        if (hi > ft->r.hi)
            ft->r.hi = hi;
    }
    return 1;
}

static struct range text_of(const void *addr_in_object)
{
    Dl_info di;
    struct find_text ft = {0, {0, 0}};
    if (addr_in_object == NULL || dladdr(addr_in_object, &di) == 0 || di.dli_fbase == NULL)
        return ft.r;
    ft.base = (uintptr_t)di.dli_fbase;
    dl_iterate_phdr(find_text_cb, &ft);
    return ft.r;
}

/* A return address into agent `slot`'s library among the words just above the stack
 * pointer: the agent's frame that called abort() or a libc function. Reads at most 2 KiB
 * of this thread's own stack above sp, which holds the frames of the crash (a JVM thread's
 * stack holds far more above them). */
static uintptr_t agent_caller(const ucontext_t *uc, int slot)
{
#if defined(__x86_64__)
    uintptr_t sp = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
#elif defined(__aarch64__)
    uintptr_t sp = uc != NULL ? (uintptr_t)uc->uc_mcontext.sp : 0;
#else
    uintptr_t sp = 0;
    (void)uc;
#endif
    if (sp == 0 || slot < 0 || slot >= SHIM_MAX_INSTANCES || agent_text[slot].hi == 0)
        return 0;
    const uintptr_t *p = (const uintptr_t *)(sp & ~(uintptr_t)(sizeof(uintptr_t) - 1));
    for (int i = 0; i < 256; i++)
        if (in_range(&agent_text[slot], p[i]))
            return p[i];
    return 0;
}

/* Rewrite every report as it stands at the crash, with the crash record. */
static void write_crash_reports(void)
{
    for (int i = 0; i < g_shim.ninst; i++) {
        int fd = rep_fd[i];
        if (fd < 0)
            continue;
        struct w w = {.fd = fd};
        if (ftruncate(fd, 0) != 0)
            w_s(&w, "\n\n(the report could not be truncated: the crash record follows)\n");
        char how[64] = "a crash: ";
        size_t k = strlen(how);
        const char *sn = sig_name(report_run.crash.sig);
        for (size_t j = 0; sn[j] != '\0' && k < sizeof how - 1; j++)
            how[k++] = sn[j];
        how[k] = '\0';
        write_text(&w, &g_shim.inst[i], how, TEXT_CRASH);
        w_s(&w, "end of report (the run ended by ");
        w_s(&w, how);
        w_s(&w, ")\n");
        w_flush(&w);
    }
}

/* Hand the signal on to the handler that was there before (the JVM's). */
static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &prev_act[sig];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction != NULL) {
            p->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (p->sa_handler == SIG_IGN) {
        return;
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != NULL) {
        p->sa_handler(sig);
        return;
    }
    /* No handler before: the default action. A fault re-executes and dies on return;
     * a sent signal is raised again, pending until this handler returns. */
    struct sigaction d;
    memset(&d, 0, sizeof d);
    d.sa_handler = SIG_DFL;
    sigemptyset(&d.sa_mask);
    sigaction(sig, &d, NULL);
    if (si == NULL || si->si_code <= 0 || sig == SIGABRT)
        raise(sig);
}

static bool has_handler(int sig)
{
    const struct sigaction *p = &prev_act[sig];
    return (p->sa_flags & SA_SIGINFO) ? p->sa_sigaction != NULL
                                      : (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN &&
                                         p->sa_handler != NULL);
}

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
    /* Decide from the pc alone, before touching anything: most SIGSEGVs are the JVM's. */
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
#elif defined(__aarch64__)
    uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.pc : 0;
#else
    uintptr_t pc = 0; /* unknown here: only aborts in the agent's activity are recorded */
    (void)uc;
#endif
    int in_slot = -1;
    for (int i = 0; i < SHIM_MAX_INSTANCES; i++)
        if (agent_text[i].hi != 0 && in_range(&agent_text[i], pc))
            in_slot = i;
    bool in_shim = in_range(&shim_text, pc);
    bool ours = in_slot >= 0 || in_shim;
    /* This thread's activity is read only for signals that are crashes whoever caused them
     * (an abort, a near-NULL access in libc): a thread's first touch of a thread-local may
     * allocate, which the JVM's own signals (safepoint polls, implicit null checks in
     * compiled code, SafeFetch in libjvm) must never pay for. */
    int slot = -1, ev = -1, fn = -1;
    bool in_libc = in_range(&libc_text, pc);
    bool crash_anyway = sig == SIGABRT ||
                        ((sig == SIGSEGV || sig == SIGBUS) && in_libc && si != NULL &&
                         (uintptr_t)si->si_addr < 65536);
    if ((ours || crash_anyway) && report_tl_readable()) {
        slot = report_tl.slot;
        ev = report_tl.event;
        fn = report_tl.fn;
    }
    if (!ours && crash_anyway)
        ours = slot >= 0; /* abort(), strlen(NULL) and the like, from the agent */
    if (ours && !atomic_exchange(&crash_claimed, 1)) {
        atomic_store(&report_run.crash_signal, sig);
        /* A checkpoint rewriting the file would interleave with this text: wait for one in
         * progress (bounded: the crash may be on the writing thread itself); none starts
         * after crash_claimed. */
        for (int i = 0; i < 200 && atomic_load(&rewriting); i++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        struct crash_info *c = &report_run.crash;
        c->sig = sig;
        c->si_code = si != NULL ? si->si_code : 0;
        c->addr = si != NULL ? (uintptr_t)si->si_addr : 0;
        c->pc = pc;
        c->in_slot = in_slot;
        c->in_shim = in_shim;
        c->slot = slot;
        c->ev = ev;
        c->fn = fn;
        c->jvm_handler = has_handler(sig);
        c->caller = in_slot < 0 && !in_shim ? agent_caller(uc, slot) : 0;
        /* dladdr takes the dynamic loader's lock: not for a pc in libc or the loader,
         * where this thread may hold it; an agent's or the shim's code does not. */
        Dl_info di;
        uintptr_t at = c->caller ? c->caller - 1 : pc;
        if ((ours && (in_slot >= 0 || in_shim || c->caller)) && dladdr((void *)at, &di) != 0) {
            c->obj = di.dli_fname;
            if (di.dli_sname != NULL) {
                c->sym = di.dli_sname;
                c->sym_off = at + (c->caller ? 1 : 0) - (uintptr_t)di.dli_saddr;
            }
        }
        write_crash_reports();
    }
    chain(sig, si, ucv);
}

static void on_end_signal(int sig, siginfo_t *si, void *uc)
{
    int zero = 0;
    atomic_compare_exchange_strong(&end_signal, &zero, sig);
    const struct sigaction *p = &prev_act[sig];
    if (!has_handler(sig) && p->sa_handler == SIG_DFL && !atomic_exchange(&written, 1) &&
        !atomic_exchange(&crash_claimed, 1)) {
        /* No JVM handler (-Xrs): the process dies now, without a shutdown. The report is
         * rewritten as it stands, as for a crash (no checkpoint starts after the claim). */
        for (int i = 0; i < 200 && atomic_load(&rewriting); i++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        report_run.unhandled_end = sig;
        const char *how = sig == SIGTERM ? "SIGTERM without a JVM shutdown" : "SIGINT without a JVM shutdown";
        for (int i = 0; i < g_shim.ninst; i++)
            if (rep_fd[i] >= 0) {
                struct w w = {.fd = rep_fd[i]};
                if (ftruncate(rep_fd[i], 0) != 0)
                    w_s(&w, "\n\n(the report could not be truncated: the final text follows)\n");
                write_text(&w, &g_shim.inst[i], how, TEXT_FINAL);
                w_flush(&w);
            }
    }
    chain(sig, si, uc);
}

static void install(int sig, void (*h)(int, siginfo_t *, void *))
{
    struct sigaction sa, old;
    if (sigaction(sig, NULL, &old) != 0)
        return;
    /* An ignored SIGINT (a background job) ends nothing: nothing to note. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_mask = old.sa_mask;
    sa.sa_flags = (old.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    prev_act[sig] = old;
    sigaction(sig, &sa, NULL);
}

static bool expect_agents; /* agents may come late, with reports (face/clients.c) */
static char *expect_path;  /* the first late agent's report: said to be empty if none came */

void report_expect_agents(const char *path)
{
    expect_agents = true;
    if (expect_path == NULL && path != NULL)
        expect_path = strdup(path);
}

/* report= given for the libraries that ask for JVMPI, and none asked: the file says so,
 * rather than being missing. Called with write_lock held. */
static void write_nobody(const char *how)
{
    if (expect_path == NULL)
        return;
    for (int i = 0; i < g_shim.ninst; i++)
        if (g_shim.inst[i].client)
            return;
    int fd = open(expect_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_error("report=%s: cannot write the migration report: %s", expect_path, strerror(errno));
        return;
    }
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "jvmpishim migration report\n"
                     "agent:    none: no library of the program asked the JavaVM for JVMPI "
                     "(GetEnv(JVMPI_VERSION_1)) in this run\n"
                     "JVM:      %s\n\nend of report (the run ended by %s)\n",
                     report_run.jvm_line, how);
    if (n > 0 && write(fd, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1) < 0)
        log_error("report=%s: writing the migration report failed: %s", expect_path,
                  strerror(errno));
    close(fd);
}

/* The crash attribution's range of a library that asked for JVMPI itself. */
static struct range text_of(const void *addr_in_object);

void report_add_agent(struct instance *inst)
{
    /* Its file, if the writer runs (a report= was given at start: clients_report_path). */
    if (inst->opts.report_file == NULL || !report_timing)
        return;
    pthread_mutex_lock(&write_lock);
    agent_text[inst->slot] = text_of(inst->lib_base);
    open_report(inst);
    pthread_mutex_unlock(&write_lock);
}

void report_begin(void)
{
    bool any = expect_agents;
    for (int i = 0; i < g_shim.ninst; i++)
        any |= g_shim.inst[i].opts.report_file != NULL;
    if (!any)
        return;
    report_run.started_mono = report_now();
    char vm[160], ver[96], vendor[96];
    sysprop(vm, sizeof vm, "java.vm.name");
    sysprop(ver, sizeof ver, "java.vm.version");
    sysprop(vendor, sizeof vendor, "java.vm.vendor");
    snprintf(report_run.jvm_line, sizeof report_run.jvm_line, "%s %s (%s), JVMTI %d.%d", vm,
             ver, vendor, (g_shim.jvmti_version >> 16) & 0x0fff, (g_shim.jvmti_version >> 8) & 0xff);
    log_set_warn_hook(on_shim_warning);
    for (int i = 0; i < g_shim.ninst; i++) {
        struct instance *inst = &g_shim.inst[i];
        open_report(inst);
        if (inst->dl != NULL && inst->jvm_onload != NULL)
            agent_text[i] = text_of((const void *)(uintptr_t)inst->jvm_onload);
    }
    shim_text = text_of((const void *)(uintptr_t)report_begin);
    libc_text = text_of((const void *)(uintptr_t)write);

    /* Handlers go in front of the JVM's, which are in place by VMInit. With libjsig the
     * JVM keeps its own and would treat a handler of ours as the application's, to be
     * called for signals it does not want and expected to handle them: none then. */
    if (dlsym(RTLD_DEFAULT, "JVM_begin_signal_setting") != NULL) {
        report_run.signals_note = "libjsig is preloaded: no crash record and no SIGTERM/SIGINT note "
                       "(the JVM's signal chaining would treat the shim's handlers as the "
                       "application's)";
    } else {
        for (size_t k = 0; k < sizeof crash_sigs / sizeof crash_sigs[0]; k++)
            install(crash_sigs[k], on_crash);
        for (size_t k = 0; k < sizeof end_sigs / sizeof end_sigs[0]; k++)
            install(end_sigs[k], on_end_signal);
        report_run.signals_note = "";
    }
    report_timing = true;
    report_checkpoint("the agents are starting");
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, checkpoint_loop, NULL) != 0)
        log_warn("report: no checkpoint thread: the report is written at the start and the end only");
    pthread_attr_destroy(&at);
}

/* ---- virtual threads (JVMTI 21+), vthreads=carriers (threads/vthreads.c counts the rest) ----
 * A virtual thread has no JNIEnv of its own: the JVMPI events it causes carry the JNIEnv,
 * the env_id, of the carrier thread it is mounted on, so an agent sees its work as the
 * carrier's. The report counts the virtual threads that started. The shim is compiled
 * against JDK 17's jvmti.h, which names neither the capability (can_support_virtual_threads,
 * the bit after can_generate_sampled_object_alloc_events) nor the event
 * (JVMTI_EVENT_VIRTUAL_THREAD_START = 87, whose callback slot follows SampledObjectAlloc):
 * both are found from their neighbours; a JVM without them offers neither. */
#define VTHREAD_START_EVENT 87

static bool vthreads_cap;

bool report_vthreads_onload(void)
{
    vthreads_cap = shim_take_vthreads_capability();
    return vthreads_cap;
}

static void JNICALL on_vthread_start(jvmtiEnv *j, JNIEnv *jni, jthread vt)
{
    if (report_count(REP_VIRTUAL_THREAD) > 0) {
        report_note(REP_VIRTUAL_THREAD, "(not formatted)");
        return;
    }
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    /* Only the report's example line needs the name: a failure leaves a '?' there. */
    bool named = jvmti_ok_at((*j)->GetThreadInfo(j, vt, &ti), LOG_DEBUG,
                             "report: GetThreadInfo of a virtual thread that started");
    report_note(REP_VIRTUAL_THREAD, "virtual thread \"%s\", its events posted with the env_id "
                                    "of its carrier thread (vthreads=carriers; JNIEnv %p)",
                named && ti.name ? ti.name : "?", (void *)jni);
    if (named) {
        jvmti_free(j, ti.name);
        if (ti.thread_group != NULL)
            (*jni)->DeleteLocalRef(jni, ti.thread_group);
        if (ti.context_class_loader != NULL)
            (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
    }
}

void report_vthreads_callbacks(void **slot_87)
{
    if (vthreads_cap)
        *slot_87 = (void *)(uintptr_t)on_vthread_start;
}

void report_vthreads_enable(void)
{
    if (vthreads_cap)
        jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                             (jvmtiEvent)VTHREAD_START_EVENT, NULL),
                    LOG_WARN, "enabling VirtualThreadStart for the migration report");
}

/* ---- Java natives bound to the agent's code ----
 * Old agents often had Java helper classes whose natives they implemented and bound with
 * JNI RegisterNatives. JVMTI NativeMethodBind (only with report=) shows each bind; those
 * whose address is in an agent library are counted. */
static bool natives_cap;

bool report_natives_onload(void)
{
    jvmtiCapabilities want;
    memset(&want, 0, sizeof want);
    want.can_generate_native_method_bind_events = 1;
    /* Without it the report counts no natives bound to the agent library, and says nothing
     * of them: the run itself loses nothing. */
    natives_cap = jvmti_ok_at((*g_shim.jvmti)->AddCapabilities(g_shim.jvmti, &want), LOG_DEBUG,
                              "report: AddCapabilities(can_generate_native_method_bind_events)");
    return natives_cap;
}

static void JNICALL on_native_bind(jvmtiEnv *j, JNIEnv *jni, jthread t, jmethodID m, void *addr,
                                   void **new_addr)
{
    (void)t;
    (void)new_addr;
    int slot = -1;
    for (int i = 0; i < SHIM_MAX_INSTANCES; i++)
        if (agent_text[i].hi != 0 && in_range(&agent_text[i], (uintptr_t)addr))
            slot = i;
    if (slot < 0)
        return;
    if (report_count(REP_NATIVE_BOUND) > 0) {
        report_note(REP_NATIVE_BOUND, "(not formatted)");
        return;
    }
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass c = NULL;
    /* Only the report's example line needs the names: a failure leaves a '?' there. */
    if (!jvmti_ok_at((*j)->GetMethodName(j, m, &name, &sig, NULL), LOG_DEBUG,
                     "report: GetMethodName of a native bound to the agent library"))
        name = sig = NULL;
    if (jvmti_ok_at((*j)->GetMethodDeclaringClass(j, m, &c), LOG_DEBUG,
                    "report: GetMethodDeclaringClass of a native bound to the agent library") &&
        c != NULL &&
        !jvmti_ok_at((*j)->GetClassSignature(j, c, &csig, NULL), LOG_DEBUG,
                     "report: GetClassSignature of a native bound to the agent library"))
        csig = NULL;
    Dl_info di;
    const char *sym = dladdr(addr, &di) != 0 && di.dli_sname != NULL ? di.dli_sname : "(no exported symbol)";
    report_note(REP_NATIVE_BOUND, "%s.%s%s bound to %s in the library of agent %d",
                csig ? csig : "?", name ? name : "?", sig ? sig : "", sym, slot);
    jvmti_free(j, name);
    jvmti_free(j, sig);
    jvmti_free(j, csig);
    if (c != NULL && jni != NULL)
        (*jni)->DeleteLocalRef(jni, c);
}

void report_natives_callbacks(jvmtiEventCallbacks *cb)
{
    if (natives_cap)
        cb->NativeMethodBind = on_native_bind;
}

void report_natives_enable(void)
{
    if (natives_cap)
        jvmti_ok_at((*g_shim.jvmti)->SetEventNotificationMode(g_shim.jvmti, JVMTI_ENABLE,
                                                             JVMTI_EVENT_NATIVE_METHOD_BIND, NULL),
                    LOG_WARN, "enabling NativeMethodBind for the migration report");
}
