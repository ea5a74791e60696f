/* mkrecseed.c — write the synthetic seeds of fuzz/corpus/record (fuzz/mkseeds.sh runs it).
 *
 *   mkrecseed DIR
 *
 * Small record= files written with the shim's own encoder (shim/core/recfmt.c), so that the
 * fuzzer starts from every record type in well-formed files: every event with its fields
 * (CLASS_LOAD with methods and fields, a level-0 heap dump, a monitor dump, a line table, a
 * class file for CLASS_LOAD_HOOK), a call and a return of every JVMPI function, the
 * recorder's own records, two threads whose buffers are split across chunks, and the same
 * file without its end block and cut inside a block. Pointers are 64-bit.
 */
#include "core/recfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fbuf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct fbuf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 4096;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            exit(1);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void block(struct fbuf *b, int kind, const void *a, size_t an, const void *d, size_t n)
{
    unsigned char h[REC_BLOCK_HDR];
    uint32_t crc = rec_crc32c(rec_crc32c(0, a, an), d, n);
    h[0] = (unsigned char)kind;
    for (int i = 0; i < 4; i++) {
        h[1 + i] = (unsigned char)((an + n) >> (8 * i));
        h[5 + i] = (unsigned char)(crc >> (8 * i));
    }
    put(b, h, sizeof h);
    put(b, a, an);
    put(b, d, n);
}

static void header(struct fbuf *b)
{
    static char h[32768];
    snprintf(h, sizeof h, "jvmpishim recording\nformat %d.%d\nagent /opt/old/libprof.so\nagent_slot 0\n"
             "jvm_version seed\npointer_size 8\nbyte_order little\nschema \n%s",
             REC_FORMAT_MAJOR, REC_FORMAT_MINOR, rec_schema_text());
    put(b, REC_MAGIC, REC_MAGIC_LEN);
    block(b, REC_BLOCK_HEADER, h, strlen(h), NULL, 0);
}

struct thr {
    unsigned char data[1 << 16];
    struct rec_enc e;
    uint64_t stream, env, gen, from;
};

static uint64_t seq = 1;

static void thr_init(struct thr *t, uint64_t stream, uint64_t env)
{
    t->stream = stream;
    t->env = env;
    t->gen = 1;
    t->from = 0;
    t->e = (struct rec_enc){.p = t->data, .thr = env};
}

/* What the thread wrote since its last chunk, as a chunk. */
static void flush(struct fbuf *b, struct thr *t)
{
    unsigned char ch[64];
    struct rec_enc e = {.p = ch};
    size_t to = (size_t)(t->e.p - t->data);
    rec_put_u(&e, t->stream);
    rec_put_u(&e, t->gen);
    rec_put_u(&e, t->from);
    rec_put_u(&e, t->env);
    rec_put_u(&e, 4000 + t->stream);
    block(b, REC_BLOCK_CHUNK, ch, (size_t)(e.p - ch), t->data + t->from, to - t->from);
    t->from = to;
}

#define ENV(x) ((JNIEnv *)(uintptr_t)(x))
#define OBJ(x) ((jobjectID)(uintptr_t)(x))
#define MID(x) ((jmethodID)(uintptr_t)(x))

static void ev(struct thr *t, JVMPI_Event *e, const struct rec_dump *d)
{
    rec_put_event(&t->e, seq++, e, d);
}

static void simple(struct thr *t, int type, uint64_t env)
{
    JVMPI_Event e;
    memset(&e, 0, sizeof e);
    e.event_type = type;
    e.env_id = ENV(env);
    ev(t, &e, NULL);
}

