/* recfmt.h — the record= file format (docs/recording.md): framing, schema, encoders.
 *
 * Pure C, no JVM: the shim's recorder (events/record.c) writes with it, and jvmpitrace
 * (tools/jvmpitrace/) and the unit tests read what it defines. A file is the magic, then
 * blocks: a text header that carries the schema of every record type, chunks of one
 * thread's records, and a text end block when the run ended normally. A record is its code,
 * the distance of its sequence number from the previous record's in the same buffer, and
 * the fields its schema line lists, as varints, strings and lists. Ids are written as
 * differences from the previous id of the same kind in the buffer, so that a method event
 * costs a few bytes. The encoders here write exactly what rec_schema_text() describes; a
 * reader needs nothing but the file to decode it.
 */
#ifndef JVMPISHIM_RECFMT_H
#define JVMPISHIM_RECFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jvmpi.h"

#define REC_MAGIC "JVMPIREC"
#define REC_MAGIC_LEN 8
#define REC_FORMAT_MAJOR 1
#define REC_FORMAT_MINOR 0

/* Block framing: kind (u1), payload length (u4, little-endian), CRC-32C of the payload (u4,
 * little-endian), payload. */
enum rec_block_kind { REC_BLOCK_HEADER = 'H', REC_BLOCK_CHUNK = 'C', REC_BLOCK_END = 'E' };
#define REC_BLOCK_HDR 9
#define REC_BLOCK_MAX (256u << 20) /* a reader refuses longer blocks as damaged */

/* Record codes: an event is its JVMPI number, plus REC_REQUESTED when it answers a
 * RequestEvent; a JVMPI function call is REC_CALL + its table index (core/api.h) when it
 * begins, REC_RET + that index when it returns; then the recorder's own records. */
#define REC_REQUESTED 64
/* Stream 0 is the writer's own (DROPPED records at the end). */
#define REC_WRITER_STREAM 0
#define REC_CALL 128
#define REC_RET 160
enum rec_own_code {
    REC_METHOD_NAME = 192,  /* names a method id the recording uses (first use) */
    REC_CLASS_NAME,         /* names a class id the recording uses (first use) */
    REC_THREAD_NAME,        /* names the thread of this stream, when it has a Java name */
    REC_LOST,               /* records this thread dropped (no buffer space) before this */
    REC_HOOK_RESULT,        /* what the agent's CLASS_LOAD_HOOK handler returned */
    REC_THREAD_ENV,         /* this stream's thread has a (new) JNIEnv from here on */
    REC_EVENT_DONE,         /* the agent's JVM_SHUT_DOWN handler returned */
    REC_DROPPED,            /* the writer's: records a thread dropped that no LOST told */
    REC_CODE_LIMIT = 256
};

/* The schema of every record code, one line each: "rec CODE NAME FIELD:TYPE ...". Types:
 * u unsigned, i signed (zigzag) varint; s string, b bytes (varint length + 1, 0 = NULL,
 * then the bytes); t thread (JNIEnv *), m method id, o object id: signed varint of the
 * difference from the previous value of that kind in the buffer (a buffer starts with
 * t = its thread's JNIEnv, m = o = 0); p pointer, plain varint; [FIELD:TYPE ...] a list:
 * varint count + 1 (0 = NULL), then the items. */
const char *rec_schema_text(void);
/* JVMPI names: of event type t (without JVMPI_EVENT_), of function index f; NULL if none. */
const char *rec_event_name(int t);
const char *rec_fn_name(int f);
#define REC_NUM_FNS 28

/* CRC-32C (Castagnoli), as iSCSI and ext4 use; crc starts at 0. The instruction where the
 * CPU has it; rec_crc32c_sw is the portable table version (the unit tests compare them). */
uint32_t rec_crc32c(uint32_t crc, const void *p, size_t n);
uint32_t rec_crc32c_sw(uint32_t crc, const void *p, size_t n);
/* XXH64 with seed 0: the digest of dumps and rewritten class files. */
uint64_t rec_xxh64(const void *p, size_t n);

/* ---- encoding ---- */

/* A buffer being written, and the previous values its deltas refer to. */
struct rec_enc {
    unsigned char *p;
    uint64_t seq, thr, meth, obj;
};

static inline void rec_put_u(struct rec_enc *e, uint64_t v)
{
    while (v >= 0x80) {
        *e->p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *e->p++ = (unsigned char)v;
}
static inline void rec_put_i(struct rec_enc *e, int64_t v)
{
    rec_put_u(e, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static inline void rec_put_delta(struct rec_enc *e, uint64_t *last, uint64_t v)
{
    rec_put_i(e, (int64_t)(v - *last));
    *last = v;
}
static inline void rec_put_t(struct rec_enc *e, const void *env) { rec_put_delta(e, &e->thr, (uint64_t)(uintptr_t)env); }
static inline void rec_put_m(struct rec_enc *e, const void *m) { rec_put_delta(e, &e->meth, (uint64_t)(uintptr_t)m); }
static inline void rec_put_o(struct rec_enc *e, const void *o) { rec_put_delta(e, &e->obj, (uint64_t)(uintptr_t)o); }
static inline void rec_put_p(struct rec_enc *e, const void *p) { rec_put_u(e, (uint64_t)(uintptr_t)p); }
/* A record's code and sequence number (the buffer's records have rising numbers). */
static inline void rec_put_head(struct rec_enc *e, int code, uint64_t seq)
{
    rec_put_u(e, (uint64_t)code);
    rec_put_u(e, seq - e->seq);
    e->seq = seq;
}
static inline void rec_put_bytes(struct rec_enc *e, const void *b, size_t n)
{
    if (b == NULL) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    memcpy(e->p, b, n);
    e->p += n;
}
static inline void rec_put_s(struct rec_enc *e, const char *s)
{
    rec_put_bytes(e, s, s != NULL ? strlen(s) : 0);
}
/* Upper bounds of what the above write. */
#define REC_VARINT_MAX 10
static inline size_t rec_s_bound(const char *s) { return REC_VARINT_MAX + (s != NULL ? strlen(s) : 0); }

/* What a dump event carries besides its own fields: the bytes themselves when they are
 * recorded (inline), else their length, XXH64 digest and a count of records by type (the
 * first REC_SUMMARY_MAX types met; decoded == false when the walk failed at bad_offset). */
#define REC_SUMMARY_MAX 16
struct rec_dump {
    bool inline_bytes;
    uint64_t length, digest;
    int nsummary;
    struct {
        uint32_t type;
        uint64_t count;
    } summary[REC_SUMMARY_MAX];
};

/* An upper bound of the size of ev's record, and the record itself (code: rec_event_code).
 * d describes a HEAP_DUMP, OBJECT_DUMP or MONITOR_DUMP (NULL otherwise). */
size_t rec_event_bound(const JVMPI_Event *ev, const struct rec_dump *d);
void rec_put_event(struct rec_enc *e, uint64_t seq, const JVMPI_Event *ev, const struct rec_dump *d);
/* The same without the head (code and sequence number), for a writer that put it already. */
void rec_put_event_body(struct rec_enc *e, const JVMPI_Event *ev, const struct rec_dump *d);
/* The code of an event record; -1 for event numbers JVMPI does not define. */
int rec_event_code(jint event_type);
/* Where a dump event's bytes are, whatever the event (HotSpot's OBJECT_DUMP layout too). */
void rec_dump_bytes(const JVMPI_Event *ev, const unsigned char **p, size_t *len);

#endif
