/* internal.h — what the report writer's two files share: the async-signal-safe writer and
 * the report's text (text.c), and the facts about the run that report.c gathers (at
 * report_begin and in its signal handlers) and the text states. */
#ifndef JVMPISHIM_REPORT_INTERNAL_H
#define JVMPISHIM_REPORT_INTERNAL_H

#include "core/api.h"

#include <time.h>

/* Output through write(2) only, buffered here: no lock, no allocation, no stdio. */
struct w {
    int fd;
    size_t n;
    bool failed;
    char b[1024];
};
void w_flush(struct w *w);
void w_s(struct w *w, const char *s);

/* What the crash handler found, for the text (filled before it is written). */
struct crash_info {
    int sig, si_code;
    uintptr_t addr, pc;
    int in_slot;           /* pc in this agent's library, else -1 */
    bool in_shim;
    int slot, ev, fn;      /* this thread's activity */
    uintptr_t caller;      /* an agent return address found on the stack, or 0 */
    bool jvm_handler;      /* the JVM handles this signal (else its default action follows) */
    const char *sym, *obj; /* dladdr of the pc (or of caller), if it was safe to ask */
    uintptr_t sym_off;
};

/* The run as the text tells it, beyond the counters (events/report.h). */
struct report_run {
    time_t started;             /* wall clock at load, for the text */
    uint64_t started_mono;      /* report_now() at report_begin: the run's length so far */
    char jvm_line[400];         /* the JVM's name, version, vendor, JVMTI version, read once */
    const char *signals_note;   /* why the shim installed no signal handler, or "" */
    _Atomic int crash_signal;   /* a crash the shim recorded (the JVM may have survived it) */
    int unhandled_end;          /* SIGTERM/SIGINT with no JVM handler (-Xrs): no shutdown */
    struct crash_info crash;
};
extern struct report_run report_run;

const char *sig_name(int sig);

/* One agent's report: at a checkpoint (the run goes on), the final one, or as it stood at
 * a crash (with the crash record). how_ended says how the run ended, or for a checkpoint
 * when it was taken. Async-signal-safe. */
enum text_mode { TEXT_CHECKPOINT, TEXT_FINAL, TEXT_CRASH };
void write_text(struct w *w, const struct instance *inst, const char *how_ended, enum text_mode mode);

#endif
