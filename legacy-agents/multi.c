/* multi.c — a JDK 1.3-style JVMPI agent meant to run beside another agent in the same JVM
 * (tests/it/lifecycle/multi_agent.sh, workload tests/java/MultiWork.java).
 *
 * Options, comma-separated:
 *   name=NAME  its name; every output line starts with "multi[NAME]: "
 *   alloc      enable OBJECT_ALLOC in JVM_OnLoad
 *   entry      enable METHOD_ENTRY in JVM_OnLoad
 *   entry2     enable METHOD_ENTRY2 in JVM_OnLoad
 *   mon        enable the Java monitor events (MONITOR_CONTENDED_ENTER/ENTERED/EXIT,
 *              MONITOR_WAIT/WAITED) in JVM_OnLoad
 *   gc         enable GC_START, GC_FINISH and OBJECT_FREE in JVM_OnLoad; RunGC at the end
 *   dumps      at the end, also HEAP_DUMP levels 1 and 2, OBJECT_DUMP of MultiWork.KNOWN and
 *              MONITOR_DUMP (printed as "dumps ..." with each rc and length)
 * Always enabled: THREAD_START, THREAD_END, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN. The
 * EnableEvent return codes are printed ("enable OBJECT_ALLOC rc=0").
 *
 * What it records, so that the test can compare two agents:
 *   - the ids CLASS_LOAD gives MultiTarget, and THREAD_START gives main and multi-worker;
 *   - every OBJECT_ALLOC of a MultiTarget (its id and thread), and every METHOD_ENTRY2 of
 *     MultiTarget.mark() (the receiver's id and thread), and METHOD_ENTRY of mark();
 *   - thread-local storage: at each THREAD_START it sets, for that thread, a record naming
 *     this agent and the thread (the slot must be empty before: another agent's record
 *     there would mean a shared slot), and on every later event on a thread (OBJECT_ALLOC,
 *     METHOD_ENTRY, METHOD_ENTRY2, THREAD_END) reads it back: it must be its own record,
 *     for that thread. Counted as tls checks / wrong / unset / preset.
 *   - events of a type it did not enable (and did not request): "FAIL" and counted.
 * In the CLASS_LOAD handler of MultiWork$End (on main, every target alive) it prints the id
 * of MultiWork.KNOWN through JNI (jobject2jobjectID), takes a level-0 HEAP_DUMP
 * (RequestEvent) and looks for KNOWN and for every target id it recorded, and prints its
 * records. At JVM_SHUT_DOWN it prints its event counts. Its JNI use is checked (exceptions,
 * a local frame), since tests/it/lifecycle/xcheck_jni.sh runs it under -Xcheck:jni.
 * The address of one of its statics is printed at JVM_OnLoad ("self="): two instances of
 * the same library have different ones only if each got its own copy of the library.
 */
#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JavaVM *g_jvm;
static JVMPI_Interface *jvmpi;
static char g_name[32] = "?";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int enabled[64];     /* event types this agent enabled */
static long counts[64];     /* events received, by type (requested ones included) */
static long unexpected, tls_checks, tls_wrong, tls_unset, tls_preset;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("multi[%s]: %s\n", g_name, line);
    fflush(stdout);
}

/* ---- threads ---- */
#define MAXTHR 256
static struct { JNIEnv *env; jobjectID id; char name[64]; } thr[MAXTHR];
static int nthr;

