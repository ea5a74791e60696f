/* jvmpi.h — the JVM Profiler Interface (JVMPI, JDK 1.2-1.4) as seen by legacy profiler agents.
 *
 * This is the JVMPI_VERSION_1_2 ABI exactly as Sun's own headers laid it out: the same names,
 * constant values, struct field order and therefore the same bytes (JVMPI_Interface is 240 bytes
 * and JVMPI_Event 88 bytes on LP64). It was written for jvmpishim from the published layout facts
 * and the JVMPI specification, so that an agent written for Sun's jvmpi.h compiles against it
 * unchanged, from C or C++, and its binary runs on the shim.
 *
 * Where the historical headers disagree, this one follows Sun's shipped headers:
 *  - instruction.u.lookupswitch_info is { jint chosen_pair_index; jint pairs_total; } (the early
 *    spec text and Kaffe have `jboolean is_default` instead); "default taken" is
 *    chosen_pair_index == pairs_total.
 *  - No JVM_OnLoad / JVM_OnUnload prototype is declared. The agent defines JVM_OnLoad itself
 *    (C++ agents inside their own extern "C" block); a declaration here with the wrong linkage
 *    would make such agents fail to compile.
 *  - The old alias names (JVMPI_EVENT_OBJ_ALLOC, ..._NEW_ARENA, ...) are provided; agents use them.
 *  - Only Sun's names and numbers: no IBM extensions, none of the non-Sun numberings.
 *
 * Conventions (from the specification): strings are UTF-8. Memory in an event belongs to the VM
 * and is valid only until NotifyEvent returns; copy what you keep. Events whose data contains a
 * jobjectID are delivered with GC disabled, and an agent must disable GC itself around any call
 * that takes or returns a jobjectID outside such a handler.
 */
#ifndef _JAVASOFT_JVMPI_H_
#define _JAVASOFT_JVMPI_H_

#include "jni.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions, passed to JavaVM GetEnv. The interface's `version` field tells what the VM
 * implements, which need not equal the version asked for (HotSpot 1.4.2 answered 1_2).
 */
#define JVMPI_VERSION_1   0x10000001  /* JDK 1.2 */
#define JVMPI_VERSION_1_1 0x10000002  /* adds jobjectID2jobject, jobject2jobjectID */
#define JVMPI_VERSION_1_2 0x10000003  /* adds SuspendThreadList, ResumeThreadList,
                                         JVMPI_EVENT_INSTRUCTION_START */

/* Results of EnableEvent, DisableEvent and RequestEvent. */
#define JVMPI_SUCCESS       0
#define JVMPI_NOT_AVAILABLE 1   /* that event type cannot be enabled/requested */
#define JVMPI_FAIL          (-1)

/* ---------------------------------------------------------------------------------------------
 * Opaque ids.
 *
 * jobjectID names a Java object (a class is named by its java.lang.Class object). It is defined
 * by OBJECT_ALLOC (or CLASS_LOAD for classes) and stays valid until OBJECT_FREE, OBJECT_MOVE or
 * ARENA_DELETE; GC may invalidate it, hence the GC-disabled rule above. A thread is named by its
 * JNIEnv * (from THREAD_START to THREAD_END), a method by its jmethodID, an arena by a jint.
 */
struct _jobjectID;
typedef struct _jobjectID *jobjectID;

/* A raw monitor: a monitor not associated with any Java object (RawMonitorCreate). */
struct _JVMPI_RawMonitor;
typedef struct _JVMPI_RawMonitor *JVMPI_RawMonitor;

/* ---------------------------------------------------------------------------------------------
 * Auxiliary structures.
 */

/* One frame of a call trace. */
typedef struct {
    jint lineno;                /* source line number (may be <= 0 if unknown) */
    jmethodID method_id;        /* the executing method */
} JVMPI_CallFrame;

/* A call trace of one thread. For GetCallTrace the agent sets env_id and allocates `frames`
 * for the requested depth; the VM fills frames (callee first, then its callers) and num_frames. */
typedef struct {
    JNIEnv *env_id;             /* the thread this trace belongs to */
    jint num_frames;            /* number of frames in the trace */
    JVMPI_CallFrame *frames;    /* the frames, innermost (callee) first */
} JVMPI_CallTrace;

