/* ids_tracer.c — a JDK 1.3-style JVMPI tracer that resolves every id it is handed
 * (tests/it/memory/ids_resolve.sh; workload tests/java/IdsWork.java).
 *
 * Always: CLASS_LOAD fills a class table (id -> name) and a method table (id -> class,
 * name); THREAD_START is enabled, so thread ids are defined before use.
 *
 * Option "ensure" — the "ensure defined" tracer: METHOD_ENTRY2 is enabled; in its handler,
 * under the agent's global raw monitor, every receiver id not seen before is marked pending
 * and RequestEvent(OBJECT_ALLOC, id) is called at once. The requested OBJECT_ALLOC, delivered
 * inside that call, records the answer (class id, size, is_array) for the id it names. At
 * JVM_SHUT_DOWN, for each of the workload's classes A, B, C:
 *     ids: ensure class=<name> receivers=<distinct receiver ids of X.touch()>
 *          answered=<requests answered with that id> rightclass=<answers naming X>
 *          minsize=<s> maxsize=<s>
 * and "ids: ensure requests=<n> failed=<rc != JVMPI_SUCCESS> mismatched=<answer for another
 * id>", then "ids: ensure timing request_ms=<time inside the requests> us_per_request=<t>"
 * (the benchmark reads it).
 *
 * Option "dumpask" — "dump, then ask about each": a system thread (ids-control) waits for the
 * system property jvmpishim.ids.ready, takes a level-0 HEAP_DUMP, then calls
 * RequestEvent(OBJECT_ALLOC) for every id in it and counts the answers per class:
 *     ids: dumpask records=<n> answered=<n> failed=<n> mismatched=<n>
 *     ids: dumpask class=<name> objects=<answers naming X, not arrays> minsize= maxsize=
 *     ids: dumpask arrays of=<A> count=<n> sizes=<sorted sizes, comma-separated>
 * then RequestEvent(OBJECT_DUMP) for every answered A (up to 50000): the record must be one
 * INSTANCE_DUMP of that id and class A with 4 value bytes (A's int serial, big-endian):
 *     ids: dumpask objdump asked=<n> ok=<n> serials_distinct=<n> serial_max=<max>
 * and finally sets jvmpishim.ids.done=ok.
 *
 * Option "objdumps=N": at most N OBJECT_DUMP requests in dumpask (default 50000). dumpask
 * also prints "ids: dumpask times dump_ms=<level-0 dump> alloc_ms=<all OBJECT_ALLOC requests>
 * objdump_ms=<all OBJECT_DUMP requests>" (the benchmark reads it; the test does not).
 *
 * Option "dumpbench" — what a heap analyzer's requests cost (bench/ids.sh dumpask, dumpobj,
 * inside): the control thread takes a level-0 HEAP_DUMP under DisableGC and asks about
 * asks=N (default 500) of its ids, spread evenly over it: RequestEvent(OBJECT_ALLOC) with
 * kind=alloc (default), RequestEvent(OBJECT_DUMP) with kind=obj; option inside asks from
 * the HEAP_DUMP handler itself, else after it. Each answer must name the id asked for.
 *     ids: dumpbench kind=K inside=0|1 records=<n> dump_ms=<the dump, the handler's asking
 *          excluded> first_us=<the first request> rest_us=<mean of the others>
 *          asks_ms=<all requests> failed=<n> asked=<n>
 * With option classes, the ids asked about are those of the dump that CLASS_LOAD named as
 * classes (all of them, asks= ignored): an analyzer's OBJECT_DUMP of every class it lists;
 * an array class's OBJECT_DUMP answers JVMPI_FAIL (no record), not counted as failed.
 *
 * Option "badids" — an agent passing bad ids by the thousand: the control thread waits for
 * jvmpishim.ids.ready (the workload holds NA As and NB Bs), takes a level-0 dump and asks
 * OBJECT_ALLOC for every id in it, keeping the ids of the As and Bs; sets jvmpishim.ids.drop,
 * waits for jvmpishim.ids.dropped (the workload dropped its As, kept its Bs, and collected);
 * then makes N calls (N from the property jvmpishim.ids.calls), in turn:
 * RequestEvent(OBJECT_ALLOC) with garbage (not a multiple of 8; below any id; far above any
 * id), RequestEvent(CLASS_LOAD) with the id of a live B (wrong kind), RequestEvent(OBJECT_ALLOC)
 * and jobjectID2jobject with the id of a dropped A (freed); every one must fail. Prints
 *     ids: badids calls=<n> refused=<n> accepted=<n> ns_per_call=<t>
 *
 * Option "norequest" (with "ensure"): the same without the requests (the benchmark's baseline).
 *
 * Option "fresh" — ids asked for as soon as they are handed out, the HPROF way: in the
 * CLASS_LOAD handler of each IdsWork$Fresh (the workload defines it again and again, in a
 * new loader each time) RequestEvent(OBJECT_ALLOC, class_id) for the class object; and in
 * the native IdsWork.convert(Object) (bound from this library), jobject2jobjectID of the
 * object and RequestEvent(OBJECT_ALLOC) for that id. Each answer must name the id asked for,
 * java.lang.Class or IdsWork$Fresh. At JVM_SHUT_DOWN:
 *     ids: fresh class_requests=<n> class_us=<us per request> converted_requests=<n>
 *          converted_us=<us per request> failed=<n>
 *
 * Violations print "ids: FAIL ...".
 */