static const char *thread_name(JNIEnv *env)
{
    const char *n = "?";
    pthread_mutex_lock(&mu);
    for (int i = nthr - 1; i >= 0; i--)
        if (thr[i].env == env) {
            n = thr[i].name;
            break;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- thread-local storage ---- */
#define TLS_MAGIC 0x6d756c74u
struct tls {
    unsigned magic;
    const char *owner;      /* g_name of the agent copy that set it */
    char name[32];          /* and its value at the time */
    JNIEnv *env;            /* the thread it was set for */
};

static void tls_set(JNIEnv *env)
{
    if (jvmpi->GetThreadLocalStorage(env) != NULL)
        __sync_add_and_fetch(&tls_preset, 1);
    struct tls *t = calloc(1, sizeof *t);
    if (t == NULL)
        return;
    t->magic = TLS_MAGIC;
    t->owner = g_name;
    snprintf(t->name, sizeof t->name, "%s", g_name);
    t->env = env;
    jvmpi->SetThreadLocalStorage(env, t);
}

/* 1 if env's slot holds this agent's record for env, 0 otherwise (counted). */
static const char *thread_name(JNIEnv *env);
static int tls_check_at(JNIEnv *env, const char *where)
{
    struct tls *t = jvmpi->GetThreadLocalStorage(env);
    if (t == NULL) {
        if (__sync_add_and_fetch(&tls_unset, 1) <= 5)
            say("tls unset at %s on %p (%s)", where, (void *)env, thread_name(env));
        return 0;
    }
    if (t->magic != TLS_MAGIC || t->owner != g_name || strcmp(t->name, g_name) != 0 || t->env != env) {
        if (__sync_add_and_fetch(&tls_wrong, 1) <= 5)
            say("FAIL thread-local storage of %p holds %s's record for %p", (void *)env,
                t->magic == TLS_MAGIC ? t->name : "(not a record)",
                t->magic == TLS_MAGIC ? (void *)t->env : NULL);
        return 0;
    }
    __sync_add_and_fetch(&tls_checks, 1);
    return 1;
}

/* ---- what the test compares ---- */
static jobjectID target_class;
#define MAXMARK 8
static jmethodID mark_ids[MAXMARK];
static int nmark;
#define MAXREC 64
struct rec { jobjectID id; JNIEnv *env; };
static struct rec allocs[MAXREC], receivers[MAXREC];
static int nallocs, nreceivers;
static long mark_entries;

static int is_mark(jmethodID m)
{
    for (int i = 0; i < nmark; i++)
        if (mark_ids[i] == m)
            return 1;
    return 0;
}

static void add(struct rec *r, int *n, jobjectID id, JNIEnv *env)
{
    pthread_mutex_lock(&mu);
    if (*n < MAXREC) {
        r[*n].id = id;
        r[*n].env = env;
        (*n)++;
    }
    pthread_mutex_unlock(&mu);
}

/* ---- the end handler ---- */
static jobjectID known_id;
static int dump_known, dump_found, dump_records;
static int want_dumps, want_gc;
static long last_dump_len; /* bytes of the last HEAP_DUMP, OBJECT_DUMP or MONITOR_DUMP */

static int recorded(jobjectID id)
{
    if (id == NULL)
        return 0;
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].id == id)
            return 1;
    for (int i = 0; i < nreceivers; i++)
        if (receivers[i].id == id)
            return 1;
    return 0;
}

static void on_heap_dump(JVMPI_Event *ev)
{
    const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
    const unsigned char *e = (const unsigned char *)ev->u.heap_dump.end;
    last_dump_len = (long)(e - p);
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_0)
        return; /* only level 0 is scanned: (type, id) records */
    dump_records = dump_known = dump_found = 0;
    while (p != NULL && e - p >= (long)(1 + sizeof(void *))) {
        jobjectID id;
        memcpy(&id, p + 1, sizeof id);
        dump_records++;
        if (id == known_id && known_id != NULL)
            dump_known = 1;
        if (recorded(id))
            dump_found++;
        p += 1 + sizeof(void *);
    }
}

