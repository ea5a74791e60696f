/* record.c — record=PATH: every event delivered to an agent and every JVMPI call it made,
 * written to a file as the run goes, for jvmpitrace (tools/jvmpitrace/) to print, check
 * against the JVMPI contract and compare between runs. This file is the recording threads'
 * side: buffers and streams, the names of the ids records use, dumps, and the events;
 * record_calls.c records the JVMPI calls, record_writer.c writes the file.
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
#include "events/record_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

bool record_on[SHIM_MAX_INSTANCES];

_Atomic(struct rstream *) record_streams;
_Thread_local struct rstream *record_tl;
static pthread_key_t rs_key;
static pthread_once_t rs_once = PTHREAD_ONCE_INIT;
_Atomic uint64_t record_next_seq = 1;
static _Atomic uint64_t next_stream = 1;
static _Atomic size_t mem_used;
size_t record_mem_budget = (size_t)64 << 20;

/* Full buffers, newest first (a Treiber stack: many pushers, one popper taking all). */
_Atomic(struct rbuf *) record_queue;
sem_t record_wake;
_Atomic int record_writer_sleeping, record_closing;
_Atomic(struct dropped *) record_dropped_list;
struct recfile record_files[SHIM_MAX_INSTANCES];

static jclass (*class_ref_fn)(JNIEnv *, jobjectID);

void record_set_class_ref(jclass (*class_ref)(JNIEnv *jni, jobjectID id))
{
    class_ref_fn = class_ref;
}

