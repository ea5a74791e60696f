/* bbytecode.c — a JDK 1.3-style per-bytecode coverage tracer, for the bytecode scenario of
 * bench/calls.sh: INSTRUCTION_START counted per (method_id, offset), METHOD_ENTRY2 (calls and
 * receivers per method) and METHOD_EXIT, as coverage tools of the time counted.
 *
 * Idioms (agent-idioms.md, "Coverage tools" and "Tracers"): one table per method, found by
 * method id in a global hash under a raw monitor and cached per thread, in the thread's
 * JVMPI thread-local storage, by the last method id seen; each instruction increments its
 * offset's counter in place (no lock: a lost increment is a coverage tool's accepted
 * imprecision); a table grows under the monitor when an offset is past its end. Counts per
 * thread are summed at THREAD_END and JVM_SHUT_DOWN, which prints
 *   bbytecode: insns=N entries=N receivers=N exits=N methods=N covered=N
 * (covered: offsets executed at least once, over all methods).
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor table_lock;

struct mtab {
    jmethodID method;
    long *counts;
    jint cap;
    long calls, receivers;
    struct mtab *next;
};

#define NBUCKETS 4096
static struct mtab *buckets[NBUCKETS];
static long n_methods;

struct per_thread {
    jmethodID last;
    struct mtab *last_tab;
    long insns, entries, receivers, exits;
};

static long t_insns, t_entries, t_receivers, t_exits;

static struct mtab *lookup(jmethodID m)
{
    unsigned long h = ((unsigned long)m >> 3) % NBUCKETS;
    jvmpi->RawMonitorEnter(table_lock);
    struct mtab *t;
    for (t = buckets[h]; t != NULL; t = t->next)
        if (t->method == m)
            break;
    if (t == NULL && (t = calloc(1, sizeof *t)) != NULL) {
        t->method = m;
        t->next = buckets[h];
        buckets[h] = t;
        n_methods++;
    }
    jvmpi->RawMonitorExit(table_lock);
    return t;
}

static struct per_thread *me(JNIEnv *env)
{
    struct per_thread *p = jvmpi->GetThreadLocalStorage(env);
    if (p == NULL) {
        p = calloc(1, sizeof *p);
        jvmpi->SetThreadLocalStorage(env, p);
    }
    return p;
}

static struct mtab *method_table(struct per_thread *p, jmethodID m)
{
    if (p->last != m) {
        p->last_tab = lookup(m);
        p->last = m;
    }
    return p->last_tab;
}

/* The array is published before its size (release), and read after it (acquire), so that a
 * size seen is never larger than the array seen. */
static void count_at(struct mtab *t, jint off)
{
    if (off >= __atomic_load_n(&t->cap, __ATOMIC_ACQUIRE)) {
        jvmpi->RawMonitorEnter(table_lock);
        if (off >= t->cap) {
            jint cap = t->cap ? t->cap : 64;
            while (cap <= off)
                cap *= 2;
            long *c = calloc((size_t)cap, sizeof *c);
            if (c != NULL) {
                if (t->counts != NULL)
                    memcpy(c, t->counts, (size_t)t->cap * sizeof *c);
                /* the old array is leaked, not freed: another thread may still be counting in it */
                t->counts = c;
                __atomic_store_n(&t->cap, cap, __ATOMIC_RELEASE);
            }
        }
        jvmpi->RawMonitorExit(table_lock);
        if (off >= __atomic_load_n(&t->cap, __ATOMIC_ACQUIRE))
            return;
    }
    t->counts[off]++;
}

static void flush(struct per_thread *p)
{
    if (p == NULL)
        return;
    jvmpi->RawMonitorEnter(table_lock);
    t_insns += p->insns;
    t_entries += p->entries;
    t_receivers += p->receivers;
    t_exits += p->exits;
    p->insns = p->entries = p->receivers = p->exits = 0;
    jvmpi->RawMonitorExit(table_lock);
}

static void notify(JVMPI_Event *ev)
{
    struct per_thread *p;
    struct mtab *t;
    switch (ev->event_type) {
    case JVMPI_EVENT_INSTRUCTION_START:
        p = me(ev->env_id);
        t = method_table(p, ev->u.instruction.method_id);
        if (t != NULL)
            count_at(t, ev->u.instruction.offset);
        p->insns++;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        p = me(ev->env_id);
        t = method_table(p, ev->u.method_entry2.method_id);
        if (t != NULL) {
            t->calls++;
            if (ev->u.method_entry2.obj_id != NULL)
                t->receivers++;
        }
        p->entries++;
        if (ev->u.method_entry2.obj_id != NULL)
            p->receivers++;
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        me(ev->env_id)->exits++;
        break;
    case JVMPI_EVENT_THREAD_END:
        flush(jvmpi->GetThreadLocalStorage(ev->env_id));
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        flush(jvmpi->GetThreadLocalStorage(ev->env_id));
        long covered = 0;
        jvmpi->RawMonitorEnter(table_lock);
        for (int b = 0; b < NBUCKETS; b++)
            for (t = buckets[b]; t != NULL; t = t->next)
                for (jint i = 0; i < t->cap; i++)
                    covered += t->counts[i] != 0;
        printf("bbytecode: insns=%ld entries=%ld receivers=%ld exits=%ld methods=%ld covered=%ld\n",
               t_insns, t_entries, t_receivers, t_exits, n_methods, covered);
        fflush(stdout);
        jvmpi->RawMonitorExit(table_lock);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        fprintf(stderr, "bbytecode: GetEnv(JVMPI_VERSION_1) failed\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    table_lock = jvmpi->RawMonitorCreate("bbytecode tables");
    static const jint events[] = {JVMPI_EVENT_INSTRUCTION_START, JVMPI_EVENT_METHOD_ENTRY2,
                                  JVMPI_EVENT_METHOD_EXIT, JVMPI_EVENT_THREAD_END,
                                  JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "bbytecode: EnableEvent(%d) failed\n", (int)events[i]);
            return JNI_ERR;
        }
    return JNI_OK;
}