static void end_handler(JNIEnv *env)
{
    JNIEnv *jni = NULL;
    if ((*g_jvm)->GetEnv(g_jvm, (void **)&jni, JNI_VERSION_1_2) != JNI_OK || jni != env ||
        (*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
        say("FAIL JNI GetEnv or PushLocalFrame in the End handler");
    } else {
        /* Through the system class loader: FindClass here would use the loader of the
         * native frame on top (Class.forName's), which cannot see the application. Every
         * call that can throw is checked before the next (tests run under -Xcheck:jni). */
        jclass c = NULL, lc = (*jni)->FindClass(jni, "java/lang/ClassLoader");
        jmethodID gs = lc ? (*jni)->GetStaticMethodID(jni, lc, "getSystemClassLoader",
                                                     "()Ljava/lang/ClassLoader;") : NULL;
        jmethodID lm = lc ? (*jni)->GetMethodID(jni, lc, "loadClass",
                                               "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
        jobject loader = gs ? (*jni)->CallStaticObjectMethod(jni, lc, gs) : NULL;
        jstring cn = (*jni)->ExceptionCheck(jni) ? NULL : (*jni)->NewStringUTF(jni, "MultiWork");
        if (loader != NULL && lm != NULL && cn != NULL)
            c = (jclass)(*jni)->CallObjectMethod(jni, loader, lm, cn);
        if ((*jni)->ExceptionCheck(jni))
            c = NULL;
        jfieldID f = c ? (*jni)->GetStaticFieldID(jni, c, "KNOWN", "LMultiTarget;") : NULL;
        jobject o = f ? (*jni)->GetStaticObjectField(jni, c, f) : NULL;
        if (o == NULL)
            say("FAIL MultiWork.KNOWN not found through JNI");
        else
            known_id = jvmpi->jobject2jobjectID(o);
        (*jni)->ExceptionClear(jni);
        (*jni)->PopLocalFrame(jni, NULL);
    }
    say("known id=%p", (void *)known_id);
    say("tls main mine=%d", tls_check_at(env, "end"));
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    int distinct = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nallocs + nreceivers; i++) {
        jobjectID id = i < nallocs ? allocs[i].id : receivers[i - nallocs].id;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = (j < nallocs ? allocs[j].id : receivers[j - nallocs].id) == id;
        distinct += !seen;
    }
    pthread_mutex_unlock(&mu);
    say("dump level=0 rc=%d records=%d known=%d found=%d of %d", (int)rc, dump_records,
        dump_known, dump_found, distinct);
    if (want_dumps) {
        long len[4];
        jint drc[4];
        JVMPI_HeapDumpArg l1 = {JVMPI_DUMP_LEVEL_1};
        last_dump_len = -1;
        drc[0] = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &l1);
        len[0] = last_dump_len, last_dump_len = -1;
        drc[1] = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL); /* level 2 */
        len[1] = last_dump_len, last_dump_len = -1;
        jvmpi->DisableGC();
        drc[2] = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, known_id);
        jvmpi->EnableGC();
        len[2] = last_dump_len, last_dump_len = -1;
        drc[3] = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
        len[3] = last_dump_len;
        say("dumps heap1 rc=%d bytes=%ld heap2 rc=%d bytes=%ld object rc=%d bytes=%ld "
            "monitor rc=%d bytes=%ld", (int)drc[0], len[0], (int)drc[1], len[1], (int)drc[2],
            len[2], (int)drc[3], len[3]);
    }
    if (want_gc) {
        jvmpi->RunGC();
        say("RunGC returned");
    }
    /* Copies: thread_name() takes the lock. */
    struct rec a[MAXREC], r[MAXREC];
    pthread_mutex_lock(&mu);
    int na = nallocs, nr = nreceivers;
    memcpy(a, allocs, sizeof a);
    memcpy(r, receivers, sizeof r);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < na; i++)
        say("target alloc id=%p thread=%s", (void *)a[i].id, thread_name(a[i].env));
    for (int i = 0; i < nr; i++)
        say("target receiver id=%p thread=%s", (void *)r[i].id, thread_name(r[i].env));
    say("end targets_allocated=%d mark_entry2=%d mark_entry=%ld", na, nr, mark_entries);
}

