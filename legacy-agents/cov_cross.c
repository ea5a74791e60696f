/* cov_cross.c — a JDK 1.3-style coverage agent that builds its class records in CLASS_LOAD.
 *
 * For tests/it/classes/cov_cross.sh (workload tests/java/CovCross.java). Coverage tools of the
 * JVMPI era (agent-idioms.md, "Coverage tools") filled a record per class in the CLASS_LOAD
 * handler and, at a class's CLASS_LOAD, linked it to the records of its superclass and interfaces,
 * which HotSpot had announced first (their CLASS_LOAD, posted inside the definition, had
 * returned before the subclass's definition could find them). Here:
 *  - CLASS_LOAD_HOOK notes that CovCrossSub is being defined (any thread).
 *  - The CLASS_LOAD handler of CovCrossIface builds its record slowly: it waits until
 *    CovCrossSub's hook has come (the workload defines it on another thread while this
 *    handler runs), then works on for up to HOLD_MS, or until CovCrossSub's CLASS_LOAD
 *    arrives meanwhile, which is the failure; then it marks the record complete. The hold
 *    only widens a window every slow handler has: how long it is decides how likely a
 *    wrong order is caught, never whether a right order passes.
 *  - The CLASS_LOAD of CovCrossSub finds the record of its interface complete, or it is a
 *    FAIL ("before its interface's CLASS_LOAD returned").
 * One agent lock (a JVMPI raw monitor), as such agents had.
 * Prints "cov_cross: loaded", "cov_cross: FAIL ..." for each problem, and at JVM_SHUT_DOWN
 * "cov_cross: summary iface=I sub=S held=H fails=F" (I, S: CLASS_LOADs of CovCrossIface and
 * CovCrossSub; H: 1 if the interface's handler saw the subclass's hook while it ran).
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOLD_MS 3000

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static int sub_hooked, sub_loaded, iface_in_handler, iface_done, iface_loads, sub_loads,
    held, fails;

static unsigned u2(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

/* Is the class file's this_class the given internal name? (Walks the constant pool.) */
static int this_class_is(const unsigned char *b, int len, const char *want)
{
    if (len < 10 || b[0] != 0xCA || b[1] != 0xFE || b[2] != 0xBA || b[3] != 0xBE)
        return 0;
    unsigned ncp = u2(b + 8);
    const unsigned char **cp = calloc(ncp + 1, sizeof *cp), *p = b + 10, *end = b + len;
    int is = 0;
    if (cp == NULL)
        return 0;
    for (unsigned i = 1; i < ncp; i++) {
        if (p >= end)
            goto out;
        cp[i] = p;
        switch (*p) {
        case 1: p += 3 + u2(p + 1); break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: p += 5; break;
        case 5: case 6: p += 9; i++; break;
        case 7: case 8: case 16: case 19: case 20: p += 3; break;
        case 15: p += 4; break;
        default: goto out;
        }
    }
    if (p + 4 > end)
        goto out;
    unsigned tc = u2(p + 2);
    if (tc == 0 || tc >= ncp || *cp[tc] != 7 || u2(cp[tc] + 1) >= ncp)
        goto out;
    const unsigned char *u = cp[u2(cp[tc] + 1)];
    is = u != NULL && *u == 1 && u2(u + 1) == strlen(want) && memcmp(u + 3, want, strlen(want)) == 0;
out:
    free(cp);
    return is;
}

static void on_hook(JVMPI_Event *ev)
{
    ev->u.class_load_hook.new_class_data = ev->u.class_load_hook.class_data;
    ev->u.class_load_hook.new_class_data_len = ev->u.class_load_hook.class_data_len;
    const unsigned char *b = ev->u.class_load_hook.class_data;
    int len = ev->u.class_load_hook.class_data_len;
    if (!this_class_is(b, len, "CovCrossSub"))
        return;
    jvmpi->RawMonitorEnter(lock);
    sub_hooked = 1;
    jvmpi->RawMonitorNotifyAll(lock);
    jvmpi->RawMonitorExit(lock);
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    if (strcmp(name, "CovCrossIface") == 0) {
        jvmpi->RawMonitorEnter(lock);
        iface_loads++;
        iface_in_handler = 1;
        for (int waited = 0; !sub_hooked && waited < 60000; waited += 100)
            jvmpi->RawMonitorWait(lock, 100);
        held = sub_hooked;
        for (int waited = 0; sub_hooked && !sub_loaded && waited < HOLD_MS; waited += 50)
            jvmpi->RawMonitorWait(lock, 50);
        iface_in_handler = 0;
        iface_done = 1;
        jvmpi->RawMonitorExit(lock);
    } else if (strcmp(name, "CovCrossSub") == 0) {
        jvmpi->RawMonitorEnter(lock);
        sub_loads++;
        sub_loaded = 1;
        if (!iface_done) {
            fails++;
            printf("cov_cross: FAIL CLASS_LOAD of CovCrossSub on env %p before its interface's "
                   "CLASS_LOAD returned (%s)\n", (void *)ev->env_id,
                   iface_in_handler ? "its handler was still running" : "none had come");
            fflush(stdout);
        }
        jvmpi->RawMonitorNotifyAll(lock);
        jvmpi->RawMonitorExit(lock);
    }
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK: on_hook(ev); break;
    case JVMPI_EVENT_CLASS_LOAD: on_class_load(ev); break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        printf("cov_cross: summary iface=%d sub=%d held=%d fails=%d\n", iface_loads, sub_loads,
               held, fails);
        fflush(stdout);
        jvmpi->RawMonitorExit(lock);
        break;
    default: break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        printf("cov_cross: FAIL GetEnv(JVMPI_VERSION_1)\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("cov_cross lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    printf("cov_cross: loaded\n");
    fflush(stdout);
    return JNI_OK;
}
