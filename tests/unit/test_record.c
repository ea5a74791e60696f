/* test_record.c — the record= format (core/recfmt.c) and jvmpitrace's reader, checker and
 * diff (tools/jvmpitrace/), on files built here: no JVM. */
#include "core/api.h"
#include "core/options.h"
#include "core/recfmt.h"
#include "trace.h"
#include "unit.h"

#include <stdlib.h>

/* ---- building files ---- */

struct fbuf {
    unsigned char *p;
    size_t n, cap;
};

static void fb_put(struct fbuf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 1024;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void fb_block(struct fbuf *b, int kind, const void *d, size_t n)
{
    unsigned char h[REC_BLOCK_HDR];
    uint32_t crc = rec_crc32c(0, d, n);
    h[0] = (unsigned char)kind;
    for (int i = 0; i < 4; i++) {
        h[1 + i] = (unsigned char)(n >> (8 * i));
        h[5 + i] = (unsigned char)(crc >> (8 * i));
    }
    fb_put(b, h, sizeof h);
    fb_put(b, d, n);
}

static void fb_header(struct fbuf *b)
{
    fb_put(b, REC_MAGIC, REC_MAGIC_LEN);
    char *h = malloc(strlen(rec_schema_text()) + 256);
    sprintf(h, "jvmpishim recording\nformat %d.%d\njvm_version test\nschema \n%s", REC_FORMAT_MAJOR,
            REC_FORMAT_MINOR, rec_schema_text());
    fb_block(b, REC_BLOCK_HEADER, h, strlen(h));
    free(h);
}

/* A thread's buffer: records go in with the shim's own encoder. */
struct tbuf {
    unsigned char data[1 << 16];
    struct rec_enc e;
    uint64_t stream, env;
};

static void tb_init(struct tbuf *t, uint64_t stream, uint64_t env)
{
    t->stream = stream;
    t->env = env;
    t->e = (struct rec_enc){.p = t->data, .thr = env};
}

static uint64_t seq_next = 1;

static void tb_event(struct tbuf *t, const JVMPI_Event *ev)
{
    rec_put_event(&t->e, seq_next++, ev, NULL);
}

static void tb_method(struct tbuf *t, int type, uint64_t env, uint64_t m)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = type;
    ev.env_id = (JNIEnv *)(uintptr_t)env;
    ev.u.method.method_id = (jmethodID)(uintptr_t)m;
    tb_event(t, &ev);
}

static void tb_simple(struct tbuf *t, int type, uint64_t env)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = type;
    ev.env_id = (JNIEnv *)(uintptr_t)env;
    tb_event(t, &ev);
}

/* A call and its return, as the trampolines record them: EnableEvent(t) -> rc. */
static void tb_enable(struct tbuf *t, int type, int rc)
{
    rec_put_head(&t->e, REC_CALL + 0, seq_next++);
    rec_put_i(&t->e, type);
    rec_put_p(&t->e, NULL);
    rec_put_head(&t->e, REC_RET + 0, seq_next++);
    rec_put_i(&t->e, rc);
}

/* Bytes [from, to) of a thread's buffer as one chunk. */
static void fb_chunk(struct fbuf *b, struct tbuf *t, size_t from, size_t to)
{
    unsigned char ch[64];
    struct rec_enc e = {.p = ch};
    rec_put_u(&e, t->stream);
    rec_put_u(&e, 1);
    rec_put_u(&e, from);
    rec_put_u(&e, t->env);
    rec_put_u(&e, 100 + t->stream);
    size_t hl = (size_t)(e.p - ch);
    unsigned char *pl = malloc(hl + (to - from) + 1);
    memcpy(pl, ch, hl);
    memcpy(pl + hl, t->data + from, to - from);
    fb_block(b, REC_BLOCK_CHUNK, pl, hl + (to - from));
    free(pl);
}

static void fb_end(struct fbuf *b)
{
    const char *e = "ended JVM_SHUT_DOWN\nnormal yes\n";
    fb_block(b, REC_BLOCK_END, e, strlen(e));
}

static size_t tb_len(struct tbuf *t) { return (size_t)(t->e.p - t->data); }

/* ---- tests ---- */