/* ---- events ---- */
static const char *const names[64] = {
    [JVMPI_EVENT_METHOD_ENTRY] = "METHOD_ENTRY", [JVMPI_EVENT_METHOD_ENTRY2] = "METHOD_ENTRY2",
    [JVMPI_EVENT_OBJECT_ALLOC] = "OBJECT_ALLOC", [JVMPI_EVENT_THREAD_START] = "THREAD_START",
    [JVMPI_EVENT_THREAD_END] = "THREAD_END", [JVMPI_EVENT_CLASS_LOAD] = "CLASS_LOAD",
    [JVMPI_EVENT_JVM_INIT_DONE] = "JVM_INIT_DONE", [JVMPI_EVENT_JVM_SHUT_DOWN] = "JVM_SHUT_DOWN",
    [JVMPI_EVENT_HEAP_DUMP] = "HEAP_DUMP", [JVMPI_EVENT_OBJECT_DUMP] = "OBJECT_DUMP",
    [JVMPI_EVENT_MONITOR_DUMP] = "MONITOR_DUMP",
    [JVMPI_EVENT_MONITOR_CONTENDED_ENTER] = "MONITOR_CONTENDED_ENTER",
    [JVMPI_EVENT_MONITOR_CONTENDED_ENTERED] = "MONITOR_CONTENDED_ENTERED",
    [JVMPI_EVENT_MONITOR_CONTENDED_EXIT] = "MONITOR_CONTENDED_EXIT",
    [JVMPI_EVENT_MONITOR_WAIT] = "MONITOR_WAIT", [JVMPI_EVENT_MONITOR_WAITED] = "MONITOR_WAITED",
    [JVMPI_EVENT_GC_START] = "GC_START", [JVMPI_EVENT_GC_FINISH] = "GC_FINISH",
    [JVMPI_EVENT_OBJECT_FREE] = "OBJECT_FREE",
};

static void notify(JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    if (t < 0 || t >= 64 || (!enabled[t] && !requested)) {
        if (__sync_add_and_fetch(&unexpected, 1) <= 5)
            say("FAIL event %d (%s) was never enabled", t, t >= 0 && t < 64 && names[t] ? names[t] : "?");
        return;
    }
    __sync_add_and_fetch(&counts[t], 1);
    switch (t) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)";
        pthread_mutex_lock(&mu);
        if (nthr < MAXTHR) {
            thr[nthr].env = ev->u.thread_start.thread_env_id;
            thr[nthr].id = ev->u.thread_start.thread_id;
            snprintf(thr[nthr].name, sizeof thr[nthr].name, "%s", n);
            nthr++;
        }
        pthread_mutex_unlock(&mu);
        tls_set(ev->u.thread_start.thread_env_id);
        if (strcmp(n, "main") == 0 || strcmp(n, "multi-worker") == 0)
            say("thread name=%s env=%p id=%p", n, (void *)ev->u.thread_start.thread_env_id,
                (void *)ev->u.thread_start.thread_id);
        break;
    }
    case JVMPI_EVENT_THREAD_END: {
        int mine = tls_check_at(ev->env_id, "THREAD_END");
        const char *n = thread_name(ev->env_id);
        if (strcmp(n, "multi-worker") == 0 || strcmp(n, "main") == 0)
            say("tls end thread=%s mine=%d", n, mine);
        jvmpi->SetThreadLocalStorage(ev->env_id, NULL);
        break;
    }
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *n = ev->u.class_load.class_name ? ev->u.class_load.class_name : "";
        if (strcmp(n, "MultiTarget") == 0) {
            target_class = ev->u.class_load.class_id;
            for (int i = 0; i < ev->u.class_load.num_methods && nmark < MAXMARK; i++)
                if (strcmp(ev->u.class_load.methods[i].method_name, "mark") == 0)
                    mark_ids[nmark++] = ev->u.class_load.methods[i].method_id;
            say("class MultiTarget id=%p mark_methods=%d", (void *)target_class, nmark);
        } else if (strcmp(n, "MultiWork$End") == 0)
            end_handler(ev->env_id);
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (ev->env_id != NULL)
            tls_check_at(ev->env_id, "OBJECT_ALLOC");
        if (target_class != NULL && ev->u.obj_alloc.class_id == target_class &&
            ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT)
            add(allocs, &nallocs, ev->u.obj_alloc.obj_id, ev->env_id);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        tls_check_at(ev->env_id, "METHOD_ENTRY");
        if (is_mark(ev->u.method.method_id))
            __sync_add_and_fetch(&mark_entries, 1);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        tls_check_at(ev->env_id, "METHOD_ENTRY2");
        if (is_mark(ev->u.method_entry2.method_id))
            add(receivers, &nreceivers, ev->u.method_entry2.obj_id, ev->env_id);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        last_dump_len = ev->u.object_dump.data_len;
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        last_dump_len = (long)(ev->u.monitor_dump.end - ev->u.monitor_dump.begin);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED: case JVMPI_EVENT_GC_START: case JVMPI_EVENT_GC_FINISH:
    case JVMPI_EVENT_OBJECT_FREE:
        break; /* counted above; OBJECT_FREE handlers must not block or allocate */
    case JVMPI_EVENT_JVM_INIT_DONE:
        say("JVM_INIT_DONE");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        say("summary alloc=%ld entry=%ld entry2=%ld thread_start=%ld thread_end=%ld class_load=%ld "
            "heap_dump=%ld mon_enter=%ld mon_entered=%ld mon_exit=%ld mon_wait=%ld mon_waited=%ld "
            "gc_start=%ld gc_finish=%ld obj_free=%ld "
            "unexpected=%ld tls_checks=%ld tls_wrong=%ld tls_unset=%ld tls_preset=%ld",
            counts[JVMPI_EVENT_OBJECT_ALLOC], counts[JVMPI_EVENT_METHOD_ENTRY],
            counts[JVMPI_EVENT_METHOD_ENTRY2], counts[JVMPI_EVENT_THREAD_START],
            counts[JVMPI_EVENT_THREAD_END], counts[JVMPI_EVENT_CLASS_LOAD],
            counts[JVMPI_EVENT_HEAP_DUMP], counts[JVMPI_EVENT_MONITOR_CONTENDED_ENTER],
            counts[JVMPI_EVENT_MONITOR_CONTENDED_ENTERED], counts[JVMPI_EVENT_MONITOR_CONTENDED_EXIT],
            counts[JVMPI_EVENT_MONITOR_WAIT], counts[JVMPI_EVENT_MONITOR_WAITED],
            counts[JVMPI_EVENT_GC_START], counts[JVMPI_EVENT_GC_FINISH],
            counts[JVMPI_EVENT_OBJECT_FREE], unexpected, tls_checks, tls_wrong, tls_unset, tls_preset);
        break;
    }
}

