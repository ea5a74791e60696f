/* log.h — the shim's one logging and JVMTI-error path. */
#ifndef JVMPISHIM_LOG_H
#define JVMPISHIM_LOG_H

#include <jvmti.h>
#include <stdbool.h>

enum log_level { LOG_QUIET = 0, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Configure: level and optional file (NULL = stderr). Returns false (and logs to stderr)
 * if the file cannot be opened. */
bool log_configure(int level, const char *path);
extern int log_level_now;

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line about the agent's misuse of JVMPI, not about the shim: printed as log_msg does,
 * but not passed to the warning hook (the migration report counts misuse apart). */
void log_misuse(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Called with each warning line log_msg prints (the migration report counts them). */
void log_set_warn_hook(void (*hook)(const char *line));
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  do { if (log_level_now >= LOG_WARN)  log_msg(LOG_WARN, __VA_ARGS__); } while (0)
#define log_info(...)  do { if (log_level_now >= LOG_INFO)  log_msg(LOG_INFO, __VA_ARGS__); } while (0)
#define log_debug(...) do { if (log_level_now >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

/* Warn once per key (a small static flag the caller owns). */
#define log_warn_once(flagp, ...)                                               \
    do { if (!__atomic_exchange_n((flagp), 1, __ATOMIC_RELAXED)) log_warn(__VA_ARGS__); } while (0)

/* The one JVMTI error path: if err != JVMTI_ERROR_NONE, log "<what>: JVMTI_ERROR_<NAME> (<n>)"
 * at the given level and return false. `what` says what the shim was doing. Inline, so a
 * call that succeeds (the hot paths: every event) costs one compare. */
bool jvmti_failed_at(jvmtiError err, int level, const char *what); /* log.c: the error side */
static inline bool jvmti_ok_at(jvmtiError err, int level, const char *what)
{
    return err == JVMTI_ERROR_NONE || jvmti_failed_at(err, level, what);
}
/* The JVM has begun to exit (VMDeath, ProfilerExit, a refused start). A JVMTI callback
 * already running on another thread then meets JVMTI_ERROR_WRONG_PHASE once VMDeath has
 * returned: that is the exit, not a fault, so from here on it is logged at debug level. */
void log_vm_ending(void);
/* Whether VMDeath has come: a JVMTI call failing now fails because the JVM is exiting. */
bool log_vm_is_ending(void);
#define jvmti_ok(err, what) jvmti_ok_at((err), LOG_ERROR, (what))
/* A JVMTI result the shim deliberately does not act on; `why` says why in the call itself
 * (e.g. "Deallocate: nothing to do if it fails"). The error is still named, at debug level,
 * so a user chasing a problem with log=debug sees every JVMTI call that failed. */
static inline void jvmti_ignore(jvmtiError err, const char *why)
{
    if (err != JVMTI_ERROR_NONE && log_level_now >= LOG_DEBUG)
        jvmti_failed_at(err, LOG_DEBUG, why);
}
/* Give back memory JVMTI allocated (names, signatures, arrays). Deallocate fails only for
 * a pointer JVMTI did not allocate; NULL is allowed and does nothing. */
#define jvmti_free(jvmti, p)                                                                 \
    jvmti_ignore((*(jvmti))->Deallocate((jvmti), (unsigned char *)(p)),                      \
                 "Deallocate: the memory is JVMTI's own; nothing to undo if it fails")
const char *jvmti_error_name(jvmtiError err);

#endif
