/* rawmon_stress.c — a JDK 1.3-style JVMPI agent that hammers raw monitors from many threads.
 *
 * What profilers of the era did with their one global lock, at their rate: many threads
 * (Java system threads from CreateSystemThread and plain pthreads of the agent's own)
 * entering and leaving one raw monitor as fast as they can, with reentrant enters among
 * them and RAW_MONITOR_CONTENDED_* on. Everything runs from the JVM_INIT_DONE handler, on
 * the VM's main thread; every observation is one "rawmon_stress: ..." line, violations are
 * "rawmon_stress: FAIL ...", and the last line is "rawmon_stress: done fails=N".
 *
 * Checked:
 *  - mutual exclusion: inside a monitor each thread marks it occupied and does a slow
 *    read-modify-write of that monitor's counter; no thread ever finds it occupied, and
 *    the counters end at threads x rounds (also across reentrant enters and exits; every
 *    8th round takes the "_" monitor instead);
 *  - contention events: for the hammered monitor, per thread, as many CONTENDED_ENTERED as
 *    CONTENDED_ENTER, at least one of each, and CONTENDED_EXITs, all with the monitor's id
 *    and the VM's copy of its name; none at all for a monitor named "_...";
 *  - RawMonitorWait(0)/NotifyAll under load: waiters that wait for a generation each see
 *    every generation the notifier publishes, none is left behind;
 *  - a destroyed monitor used from other threads (a pthread and a Java thread): every call
 *    returns at once, it locks nothing, and a monitor created after it (which may take its
 *    place) has another id and is not held by those calls; a pointer to the agent's own
 *    memory passed as a monitor is refused the same way.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIT_NAME "rawmon_stress"
#define KIT_MONOTONIC
#include "kit/out.h"
#include "kit/checked.h"

#define JAVA_THREADS 4
#define NATIVE_THREADS 4
#define THREADS (JAVA_THREADS + NATIVE_THREADS)
#define ROUNDS 20000

static JVMPI_RawMonitor hammered, silent_mon, waitmon;
static char hammered_name[] = "stress lock";
static volatile int occupied[2];      /* per monitor: the hammered one, the silent one */
static volatile long counter[2];
static volatile int started, finished;
static volatile int collisions;

/* Contention events, per thread slot (each hammering thread knows its slot). */
static __thread int my_slot = -1;
static volatile long ev_enter[THREADS + 1], ev_entered[THREADS + 1], ev_exit[THREADS + 1];
static volatile long ev_wrong, ev_silent;

static void hammer_body(int slot)
{
    my_slot = slot;
    __sync_add_and_fetch(&started, 1);
    while (started < THREADS)
        usleep(100);
    for (int i = 0; i < ROUNDS; i++) {
        int w = (i & 7) == 7;
        JVMPI_RawMonitor m = w ? silent_mon : hammered;
        jvmpi->RawMonitorEnter(m);
        if ((i & 15) == 0)
            jvmpi->RawMonitorEnter(m); /* reentrant */
        if (__sync_lock_test_and_set(&occupied[w], 1) != 0)
            __sync_add_and_fetch(&collisions, 1);
        long c = counter[w]; /* a slow read-modify-write: lost updates if two get in */
        for (volatile int k = 0; k < 20; k++)
            ;
        /* Now and then the owner is slow (a profiler flushing its table to a file under its
         * lock): the others, running their loops, find it held. Without this, on a loaded
         * 2-CPU machine each thread may run all its rounds within its time slice, and no
         * Enter ever finds the monitor owned. */
        if ((i & 1023) == 0 && !w)
            usleep(200);
        counter[w] = c + 1;
        __sync_lock_release(&occupied[w]);
        if ((i & 15) == 0)
            jvmpi->RawMonitorExit(m);
        jvmpi->RawMonitorExit(m);
    }
    __sync_add_and_fetch(&finished, 1);
}

static volatile int next_java_slot;

static void java_hammer(void *arg)
{
    (void)arg;
    hammer_body(__sync_fetch_and_add(&next_java_slot, 1));
}

static void *native_hammer(void *arg)
{
    hammer_body((int)(long)arg);
    return NULL;
}

static int wait_count(volatile int *v, int want, int ms)
{
    long long end = now_ms() + ms;
    while (__sync_fetch_and_add(v, 0) < want) {
        if (now_ms() > end)
            return 0;
        usleep(1000);
    }
    return 1;
}

