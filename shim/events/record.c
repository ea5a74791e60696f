/* record.c — record=PATH: every event delivered to an agent and every JVMPI call it made,
 * written to a file as the run goes, for jvmpitrace (tools/jvmpitrace/) to print, check
 * against the JVMPI contract and compare between runs.
 *
 * The per-event path takes no lock and does no malloc. Each thread writes its records into
 * a buffer of its own (one per recording agent), as a global sequence number (one atomic
 * add), a code and the fields of core/recfmt.h, and publishes the new end of the buffer
 * with a release store. A full buffer is pushed onto a lock-free queue and the thread goes
 * on in its spare one, which the writer thread gives back once it has written the full one.
 * The writer thread, the only one that touches the file, writes queued buffers as chunks,
 * and every RECORD_SCAN_MS what the threads' current buffers hold so far, so that a killed
 * run leaves at most that much unwritten, and a thread that records rarely is not held back.
 *
 * Memory is bounded: buffers come from a budget (64 MB, JVMPISHIM_RECORD_BUFFER_MB). When a
 * slow or blocked disk lets the queue fill the budget, a thread that needs a buffer finds
 * none: it drops its records and counts them, and its next record that fits is preceded by
 * a LOST record with the count and where the gap begins; what no later record of the thread
 * can tell (it ended, or the run did, while it was dropping) the writer writes at the end as
 * DROPPED records of its own, and the end block has the total. The program never waits for
 * the disk. At exit (atexit) the writer writes what is left and the end block, which says
 * how the run ended; a run that is killed or crashes leaves no end block, and the file is
 * valid up to its last whole chunk.
 *
 * Names: the first time a recording uses a method id, or the class id of an OBJECT_ALLOC,
 * the recording thread names it in a METHOD_NAME or CLASS_NAME record (JVMTI, once per id:
 * a per-thread cache in front of a set per file under names_lock, a leaf); each thread's
 * stream starts with a THREAD_NAME. So jvmpitrace speaks in names even when the agent
 * enabled no CLASS_LOAD or THREAD_START.
 */
#include "core/dumpcheck.h"
#include "core/recfmt.h"
#include "events/record.h"

#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#define RECORD_BUF_DATA (64 * 1024)     /* a thread's buffer */
#define RECORD_SCAN_MS 100              /* partial buffers written at least this often */
#define RECORD_DUMP_INLINE_MAX (16u << 20) /* larger dumps: digest and summary only */
#define RECORD_EXIT_STALL_S 10          /* at exit, give up on a writer stuck this long */
#define MCACHE 256
#define CCACHE 64

bool record_on[SHIM_MAX_INSTANCES];

/* ---- buffers and streams ---- */

struct rslot;

struct rbuf {
    struct rbuf *next;          /* queue link */
    struct rslot *owner;
    int slot;
    bool big;                   /* made for one large record: freed once written */
    uint64_t stream_id, gen;
    void *env;                  /* the thread's JNIEnv when the buffer began (delta base) */
    uint64_t tid;
    size_t cap;
    _Atomic size_t pos;         /* bytes of whole records (the producer's release store) */
    size_t flushed;             /* bytes written to the file (writer only) */
    unsigned char data[];
};

/* One thread's recording for one agent. */
struct rslot {
    _Atomic(struct rbuf *) cur;     /* being filled; read by the writer for partial writes */
    _Atomic(struct rbuf *) spare;   /* given back by the writer */
    struct rec_enc enc;
    /* Written by the owning thread only; the writer reads them at the end (relaxed). */
    _Atomic uint64_t stream_id;     /* 0: nothing recorded yet since the thread claimed it */
    uint64_t gen;                   /* of the last buffer begun */
    void *_Atomic env;              /* the JNIEnv this stream last said it runs as */
    _Atomic uint64_t lost;          /* dropped since the last record that fitted */
    _Atomic uint64_t lost_after;    /* the sequence number before the first of them */
    _Atomic uint64_t nrec, nlost;   /* totals, for the end block */
    uintptr_t mcache[MCACHE];       /* method ids this thread knows were named */
    uintptr_t ccache[CCACHE];       /* class ids likewise */
    /* Writer only, on a line of its own. */
    _Alignas(64) uint64_t written_gen;
};

struct rstream {
    struct rstream *next;       /* all streams, never freed */
    _Atomic int owned;
    uint64_t tid;
    struct rslot s[SHIM_MAX_INSTANCES];
};

static _Atomic(struct rstream *) streams;
static _Thread_local struct rstream *tl_rs;
static pthread_key_t rs_key;
static pthread_once_t rs_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_seq = 1, next_stream = 1;
static _Atomic size_t mem_used;
static size_t mem_budget = (size_t)64 << 20;

/* Full buffers, newest first (a Treiber stack: many pushers, one popper taking all). */
static _Atomic(struct rbuf *) queue;
static sem_t wake;
static _Atomic int writer_sleeping, closing, writer_done;
static pthread_t writer;
static bool writer_started;

/* ---- per file ---- */

struct idset {
    uint64_t *keys;
    size_t cap, n;
};

struct cinfo { /* what a dump's CLASS_DUMP length needs, from the CLASS_LOADs recorded */
    uint64_t id;
    int nif, nst;
    char *types;
    UT_hash_handle hh;
};

static struct recfile {
    char *path;
    int fd;
    _Atomic uint64_t bytes;
    _Atomic uint64_t nstreams;  /* threads that recorded for this file */
    pthread_mutex_t names_lock; /* leaf: the sets and the class table */
    struct idset methods, classes;
    struct cinfo *cinfo;
    char jvm[4][160];           /* java.vm.name, version, vendor, info */
    _Atomic int jvm_claimed, jvm_ready; /* read once, by record_open or a first thread */
    bool header_written;        /* writer only */
    time_t started;
    _Atomic bool ready;         /* set up by record_open: the writer may open it */
    bool opened;                /* writer only */
} files[SHIM_MAX_INSTANCES];

static _Atomic int pexit_called;
static _Atomic jint pexit_code;
static jclass (*class_ref_fn)(JNIEnv *, jobjectID);

void record_set_class_ref(jclass (*class_ref)(JNIEnv *jni, jobjectID id))
{
    class_ref_fn = class_ref;
}

/* The owner's counters: one writer, read by the writer thread at the end. */
#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
#define INC(x) ST(x, LD(x) + 1)

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct rbuf *buf_alloc(size_t data)
{
    size_t sz = sizeof(struct rbuf) + data;
    if (atomic_fetch_add(&mem_used, sz) + sz > mem_budget) {
        atomic_fetch_sub(&mem_used, sz);
        return NULL;
    }
    struct rbuf *b = malloc(sz);
    if (b == NULL) {
        atomic_fetch_sub(&mem_used, sz);
        return NULL;
    }
    b->cap = data;
    return b;
}

static void buf_free(struct rbuf *b)
{
    atomic_fetch_sub(&mem_used, sizeof(struct rbuf) + b->cap);
    free(b);
}