static void enable(jint t)
{
    jint rc = jvmpi->EnableEvent(t, NULL);
    if (rc == JVMPI_SUCCESS)
        enabled[t] = 1;
    say("enable %s rc=%d", names[t], (int)rc);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)reserved;
    g_jvm = jvm;
    int want_alloc = 0, want_entry = 0, want_entry2 = 0, want_mon = 0;
    char opts[512];
    snprintf(opts, sizeof opts, "%s", options ? options : "");
    for (char *save = NULL, *w = strtok_r(opts, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strncmp(w, "name=", 5) == 0)
            snprintf(g_name, sizeof g_name, "%s", w + 5);
        else if (strcmp(w, "alloc") == 0)
            want_alloc = 1;
        else if (strcmp(w, "entry") == 0)
            want_entry = 1;
        else if (strcmp(w, "entry2") == 0)
            want_entry2 = 1;
        else if (strcmp(w, "mon") == 0)
            want_mon = 1;
        else if (strcmp(w, "gc") == 0)
            want_gc = 1;
        else if (strcmp(w, "dumps") == 0)
            want_dumps = 1;
    }
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        say("FAIL GetEnv(JVMPI_VERSION_1) failed");
        return JNI_ERR;
    }
    say("onload options=[%s] self=%p interface=%p", options ? options : "", (void *)g_name,
        (void *)jvmpi);
    jvmpi->NotifyEvent = notify;
    enable(JVMPI_EVENT_THREAD_START);
    enable(JVMPI_EVENT_THREAD_END);
    enable(JVMPI_EVENT_CLASS_LOAD);
    enable(JVMPI_EVENT_JVM_INIT_DONE);
    enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    if (want_alloc)
        enable(JVMPI_EVENT_OBJECT_ALLOC);
    if (want_entry)
        enable(JVMPI_EVENT_METHOD_ENTRY);
    if (want_entry2)
        enable(JVMPI_EVENT_METHOD_ENTRY2);
    if (want_mon) {
        enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTER);
        enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED);
        enable(JVMPI_EVENT_MONITOR_CONTENDED_EXIT);
        enable(JVMPI_EVENT_MONITOR_WAIT);
        enable(JVMPI_EVENT_MONITOR_WAITED);
    }
    if (want_gc) {
        enable(JVMPI_EVENT_GC_START);
        enable(JVMPI_EVENT_GC_FINISH);
        enable(JVMPI_EVENT_OBJECT_FREE);
    }
    return JNI_OK;
}
