/* report.h — the migration report writer (report=PATH): its start, checkpoints and end, and
 * the JVMTI events it asks for on its own. What it reports is counted below it, by every
 * layer (events/report.h). */
#ifndef JVMPISHIM_REPORT_REPORT_H
#define JVMPISHIM_REPORT_REPORT_H

#include "core/shim.h"

/* report_begin: at VMInit (or attach), before any JVM_OnLoad: open each report file, write
 * its header (a report without the final "end of report" line did not end normally), start
 * the periodic checkpoint, and install the signal handlers (crash and SIGTERM/SIGINT)
 * chained in front of the JVM's. report_checkpoint rewrites the reports with what is known
 * so far. report_write_all writes the final report: `how` says how the run ended
 * ("JVM_SHUT_DOWN", "ProfilerExit(3)", ...). Idempotent: only the first call writes. */
void report_begin(void);
void report_checkpoint(const char *when);
/* Libraries that ask for JVMPI themselves get reports (face/clients.c): report_begin starts
 * the writer even when no legacy agent has report=; report_add_agent opens a late
 * instance's file; if none comes, the file at path says so at the end. */
void report_expect_agents(const char *path);
void report_add_agent(struct instance *inst);
void report_write_all(const char *how);

/* Virtual threads (JDK 21+), counted for the report: in Agent_OnLoad, asks for the JVMTI
 * capability (false if this JVM has none); the callback for JVMTI event 87
 * (VirtualThreadStart) into its slot; the event switched on after SetEventCallbacks. */
bool report_vthreads_onload(void);
void report_vthreads_callbacks(void **slot_87);
void report_vthreads_enable(void);
/* Java natives bound to an agent library's code (JVMTI NativeMethodBind), likewise. */
bool report_natives_onload(void);
void report_natives_callbacks(jvmtiEventCallbacks *cb);
void report_natives_enable(void);

#endif
