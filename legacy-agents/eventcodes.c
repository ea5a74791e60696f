/* eventcodes.c — a JDK 1.3-style JVMPI agent that probes EnableEvent/DisableEvent/RequestEvent
 * with every event number from -3 to 70.
 *
 * In JVM_OnLoad and again in the JVM_INIT_DONE handler it calls EnableEvent(t) then
 * DisableEvent(t) for each t and prints
 *     eventcodes: <phase> enable t=N rc=R
 *     eventcodes: <phase> disable t=N rc=R
 * (phase = onload | initdone), and RequestEvent for numbers nothing can request:
 *     eventcodes: <phase> request t=N rc=R
 * Afterwards only JVM_INIT_DONE and JVM_SHUT_DOWN stay enabled. The agent tracks what it has
 * enabled: an event of a type that is not enabled (or whose DisableEvent had returned) is a
 * "eventcodes: FAIL ..." line. Events that arrive legitimately while a type is briefly
 * enabled are only counted (printed at shutdown).
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KIT_NAME "eventcodes"
#define KIT_LINE 512
#include "kit/out.h"
#include "kit/jvm.h"

#define LO (-3)
#define HI 70

/* 1 between just before EnableEvent(t) and the return of DisableEvent(t). */
static volatile int allowed[HI + 1];
static volatile int received[HI + 1];
static volatile int received_other;

static void set_allowed(jint t, int v)
{
    if (t >= 0 && t <= HI) {
        __sync_synchronize();
        allowed[t] = v;
        __sync_synchronize();
    }
}

static void probe(const char *phase)
{
    for (jint t = LO; t <= HI; t++) {
        set_allowed(t, 1);
        jint rc = jvmpi->EnableEvent(t, NULL);
        say("%s enable t=%d rc=%d", phase, (int)t, (int)rc);
        rc = jvmpi->DisableEvent(t, NULL);
        say("%s disable t=%d rc=%d", phase, (int)t, (int)rc);
        set_allowed(t, 0);
    }
    static const jint req[] = {-1, 0, 10, 12, 32, 36, 46, 47, 62, 70};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        jint rc = jvmpi->RequestEvent(req[i], NULL);
        say("%s request t=%d rc=%d", phase, (int)req[i], (int)rc);
    }
    /* Leave INIT_DONE and SHUT_DOWN on. */
    set_allowed(JVMPI_EVENT_JVM_INIT_DONE, 1);
    set_allowed(JVMPI_EVENT_JVM_SHUT_DOWN, 1);
    jint r1 = jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jint r2 = jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("%s reenable JVM_INIT_DONE rc=%d JVM_SHUT_DOWN rc=%d", phase, (int)r1, (int)r2);
    if (r1 != JVMPI_SUCCESS || r2 != JVMPI_SUCCESS)
        say("FAIL re-enabling JVM_INIT_DONE/JVM_SHUT_DOWN in %s", phase);
}

static void notify(JVMPI_Event *ev)
{
    jint raw = ev->event_type;
    jint t = raw & ~JVMPI_REQUESTED_EVENT;
    if (raw & JVMPI_REQUESTED_EVENT) {
        say("FAIL requested event %d delivered, but no RequestEvent should have succeeded",
            (int)t);
        return;
    }
    if (t < 0 || t > HI) {
        __sync_add_and_fetch(&received_other, 1);
        say("FAIL event type %d delivered (out of range)", (int)raw);
        return;
    }
    if (t == JVMPI_EVENT_CLASS_LOAD_HOOK) {
        /* Allowed briefly during the probe; the VM reads these back. */
        ev->u.class_load_hook.new_class_data = ev->u.class_load_hook.class_data;
        ev->u.class_load_hook.new_class_data_len = ev->u.class_load_hook.class_data_len;
    }
    __sync_add_and_fetch(&received[t], 1);
    if (!allowed[t]) {
        say("FAIL event %d delivered while not enabled", (int)t);
        return;
    }
    if (t == JVMPI_EVENT_JVM_INIT_DONE) {
        say("event JVM_INIT_DONE");
        probe("initdone");
        say("initdone probe finished");
    } else if (t == JVMPI_EVENT_JVM_SHUT_DOWN) {
        for (int i = 0; i <= HI; i++)
            if (received[i] && i != JVMPI_EVENT_JVM_INIT_DONE && i != JVMPI_EVENT_JVM_SHUT_DOWN)
                say("received t=%d count=%d (while briefly enabled)", i, received[i]);
        say("event JVM_SHUT_DOWN");
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("FAIL GetEnv(JVMPI_VERSION_1) failed");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    probe("onload");
    say("onload probe finished");
    return JNI_OK;
}
