/* options.h — the shim's option grammar (pure C, no JVM). */
#ifndef JVMPISHIM_OPTIONS_H
#define JVMPISHIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct shim_options {
    bool help;              /* "help": print the grammar, start nothing */
    bool log_level_set;
    int log_level;          /* enum log_level; LOG_WARN unless log= says otherwise */
    char *log_file;         /* logfile=PATH, NULL = stderr */
    bool check_dumps;       /* checkdumps: validate every dump before the agent sees it */
    char *report_file;      /* report=PATH: write the migration report there at exit */
    char *record_file;      /* record=PATH: record every event and JVMPI call there */
    int methods;            /* methods=bci|jvmti: how method events are made (enum below) */
    int vthreads;           /* vthreads=threads|carriers: what a virtual thread is (enum below) */
    char *legacy;           /* legacy=PATH or bare NAME (found as libNAME.so) */
    char *agent_options;    /* text after the first ':' of legacy=, verbatim; NULL if no ':' */
};

enum { METHODS_DEFAULT = 0, METHODS_BCI, METHODS_JVMTI };
enum { VTHREADS_DEFAULT = 0, VTHREADS_THREADS, VTHREADS_CARRIERS };

/* Parse the -agentpath/-Xrun option text. Returns 0 and fills *o, or -1 with a message in
 * err that names the offending text. *o owns heap copies; free with options_free().
 * text may be NULL (no options given). */
int options_parse(const char *text, struct shim_options *o, char *err, size_t errlen);
void options_free(struct shim_options *o);
/* The grammar, printed for "help" and on errors. */
const char *options_help(void);

#endif
