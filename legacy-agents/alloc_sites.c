/* alloc_sites.c — an allocation-site profiler keyed by class, written with the assert idiom
 * of its era (tests/it/classes/alloc_sites.sh, workload tests/java/AllocSites.java).
 *
 * JVM_OnLoad enables OBJECT_ALLOC and JVM_SHUT_DOWN (option classload: CLASS_LOAD too, so
 * the table also fills from the VM's own announcements). For each OBJECT_ALLOC of a
 * NORMAL_OBJECT it looks class_id up in its class table; if it is missing it calls
 * RequestEvent(CLASS_LOAD, class_id) and insists on JVMPI_SUCCESS and a new table entry,
 * else it prints "alloc_sites: unknown class ..." and exit(1)s, as such profilers did: on
 * HotSpot 1.4 an unrequested OBJECT_ALLOC of a NORMAL_OBJECT always named a class that
 * CLASS_LOAD could describe (only java.lang.Class's own mirror had class_id NULL, and it was
 * never announced unrequested). It counts objects per class and per site: the class and the
 * top 4 frames of GetCallTrace on the allocating thread. One raw monitor guards the tables.
 *
 * At JVM_SHUT_DOWN it prints, for the classes whose name starts with prefix=P (default
 * AllocSites), "alloc_sites: count NAME N" (summed over classes of one name) and, per site,
 * "alloc_sites: site NAME M1<M2<M3<M4 N" with Class.method of each frame (learned through
 * GetMethodClass and RequestEvent(CLASS_LOAD) as needed), then "alloc_sites: summary ...".
 *
 * Option mirrors: the rules of HotSpot for Class objects, checked. OBJECT_FREE is enabled too
 * so that the agent's record of live objects stays true; it notes every unrequested
 * OBJECT_ALLOC by object id. At JVM_SHUT_DOWN, with java.lang.Class's id from JNI
 * (jobject2jobjectID, GC disabled): java.lang.Class's own mirror was never announced
 * unrequested; every Class object the agent met as a class (in a CLASS_LOAD) and saw
 * announced names java.lang.Class as its class_id; requested (RequestEvent(OBJECT_ALLOC)),
 * java.lang.Class's mirror has class_id NULL and is a NORMAL_OBJECT, and the mirror of
 * java.lang.Object, java.lang.String and of the workload's first class names
 * java.lang.Class. A FAIL line for each violation; "alloc_sites: mirrors ..." counts them.
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIT_NAME "alloc_sites"
#define KIT_LINE 4096
#define KIT_FAIL_MAX 40
#include "kit/out.h"
#include "kit/pmap.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;
static int opt_classload, opt_mirrors;
static char opt_prefix[160] = "AllocSites";

struct method {
    jmethodID id;
    char *name;
};
struct cls {
    char *name;
    int nmethods;
    struct method *methods;
    long count;
};
static struct pmap classes; /* class id -> struct cls */
static struct pmap methods; /* method id -> struct cls (its class) */

#define DEPTH 4
struct site {
    jobjectID cid;
    int n;
    jmethodID f[DEPTH];
    long count;
    struct site *next;
};
#define NSB (1 << 16)
static struct site *sites[NSB];
static long n_sites;

/* Option mirrors: object id -> (class id | 1), or DEAD once freed. */
static struct pmap objs;
#define DEAD ((void *)2)
static long n_allocs, n_normal, n_requests, n_requested_loads, n_frees, n_self_class;

/* What a request answered (option mirrors). */
static jobjectID want_obj, got_class;
static int got_alloc, got_is_array;

static void add_class(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.class_load.class_id;
    struct cls *c = pm_find(&classes, cid);
    if (c != NULL)
        return;
    c = calloc(1, sizeof *c);
    c->name = strdup(S(ev->u.class_load.class_name));
    c->nmethods = ev->u.class_load.num_methods;
    c->methods = calloc((size_t)c->nmethods + 1, sizeof *c->methods);
    for (int i = 0; i < c->nmethods; i++) {
        c->methods[i].id = ev->u.class_load.methods[i].method_id;
        c->methods[i].name = strdup(S(ev->u.class_load.methods[i].method_name));
        pm_put(&methods, c->methods[i].id, c);
    }
    pm_put(&classes, cid, c);
}

