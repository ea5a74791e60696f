/* fidelity.h — how faithfully the shim serves each JVMPI function and event (pure C).
 *
 * The migration report prints these for what an agent used. tests/unit/test_fidelity.c
 * checks every row against the status column of docs/mapping.md, so the two cannot drift.
 */
#ifndef JVMPISHIM_FIDELITY_H
#define JVMPISHIM_FIDELITY_H

enum fidelity { FID_EXACT = 0, FID_DIFFERS, FID_UNAVAILABLE };

struct fidelity_row {
    const char *name;       /* function name ("GetCallTrace") or event name ("OBJECT_ALLOC") */
    int event;              /* event number, or -1 for a function */
    enum fidelity status;
    const char *how;        /* one line: what an agent can observe that differs, or why not */
};

/* The row for a JVMPI function, by its name in JVMPI_Interface order; NULL if unknown. */
const struct fidelity_row *fidelity_function(const char *name);
/* The row for event number t; NULL if JVMPI defines no such event. */
const struct fidelity_row *fidelity_event(int t);
/* All rows, for tests: *n gets the count. */
const struct fidelity_row *fidelity_rows(int *n);
const char *fidelity_name(enum fidelity f);

#endif
