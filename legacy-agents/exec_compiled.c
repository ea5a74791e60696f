/* exec_compiled.c — a JDK 1.3-style JVMPI agent that checks COMPILED_METHOD_LOAD and
 * COMPILED_METHOD_UNLOAD (tests/it/methods/exec_compiled.sh, workload tests/java/ExecHot.java).
 *
 * Options (one word): onload | late
 *   onload  COMPILED_METHOD_LOAD / _UNLOAD enabled in JVM_OnLoad
 *   late    enabled by the agent's system thread ("exec_compiled-ctl") once the workload has
 *           stopped spinning (CLASS_LOAD of ExecHot$Spun on main wakes it); it then sets the
 *           system property jvmpishim.exec.cml. The methods compiled before must be replayed
 *           to it during EnableEvent, on the enabling thread.
 * Always enabled: CLASS_LOAD (every method's name, start_lineno, end_lineno), JVM_INIT_DONE,
 * JVM_SHUT_DOWN.
 *
 * Every COMPILED_METHOD_LOAD is checked: its method was defined by a CLASS_LOAD before
 * (definition before use), code_addr != NULL, code_size > 0, lineno_table_size >= 0 and a
 * table when > 0; each table entry's offset in [0, code_size) (counted: bad_offsets) and its
 * line within the method's [start_lineno, end_lineno] (counted: lines_out_of_range). Loads
 * are classified as startup (before JVM_INIT_DONE), replay (late mode: on the enabling thread
 * during EnableEvent) or live. ExecHot.spin gets one line per load:
 *   exec_compiled: spin load via=<V> code_addr=.. code_size=.. table=N min_line=.. max_line=..
 *                  min_offset=.. max_offset=.. bad_offsets=.. bad_lines=..
 * Every COMPILED_METHOD_UNLOAD: its method must be known; the code address the shim leaves
 * in compiled_method_load.code_addr is compared with the addresses loaded for that method.
 * Live FAIL lines (first 10): unknown method, NULL code_addr, code_size <= 0, bad table,
 * a load before the event was enabled (late mode), an unexpected event type.
 * Summary at the CLASS_LOAD of ExecHot$Done (main):
 *   exec_compiled: spin lines start=S end=E loads=.. startup=.. live=.. replay=.. bad_offsets=.. bad_lines=..
 *   exec_compiled: summary loads=.. startup=.. live=.. replay=.. unknown=.. null_addr=..
 *                  bad_size=.. bad_table=.. entries=.. bad_offsets=.. lines_out_of_range=..
 *                  methods_with_lines_out_of_range=.. unloads=.. unload_unknown=..
 *                  unload_addr_known=.. unload_addr_null=.. fails=..
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "exec_compiled"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 10
#define KIT_PMAP_FIRST (1 << 14)
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock, sync_mon;
static char mode[16] = "onload";

/* ---- state (under lock) ------------------------------------------------------------------- */

#define MAXADDR 16
struct minfo {
    char *name;             /* "Class.method(sig)" */
    jint start, end;        /* start_lineno, end_lineno from CLASS_LOAD */
    int loads, nbad_lines;
    void *addrs[MAXADDR];   /* code addresses loaded */
    int naddrs;
};
static struct pmap methods; /* jmethodID -> struct minfo * */
static jmethodID spin_id;
static volatile int init_done, enabled_yet, enabling;
static JNIEnv *ctl_env;

enum { V_STARTUP, V_LIVE, V_REPLAY, NVIA };
static const char *via_name[NVIA] = {"startup", "live", "replay"};
static long loads, via[NVIA], unknown, null_addr, bad_size, bad_table, entries, bad_offsets,
    lines_out, methods_lines_out, unloads, unload_unknown, unload_addr_known, unload_addr_null;
static long spin_loads, spin_via[NVIA], spin_bad_offsets, spin_bad_lines;