/* The idiom: an unknown class is asked for, and must then be known. */
static struct cls *class_of(jobjectID cid, jobjectID obj)
{
    struct cls *c = pm_find(&classes, cid);
    if (c != NULL)
        return c;
    n_requests++;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid);
    c = pm_find(&classes, cid);
    if (rc != JVMPI_SUCCESS || c == NULL) {
        say("unknown class %p of object %p: RequestEvent(CLASS_LOAD) returned %d%s; exiting", (void *)cid,
            (void *)obj, (int)rc, c == NULL ? ", no CLASS_LOAD came" : "");
        fflush(stdout);
        exit(1);
    }
    return c;
}

static unsigned site_hash(jobjectID cid, int n, jmethodID *f)
{
    uint64_t h = (uint64_t)(uintptr_t)cid * 0x9e3779b97f4a7c15ULL + (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)f[i]) * 0xff51afd7ed558ccdULL;
    return (unsigned)(h >> 40) & (NSB - 1);
}

static void count_site(JNIEnv *env, jobjectID cid)
{
    JVMPI_CallFrame fr[DEPTH];
    JVMPI_CallTrace tr;
    tr.env_id = env;
    tr.frames = fr;
    tr.num_frames = 0;
    if (env != NULL)
        jvmpi->GetCallTrace(&tr, DEPTH);
    int n = tr.num_frames > 0 && tr.num_frames <= DEPTH ? tr.num_frames : 0;
    jmethodID f[DEPTH] = {0};
    for (int i = 0; i < n; i++)
        f[i] = fr[i].method_id;
    unsigned h = site_hash(cid, n, f);
    for (struct site *s = sites[h]; s; s = s->next)
        if (s->cid == cid && s->n == n && memcmp(s->f, f, sizeof f) == 0) {
            s->count++;
            return;
        }
    struct site *s = calloc(1, sizeof *s);
    s->cid = cid;
    s->n = n;
    memcpy(s->f, f, sizeof f);
    s->count = 1;
    s->next = sites[h];
    sites[h] = s;
    n_sites++;
}

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.obj_alloc.class_id, obj = ev->u.obj_alloc.obj_id;
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        if (obj == want_obj) {
            got_alloc = 1;
            got_class = cid;
            got_is_array = ev->u.obj_alloc.is_array;
        }
        return;
    }
    n_allocs++;
    if (opt_mirrors) {
        if (cid != NULL && cid == obj)
            n_self_class++;
        pm_put(&objs, obj, (void *)((uintptr_t)cid | 1));
    }
    if (ev->u.obj_alloc.is_array != JVMPI_NORMAL_OBJECT)
        return;
    n_normal++;
    struct cls *c = class_of(cid, obj);
    c->count++;
    count_site(ev->env_id, cid);
}

/* "Class.method" of a frame, learning its class on demand. */
static void frame_name(jmethodID mid, char *out, size_t n)
{
    struct cls *c = pm_find(&methods, mid);
    if (c == NULL) {
        jobjectID cid = jvmpi->GetMethodClass(mid);
        if (cid != NULL && pm_find(&classes, cid) == NULL) {
            n_requests++;
            jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid);
        }
        c = pm_find(&methods, mid);
    }
    const char *m = "?";
    for (int i = 0; c != NULL && i < c->nmethods; i++)
        if (c->methods[i].id == mid)
            m = c->methods[i].name;
    snprintf(out, n, "%s.%s", c ? c->name : "?", m);
}