#include <jvmpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define KIT_NAME "ids"
#define KIT_LINE 4096
#include "kit/out.h"
#include "kit/checked.h"

static JVMPI_RawMonitor lock;
static int opt_ensure, opt_dumpask, opt_norequest, opt_badids, opt_fresh;
static long opt_objdumps = 50000;
/* dumpbench mode */
static int opt_dumpbench, opt_inside, opt_kind_obj, opt_classes;
static long opt_asks = 500;
static double bench_t_handler, bench_first_us, bench_asks_ms;
static long bench_asked;
static long bench_failed;
static void *bench_want;
static int bench_got;

/* ---- an id -> record hash (open addressing, never shrinks) ---------------------------- */

struct rec {
    void *key;
    void *cls;          /* class id answered (OBJECT_ALLOC) or a method's class (methods) */
    int size;
    int is_array;
    int state;          /* 1 pending, 2 answered */
    int tag;            /* methods: 0..2 = touch() of A, B, C; -1 other */
};
struct table { struct rec *r; size_t cap, n; };

static struct rec *tab_get(struct table *t, void *key, int create)
{
    if (t->cap == 0 || (create && t->n * 2 >= t->cap)) {
        if (!create && t->cap == 0)
            return NULL;
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        struct rec *nr = calloc(ncap, sizeof *nr);
        for (size_t i = 0; i < t->cap; i++)
            if (t->r[i].key) {
                size_t j = ((uintptr_t)t->r[i].key >> 3) * 0x9E3779B97F4A7C15ULL >> 40 & (ncap - 1);
                while (nr[j].key)
                    j = (j + 1) & (ncap - 1);
                nr[j] = t->r[i];
            }
        free(t->r);
        t->r = nr;
        t->cap = ncap;
    }
    size_t j = ((uintptr_t)key >> 3) * 0x9E3779B97F4A7C15ULL >> 40 & (t->cap - 1);
    while (t->r[j].key && t->r[j].key != key)
        j = (j + 1) & (t->cap - 1);
    if (t->r[j].key == key)
        return &t->r[j];
    if (!create)
        return NULL;
    t->r[j].key = key;
    t->n++;
    return &t->r[j];
}

static struct table objs, methods, loaded; /* loaded: class ids from CLASS_LOAD (dumpbench classes) */
static void *class_ids[3];             /* IdsWork$A, $B, $C */
static const char *const cnames[3] = {"IdsWork$A", "IdsWork$B", "IdsWork$C"};
static long requests, failed, mismatched;
static double request_ms;              /* time spent in RequestEvent(OBJECT_ALLOC) calls */
static void *asking;                   /* the id being requested (under lock) */

static int which_class(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(name, cnames[i]) == 0)
            return i;
    return -1;
}

/* ---- requests ------------------------------------------------------------------------- */