/* A field declared by a class (class_load.statics / class_load.instances). */
typedef struct {
    char *field_name;           /* field name */
    char *field_signature;      /* field signature, e.g. "I" or "Ljava/lang/String;" */
} JVMPI_Field;

/* Optional argument of RequestEvent(JVMPI_EVENT_HEAP_DUMP, arg); NULL means level 2. */
typedef struct {
    jint heap_dump_level;       /* JVMPI_DUMP_LEVEL_0, _1 or _2 */
} JVMPI_HeapDumpArg;

/* Maps an offset in compiled code to a source line (compiled_method_load.lineno_table). */
typedef struct {
    jint offset;                /* offset from the start of the compiled method */
    jint lineno;                /* line number from the start of the source file */
} JVMPI_Lineno;

/* A method declared by a class (class_load.methods). */
typedef struct {
    char *method_name;          /* method name, e.g. "<init>" */
    char *method_signature;     /* method signature, e.g. "(I)V" */
    jint start_lineno;          /* first source line of the method */
    jint end_lineno;            /* last source line of the method */
    jmethodID method_id;        /* the id given to this method */
} JVMPI_Method;

/* ---------------------------------------------------------------------------------------------
 * The event record passed to NotifyEvent.
 *
 * event_type is one of the JVMPI_EVENT_* numbers, with the JVMPI_REQUESTED_EVENT bit set when
 * the event answers the agent's RequestEvent. env_id is the JNIEnv * of the thread in which
 * the event happened (for THREAD_END: the thread that is ending). Which union member is valid
 * depends on event_type, as noted per member. GC_START, JVM_INIT_DONE, JVM_SHUT_DOWN,
 * DATA_DUMP_REQUEST, DATA_RESET_REQUEST and THREAD_END carry no event-specific data.
 */
