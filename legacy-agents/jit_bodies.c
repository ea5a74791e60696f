/* jit_bodies.c — a JDK 1.3-style JIT-symbol agent (tests/it/methods/jit_twice.sh).
 *
 * Like the agents that fed compiled-code symbols to a native profiler (agent-idioms.md),
 * it writes one symbol per compiled body: COMPILED_METHOD_LOAD -> GetMethodClass(method_id)
 * -> the class name from the table CLASS_LOAD filled; a class it was never told of is an
 * assertion failure. A second COMPILED_METHOD_LOAD for the same (method_id, code_addr),
 * with no COMPILED_METHOD_UNLOAD of it in between, would be a duplicate symbol: FAIL.
 *
 * Enabled in JVM_OnLoad: CLASS_LOAD, COMPILED_METHOD_LOAD, COMPILED_METHOD_UNLOAD,
 * JVM_INIT_DONE, JVM_SHUT_DOWN. Option "late": COMPILED_METHOD_LOAD is enabled instead from
 * a system thread 300 ms after JVM_INIT_DONE, while methods are being compiled (the shim
 * then replays what was compiled before).
 * For the first 3 methods of an unknown class it asks RequestEvent(CLASS_LOAD) to print
 * which class it was ("jit: requested CLASS_LOAD NAME id=...").
 * Output: "jit: FAIL ..." and "jit: done loads=N bodies=B dups=D unknown_class=U fails=F".
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIT_NAME "jit"
#define KIT_FAIL_MAX 20
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static int late;

/* Open-addressing sets under lock: classes by id, bodies by (method, address). */
#define CCAP (1 << 16)
static jobjectID classes[CCAP];
static int nclasses;
#define BCAP (1 << 17)
static struct body { jmethodID m; const void *addr; } bodies[BCAP];
static long nbodies, loads, dups, unknown_class;

static size_t hp(const void *p) { return ((uintptr_t)p >> 3) * 0x9E3779B97F4A7C15ull; }

static void class_add(jobjectID id)
{
    size_t i = hp(id) & (CCAP - 1);
    while (classes[i] != NULL && classes[i] != id)
        i = (i + 1) & (CCAP - 1);
    if (classes[i] == NULL && nclasses < CCAP - 1) {
        classes[i] = id;
        nclasses++;
    }
}

static int class_has(jobjectID id)
{
    size_t i = hp(id) & (CCAP - 1);
    while (classes[i] != NULL) {
        if (classes[i] == id)
            return 1;
        i = (i + 1) & (CCAP - 1);
    }
    return 0;
}

static struct body *body_slot(jmethodID m, const void *addr)
{
    size_t i = (hp(m) ^ hp(addr)) & (BCAP - 1);
    while (bodies[i].m != NULL && !(bodies[i].m == m && bodies[i].addr == addr))
        i = (i + 1) & (BCAP - 1);
    return &bodies[i];
}

static void enabler(void *arg)
{
    (void)arg;
    usleep(300 * 1000);
    if (jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL) != JVMPI_SUCCESS)
        FAIL("EnableEvent(COMPILED_METHOD_LOAD) late");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->event_type & JVMPI_REQUESTED_EVENT)
            say("requested CLASS_LOAD %s id=%p", ev->u.class_load.class_name,
                (void *)ev->u.class_load.class_id);
        jvmpi->RawMonitorEnter(lock);
        class_add(ev->u.class_load.class_id);
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: {
        jmethodID m = ev->u.compiled_method_load.method_id;
        const void *a = ev->u.compiled_method_load.code_addr;
        jobjectID c = jvmpi->GetMethodClass(m);
        jvmpi->RawMonitorEnter(lock);
        loads++;
        if (c == NULL || !class_has(c)) {
            unknown_class++;
            jvmpi->RawMonitorExit(lock);
            FAIL("COMPILED_METHOD_LOAD of method %p: its class %p had no CLASS_LOAD", (void *)m, (void *)c);
            if (c != NULL && unknown_class <= 3) /* what was it? (the request defines it) */
                jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, c);
            break;
        }
        struct body *b = body_slot(m, a);
        if (b->m != NULL) {
            dups++;
            jvmpi->RawMonitorExit(lock);
            FAIL("second COMPILED_METHOD_LOAD for method %p at %p", (void *)m, a);
            break;
        }
        if (nbodies < BCAP / 2) {
            b->m = m;
            b->addr = a;
            nbodies++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD: {
        /* JVMPI names only the method; its bodies may be compiled again later. */
        jmethodID m = ev->u.compiled_method_unload.method_id;
        jvmpi->RawMonitorEnter(lock);
        for (size_t i = 0; i < BCAP; i++)
            if (bodies[i].m == m)
                bodies[i].addr = (const void *)-1; /* keeps the probe chain, matches nothing */
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (late && jvmpi->CreateSystemThread("jit-enabler", JVMPI_NORMAL_PRIORITY, enabler) != JNI_OK)
            FAIL("CreateSystemThread");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        say("done loads=%ld bodies=%ld dups=%ld unknown_class=%ld fails=%d", loads, nbodies,
            dups, unknown_class, g_fails);
        jvmpi->RawMonitorExit(lock);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    late = options != NULL && strcmp(options, "late") == 0;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_jit_lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    if (!late && jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL) != JVMPI_SUCCESS)
        return JNI_ERR;
    jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
