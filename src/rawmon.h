/* rawmon.h — the shim's raw monitor record (rawmon.c owns it). */
#ifndef JVMPISHIM_RAWMON_H
#define JVMPISHIM_RAWMON_H

#include "shim.h"
#include <uthash.h>

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
    int refs;                   /* calls in progress on it (registry lock) */
    bool destroyed;
    UT_hash_handle hh;
};

/* A consistent copy of every live raw monitor, for MONITOR_DUMP. The caller frees *out. */
struct rawmon_info {
    JVMPI_RawMonitor id;
    const char *name;
    uint64_t serial;
    bool owned;
    JNIEnv *owner_env;
    int count, contenders, waiters;
};
size_t rawmon_snapshot(struct rawmon_info **out);

#endif