typedef struct {
    jint event_type;            /* JVMPI_EVENT_*, possibly | JVMPI_REQUESTED_EVENT */
    JNIEnv *env_id;             /* the thread where the event occurred */

    union {
        /* CLASS_LOAD: a class was loaded, or requested (arg = the class id). GC disabled.
         * The class id changes when OBJECT_MOVE moves the class object. */
        struct {
            const char *class_name;     /* name of the class */
            char *source_name;          /* name of the source file defining it */
            jint num_interfaces;        /* number of interfaces it implements */
            jint num_methods;           /* number of methods it defines */
            JVMPI_Method *methods;      /* those methods */
            jint num_static_fields;     /* number of static fields it defines */
            JVMPI_Field *statics;       /* those static fields */
            jint num_instance_fields;   /* number of instance fields it defines */
            JVMPI_Field *instances;     /* those instance fields */
            jobjectID class_id;         /* id of the class object */
        } class_load;

        /* CLASS_UNLOAD: a class is being unloaded. GC disabled. */
        struct {
            jobjectID class_id;         /* the class being unloaded */
        } class_unload;

        /* CLASS_LOAD_HOOK: class file bytes obtained, before the class is built. The agent may
         * instrument them: before returning it must set new_class_data / new_class_data_len,
         * allocating the new buffer with malloc_f (the VM frees it); to leave the class as is,
         * set them to class_data / class_data_len. */
        struct {
            unsigned char *class_data;      /* current class file bytes */
            jint class_data_len;            /* their length */
            unsigned char *new_class_data;  /* set by the agent: the class file to use */
            jint new_class_data_len;        /* set by the agent: its length */
            void *(*malloc_f)(unsigned int); /* allocator for new_class_data */
        } class_load_hook;

        /* OBJECT_ALLOC: an object was allocated, or requested (arg = the object id).
         * GC disabled. */
        struct {
            jint arena_id;              /* arena it was allocated in */
            jobjectID class_id;         /* its class, or the element class if is_array is
                                           JVMPI_CLASS */
            jint is_array;              /* JVMPI_NORMAL_OBJECT, JVMPI_CLASS (object array) or
                                           JVMPI_BOOLEAN .. JVMPI_LONG (primitive array) */
            jint size;                  /* size in bytes */
            jobjectID obj_id;           /* the new object's id */
        } obj_alloc;

        /* OBJECT_FREE: an object was freed. Sent between GC_START and GC_FINISH in thread
         * suspended mode: do not block (no monitors, no malloc); take locks in GC_START. */
        struct {
            jobjectID obj_id;           /* the freed object */
        } obj_free;

        /* OBJECT_MOVE: an object was moved in the heap (its id changes). Same constraints as
         * OBJECT_FREE. */
        struct {
            jint arena_id;              /* current arena */
            jobjectID obj_id;           /* current object id */
            jint new_arena_id;          /* new arena */
            jobjectID new_obj_id;       /* new object id */
        } obj_move;

        /* ARENA_NEW: a heap arena for object allocation was created. */
        struct {
            jint arena_id;              /* id given to the arena */
            const char *arena_name;     /* its name */
        } new_arena;

        /* ARENA_DELETE: an arena was deleted; every object in it is freed without OBJECT_FREE
         * events. Same constraints as OBJECT_FREE. */
        struct {
            jint arena_id;              /* the deleted arena */
        } delete_arena;

        /* THREAD_START: a thread started, or requested (arg = the thread object id).
         * GC disabled. (HotSpot also filled it in for THREAD_END.) */
        struct {
            char *thread_name;          /* name of the thread */
            char *group_name;           /* its thread group */
            char *parent_name;          /* name of its parent */
            jobjectID thread_id;        /* the java.lang.Thread object id */
            JNIEnv *thread_env_id;      /* the thread's JNIEnv *, its JVMPI thread id */
        } thread_start;

        /* HEAP_DUMP: only on RequestEvent (arg = JVMPI_HeapDumpArg * or NULL for level 2).
         * GC disabled. A snapshot of all live objects in [begin, end), in the format of the
         * dump level (see the JVMPI_GC_* record types below). */
        struct {
            int dump_level;             /* the level requested */
            char *begin;                /* start of the dump buffer */
            char *end;                  /* one past its end */
            jint num_traces;            /* number of stack traces holding GC roots (0 at
                                           level 0) */
            JVMPI_CallTrace *traces;    /* those traces */
        } heap_dump;

        /* JNI_GLOBALREF_ALLOC, JNI_WEAK_GLOBALREF_ALLOC: a JNI (weak) global reference was
         * created. GC disabled. */
        struct {
            jobjectID obj_id;           /* the object referred to */
            jobject ref_id;             /* the JNI global reference */
        } jni_globalref_alloc;

        /* JNI_GLOBALREF_FREE, JNI_WEAK_GLOBALREF_FREE: a JNI (weak) global reference was
         * deleted. */
        struct {
            jobject ref_id;             /* the JNI global reference */
        } jni_globalref_free;

        /* METHOD_ENTRY, METHOD_EXIT (normal return or uncaught exception). */
        struct {
            jmethodID method_id;        /* the method entered or exited */
        } method;

        /* METHOD_ENTRY2: like METHOD_ENTRY, with the receiver. GC disabled. */
        struct {
            jmethodID method_id;        /* the method entered */
            jobjectID obj_id;           /* the target object; NULL for a static method */
        } method_entry2;

        /* COMPILED_METHOD_LOAD: a method was compiled and loaded into memory. */
        struct {
            jmethodID method_id;        /* the compiled method */
            void *code_addr;            /* where its code was loaded */
            jint code_size;             /* size of the code */
            jint lineno_table_size;     /* number of entries in lineno_table */
            JVMPI_Lineno *lineno_table; /* code offset -> source line */
        } compiled_method_load;

        /* COMPILED_METHOD_UNLOAD: compiled code of a method was unloaded. */
        struct {
            jmethodID method_id;        /* the method */
        } compiled_method_unload;

        /* INSTRUCTION_START (VERSION_1_2): the interpreter is about to execute a bytecode.
         * The inner union is meaningful for conditional branches and switches only. */
        struct {
            jmethodID method_id;        /* the method executing the instruction */
            jint offset;                /* bytecode offset (bci) of the instruction */
            union {
                struct {
                    jboolean is_true;   /* if*: whether the branch is taken */
                } if_info;
                struct {
                    jint key;           /* tableswitch: the index (top of stack) */
                    jint low;           /* the lowest index of the table */
                    jint hi;            /* the highest index of the table */
                } tableswitch_info;
                struct {
                    jint chosen_pair_index; /* lookupswitch: chosen match-offset pair (0-based) */
                    jint pairs_total;       /* number of pairs; chosen_pair_index == pairs_total
                                               means the default branch was taken */
                } lookupswitch_info;
            } u;
        } instruction;

        /* MONITOR_DUMP: only on RequestEvent. GC disabled. A snapshot of all monitors in
         * [begin, end) (records JVMPI_MONITOR_JAVA / JVMPI_MONITOR_RAW). */
        struct {
            char *begin;                /* start of the dump buffer */
            char *end;                  /* one past its end */
            jint num_traces;            /* number of thread traces */
            JVMPI_CallTrace *traces;    /* traces of all threads */
            jint *threads_status;       /* status of each thread (JVMPI_THREAD_*) */
        } monitor_dump;

        /* RAW_MONITOR_CONTENDED_ENTER / _ENTERED / _EXIT: contention on a raw monitor (never
         * sent for raw monitors whose name starts with '_'). */
        struct {
            const char *name;           /* the raw monitor's name */
            JVMPI_RawMonitor id;        /* the raw monitor */
        } raw_monitor;

        /* MONITOR_CONTENDED_ENTER / _ENTERED / _EXIT: contention on a Java monitor.
         * GC disabled. */
        struct {
            jobjectID object;           /* the object whose monitor it is */
        } monitor;

        /* MONITOR_WAIT (about to wait) and MONITOR_WAITED (done waiting). GC disabled. */
        struct {
            jobjectID object;           /* the object waited on; NULL for Thread.sleep */
            jlong timeout;              /* WAIT: ms to wait, 0 = forever; WAITED: ms waited */
        } monitor_wait;

        /* GC_FINISH: a garbage collection ended (the system returns to multi-threaded mode);
         * Java heap statistics. */
        struct {
            jlong used_objects;         /* number of objects in use */
            jlong used_object_space;    /* bytes used by objects */
            jlong total_object_space;   /* total bytes of object space */
        } gc_info;

        /* OBJECT_DUMP: only on RequestEvent (arg = the object id; request with GC disabled).
         * One CLASS/INSTANCE/OBJ_ARRAY/PRIM_ARRAY_DUMP record at level-2 detail. */
        struct {
            jint data_len;              /* length of the dump */
            char *data;                 /* start of the dump */
        } object_dump;
    } u;
} JVMPI_Event;