static void queue_push(struct rbuf *b)
{
    struct rbuf *head = atomic_load(&queue);
    do
        b->next = head;
    while (!atomic_compare_exchange_weak(&queue, &head, b));
    if (atomic_exchange(&writer_sleeping, 0))
        sem_post(&wake);
}

/* Losses no LOST record told (the thread ended, or the run did, while it was dropping):
 * the writer writes them as DROPPED records in its own stream at the end. */
struct dropped {
    struct dropped *next;
    int slot;
    void *env;
    uint64_t stream, count, after;
};
static _Atomic(struct dropped *) dropped_list;

static void note_dropped(int slot, struct rslot *ss)
{
    struct dropped *d = malloc(sizeof *d);
    if (d == NULL)
        return; /* the end block's total still counts them */
    *d = (struct dropped){.slot = slot, .env = LD(ss->env), .stream = LD(ss->stream_id), .count = LD(ss->lost),
                          .after = LD(ss->lost_after)};
    struct dropped *head = atomic_load(&dropped_list);
    do
        d->next = head;
    while (!atomic_compare_exchange_weak(&dropped_list, &head, d));
}

static void rs_release(void *p)
{
    struct rstream *rs = p;
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct rslot *ss = &rs->s[s];
        if (LD(ss->lost) > 0)
            note_dropped(s, ss);
        struct rbuf *b = atomic_exchange(&ss->cur, NULL);
        if (b != NULL)
            queue_push(b);
        struct rbuf *sp = atomic_exchange(&ss->spare, NULL);
        if (sp != NULL)
            buf_free(sp);
        ST(ss->stream_id, 0);
        ST(ss->lost, 0);
    }
    tl_rs = NULL;
    atomic_store(&rs->owned, 0);
}

static void rs_key_init(void)
{
    pthread_key_create(&rs_key, rs_release);
}

static struct rstream *rs_claim(void)
{
    pthread_once(&rs_once, rs_key_init);
    struct rstream *rs;
    for (rs = atomic_load(&streams); rs != NULL; rs = rs->next) {
        int free_ = 0;
        if (atomic_load(&rs->owned) == 0 && atomic_compare_exchange_strong(&rs->owned, &free_, 1))
            break;
    }
    if (rs == NULL) {
        rs = calloc(1, sizeof *rs);
        if (rs == NULL)
            return NULL;
        atomic_store(&rs->owned, 1);
        struct rstream *head = atomic_load(&streams);
        do
            rs->next = head;
        while (!atomic_compare_exchange_weak(&streams, &head, rs));
    }
    rs->tid = (uint64_t)syscall(SYS_gettid);
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        memset(rs->s[s].mcache, 0, sizeof rs->s[s].mcache);
        memset(rs->s[s].ccache, 0, sizeof rs->s[s].ccache);
        ST(rs->s[s].env, NULL);
    }
    tl_rs = rs;
    pthread_setspecific(rs_key, rs);
    return rs;
}

/* Hand the current buffer to the writer and begin another with room for need bytes. */
static struct rbuf *swap_buf(struct rstream *rs, struct rslot *ss, int slot, size_t need)
{
    struct rbuf *old = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    if (old != NULL) {
        atomic_store_explicit(&ss->cur, NULL, memory_order_release);
        queue_push(old);
    }
    size_t size = need > RECORD_BUF_DATA ? need : RECORD_BUF_DATA;
    struct rbuf *b = size == RECORD_BUF_DATA ? atomic_exchange(&ss->spare, NULL) : NULL;
    if (b == NULL)
        b = buf_alloc(size);
    if (b == NULL)
        return NULL;
    b->owner = ss;
    b->slot = slot;
    b->big = size > RECORD_BUF_DATA;
    b->stream_id = LD(ss->stream_id);
    b->gen = ++ss->gen;
    b->env = LD(ss->env);
    b->tid = rs->tid;
    b->flushed = 0;
    atomic_store_explicit(&b->pos, 0, memory_order_relaxed);
    ss->enc = (struct rec_enc){.p = b->data, .thr = (uint64_t)(uintptr_t)b->env};
    atomic_store_explicit(&ss->cur, b, memory_order_release);
    return b;
}

/* Begin a record of at most bound bytes after its head: the thread's slot, with the code
 * and a fresh sequence number written, or NULL if it is not recorded (counted as lost).
 * The slow part: the thread's first record, a full buffer, records lost before. */
static __attribute__((noinline)) struct rslot *rec_begin_slow(int slot, int code, size_t bound)
{
    if (atomic_load_explicit(&closing, memory_order_relaxed))
        return NULL;
    struct rstream *rs = tl_rs != NULL ? tl_rs : rs_claim();
    if (rs == NULL)
        return NULL;
    struct rslot *ss = &rs->s[slot];
    if (LD(ss->stream_id) == 0) {
        ST(ss->stream_id, atomic_fetch_add(&next_stream, 1));
        atomic_fetch_add_explicit(&files[slot].nstreams, 1, memory_order_relaxed);
    }
    size_t need = bound + 3 * REC_VARINT_MAX + (LD(ss->lost) ? 3 * REC_VARINT_MAX : 0);
    struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    if (b == NULL || b->big || b->cap - (size_t)(ss->enc.p - b->data) < need) {
        b = swap_buf(rs, ss, slot, need);
        if (b == NULL) {
            if (LD(ss->lost) == 0) /* where the gap begins: no record after this one is sure */
                ST(ss->lost_after, atomic_load_explicit(&next_seq, memory_order_relaxed) - 1);
            INC(ss->lost);
            INC(ss->nlost);
            return NULL;
        }
    }
    if (LD(ss->lost) > 0) {
        rec_put_head(&ss->enc, REC_LOST, atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed));
        rec_put_u(&ss->enc, LD(ss->lost));
        rec_put_u(&ss->enc, LD(ss->lost_after));
        ST(ss->lost, 0);
    }
    rec_put_head(&ss->enc, code, atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed));
    return ss;
}

static inline struct rslot *rec_begin(int slot, int code, size_t bound)
{
    struct rstream *rs = tl_rs;
    if (__builtin_expect(rs != NULL && !atomic_load_explicit(&closing, memory_order_relaxed), 1)) {
        struct rslot *ss = &rs->s[slot];
        struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
        if (__builtin_expect(b != NULL && LD(ss->lost) == 0 && !b->big &&
                                 b->cap - (size_t)(ss->enc.p - b->data) >= bound + 3 * REC_VARINT_MAX, 1)) {
            rec_put_head(&ss->enc, code, atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed));
            return ss;
        }
    }
    return rec_begin_slow(slot, code, bound);
}

static inline void rec_end(struct rslot *ss)
{
    struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    atomic_store_explicit(&b->pos, (size_t)(ss->enc.p - b->data), memory_order_release);
    INC(ss->nrec);
    if (b->big) { /* one large record: to the writer now, not kept as the current buffer */
        atomic_store_explicit(&ss->cur, NULL, memory_order_release);
        queue_push(b);
    }
}