static struct rbuf *buf_alloc(size_t data)
{
    size_t sz = sizeof(struct rbuf) + data;
    if (atomic_fetch_add(&mem_used, sz) + sz > record_mem_budget) {
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

void record_buf_free(struct rbuf *b)
{
    atomic_fetch_sub(&mem_used, sizeof(struct rbuf) + b->cap);
    free(b);
}

void record_queue_push(struct rbuf *b)
{
    struct rbuf *head = atomic_load(&record_queue);
    do
        b->next = head;
    while (!atomic_compare_exchange_weak(&record_queue, &head, b));
    if (atomic_exchange(&record_writer_sleeping, 0))
        sem_post(&record_wake);
}

void record_note_dropped(int slot, struct rslot *ss)
{
    struct dropped *d = malloc(sizeof *d);
    if (d == NULL)
        return; /* the end block's total still counts them */
    *d = (struct dropped){.slot = slot, .env = LD(ss->env), .stream = LD(ss->stream_id), .count = LD(ss->lost),
                          .after = LD(ss->lost_after)};
    struct dropped *head = atomic_load(&record_dropped_list);
    do
        d->next = head;
    while (!atomic_compare_exchange_weak(&record_dropped_list, &head, d));
}

static void rs_release(void *p)
{
    struct rstream *rs = p;
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        struct rslot *ss = &rs->s[s];
        if (LD(ss->lost) > 0)
            record_note_dropped(s, ss);
        struct rbuf *b = atomic_exchange(&ss->cur, NULL);
        if (b != NULL)
            record_queue_push(b);
        struct rbuf *sp = atomic_exchange(&ss->spare, NULL);
        if (sp != NULL)
            record_buf_free(sp);
        ST(ss->stream_id, 0);
        ST(ss->lost, 0);
    }
    record_tl = NULL;
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
    for (rs = atomic_load(&record_streams); rs != NULL; rs = rs->next) {
        int free_ = 0;
        if (atomic_load(&rs->owned) == 0 && atomic_compare_exchange_strong(&rs->owned, &free_, 1))
            break;
    }
    if (rs == NULL) {
        rs = calloc(1, sizeof *rs);
        if (rs == NULL)
            return NULL;
        atomic_store(&rs->owned, 1);
        struct rstream *head = atomic_load(&record_streams);
        do
            rs->next = head;
        while (!atomic_compare_exchange_weak(&record_streams, &head, rs));
    }
    rs->tid = (uint64_t)syscall(SYS_gettid);
    for (int s = 0; s < SHIM_MAX_INSTANCES; s++) {
        memset(rs->s[s].mcache, 0, sizeof rs->s[s].mcache);
        memset(rs->s[s].ccache, 0, sizeof rs->s[s].ccache);
        ST(rs->s[s].env, NULL);
    }
    record_tl = rs;
    pthread_setspecific(rs_key, rs);
    return rs;
}

/* Hand the current buffer to the writer and begin another with room for need bytes. */
static struct rbuf *swap_buf(struct rstream *rs, struct rslot *ss, int slot, size_t need)
{
    struct rbuf *old = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    if (old != NULL) {
        atomic_store_explicit(&ss->cur, NULL, memory_order_release);
        record_queue_push(old);
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

/* The slow part of rec_begin (record_int.h). */
__attribute__((noinline)) struct rslot *record_begin_slow(int slot, int code, size_t bound)
{
    if (atomic_load_explicit(&record_closing, memory_order_relaxed))
        return NULL;
    struct rstream *rs = record_tl != NULL ? record_tl : rs_claim();
    if (rs == NULL)
        return NULL;
    struct rslot *ss = &rs->s[slot];
    if (LD(ss->stream_id) == 0) {
        ST(ss->stream_id, atomic_fetch_add(&next_stream, 1));
        atomic_fetch_add_explicit(&record_files[slot].nstreams, 1, memory_order_relaxed);
    }
    size_t need = bound + 3 * REC_VARINT_MAX + (LD(ss->lost) ? 3 * REC_VARINT_MAX : 0);
    struct rbuf *b = atomic_load_explicit(&ss->cur, memory_order_relaxed);
    if (b == NULL || b->big || b->cap - (size_t)(ss->enc.p - b->data) < need) {
        b = swap_buf(rs, ss, slot, need);
        if (b == NULL) {
            if (LD(ss->lost) == 0) /* where the gap begins: no record after this one is sure */
                ST(ss->lost_after, atomic_load_explicit(&record_next_seq, memory_order_relaxed) - 1);
            INC(ss->lost);
            INC(ss->nlost);
            return NULL;
        }
    }
    if (LD(ss->lost) > 0) {
        rec_put_head(&ss->enc, REC_LOST,
                     atomic_fetch_add_explicit(&record_next_seq, 1, memory_order_relaxed));
        rec_put_u(&ss->enc, LD(ss->lost));
        rec_put_u(&ss->enc, LD(ss->lost_after));
        ST(ss->lost, 0);
    }
    rec_put_head(&ss->enc, code, atomic_fetch_add_explicit(&record_next_seq, 1, memory_order_relaxed));
    return ss;
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
    pthread_mutex_lock(&record_files[slot].names_lock);
    bool fresh = idset_add(set, id);
    pthread_mutex_unlock(&record_files[slot].names_lock);
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
        jvmti_free(g_shim.jvmti, p);
}

__attribute__((noinline)) void record_name_method_slow(int slot, jmethodID m)
{
    if (m == NULL || g_shim.jvmti == NULL)
        return;
    struct rstream *rs = record_tl;
    uintptr_t *c = rs != NULL ? &rs->s[slot].mcache[((uintptr_t)m >> 3) & (MCACHE - 1)] : NULL;
    if (c != NULL && *c == (uintptr_t)m)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return; /* JVMTI answers only threads the JVM knows: a later use names it */
    if (c != NULL)
        *c = (uintptr_t)m;
    if (!first_use(slot, &record_files[slot].methods, (uint64_t)(uintptr_t)m))
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

void record_name_class(int slot, jobjectID id)
{
    if (id == NULL || class_ref_fn == NULL || g_shim.jvmti == NULL)
        return;
    struct rstream *rs = record_tl;
    uintptr_t *c = rs != NULL ? &rs->s[slot].ccache[((uintptr_t)id >> 3) & (CCACHE - 1)] : NULL;
    if (c != NULL && *c == (uintptr_t)id)
        return;
    JNIEnv *jni = shim_current_jni();
    if (jni == NULL)
        return;
    if (c != NULL)
        *c = (uintptr_t)id;
    if (!first_use(slot, &record_files[slot].classes, (uint64_t)(uintptr_t)id))
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
void record_read_jvm(struct recfile *f)
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
void record_name_thread(int slot, JNIEnv *jni)
{
    if (jni != NULL)
        record_read_jvm(&record_files[slot]);
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
    struct recfile *f = &record_files[slot];
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
                      atomic_load(&mem_used) + len + RECORD_BUF_DATA <= record_mem_budget;
    if (d->inline_bytes || p == NULL)
        return;
    struct summing s = {.d = d, .f = &record_files[slot]};
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
            record_name_class(slot, ev->u.obj_alloc.class_id);
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
    struct rstream *rs = record_tl;
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
