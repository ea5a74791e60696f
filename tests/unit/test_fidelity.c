/* test_fidelity.c — shim/core/fidelity.c's table against docs/mapping.md. Pure C, no JVM.
 *
 * The migration report tells users, per JVMPI function and event, whether the shim is
 * exact, differs (and how much it may matter) or cannot serve it, in the one line of that
 * item's row in docs/mapping.md: the table is generated from the doc. Every JVMPI function
 * and event must have exactly one row, with a weight where it differs and none otherwise;
 * the doc's rows are read here too, so that a row the generator skipped is caught.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fidelity.h"
#include "unit.h"

static const char *const functions[] = {
    "NotifyEvent", "EnableEvent", "DisableEvent", "RequestEvent", "GetCallTrace", "ProfilerExit",
    "RawMonitorCreate", "RawMonitorEnter", "RawMonitorExit", "RawMonitorWait",
    "RawMonitorNotifyAll", "RawMonitorDestroy", "GetCurrentThreadCpuTime", "SuspendThread",
    "ResumeThread", "GetThreadStatus", "ThreadHasRun", "CreateSystemThread",
    "SetThreadLocalStorage", "GetThreadLocalStorage", "DisableGC", "EnableGC", "RunGC",
    "GetThreadObject", "GetMethodClass", "jobjectID2jobject", "jobject2jobjectID",
    "SuspendThreadList", "ResumeThreadList",
};
static const int events[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 33, 34, 35, 37, 38, 39, 40, 41, 42, 43,
                             44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61};

static FILE *open_mapping(void)
{
    const char *cands[] = {"docs/mapping.md", "../docs/mapping.md", "../../docs/mapping.md"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        FILE *f = fopen(cands[i], "r");
        if (f != NULL)
            return f;
    }
    return NULL;
}

static int parse_status(const char *cell)
{
    while (isspace((unsigned char)*cell))
        cell++;
    if (strncmp(cell, "exact", 5) == 0) return FID_EXACT;
    if (strncmp(cell, "differs", 7) == 0) return FID_DIFFERS;
    if (strncmp(cell, "planned", 7) == 0 || strncmp(cell, "not available", 13) == 0)
        return FID_UNAVAILABLE;
    return -1;
}

int main(void)
{
    int n;
    const struct fidelity_row *rows = fidelity_rows(&n);
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        CHECK(fidelity_function(functions[i]) != NULL, "no fidelity row for function %s", functions[i]);
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK(fidelity_event(events[i]) != NULL, "no fidelity row for event %d", events[i]);
    CHECK(fidelity_event(10) == NULL && fidelity_event(36) == NULL && fidelity_event(62) == NULL,
          "rows for numbers JVMPI leaves unused");
    CHECK(fidelity_function("NoSuchFunction") == NULL, "row for an unknown function");
    CHECK_EQ_INT(n, (int)(sizeof functions / sizeof functions[0] + sizeof events / sizeof events[0]));
    for (int i = 0; i < n; i++) {
        CHECK(rows[i].how != NULL && rows[i].how[0] != '\0', "row %s has no text", rows[i].name);
        CHECK((rows[i].status == FID_DIFFERS) == (rows[i].weight != FW_NONE),
              "row %s: a weight exactly where it differs", rows[i].name);
    }
    CHECK(strstr(fidelity_event(33)->how, "worker thread is visible") == NULL,
          "THREAD_START: the shim's threads are never shown to agents");

    FILE *f = open_mapping();
    CHECK(f != NULL, "docs/mapping.md not found from the current directory");
    if (f == NULL)
        return UNIT_END();
    int *seen = calloc((size_t)n, sizeof *seen);
    char line[16384];
    int doc_rows = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "| ", 2) != 0)
            continue;
        /* Cells: | item | status | weight | one line | */
        char *cells[5] = {0};
        int nc = 0;
        for (char *p = line; *p != '\0' && nc < 5; p++)
            if (*p == '|')
                cells[nc++] = p + 1;
        if (nc < 4)
            continue;
        const struct fidelity_row *r = NULL;
        char name[128];
        const char *item = cells[0];
        while (*item == ' ')
            item++;
        if (item[0] == '`') {
            size_t k = strcspn(item + 1, "(`");
            if (k >= sizeof name)
                continue;
            memcpy(name, item + 1, k);
            name[k] = '\0';
            r = fidelity_function(name);
            if (strcmp(name, "JVM_OnLoad") == 0)
                continue; /* the agent's entry point, not a table function */
            CHECK(r != NULL, "docs/mapping.md has function %s, fidelity.c does not", name);
        } else if (isdigit((unsigned char)item[0])) {
            int t = atoi(item);
            r = fidelity_event(t);
            CHECK(r != NULL, "docs/mapping.md has event %d, fidelity.c does not", t);
        } else {
            continue;
        }
        if (r == NULL)
            continue;
        doc_rows++;
        seen[r - rows]++;
        int st = parse_status(cells[1]);
        CHECK(st >= 0, "docs/mapping.md row %s: unknown status '%.20s'", r->name, cells[1]);
        CHECK(st == (int)r->status, "row %s: docs/mapping.md says %.12s, fidelity.c says %s",
              r->name, cells[1], fidelity_name(r->status));
    }
    fclose(f);
    for (int i = 0; i < n; i++)
        CHECK(seen[i] == 1, "row %s appears %d times in docs/mapping.md", rows[i].name, seen[i]);
    CHECK_EQ_INT(doc_rows, n);
    free(seen);
    return UNIT_END();
}