/* ---- names ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* Insert key; true if it was not there. Caller holds names_lock. */
static bool idset_add(struct idset *s, uint64_t key)
{
    if ((s->n + 1) * 4 >= s->cap * 3) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        uint64_t *k = calloc(cap, sizeof *k);
        if (k == NULL)
            return false;
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i] != 0)
                for (size_t j = mix(s->keys[i]) & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (k[j] == 0) {
                        k[j] = s->keys[i];
                        break;
                    }
        free(s->keys);
        s->keys = k;
        s->cap = cap;
    }
    for (size_t j = mix(key) & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
        if (s->keys[j] == key)
            return false;
        if (s->keys[j] == 0) {
            s->keys[j] = key;
            s->n++;
            return true;
        }
    }
}

/* The first use of an id in this file, by any thread? */
static bool first_use(int slot, struct idset *set, uint64_t id)
{
    pthread_mutex_lock(&files[slot].names_lock);
    bool fresh = idset_add(set, id);
    pthread_mutex_unlock(&files[slot].names_lock);
    return fresh;
}

/* "Ljava/lang/String;" -> "java.lang.String", "[Ljava/lang/String;" -> "[Ljava.lang.String;"
 * (Class.getName()'s form, which CLASS_LOAD's names have too). */
static void external_name(char *sig)
{
    size_t n = strlen(sig);
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        memmove(sig, sig + 1, n - 2);
        sig[n - 2] = '\0';
    }
    for (char *p = sig; *p; p++)
        if (*p == '/')
            *p = '.';
}

static void dealloc(void *p)
{
    if (p != NULL)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, p);
}

static __attribute__((noinline)) void name_method_slow(int slot, jmethodID m)
{
    if (m == NULL || g_shim.jvmti == NULL)
        return;
    struct rstream *rs = tl_rs;
    uintptr_t *c = rs != NULL ? &rs->s[slot].mcache[((uintptr_t)m >> 3) & (MCACHE - 1)] : NULL;
    if (c != NULL && *c == (uintptr_t)m)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return; /* JVMTI answers only threads the JVM knows: a later use names it */
    if (c != NULL)
        *c = (uintptr_t)m;
    if (!first_use(slot, &files[slot].methods, (uint64_t)(uintptr_t)m))
        return;
    jvmtiEnv *j = g_shim.jvmti;
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass k = NULL;
    if (jvmti_ok_at((*j)->GetMethodName(j, m, &name, &sig, NULL), LOG_DEBUG,
                    "naming a method for the recording (GetMethodName)") &&
        jvmti_ok_at((*j)->GetMethodDeclaringClass(j, m, &k), LOG_DEBUG,
                    "naming a method for the recording (GetMethodDeclaringClass)") &&
        jvmti_ok_at((*j)->GetClassSignature(j, k, &csig, NULL), LOG_DEBUG,
                    "naming a method for the recording (GetClassSignature)")) {
        external_name(csig);
        struct rslot *ss = rec_begin(slot, REC_METHOD_NAME,
                                     REC_VARINT_MAX + rec_s_bound(csig) + rec_s_bound(name) + rec_s_bound(sig));
        if (ss != NULL) {
            rec_put_m(&ss->enc, m);
            rec_put_s(&ss->enc, csig);
            rec_put_s(&ss->enc, name);
            rec_put_s(&ss->enc, sig);
            rec_end(ss);
        }
    }
    if (k != NULL)
        (*jni)->DeleteLocalRef(jni, k);
    dealloc(name);
    dealloc(sig);
    dealloc(csig);
}

static inline void name_method(int slot, jmethodID m)
{
    struct rstream *rs = tl_rs;
    if (rs == NULL || rs->s[slot].mcache[((uintptr_t)m >> 3) & (MCACHE - 1)] != (uintptr_t)m)
        name_method_slow(slot, m);
}

static void name_class(int slot, jobjectID id)
{
    if (id == NULL || class_ref_fn == NULL || g_shim.jvmti == NULL)
        return;
    struct rstream *rs = tl_rs;
    uintptr_t *c = rs != NULL ? &rs->s[slot].ccache[((uintptr_t)id >> 3) & (CCACHE - 1)] : NULL;
    if (c != NULL && *c == (uintptr_t)id)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return;
    if (c != NULL)
        *c = (uintptr_t)id;
    if (!first_use(slot, &files[slot].classes, (uint64_t)(uintptr_t)id))
        return;
    jclass k = class_ref_fn(jni, id);
    char *csig = NULL;
    if (k != NULL && jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, k, &csig, NULL),
                                 LOG_DEBUG, "naming a class for the recording")) {
        external_name(csig);
        struct rslot *ss = rec_begin(slot, REC_CLASS_NAME, REC_VARINT_MAX + rec_s_bound(csig));
        if (ss != NULL) {
            rec_put_o(&ss->enc, id);
            rec_put_s(&ss->enc, csig);
            rec_end(ss);
        }
    }
    if (k != NULL)
        (*jni)->DeleteLocalRef(jni, k);
    dealloc(csig);
}

static void get_prop(struct recfile *f, int i, const char *name)
{
    char *v = NULL;
    if (!jvmti_ok_at((*g_shim.jvmti)->GetSystemProperty(g_shim.jvmti, name, &v), LOG_DEBUG,
                     "reading a JVM property for the recording's header"))
        return;
    snprintf(f->jvm[i], sizeof f->jvm[i], "%s", v);
    dealloc(v);
}

/* The JVM's name, version, vendor and mode for the header: at Agent_OnLoad, or (an attach,
 * where JVMTI comes later) on the first thread that records. The writer writes the header
 * before the file's first chunk, and waits for nothing: without them it has no jvm_ lines. */
static void read_jvm(struct recfile *f)
{
    if (g_shim.jvmti == NULL || atomic_load(&f->jvm_ready) || atomic_exchange(&f->jvm_claimed, 1))
        return;
    get_prop(f, 0, "java.vm.name");
    get_prop(f, 1, "java.vm.version");
    get_prop(f, 2, "java.vm.vendor");
    get_prop(f, 3, "java.vm.info");
    atomic_store_explicit(&f->jvm_ready, 1, memory_order_release);
}

