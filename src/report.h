/* report.h — the migration report (report=PATH) and the agent-misuse notes it lists. */
#ifndef JVMPISHIM_REPORT_H
#define JVMPISHIM_REPORT_H

#include "shim.h"

/* The agent misused a function (bad id, wrong thread, ...): log "agent N: <message>" at
 * `level` and remember it for the report (per call site: a count and the first message). */
void report_misuse(struct instance *inst, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write every agent's report that asked for one (report=PATH). `how` says how the run
 * ended ("JVM_SHUT_DOWN", "ProfilerExit(3)", ...). Idempotent: only the first call writes. */
void report_write_all(const char *how);

#endif