/* ---------------------------------------------------------------------------------------------
 * The function table returned by GetEnv(JVMPI_VERSION_1*). Every entry is filled in by the VM
 * except NotifyEvent, which the agent must set before JVM_OnLoad returns.
 */

/* Body of a thread started by CreateSystemThread. */
typedef void (*jvmpi_void_function_of_void)(void *);

typedef struct {
    jint version;               /* JVMPI version implemented (see JVMPI_VERSION_*) */

    /* ---- implemented by the profiler agent ---- */

    /* Receives every enabled or requested event. */
    void (*NotifyEvent)(JVMPI_Event *event);

    /* ---- implemented by the VM ---- */

    /* Enable/disable notification of event_type (arg: event-specific, normally NULL). All
     * events start disabled. HEAP_DUMP, MONITOR_DUMP and OBJECT_DUMP cannot be enabled or
     * disabled (JVMPI_NOT_AVAILABLE): request them. */
    jint (*EnableEvent)(jint event_type, void *arg);
    jint (*DisableEvent)(jint event_type, void *arg);
    /* Deliver one event now, on this thread, before returning: HEAP_DUMP, MONITOR_DUMP,
     * OBJECT_DUMP, or the defining event CLASS_LOAD / THREAD_START / OBJECT_ALLOC of an id.
     * It arrives with JVMPI_REQUESTED_EVENT set in event_type. */
    jint (*RequestEvent)(jint event_type, void *arg);

    /* Fill trace->frames (allocated by the caller for `depth` frames) and trace->num_frames
     * for the thread trace->env_id. */
    void (*GetCallTrace)(JVMPI_CallTrace *trace, jint depth);

    /* The profiler is exiting with err_code; the VM exits with the same code. */
    void (*ProfilerExit)(jint err_code);

    /* Raw monitors. Not safe to call in thread suspended mode. Wait with ms == 0 waits
     * forever. Names starting with '_' get no contention events. */
    JVMPI_RawMonitor (*RawMonitorCreate)(char *lock_name);
    void (*RawMonitorEnter)(JVMPI_RawMonitor lock_id);
    void (*RawMonitorExit)(JVMPI_RawMonitor lock_id);
    void (*RawMonitorWait)(JVMPI_RawMonitor lock_id, jlong ms);
    void (*RawMonitorNotifyAll)(JVMPI_RawMonitor lock_id);
    void (*RawMonitorDestroy)(JVMPI_RawMonitor lock_id);

    /* CPU time consumed so far by the current thread, in nanoseconds. */
    jlong (*GetCurrentThreadCpuTime)(void);

    /* Suspend/resume a thread (independent of Thread.suspend/resume; suspending enters thread
     * suspended mode). GetThreadStatus: JVMPI_THREAD_RUNNABLE / _MONITOR_WAIT / _CONDVAR_WAIT,
     * possibly | JVMPI_THREAD_SUSPENDED / _INTERRUPTED. ThreadHasRun: whether the thread got
     * CPU time since it was last suspended with SuspendThread. */
    void (*SuspendThread)(JNIEnv *env);
    void (*ResumeThread)(JNIEnv *env);
    jint (*GetThreadStatus)(JNIEnv *env);
    jboolean (*ThreadHasRun)(JNIEnv *env);

    /* Start a daemon thread running f (priority JVMPI_*_PRIORITY); JNI_OK or JNI_ERR. Safe only
     * after JVMPI_EVENT_JVM_INIT_DONE. */
    jint (*CreateSystemThread)(char *name, jint priority, jvmpi_void_function_of_void f);

    /* One pointer-sized slot of thread-local storage per thread, for the agent. */
    void (*SetThreadLocalStorage)(JNIEnv *env_id, void *ptr);
    void *(*GetThreadLocalStorage)(JNIEnv *env_id);

    /* DisableGC/EnableGC nest. RunGC forces a full collection (never with GC disabled). */
    void (*DisableGC)(void);
    void (*EnableGC)(void);
    void (*RunGC)(void);

    /* Object ids of a thread's java.lang.Thread and of a method's defining class (call with
     * GC disabled). */
    jobjectID (*GetThreadObject)(JNIEnv *env);
    jobjectID (*GetMethodClass)(jmethodID mid);

    /* VERSION_1_1: convert between object ids and JNI references (GC must be disabled). */
    jobject (*jobjectID2jobject)(jobjectID jid);
    jobjectID (*jobject2jobjectID)(jobject jobj);

    /* VERSION_1_2: suspend/resume reqCount threads at once; results[i] receives the outcome for
     * reqList[i] as a JVMDI error code (0 = done, 10 = invalid thread, 14 = already
     * suspended). NULL when the VM does not provide them (version is then below 1_2). */
    void (*SuspendThreadList)(jint reqCount, JNIEnv **reqList, jint *results);
    void (*ResumeThreadList)(jint reqCount, JNIEnv **reqList, jint *results);
} JVMPI_Interface;