/* Under lock. Returns the record of id, asking for its OBJECT_ALLOC first if not seen. */
static struct rec *ensure(void *id)
{
    struct rec *r = tab_get(&objs, id, 1);
    if (r->state != 0)
        return r;               /* answered, or pending further up this thread's stack */
    r->state = 1;
    requests++;
    void *prev = asking;
    asking = id;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    request_ms += (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    asking = prev;
    r = tab_get(&objs, id, 0);  /* the table may have grown meanwhile */
    if (rc != JVMPI_SUCCESS) {
        failed++;
        if (failed <= 5)
            FAIL("RequestEvent(OBJECT_ALLOC, %p) rc=%d", id, (int)rc);
    } else if (r->state != 2) {
        FAIL("RequestEvent(OBJECT_ALLOC, %p) returned JVMPI_SUCCESS without an answer", id);
    }
    return r;
}

static void on_alloc(JVMPI_Event *ev)
{
    if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
        return;
    if (opt_dumpbench) {
        if (ev->u.obj_alloc.obj_id == bench_want && ev->u.obj_alloc.size > 0)
            bench_got++;
        return;
    }
    jvmpi->RawMonitorEnter(lock);
    void *id = ev->u.obj_alloc.obj_id;
    if (id != asking) {
        mismatched++;
        if (mismatched <= 5)
            FAIL("requested OBJECT_ALLOC names %p while %p was asked for", id, asking);
    }
    struct rec *r = tab_get(&objs, id, 1);
    r->state = 2;
    r->cls = ev->u.obj_alloc.class_id;
    r->size = (int)ev->u.obj_alloc.size;
    r->is_array = (int)ev->u.obj_alloc.is_array;
    jvmpi->RawMonitorExit(lock);
}

/* ---- fresh mode ----------------------------------------------------------------------- */

static long fresh_class_n, fresh_conv_n, fresh_failed;
static double fresh_class_us, fresh_conv_us;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Under lock: RequestEvent(OBJECT_ALLOC, id), timed; true if it answered for id. */
static int fresh_ask(void *id, double *us)
{
    asking = id;
    double t0 = now_us();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    *us += now_us() - t0;
    asking = NULL;
    struct rec *r = tab_get(&objs, id, 0);
    return rc == JVMPI_SUCCESS && r != NULL && r->state == 2;
}

static void on_fresh_class(void *class_id)
{
    jvmpi->RawMonitorEnter(lock);
    jvmpi->DisableGC();
    if (!fresh_ask(class_id, &fresh_class_us)) {
        fresh_failed++;
        FAIL("RequestEvent(OBJECT_ALLOC, %p) for a class in its CLASS_LOAD: no answer", class_id);
    }
    fresh_class_n++;
    jvmpi->EnableGC();
    jvmpi->RawMonitorExit(lock);
}

JNIEXPORT void JNICALL Java_IdsWork_convert(JNIEnv *env, jclass cls, jobject o)
{
    (void)env;
    (void)cls;
    jvmpi->RawMonitorEnter(lock);
    jvmpi->DisableGC();
    void *id = jvmpi->jobject2jobjectID(o);
    if (id == NULL || !fresh_ask(id, &fresh_conv_us)) {
        fresh_failed++;
        FAIL("RequestEvent(OBJECT_ALLOC, %p) for an id jobject2jobjectID just made: no answer", id);
    }
    fresh_conv_n++;
    jvmpi->EnableGC();
    jvmpi->RawMonitorExit(lock);
}

/* ---- ensure mode ---------------------------------------------------------------------- */

static void on_entry2(JVMPI_Event *ev)
{
    void *id = ev->u.method_entry2.obj_id;
    if (id == NULL)
        return;
    jvmpi->RawMonitorEnter(lock);
    struct rec *r = opt_norequest ? tab_get(&objs, id, 1) : ensure(id);
    struct rec *m = tab_get(&methods, ev->u.method_entry2.method_id, 0);
    if (m != NULL && m->tag >= 0) {
        r->tag = r->tag ? r->tag : 1 + m->tag; /* this object is a receiver of X.touch() */
    }
    jvmpi->RawMonitorExit(lock);
}

static void ensure_report(void)
{
    for (int c = 0; c < 3; c++) {
        long recv = 0, answered = 0, right = 0;
        int mn = 0, mx = 0;
        for (size_t i = 0; i < objs.cap; i++) {
            struct rec *r = &objs.r[i];
            if (r->key == NULL || r->tag != c + 1)
                continue;
            recv++;
            if (r->state != 2)
                continue;
            answered++;
            if (r->cls == class_ids[c] && r->is_array == JVMPI_NORMAL_OBJECT)
                right++;
            if (mn == 0 || r->size < mn) mn = r->size;
            if (r->size > mx) mx = r->size;
        }
        say("ensure class=%s receivers=%ld answered=%ld rightclass=%ld minsize=%d maxsize=%d",
            cnames[c], recv, answered, right, mn, mx);
    }
    say("ensure requests=%ld failed=%ld mismatched=%ld", requests, failed, mismatched);
    say("ensure timing request_ms=%.1f us_per_request=%.2f", request_ms,
        requests ? request_ms * 1e3 / requests : 0.0);
}

/* ---- dumpask mode --------------------------------------------------------------------- */

static unsigned char *dump;
static size_t dump_len;
static const unsigned char *od_data;
static int od_len, od_events;

static double now_msf(void);

/* dumpbench: ask about asks ids spread over the dump (the dump's bytes are the agent's). */
static void bench_ask(const unsigned char *d, size_t len)
{
    size_t rs = 1 + sizeof(void *), nrec = len / rs;
    long n = opt_asks < (long)nrec ? opt_asks : (long)nrec;
    void **pick = NULL;
    char *pick_arr = NULL;
    if (opt_classes) { /* the dump's class ids, listed before the clock starts */
        pick = malloc(nrec * sizeof *pick + 1);
        pick_arr = malloc(nrec + 1);
        n = 0;
        jvmpi->RawMonitorEnter(lock);
        for (size_t r = 0; pick != NULL && pick_arr != NULL && r < nrec; r++) {
            void *id;
            memcpy(&id, d + r * rs + 1, sizeof id);
            struct rec *c = tab_get(&loaded, id, 0);
            if (c != NULL) {
                pick_arr[n] = (char)c->is_array;
                pick[n++] = id;
            }
        }
        jvmpi->RawMonitorExit(lock);
    }
    bench_asked = n;
    double t0 = now_msf();
    for (long i = 0; i < n; i++) {
        void *id;
        if (pick != NULL)
            id = pick[i];
        else
            memcpy(&id, d + (size_t)((double)i * nrec / n) * rs + 1, sizeof id);
        bench_want = id;
        bench_got = 0;
        double a = now_msf();
        jint rc = jvmpi->RequestEvent(opt_kind_obj ? JVMPI_EVENT_OBJECT_DUMP : JVMPI_EVENT_OBJECT_ALLOC, id);
        if (i == 0)
            bench_first_us = (now_msf() - a) * 1e3;
        if (rc != JVMPI_SUCCESS || bench_got != 1)
            bench_failed += !(opt_kind_obj && pick_arr != NULL && pick_arr[i] && rc == JVMPI_FAIL);
    }
    bench_asks_ms = now_msf() - t0;
    bench_want = NULL;
    free(pick);
    free(pick_arr);
}

static void on_heap_dump(JVMPI_Event *ev)
{
    bench_t_handler = now_msf();
    dump_len = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    dump = malloc(dump_len ? dump_len : 1);
    memcpy(dump, ev->u.heap_dump.begin, dump_len);
    if (opt_dumpbench && opt_inside)
        bench_ask(dump, dump_len);
}

static void dumpbench(void)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    jvmpi->DisableGC();
    double t0 = now_msf();
    jint hrc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    if (hrc != JVMPI_SUCCESS || dump == NULL) {
        FAIL("RequestEvent(HEAP_DUMP, level 0) failed");
        jvmpi->EnableGC();
        return;
    }
    double dump_ms = bench_t_handler - t0;
    if (!opt_inside)
        bench_ask(dump, dump_len);
    jvmpi->EnableGC();
    long asks = bench_asked;
    say("dumpbench kind=%s inside=%d records=%zu dump_ms=%.1f first_us=%.1f rest_us=%.2f asks_ms=%.1f "
        "failed=%ld asked=%ld", opt_kind_obj ? "obj" : "alloc", opt_inside, dump_len / (1 + sizeof(void *)),
        dump_ms, bench_first_us, asks > 1 ? (bench_asks_ms * 1e3 - bench_first_us) / (asks - 1) : 0.0,
        bench_asks_ms, bench_failed, asks);
    if (bench_failed)
        FAIL("dumpbench: %ld requests failed", bench_failed);
}