static void test_checksums(void)
{
    const char *s = "123456789";
    CHECK(rec_crc32c(0, s, 9) == 0xE3069283u, "CRC-32C check value: %08x", rec_crc32c(0, s, 9));
    CHECK(rec_crc32c_sw(0, s, 9) == 0xE3069283u, "table CRC-32C check value");
    unsigned char big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (unsigned char)(i * 7);
    CHECK(rec_crc32c(0, big, 1000) == rec_crc32c_sw(0, big, 1000), "instruction = table");
    CHECK(rec_crc32c(rec_crc32c(0, big, 333), big + 333, 667) == rec_crc32c(0, big, 1000), "incremental");
    CHECK(rec_xxh64("", 0) == 0xEF46DB3751D8E999ull, "XXH64 of nothing");
    CHECK(rec_xxh64("a", 1) == 0xD24EC4F1A98C6E5Bull, "XXH64 of a");
    CHECK(rec_xxh64("abc", 3) == 0x44BC2CF5AD770999ull, "XXH64 of abc");
    unsigned char r100[100];
    for (int i = 0; i < 100; i++)
        r100[i] = (unsigned char)i;
    CHECK(rec_xxh64(r100, 100) == 0x6ac1e58032166597ull, "XXH64 of 0..99");
    CHECK(rec_xxh64(big, 1000) == 0x25275608a9cfc168ull, "XXH64 of 1000 bytes");
}

static void test_names_and_schema(void)
{
    /* The schema's functions are core/api.h's, in table order. */
    static const char *const api[] = {
#define N_X(ret, name, params, args) #name,
#define N_V(name, params, args) #name,
        JVMPI_FUNCTIONS(N_X, N_V)
#undef N_X
#undef N_V
    };
    CHECK_EQ_INT(sizeof api / sizeof api[0], REC_NUM_FNS);
    for (int i = 0; i < REC_NUM_FNS; i++)
        CHECK_STR(rec_fn_name(i), api[i]);
    CHECK_STR(rec_event_name(JVMPI_EVENT_METHOD_ENTRY), "METHOD_ENTRY");
    CHECK_STR(rec_event_name(JVMPI_EVENT_GC_FINISH), "GC_FINISH");
    CHECK(rec_event_name(12) == NULL, "no event 12");
    CHECK_EQ_INT(rec_event_code(JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT), 42 + REC_REQUESTED);
    CHECK_EQ_INT(rec_event_code(36), -1);
    /* The file's schema parses, and names every code the shim writes. */
    struct fbuf b = {0};
    fb_header(&b);
    struct tr_file *f = tr_open_mem(b.p, b.n, "schema");
    CHECK(f != NULL && f->fatal[0] == '\0', "header parses: %s", f ? f->fatal : "NULL");
    CHECK(f->types[JVMPI_EVENT_CLASS_LOAD] != NULL && f->types[42]->fidx[F_METHODS] >= 0, "CLASS_LOAD has methods");
    CHECK(f->types[REC_CALL + 3] != NULL && strcmp(f->types[REC_CALL + 3]->name, "CALL:GetCallTrace") == 0, "CALL:GetCallTrace");
    CHECK(f->types[REC_LOST] != NULL && f->types[REC_EVENT_DONE] != NULL, "own records");
    CHECK(f->status == TR_OK && !f->has_end, "a header alone: no end");
    tr_close(f);
    free(b.p);
}

/* Every field the shim's own schema names with a key is bound to that key. */
static int unbound_keys(const struct tr_field *fs, int n, const signed char *idx)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < NFK; k++)
            if (strcmp(fs[i].name, fk_names[k]) == 0 && idx[k] != i)
                bad++;
        if (fs[i].type == '[')
            bad += unbound_keys(fs[i].sub, fs[i].nsub, fs[i].sidx);
    }
    return bad;
}