static int mine(const struct cls *c) { return strncmp(c->name, opt_prefix, strlen(opt_prefix)) == 0; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void print_counts(void)
{
    /* per class name */
    char **lines = NULL;
    size_t nl = 0, cap = 0;
    for (size_t i = 0; i < classes.cap; i++) {
        struct cls *c = classes.k[i] ? classes.v[i] : NULL;
        if (c == NULL || !mine(c) || c->count == 0)
            continue;
        if (nl == cap)
            lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof *lines);
        lines[nl] = malloc(strlen(c->name) + 32);
        sprintf(lines[nl++], "%s %ld", c->name, c->count);
    }
    qsort(lines, nl, sizeof *lines, cmp_str);
    for (size_t i = 0; i < nl;) { /* several classes of one name: one sum */
        size_t j = i;
        long sum = 0;
        size_t len = strrchr(lines[i], ' ') - lines[i];
        for (; j < nl && (size_t)(strrchr(lines[j], ' ') - lines[j]) == len && strncmp(lines[i], lines[j], len) == 0; j++)
            sum += atol(strrchr(lines[j], ' ') + 1);
        say("count %.*s %ld", (int)len, lines[i], sum);
        for (; i < j; i++)
            free(lines[i]);
    }
    free(lines);
    /* per site; sites of classes of one name (other loaders) and one trace: one line */
    nl = cap = 0;
    lines = NULL;
    for (int b = 0; b < NSB; b++)
        for (struct site *s = sites[b]; s; s = s->next) {
            struct cls *c = pm_find(&classes, s->cid);
            if (c == NULL || !mine(c))
                continue;
            char trace[1024] = "";
            for (int i = 0; i < s->n; i++) {
                char fn[256];
                frame_name(s->f[i], fn, sizeof fn);
                if (i)
                    strncat(trace, "<", sizeof trace - strlen(trace) - 1);
                strncat(trace, fn, sizeof trace - strlen(trace) - 1);
            }
            if (nl == cap)
                lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof *lines);
            lines[nl] = malloc(strlen(c->name) + strlen(trace) + 48);
            sprintf(lines[nl++], "%s %s %ld", c->name, s->n ? trace : "(no-frames)", s->count);
        }
    qsort(lines, nl, sizeof *lines, cmp_str);
    for (size_t i = 0; i < nl;) {
        size_t j = i;
        long sum = 0;
        size_t len = strrchr(lines[i], ' ') - lines[i];
        for (; j < nl && (size_t)(strrchr(lines[j], ' ') - lines[j]) == len && strncmp(lines[i], lines[j], len) == 0; j++)
            sum += atol(strrchr(lines[j], ' ') + 1);
        say("site %.*s %ld", (int)len, lines[i], sum);
        for (; i < j; i++)
            free(lines[i]);
    }
    free(lines);
}

/* Requested OBJECT_ALLOC of a Class object: its class_id and is_array. */
static int ask_alloc(jobjectID id, jobjectID *cls, int *is_array)
{
    want_obj = id;
    got_alloc = 0;
    got_class = NULL;
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    jvmpi->EnableGC();
    want_obj = NULL;
    *cls = got_class;
    *is_array = got_is_array;
    return rc == JVMPI_SUCCESS && got_alloc;
}

static jobjectID id_of_class(JNIEnv *jni, const char *name)
{
    jclass k = (*jni)->FindClass(jni, name);
    if (k == NULL) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    jvmpi->DisableGC();
    jobjectID id = jvmpi->jobject2jobjectID(k);
    jvmpi->EnableGC();
    (*jni)->DeleteLocalRef(jni, k);
    return id;
}

