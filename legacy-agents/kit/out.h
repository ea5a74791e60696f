/* kit/out.h — the lines a test agent prints, and how it counts its failures.
 *
 * Every test agent prints one line per call, prefixed with its name ("NAME: ..."), and
 * flushes at once, so that the test sees the line even when the VM dies right after it.
 * Violations are "NAME: FAIL ..." lines and are counted in g_fails, which the agent
 * prints in its summary. Set before including this header:
 *   KIT_NAME      the prefix, a string literal (required);
 *   KIT_LINE      the line buffer, in bytes (default 1024): a longer line is cut there;
 *   KIT_OUT       the stream (default stdout);
 *   KIT_FAIL_MAX  print only the first N failures (default: all of them);
 *   FAIL          define your own FAIL(...) first if a failure must do more (the kit's is
 *                 then not defined).
 * FAILK(k, ...) counts a failure of kind k in the agent's fail_counts[] as well and prints
 * only the first 5 of each kind (agents that judge many events of one kind).
 */
#ifndef KIT_OUT_H
#define KIT_OUT_H

#include <stdarg.h>
#include <stdio.h>

/* Helpers live in each agent that includes them; the unused ones must not warn. */
#define KIT_FN static __attribute__((unused))
#define KIT_VAR static __attribute__((unused))

#ifndef KIT_NAME
#error "define KIT_NAME (the agent's line prefix) before including kit/out.h"
#endif
#ifndef KIT_LINE
#define KIT_LINE 1024
#endif
#ifndef KIT_OUT
#define KIT_OUT stdout
#endif

/* Failures so far; handlers run on many threads at once, so it is only added to with
 * __sync_add_and_fetch. */
KIT_VAR volatile int g_fails;

KIT_FN void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
KIT_FN void say(const char *fmt, ...)
{
    char line[KIT_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line: lines of concurrent handlers do not mix. */
    fprintf(KIT_OUT, KIT_NAME ": %s\n", line);
    fflush(KIT_OUT);
}

#ifndef FAIL
#ifdef KIT_FAIL_MAX
#define FAIL(...)                                                                       \
    do {                                                                                \
        if (__sync_add_and_fetch(&g_fails, 1) <= (KIT_FAIL_MAX))                        \
            say("FAIL " __VA_ARGS__);                                                   \
    } while (0)
#else
#define FAIL(...)                                                                       \
    do {                                                                                \
        __sync_add_and_fetch(&g_fails, 1);                                              \
        say("FAIL " __VA_ARGS__);                                                       \
    } while (0)
#endif
#endif

/* The agent declares volatile int fail_counts[NKINDS]; the summary lists them all. */
#define FAILK(k, ...)                                                                   \
    do {                                                                                \
        __sync_add_and_fetch(&g_fails, 1);                                              \
        if (__sync_add_and_fetch(&fail_counts[k], 1) <= 5)                              \
            say("FAIL " __VA_ARGS__);                                                   \
    } while (0)

/* JVMPI hands out NULL names (e.g. a class without a source file); printf must not see
 * them. */
KIT_FN const char *S(const char *s) { return s ? s : "NULL"; }

#endif