static void check_hammer(void)
{
    pthread_t t[NATIVE_THREADS];
    for (int i = 0; i < JAVA_THREADS; i++)
        if (jvmpi->CreateSystemThread("rawmon_stress hammer", JVMPI_NORMAL_PRIORITY, java_hammer) != JNI_OK)
            FAIL("CreateSystemThread(hammer %d)", i);
    for (long i = 0; i < NATIVE_THREADS; i++)
        pthread_create(&t[i], NULL, native_hammer, (void *)(JAVA_THREADS + i));
    for (int i = 0; i < NATIVE_THREADS; i++)
        pthread_join(t[i], NULL);
    if (!wait_count(&finished, THREADS, 120000))
        FAIL("hammer: only %d of %d threads finished in 120 s", finished, THREADS);
    long total = counter[0] + counter[1];
    say("hammer threads=%d rounds=%d counter=%ld expected=%ld collisions=%d", THREADS, ROUNDS,
        total, (long)THREADS * ROUNDS, collisions);
    if (total != (long)THREADS * ROUNDS || collisions != 0)
        FAIL("hammer: mutual exclusion broken (counter %ld of %ld, %d collisions)", total,
             (long)THREADS * ROUNDS, collisions);
    long enter = 0, entered = 0, exit_ = 0;
    int unbalanced = 0;
    for (int s = 0; s < THREADS; s++) {
        enter += ev_enter[s];
        entered += ev_entered[s];
        exit_ += ev_exit[s];
        if (ev_enter[s] != ev_entered[s])
            unbalanced++;
    }
    say("events enter=%ld entered=%ld exit=%ld unbalanced_threads=%d wrong=%ld silent=%ld", enter,
        entered, exit_, unbalanced, ev_wrong, ev_silent);
    if (unbalanced != 0)
        FAIL("contention events: %d threads with CONTENDED_ENTER != CONTENDED_ENTERED", unbalanced);
    if (enter < 1 || exit_ < 1)
        FAIL("contention events: enter=%ld exit=%ld under contention", enter, exit_);
    if (ev_wrong != 0)
        FAIL("contention events: %ld with another id or name", ev_wrong);
    if (ev_silent != 0)
        FAIL("contention events: %ld for the monitor named _...", ev_silent);
}

/* ---- Wait/NotifyAll under load ---- */

#define WAITERS 4
#define GENERATIONS 200
static volatile int generation, caught, waiters_done, waiters_ready;

/* Waits (Wait(0): until notified) for each generation in turn, says it caught it and
 * notifies the notifier, which waits until every waiter has caught up. */
static void waiter_body(void)
{
    int seen = 0, skipped = 0;
    jvmpi->RawMonitorEnter(waitmon);
    waiters_ready++;
    while (seen < GENERATIONS) {
        while (generation == seen)
            jvmpi->RawMonitorWait(waitmon, 0);
        skipped += generation != seen + 1;
        seen = generation;
        caught++;
        jvmpi->RawMonitorNotifyAll(waitmon);
    }
    jvmpi->RawMonitorExit(waitmon);
    if (skipped != 0)
        FAIL("wait: a waiter skipped %d generations", skipped);
    __sync_add_and_fetch(&waiters_done, 1);
}

static void java_waiter(void *arg) { (void)arg; waiter_body(); }
static void *native_waiter(void *arg) { (void)arg; waiter_body(); return NULL; }

static void check_wait(void)
{
    pthread_t t;
    for (int i = 0; i < WAITERS / 2; i++) {
        if (jvmpi->CreateSystemThread("rawmon_stress waiter", JVMPI_NORMAL_PRIORITY, java_waiter) != JNI_OK)
            FAIL("CreateSystemThread(waiter)");
        if (pthread_create(&t, NULL, native_waiter, NULL) == 0)
            pthread_detach(t); /* not joined: a waiter that lost its wake-up never returns */
    }
    long long t0 = now_ms(), deadline = t0 + 60000;
    int lost = 0;
    jvmpi->RawMonitorEnter(waitmon);
    for (int g = 1; g <= GENERATIONS && !lost; g++) {
        generation = g;
        jvmpi->RawMonitorNotifyAll(waitmon);
        /* A timed wait: a lost wake-up shows as a deadline passed, not as a hang. */
        while (caught < WAITERS * g && now_ms() < deadline)
            jvmpi->RawMonitorWait(waitmon, 100);
        lost = caught < WAITERS * g;
    }
    jvmpi->RawMonitorExit(waitmon);
    int ok = !lost && wait_count(&waiters_done, WAITERS, 10000);
    say("wait waiters=%d generations=%d caught=%d done=%d ms=%lld", WAITERS, GENERATIONS, caught,
        waiters_done, now_ms() - t0);
    if (!ok)
        FAIL("wait: %d of %d generations caught by all waiters in 60 s (a lost wake-up)",
             caught / WAITERS, GENERATIONS);
}

