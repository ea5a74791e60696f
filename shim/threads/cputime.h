/* cputime.h — the calling thread's CPU time, from perf's self-monitoring page where the
 * kernel allows a user-space read, else from clock_gettime (cputime.c). */
#ifndef JVMPISHIM_CPUTIME_H
#define JVMPISHIM_CPUTIME_H

#include <stdbool.h>
#include <stdint.h>

/* The calling thread's CPU time in ns (user and system), monotonic per thread; -1 if the
 * clock failed. The first call on a thread decides how it is read. */
int64_t cputime_now(void);
/* How the calling thread's figure is read: "perf page", "clock_gettime" or "untried". */
const char *cputime_source(void);

/* The fields of struct perf_event_mmap_page the conversion uses, as read under its lock. */
struct cputime_page_snap {
    uint64_t time_running, time_offset, time_cycles, time_mask;
    uint32_t time_mult;
    uint16_t time_shift;
    bool user_time_short;
};
/* The event's running time now, from the snapshot and the time-stamp counter's value. */
uint64_t cputime_page_ns(const struct cputime_page_snap *s, uint64_t cyc);

#endif
