/* fidelity.h — how faithfully the shim serves each JVMPI function and event (pure C).
 *
 * The migration report prints these for what an agent used. The rows are generated from
 * docs/mapping.md's tables (tools/fidelity-rows.awk), so the two cannot drift.
 */
#ifndef JVMPISHIM_FIDELITY_H
#define JVMPISHIM_FIDELITY_H

enum fidelity { FID_EXACT = 0, FID_DIFFERS, FID_UNAVAILABLE };
/* For a row that differs: may an agent notice (agents of some kind are known to), or is it
 * harmless (agents do not)? The migration report ranks what an agent used by it. */
enum fid_weight { FW_NONE = 0, FW_HARMLESS, FW_MAY };

struct fidelity_row {
    const char *name;       /* function name ("GetCallTrace") or event name ("OBJECT_ALLOC") */
    int event;              /* event number, or -1 for a function */
    enum fidelity status;
    enum fid_weight weight;
    const char *how;        /* one line: what an agent can observe that differs, or why not */
};

/* The row for a JVMPI function, by its name in JVMPI_Interface order; NULL if unknown. */
const struct fidelity_row *fidelity_function(const char *name);
/* The row for event number t; NULL if JVMPI defines no such event. */
const struct fidelity_row *fidelity_event(int t);
/* All rows, for tests: *n gets the count. */
const struct fidelity_row *fidelity_rows(int *n);
const char *fidelity_name(enum fidelity f);
const char *fidelity_weight_name(enum fid_weight w); /* "may", "harmless", "-" */

#endif