/* The stream's first record on a thread (and a new JNIEnv): which thread this is. */
static void name_thread(int slot, JNIEnv *jni)
{
    if (jni != NULL)
        read_jvm(&files[slot]);
    struct rslot *ss = rec_begin(slot, REC_THREAD_ENV, REC_VARINT_MAX);
    if (ss == NULL)
        return;
    rec_put_t(&ss->enc, jni);
    ST(ss->env, jni);
    rec_end(ss);
    if (jni == NULL || g_shim.jvmti == NULL)
        return;
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if (!jvmti_ok_at((*g_shim.jvmti)->GetThreadInfo(g_shim.jvmti, NULL, &ti), LOG_DEBUG,
                     "naming a thread for the recording"))
        return;
    jvmtiThreadGroupInfo gi;
    memset(&gi, 0, sizeof gi);
    if (ti.thread_group != NULL &&
        !jvmti_ok_at((*g_shim.jvmti)->GetThreadGroupInfo(g_shim.jvmti, ti.thread_group, &gi),
                     LOG_DEBUG, "naming a thread's group for the recording"))
        gi.name = NULL;
    ss = rec_begin(slot, REC_THREAD_NAME, REC_VARINT_MAX + rec_s_bound(ti.name) + rec_s_bound(gi.name));
    if (ss != NULL) {
        rec_put_t(&ss->enc, jni);
        rec_put_s(&ss->enc, ti.name);
        rec_put_s(&ss->enc, gi.name);
        rec_end(ss);
    }
    if (gi.parent != NULL)
        (*jni)->DeleteLocalRef(jni, gi.parent);
    if (ti.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (ti.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
    dealloc(ti.name);
    dealloc(gi.name);
}

/* Before a thread's first record for this file, and when its JNIEnv changed (a native
 * thread of the agent attached): say which thread the stream is. */
static inline void stream_check(int slot)
{
    struct rstream *rs = tl_rs;
    struct rslot *ss = rs != NULL ? &rs->s[slot] : NULL;
    if (ss != NULL && LD(ss->stream_id) != 0 && LD(ss->env) != NULL)
        return; /* a JNIEnv stays the thread's for its life */
    JNIEnv *jni = shim_current_jni();
    if (ss == NULL || LD(ss->stream_id) == 0 || LD(ss->env) != jni)
        name_thread(slot, jni);
}

/* ---- dumps ---- */

/* What a walk over a large dump needs: its summary, and the statics' types of the class
 * it reads now, copied out of the table so that names_lock is held per lookup only (other
 * threads name their ids meanwhile). The walk reads them before its next lookup. */
struct summing {
    struct rec_dump *d;
    struct recfile *f;
    char *types;
    size_t cap;
};

static bool cinfo_lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    struct summing *sm = ctx;
    bool found = false;
    pthread_mutex_lock(&sm->f->names_lock);
    struct cinfo *c = NULL;
    HASH_FIND(hh, sm->f->cinfo, &id, sizeof id, c);
    if (c != NULL && (size_t)c->nst < sm->cap) {
        memcpy(sm->types, c->types, (size_t)c->nst + 1);
        out->num_interfaces = c->nif;
        out->n_statics = c->nst;
        out->static_types = sm->types;
        found = true;
    } else if (c != NULL) {
        char *t = realloc(sm->types, (size_t)c->nst + 1);
        if (t != NULL) {
            sm->types = t;
            sm->cap = (size_t)c->nst + 1;
            memcpy(sm->types, c->types, (size_t)c->nst + 1);
            out->num_interfaces = c->nif;
            out->n_statics = c->nst;
            out->static_types = sm->types;
            found = true;
        }
    }
    pthread_mutex_unlock(&sm->f->names_lock);
    return found;
}

static void cinfo_note(int slot, const JVMPI_Event *ev)
{
    struct recfile *f = &files[slot];
    uint64_t id = (uint64_t)(uintptr_t)ev->u.class_load.class_id;
    jint n = ev->u.class_load.num_static_fields;
    char *types = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (types == NULL)
        return;
    for (jint i = 0; i < n; i++) {
        const char *s = ev->u.class_load.statics ? ev->u.class_load.statics[i].field_signature : NULL;
        types[i] = s != NULL && (s[0] == '[' || s[0] == 'L') ? 'L' : s != NULL ? s[0] : 'L';
    }
    types[n > 0 ? n : 0] = '\0';
    pthread_mutex_lock(&f->names_lock);
    struct cinfo *c = NULL;
    HASH_FIND(hh, f->cinfo, &id, sizeof id, c);
    if (c == NULL && (c = calloc(1, sizeof *c)) != NULL) {
        c->id = id;
        HASH_ADD(hh, f->cinfo, id, sizeof c->id, c);
    }
    if (c != NULL) {
        free(c->types);
        c->types = types;
        c->nif = ev->u.class_load.num_interfaces;
        c->nst = n > 0 ? n : 0;
        types = NULL;
    }
    pthread_mutex_unlock(&f->names_lock);
    free(types);
}

static void sum_record(void *ctx, const struct dump_record *r)
{
    struct rec_dump *d = ((struct summing *)ctx)->d;
    for (int i = 0; i < d->nsummary; i++)
        if (d->summary[i].type == (uint32_t)r->type) {
            d->summary[i].count++;
            return;
        }
    if (d->nsummary < REC_SUMMARY_MAX) {
        d->summary[d->nsummary].type = (uint32_t)r->type;
        d->summary[d->nsummary].count = 1;
        d->nsummary++;
    }
}

/* A dump's bytes go into the record when they are small and fit the budget; otherwise
 * their length, digest and a count of records by type (type 0x100: the walk stopped). */
static void dump_info(int slot, const JVMPI_Event *ev, struct rec_dump *d)
{
    const unsigned char *p;
    size_t len;
    rec_dump_bytes(ev, &p, &len);
    memset(d, 0, sizeof *d);
    d->length = len;
    d->digest = p != NULL ? rec_xxh64(p, len) : 0;
    d->inline_bytes = len <= RECORD_DUMP_INLINE_MAX &&
                      atomic_load(&mem_used) + len + RECORD_BUF_DATA <= mem_budget;
    if (d->inline_bytes || p == NULL)
        return;
    struct summing s = {.d = d, .f = &files[slot]};
    size_t bad = 0;
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int rc;
    if (t == JVMPI_EVENT_MONITOR_DUMP) {
        rc = dump_walk_monitor(p, len, sum_record, &s, &bad, NULL, 0);
    } else {
        rc = dump_walk_heap(p, len, t == JVMPI_EVENT_HEAP_DUMP ? ev->u.heap_dump.dump_level : 2,
                            cinfo_lookup, &s, sum_record, &s, &bad, NULL, 0);
        free(s.types);
    }
    if (rc != 0 && d->nsummary < REC_SUMMARY_MAX) {
        d->summary[d->nsummary].type = 0x100;
        d->summary[d->nsummary].count = bad;
        d->nsummary++;
    }
}

/* ---- events ---- */

static void name_event_ids(int slot, const JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
        name_method(slot, ev->u.method.method_id);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        name_method(slot, ev->u.method_entry2.method_id);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        name_method(slot, ev->u.compiled_method_load.method_id);
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        name_method(slot, ev->u.instruction.method_id);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT || ev->u.obj_alloc.is_array == JVMPI_CLASS)
            name_class(slot, ev->u.obj_alloc.class_id);
        break;
    default:
        break;
    }
}