static void on_object_dump(JVMPI_Event *ev)
{
    void *oid = NULL;
    if (ev->u.object_dump.data_len > (jint)sizeof(void *))
        memcpy(&oid, ev->u.object_dump.data + 1, sizeof oid);
    if (bench_want != NULL && oid == bench_want)
        bench_got++;
    od_events++;
    od_len = ev->u.object_dump.data_len;
    static unsigned char buf[256];
    memcpy(buf, ev->u.object_dump.data, od_len < (int)sizeof buf ? od_len : (int)sizeof buf);
    od_data = buf;
}

/* Fractional milliseconds: the dumpask times are printed with decimals. */
static double now_msf(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static void dumpask(void)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    double t0 = now_msf();
    jint hrc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    double t1 = now_msf();
    if (hrc != JVMPI_SUCCESS || dump == NULL) {
        FAIL("RequestEvent(HEAP_DUMP, level 0) failed");
        return;
    }
    size_t rs = 1 + sizeof(void *), nrec = dump_len / rs;
    if (dump_len % rs != 0)
        FAIL("level-0 dump of %zu bytes is not a whole number of %zu-byte records", dump_len, rs);
    long answered = 0;
    jvmpi->RawMonitorEnter(lock);
    for (size_t i = 0; i < nrec; i++) {
        void *id;
        memcpy(&id, dump + i * rs + 1, sizeof id);
        struct rec *r = ensure(id);
        if (r->state == 2)
            answered++;
    }
    double t2 = now_msf();
    say("dumpask records=%zu answered=%ld failed=%ld mismatched=%ld", nrec, answered, failed,
        mismatched);
    int *sizes = malloc(sizeof(int) * (objs.n + 1)), ns = 0;
    for (int c = 0; c < 3; c++) {
        long n = 0;
        int mn = 0, mx = 0;
        for (size_t i = 0; i < objs.cap; i++) {
            struct rec *r = &objs.r[i];
            if (r->key && r->state == 2 && r->cls == class_ids[c] && r->is_array == JVMPI_NORMAL_OBJECT) {
                n++;
                if (mn == 0 || r->size < mn) mn = r->size;
                if (r->size > mx) mx = r->size;
            }
        }
        say("dumpask class=%s objects=%ld minsize=%d maxsize=%d", cnames[c], n, mn, mx);
    }
    for (size_t i = 0; i < objs.cap; i++) {
        struct rec *r = &objs.r[i];
        if (r->key && r->state == 2 && r->cls == class_ids[0] && r->is_array == JVMPI_CLASS)
            sizes[ns++] = r->size;
    }
    qsort(sizes, ns, sizeof *sizes, cmp_int);
    char line[2048] = "";
    for (int i = 0; i < ns && strlen(line) < sizeof line - 16; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d", i ? "," : "", sizes[i]);
    say("dumpask arrays of=%s count=%d sizes=%s", cnames[0], ns, line);
    /* OBJECT_DUMP for every A (up to 50000). */
    void **as = malloc(sizeof(void *) * (objs.n + 1));
    long na = 0;
    for (size_t i = 0; i < objs.cap && na < opt_objdumps; i++) {
        struct rec *r = &objs.r[i];
        if (r->key && r->state == 2 && r->cls == class_ids[0] && r->is_array == JVMPI_NORMAL_OBJECT)
            as[na++] = r->key;
    }
    jvmpi->RawMonitorExit(lock);
    double t3 = now_msf();
    long ok = 0;
    unsigned char *seen = calloc(1 << 20, 1);
    long distinct = 0;
    unsigned smax = 0;
    for (long i = 0; i < na; i++) {
        od_events = 0;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, as[i]);
        size_t ps = sizeof(void *);
        if (rc != JVMPI_SUCCESS || od_events != 1 || od_len != (int)(1 + 2 * ps + 4 + 4)) {
            if (i < 5)
                FAIL("OBJECT_DUMP(%p): rc=%d events=%d data_len=%d", as[i], (int)rc, od_events, od_len);
            continue;
        }
        void *oid, *cid;
        memcpy(&oid, od_data + 1, ps);
        memcpy(&cid, od_data + 1 + ps, ps);
        const unsigned char *v = od_data + 1 + 2 * ps;
        unsigned nbytes = (unsigned)v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3];
        unsigned serial = (unsigned)v[4] << 24 | v[5] << 16 | v[6] << 8 | v[7];
        if (od_data[0] != JVMPI_GC_INSTANCE_DUMP || oid != as[i] || cid != class_ids[0] || nbytes != 4) {
            if (i < 5)
                FAIL("OBJECT_DUMP(%p): record type %d id %p class %p value bytes %u", as[i],
                     od_data[0], oid, cid, nbytes);
            continue;
        }
        ok++;
        if (serial < (1u << 20) && !seen[serial]) {
            seen[serial] = 1;
            distinct++;
        }
        if (serial > smax)
            smax = serial;
    }
    double t4 = now_msf();
    say("dumpask objdump asked=%ld ok=%ld serials_distinct=%ld serial_max=%u", na, ok, distinct, smax);
    say("dumpask times records=%zu dump_ms=%.1f alloc_ms=%.1f objdumps=%ld objdump_ms=%.1f",
        nrec, t1 - t0, t2 - t1, na, t4 - t3);
    free(seen);
    free(as);
    free(sizes);
}

