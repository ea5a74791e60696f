/* record_int.h — what the recorder's files share (record.c: the recording threads' side;
 * record_calls.c: the JVMPI calls; record_writer.c: the writer thread and the file): the
 * buffers and streams, the per-file state, and the inline steps of a record, which the
 * event and call paths take without a function call.
 */
#ifndef JVMPISHIM_RECORD_INT_H
#define JVMPISHIM_RECORD_INT_H

#include "core/recfmt.h"
#include "events/record.h"

#include <semaphore.h>
#include <uthash.h>

#define RECORD_BUF_DATA (64 * 1024)     /* a thread's buffer */
#define RECORD_SCAN_MS 100              /* partial buffers written at least this often */
#define RECORD_DUMP_INLINE_MAX (16u << 20) /* larger dumps: digest and summary only */
#define RECORD_EXIT_STALL_S 10          /* at exit, give up on a writer stuck this long */
#define MCACHE 256
#define CCACHE 64

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

struct recfile {
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
};

/* Losses no LOST record told (the thread ended, or the run did, while it was dropping):
 * the writer writes them as DROPPED records in its own stream at the end. */
struct dropped {
    struct dropped *next;
    int slot;
    void *env;
    uint64_t stream, count, after;
};

/* The owner's counters: one writer, read by the writer thread at the end. */
#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
#define INC(x) ST(x, LD(x) + 1)

/* record.c: the streams (all, never freed) and this thread's, the sequence numbers, the
 * buffer budget, the queue of full buffers with the writer's wake-up, the files. */
extern _Atomic(struct rstream *) record_streams;
extern _Thread_local struct rstream *record_tl;
extern _Atomic uint64_t record_next_seq;
extern size_t record_mem_budget;
extern _Atomic(struct rbuf *) record_queue;
extern sem_t record_wake;
extern _Atomic int record_writer_sleeping, record_closing;
extern _Atomic(struct dropped *) record_dropped_list;
extern struct recfile record_files[SHIM_MAX_INSTANCES];

void record_buf_free(struct rbuf *b);
void record_queue_push(struct rbuf *b);
void record_note_dropped(int slot, struct rslot *ss);
/* The JVM's name, version, vendor and mode for the file's header, read once. */
void record_read_jvm(struct recfile *f);
/* record_writer.c: ProfilerExit was called (the end block says how the run ended). */
void record_note_profiler_exit(jint code);

/* ---- one record ----
 * Begin a record of at most bound bytes after its head: the thread's slot, with the code
 * and a fresh sequence number written, or NULL if it is not recorded (counted as lost).
 * record_begin_slow: the thread's first record, a full buffer, records lost before. */
struct rslot *record_begin_slow(int slot, int code, size_t bound);
static inline struct rslot *rec_begin(int slot, int code, size_t bound)
{
    struct rstream *rs = record_tl;
    if (__builtin_expect(rs != NULL && !atomic_load_explicit(&record_closing, memory_order_relaxed), 1)) {
        struct rslot *ss = &rs->s[slot];
        struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
        if (__builtin_expect(b != NULL && LD(ss->lost) == 0 && !b->big &&
                                 b->cap - (size_t)(ss->enc.p - b->data) >= bound + 3 * REC_VARINT_MAX, 1)) {
            rec_put_head(&ss->enc, code,
                         atomic_fetch_add_explicit(&record_next_seq, 1, memory_order_relaxed));
            return ss;
        }
    }
    return record_begin_slow(slot, code, bound);
}

static inline void rec_end(struct rslot *ss)
{
    struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    atomic_store_explicit(&b->pos, (size_t)(ss->enc.p - b->data), memory_order_release);
    INC(ss->nrec);
    if (b->big) { /* one large record: to the writer now, not kept as the current buffer */
        atomic_store_explicit(&ss->cur, NULL, memory_order_release);
        record_queue_push(b);
    }
}

/* ---- names: the ids a record uses, named in a record of their own on first use ---- */

void record_name_method_slow(int slot, jmethodID m);
void record_name_class(int slot, jobjectID id);
void record_name_thread(int slot, JNIEnv *jni);

static inline void name_method(int slot, jmethodID m)
{
    struct rstream *rs = record_tl;
    if (rs == NULL || rs->s[slot].mcache[((uintptr_t)m >> 3) & (MCACHE - 1)] != (uintptr_t)m)
        record_name_method_slow(slot, m);
}

/* Before a thread's first record for this file, and when its JNIEnv changed (a native
 * thread of the agent attached): say which thread the stream is. */
static inline void stream_check(int slot)
{
    struct rstream *rs = record_tl;
    struct rslot *ss = rs != NULL ? &rs->s[slot] : NULL;
    if (ss != NULL && LD(ss->stream_id) != 0 && LD(ss->env) != NULL)
        return; /* a JNIEnv stays the thread's for its life */
    JNIEnv *jni = shim_current_jni();
    if (ss == NULL || LD(ss->stream_id) == 0 || LD(ss->env) != jni)
        record_name_thread(slot, jni);
}

#endif