/* ---------------------------------------------------------------------------------------------
 * Event types (JVMPI_Event.event_type, EnableEvent, DisableEvent, RequestEvent).
 */
#define JVMPI_EVENT_METHOD_ENTRY                  1
#define JVMPI_EVENT_METHOD_ENTRY2                 2
#define JVMPI_EVENT_METHOD_EXIT                   3

#define JVMPI_EVENT_OBJECT_ALLOC                  4
#define JVMPI_EVENT_OBJECT_FREE                   5
#define JVMPI_EVENT_OBJECT_MOVE                   6

#define JVMPI_EVENT_COMPILED_METHOD_LOAD          7
#define JVMPI_EVENT_COMPILED_METHOD_UNLOAD        8

#define JVMPI_EVENT_INSTRUCTION_START             9   /* VERSION_1_2 */

/* 10-32 unused */

#define JVMPI_EVENT_THREAD_START                  33
#define JVMPI_EVENT_THREAD_END                    34

#define JVMPI_EVENT_CLASS_LOAD_HOOK               35

/* 36 unused */

#define JVMPI_EVENT_HEAP_DUMP                     37
#define JVMPI_EVENT_JNI_GLOBALREF_ALLOC           38
#define JVMPI_EVENT_JNI_GLOBALREF_FREE            39
#define JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC      40
#define JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE       41
#define JVMPI_EVENT_CLASS_LOAD                    42
#define JVMPI_EVENT_CLASS_UNLOAD                  43
#define JVMPI_EVENT_DATA_DUMP_REQUEST             44  /* hint: dump your data */
#define JVMPI_EVENT_DATA_RESET_REQUEST            45  /* hint: reset your data */