static void on_compiled_load(JVMPI_Event *ev)
{
    jmethodID m = ev->u.compiled_method_load.method_id;
    void *addr = ev->u.compiled_method_load.code_addr;
    jint size = ev->u.compiled_method_load.code_size;
    jint n = ev->u.compiled_method_load.lineno_table_size;
    JVMPI_Lineno *tab = ev->u.compiled_method_load.lineno_table;
    int v = !init_done ? V_STARTUP : (enabling && ev->env_id == ctl_env && current_env() == ctl_env)
                                         ? V_REPLAY
                                         : V_LIVE;
    if (!enabled_yet)
        FAIL("COMPILED_METHOD_LOAD (method %p) before the event was enabled", (void *)m);
    jvmpi->RawMonitorEnter(lock);
    loads++;
    via[v]++;
    struct minfo *mi = pm_find(&methods, m);
    if (mi == NULL) {
        unknown++;
        FAIL("COMPILED_METHOD_LOAD of method %p that no CLASS_LOAD defined before", (void *)m);
    }
    if (addr == NULL) {
        null_addr++;
        FAIL("COMPILED_METHOD_LOAD of %s: code_addr NULL", mi ? mi->name : "?");
    }
    if (size <= 0) {
        bad_size++;
        FAIL("COMPILED_METHOD_LOAD of %s: code_size %d", mi ? mi->name : "?", (int)size);
    }
    if (n < 0 || (n > 0 && tab == NULL)) {
        bad_table++;
        FAIL("COMPILED_METHOD_LOAD of %s: lineno_table_size %d, table %p", mi ? mi->name : "?",
             (int)n, (void *)tab);
        n = 0;
    }
    int boff = 0, bline = 0;
    jint minl = 0, maxl = 0, mino = 0, maxo = 0;
    for (jint i = 0; i < n; i++) {
        jint off = tab[i].offset, ln = tab[i].lineno;
        if (off < 0 || off >= size)
            boff++;
        if (mi != NULL && (ln < mi->start || ln > mi->end))
            bline++;
        if (i == 0 || ln < minl)
            minl = ln;
        if (i == 0 || ln > maxl)
            maxl = ln;
        if (i == 0 || off < mino)
            mino = off;
        if (i == 0 || off > maxo)
            maxo = off;
    }
    entries += n;
    bad_offsets += boff;
    lines_out += bline;
    if (mi != NULL) {
        if (bline && !mi->nbad_lines++)
            methods_lines_out++;
        mi->loads++;
        if (mi->naddrs < MAXADDR)
            mi->addrs[mi->naddrs++] = addr;
    }
    int is_spin = spin_id != NULL && m == spin_id;
    if (is_spin) {
        spin_loads++;
        spin_via[v]++;
        spin_bad_offsets += boff;
        spin_bad_lines += bline;
    }
    jvmpi->RawMonitorExit(lock);
    if (is_spin)
        say("spin load via=%s code_addr=%s code_size=%d table=%d min_line=%d max_line=%d "
            "min_offset=%d max_offset=%d bad_offsets=%d bad_lines=%d", via_name[v],
            addr ? "set" : "NULL", (int)size, (int)n, (int)minl, (int)maxl, (int)mino,
            (int)maxo, boff, bline);
}

static void on_compiled_unload(JVMPI_Event *ev)
{
    jmethodID m = ev->u.compiled_method_unload.method_id;
    /* The shim also leaves the code address where COMPILED_METHOD_LOAD had it. */
    void *addr = ev->u.compiled_method_load.code_addr;
    jvmpi->RawMonitorEnter(lock);
    unloads++;
    struct minfo *mi = pm_find(&methods, m);
    if (mi == NULL) {
        unload_unknown++;
        FAIL("COMPILED_METHOD_UNLOAD of method %p that no CLASS_LOAD defined", (void *)m);
    } else {
        for (int i = 0; i < mi->naddrs; i++)
            if (addr != NULL && mi->addrs[i] == addr) {
                unload_addr_known++;
                break;
            }
    }
    if (addr == NULL)
        unload_addr_null++;
    int is_spin = spin_id != NULL && m == spin_id;
    jvmpi->RawMonitorExit(lock);
    if (is_spin)
        say("spin unload code_addr=%s", addr ? "set" : "NULL");
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if (ev->event_type & JVMPI_REQUESTED_EVENT)
        return;
    jvmpi->RawMonitorEnter(lock);
    for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *mm = &ev->u.class_load.methods[i];
        if (mm->method_id == NULL || pm_find(&methods, mm->method_id) != NULL)
            continue;
        struct minfo *mi = calloc(1, sizeof *mi);
        const char *mn = mm->method_name ? mm->method_name : "?";
        const char *ms = mm->method_signature ? mm->method_signature : "?";
        size_t len = strlen(cn ? cn : "?") + strlen(mn) + strlen(ms) + 2;
        mi->name = malloc(len);
        snprintf(mi->name, len, "%s.%s%s", cn ? cn : "?", mn, ms);
        mi->start = mm->start_lineno;
        mi->end = mm->end_lineno;
        pm_put(&methods, mm->method_id, mi);
        if (cn && !strcmp(cn, "ExecHot") && !strcmp(mn, "spin") && !strcmp(ms, "(I)J")) {
            spin_id = mm->method_id;
            say("spin defined start_lineno=%d end_lineno=%d", (int)mi->start, (int)mi->end);
        }
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- late enabling from a system thread --------------------------------------------------- */

static volatile int wanted;

static void ctl_thread(void *arg)
{
    (void)arg;
    ctl_env = current_env();
    jvmpi->RawMonitorEnter(sync_mon);
    while (!wanted)
        jvmpi->RawMonitorWait(sync_mon, 0);
    jvmpi->RawMonitorExit(sync_mon);
    long before = spin_via[V_REPLAY];
    enabled_yet = 1;
    enabling = 1;
    jint r1 = jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL);
    enabling = 0;
    jint r2 = jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, NULL);
    jvmpi->RawMonitorEnter(lock);
    long all = via[V_REPLAY], spin = spin_via[V_REPLAY] - before;
    jvmpi->RawMonitorExit(lock);
    say("enable from system thread COMPILED_METHOD_LOAD rc=%d COMPILED_METHOD_UNLOAD rc=%d "
        "replayed=%ld spin_replayed=%ld", (int)r1, (int)r2, all, spin);
    set_property_or_fail(current_env(), "jvmpishim.exec.cml", "1");
}

