/* ident_sampler.c — a JDK 1.3-style sampling profiler that insists on "definition before
 * use" (tests/it/classes/ident_classes.sh, workload tests/java/IdentStress.java).
 *
 * It keeps tables built only from events: live threads (THREAD_START/THREAD_END), classes
 * (CLASS_LOAD/CLASS_UNLOAD) and their methods. A system thread (CreateSystemThread in
 * JVM_INIT_DONE) samples every live thread's stack again and again with GetCallTrace and
 * resolves every frame: its method_id must have come in a CLASS_LOAD, GetMethodClass of it
 * must be an announced, not unloaded class id, the same class that announced the method,
 * and a lineno of -3 (native) only for a method announced with -1/-1 lines. As on HotSpot,
 * a frame may name a method whose class's CLASS_LOAD is still on its way from the thread
 * that defines it (GetCallTrace waits for no other thread): such a frame is noted ("late")
 * and its CLASS_LOAD must have come by JVM_SHUT_DOWN. Every event's
 * env_id must be a live thread (JVM_SHUT_DOWN: any thread ever started), CLASS_UNLOAD a
 * known class. On any violation it prints "ident_sampler: FAIL ..." and calls
 * ProfilerExit(99), as a profiler that cannot attribute a sample would abort.
 * Option "period=MS" (default 2): pause between sampling rounds.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define KIT_NAME "ident_sampler"
#define KIT_LINE 2048
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;
static int period_ms = 2;

/* A profiler that cannot attribute its data gives up. */
#define ABORT(...)                                                                      \
    do {                                                                                \
        say("FAIL " __VA_ARGS__);                                                       \
        jvmpi->ProfilerExit(99);                                                        \
    } while (0)

struct cls {
    char *name;
    int unloaded;
};
struct meth {
    jobjectID cid;
    struct cls *c;
    char *name;
    jint start, end;
};

static struct pmap classes; /* class id -> struct cls */
static struct pmap methods; /* method id -> struct meth */
static struct pmap ever;    /* env -> 1: THREAD_START delivered at some time */
static struct pmap late;    /* method id -> class id: sampled before its CLASS_LOAD came */
static long n_late;

#define MAXLIVE 4096
static JNIEnv *live_env[MAXLIVE];
static char *live_name[MAXLIVE];
static int nlive;

static volatile int stop, init_done;
static long n_rounds, n_traces, n_frames, n_native_frames, n_empty, n_unloads, n_threads;
static long n_classes, n_null_env, n_hidden_frames;
static int max_live;

static int live_index(JNIEnv *env)
{
    for (int i = 0; i < nlive; i++)
        if (live_env[i] == env)
            return i;
    return -1;
}

/* Every event's env_id must name a thread whose THREAD_START came (and, unless
 * allow_ended, has not ended). */
static void check_env(JVMPI_Event *ev, const char *what, int allow_ended)
{
    if (ev->env_id == NULL) {
        n_null_env++;
        return;
    }
    int known = live_index(ev->env_id) >= 0 || (allow_ended && pm_get(&ever, ev->env_id, NULL));
    if (!known) {
        jvmpi->RawMonitorExit(lock);
        ABORT("%s on env %p: no live thread has this env (THREAD_START missing)", what,
              (void *)ev->env_id);
    }
}