static void check_mirrors(JNIEnv *jni)
{
    jobjectID jlc = id_of_class(jni, "java/lang/Class");
    if (jlc == NULL) {
        FAIL("no id for java.lang.Class through jobject2jobjectID");
        return;
    }
    long announced = 0, wrong = 0, self_announced = 0;
    void *v = NULL;
    if (pm_get(&objs, jlc, &v)) {
        self_announced = 1;
        FAIL("java.lang.Class's own Class object %p was announced unrequested (class_id %p)", (void *)jlc,
             v == DEAD ? NULL : (void *)((uintptr_t)v & ~(uintptr_t)1));
    }
    for (size_t i = 0; i < classes.cap; i++) {
        jobjectID cid = classes.k[i];
        if (cid == NULL || cid == jlc || !pm_get(&objs, cid, &v) || v == DEAD)
            continue;
        announced++;
        jobjectID named = (jobjectID)((uintptr_t)v & ~(uintptr_t)1);
        if (named != jlc) {
            wrong++;
            if (wrong <= 5)
                FAIL("the Class object of %s (%p) was announced with class_id %p, not java.lang.Class (%p)",
                     ((struct cls *)classes.v[i])->name, (void *)cid, (void *)named, (void *)jlc);
        }
    }
    jobjectID c;
    int arr;
    int req_ok = ask_alloc(jlc, &c, &arr);
    if (!req_ok || c != NULL || arr != JVMPI_NORMAL_OBJECT)
        FAIL("requested OBJECT_ALLOC of java.lang.Class's mirror %p: %s, class_id %p is_array %d (want "
             "NULL, NORMAL_OBJECT)", (void *)jlc, req_ok ? "delivered" : "not delivered", (void *)c, arr);
    say("mirrors jlc_requested class_id=%s is_array=%d", req_ok ? (c == NULL ? "NULL" : "non-NULL") : "none", arr);
    char first[200];
    snprintf(first, sizeof first, "%s", opt_prefix);
    const char *others[] = {"java/lang/Object", "java/lang/String", first};
    int others_ok = 0;
    for (int i = 0; i < 3; i++) {
        jobjectID k = id_of_class(jni, others[i]);
        if (k == NULL) {
            FAIL("no id for %s through jobject2jobjectID", others[i]);
            continue;
        }
        int ok = ask_alloc(k, &c, &arr);
        if (!ok || c != jlc || arr != JVMPI_NORMAL_OBJECT)
            FAIL("requested OBJECT_ALLOC of %s's Class object %p: %s, class_id %p is_array %d (want "
                 "java.lang.Class %p)", others[i], (void *)k, ok ? "delivered" : "not delivered", (void *)c, arr,
                 (void *)jlc);
        else
            others_ok++;
    }
    say("mirrors announced=%ld wrong_class=%ld jlc_unrequested=%ld self_class=%ld requested_others_ok=%d",
        announced, wrong, self_announced, n_self_class, others_ok);
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    jvmpi->RawMonitorEnter(lock);
    switch (type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        n_frees++;
        if (pm_get(&objs, ev->u.obj_free.obj_id, NULL))
            pm_put(&objs, ev->u.obj_free.obj_id, DEAD);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->event_type & JVMPI_REQUESTED_EVENT)
            n_requested_loads++;
        add_class(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        print_counts();
        if (opt_mirrors)
            check_mirrors(ev->env_id);
        say("summary allocs=%ld normal=%ld class_requests=%ld requested_loads=%ld sites=%ld frees=%ld fails=%d",
            n_allocs, n_normal, n_requests, n_requested_loads, n_sites, n_frees, g_fails);
        break;
    default:
        break;
    }
    jvmpi->RawMonitorExit(lock);
}

static void parse_options(const char *o)
{
    while (o != NULL && *o) {
        const char *end = strchr(o, ',');
        size_t n = end ? (size_t)(end - o) : strlen(o);
        char w[160];
        snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), o);
        if (strcmp(w, "classload") == 0)
            opt_classload = 1;
        else if (strcmp(w, "mirrors") == 0)
            opt_mirrors = 1;
        else if (strncmp(w, "prefix=", 7) == 0)
            snprintf(opt_prefix, sizeof opt_prefix, "%s", w + 7);
        else
            say("FAIL unknown option '%s'", w);
        o = end ? end + 1 : NULL;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    parse_options(options);
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("alloc_sites");
    static const jint ev[] = {JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_JVM_SHUT_DOWN};
    enable_events(ev, NELEMS(ev), 1);
    if (opt_classload) {
        static const jint cl[] = {JVMPI_EVENT_CLASS_LOAD};
        enable_events(cl, 1, 1);
    }
    if (opt_mirrors) {
        static const jint fr[] = {JVMPI_EVENT_OBJECT_FREE};
        enable_events(fr, 1, 1);
    }
    say("loaded classload=%d mirrors=%d prefix=%s", opt_classload, opt_mirrors, opt_prefix);
    return JNI_OK;
}