static void test_key_binding(void)
{
    struct fbuf b = {0};
    fb_header(&b);
    struct tr_file *f = tr_open_mem(b.p, b.n, "schema");
    int bad = 0, types = 0;
    for (int c = 0; c < 256; c++)
        if (f->types[c] != NULL) {
            bad += unbound_keys(f->types[c]->f, f->types[c]->nf, f->types[c]->fidx);
            types++;
        }
    CHECK(types > 100 && bad == 0, "%d fields of the shim's schema not bound to their key", bad);
    tr_close(f);
    free(b.p);
    /* A header that gives known names other kinds of value (a damaged or foreign file):
     * those fields stay unbound, so no command reads a number as a name or a list. The
     * same name as a list at the top and a number inside it (status) binds in both. */
    const char *schema = "rec 33 THREAD_START env:t thread_name:i group_name:s parent_name:[x:i]\n"
                         "rec 59 MONITOR_DUMP env:t status:[status:i]\n"
                         "rec 61 GC_FINISH env:s used_objects:i\n";
    struct fbuf c = {0};
    fb_put(&c, REC_MAGIC, REC_MAGIC_LEN);
    char h[512];
    snprintf(h, sizeof h, "jvmpishim recording\nformat %d.%d\nschema \n%s", REC_FORMAT_MAJOR,
             REC_FORMAT_MINOR, schema);
    fb_block(&c, REC_BLOCK_HEADER, h, strlen(h));
    f = tr_open_mem(c.p, c.n, "foreign");
    CHECK(f->fatal[0] == '\0', "header parses: %s", f->fatal);
    const struct tr_type *ts = f->types[JVMPI_EVENT_THREAD_START];
    CHECK(ts != NULL && ts->fidx[F_THREAD_NAME] < 0 && ts->fidx[F_PARENT_NAME] < 0 &&
              ts->fidx[F_GROUP_NAME] == 2 && ts->fidx[F_ENV] == 0,
          "a number or a list where a name belongs is not bound");
    const struct tr_type *md = f->types[JVMPI_EVENT_MONITOR_DUMP];
    CHECK(md != NULL && md->fidx[F_STATUS] == 1 && md->f[1].sidx[F_STATUS] == 0,
          "status: a list at the top, a number inside it");
    const struct tr_type *gc = f->types[JVMPI_EVENT_GC_FINISH];
    CHECK(gc != NULL && gc->fidx[F_ENV] < 0 && gc->fidx[F_USED_OBJECTS] == 1,
          "a string where a thread belongs is not bound");
    tr_close(f);
    free(c.p);
}

static void test_options(void)
{
    struct shim_options o;
    char err[256];
    CHECK(options_parse("record=/tmp/x.jvmpirec,legacy=/a/libx.so", &o, err, sizeof err) == 0, "%s", err);
    CHECK_STR(o.record_file, "/tmp/x.jvmpirec");
    options_free(&o);
    CHECK(options_parse("record=,legacy=x", &o, err, sizeof err) != 0, "record= without a path");
    CHECK(strstr(err, "record= needs a path") != NULL, "%s", err);
    CHECK(options_parse("record", &o, err, sizeof err) != 0 && strstr(err, "without its value") != NULL,
          "record cut at '=': %s", err);
}

