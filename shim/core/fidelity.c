/* fidelity.c — the per-item fidelity table behind the migration report.
 *
 * One row per JVMPI function and event: exact, differs (with a weight: may an agent notice,
 * or is it harmless, and the one thing an agent is most likely to notice), or unavailable
 * (and why). The rows are docs/mapping.md's tables, turned into C at build time, so the
 * report says what the doc says; tests/unit/test_fidelity.c checks that every function and
 * event has its row. A row's status can still turn "unavailable" at run time when the JVM
 * refuses a capability; the report asks the event switchboard for that.
 */
#include "core/fidelity.h"

#include <stddef.h>
#include <string.h>

/* Generated from docs/mapping.md's tables by tools/fidelity-rows.awk (the Makefile's
 * build/gen/core/fidelity_rows.h): the report's text is the doc's. */
static const struct fidelity_row rows[] = {
#include "core/fidelity_rows.h"
};

const struct fidelity_row *fidelity_rows(int *n)
{
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

const struct fidelity_row *fidelity_function(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].event < 0 && strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

const struct fidelity_row *fidelity_event(int t)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].event == t)
            return &rows[i];
    return NULL;
}

const char *fidelity_weight_name(enum fid_weight w)
{
    switch (w) {
    case FW_MAY: return "may";
    case FW_HARMLESS: return "harmless";
    default: return "-";
    }
}

const char *fidelity_name(enum fidelity f)
{
    switch (f) {
    case FID_EXACT: return "exact";
    case FID_DIFFERS: return "differs";
    default: return "unavailable";
    }
}