static void summary(void)
{
    jvmpi->RawMonitorEnter(lock);
    struct minfo *si = spin_id ? pm_find(&methods, spin_id) : NULL;
    say("spin lines start=%d end=%d loads=%ld startup=%ld live=%ld replay=%ld bad_offsets=%ld "
        "bad_lines=%ld", si ? (int)si->start : 0, si ? (int)si->end : 0, spin_loads,
        spin_via[V_STARTUP], spin_via[V_LIVE], spin_via[V_REPLAY], spin_bad_offsets,
        spin_bad_lines);
    say("summary loads=%ld startup=%ld live=%ld replay=%ld unknown=%ld null_addr=%ld "
        "bad_size=%ld bad_table=%ld entries=%ld bad_offsets=%ld lines_out_of_range=%ld "
        "methods_with_lines_out_of_range=%ld unloads=%ld unload_unknown=%ld "
        "unload_addr_known=%ld unload_addr_null=%ld fails=%d",
        loads, via[V_STARTUP], via[V_LIVE], via[V_REPLAY], unknown, null_addr, bad_size,
        bad_table, entries, bad_offsets, lines_out, methods_lines_out, unloads, unload_unknown,
        unload_addr_known, unload_addr_null, g_fails);
    /* A few of the methods whose table has lines outside [start_lineno, end_lineno]. */
    int shown = 0;
    for (size_t i = 0; i < methods.cap && shown < 5; i++) {
        struct minfo *mi = methods.k[i] ? methods.v[i] : NULL;
        if (mi != NULL && mi->nbad_lines) {
            say("lines_out_of_range sample %s start=%d end=%d loads=%d", mi->name,
                (int)mi->start, (int)mi->end, mi->loads);
            shown++;
        }
    }
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        on_compiled_load(ev);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        on_compiled_unload(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        on_class_load(ev);
        const char *cn = ev->u.class_load.class_name;
        if (cn && !strcmp(cn, "ExecHot$Spun")) {
            say("marker Spun");
            jvmpi->RawMonitorEnter(sync_mon);
            wanted = 1;
            jvmpi->RawMonitorNotifyAll(sync_mon);
            jvmpi->RawMonitorExit(sync_mon);
        } else if (cn && !strcmp(cn, "ExecHot$Done")) {
            summary();
        }
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        jvmpi->RawMonitorEnter(lock);
        init_done = 1;
        say("init startup_loads=%ld", via[V_STARTUP]);
        jvmpi->RawMonitorExit(lock);
        if (!strcmp(mode, "late")) {
            jint rc = jvmpi->CreateSystemThread("exec_compiled-ctl", JVMPI_NORMAL_PRIORITY,
                                                ctl_thread);
            if (rc != JNI_OK)
                FAIL("CreateSystemThread returned %d", (int)rc);
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("shutdown loads=%ld unloads=%ld fails=%d", loads, unloads, g_fails);
        break;
    default:
        FAIL("unexpected event %d", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && *options)
        snprintf(mode, sizeof mode, "%s", options);
    if (strcmp(mode, "onload") && strcmp(mode, "late")) {
        say("FAIL unknown mode %s", mode);
        return JNI_ERR;
    }
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_exec_compiled_lock");
    sync_mon = jvmpi->RawMonitorCreate("_exec_compiled_sync");
    jint ev[8];
    int n = 0;
    ev[n++] = JVMPI_EVENT_CLASS_LOAD;
    ev[n++] = JVMPI_EVENT_JVM_INIT_DONE;
    ev[n++] = JVMPI_EVENT_JVM_SHUT_DOWN;
    if (!strcmp(mode, "onload")) {
        enabled_yet = 1;
        ev[n++] = JVMPI_EVENT_COMPILED_METHOD_LOAD;
        ev[n++] = JVMPI_EVENT_COMPILED_METHOD_UNLOAD;
    }
    enable_events(ev, n, 1);
    say("loaded mode=%s", mode);
    return JNI_OK;
}