static void call(struct thr *t, int fn, int64_t a, int64_t result)
{
    rec_put_head(&t->e, REC_CALL + fn, seq++);
    /* the simple shapes: one number, or none */
    if (fn <= 2) {
        rec_put_i(&t->e, a);
        rec_put_p(&t->e, NULL);
        if (fn == 2)
            rec_put_i(&t->e, -1);
    } else if (fn == 4 || fn == 8) {
        if (fn == 8)
            rec_put_p(&t->e, (void *)0x6000);
        rec_put_i(&t->e, a);
    } else if (fn == 5 || fn == 16) {
        rec_put_s(&t->e, "seed lock");
        if (fn == 16) {
            rec_put_i(&t->e, 5);
            rec_put_p(&t->e, (void *)0x401000);
        }
    } else if (fn >= 6 && fn <= 10) {
        rec_put_p(&t->e, (void *)0x6000);
    } else if ((fn >= 12 && fn <= 15) || fn == 18 || fn == 22) {
        rec_put_t(&t->e, ENV(t->env));
    } else if (fn == 17) {
        rec_put_t(&t->e, ENV(t->env));
        rec_put_p(&t->e, (void *)0x7000);
    } else if (fn == 23) {
        rec_put_m(&t->e, MID(0x9000));
    } else if (fn == 24) {
        rec_put_o(&t->e, OBJ(0x800));
    } else if (fn == 25) {
        rec_put_p(&t->e, (void *)0x5008);
    } else if (fn == 3) {
        rec_put_p(&t->e, (void *)0x7100);
        rec_put_t(&t->e, ENV(t->env));
        rec_put_i(&t->e, 8);
    } else if (fn == 26 || fn == 27) {
        rec_put_i(&t->e, 1);
        rec_put_u(&t->e, 2);
        rec_put_t(&t->e, ENV(t->env));
    }
    rec_put_head(&t->e, REC_RET + fn, seq++);
    if (fn <= 2 || fn == 11 || fn == 14 || fn == 15 || fn == 16) {
        rec_put_i(&t->e, result);
    } else if (fn == 5 || fn == 18 || fn == 24) {
        rec_put_p(&t->e, (void *)0x6000);
    } else if (fn == 22 || fn == 23 || fn == 25) {
        rec_put_o(&t->e, OBJ(fn == 23 ? 0x700 : 0x800));
    } else if (fn == 3) {
        rec_put_i(&t->e, 2);
        rec_put_u(&t->e, 3);
        rec_put_i(&t->e, 12);
        rec_put_m(&t->e, MID(0x9000));
        rec_put_i(&t->e, -3);
        rec_put_m(&t->e, MID(0x9008));
    } else if (fn == 26 || fn == 27) {
        rec_put_u(&t->e, 2);
        rec_put_i(&t->e, 0);
    }
}

