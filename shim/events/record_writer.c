/* record_writer.c — record=PATH: the writer thread, the only one that touches the file.
 *
 * The threads that record hand it full buffers through a lock-free queue; it writes them
 * as chunks (stream, buffer generation, offset, JNIEnv, OS thread id: what the reader
 * needs to decode a buffer's records after the chunks before it), and every RECORD_SCAN_MS
 * what the threads' current buffers hold so far. Each block of the file carries its
 * length and a CRC32C, so a file cut short (a kill, a crash) is valid up to its last whole
 * chunk. The file is opened by this thread, never by a thread that records, and at exit
 * (atexit) it writes what is left, the losses no thread could record and the end block,
 * which says how the run ended. A write that fails stops the recording there; the program
 * goes on.
 */
#include "events/record_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static _Atomic int writer_done;
static pthread_t writer;
static bool writer_started;
static _Atomic int pexit_called;
static _Atomic jint pexit_code;

void record_note_profiler_exit(jint code)
{
    atomic_store(&pexit_code, code);
    atomic_store(&pexit_called, 1);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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
    struct recfile *f = &record_files[b->slot];
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
    record_buf_free(b);
}

static void drain_queue(void)
{
    struct rbuf *list = atomic_exchange(&record_queue, NULL), *fifo = NULL;
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
    for (struct rstream *rs = atomic_load(&record_streams); rs != NULL; rs = rs->next)
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
    struct recfile *f = &record_files[slot];
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
    for (struct rstream *rs = atomic_load(&record_streams); rs != NULL; rs = rs->next)
        for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
            if (atomic_load(&rs->owned) && LD(rs->s[s].stream_id) != 0 && LD(rs->s[s].lost) > 0)
                record_note_dropped(s, &rs->s[s]); /* its thread records nothing more: closing is set */
    static uint64_t gen;
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct recfile *f = &record_files[s];
        if (f->path == NULL || f->fd < 0)
            continue;
        unsigned char buf[16384];
        struct rec_enc e = {.p = buf};
        for (struct dropped *d = atomic_load(&record_dropped_list); d != NULL; d = d->next) {
            if (d->slot != s)
                continue;
            if ((size_t)(e.p - buf) > sizeof buf - 8 * REC_VARINT_MAX) {
                struct rbuf b = {.slot = s, .stream_id = REC_WRITER_STREAM, .gen = ++gen};
                write_chunk_from(&b, buf, (size_t)(e.p - buf));
                e = (struct rec_enc){.p = buf};
            }
            rec_put_head(&e, REC_DROPPED, atomic_fetch_add(&record_next_seq, 1));
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
    struct recfile *f = &record_files[slot];
    uint64_t recs = 0, lost = 0, nstreams = atomic_load(&f->nstreams);
    for (struct rstream *rs = atomic_load(&record_streams); rs != NULL; rs = rs->next) {
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
                 (unsigned long long)lost, record_mem_budget >> 20);
}

/* Files are opened by the writer, never by a thread that records: an agent added later
 * (a second -agentpath) is opened on the writer's next round. */
static void open_files(void)
{
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct recfile *f = &record_files[s];
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
        bool stop = atomic_load(&record_closing);
        open_files();
        drain_queue();
        if (stop || now_ms() - last_scan >= RECORD_SCAN_MS) {
            scan_streams();
            last_scan = now_ms();
        }
        if (stop)
            break;
        atomic_store(&record_writer_sleeping, 1);
        if (atomic_load(&record_queue) == NULL && !atomic_load(&record_closing)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += RECORD_SCAN_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            while (sem_timedwait(&record_wake, &ts) != 0 && errno == EINTR)
                ;
        }
        atomic_store(&record_writer_sleeping, 0);
    }
    drain_queue();
    scan_streams();
    write_dropped();
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
        if (record_files[s].path != NULL && record_files[s].fd >= 0) {
            write_header(s); /* a run that recorded nothing still has its header */
            write_end(s);
            close(record_files[s].fd);
            record_files[s].fd = -1;
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
    if (!writer_started || atomic_exchange(&record_closing, 1))
        return;
    sem_post(&record_wake);
    uint64_t last = 0, since = now_ms();
    while (!atomic_load(&writer_done)) {
        uint64_t b = 0;
        for (int s = 0; s < SHIM_MAX_INSTANCES; s++)
            b += atomic_load(&record_files[s].bytes);
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
    struct recfile *f = &record_files[slot];
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
    record_read_jvm(f);
    const char *mb = getenv("JVMPISHIM_RECORD_BUFFER_MB");
    if (mb != NULL && atol(mb) > 0)
        record_mem_budget = (size_t)atol(mb) << 20;
    record_on[slot] = true;
    atomic_store(&f->ready, true);
    if (!writer_started) {
        sem_init(&record_wake, 0, 0);
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
