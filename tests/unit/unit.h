/* unit.h — a minimal test harness for the pure-C unit tests (no JVM).
 *
 * CHECK(cond, fmt, ...) records one assertion; a failing one prints where and why.
 * UNIT_END() prints "N passed, N failed" as the last line and returns the exit code.
 */
#ifndef JVMPISHIM_UNIT_H
#define JVMPISHIM_UNIT_H
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            unit_passed++;                                                      \
        } else {                                                                \
            unit_failed++;                                                      \
            fprintf(stdout, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stdout, __VA_ARGS__);                                       \
            fputc('\n', stdout);                                                \
        }                                                                       \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                      \
    CHECK((long long)(a) == (long long)(b), "%s = %lld, expected %lld", #a,     \
          (long long)(a), (long long)(b))
#define CHECK_STR(a, b)                                                         \
    CHECK(((a) == NULL && (b) == NULL) ||                                       \
              ((a) != NULL && (b) != NULL && strcmp((a), (b)) == 0),            \
          "%s = \"%s\", expected \"%s\"", #a, (a) ? (a) : "(null)",            \
          (b) ? (b) : "(null)")

#define UNIT_END()                                                              \
    (printf("%d passed, %d failed\n", unit_passed, unit_failed),               \
     unit_failed ? 1 : 0)
#endif