#define JVMPI_EVENT_JVM_INIT_DONE                 46
#define JVMPI_EVENT_JVM_SHUT_DOWN                 47

#define JVMPI_EVENT_ARENA_NEW                     48
#define JVMPI_EVENT_ARENA_DELETE                  49

#define JVMPI_EVENT_OBJECT_DUMP                   50

#define JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER   51
#define JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED 52
#define JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT    53
#define JVMPI_EVENT_MONITOR_CONTENDED_ENTER       54
#define JVMPI_EVENT_MONITOR_CONTENDED_ENTERED     55
#define JVMPI_EVENT_MONITOR_CONTENDED_EXIT        56
#define JVMPI_EVENT_MONITOR_WAIT                  57
#define JVMPI_EVENT_MONITOR_WAITED                58
#define JVMPI_EVENT_MONITOR_DUMP                  59

#define JVMPI_EVENT_GC_START                      60
#define JVMPI_EVENT_GC_FINISH                     61

#define JVMPI_MAX_EVENT_TYPE_VAL                  61

/* Old names of the same events, still used by hprof-era agents. */
#define JVMPI_EVENT_LOAD_COMPILED_METHOD          JVMPI_EVENT_COMPILED_METHOD_LOAD
#define JVMPI_EVENT_UNLOAD_COMPILED_METHOD        JVMPI_EVENT_COMPILED_METHOD_UNLOAD
#define JVMPI_EVENT_NEW_ARENA                     JVMPI_EVENT_ARENA_NEW
#define JVMPI_EVENT_DELETE_ARENA                  JVMPI_EVENT_ARENA_DELETE
#define JVMPI_EVENT_DUMP_DATA_REQUEST             JVMPI_EVENT_DATA_DUMP_REQUEST
#define JVMPI_EVENT_RESET_DATA_REQUEST            JVMPI_EVENT_DATA_RESET_REQUEST
#define JVMPI_EVENT_OBJ_ALLOC                     JVMPI_EVENT_OBJECT_ALLOC
#define JVMPI_EVENT_OBJ_FREE                      JVMPI_EVENT_OBJECT_FREE
#define JVMPI_EVENT_OBJ_MOVE                      JVMPI_EVENT_OBJECT_MOVE

/* OR-ed into event_type when the event answers RequestEvent. */
#define JVMPI_REQUESTED_EVENT                     0x10000000

/* ---------------------------------------------------------------------------------------------
 * Thread status (GetThreadStatus, monitor_dump.threads_status): one state, plus flag bits.
 */
#define JVMPI_THREAD_RUNNABLE      1
#define JVMPI_THREAD_MONITOR_WAIT  2        /* waiting to enter a monitor */
#define JVMPI_THREAD_CONDVAR_WAIT  3        /* waiting on a condition variable */

#define JVMPI_THREAD_SUSPENDED     0x8000   /* suspended by java.lang.Thread.suspend */
#define JVMPI_THREAD_INTERRUPTED   0x4000   /* interrupted */

/* Thread priorities (CreateSystemThread). */
#define JVMPI_MINIMUM_PRIORITY     1
#define JVMPI_MAXIMUM_PRIORITY     10
#define JVMPI_NORMAL_PRIORITY      5

/* ---------------------------------------------------------------------------------------------
 * Object and value types: obj_alloc.is_array, the `ty` byte of dump records, and the record
 * type of level-0 heap dumps. 4-11 equal the JVM's newarray type codes.
 */