void record_event(struct instance *inst, const JVMPI_Event *ev)
{
    int slot = inst->slot;
    /* Method events, the most frequent by far, on a thread that has recorded before. */
    jint type = ev->event_type;
    struct rstream *rs = tl_rs;
    if (type >= JVMPI_EVENT_METHOD_ENTRY && type <= JVMPI_EVENT_METHOD_EXIT && rs != NULL &&
        LD(rs->s[slot].stream_id) != 0 && LD(rs->s[slot].env) != NULL) {
        jmethodID m = type == JVMPI_EVENT_METHOD_ENTRY2 ? ev->u.method_entry2.method_id : ev->u.method.method_id;
        name_method(slot, m);
        struct rslot *ss = rec_begin(slot, type, 3 * REC_VARINT_MAX);
        if (ss == NULL)
            return;
        rec_put_t(&ss->enc, ev->env_id);
        rec_put_m(&ss->enc, m);
        if (type == JVMPI_EVENT_METHOD_ENTRY2)
            rec_put_o(&ss->enc, ev->u.method_entry2.obj_id);
        rec_end(ss);
        return;
    }
    if (rec_event_code(type) < 0)
        return;
    stream_check(slot);
    name_event_ids(slot, ev);
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    struct rec_dump d, *dp = NULL;
    if (t == JVMPI_EVENT_HEAP_DUMP || t == JVMPI_EVENT_OBJECT_DUMP || t == JVMPI_EVENT_MONITOR_DUMP) {
        dump_info(slot, ev, &d);
        dp = &d;
    } else if (t == JVMPI_EVENT_CLASS_LOAD) {
        cinfo_note(slot, ev);
    }
    struct rslot *ss = rec_begin(slot, rec_event_code(ev->event_type), rec_event_bound(ev, dp));
    if (ss == NULL)
        return;
    rec_put_event_body(&ss->enc, ev, dp);
    rec_end(ss);
}

void record_event_done(struct instance *inst, const JVMPI_Event *ev)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (t == JVMPI_EVENT_JVM_SHUT_DOWN) { /* from here on JVMPI calls are refused or parked */
        struct rslot *ss = rec_begin(inst->slot, REC_EVENT_DONE, REC_VARINT_MAX);
        if (ss != NULL) {
            rec_put_i(&ss->enc, t);
            rec_end(ss);
        }
        return;
    }
    if (t != JVMPI_EVENT_CLASS_LOAD_HOOK)
        return;
    const unsigned char *nd = ev->u.class_load_hook.new_class_data;
    jint nl = ev->u.class_load_hook.new_class_data_len;
    bool same = nd == ev->u.class_load_hook.class_data;
    struct rslot *ss = rec_begin(inst->slot, REC_HOOK_RESULT, 3 * REC_VARINT_MAX);
    if (ss == NULL)
        return;
    rec_put_i(&ss->enc, nl);
    rec_put_u(&ss->enc, same);
    rec_put_u(&ss->enc, !same && nd != NULL && nl > 0 ? rec_xxh64(nd, (size_t)nl) : 0);
    rec_end(ss);
}

/* ---- JVMPI calls ---- */

static struct rslot *call_begin(int slot, int code, size_t bound)
{
    stream_check(slot);
    return rec_begin(slot, code, bound);
}

