/* hprof.h — shared state of the HPROF profiler agent (the files of legacy-agents/hprof/).
 *
 * HPROF as the JVMPI specification (section 7) describes it: a JDK 1.2-1.4 profiler agent
 * that writes heap allocation sites, heap dumps, CPU samples or method times, and monitor
 * contention to a file or a socket, in ASCII or in the binary HPROF format. Written the way
 * a JDK 1.3 agent was: JVM_OnLoad, GetEnv(JVMPI_VERSION_1), one NotifyEvent switch, raw
 * monitors and CreateSystemThread; no JVMTI. The modules:
 *
 *   hprof_init.c     JVM_OnLoad, the NotifyEvent switch, start-up, dumps, shutdown
 *   hprof_opts.c     the option string and the usage text
 *   hprof_io.c       output to a file or a socket; the ASCII and binary formats (documented there)
 *   hprof_table.c    hash tables; the class, method and thread tables; names
 *   hprof_trace.c    stack traces (interning, GetCallTrace, TRACE/FRAME output)
 *   hprof_site.c     objects, allocation sites, GC brackets, arenas; SITES
 *   hprof_cpu.c      the sampler thread (cpu=samples), method times (cpu=times|old)
 *   hprof_monitor.c  monitor contention and waits; MONITOR TIME, MONITOR DUMP
 *   hprof_heapdump.c the level-2 heap dump parser; HEAP DUMP (ASCII) and heap dump segments
 *
 * Locking. One reentrant raw monitor, data_lock, guards every table and the output
 * stream. Rules that keep it deadlock-free (the sampler suspends threads, and the GC
 * bracket holds data_lock from GC_START to GC_FINISH):
 *  - a handler never holds data_lock across a JVMPI call other than the raw monitor
 *    functions, thread-local storage and GetCurrentThreadCpuTime, so a thread that the
 *    sampler suspends never holds it (threads block on their way back into the VM);
 *  - the sampler never holds data_lock while a thread is suspended, and skips the thread
 *    that is inside a GC bracket;
 *  - dump_lock serialises whole dumps (exit and SIGQUIT) and is taken before data_lock;
 *    DisableGC is called before data_lock is taken, never while holding it.
 * Names of our raw monitors start with '_', so they post no contention events.
 */
#ifndef HPROF_H
#define HPROF_H