static void sampler(void *arg)
{
    (void)arg;
    JVMPI_CallFrame frames[96];
    JNIEnv **envs = calloc(MAXLIVE, sizeof *envs);
    say("sampler running");
    while (!stop) {
        jvmpi->RawMonitorEnter(lock);
        int n = nlive;
        memcpy(envs, live_env, sizeof *envs * n);
        jvmpi->RawMonitorExit(lock);
        for (int t = 0; t < n && !stop; t++) {
            JVMPI_CallTrace tr;
            tr.env_id = envs[t];
            tr.frames = frames;
            tr.num_frames = -1;
            jvmpi->GetCallTrace(&tr, 96);
            if (tr.num_frames < 0 || tr.num_frames > 96)
                ABORT("GetCallTrace(depth 96) gave num_frames %d", (int)tr.num_frames);
            if (tr.num_frames == 0)
                n_empty++;
            n_traces++;
            for (int f = 0; f < tr.num_frames; f++) {
                jmethodID mid = frames[f].method_id;
                jvmpi->DisableGC();
                jobjectID cid = jvmpi->GetMethodClass(mid);
                jvmpi->EnableGC();
                jvmpi->RawMonitorEnter(lock);
                void *mv = NULL, *cv = NULL;
                int km = pm_get(&methods, mid, &mv);
                int kc = pm_get(&classes, cid, &cv);
                struct meth *m = mv;
                struct cls *c = cv;
                char what[600] = "";
                if (!km) {
                    /* Its CLASS_LOAD may still be on its way from the defining thread. */
                    if (!pm_get(&late, mid, NULL)) {
                        pm_put(&late, mid, cid);
                        n_late++;
                    }
                    jvmpi->RawMonitorExit(lock);
                    continue;
                } else if (!kc)
                    snprintf(what, sizeof what, "frame %d: %s.%s: GetMethodClass = %p, never announced",
                             f, m->c->name, m->name, (void *)cid);
                else if (c->unloaded)
                    snprintf(what, sizeof what, "frame %d: %s.%s: its class %p was unloaded", f,
                             c->name, m->name, (void *)cid);
                else if (m->cid != cid)
                    snprintf(what, sizeof what, "frame %d: %s.%s announced by class %p, GetMethodClass %p",
                             f, m->c->name, m->name, (void *)m->cid, (void *)cid);
                else if (frames[f].lineno == -3 && !(m->start == -1 && m->end == -1))
                    snprintf(what, sizeof what, "frame %d: %s.%s lineno -3 (native) but lines %d-%d",
                             f, c->name, m->name, (int)m->start, (int)m->end);
                if (km && kc && strstr(c->name, "$$") != NULL)
                    n_hidden_frames++;
                n_frames++;
                if (frames[f].lineno == -3)
                    n_native_frames++;
                jvmpi->RawMonitorExit(lock);
                if (what[0])
                    ABORT("%s", what);
            }
        }
        n_rounds++;
        if (period_ms > 0)
            usleep((useconds_t)period_ms * 1000);
    }
    free(envs);
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    switch (type) {
    case JVMPI_EVENT_THREAD_START: {
        JNIEnv *e = ev->u.thread_start.thread_env_id;
        jvmpi->RawMonitorEnter(lock);
        if (!requested) {
            if (live_index(e) >= 0) {
                jvmpi->RawMonitorExit(lock);
                ABORT("second THREAD_START for live env %p (%s)", (void *)e,
                      S(ev->u.thread_start.thread_name));
            }
            if (nlive < MAXLIVE) {
                live_env[nlive] = e;
                live_name[nlive] = strdup(S(ev->u.thread_start.thread_name));
                nlive++;
            }
            if (nlive > max_live)
                max_live = nlive;
            pm_put(&ever, e, (void *)1);
            n_threads++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_THREAD_END: {
        jvmpi->RawMonitorEnter(lock);
        int i = live_index(ev->env_id);
        if (i < 0) {
            jvmpi->RawMonitorExit(lock);
            ABORT("THREAD_END for env %p that is not a live thread", (void *)ev->env_id);
        }
        free(live_name[i]);
        live_env[i] = live_env[nlive - 1];
        live_name[i] = live_name[nlive - 1];
        nlive--;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD: {
        if (requested)
            break;
        jvmpi->RawMonitorEnter(lock);
        check_env(ev, "CLASS_LOAD", 0);
        jobjectID cid = ev->u.class_load.class_id;
        void *old;
        if (pm_get(&classes, cid, &old) && !((struct cls *)old)->unloaded) {
            jvmpi->RawMonitorExit(lock);
            ABORT("second CLASS_LOAD for live class id %p (%s)", (void *)cid,
                  S(ev->u.class_load.class_name));
        }
        struct cls *c = calloc(1, sizeof *c);
        c->name = strdup(S(ev->u.class_load.class_name));
        pm_put(&classes, cid, c);
        n_classes++;
        for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *jm = &ev->u.class_load.methods[i];
            struct meth *m = calloc(1, sizeof *m);
            m->cid = cid;
            m->c = c;
            m->name = strdup(S(jm->method_name));
            m->start = jm->start_lineno;
            m->end = jm->end_lineno;
            pm_put(&methods, jm->method_id, m);
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_CLASS_UNLOAD: {
        jvmpi->RawMonitorEnter(lock);
        check_env(ev, "CLASS_UNLOAD", 0);
        void *cv = NULL;
        if (!pm_get(&classes, ev->u.class_unload.class_id, &cv) || ((struct cls *)cv)->unloaded) {
            jvmpi->RawMonitorExit(lock);
            ABORT("CLASS_UNLOAD for class id %p that is not a loaded class",
                  (void *)ev->u.class_unload.class_id);
        }
        ((struct cls *)cv)->unloaded = 1;
        n_unloads++;
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE: {
        jvmpi->RawMonitorEnter(lock);
        check_env(ev, "JVM_INIT_DONE", 0);
        jvmpi->RawMonitorExit(lock);
        init_done = 1;
        jint rc = jvmpi->CreateSystemThread("ident-sampler", JVMPI_NORMAL_PRIORITY, sampler);
        say("JVM_INIT_DONE classes=%ld threads=%d sampler rc=%d", n_classes, nlive, (int)rc);
        if (rc != JNI_OK)
            ABORT("CreateSystemThread failed");
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        stop = 1;
        jvmpi->RawMonitorEnter(lock);
        check_env(ev, "JVM_SHUT_DOWN", 1);
        for (size_t i = 0; i < late.cap; i++) {
            if (late.k == NULL || late.k[i] == NULL)
                continue;
            void *cv = NULL;
            if (!pm_get(&methods, late.k[i], NULL) &&
                !(pm_get(&classes, late.v[i], &cv) && ((struct cls *)cv)->unloaded)) {
                jvmpi->RawMonitorExit(lock);
                ABORT("method id %p sampled (class id %p) never announced by JVM_SHUT_DOWN",
                      late.k[i], late.v[i]);
            }
        }
        say("summary rounds=%ld traces=%ld frames=%ld native_frames=%ld hidden_class_frames=%ld "
            "empty_traces=%ld classes=%ld unloads=%ld threads=%ld max_live=%d null_env=%ld "
            "late_methods=%ld",
            n_rounds, n_traces, n_frames, n_native_frames, n_hidden_frames, n_empty, n_classes,
            n_unloads, n_threads, max_live, n_null_env, n_late);
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        ABORT("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (options != NULL && strncmp(options, "period=", 7) == 0)
        period_ms = atoi(options + 7);
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_ident_sampler_lock");
    static const jint ev[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                              JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_CLASS_UNLOAD,
                              JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (jvmpi->EnableEvent(ev[i], NULL) != JVMPI_SUCCESS) {
            say("FAIL EnableEvent(%d) failed", (int)ev[i]);
            return JNI_ERR;
        }
    say("loaded period=%d", period_ms);
    return JNI_OK;
}