#define V REC_VARINT_MAX
#define CALL(fn, bound)                                                                    \
    struct rslot *ss = call_begin(inst->slot, REC_CALL + FN_##fn, (bound));                \
    if (ss == NULL)                                                                        \
        return;                                                                            \
    struct rec_enc *e __attribute__((unused)) = &ss->enc
#define RET(fn, bound)                                                                     \
    struct rslot *ss = call_begin(inst->slot, REC_RET + FN_##fn, (bound));                 \
    if (ss == NULL)                                                                        \
        return;                                                                            \
    struct rec_enc *e __attribute__((unused)) = &ss->enc
#define DONE rec_end(ss)
/* Lists longer than this are recorded as NULL with their count: a garbage count. */
#define LIST_MAX 65536

void record_call_EnableEvent(struct instance *inst, jint t, void *arg)
{
    CALL(EnableEvent, 2 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    DONE;
}
void record_ret_EnableEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(EnableEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_DisableEvent(struct instance *inst, jint t, void *arg)
{
    CALL(DisableEvent, 2 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    DONE;
}
void record_ret_DisableEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(DisableEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_RequestEvent(struct instance *inst, jint t, void *arg)
{
    jint level = t == JVMPI_EVENT_HEAP_DUMP && arg != NULL ? ((JVMPI_HeapDumpArg *)arg)->heap_dump_level : -1;
    CALL(RequestEvent, 3 * V);
    rec_put_i(e, t);
    rec_put_p(e, arg);
    rec_put_i(e, level);
    DONE;
}
void record_ret_RequestEvent(jint r, struct instance *inst, jint t, void *arg)
{
    (void)t, (void)arg;
    RET(RequestEvent, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    CALL(GetCallTrace, 3 * V);
    rec_put_p(e, trace);
    rec_put_t(e, trace != NULL ? trace->env_id : NULL);
    rec_put_i(e, depth);
    DONE;
}
void record_ret_GetCallTrace(struct instance *inst, JVMPI_CallTrace *trace, jint depth)
{
    jint n = trace != NULL ? trace->num_frames : 0;
    jint k = trace != NULL && trace->frames != NULL && n >= 0 ? (n < depth ? n : depth) : -1;
    if (k > LIST_MAX)
        k = -1;
    for (jint i = 0; i < k; i++)
        name_method(inst->slot, trace->frames[i].method_id);
    RET(GetCallTrace, V + V + (k > 0 ? (size_t)k * 2 * V : 0));
    rec_put_i(e, n);
    if (k < 0) {
        rec_put_u(e, 0);
    } else {
        rec_put_u(e, (uint64_t)k + 1);
        for (jint i = 0; i < k; i++) {
            rec_put_i(e, trace->frames[i].lineno);
            rec_put_m(e, trace->frames[i].method_id);
        }
    }
    DONE;
}
void record_call_ProfilerExit(struct instance *inst, jint code)
{
    atomic_store(&pexit_code, code);
    atomic_store(&pexit_called, 1);
    CALL(ProfilerExit, V);
    rec_put_i(e, code);
    DONE;
}
void record_ret_ProfilerExit(struct instance *inst, jint code)
{
    (void)code;
    RET(ProfilerExit, 0);
    DONE;
}
void record_call_RawMonitorCreate(struct instance *inst, char *name)
{
    CALL(RawMonitorCreate, rec_s_bound(name));
    rec_put_s(e, name);
    DONE;
}
void record_ret_RawMonitorCreate(JVMPI_RawMonitor r, struct instance *inst, char *name)
{
    (void)name;
    RET(RawMonitorCreate, V);
    rec_put_p(e, r);
    DONE;
}

#define MONITOR_FN(fn)                                                                     \
    void record_call_##fn(struct instance *inst, JVMPI_RawMonitor m)                       \
    {                                                                                      \
        CALL(fn, V);                                                                       \
        rec_put_p(e, m);                                                                   \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, JVMPI_RawMonitor m)                        \
    {                                                                                      \
        (void)m;                                                                           \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
MONITOR_FN(RawMonitorEnter)
MONITOR_FN(RawMonitorExit)
MONITOR_FN(RawMonitorNotifyAll)
MONITOR_FN(RawMonitorDestroy)

void record_call_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor m, jlong ms)
{
    CALL(RawMonitorWait, 2 * V);
    rec_put_p(e, m);
    rec_put_i(e, ms);
    DONE;
}
void record_ret_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor m, jlong ms)
{
    (void)m, (void)ms;
    RET(RawMonitorWait, 0);
    DONE;
}
void record_call_GetCurrentThreadCpuTime(struct instance *inst)
{
    CALL(GetCurrentThreadCpuTime, 0);
    DONE;
}
void record_ret_GetCurrentThreadCpuTime(jlong r, struct instance *inst)
{
    RET(GetCurrentThreadCpuTime, V);
    rec_put_i(e, r);
    DONE;
}

#define ENV_FN_V(fn)                                                                       \
    void record_call_##fn(struct instance *inst, JNIEnv *env)                              \
    {                                                                                      \
        CALL(fn, V);                                                                       \
        rec_put_t(e, env);                                                                 \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, JNIEnv *env)                               \
    {                                                                                      \
        (void)env;                                                                         \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
ENV_FN_V(SuspendThread)
ENV_FN_V(ResumeThread)

void record_call_GetThreadStatus(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadStatus, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadStatus(jint r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadStatus, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_ThreadHasRun(struct instance *inst, JNIEnv *env)
{
    CALL(ThreadHasRun, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_ThreadHasRun(jboolean r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(ThreadHasRun, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_CreateSystemThread(struct instance *inst, char *name, jint prio, void (*f)(void *))
{
    CALL(CreateSystemThread, rec_s_bound(name) + 2 * V);
    rec_put_s(e, name);
    rec_put_i(e, prio);
    rec_put_p(e, (void *)(uintptr_t)f);
    DONE;
}
void record_ret_CreateSystemThread(jint r, struct instance *inst, char *name, jint prio,
                                   void (*f)(void *))
{
    (void)name, (void)prio, (void)f;
    RET(CreateSystemThread, V);
    rec_put_i(e, r);
    DONE;
}
void record_call_SetThreadLocalStorage(struct instance *inst, JNIEnv *env, void *ptr)
{
    CALL(SetThreadLocalStorage, 2 * V);
    rec_put_t(e, env);
    rec_put_p(e, ptr);
    DONE;
}
void record_ret_SetThreadLocalStorage(struct instance *inst, JNIEnv *env, void *ptr)
{
    (void)env, (void)ptr;
    RET(SetThreadLocalStorage, 0);
    DONE;
}
void record_call_GetThreadLocalStorage(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadLocalStorage, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadLocalStorage(void *r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadLocalStorage, V);
    rec_put_p(e, r);
    DONE;
}

#define VOID_FN(fn)                                                                        \
    void record_call_##fn(struct instance *inst)                                           \
    {                                                                                      \
        CALL(fn, 0);                                                                       \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst)                                            \
    {                                                                                      \
        RET(fn, 0);                                                                        \
        DONE;                                                                              \
    }
VOID_FN(DisableGC)
VOID_FN(EnableGC)
VOID_FN(RunGC)

void record_call_GetThreadObject(struct instance *inst, JNIEnv *env)
{
    CALL(GetThreadObject, V);
    rec_put_t(e, env);
    DONE;
}
void record_ret_GetThreadObject(jobjectID r, struct instance *inst, JNIEnv *env)
{
    (void)env;
    RET(GetThreadObject, V);
    rec_put_o(e, r);
    DONE;
}
void record_call_GetMethodClass(struct instance *inst, jmethodID m)
{
    name_method(inst->slot, m);
    CALL(GetMethodClass, V);
    rec_put_m(e, m);
    DONE;
}
void record_ret_GetMethodClass(jobjectID r, struct instance *inst, jmethodID m)
{
    (void)m;
    name_class(inst->slot, r);
    RET(GetMethodClass, V);
    rec_put_o(e, r);
    DONE;
}
void record_call_jobjectID2jobject(struct instance *inst, jobjectID id)
{
    CALL(jobjectID2jobject, V);
    rec_put_o(e, id);
    DONE;
}
void record_ret_jobjectID2jobject(jobject r, struct instance *inst, jobjectID id)
{
    (void)id;
    RET(jobjectID2jobject, V);
    rec_put_p(e, r);
    DONE;
}
void record_call_jobject2jobjectID(struct instance *inst, jobject ref)
{
    CALL(jobject2jobjectID, V);
    rec_put_p(e, ref);
    DONE;
}
void record_ret_jobject2jobjectID(jobjectID r, struct instance *inst, jobject ref)
{
    (void)ref;
    RET(jobject2jobjectID, V);
    rec_put_o(e, r);
    DONE;
}

static void put_env_list(struct rec_enc *e, jint n, JNIEnv **list)
{
    if (list == NULL || n < 0 || n > LIST_MAX) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++)
        rec_put_t(e, list[i]);
}

static void put_int_list(struct rec_enc *e, jint n, const jint *list)
{
    if (list == NULL || n < 0 || n > LIST_MAX) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++)
        rec_put_i(e, list[i]);
}

static size_t list_bound(jint n) { return V + (n > 0 && n <= LIST_MAX ? (size_t)n * V : 0); }

#define THREAD_LIST_FN(fn)                                                                 \
    void record_call_##fn(struct instance *inst, jint n, JNIEnv **list, jint *results)     \
    {                                                                                      \
        (void)results;                                                                     \
        CALL(fn, V + list_bound(n));                                                       \
        rec_put_i(e, n);                                                                   \
        put_env_list(e, n, list);                                                          \
        DONE;                                                                              \
    }                                                                                      \
    void record_ret_##fn(struct instance *inst, jint n, JNIEnv **list, jint *results)      \
    {                                                                                      \
        (void)list;                                                                        \
        RET(fn, list_bound(n));                                                            \
        put_int_list(e, list != NULL ? n : -1, results);                                   \
        DONE;                                                                              \
    }
THREAD_LIST_FN(SuspendThreadList)
THREAD_LIST_FN(ResumeThreadList)

#undef CALL
#undef RET
#undef DONE
#undef V

/* ---- the writer ---- */

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Write all of iov, or give up on the file (a full disk, a closed pipe): the recording
 * then stops there and the program goes on. */
static void write_all(struct recfile *f, struct iovec *iov, int n)
{
    if (f->fd < 0)
        return;
    while (n > 0) {
        ssize_t w = writev(f->fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_error("record=%s: writing failed (%s): the recording stops here", f->path,
                      w < 0 ? strerror(errno) : "no progress");
            close(f->fd);
            f->fd = -1;
            return;
        }
        atomic_fetch_add(&f->bytes, (uint64_t)w);
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
}

static void write_block(struct recfile *f, int kind, const void *a, size_t alen, const void *b, size_t blen)
{
    unsigned char h[REC_BLOCK_HDR];
    h[0] = (unsigned char)kind;
    put_le32(h + 1, (uint32_t)(alen + blen));
    put_le32(h + 5, rec_crc32c(rec_crc32c(0, a, alen), b, blen));
    struct iovec iov[3] = {{h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
    write_all(f, iov, blen > 0 ? 3 : 2);
}

/* Bytes [from, to) of a buffer, as one chunk: stream, buffer generation, offset in the
 * buffer (a later chunk of the same buffer goes on from the decoder's state), the thread's
 * JNIEnv at the buffer's start, its OS thread id. */
static void write_header(int slot);

static void write_chunk_at(struct rbuf *b, size_t from, const unsigned char *data, size_t n)
{
    struct recfile *f = &files[b->slot];
    if (!f->header_written)
        write_header(b->slot);
    unsigned char ch[5 * REC_VARINT_MAX];
    struct rec_enc e = {.p = ch};
    rec_put_u(&e, b->stream_id);
    rec_put_u(&e, b->gen);
    rec_put_u(&e, from);
    rec_put_u(&e, (uint64_t)(uintptr_t)b->env);
    rec_put_u(&e, b->tid);
    write_block(f, REC_BLOCK_CHUNK, ch, (size_t)(e.p - ch), data, n);
}

static void write_chunk(struct rbuf *b, size_t from, size_t to)
{
    write_chunk_at(b, from, b->data + from, to - from);
}

/* A chunk of records that is a whole buffer of its own (the writer's stream). */
static void write_chunk_from(struct rbuf *b, const unsigned char *data, size_t n)
{
    write_chunk_at(b, 0, data, n);
}

/* A buffer handed over: its unwritten part, then back to its thread as the spare, or freed. */
static void write_full(struct rbuf *b)
{
    size_t pos = atomic_load_explicit(&b->pos, memory_order_acquire);
    if (pos > b->flushed)
        write_chunk(b, b->flushed, pos);
    b->owner->written_gen = b->gen;
    if (!b->big) {
        b->flushed = 0;
        atomic_store_explicit(&b->pos, 0, memory_order_relaxed);
        struct rbuf *none = NULL;
        if (atomic_compare_exchange_strong(&b->owner->spare, &none, b))
            return;
    }
    buf_free(b);
}

static void drain_queue(void)
{
    struct rbuf *list = atomic_exchange(&queue, NULL), *fifo = NULL;
    while (list != NULL) { /* newest first: reverse into the order they were handed over */
        struct rbuf *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo != NULL) {
        struct rbuf *next = fifo->next;
        write_full(fifo);
        fifo = next;
    }
}

/* What the threads' current buffers hold so far, each after its earlier buffers. */
static void scan_streams(void)
{
    for (struct rstream *rs = atomic_load(&streams); rs != NULL; rs = rs->next)
        for (int s = 0; s < g_shim.ninst && s < SHIM_MAX_INSTANCES; s++) {
            struct rslot *ss = &rs->s[s];
            struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_acquire);
            if (b == NULL || b->gen != ss->written_gen + 1)
                continue;
            size_t pos = atomic_load_explicit(&b->pos, memory_order_acquire);
            if (pos > b->flushed) {
                write_chunk(b, b->flushed, pos);
                b->flushed = pos;
            }
        }
}

static void utc_now(char *buf, size_t n, time_t t)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One "key value" line; newlines in the value become spaces. */
static size_t kv(char *buf, size_t at, size_t cap, const char *key, const char *val)
{
    if (at >= cap)
        return at;
    int n = snprintf(buf + at, cap - at, "%s %s\n", key, val != NULL ? val : "");
    if (n < 0)
        return at;
    size_t end = at + (size_t)n < cap ? at + (size_t)n : cap - 1;
    for (size_t i = at + strlen(key) + 1; i + 1 < end; i++)
        if (buf[i] == '\n' || buf[i] == '\r')
            buf[i] = ' ';
    return end;
}

static void write_header(int slot)
{
    struct recfile *f = &files[slot];
    if (f->header_written || f->fd < 0)
        return;
    f->header_written = true;
    struct instance *inst = &g_shim.inst[slot];
    const char *schema = rec_schema_text();
    size_t cap = 4096 + strlen(schema);
    char *h = malloc(cap);
    if (h == NULL)
        return;
    char num[64], when[64];
    size_t at = 0;
    at = kv(h, at, cap, "jvmpishim", "recording");
    snprintf(num, sizeof num, "%d.%d", REC_FORMAT_MAJOR, REC_FORMAT_MINOR);
    at = kv(h, at, cap, "format", num);
    at = kv(h, at, cap, "agent", inst->opts.legacy);
    at = kv(h, at, cap, "agent_options", inst->opts.agent_options != NULL ? inst->opts.agent_options : "(none)");
    snprintf(num, sizeof num, "%d", slot);
    at = kv(h, at, cap, "agent_slot", num);
    snprintf(num, sizeof num, "%ld", (long)getpid());
    at = kv(h, at, cap, "pid", num);
    utc_now(when, sizeof when, f->started);
    at = kv(h, at, cap, "started", when);
    static const char *const jk[4] = {"jvm_name", "jvm_version", "jvm_vendor", "jvm_info"};
    bool jvm = atomic_load_explicit(&f->jvm_ready, memory_order_acquire);
    for (int i = 0; i < 4 && jvm; i++)
        if (f->jvm[i][0] != '\0')
            at = kv(h, at, cap, jk[i], f->jvm[i]);
    snprintf(num, sizeof num, "%zu", sizeof(void *));
    at = kv(h, at, cap, "pointer_size", num);
    at = kv(h, at, cap, "byte_order", "little");
    at = kv(h, at, cap, "schema", "");
    size_t sl = strlen(schema);
    if (at + sl < cap) {
        memcpy(h + at, schema, sl);
        at += sl;
    }
    write_all(f, &(struct iovec){(void *)REC_MAGIC, REC_MAGIC_LEN}, 1);
    write_block(f, REC_BLOCK_HEADER, h, at, NULL, 0);
    free(h);
}

/* The writer's own stream: the losses no thread could record, as DROPPED records. */
static void write_dropped(void)
{
    for (struct rstream *rs = atomic_load(&streams); rs != NULL; rs = rs->next)
        for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
            if (atomic_load(&rs->owned) && LD(rs->s[s].stream_id) != 0 && LD(rs->s[s].lost) > 0)
                note_dropped(s, &rs->s[s]); /* its thread records nothing more: closing is set */
    static uint64_t gen;
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct recfile *f = &files[s];
        if (f->path == NULL || f->fd < 0)
            continue;
        unsigned char buf[16384];
        struct rec_enc e = {.p = buf};
        for (struct dropped *d = atomic_load(&dropped_list); d != NULL; d = d->next) {
            if (d->slot != s)
                continue;
            if ((size_t)(e.p - buf) > sizeof buf - 8 * REC_VARINT_MAX) {
                struct rbuf b = {.slot = s, .stream_id = REC_WRITER_STREAM, .gen = ++gen};
                write_chunk_from(&b, buf, (size_t)(e.p - buf));
                e = (struct rec_enc){.p = buf};
            }
            rec_put_head(&e, REC_DROPPED, atomic_fetch_add(&next_seq, 1));
            rec_put_t(&e, d->env);
            rec_put_u(&e, d->stream);
            rec_put_u(&e, d->count);
            rec_put_u(&e, d->after);
        }
        if (e.p > buf) {
            struct rbuf b = {.slot = s, .stream_id = REC_WRITER_STREAM, .gen = ++gen};
            write_chunk_from(&b, buf, (size_t)(e.p - buf));
        }
    }
}

static const char *how_it_ended(bool *normal)
{
    static char how[96];
    int phase = atomic_load(&g_shim.phase);
    *normal = false;
    if (atomic_load(&pexit_called)) {
        snprintf(how, sizeof how, "ProfilerExit(%d)", (int)atomic_load(&pexit_code));
        *normal = true;
    } else if (atomic_load(&g_shim.profiler_exit)) {
        snprintf(how, sizeof how, "a refused start (the agent failed to start)");
    } else if (phase == PHASE_DEAD) {
        snprintf(how, sizeof how, "JVM_SHUT_DOWN");
        *normal = true;
    } else if (phase >= PHASE_LIVE) {
        snprintf(how, sizeof how, "an exit without JVM_SHUT_DOWN");
    } else {
        snprintf(how, sizeof how, "an exit before JVM_INIT_DONE");
    }
    return how;
}

static void write_end(int slot)
{
    struct recfile *f = &files[slot];
    uint64_t recs = 0, lost = 0, nstreams = atomic_load(&f->nstreams);
    for (struct rstream *rs = atomic_load(&streams); rs != NULL; rs = rs->next) {
        recs += LD(rs->s[slot].nrec);
        lost += LD(rs->s[slot].nlost);
    }
    bool normal;
    const char *how = how_it_ended(&normal);
    char h[1024], num[64], when[64];
    size_t at = 0;
    at = kv(h, at, sizeof h, "ended", how);
    at = kv(h, at, sizeof h, "normal", normal ? "yes" : "no");
    snprintf(num, sizeof num, "%llu", (unsigned long long)recs);
    at = kv(h, at, sizeof h, "records", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)lost);
    at = kv(h, at, sizeof h, "lost", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)nstreams);
    at = kv(h, at, sizeof h, "threads", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)atomic_load(&f->bytes));
    at = kv(h, at, sizeof h, "bytes_before_end", num);
    utc_now(when, sizeof when, time(NULL));
    at = kv(h, at, sizeof h, "finished", when);
    write_block(f, REC_BLOCK_END, h, at, NULL, 0);
    if (lost > 0)
        log_warn("record=%s: %llu records were dropped because the writer fell behind by %zu MB "
                 "(a slow disk?): the file says where (LOST records)", f->path,
                 (unsigned long long)lost, mem_budget >> 20);
}

/* Files are opened by the writer, never by a thread that records: an agent added later
 * (a second -agentpath) is opened on the writer's next round. */
static void open_files(void)
{
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct recfile *f = &files[s];
        if (!atomic_load(&f->ready) || f->opened)
            continue;
        f->opened = true;
        f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f->fd < 0) {
            log_error("record=%s: cannot open it for writing (%s): agent %d is not recorded",
                      f->path, strerror(errno), s);
            record_on[s] = false;
            continue;
        }
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "jvmpishim-rec", 0, 0, 0);
    uint64_t last_scan = now_ms();
    for (;;) {
        bool stop = atomic_load(&closing);
        open_files();
        drain_queue();
        if (stop || now_ms() - last_scan >= RECORD_SCAN_MS) {
            scan_streams();
            last_scan = now_ms();
        }
        if (stop)
            break;
        atomic_store(&writer_sleeping, 1);
        if (atomic_load(&queue) == NULL && !atomic_load(&closing)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += RECORD_SCAN_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            while (sem_timedwait(&wake, &ts) != 0 && errno == EINTR)
                ;
        }
        atomic_store(&writer_sleeping, 0);
    }
    drain_queue();
    scan_streams();
    write_dropped();
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
        if (files[s].path != NULL && files[s].fd >= 0) {
            write_header(s); /* a run that recorded nothing still has its header */
            write_end(s);
            close(files[s].fd);
            files[s].fd = -1;
        }
    atomic_store(&writer_done, 1);
    return NULL;
}

/* atexit: the recording ends with the process. Threads still running record nothing more;
 * the writer writes what was recorded and the end blocks. A writer stuck on its file (a
 * pipe no one reads, a hung disk) is given up on after RECORD_EXIT_STALL_S without
 * progress: the file then ends without its end block, as if the run had been killed. */
static void record_close(void)
{
    if (!writer_started || atomic_exchange(&closing, 1))
        return;
    sem_post(&wake);
    uint64_t last = 0, since = now_ms();
    while (!atomic_load(&writer_done)) {
        uint64_t b = 0;
        for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
            b += atomic_load(&files[s].bytes);
        if (b != last) {
            last = b;
            since = now_ms();
        } else if (now_ms() - since > RECORD_EXIT_STALL_S * 1000u) {
            log_warn("record: the file was not written for %d s at exit: it ends without "
                     "its end block", RECORD_EXIT_STALL_S);
            return;
        }
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
}


void record_open(struct instance *inst)
{
    int slot = inst->slot;
    const char *path = inst->opts.record_file;
    if (path == NULL || slot < 0 || slot >= SHIM_MAX_INSTANCES)
        return;
    struct recfile *f = &files[slot];
    /* Several agents: each names its own file; the same name given twice gets the agent's
     * slot appended for the later ones (PATH, PATH.1, ...). */
    bool taken = false;
    for (int s = 0; s < slot; s++)
        taken |= g_shim.inst[s].opts.record_file != NULL && strcmp(path, g_shim.inst[s].opts.record_file) == 0;
    size_t n = strlen(path) + 16;
    f->path = malloc(n);
    if (f->path == NULL) {
        log_error("record=%s: out of memory: agent %d is not recorded", path, slot);
        return;
    }
    if (taken)
        snprintf(f->path, n, "%s.%d", path, slot);
    else
        snprintf(f->path, n, "%s", path);
    pthread_mutex_init(&f->names_lock, NULL);
    f->fd = -1;
    f->started = time(NULL);
    read_jvm(f);
    const char *mb = getenv("JVMPISHIM_RECORD_BUFFER_MB");
    if (mb != NULL && atol(mb) > 0)
        mem_budget = (size_t)atol(mb) << 20;
    record_on[slot] = true;
    atomic_store(&f->ready, true);
    if (!writer_started) {
        sem_init(&wake, 0, 0);
        if (pthread_create(&writer, NULL, writer_main, NULL) != 0) {
            log_error("record=%s: cannot start the writer thread: agent %d is not recorded", path, slot);
            record_on[slot] = false;
            return;
        }
        writer_started = true;
        atexit(record_close);
    }
    log_info("agent %d: recording to %s", slot, f->path);
}
