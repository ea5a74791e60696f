/* cov_pair.c — a JDK 1.3-style coverage agent: CLASS_LOAD_HOOK parses, CLASS_LOAD pairs.
 *
 * For tests/it/classes/cov_pair.sh (workload tests/java/CovPair.java). Written the way coverage
 * tools of the JVMPI era were (agent-idioms.md, "Coverage tools"):
 *  - CLASS_LOAD_HOOK parses the class bytes (constant pool, this_class, the methods' names and
 *    signatures) and stores the result in a table of the current thread, found by the hook's
 *    env_id, keyed by the class name. The bytes are handed back unchanged (both new_* fields
 *    set, as HotSpot required).
 *  - CLASS_LOAD, on the same thread, takes that entry out by class name and attaches the
 *    method ids of the event to the parsed methods (by name and signature). A CLASS_LOAD that
 *    finds no entry on its thread is a MISS: the class would be dropped. Not expected to find
 *    one: CLASS_LOADs before JVM_INIT_DONE (the start-up announcement of classes loaded before
 *    the agent, which had no hook), requested ones, array classes (HotSpot posted none; the
 *    shim names them) and hidden classes (no hook exists for them: JVMTI posts none).
 *  - The CLASS_LOAD of CovPairSub comes after those of its superclass and interface, which
 *    were defined (hooked) during its parse on the same thread.
 *  - METHOD_ENTRY and COMPILED_METHOD_LOAD must name a method whose class's CLASS_LOAD came
 *    before (the method id is in the table CLASS_LOAD fills): otherwise the agent has no
 *    record to count into, a FAIL.
 * One agent lock (a JVMPI raw monitor) around the tables, as such agents had.
 * Options: "noentry" leaves METHOD_ENTRY off.
 * Prints, at JVM_SHUT_DOWN:
 *   cov_pair: summary hooks=H loads=L paired=P misses=M unparsed=U method_unmatched=X
 *             entries=E entry_unknown=EU compiled=C compiled_unknown=CU fails=F
 *   cov_pair: workload paired=N leftover=K   (classes named CovPair*: hooked, then paired)
 * and a "cov_pair: MISS ..." / "cov_pair: FAIL ..." line for each of the first 20 problems.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "cov_pair"
#include "kit/out.h"
#include "kit/jvm.h"

static JVMPI_RawMonitor lock;
static volatile int init_done;
static int opt_entry = 1;

static long hooks, loads, paired, misses, unparsed, method_unmatched, entries, entry_unknown,
    compiled, compiled_unknown, fails, wl_paired;
static int problems;
#define PROBLEM(kind, ...)                                                              \
    do {                                                                                \
        if (++problems <= 20)                                                           \
            say(kind " " __VA_ARGS__);                                                  \
    } while (0)

/* ---- the class file, as the hook sees it ---- */

struct pmethod {
    char *name, *sig;
    jmethodID id;
};
struct pclass {
    char *name;             /* dotted, as CLASS_LOAD names it */
    int nmethods;
    struct pmethod *methods;
    struct pclass *next;
};

