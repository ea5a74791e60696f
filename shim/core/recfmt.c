/* recfmt.c — the record= file format: the schema, checksums and the event encoder.
 *
 * The schema table below is the one description of every record: rec_schema_text() writes
 * it into each file's header, and rec_put_event() and the recorder's call encoders
 * (events/record.c) write fields in exactly its order. A reader decodes a file from its
 * own header alone (tools/jvmpitrace/reader.c does), so a record type added later is
 * still read, printed and counted by an older tool. Pure C, no JVM.
 */
#include "core/recfmt.h"

#include <stdio.h>
#include <stdlib.h>

struct rec_type_desc {
    int code;
    const char *name;
    const char *fields;
};

#define EV_DUMP_FIELDS "length:u digest:u data:b summary:[record_type:u count:u]"
#define EV_TRACES "traces:[thread:t frames:[line:i method:m]]"
#define EV_THREAD "env:t thread_name:s group_name:s parent_name:s thread_object:o thread_env:t"

static const struct rec_type_desc events[] = {
    {JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY", "env:t method:m"},
    {JVMPI_EVENT_METHOD_ENTRY2, "METHOD_ENTRY2", "env:t method:m object:o"},
    {JVMPI_EVENT_METHOD_EXIT, "METHOD_EXIT", "env:t method:m"},
    {JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC", "env:t arena:i class:o is_array:i size:i object:o"},
    {JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE", "env:t object:o"},
    {JVMPI_EVENT_OBJECT_MOVE, "OBJECT_MOVE", "env:t arena:i object:o new_arena:i new_object:o"},
    {JVMPI_EVENT_COMPILED_METHOD_LOAD, "COMPILED_METHOD_LOAD",
     "env:t method:m code_addr:p code_size:i lines:[offset:i line:i]"},
    {JVMPI_EVENT_COMPILED_METHOD_UNLOAD, "COMPILED_METHOD_UNLOAD", "env:t method:m"},
    {JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START",
     "env:t method:m offset:i info1:i info2:i info3:i"},
    {JVMPI_EVENT_THREAD_START, "THREAD_START", EV_THREAD},
    {JVMPI_EVENT_THREAD_END, "THREAD_END", EV_THREAD},
    {JVMPI_EVENT_CLASS_LOAD_HOOK, "CLASS_LOAD_HOOK", "env:t class_data:b"},
    {JVMPI_EVENT_HEAP_DUMP, "HEAP_DUMP", "env:t level:i " EV_DUMP_FIELDS " " EV_TRACES},
    {JVMPI_EVENT_JNI_GLOBALREF_ALLOC, "JNI_GLOBALREF_ALLOC", "env:t object:o ref:p"},
    {JVMPI_EVENT_JNI_GLOBALREF_FREE, "JNI_GLOBALREF_FREE", "env:t ref:p"},
    {JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, "JNI_WEAK_GLOBALREF_ALLOC", "env:t object:o ref:p"},
    {JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, "JNI_WEAK_GLOBALREF_FREE", "env:t ref:p"},
    {JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD",
     "env:t class_name:s source_name:s num_interfaces:i "
     "methods:[name:s signature:s start_line:i end_line:i method:m] "
     "statics:[name:s signature:s] instances:[name:s signature:s] class:o"},
    {JVMPI_EVENT_CLASS_UNLOAD, "CLASS_UNLOAD", "env:t class:o"},
    {JVMPI_EVENT_DATA_DUMP_REQUEST, "DATA_DUMP_REQUEST", "env:t"},
    {JVMPI_EVENT_DATA_RESET_REQUEST, "DATA_RESET_REQUEST", "env:t"},
    {JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE", "env:t"},
    {JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN", "env:t"},
    {JVMPI_EVENT_ARENA_NEW, "ARENA_NEW", "env:t arena:i name:s"},
    {JVMPI_EVENT_ARENA_DELETE, "ARENA_DELETE", "env:t arena:i"},
    {JVMPI_EVENT_OBJECT_DUMP, "OBJECT_DUMP", "env:t " EV_DUMP_FIELDS},
    {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, "RAW_MONITOR_CONTENDED_ENTER", "env:t name:s monitor:p"},
    {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, "RAW_MONITOR_CONTENDED_ENTERED", "env:t name:s monitor:p"},
    {JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, "RAW_MONITOR_CONTENDED_EXIT", "env:t name:s monitor:p"},
    {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, "MONITOR_CONTENDED_ENTER", "env:t object:o"},
    {JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, "MONITOR_CONTENDED_ENTERED", "env:t object:o"},
    {JVMPI_EVENT_MONITOR_CONTENDED_EXIT, "MONITOR_CONTENDED_EXIT", "env:t object:o"},
    {JVMPI_EVENT_MONITOR_WAIT, "MONITOR_WAIT", "env:t object:o timeout:i"},
    {JVMPI_EVENT_MONITOR_WAITED, "MONITOR_WAITED", "env:t object:o timeout:i"},
    {JVMPI_EVENT_MONITOR_DUMP, "MONITOR_DUMP",
     "env:t " EV_DUMP_FIELDS " " EV_TRACES " status:[status:i]"},
    {JVMPI_EVENT_GC_START, "GC_START", "env:t"},
    {JVMPI_EVENT_GC_FINISH, "GC_FINISH", "env:t used_objects:i used_space:i total_space:i"},
};

/* The JVMPI functions in JVMPI_Interface order (core/api.h): arguments when called, results
 * (and what the call filled in) when it returned. */
static const struct {
    const char *name, *call, *ret;
} fns[REC_NUM_FNS] = {
    {"EnableEvent", "event_type:i arg:p", "result:i"},
    {"DisableEvent", "event_type:i arg:p", "result:i"},
    {"RequestEvent", "event_type:i arg:p level:i", "result:i"},
    {"GetCallTrace", "trace:p thread:t depth:i", "num_frames:i frames:[line:i method:m]"},
    {"ProfilerExit", "code:i", ""},
    {"RawMonitorCreate", "name:s", "monitor:p"},
    {"RawMonitorEnter", "monitor:p", ""},
    {"RawMonitorExit", "monitor:p", ""},
    {"RawMonitorWait", "monitor:p ms:i", ""},
    {"RawMonitorNotifyAll", "monitor:p", ""},
    {"RawMonitorDestroy", "monitor:p", ""},
    {"GetCurrentThreadCpuTime", "", "result:i"},
    {"SuspendThread", "thread:t", ""},
    {"ResumeThread", "thread:t", ""},
    {"GetThreadStatus", "thread:t", "result:i"},
    {"ThreadHasRun", "thread:t", "result:i"},
    {"CreateSystemThread", "name:s priority:i function:p", "result:i"},
    {"SetThreadLocalStorage", "thread:t value:p", ""},
    {"GetThreadLocalStorage", "thread:t", "result:p"},
    {"DisableGC", "", ""},
    {"EnableGC", "", ""},
    {"RunGC", "", ""},
    {"GetThreadObject", "thread:t", "result:o"},
    {"GetMethodClass", "method:m", "result:o"},
    {"jobjectID2jobject", "object:o", "result:p"},
    {"jobject2jobjectID", "ref:p", "result:o"},
    {"SuspendThreadList", "count:i threads:[thread:t]", "results:[result:i]"},
    {"ResumeThreadList", "count:i threads:[thread:t]", "results:[result:i]"},
};

static const struct rec_type_desc own[] = {
    {REC_METHOD_NAME, "METHOD_NAME", "method:m class_name:s name:s signature:s"},
    {REC_CLASS_NAME, "CLASS_NAME", "class:o name:s"},
    {REC_THREAD_NAME, "THREAD_NAME", "thread:t name:s group_name:s"},
    {REC_LOST, "LOST", "count:u after_seq:u"},
    {REC_HOOK_RESULT, "HOOK_RESULT", "new_length:i same:u digest:u"},
    {REC_THREAD_ENV, "THREAD_ENV", "thread:t"},
    {REC_EVENT_DONE, "EVENT_DONE", "event_type:i"},
    {REC_DROPPED, "DROPPED", "thread:t stream:u count:u after_seq:u"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *rec_event_name(int t)
{
    for (size_t i = 0; i < NELEM(events); i++)
        if (events[i].code == t)
            return events[i].name;
    return NULL;
}

const char *rec_fn_name(int f)
{
    return f >= 0 && f < REC_NUM_FNS ? fns[f].name : NULL;
}

int rec_event_code(jint event_type)
{
    static _Atomic uint64_t known; /* bit t: event t is defined (computed once, idempotent) */
    uint64_t k = known;
    if (k == 0) {
        for (size_t i = 0; i < NELEM(events); i++)
            k |= (uint64_t)1 << events[i].code;
        known = k;
    }
    int t = event_type & ~JVMPI_REQUESTED_EVENT;
    if (t < 0 || t > 63 || !((k >> t) & 1))
        return -1;
    return t + ((event_type & JVMPI_REQUESTED_EVENT) ? REC_REQUESTED : 0);
}

static char schema[16384];

const char *rec_schema_text(void)
{
    if (schema[0] != '\0')
        return schema;
    size_t n = 0;
#define ADD(...) n += (size_t)snprintf(schema + n, n < sizeof schema ? sizeof schema - n : 0, __VA_ARGS__)
    for (size_t i = 0; i < NELEM(events); i++)
        ADD("rec %d %s %s\n", events[i].code, events[i].name, events[i].fields);
    for (size_t i = 0; i < NELEM(events); i++)
        ADD("rec %d %s+REQUESTED %s\n", events[i].code + REC_REQUESTED, events[i].name,
            events[i].fields);
    for (int i = 0; i < REC_NUM_FNS; i++) {
        ADD("rec %d CALL:%s%s%s\n", REC_CALL + i, fns[i].name, fns[i].call[0] ? " " : "", fns[i].call);
        ADD("rec %d RET:%s%s%s\n", REC_RET + i, fns[i].name, fns[i].ret[0] ? " " : "", fns[i].ret);
    }
    for (size_t i = 0; i < NELEM(own); i++)
        ADD("rec %d %s %s\n", own[i].code, own[i].name, own[i].fields);
#undef ADD
    if (n >= sizeof schema)
        abort(); /* the table outgrew its buffer: a build-time mistake */
    return schema;
}

/* ---- checksums ---- */

static uint32_t crc_table[8][256];
static _Atomic int crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
    crc_ready = 1;
}

#if defined(__x86_64__)
#include <nmmintrin.h>
/* SSE 4.2 has CRC-32C as an instruction: about 10 GB/s. */
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = ~crc & 0xffffffffu;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    for (; n > 0; n--)
        c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
#endif

/* Table-driven, sliced by 8 (about 1.5 GB/s) where the instruction is missing. */
uint32_t rec_crc32c(uint32_t crc, const void *data, size_t n)
{
#if defined(__x86_64__)
    static _Atomic int hw = -1;
    if (hw < 0) {
        __builtin_cpu_init();
        hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    }
    if (hw)
        return crc_sse42(crc, data, n);
#endif
    return rec_crc32c_sw(crc, data, n);
}

uint32_t rec_crc32c_sw(uint32_t crc, const void *data, size_t n)
{
    if (!crc_ready)
        crc_init(); /* idempotent: racing callers compute the same table */
    const unsigned char *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian hosts */
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t round1(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static inline uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round1(0, v)) * P1 + P4; }

uint64_t rec_xxh64(const void *data, size_t n)
{
    const unsigned char *p = data, *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
        do {
            v1 = round1(v1, rd64(p));
            v2 = round1(v2, rd64(p + 8));
            v3 = round1(v3, rd64(p + 16));
            v4 = round1(v4, rd64(p + 24));
            p += 32;
        } while (end - p >= 32);
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = merge(merge(merge(merge(h, v1), v2), v3), v4);
    } else {
        h = P5;
    }
    h += (uint64_t)n;
    for (; end - p >= 8; p += 8)
        h = rotl(h ^ round1(0, rd64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        h = rotl(h ^ ((uint64_t)rd32(p) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        h = rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- events ---- */

void rec_dump_bytes(const JVMPI_Event *ev, const unsigned char **p, size_t *len)
{
    *p = NULL;
    *len = 0;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_HEAP_DUMP:
        if (ev->u.heap_dump.begin != NULL && ev->u.heap_dump.end >= ev->u.heap_dump.begin) {
            *p = (const unsigned char *)ev->u.heap_dump.begin;
            *len = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
        }
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        if (ev->u.monitor_dump.begin != NULL && ev->u.monitor_dump.end >= ev->u.monitor_dump.begin) {
            *p = (const unsigned char *)ev->u.monitor_dump.begin;
            *len = (size_t)(ev->u.monitor_dump.end - ev->u.monitor_dump.begin);
        }
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        if (ev->u.object_dump.data != NULL && ev->u.object_dump.data_len >= 0) {
            *p = (const unsigned char *)ev->u.object_dump.data;
            *len = (size_t)ev->u.object_dump.data_len;
        }
        break;
    default:
        break;
    }
}

static size_t traces_bound(jint n, const JVMPI_CallTrace *t)
{
    size_t b = REC_VARINT_MAX;
    if (t == NULL || n <= 0)
        return b;
    for (jint i = 0; i < n; i++)
        b += 2 * REC_VARINT_MAX + (t[i].frames != NULL && t[i].num_frames > 0 ? (size_t)t[i].num_frames : 0) *
                                      2 * REC_VARINT_MAX;
    return b;
}

static void put_frames(struct rec_enc *e, jint n, const JVMPI_CallFrame *f)
{
    if (f == NULL || n < 0) {
        rec_put_u(e, 0);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++) {
        rec_put_i(e, f[i].lineno);
        rec_put_m(e, f[i].method_id);
    }
}

static void put_traces(struct rec_enc *e, jint n, const JVMPI_CallTrace *t)
{
    if (t == NULL || n < 0) {
        rec_put_u(e, t == NULL ? 0 : 1);
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++) {
        rec_put_t(e, t[i].env_id);
        put_frames(e, t[i].frames != NULL ? t[i].num_frames : -1, t[i].frames);
    }
}

static size_t dump_bound(const JVMPI_Event *ev, const struct rec_dump *d)
{
    const unsigned char *p;
    size_t len;
    rec_dump_bytes(ev, &p, &len);
    return 4 * REC_VARINT_MAX + (d != NULL && d->inline_bytes ? len : 0) +
           REC_SUMMARY_MAX * 2 * REC_VARINT_MAX;
}

static void put_dump(struct rec_enc *e, const JVMPI_Event *ev, const struct rec_dump *d)
{
    const unsigned char *p;
    size_t len;
    rec_dump_bytes(ev, &p, &len);
    rec_put_u(e, d != NULL ? d->length : len);
    rec_put_u(e, d != NULL ? d->digest : 0);
    if (d != NULL && d->inline_bytes)
        rec_put_bytes(e, p != NULL ? p : (const unsigned char *)"", len);
    else
        rec_put_u(e, 0);
    int ns = d != NULL && !d->inline_bytes ? d->nsummary : 0;
    rec_put_u(e, (uint64_t)ns + 1);
    for (int i = 0; i < ns; i++) {
        rec_put_u(e, d->summary[i].type);
        rec_put_u(e, d->summary[i].count);
    }
}

static size_t fields_bound(jint n, const JVMPI_Field *f)
{
    size_t b = REC_VARINT_MAX;
    if (f != NULL)
        for (jint i = 0; i < n; i++)
            b += rec_s_bound(f[i].field_name) + rec_s_bound(f[i].field_signature);
    return b;
}

static void put_fields(struct rec_enc *e, jint n, const JVMPI_Field *f)
{
    if (f == NULL || n < 0) {
        rec_put_u(e, f == NULL && n <= 0 ? 1 : 0); /* no fields: an empty list */
        return;
    }
    rec_put_u(e, (uint64_t)n + 1);
    for (jint i = 0; i < n; i++) {
        rec_put_s(e, f[i].field_name);
        rec_put_s(e, f[i].field_signature);
    }
}

size_t rec_event_bound(const JVMPI_Event *ev, const struct rec_dump *d)
{
    size_t b = 8 * REC_VARINT_MAX; /* head, env and any fixed fields */
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        if (ev->u.compiled_method_load.lineno_table != NULL && ev->u.compiled_method_load.lineno_table_size > 0)
            b += (size_t)ev->u.compiled_method_load.lineno_table_size * 2 * REC_VARINT_MAX;
        break;
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
        b += rec_s_bound(ev->u.thread_start.thread_name) + rec_s_bound(ev->u.thread_start.group_name) +
             rec_s_bound(ev->u.thread_start.parent_name);
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        if (ev->u.class_load_hook.class_data != NULL && ev->u.class_load_hook.class_data_len > 0)
            b += (size_t)ev->u.class_load_hook.class_data_len;
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        b += dump_bound(ev, d) + traces_bound(ev->u.heap_dump.num_traces, ev->u.heap_dump.traces);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        b += dump_bound(ev, d);
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        b += dump_bound(ev, d) + traces_bound(ev->u.monitor_dump.num_traces, ev->u.monitor_dump.traces);
        if (ev->u.monitor_dump.threads_status != NULL && ev->u.monitor_dump.num_traces > 0)
            b += (size_t)ev->u.monitor_dump.num_traces * REC_VARINT_MAX;
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        const JVMPI_Method *m = ev->u.class_load.methods;
        b += rec_s_bound(ev->u.class_load.class_name) + rec_s_bound(ev->u.class_load.source_name);
        b += REC_VARINT_MAX;
        if (m != NULL)
            for (jint i = 0; i < ev->u.class_load.num_methods; i++)
                b += rec_s_bound(m[i].method_name) + rec_s_bound(m[i].method_signature) +
                     3 * REC_VARINT_MAX;
        b += fields_bound(ev->u.class_load.num_static_fields, ev->u.class_load.statics);
        b += fields_bound(ev->u.class_load.num_instance_fields, ev->u.class_load.instances);
        break;
    }
    case JVMPI_EVENT_ARENA_NEW:
        b += rec_s_bound(ev->u.new_arena.arena_name);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        b += rec_s_bound(ev->u.raw_monitor.name);
        break;
    default:
        break;
    }
    return b;
}

void rec_put_event(struct rec_enc *e, uint64_t seq, const JVMPI_Event *ev, const struct rec_dump *d)
{
    rec_put_head(e, rec_event_code(ev->event_type), seq);
    rec_put_event_body(e, ev, d);
}

void rec_put_event_body(struct rec_enc *e, const JVMPI_Event *ev, const struct rec_dump *d)
{
    int t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    rec_put_t(e, ev->env_id);
    switch (t) {
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
        rec_put_m(e, ev->u.method.method_id);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        rec_put_m(e, ev->u.method_entry2.method_id);
        rec_put_o(e, ev->u.method_entry2.obj_id);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        rec_put_i(e, ev->u.obj_alloc.arena_id);
        rec_put_o(e, ev->u.obj_alloc.class_id);
        rec_put_i(e, ev->u.obj_alloc.is_array);
        rec_put_i(e, ev->u.obj_alloc.size);
        rec_put_o(e, ev->u.obj_alloc.obj_id);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        rec_put_o(e, ev->u.obj_free.obj_id);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
        rec_put_i(e, ev->u.obj_move.arena_id);
        rec_put_o(e, ev->u.obj_move.obj_id);
        rec_put_i(e, ev->u.obj_move.new_arena_id);
        rec_put_o(e, ev->u.obj_move.new_obj_id);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: {
        const JVMPI_Lineno *l = ev->u.compiled_method_load.lineno_table;
        jint n = ev->u.compiled_method_load.lineno_table_size;
        rec_put_m(e, ev->u.compiled_method_load.method_id);
        rec_put_p(e, ev->u.compiled_method_load.code_addr);
        rec_put_i(e, ev->u.compiled_method_load.code_size);
        if (l == NULL || n < 0) {
            rec_put_u(e, l == NULL && n <= 0 ? 1 : 0);
        } else {
            rec_put_u(e, (uint64_t)n + 1);
            for (jint i = 0; i < n; i++) {
                rec_put_i(e, l[i].offset);
                rec_put_i(e, l[i].lineno);
            }
        }
        break;
    }
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        rec_put_m(e, ev->u.compiled_method_unload.method_id);
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        rec_put_m(e, ev->u.instruction.method_id);
        rec_put_i(e, ev->u.instruction.offset);
        /* The inner union as three ints: is_true / key / chosen_pair_index, then low /
         * pairs_total, then hi. */
        rec_put_i(e, ev->u.instruction.u.tableswitch_info.key);
        rec_put_i(e, ev->u.instruction.u.tableswitch_info.low);
        rec_put_i(e, ev->u.instruction.u.tableswitch_info.hi);
        break;
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
        rec_put_s(e, ev->u.thread_start.thread_name);
        rec_put_s(e, ev->u.thread_start.group_name);
        rec_put_s(e, ev->u.thread_start.parent_name);
        rec_put_o(e, ev->u.thread_start.thread_id);
        rec_put_t(e, ev->u.thread_start.thread_env_id);
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        rec_put_bytes(e, ev->u.class_load_hook.class_data,
                      ev->u.class_load_hook.class_data_len > 0 ? (size_t)ev->u.class_load_hook.class_data_len : 0);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        rec_put_i(e, ev->u.heap_dump.dump_level);
        put_dump(e, ev, d);
        put_traces(e, ev->u.heap_dump.num_traces, ev->u.heap_dump.traces);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        rec_put_o(e, ev->u.jni_globalref_alloc.obj_id);
        rec_put_p(e, ev->u.jni_globalref_alloc.ref_id);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        rec_put_p(e, ev->u.jni_globalref_free.ref_id);
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        const JVMPI_Method *m = ev->u.class_load.methods;
        jint n = ev->u.class_load.num_methods;
        rec_put_s(e, ev->u.class_load.class_name);
        rec_put_s(e, ev->u.class_load.source_name);
        rec_put_i(e, ev->u.class_load.num_interfaces);
        if (m == NULL || n < 0) {
            rec_put_u(e, m == NULL && n <= 0 ? 1 : 0);
        } else {
            rec_put_u(e, (uint64_t)n + 1);
            for (jint i = 0; i < n; i++) {
                rec_put_s(e, m[i].method_name);
                rec_put_s(e, m[i].method_signature);
                rec_put_i(e, m[i].start_lineno);
                rec_put_i(e, m[i].end_lineno);
                rec_put_m(e, m[i].method_id);
            }
        }
        put_fields(e, ev->u.class_load.num_static_fields, ev->u.class_load.statics);
        put_fields(e, ev->u.class_load.num_instance_fields, ev->u.class_load.instances);
        rec_put_o(e, ev->u.class_load.class_id);
        break;
    }
    case JVMPI_EVENT_CLASS_UNLOAD:
        rec_put_o(e, ev->u.class_unload.class_id);
        break;
    case JVMPI_EVENT_ARENA_NEW:
        rec_put_i(e, ev->u.new_arena.arena_id);
        rec_put_s(e, ev->u.new_arena.arena_name);
        break;
    case JVMPI_EVENT_ARENA_DELETE:
        rec_put_i(e, ev->u.delete_arena.arena_id);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        put_dump(e, ev, d);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        rec_put_s(e, ev->u.raw_monitor.name);
        rec_put_p(e, ev->u.raw_monitor.id);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        rec_put_o(e, ev->u.monitor.object);
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        rec_put_o(e, ev->u.monitor_wait.object);
        rec_put_i(e, ev->u.monitor_wait.timeout);
        break;
    case JVMPI_EVENT_MONITOR_DUMP: {
        jint n = ev->u.monitor_dump.num_traces;
        put_dump(e, ev, d);
        put_traces(e, n, n > 0 ? ev->u.monitor_dump.traces : NULL);
        const jint *st = ev->u.monitor_dump.threads_status;
        if (st == NULL || n <= 0) {
            rec_put_u(e, 0);
        } else {
            rec_put_u(e, (uint64_t)n + 1);
            for (jint i = 0; i < n; i++)
                rec_put_i(e, st[i]);
        }
        break;
    }
    case JVMPI_EVENT_GC_FINISH:
        rec_put_i(e, ev->u.gc_info.used_objects);
        rec_put_i(e, ev->u.gc_info.used_object_space);
        rec_put_i(e, ev->u.gc_info.total_object_space);
        break;
    default: /* the events with no fields of their own */
        break;
    }
}