/* ---- destroyed monitors used from other threads ---- */

static JVMPI_RawMonitor dead;
static volatile int dead_calls_done;
static char not_a_monitor[64];

static void use_dead(void)
{
    jvmpi->RawMonitorEnter(dead);
    jvmpi->RawMonitorWait(dead, 10000); /* would block for 10 s if taken for a monitor */
    jvmpi->RawMonitorNotifyAll(dead);
    jvmpi->RawMonitorExit(dead);
    jvmpi->RawMonitorDestroy(dead);
    jvmpi->RawMonitorEnter((JVMPI_RawMonitor)not_a_monitor);
    jvmpi->RawMonitorWait((JVMPI_RawMonitor)not_a_monitor, 10000);
    jvmpi->RawMonitorExit((JVMPI_RawMonitor)not_a_monitor);
    __sync_add_and_fetch(&dead_calls_done, 1);
}

static void java_use_dead(void *arg) { (void)arg; use_dead(); }
static void *native_use_dead(void *arg) { (void)arg; use_dead(); return NULL; }

static volatile int other_got_it;
static JVMPI_RawMonitor fresh;
static void *take_fresh(void *arg)
{
    (void)arg;
    jvmpi->RawMonitorEnter(fresh); /* blocks if a call on the dead id took the fresh one */
    other_got_it = 1;
    jvmpi->RawMonitorExit(fresh);
    return NULL;
}

static void check_destroyed(void)
{
    dead = jvmpi->RawMonitorCreate("stress doomed");
    jvmpi->RawMonitorEnter(dead);
    jvmpi->RawMonitorExit(dead);
    jvmpi->RawMonitorDestroy(dead);
    fresh = jvmpi->RawMonitorCreate("stress fresh");
    if (fresh == dead)
        FAIL("destroyed: a new monitor got the destroyed one's id %p", (void *)dead);
    long long t0 = now_ms();
    pthread_t t;
    pthread_create(&t, NULL, native_use_dead, NULL);
    pthread_join(t, NULL);
    if (jvmpi->CreateSystemThread("rawmon_stress dead", JVMPI_NORMAL_PRIORITY, java_use_dead) != JNI_OK)
        FAIL("CreateSystemThread(dead)");
    int ok = wait_count(&dead_calls_done, 2, 60000);
    long long ms = now_ms() - t0;
    pthread_create(&t, NULL, take_fresh, NULL);
    pthread_join(t, NULL);
    say("destroyed calls_done=%d ms=%lld fresh_free=%s", dead_calls_done, ms,
        other_got_it ? "yes" : "no");
    if (!ok || ms > 5000)
        FAIL("destroyed: calls on a destroyed monitor or a garbage pointer did not return at once "
             "(%lld ms)", ms);
    jvmpi->RawMonitorDestroy(fresh);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT: {
        if (ev->u.raw_monitor.id == silent_mon) {
            __sync_add_and_fetch(&ev_silent, 1);
            break;
        }
        if (ev->u.raw_monitor.id != hammered)
            break; /* waitmon and the others */
        if (ev->u.raw_monitor.name == hammered_name || ev->u.raw_monitor.name == NULL ||
            strcmp(ev->u.raw_monitor.name, hammered_name) != 0)
            __sync_add_and_fetch(&ev_wrong, 1);
        int s = my_slot >= 0 && my_slot < THREADS ? my_slot : THREADS;
        if (ev->event_type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER)
            __sync_add_and_fetch(&ev_enter[s], 1);
        else if (ev->event_type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED)
            __sync_add_and_fetch(&ev_entered[s], 1);
        else
            __sync_add_and_fetch(&ev_exit[s], 1);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        hammered = jvmpi->RawMonitorCreate(hammered_name);
        silent_mon = jvmpi->RawMonitorCreate("_stress silent");
        waitmon = jvmpi->RawMonitorCreate("stress wait");
        check_hammer();
        check_wait();
        check_destroyed();
        say("done fails=%d", g_fails);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    static const jint ev[] = {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
                              JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
                              JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_JVM_INIT_DONE};
    enable_events(ev, NELEMS(ev), 1);
    return JNI_OK;
}