static char *wait_property(JNIEnv *jni, const char *name)
{
    char *v = NULL;
    for (int i = 0; i < 30000 && (v = get_property(jni, name)) == NULL; i++)
        usleep(10 * 1000);
    if (v == NULL)
        FAIL("%s never set", name);
    return v;
}

static void badids(JNIEnv *jni)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    if (jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg) != JVMPI_SUCCESS || dump == NULL) {
        FAIL("RequestEvent(HEAP_DUMP, level 0) failed");
        return;
    }
    size_t rs = 1 + sizeof(void *), nrec = dump_len / rs;
    void **as = malloc(sizeof(void *) * (nrec + 1)), **bs = malloc(sizeof(void *) * (nrec + 1));
    size_t na = 0, nb = 0;
    jvmpi->RawMonitorEnter(lock);
    for (size_t i = 0; i < nrec; i++) {
        void *id;
        memcpy(&id, dump + i * rs + 1, sizeof id);
        struct rec *r = ensure(id);
        if (r->state == 2 && r->cls == class_ids[0] && r->is_array == JVMPI_NORMAL_OBJECT)
            as[na++] = id;
        if (r->state == 2 && r->cls == class_ids[1] && r->is_array == JVMPI_NORMAL_OBJECT)
            bs[nb++] = id;
    }
    jvmpi->RawMonitorExit(lock);
    set_property(jni, "jvmpishim.ids.drop", "1");
    free(wait_property(jni, "jvmpishim.ids.dropped"));
    char *c = wait_property(jni, "jvmpishim.ids.calls");
    long calls = c ? atol(c) : 0, refused = 0, accepted = 0;
    free(c);
    double t0 = now_msf();
    for (long i = 0; i < calls && na > 0 && nb > 0; i++) {
        void *id = as[(size_t)i % na]; /* the As were dropped and collected: freed ids */
        jint rc;
        switch (i % 6) {
        case 0: rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, (void *)((uintptr_t)id | 3)); break;
        case 1: rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, (void *)(uintptr_t)(0x1000 + 8 * (i & 255))); break;
        case 2: rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, (void *)((uintptr_t)id + ((uintptr_t)1 << (sizeof(void *) == 8 ? 42 : 30)))); break;
        case 3: rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, bs[(size_t)i % nb]); break;
        case 4: rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id); break;
        default: rc = jvmpi->jobjectID2jobject(id) != NULL ? JVMPI_SUCCESS : JVMPI_FAIL; break;
        }
        if (rc == JVMPI_SUCCESS)
            accepted++;
        else
            refused++;
    }
    double t1 = now_msf();
    say("badids calls=%ld refused=%ld accepted=%ld ns_per_call=%.0f", calls, refused, accepted,
        calls ? (t1 - t0) * 1e6 / calls : 0.0);
    free(as);
    free(bs);
}