static void write_file(const char *dir, const char *name, const unsigned char *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkrecseed DIR\n");
        return 2;
    }
    static struct thr a, b2;
    struct fbuf f = {0};
    header(&f);
    thr_init(&a, 1, 0x1000);
    thr_init(&b2, 2, 0x2000);
    rec_put_head(&a.e, REC_THREAD_ENV, seq++);
    rec_put_t(&a.e, ENV(0x1000));
    rec_put_head(&a.e, REC_THREAD_NAME, seq++);
    rec_put_t(&a.e, ENV(0x1000));
    rec_put_s(&a.e, "main");
    rec_put_s(&a.e, "main");
    static const int enable[] = {1, 2, 3, 4, 5, 7, 8, 33, 34, 35, 38, 39, 42, 43, 46, 47, 48, 51, 52, 53,
                                 54, 55, 56, 57, 58, 60, 61};
    for (size_t i = 0; i < sizeof enable / sizeof enable[0]; i++)
        call(&a, 0, enable[i], 0);
    call(&a, 0, 12, 1);
    JVMPI_Event e;
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_ARENA_NEW;
    e.env_id = ENV(0x1000);
    e.u.new_arena.arena_id = 1;
    e.u.new_arena.arena_name = "Java heap";
    ev(&a, &e, NULL);
    JVMPI_Method ms[2] = {{"main", "([Ljava/lang/String;)V", 5, 9, MID(0x9000)},
                          {"work", "(I)I", 11, 14, MID(0x9008)}};
    JVMPI_Field st[2] = {{"count", "I"}, {"name", "Ljava/lang/String;"}}, in[1] = {{"next", "LSeed;"}};
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_CLASS_LOAD;
    e.env_id = ENV(0x1000);
    e.u.class_load.class_name = "Seed";
    e.u.class_load.source_name = "Seed.java";
    e.u.class_load.num_methods = 2;
    e.u.class_load.methods = ms;
    e.u.class_load.num_static_fields = 2;
    e.u.class_load.statics = st;
    e.u.class_load.num_instance_fields = 1;
    e.u.class_load.instances = in;
    e.u.class_load.class_id = OBJ(0x700);
    ev(&a, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_THREAD_START;
    e.env_id = ENV(0x1000);
    e.u.thread_start.thread_name = "main";
    e.u.thread_start.group_name = "main";
    e.u.thread_start.parent_name = "system";
    e.u.thread_start.thread_id = OBJ(0x7f0);
    e.u.thread_start.thread_env_id = ENV(0x1000);
    ev(&a, &e, NULL);
    simple(&a, JVMPI_EVENT_JVM_INIT_DONE, 0x1000);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_OBJECT_ALLOC;
    e.env_id = ENV(0x1000);
    e.u.obj_alloc.arena_id = 1;
    e.u.obj_alloc.class_id = OBJ(0x700);
    e.u.obj_alloc.size = 24;
    e.u.obj_alloc.obj_id = OBJ(0x800);
    ev(&a, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_METHOD_ENTRY2;
    e.env_id = ENV(0x1000);
    e.u.method_entry2.method_id = MID(0x9008);
    e.u.method_entry2.obj_id = OBJ(0x800);
    ev(&a, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_METHOD_ENTRY;
    e.env_id = ENV(0x1000);
    e.u.method.method_id = MID(0x9008);
    ev(&a, &e, NULL);
    for (int fn = 3; fn < REC_NUM_FNS; fn++)
        if (fn != 4)
            call(&a, fn, 0, 0);
    e.event_type = JVMPI_EVENT_METHOD_EXIT;
    ev(&a, &e, NULL);
    /* Thread 2 runs meanwhile: a buffer of its own, flushed in two chunks. */
    rec_put_head(&b2.e, REC_THREAD_ENV, seq++);
    rec_put_t(&b2.e, ENV(0x2000));
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_THREAD_START;
    e.env_id = ENV(0x2000);
    e.u.thread_start.thread_name = "worker";
    e.u.thread_start.group_name = "main";
    e.u.thread_start.parent_name = "system";
    e.u.thread_start.thread_id = OBJ(0x7f8);
    e.u.thread_start.thread_env_id = ENV(0x2000);
    ev(&b2, &e, NULL);
    flush(&f, &b2);
    unsigned char cls[] = {0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 5, 7, 0, 2, 1, 0, 4, 'S', 'e', 'e', 'd',
                           7, 0, 4, 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b',
                           'j', 'e', 'c', 't', 0, 0x21, 0, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0};
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_CLASS_LOAD_HOOK;
    e.env_id = ENV(0x2000);
    e.u.class_load_hook.class_data = cls;
    e.u.class_load_hook.class_data_len = (jint)sizeof cls;
    ev(&b2, &e, NULL);
    rec_put_head(&b2.e, REC_HOOK_RESULT, seq++);
    rec_put_i(&b2.e, (jint)sizeof cls);
    rec_put_u(&b2.e, 1);
    rec_put_u(&b2.e, 0);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_MONITOR_CONTENDED_ENTER;
    e.env_id = ENV(0x2000);
    e.u.monitor.object = OBJ(0x800);
    ev(&b2, &e, NULL);
    e.event_type = JVMPI_EVENT_MONITOR_CONTENDED_ENTERED;
    ev(&b2, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER;
    e.env_id = ENV(0x2000);
    e.u.raw_monitor.name = "seed lock";
    e.u.raw_monitor.id = (JVMPI_RawMonitor)(uintptr_t)0x6000;
    ev(&b2, &e, NULL);
    e.event_type = JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED;
    ev(&b2, &e, NULL);
    e.event_type = JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT;
    ev(&b2, &e, NULL);
    flush(&f, &a);
    /* Compiled code, a heap dump (level 0: two records), a monitor dump, an object dump. */
    JVMPI_Lineno lines[2] = {{0, 11}, {16, 12}};
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_COMPILED_METHOD_LOAD;
    e.env_id = ENV(0x1000);
    e.u.compiled_method_load.method_id = MID(0x9008);
    e.u.compiled_method_load.code_addr = (void *)0x7f0000001000;
    e.u.compiled_method_load.code_size = 64;
    e.u.compiled_method_load.lineno_table_size = 2;
    e.u.compiled_method_load.lineno_table = lines;
    ev(&a, &e, NULL);
    unsigned char dump[18] = {JVMPI_NORMAL_OBJECT, 0, 8, 0, 0, 0, 0, 0, 0, JVMPI_CLASS, 0xf8, 7, 0, 0, 0, 0, 0, 0};
    JVMPI_CallFrame fr[1] = {{11, MID(0x9008)}};
    JVMPI_CallTrace tr[1] = {{ENV(0x1000), 1, fr}};
    struct rec_dump d = {.inline_bytes = true, .length = sizeof dump, .digest = rec_xxh64(dump, sizeof dump)};
    call(&a, 2, JVMPI_EVENT_HEAP_DUMP, 0);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT;
    e.env_id = ENV(0x1000);
    e.u.heap_dump.dump_level = 0;
    e.u.heap_dump.begin = (char *)dump;
    e.u.heap_dump.end = (char *)dump + sizeof dump;
    e.u.heap_dump.num_traces = 1;
    e.u.heap_dump.traces = tr;
    ev(&a, &e, &d);
    struct rec_dump big = {.inline_bytes = false, .length = 1u << 26, .digest = 0x1234, .nsummary = 2,
                           .summary = {{JVMPI_GC_INSTANCE_DUMP, 100000}, {JVMPI_GC_CLASS_DUMP, 700}}};
    e.u.heap_dump.dump_level = 2;
    ev(&a, &e, &big);
    unsigned char mdump[1 + 8 + 8 + 4 + 4 + 4] = {JVMPI_MONITOR_JAVA, 0, 8};
    jint status[1] = {JVMPI_THREAD_RUNNABLE};
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT;
    e.env_id = ENV(0x1000);
    e.u.monitor_dump.begin = (char *)mdump;
    e.u.monitor_dump.end = (char *)mdump + sizeof mdump;
    e.u.monitor_dump.num_traces = 1;
    e.u.monitor_dump.traces = tr;
    e.u.monitor_dump.threads_status = status;
    d.length = sizeof mdump;
    d.digest = rec_xxh64(mdump, sizeof mdump);
    ev(&a, &e, &d);
    unsigned char odump[1 + 8 + 4 + 1] = {JVMPI_GC_PRIM_ARRAY_DUMP, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, JVMPI_INT};
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT;
    e.env_id = ENV(0x1000);
    e.u.object_dump.data = (char *)odump;
    e.u.object_dump.data_len = (jint)sizeof odump;
    d.length = sizeof odump;
    d.digest = rec_xxh64(odump, sizeof odump);
    ev(&a, &e, &d);
    /* A collection: GC_START, a free, GC_FINISH; JNI references; the end. */
    simple(&a, JVMPI_EVENT_GC_START, 0x1000);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_OBJECT_FREE;
    e.env_id = ENV(0x1000);
    e.u.obj_free.obj_id = OBJ(0x800);
    ev(&a, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_GC_FINISH;
    e.env_id = ENV(0x1000);
    e.u.gc_info.used_objects = 10;
    e.u.gc_info.used_object_space = 1000;
    e.u.gc_info.total_object_space = 4096;
    ev(&a, &e, NULL);
    memset(&e, 0, sizeof e);
    e.event_type = JVMPI_EVENT_JNI_GLOBALREF_ALLOC;
    e.env_id = ENV(0x1000);
    e.u.jni_globalref_alloc.obj_id = OBJ(0x700);
    e.u.jni_globalref_alloc.ref_id = (jobject)(uintptr_t)0x5008;
    ev(&a, &e, NULL);
    e.event_type = JVMPI_EVENT_JNI_GLOBALREF_FREE;
    e.u.jni_globalref_free.ref_id = (jobject)(uintptr_t)0x5008;
    ev(&a, &e, NULL);
    rec_put_head(&b2.e, REC_LOST, seq++);
    rec_put_u(&b2.e, 3);
    rec_put_u(&b2.e, seq - 5);
    simple(&b2, JVMPI_EVENT_THREAD_END, 0x2000);
    flush(&f, &b2);
    simple(&a, JVMPI_EVENT_JVM_SHUT_DOWN, 0x1000);
    rec_put_head(&a.e, REC_EVENT_DONE, seq++);
    rec_put_i(&a.e, JVMPI_EVENT_JVM_SHUT_DOWN);
    flush(&f, &a);
    /* The writer's own stream: a thread that ended while dropping records. */
    static struct thr w;
    thr_init(&w, REC_WRITER_STREAM, 0);
    rec_put_head(&w.e, REC_DROPPED, seq++);
    rec_put_t(&w.e, ENV(0x2000));
    rec_put_u(&w.e, 2);
    rec_put_u(&w.e, 12);
    rec_put_u(&w.e, seq - 3);
    flush(&f, &w);
    size_t no_end = f.n;
    const char *end = "ended JVM_SHUT_DOWN\nnormal yes\nrecords 80\nlost 3\n";
    block(&f, REC_BLOCK_END, end, strlen(end), NULL, 0);
    write_file(argv[1], "seed-all", f.p, f.n);
    write_file(argv[1], "seed-no-end", f.p, no_end);
    write_file(argv[1], "seed-cut", f.p, no_end - 40);
    /* One damaged byte in the last chunk's records. */
    f.p[no_end - 20] ^= 0x10;
    write_file(argv[1], "seed-damaged", f.p, f.n);
    free(f.p);
    return 0;
}