/* Two threads, interleaved; one buffer split across two chunks. */
static struct fbuf two_threads(bool end)
{
    static struct tbuf t1, t2;
    struct fbuf b = {0};
    seq_next = 1;
    fb_header(&b);
    tb_init(&t1, 1, 0x1000);
    tb_init(&t2, 2, 0x2000);
    tb_enable(&t1, JVMPI_EVENT_METHOD_ENTRY, 0);
    tb_enable(&t1, JVMPI_EVENT_METHOD_EXIT, 0);
    tb_enable(&t1, JVMPI_EVENT_CLASS_LOAD, 0);
    tb_enable(&t1, JVMPI_EVENT_JVM_INIT_DONE, 0);
    JVMPI_Method ms[2] = {{"run", "()V", 10, 20, (jmethodID)(uintptr_t)0x500},
                          {"<init>", "(I)V", 3, 4, (jmethodID)(uintptr_t)0x508}};
    JVMPI_Field st[1] = {{"count", "I"}};
    JVMPI_Event cl;
    memset(&cl, 0, sizeof cl);
    cl.event_type = JVMPI_EVENT_CLASS_LOAD;
    cl.env_id = (JNIEnv *)(uintptr_t)0x1000;
    cl.u.class_load.class_name = "demo.Work";
    cl.u.class_load.source_name = "Work.java";
    cl.u.class_load.num_methods = 2;
    cl.u.class_load.methods = ms;
    cl.u.class_load.num_static_fields = 1;
    cl.u.class_load.statics = st;
    cl.u.class_load.class_id = (jobjectID)(uintptr_t)0x7000;
    tb_event(&t1, &cl);
    tb_simple(&t1, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    size_t cut = tb_len(&t1);
    for (int i = 0; i < 3; i++) {
        tb_method(&t2, JVMPI_EVENT_METHOD_ENTRY, 0x2000, 0x500);
        tb_method(&t1, JVMPI_EVENT_METHOD_ENTRY, 0x1000, 0x508);
        tb_method(&t1, JVMPI_EVENT_METHOD_EXIT, 0x1000, 0x508);
        tb_method(&t2, JVMPI_EVENT_METHOD_EXIT, 0x2000, 0x500);
    }
    fb_chunk(&b, &t1, 0, cut);
    fb_chunk(&b, &t2, 0, tb_len(&t2));
    fb_chunk(&b, &t1, cut, tb_len(&t1)); /* continues thread 1's buffer */
    if (end)
        fb_end(&b);
    return b;
}

static void test_read_merged(void)
{
    struct fbuf b = two_threads(true);
    struct tr_file *f = tr_open_mem(b.p, b.n, "two");
    CHECK(f->status == TR_OK && f->has_end && f->nstreams == 2 && f->nchunks == 3, "indexed");
    struct tr_iter *it = tr_iter_new(f);
    struct tr_rec r;
    uint64_t last = 0, n = 0, entries = 0;
    bool order = true, cl_ok = false;
    while (tr_next(it, &r)) {
        order &= r.seq == last + 1;
        last = r.seq;
        n++;
        if (r.code == JVMPI_EVENT_METHOD_ENTRY) {
            entries++;
            uint64_t want = tr_u(&r, F_ENV) == 0x1000 ? 0x508 : 0x500;
            CHECK(tr_u(&r, F_METHOD) == want, "method id %llx", (unsigned long long)tr_u(&r, F_METHOD));
        }
        if (r.code == JVMPI_EVENT_CLASS_LOAD) {
            const struct tr_val *cn = tr_get(&r, F_CLASS_NAME), *ms = tr_get(&r, F_METHODS);
            const struct tr_field *mf = tr_field_of(&r, F_METHODS);
            cl_ok = cn && cn->len == 9 && memcmp(cn->s, "demo.Work", 9) == 0 && ms && ms->n == 2 &&
                    tr_item(mf, ms, 1, F_METHOD)->u == 0x508 && tr_item(mf, ms, 0, F_START_LINE)->i == 10 &&
                    tr_u(&r, F_CLASS) == 0x7000 && tr_get(&r, F_STATICS)->n == 1;
        }
    }
    CHECK(order, "records in sequence order across threads and chunks");
    CHECK_EQ_INT(n, seq_next - 1);
    CHECK_EQ_INT(entries, 6);
    CHECK(cl_ok, "CLASS_LOAD decoded field by field");
    tr_iter_free(it);
    /* Names: the method named by CLASS_LOAD. */
    struct tr_names nm;
    tr_names_load(f, &nm);
    char buf[256];
    CHECK_STR(tr_method_name(&nm, 0x500, buf, sizeof buf), "demo.Work.run()V");
    CHECK_STR(tr_class_name(&nm, 0x7000, buf, sizeof buf), "demo.Work");
    tr_names_free(&nm);
    static char out[8192];
    FILE *fp = fmemopen(out, sizeof out, "w");
    struct check_opts co = {.out = fp, .max_per_rule = 5};
    int rc = tr_check(f, &co);
    fclose(fp);
    CHECK(rc == 0, "the contract held:\n%s", out);
    tr_close(f);
    free(b.p);
}

/* Cut anywhere: never a crash; whole blocks are read, the cut is named. */
static void test_truncated(void)
{
    struct fbuf b = two_threads(true);
    uint64_t prev = 0;
    bool mono = true, named = true;
    for (size_t len = 0; len <= b.n; len++) {
        unsigned char *copy = malloc(len ? len : 1);
        memcpy(copy, b.p, len);
        struct tr_file *f = tr_open_mem(copy, len, "cut");
        uint64_t n = 0;
        if (f->fatal[0] == '\0') {
            struct tr_iter *it = tr_iter_new(f);
            struct tr_rec r;
            while (tr_next(it, &r))
                n++;
            tr_iter_free(it);
            if (len < b.n && !f->has_end && f->status == TR_OK) {
                /* a cut exactly between blocks: valid, only without its end */
            } else if (len < b.n && f->status != TR_TRUNCATED && !f->has_end) {
                named = false;
            }
        }
        mono &= n >= prev || len < 100;
        if (f->fatal[0] == '\0')
            prev = n;
        tr_close(f);
        free(copy);
    }
    CHECK(mono, "a longer prefix reads as many records or more");
    CHECK(named, "a cut inside a block is reported as truncated");
    free(b.p);
}

static void test_damaged(void)
{
    struct fbuf b = two_threads(true);
    /* A byte of the second chunk's records flipped: its CRC fails, the file stops there. */
    struct tr_file *f = tr_open_mem(b.p, b.n, "ok");
    size_t off = f->chunks[1].off, at = f->chunks[1].data + 3;
    tr_close(f);
    b.p[at] ^= 0x40;
    f = tr_open_mem(b.p, b.n, "damaged");
    CHECK(f->status == TR_DAMAGED && f->err_off == off, "damage at offset %zu: %s", f->err_off, f->err);
    CHECK(strstr(f->err, "checksum") != NULL, "the message says why: %s", f->err);
    CHECK_EQ_INT(f->nchunks, 1);
    tr_close(f);
    /* Not a recording at all. */
    f = tr_open_mem((const unsigned char *)"hello", 5, "text");
    CHECK(f->fatal[0] != '\0', "not a recording: %s", f->fatal);
    tr_close(f);
    free(b.p);
    /* A record code the schema does not have, with a valid CRC: the stream stops, named. */
    struct fbuf c = {0};
    struct tbuf t;
    fb_header(&c);
    tb_init(&t, 1, 0x1000);
    tb_simple(&t, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    t.e.p[0] = 0x7f; /* code 127: not in the schema */
    t.e.p[1] = 0x01;
    t.e.p += 2;
    fb_chunk(&c, &t, 0, tb_len(&t));
    f = tr_open_mem(c.p, c.n, "badcode");
    struct tr_iter *it = tr_iter_new(f);
    struct tr_rec r;
    int n = 0;
    while (tr_next(it, &r))
        n++;
    tr_iter_free(it);
    CHECK(n == 1 && f->status == TR_DAMAGED && strstr(f->err, "not in the schema") != NULL, "%d %s", n, f->err);
    tr_close(f);
    free(c.p);
    /* A thread's second buffer whose first record is numbered before the first buffer's
     * last (each buffer counts its deltas from 0): the stream stops there, named, and the
     * merged records never go back in sequence. */
    struct fbuf d = {0};
    static struct tbuf b1, b2;
    fb_header(&d);
    tb_init(&b1, 1, 0x1000);
    tb_init(&b2, 1, 0x1000);
    seq_next = 10;
    tb_simple(&b1, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    tb_simple(&b1, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    seq_next = 5;
    tb_simple(&b2, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    fb_chunk(&d, &b1, 0, tb_len(&b1));
    fb_chunk(&d, &b2, 0, tb_len(&b2));
    f = tr_open_mem(d.p, d.n, "backwards");
    it = tr_iter_new(f);
    n = 0;
    uint64_t last = 0;
    bool mono = true;
    while (tr_next(it, &r)) {
        mono = mono && r.seq > last;
        last = r.seq;
        n++;
    }
    tr_iter_free(it);
    CHECK(n == 2 && mono, "the records before the step back, in order: %d", n);
    CHECK(f->status == TR_DAMAGED && strstr(f->err, "does not come after") != NULL, "%s", f->err);
    tr_close(f);
    free(d.p);
}

/* A file whose records break rules; tr_check must name each. */
static int check_output(struct fbuf *b, char *out, size_t len)
{
    struct tr_file *f = tr_open_mem(b->p, b->n, "rules");
    FILE *fp = fmemopen(out, len, "w");
    struct check_opts co = {.out = fp, .max_per_rule = 5};
    int rc = tr_check(f, &co);
    fclose(fp);
    tr_close(f);
    return rc;
}

static void test_check_rules(void)
{
    static char out[16384];
    static struct tbuf t;
    struct fbuf b = {0};
    seq_next = 1;
    fb_header(&b);
    tb_init(&t, 1, 0x1000);
    tb_enable(&t, JVMPI_EVENT_METHOD_ENTRY, 0);
    tb_enable(&t, JVMPI_EVENT_METHOD_EXIT, 0);
    tb_enable(&t, JVMPI_EVENT_GC_START, 0);
    tb_enable(&t, JVMPI_EVENT_GC_FINISH, 0);
    tb_enable(&t, JVMPI_EVENT_OBJECT_FREE, 0);
    tb_enable(&t, JVMPI_EVENT_JVM_SHUT_DOWN, 0);
    tb_enable(&t, JVMPI_EVENT_JVM_INIT_DONE, 0);
    tb_simple(&t, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    tb_method(&t, JVMPI_EVENT_METHOD_ENTRY, 0x1000, 0x500);
    tb_method(&t, JVMPI_EVENT_METHOD_ENTRY, 0x1000, 0x508);
    tb_method(&t, JVMPI_EVENT_METHOD_EXIT, 0x1000, 0x500); /* leaves the wrong one */
    JVMPI_Event fr;
    memset(&fr, 0, sizeof fr);
    fr.event_type = JVMPI_EVENT_OBJECT_FREE;
    fr.env_id = (JNIEnv *)(uintptr_t)0x1000;
    fr.u.obj_free.obj_id = (jobjectID)(uintptr_t)0x9990;
    tb_event(&t, &fr); /* outside a bracket, and never handed out */
    tb_simple(&t, JVMPI_EVENT_GC_FINISH, 0x1000); /* no GC_START */
    tb_simple(&t, JVMPI_EVENT_JVM_SHUT_DOWN, 0x1000);
    rec_put_head(&t.e, REC_EVENT_DONE, seq_next++);
    rec_put_i(&t.e, JVMPI_EVENT_JVM_SHUT_DOWN);
    tb_simple(&t, JVMPI_EVENT_GC_START, 0x1000); /* after shutdown */
    tb_simple(&t, JVMPI_EVENT_MONITOR_WAIT, 0x1000); /* never enabled */
    fb_chunk(&b, &t, 0, tb_len(&t));
    fb_end(&b);
    memset(out, 0, sizeof out);
    CHECK_EQ_INT(check_output(&b, out, sizeof out), 1);
    CHECK(strstr(out, "VIOLATION nesting: METHOD_EXIT of method@0x500") != NULL, "nesting:\n%s", out);
    CHECK(strstr(out, "VIOLATION gc-bracket: OBJECT_FREE outside") != NULL, "free outside GC");
    CHECK(strstr(out, "VIOLATION free: obj@0x9990 was never handed out") != NULL, "free of an unknown id");
    CHECK(strstr(out, "VIOLATION gc-bracket: GC_FINISH without GC_START") != NULL, "GC_FINISH alone");
    CHECK(strstr(out, "VIOLATION shutdown: GC_START after JVM_SHUT_DOWN") != NULL, "event after shutdown");
    CHECK(strstr(out, "VIOLATION enabled: MONITOR_WAIT, a type not enabled") != NULL, "type not enabled");
    CHECK(strstr(out, "#8 ") != NULL || strstr(out, "[thread@0x1000]") != NULL, "records named by sequence and thread");
    CHECK(strstr(out, "checked ") != NULL && strstr(out, " violations") != NULL, "summary line");
    free(b.p);

    /* Definitions: CLASS_LOAD and THREAD_START enabled in JVM_OnLoad make them judged. */
    b = (struct fbuf){0};
    seq_next = 1;
    fb_header(&b);
    tb_init(&t, 1, 0x1000);
    tb_enable(&t, JVMPI_EVENT_CLASS_LOAD, 0);
    tb_enable(&t, JVMPI_EVENT_THREAD_START, 0);
    tb_enable(&t, JVMPI_EVENT_METHOD_ENTRY, 0);
    tb_enable(&t, JVMPI_EVENT_JVM_INIT_DONE, 0);
    JVMPI_Event ts;
    memset(&ts, 0, sizeof ts);
    ts.event_type = JVMPI_EVENT_THREAD_START;
    ts.env_id = (JNIEnv *)(uintptr_t)0x1000;
    ts.u.thread_start.thread_name = "main";
    ts.u.thread_start.thread_env_id = (JNIEnv *)(uintptr_t)0x1000;
    tb_event(&t, &ts);
    tb_simple(&t, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    tb_method(&t, JVMPI_EVENT_METHOD_ENTRY, 0x1000, 0x777); /* no CLASS_LOAD lists it */
    tb_method(&t, JVMPI_EVENT_METHOD_ENTRY, 0x3000, 0x777); /* no THREAD_START for 0x3000 */
    fb_chunk(&b, &t, 0, tb_len(&t));
    fb_end(&b);
    memset(out, 0, sizeof out);
    CHECK_EQ_INT(check_output(&b, out, sizeof out), 1);
    CHECK(strstr(out, "VIOLATION method-defined: METHOD_ENTRY method@0x777 is listed by no CLASS_LOAD") != NULL,
          "undefined method:\n%s", out);
    CHECK(strstr(out, "VIOLATION thread-defined: METHOD_ENTRY names thread thread@0x3000, which had no THREAD_START") != NULL,
          "undefined thread");
    CHECK(strstr(out, "not checked: object-defined") != NULL, "what was not checked is said");
    free(b.p);
}

static void test_diff(void)
{
    struct fbuf a = two_threads(true), b = two_threads(true);
    struct tr_file *fa = tr_open_mem(a.p, a.n, "A"), *fb = tr_open_mem(b.p, b.n, "B");
    static char out[16384];
    FILE *fp = fmemopen(out, sizeof out, "w");
    struct diff_opts o = {.out = fp, .max_lines = 10, .context = 2};
    CHECK_EQ_INT(tr_diff(fa, fb, &o), 0);
    fclose(fp);
    CHECK(strstr(out, "the same in names and counts") != NULL, "%s", out);
    tr_close(fb);
    free(b.p);
    /* One more METHOD_ENTRY of run() on a thread: counts and the thread's stream differ. */
    static struct tbuf t;
    b = two_threads(false);
    tb_init(&t, 1, 0x1000);
    t.e.seq = 0;
    tb_method(&t, JVMPI_EVENT_METHOD_ENTRY, 0x1000, 0x500);
    /* the same thread stream, a new buffer: generation 2 */
    unsigned char ch[64];
    struct rec_enc e = {.p = ch};
    rec_put_u(&e, 1);
    rec_put_u(&e, 2);
    rec_put_u(&e, 0);
    rec_put_u(&e, 0x1000);
    rec_put_u(&e, 101);
    unsigned char pl[256];
    size_t hl = (size_t)(e.p - ch);
    memcpy(pl, ch, hl);
    memcpy(pl + hl, t.data, tb_len(&t));
    fb_block(&b, REC_BLOCK_CHUNK, pl, hl + tb_len(&t));
    fb_end(&b);
    fb = tr_open_mem(b.p, b.n, "B");
    memset(out, 0, sizeof out);
    fp = fmemopen(out, sizeof out, "w");
    o.out = fp;
    CHECK_EQ_INT(tr_diff(fa, fb, &o), 1);
    fclose(fp);
    CHECK(strstr(out, "METHOD_ENTRY demo.Work.run()V: 3 -> 4 (+1)") != NULL, "per method:\n%s", out);
    CHECK(strstr(out, "METHOD_ENTRY: 6 -> 7 (+1)") != NULL, "per event kind");
    CHECK(strstr(out, "B: METHOD_ENTRY demo.Work.run()V") != NULL || strstr(out, "B #") != NULL,
          "where the streams part");
    /* Leaving the event kind out makes them the same. */
    memset(out, 0, sizeof out);
    fp = fmemopen(out, sizeof out, "w");
    o.out = fp;
    o.ignore_event[JVMPI_EVENT_METHOD_ENTRY] = true;
    CHECK_EQ_INT(tr_diff(fa, fb, &o), 0);
    fclose(fp);
    tr_close(fa);
    tr_close(fb);
    free(a.p);
    free(b.p);
}

int main(void)
{
    test_checksums();
    test_names_and_schema();
    test_key_binding();
    test_options();
    test_read_merged();
    test_truncated();
    test_damaged();
    test_check_rules();
    test_diff();
    return UNIT_END();
}