#define JVMPI_NORMAL_OBJECT        0        /* an ordinary object (or not an array) */
#define JVMPI_CLASS                2        /* an object reference / array of objects */
#define JVMPI_BOOLEAN              4
#define JVMPI_CHAR                 5
#define JVMPI_FLOAT                6
#define JVMPI_DOUBLE               7
#define JVMPI_BYTE                 8
#define JVMPI_SHORT                9
#define JVMPI_INT                  10
#define JVMPI_LONG                 11

/* ---------------------------------------------------------------------------------------------
 * Heap dump levels (JVMPI_HeapDumpArg.heap_dump_level, heap_dump.dump_level).
 *  0: records of { u1 ty; jobjectID object } only.
 *  1: as level 2, without primitive field, static and array element values.
 *  2: GC roots and full class/instance/array records (the default).
 */
#define JVMPI_DUMP_LEVEL_0         0
#define JVMPI_DUMP_LEVEL_1         1
#define JVMPI_DUMP_LEVEL_2         2

/* ---------------------------------------------------------------------------------------------
 * Heap dump records (levels 1 and 2): a u1 record type followed by its data. u1/u2/u4/u8 are
 * big-endian; jobjectID, JNIEnv *, jobject, JVMPI_RawMonitor, char * and void * are
 * native-order, sizeof(void *) wide. vl = a value of the field's type (u1 boolean/byte,
 * u2 char/short, u4 int/float, u8 long/double, jobjectID references).
 */
#define JVMPI_GC_ROOT_UNKNOWN      0xff     /* jobjectID object */
#define JVMPI_GC_ROOT_JNI_GLOBAL   0x01     /* jobjectID object, jobject global ref */
#define JVMPI_GC_ROOT_JNI_LOCAL    0x02     /* jobjectID object, JNIEnv *thread, u4 frame depth
                                               (-1 = empty stack) */
#define JVMPI_GC_ROOT_JAVA_FRAME   0x03     /* jobjectID object, JNIEnv *thread, u4 frame depth
                                               (-1 = empty stack) */
#define JVMPI_GC_ROOT_NATIVE_STACK 0x04     /* jobjectID object, JNIEnv *thread */
#define JVMPI_GC_ROOT_STICKY_CLASS 0x05     /* jobjectID class (a system class) */
#define JVMPI_GC_ROOT_THREAD_BLOCK 0x06     /* jobjectID thread object, JNIEnv *thread */
#define JVMPI_GC_ROOT_MONITOR_USED 0x07     /* jobjectID object (an entered monitor) */
#define JVMPI_GC_ROOT_THREAD_OBJ   0x08     /* a thread object (layout never specified) */

#define JVMPI_GC_CLASS_DUMP        0x20     /* jobjectID class, super, class loader, signers,
                                               protection domain, class name (String or NULL);
                                               void *reserved; u4 instance size in bytes;
                                               [jobjectID]* interfaces; u2 constant pool size;
                                               [u2 index, ty type, vl value]*;
                                               [vl]* static field values */
#define JVMPI_GC_INSTANCE_DUMP     0x21     /* jobjectID object, jobjectID class, u4 number of
                                               bytes that follow, [vl]* instance field values
                                               (class, then super, then its super...) */
#define JVMPI_GC_OBJ_ARRAY_DUMP    0x22     /* jobjectID array, u4 number of elements,
                                               jobjectID element class (may be NULL),
                                               [jobjectID]* elements */
#define JVMPI_GC_PRIM_ARRAY_DUMP   0x23     /* jobjectID array, u4 number of elements,
                                               ty element type, [vl]* elements */

/* ---------------------------------------------------------------------------------------------
 * Monitor dump records: a u1 record type followed by
 *   JAVA: jobjectID object;
 *   RAW:  char *name, JVMPI_RawMonitor id;
 * then, for both: JNIEnv *owner, u4 entry count, u4 n, [JNIEnv *]n threads waiting to enter,
 * u4 m, [JNIEnv *]m threads waiting to be notified.
 */
#define JVMPI_MONITOR_JAVA         0x01
#define JVMPI_MONITOR_RAW          0x02

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* !_JAVASOFT_JVMPI_H_ */
