/* rawmon.h — the shim's raw monitor record (rawmon.c owns it). */
#ifndef JVMPISHIM_RAWMON_H
#define JVMPISHIM_RAWMON_H

#include "core/shim.h"
#include <uthash.h>

/* A thread blocked on a raw monitor, linked from its stack frame into the monitor. */
struct rawmon_waiter {
    JNIEnv *env;
    struct rawmon_waiter *next;
};

struct rawmon {
    uint32_t magic;
    void *key;                  /* == the struct's address: the JVMPI_RawMonitor */
    char *name;                 /* our copy */
    bool silent;                /* name starts with '_': no events */
    uint64_t serial;
    pthread_mutex_t mu;
    pthread_cond_t enter_cv;    /* threads waiting to (re-)enter */
    pthread_cond_t wait_cv;     /* threads in RawMonitorWait */
    bool owned;
    pthread_t owner;
    JNIEnv *owner_env;
    int count;                  /* recursion count of the owner */
    int contenders;             /* threads blocked in RawMonitorEnter */
    int reentering;             /* waiters woken, re-acquiring */
    int waiters;                /* threads in RawMonitorWait */
    uint64_t notify_gen;
    struct rawmon_waiter *entering;   /* contenders and woken waiters, for MONITOR_DUMP */
    struct rawmon_waiter *waiting;    /* threads in RawMonitorWait */
    int refs;                   /* calls in progress on it (registry lock) */
    bool destroyed;
    UT_hash_handle hh;
};

/* A consistent copy of every raw monitor in use (owned, or with threads waiting), for
 * MONITOR_DUMP. name points at the monitor's own copy: valid while the caller holds the
 * snapshot (rawmon_snapshot_free releases it). */
struct rawmon_info {
    JVMPI_RawMonitor id;
    const char *name;
    JNIEnv *owner_env;
    int n_enter, n_wait;
    JNIEnv **enter_envs, **wait_envs;
    struct rawmon *mon;     /* held (refcount) until rawmon_snapshot_free */
};
size_t rawmon_snapshot(struct rawmon_info **out);
void rawmon_snapshot_free(struct rawmon_info *v, size_t n);

#endif