static unsigned u2(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

static char *utf8_dup(const unsigned char *p)
{
    unsigned n = u2(p);
    char *s = malloc(n + 1);
    memcpy(s, p + 2, n);
    s[n] = 0;
    return s;
}

static struct pclass *parse(const unsigned char *b, int len)
{
    if (len < 10 || b[0] != 0xCA || b[1] != 0xFE || b[2] != 0xBA || b[3] != 0xBE)
        return NULL;
    unsigned ncp = u2(b + 8);
    const unsigned char **cp = calloc(ncp + 1, sizeof *cp);
    const unsigned char *p = b + 10, *end = b + len;
    for (unsigned i = 1; i < ncp; i++) {
        if (p >= end)
            goto bad;
        cp[i] = p;
        switch (*p) {
        case 1: p += 3 + u2(p + 1); break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: p += 5; break;
        case 5: case 6: p += 9; i++; break;
        case 7: case 8: case 16: case 19: case 20: p += 3; break;
        case 15: p += 4; break;
        default: goto bad;
        }
    }
    if (p + 8 > end)
        goto bad;
    unsigned this_class = u2(p + 2);
    if (this_class == 0 || this_class >= ncp || *cp[this_class] != 7)
        goto bad;
    struct pclass *c = calloc(1, sizeof *c);
    c->name = utf8_dup(cp[u2(cp[this_class] + 1)] + 1);
    for (char *s = c->name; *s; s++)
        if (*s == '/')
            *s = '.';
    p += 6;
    p += 2 + 2 * u2(p);                         /* interfaces */
    unsigned nf = u2(p);                        /* fields */
    p += 2;
    for (unsigned i = 0; i < nf && p + 8 <= end; i++) {
        unsigned na = u2(p + 6);
        p += 8;
        for (unsigned a = 0; a < na && p + 6 <= end; a++)
            p += 6 + ((unsigned)p[2] << 24 | (unsigned)p[3] << 16 | (unsigned)p[4] << 8 | p[5]);
    }
    if (p + 2 > end)
        goto bad_c;
    unsigned nm = u2(p);
    p += 2;
    c->methods = calloc(nm + 1, sizeof *c->methods);
    for (unsigned i = 0; i < nm && p + 8 <= end; i++) {
        c->methods[i].name = utf8_dup(cp[u2(p + 2)] + 1);
        c->methods[i].sig = utf8_dup(cp[u2(p + 4)] + 1);
        c->nmethods++;
        unsigned na = u2(p + 6);
        p += 8;
        for (unsigned a = 0; a < na && p + 6 <= end; a++)
            p += 6 + ((unsigned)p[2] << 24 | (unsigned)p[3] << 16 | (unsigned)p[4] << 8 | p[5]);
    }
    free(cp);
    return c;
bad_c:
    free(c->name);
    free(c);
bad:
    free(cp);
    return NULL;
}

static void pclass_free(struct pclass *c)
{
    for (int i = 0; i < c->nmethods; i++) {
        free(c->methods[i].name);
        free(c->methods[i].sig);
    }
    free(c->methods);
    free(c->name);
    free(c);
}

/* ---- per-thread tables, found by env_id ---- */

struct ttable {
    JNIEnv *env;
    struct pclass *pending;     /* hooked, waiting for their CLASS_LOAD */
    /* CovPairBase / CovPairIface paired on this thread since its last CovPairSub CLASS_LOAD
     * (flags, not a list of the last few names: any number of other classes, e.g. the
     * JDK's own at their first use, may be defined between them during the parse). */
    int base_seen, iface_seen;
    struct ttable *next;
};
static struct ttable *tables;

static struct ttable *table_of(JNIEnv *env)
{
    for (struct ttable *t = tables; t; t = t->next)
        if (t->env == env)
            return t;
    struct ttable *t = calloc(1, sizeof *t);
    t->env = env;
    t->next = tables;
    tables = t;
    return t;
}

/* method id -> class name (the class's CLASS_LOAD came) */
struct mentry {
    jmethodID id;
    struct mentry *next;
};
#define MBUCKETS 65536
static struct mentry *mtab[MBUCKETS];
static unsigned mhash(jmethodID id) { return (unsigned)(((size_t)id >> 3) * 2654435761u) % MBUCKETS; }
static void method_add(jmethodID id)
{
    struct mentry *e = malloc(sizeof *e);
    e->id = id;
    e->next = mtab[mhash(id)];
    mtab[mhash(id)] = e;
}
static int method_known(jmethodID id)
{
    for (struct mentry *e = mtab[mhash(id)]; e; e = e->next)
        if (e->id == id)
            return 1;
    return 0;
}

/* The workload's own classes: CovPairSub, CovPairWork, ... (not CovPair, CovPair$OwnLoader). */
static int workload_class(const char *name)
{
    return strncmp(name, "CovPair", 7) == 0 && name[7] >= 'A' && name[7] <= 'Z';
}

static int hook_expected(const char *name)
{
    return name[0] != '[' && strchr(name, '/') == NULL; /* arrays; hidden classes ("X/0x..") */
}

static void on_hook(JVMPI_Event *ev)
{
    JVMPI_Event e = *ev;
    ev->u.class_load_hook.new_class_data = ev->u.class_load_hook.class_data;
    ev->u.class_load_hook.new_class_data_len = ev->u.class_load_hook.class_data_len;
    struct pclass *c = parse(e.u.class_load_hook.class_data, e.u.class_load_hook.class_data_len);
    jvmpi->RawMonitorEnter(lock);
    hooks++;
    if (c == NULL) {
        unparsed++;
    } else {
        struct ttable *t = table_of(ev->env_id);
        c->next = t->pending;
        t->pending = c;
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    jvmpi->RawMonitorEnter(lock);
    loads++;
    for (int i = 0; i < ev->u.class_load.num_methods; i++)
        method_add(ev->u.class_load.methods[i].method_id);
    struct ttable *t = table_of(ev->env_id);
    struct pclass **pp = &t->pending, *c = NULL;
    while (*pp && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    if (*pp) {
        c = *pp;
        *pp = c->next;
    }
    if (c != NULL) {
        paired++;
        if (workload_class(name))
            wl_paired++;
        /* The superclass and interface, defined during CovPairSub's parse on this thread,
         * had their CLASS_LOAD first (HotSpot: inside the subclass's definition). */
        if (strcmp(name, "CovPairSub") == 0) {
            if (!t->base_seen || !t->iface_seen) {
                fails++;
                PROBLEM("FAIL", "CLASS_LOAD of CovPairSub on env %p before that of its %s",
                        (void *)ev->env_id, t->base_seen ? "interface" : "superclass");
            }
            t->base_seen = t->iface_seen = 0; /* the next round defines them again */
        } else if (strcmp(name, "CovPairBase") == 0) {
            t->base_seen = 1;
        } else if (strcmp(name, "CovPairIface") == 0) {
            t->iface_seen = 1;
        }
        /* attach the method ids to the parsed methods */
        for (int i = 0; i < c->nmethods; i++) {
            for (int k = 0; k < ev->u.class_load.num_methods; k++)
                if (strcmp(c->methods[i].name, ev->u.class_load.methods[k].method_name) == 0 &&
                    strcmp(c->methods[i].sig, ev->u.class_load.methods[k].method_signature) == 0)
                    c->methods[i].id = ev->u.class_load.methods[k].method_id;
            if (c->methods[i].id == NULL) {
                method_unmatched++;
                PROBLEM("FAIL", "%s.%s%s: parsed in the hook, not in its CLASS_LOAD", name,
                        c->methods[i].name, c->methods[i].sig);
            }
        }
        pclass_free(c); /* a real tool keeps it; the pairing is what is tested */
    } else if (init_done && !requested && hook_expected(name)) {
        misses++;
        PROBLEM("MISS", "CLASS_LOAD of %s on env %p: no hook entry on this thread", name,
                (void *)ev->env_id);
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_method(JVMPI_Event *ev, jmethodID id, int compiled_load)
{
    jvmpi->RawMonitorEnter(lock);
    if (compiled_load)
        compiled++;
    else
        entries++;
    if (!method_known(id)) {
        if (compiled_load)
            compiled_unknown++;
        else
            entry_unknown++;
        fails++;
        PROBLEM("FAIL", "%s of method %p on env %p before its class's CLASS_LOAD",
                compiled_load ? "COMPILED_METHOD_LOAD" : "METHOD_ENTRY", (void *)id,
                (void *)ev->env_id);
    }
    jvmpi->RawMonitorExit(lock);
}

static void on_shutdown(void)
{
    jvmpi->RawMonitorEnter(lock);
    long leftover = 0;
    for (struct ttable *t = tables; t; t = t->next)
        for (struct pclass *c = t->pending; c; c = c->next)
            if (workload_class(c->name)) {
                leftover++;
                PROBLEM("MISS", "hook of %s on env %p: no CLASS_LOAD on that thread", c->name,
                        (void *)t->env);
            }
    say("summary hooks=%ld loads=%ld paired=%ld misses=%ld unparsed=%ld method_unmatched=%ld "
        "entries=%ld entry_unknown=%ld compiled=%ld compiled_unknown=%ld fails=%ld",
        hooks, loads, paired, misses, unparsed, method_unmatched, entries, entry_unknown,
        compiled, compiled_unknown, fails + method_unmatched);
    say("workload paired=%ld leftover=%ld", wl_paired, leftover);
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK: on_hook(ev); break;
    case JVMPI_EVENT_CLASS_LOAD: on_class_load(ev); break;
    case JVMPI_EVENT_METHOD_ENTRY: on_method(ev, ev->u.method.method_id, 0); break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: on_method(ev, ev->u.compiled_method_load.method_id, 1); break;
    case JVMPI_EVENT_JVM_INIT_DONE: init_done = 1; break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: on_shutdown(); break;
    default: break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        say("FAIL GetEnv(JVMPI_VERSION_1)");
        return JNI_ERR;
    }
    if (options && strstr(options, "noentry"))
        opt_entry = 0;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("cov_pair lock");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL);
    if (opt_entry)
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    say("loaded%s", opt_entry ? "" : " noentry");
    return JNI_OK;
}
