/* rawmon.h — JVMPI raw monitors as the monitor dump sees them (rawmon.c owns them). */
#ifndef JVMPISHIM_RAWMON_H
#define JVMPISHIM_RAWMON_H

#include "core/shim.h"

struct rawmon;

/* A consistent copy of every raw monitor in use (owned, or with threads waiting), for
 * MONITOR_DUMP. name points at the monitor's own copy: valid while the caller holds the
 * snapshot (rawmon_snapshot_free releases it). */
struct rawmon_info {
    JVMPI_RawMonitor id;
    const char *name;
    JNIEnv *owner_env;
    int n_enter, n_wait;
    JNIEnv **enter_envs, **wait_envs;
    struct rawmon *mon;     /* kept from reuse until rawmon_snapshot_free */
};
size_t rawmon_snapshot(struct rawmon_info **out);
void rawmon_snapshot_free(struct rawmon_info *v, size_t n);

#endif
