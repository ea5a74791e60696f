/* exec_toggle.c — a JDK 1.3-style JVMPI agent that switches METHOD_ENTRY / METHOD_EXIT on and
 * off mid-run from its own system thread (tests/it/methods/exec_toggle.sh, workload
 * tests/java/ExecToggle.java).
 *
 * JVM_OnLoad enables CLASS_LOAD, JVM_INIT_DONE and JVM_SHUT_DOWN only. At JVM_INIT_DONE the
 * agent starts a system thread ("exec_toggle-ctl"). The workload loads marker classes on
 * main; in their CLASS_LOAD handlers the agent:
 *   ExecToggle$On        wakes the system thread, which enables METHOD_ENTRY then
 *                        METHOD_EXIT, notes phase "on", and sets the system property
 *                        jvmpishim.exec.on (main waits for it)
 *   ExecToggle$Off       wakes it again: it disables METHOD_ENTRY then METHOD_EXIT, notes
 *                        phase "off", sets jvmpishim.exec.off
 *   ExecToggle$AfterOff  (main, after it saw the property) phase "post"
 *   ExecToggle$Done      prints the counts
 * Phases: pre (before On), arming (the system thread is enabling), on, disarming, off, post.
 * Counted per phase: ENTRY / EXIT of ExecToggle.before, .during, .after; all ENTRY / EXIT on
 * main and on any thread. Printed as
 *   exec_toggle: count phase=<P> method=<before|during|after> entry=.. exit=..
 *   exec_toggle: events phase=<P> main_entry=.. main_exit=.. all_entry=.. all_exit=..
 * Live checks (FAIL lines): no method event in phase "pre" (nothing is enabled) and none on
 * main in phase "post"; no event type other than those enabled.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "exec_toggle"
#define KIT_LINE 2048
#define KIT_FAIL_MAX 10
#include "kit/out.h"
#include "kit/checked.h"

static JVMPI_RawMonitor sync_mon;

enum { P_PRE, P_ARMING, P_ON, P_DISARMING, P_OFF, P_POST, NPHASE };
static const char *phase_name[NPHASE] = {"pre", "arming", "on", "disarming", "off", "post"};
static volatile int phase;

enum { M_BEFORE, M_DURING, M_AFTER, NM };
static const char *m_name[NM] = {"before", "during", "after"};
static jmethodID mids[NM];
static volatile long m_entry[NPHASE][NM], m_exit[NPHASE][NM];
static volatile long main_entry[NPHASE], main_exit[NPHASE], all_entry[NPHASE], all_exit[NPHASE];
static JNIEnv *main_env;

static void on_method(JVMPI_Event *ev, int is_entry)
{
    int ph = phase;
    jmethodID m = ev->u.method.method_id;
    __sync_add_and_fetch(is_entry ? &all_entry[ph] : &all_exit[ph], 1);
    if (ev->env_id == main_env)
        __sync_add_and_fetch(is_entry ? &main_entry[ph] : &main_exit[ph], 1);
    for (int i = 0; i < NM; i++)
        if (m != NULL && m == mids[i])
            __sync_add_and_fetch(is_entry ? &m_entry[ph][i] : &m_exit[ph][i], 1);
    if (ph == P_PRE)
        FAIL("METHOD_%s (method %p) before the events were enabled", is_entry ? "ENTRY" : "EXIT",
             (void *)m);
    if (ph == P_POST && ev->env_id == main_env)
        FAIL("METHOD_%s (method %p) on main after the events were disabled",
             is_entry ? "ENTRY" : "EXIT", (void *)m);
}

/* ---- the system thread ------------------------------------------------------------------- */

static volatile int wanted; /* 1: enable, 2: disable */

static void wait_for(int what)
{
    jvmpi->RawMonitorEnter(sync_mon);
    while (wanted < what)
        jvmpi->RawMonitorWait(sync_mon, 0);
    jvmpi->RawMonitorExit(sync_mon);
}

static void ctl_thread(void *arg)
{
    (void)arg;
    wait_for(1);
    phase = P_ARMING;
    jint r1 = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    jint r2 = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    phase = P_ON;
    say("enable from system thread METHOD_ENTRY rc=%d METHOD_EXIT rc=%d", (int)r1, (int)r2);
    set_property_or_fail(current_env(), "jvmpishim.exec.on", "1");

    wait_for(2);
    phase = P_DISARMING;
    r1 = jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    r2 = jvmpi->DisableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    phase = P_OFF;
    say("disable from system thread METHOD_ENTRY rc=%d METHOD_EXIT rc=%d", (int)r1, (int)r2);
    set_property_or_fail(current_env(), "jvmpishim.exec.off", "1");
}

static void wake(int what)
{
    jvmpi->RawMonitorEnter(sync_mon);
    wanted = what;
    jvmpi->RawMonitorNotifyAll(sync_mon);
    jvmpi->RawMonitorExit(sync_mon);
}

/* ---- events ------------------------------------------------------------------------------- */

static void print_counts(void)
{
    for (int p = 0; p < NPHASE; p++) {
        for (int i = 0; i < NM; i++)
            say("count phase=%s method=%s entry=%ld exit=%ld", phase_name[p], m_name[i],
                m_entry[p][i], m_exit[p][i]);
        say("events phase=%s main_entry=%ld main_exit=%ld all_entry=%ld all_exit=%ld",
            phase_name[p], main_entry[p], main_exit[p], all_entry[p], all_exit[p]);
    }
    say("totals fails=%d", g_fails);
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *cn = ev->u.class_load.class_name;
    if (cn == NULL)
        return;
    if (strcmp(cn, "ExecToggle") == 0) {
        for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *mm = &ev->u.class_load.methods[i];
            for (int k = 0; k < NM; k++)
                if (mm->method_name && !strcmp(mm->method_name, m_name[k]) &&
                    mm->method_signature && !strcmp(mm->method_signature, "(I)V"))
                    mids[k] = mm->method_id;
        }
        for (int k = 0; k < NM; k++)
            if (mids[k] == NULL)
                FAIL("CLASS_LOAD of ExecToggle has no method %s(I)V", m_name[k]);
        return;
    }
    if (strncmp(cn, "ExecToggle$", 11) != 0)
        return;
    const char *m = cn + 11;
    say("marker %s phase=%s", m, phase_name[phase]);
    if (!strcmp(m, "On"))
        wake(1);
    else if (!strcmp(m, "Off"))
        wake(2);
    else if (!strcmp(m, "AfterOff"))
        phase = P_POST;
    else if (!strcmp(m, "Done"))
        print_counts();
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY:
        on_method(ev, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method(ev, 0);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        main_env = ev->env_id;
        jint rc = jvmpi->CreateSystemThread("exec_toggle-ctl", JVMPI_NORMAL_PRIORITY, ctl_thread);
        if (rc != JNI_OK)
            FAIL("CreateSystemThread returned %d", (int)rc);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("shutdown phase=%s fails=%d", phase_name[phase], g_fails);
        break;
    default:
        FAIL("unexpected event %d", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    (void)options;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    sync_mon = jvmpi->RawMonitorCreate("_exec_toggle_sync");
    jint ev[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 1);
    say("loaded");
    return JNI_OK;
}