#include <jvmpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Nothing but JVM_OnLoad leaves the library. Without this, a global such as `threads`
 * binds to a symbol of the same name in the JVM (JDK 25's libjvm.so exports one), which
 * the dynamic linker searches first. */
#pragma GCC visibility push(hidden)

#define HPROF_MAX_DEPTH 1024
#define HPROF_SAMPLE_MS 10      /* the sampler's period */

/* ---- options (hprof_opts.c) ---- */
enum { CPU_OFF, CPU_SAMPLES, CPU_TIMES, CPU_OLD };
struct hprof_opts {
    int heap_sites, heap_dump;  /* heap=sites|dump|all */
    int cpu;                    /* CPU_* */
    int monitor;                /* monitor=y */
    int binary;                 /* format=b */
    char *file;                 /* file= (default chosen by format) */
    char *net_host;             /* net=host:port */
    int net_port;
    int depth;                  /* depth= */
    double cutoff;              /* cutoff= */
    int lineno;                 /* lineno=y */
    int thread;                 /* thread=y */
    int doe;                    /* doe=y */
    int help;
};
extern struct hprof_opts opt;
int hprof_parse_options(const char *options); /* 0 ok, -1 bad (message printed) */
void hprof_usage(FILE *f);

/* ---- globals (hprof_init.c) ---- */
extern JavaVM *hprof_jvm;
extern JVMPI_Interface *jvmpi;
extern JVMPI_RawMonitor data_lock, dump_lock;
extern volatile int hprof_shutting_down;
void hprof_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define LOCK() jvmpi->RawMonitorEnter(data_lock)
#define UNLOCK() jvmpi->RawMonitorExit(data_lock)

/* ---- output (hprof_io.c); every call is made holding data_lock ---- */
int io_open(void);                  /* 0 ok, -1 (message printed) */
void io_close(void);
void io_write(const void *p, size_t n);
void io_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void io_flush(void);
void io_header(void);               /* "JAVA PROFILE 1.0.x" and what follows it */
const char *io_date(void);          /* "Wed Oct  7 11:38:10 1998", a static buffer */
/* Binary records: a growable byte buffer, big-endian helpers, and the framed write. */
struct buf {
    unsigned char *p;
    size_t len, cap;
    int oom;
};
void buf_u1(struct buf *b, unsigned v);
void buf_u2(struct buf *b, unsigned v);
void buf_u4(struct buf *b, uint32_t v);
void buf_u8(struct buf *b, uint64_t v);
void buf_id(struct buf *b, uint64_t id);    /* identifier size 8, big-endian */
void buf_bytes(struct buf *b, const void *p, size_t n);
void buf_free(struct buf *b);
void io_record(int tag, const struct buf *body);
/* Binary record tags. */
enum {
    HPROF_UTF8 = 0x01, HPROF_LOAD_CLASS = 0x02, HPROF_UNLOAD_CLASS = 0x03, HPROF_FRAME = 0x04,
    HPROF_TRACE = 0x05, HPROF_ALLOC_SITES = 0x06, HPROF_START_THREAD = 0x0A,
    HPROF_END_THREAD = 0x0B, HPROF_HEAP_DUMP = 0x0C, HPROF_CPU_SAMPLES = 0x0D,
    HPROF_CONTROL_SETTINGS = 0x0E, HPROF_HEAP_DUMP_SEGMENT = 0x1C, HPROF_HEAP_DUMP_END = 0x2C
};
/* Binary sub-record tags of a heap dump (the same numbers as JVMPI's record types). */
enum {
    HPROF_GC_ROOT_UNKNOWN = 0xFF, HPROF_GC_ROOT_JNI_GLOBAL = 0x01, HPROF_GC_ROOT_JNI_LOCAL = 0x02,
    HPROF_GC_ROOT_JAVA_FRAME = 0x03, HPROF_GC_ROOT_NATIVE_STACK = 0x04,
    HPROF_GC_ROOT_STICKY_CLASS = 0x05, HPROF_GC_ROOT_THREAD_BLOCK = 0x06,
    HPROF_GC_ROOT_MONITOR_USED = 0x07, HPROF_GC_ROOT_THREAD_OBJ = 0x08,
    HPROF_GC_CLASS_DUMP = 0x20, HPROF_GC_INSTANCE_DUMP = 0x21, HPROF_GC_OBJ_ARRAY_DUMP = 0x22,
    HPROF_GC_PRIM_ARRAY_DUMP = 0x23
};
/* UTF8 record for a string, written once; returns its id (never 0). */
uint64_t io_utf8_id(const char *s);

/* ---- tables (hprof_table.c) ---- */
/* A pointer-keyed map (open addressing). Lookups and deletions never allocate. */
struct pmap {
    uintptr_t *keys;
    uint64_t *vals;
    size_t cap, n;
};
uint64_t *pmap_get(const struct pmap *m, const void *key);
int pmap_put(struct pmap *m, const void *key, uint64_t val);   /* 0: out of memory */
int pmap_del(struct pmap *m, const void *key, uint64_t *val);  /* 1 if it was there */
uintptr_t pmap_key_at(const struct pmap *m, size_t i);          /* 0: empty slot */

int grow_array(void *arrp, size_t *cap, size_t need, size_t elem);
char *xstrdup(const char *s);
unsigned hash_str(const char *s);

struct field {
    char *name, *sig;
};
struct cls {
    jobjectID id;
    char *name;             /* as CLASS_LOAD gave it: "java.lang.String", "[I", "[Ljava.lang.Object;" */
    char *disp;             /* Java form: "java.lang.String", "int[]", "java.lang.Object[]" */
    char *bin_name;         /* binary form: "java/lang/String", "[I", "[Ljava/lang/Object;" */
    char *source;           /* "String.java" or NULL */
    unsigned serial;        /* binary class serial */
    int num_interfaces;
    int nstatics, ninst;
    struct field *statics, *inst;   /* CLASS_LOAD's order (reverse declaration) */
    int unloaded, synthetic;
    struct cls *name_next;  /* by-name chain */
    /* heap dump scratch (valid during one dump) */
    jobjectID dump_super;
    uint32_t dump_inst_size;
    int dump_seen;
    int layout_n;           /* fields of the whole chain, dump order; -1: not computed */
    char *layout_types;     /* signature chars */
    struct field **layout_fields;
};
struct frameid {
    jint lineno;
    uint64_t id;
    struct frameid *next;
};
struct meth {
    jmethodID id;
    struct cls *cls;
    char *name, *sig;
    struct frameid *frames; /* binary FRAME ids by line */
};
struct tframe {             /* cpu=times|old: one entry of a thread's shadow stack */
    jmethodID method;
    jlong start_ns;         /* thread CPU time at entry */
    jlong callee_ns;        /* time spent in callees */
};
struct thr {
    JNIEnv *env;
    unsigned serial;
    jobjectID obj;
    char *name, *group, *parent;
    int live;
    /* owned by the thread itself (touched only in its own events) */
    struct tframe *stack;
    int sp, scap;
    int contending;         /* between MONITOR_CONTENDED_ENTER and ENTERED (or the raw ones) */
    struct cls *mon_cls;    /* class of the contended Java monitor's object */
    const char *mon_raw;    /* contended raw monitor's name (interned), or NULL */
    long long mon_t0;       /* when the contention began, ns */
    struct trace *mon_trace;
    int waiting;            /* between MONITOR_WAIT and MONITOR_WAITED */
    struct cls *wait_cls;   /* class of the object waited on; NULL: Thread.sleep */
    struct trace *wait_trace;
};

extern struct pmap classes_by_id;   /* jobjectID -> struct cls * */
extern struct pmap methods_by_id;   /* jmethodID -> struct meth * */
extern struct pmap threads_by_env;  /* JNIEnv * -> struct thr * */
extern struct thr **threads;
extern size_t nthreads;
extern unsigned class_serials;

struct cls *cls_find(jobjectID id);
struct cls *cls_find_name(const char *name);  /* by CLASS_LOAD name */
struct meth *meth_find(jmethodID mid);
struct thr *thr_find(JNIEnv *env);
void on_class_load(JVMPI_Event *ev);
void on_class_unload(JVMPI_Event *ev);
void on_thread_start(JVMPI_Event *ev);
void on_thread_end(JVMPI_Event *ev);
/* Resolve unknowns by asking the VM; never call holding data_lock. */
struct cls *cls_get(jobjectID id, int gc_disabled);
struct thr *thr_get(JNIEnv *env);
void meth_resolve(jmethodID mid);
struct cls *cls_synthetic_array(struct cls *elem);  /* binary heap dump: an array class we were not told of */
const char *prim_array_name(jint ty);                /* "int[]" for JVMPI_INT, ... */
char *display_name(const char *vm_name);
char *binary_name(const char *vm_name);

/* ---- traces (hprof_trace.c) ---- */
struct trace {
    unsigned serial;
    unsigned hash;
    struct trace *next;
    struct thr *thread;     /* thread=y: the thread, else NULL */
    int nframes;
    long samples;           /* cpu=samples */
    long calls;             /* cpu=times */
    long long self_ns;      /* cpu=times */
    JVMPI_CallFrame frames[];
};
extern struct trace **traces;
extern size_t ntraces;
/* The trace of these frames (lineno=n and depth applied by the caller); NULL: no memory. */
struct trace *trace_intern(const JVMPI_CallFrame *f, int n, struct thr *t);
struct trace *trace_empty(void);
/* GetCallTrace of env, depth frames, into f; applies lineno=n; resolves unknown methods.
 * Returns the frame count. Not under data_lock. */
int trace_capture(JNIEnv *env, JVMPI_CallFrame *f, int depth);
/* What trace_capture does after GetCallTrace: lineno=n, unknown methods. Not under data_lock. */
void trace_fix(JVMPI_CallFrame *f, int n);
/* Write every trace not yet written (TRACE blocks, or FRAME+TRACE records). */
void trace_write_new(void);
void frame_write_ascii(const JVMPI_CallFrame *f);
void method_display(jmethodID mid, char *buf, size_t len);   /* "class.method" */
unsigned thread_serial_of(JNIEnv *env);

/* ---- sites (hprof_site.c) ---- */
void on_object_alloc(JVMPI_Event *ev);
void on_object_free(JVMPI_Event *ev);
void on_object_move(JVMPI_Event *ev);
void on_arena_new(JVMPI_Event *ev);
void on_arena_delete(JVMPI_Event *ev);
void on_gc_start(JVMPI_Event *ev);
void on_gc_finish(JVMPI_Event *ev);
int gc_bracket_holder(JNIEnv *env);     /* env is inside a GC bracket */
/* An object's class, allocation trace and size, if known. */
int object_info(jobjectID id, struct cls **c, jint *is_array, struct trace **t, jint *size);
/* The class of an object, asking the VM (RequestEvent OBJECT_ALLOC) if unknown. */
struct cls *object_class(jobjectID obj, int gc_disabled);
void sites_write(void);

/* ---- cpu (hprof_cpu.c) ---- */
void cpu_start_sampler(void);
void cpu_stop_sampler(void);
void on_method_entry(JVMPI_Event *ev);
void on_method_exit(JVMPI_Event *ev);
void cpu_write(void);
void cpu_reset(void);

/* ---- monitors (hprof_monitor.c) ---- */
void on_monitor_event(JVMPI_Event *ev);
void on_monitor_dump(JVMPI_Event *ev);
void monitor_time_write(void);
void monitor_reset(void);

/* ---- heap dump (hprof_heapdump.c) ---- */
void on_heap_dump(JVMPI_Event *ev);

#pragma GCC visibility pop

#endif