static void control(void *arg)
{
    (void)arg;
    JNIEnv *jni = current_env();
    char *ready = NULL;
    for (int i = 0; i < 6000 && (ready = get_property(jni, "jvmpishim.ids.ready")) == NULL; i++)
        usleep(10 * 1000);
    if (ready == NULL) {
        FAIL("jvmpishim.ids.ready never set");
        return;
    }
    free(ready);
    if (opt_badids) {
        badids(jni);
        say("badids done fails=%d", g_fails);
    } else if (opt_dumpbench) {
        dumpbench();
        say("dumpbench done fails=%d", g_fails);
    } else {
        dumpask();
        say("dumpask done fails=%d", g_fails);
    }
    set_property(jni, "jvmpishim.ids.done", "ok");
}

/* ---- events --------------------------------------------------------------------------- */

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD: {
        if (opt_fresh && !(ev->event_type & JVMPI_REQUESTED_EVENT) &&
            strcmp(ev->u.class_load.class_name, "IdsWork$Fresh") == 0)
            on_fresh_class(ev->u.class_load.class_id);
        int c = which_class(ev->u.class_load.class_name);
        jvmpi->RawMonitorEnter(lock);
        if (opt_classes) /* is_array: an array class, whose mirror has no dump record */
            tab_get(&loaded, ev->u.class_load.class_id, 1)->is_array = ev->u.class_load.class_name[0] == '[';
        if (c >= 0)
            class_ids[c] = ev->u.class_load.class_id;
        for (int i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            struct rec *r = tab_get(&methods, m->method_id, 1);
            r->tag = c >= 0 && strcmp(m->method_name, "touch") == 0 ? c : -1;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    }
    case JVMPI_EVENT_METHOD_ENTRY2:
        on_entry2(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        on_object_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if ((opt_dumpask || opt_badids || opt_dumpbench) &&
            jvmpi->CreateSystemThread("ids-control", JVMPI_NORMAL_PRIORITY, control) != JNI_OK)
            FAIL("CreateSystemThread(ids-control) failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        jvmpi->RawMonitorEnter(lock);
        if (opt_ensure)
            ensure_report();
        if (opt_fresh)
            say("fresh class_requests=%ld class_us=%.2f converted_requests=%ld converted_us=%.2f "
                "failed=%ld", fresh_class_n, fresh_class_n ? fresh_class_us / fresh_class_n : 0.0,
                fresh_conv_n, fresh_conv_n ? fresh_conv_us / fresh_conv_n : 0.0, fresh_failed);
        say("shutdown fails=%d", g_fails);
        jvmpi->RawMonitorExit(lock);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    if (!GET_JVMPI(jvm, JVMPI_VERSION_1))
        return JNI_ERR;
    opt_ensure = options && strstr(options, "ensure") != NULL;
    opt_dumpask = options && strstr(options, "dumpask") != NULL;
    opt_norequest = options && strstr(options, "norequest") != NULL;
    opt_badids = options && strstr(options, "badids") != NULL;
    opt_fresh = options && strstr(options, "fresh") != NULL;
    opt_dumpbench = options && strstr(options, "dumpbench") != NULL;
    opt_inside = options && strstr(options, "inside") != NULL;
    opt_kind_obj = options && strstr(options, "kind=obj") != NULL;
    opt_classes = options && strstr(options, "classes") != NULL;
    const char *as = options ? strstr(options, "asks=") : NULL;
    if (as != NULL)
        opt_asks = atol(as + 5);
    const char *od = options ? strstr(options, "objdumps=") : NULL;
    if (od != NULL)
        opt_objdumps = atol(od + 9);
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("ids-tracer");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    if (opt_ensure)
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL);
    say("loaded ensure=%d dumpask=%d", opt_ensure, opt_dumpask);
    return JNI_OK;
}
