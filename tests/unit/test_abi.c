/* test_abi.c — pins include/jvmpi.h to the Sun JVMPI 1.2 ABI: every constant's value, every
 * struct's size and field offsets (LP64 figures), and the field and function-pointer types.
 *
 * Facts: /work/shared/spec/jvmpi-abi.md §5 (constants) and §6 (layouts).
 */
#include <stddef.h>

#include "jvmpi.h"
#include "unit.h"

#define OFF(type, member, expect) CHECK_EQ_INT(offsetof(type, member), expect)
#define EV(member, expect) CHECK_EQ_INT(offsetof(JVMPI_Event, member), expect)
#define FSIZE(type, member, expect) CHECK_EQ_INT(sizeof(((type *)0)->member), expect)
/* Exact type of an lvalue (after lvalue conversion), as a compile-time 0/1. */
#define HAS_TYPE(expr, T) _Generic((expr), T: 1, default: 0)
#define TYPE(expr, T) CHECK(HAS_TYPE(expr, T), "%s is not of type %s", #expr, #T)

static int is_lp64(void)
{
    return sizeof(void *) == 8 && sizeof(jlong) == 8;
}

/* ---- constants (§5) ---- */

static void test_versions_and_results(void)
{
    CHECK_EQ_INT(JVMPI_VERSION_1, 0x10000001);
    CHECK_EQ_INT(JVMPI_VERSION_1_1, 0x10000002);
    CHECK_EQ_INT(JVMPI_VERSION_1_2, 0x10000003);
    CHECK_EQ_INT(JVMPI_SUCCESS, 0);
    CHECK_EQ_INT(JVMPI_NOT_AVAILABLE, 1);
    CHECK_EQ_INT(JVMPI_FAIL, -1);
    CHECK_EQ_INT(JVMPI_REQUESTED_EVENT, 0x10000000);
    CHECK_EQ_INT(JVMPI_MAX_EVENT_TYPE_VAL, 61);
    /* usable in #if, as Sun's plain literals were */
#if JVMPI_VERSION_1_2 != 0x10000003 || JVMPI_MAX_EVENT_TYPE_VAL != 61 || JVMPI_FAIL != -1
    CHECK(0, "constants not usable in #if");
#endif
}

static void test_event_numbers(void)
{
    CHECK_EQ_INT(JVMPI_EVENT_METHOD_ENTRY, 1);
    CHECK_EQ_INT(JVMPI_EVENT_METHOD_ENTRY2, 2);
    CHECK_EQ_INT(JVMPI_EVENT_METHOD_EXIT, 3);
    CHECK_EQ_INT(JVMPI_EVENT_OBJECT_ALLOC, 4);
    CHECK_EQ_INT(JVMPI_EVENT_OBJECT_FREE, 5);
    CHECK_EQ_INT(JVMPI_EVENT_OBJECT_MOVE, 6);
    CHECK_EQ_INT(JVMPI_EVENT_COMPILED_METHOD_LOAD, 7);
    CHECK_EQ_INT(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, 8);
    CHECK_EQ_INT(JVMPI_EVENT_INSTRUCTION_START, 9);
    CHECK_EQ_INT(JVMPI_EVENT_THREAD_START, 33);
    CHECK_EQ_INT(JVMPI_EVENT_THREAD_END, 34);
    CHECK_EQ_INT(JVMPI_EVENT_CLASS_LOAD_HOOK, 35);
    CHECK_EQ_INT(JVMPI_EVENT_HEAP_DUMP, 37);
    CHECK_EQ_INT(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, 38);
    CHECK_EQ_INT(JVMPI_EVENT_JNI_GLOBALREF_FREE, 39);
    CHECK_EQ_INT(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, 40);
    CHECK_EQ_INT(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, 41);
    CHECK_EQ_INT(JVMPI_EVENT_CLASS_LOAD, 42);
    CHECK_EQ_INT(JVMPI_EVENT_CLASS_UNLOAD, 43);
    CHECK_EQ_INT(JVMPI_EVENT_DATA_DUMP_REQUEST, 44);
    CHECK_EQ_INT(JVMPI_EVENT_DATA_RESET_REQUEST, 45);
    CHECK_EQ_INT(JVMPI_EVENT_JVM_INIT_DONE, 46);
    CHECK_EQ_INT(JVMPI_EVENT_JVM_SHUT_DOWN, 47);
    CHECK_EQ_INT(JVMPI_EVENT_ARENA_NEW, 48);
    CHECK_EQ_INT(JVMPI_EVENT_ARENA_DELETE, 49);
    CHECK_EQ_INT(JVMPI_EVENT_OBJECT_DUMP, 50);
    CHECK_EQ_INT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, 51);
    CHECK_EQ_INT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, 52);
    CHECK_EQ_INT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, 53);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, 54);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, 55);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, 56);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_WAIT, 57);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_WAITED, 58);
    CHECK_EQ_INT(JVMPI_EVENT_MONITOR_DUMP, 59);
    CHECK_EQ_INT(JVMPI_EVENT_GC_START, 60);
    CHECK_EQ_INT(JVMPI_EVENT_GC_FINISH, 61);

    /* the nine old alias names */
    CHECK_EQ_INT(JVMPI_EVENT_OBJ_ALLOC, 4);
    CHECK_EQ_INT(JVMPI_EVENT_OBJ_FREE, 5);
    CHECK_EQ_INT(JVMPI_EVENT_OBJ_MOVE, 6);
    CHECK_EQ_INT(JVMPI_EVENT_LOAD_COMPILED_METHOD, 7);
    CHECK_EQ_INT(JVMPI_EVENT_UNLOAD_COMPILED_METHOD, 8);
    CHECK_EQ_INT(JVMPI_EVENT_DUMP_DATA_REQUEST, 44);
    CHECK_EQ_INT(JVMPI_EVENT_RESET_DATA_REQUEST, 45);
    CHECK_EQ_INT(JVMPI_EVENT_NEW_ARENA, 48);
    CHECK_EQ_INT(JVMPI_EVENT_DELETE_ARENA, 49);

    /* Agents switch on event_type & ~JVMPI_REQUESTED_EVENT: the numbers must be integer
     * constant expressions, distinct (a duplicate case would not compile), and none may
     * collide with the REQUESTED bit. */
    {
        int t, seen = 0;
        for (t = 0; t <= JVMPI_MAX_EVENT_TYPE_VAL; t++) {
            switch ((t | JVMPI_REQUESTED_EVENT) & ~JVMPI_REQUESTED_EVENT) {
            case JVMPI_EVENT_METHOD_ENTRY: case JVMPI_EVENT_METHOD_ENTRY2:
            case JVMPI_EVENT_METHOD_EXIT: case JVMPI_EVENT_OBJECT_ALLOC:
            case JVMPI_EVENT_OBJECT_FREE: case JVMPI_EVENT_OBJECT_MOVE:
            case JVMPI_EVENT_COMPILED_METHOD_LOAD: case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
            case JVMPI_EVENT_INSTRUCTION_START: case JVMPI_EVENT_THREAD_START:
            case JVMPI_EVENT_THREAD_END: case JVMPI_EVENT_CLASS_LOAD_HOOK:
            case JVMPI_EVENT_HEAP_DUMP: case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
            case JVMPI_EVENT_JNI_GLOBALREF_FREE: case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
            case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE: case JVMPI_EVENT_CLASS_LOAD:
            case JVMPI_EVENT_CLASS_UNLOAD: case JVMPI_EVENT_DATA_DUMP_REQUEST:
            case JVMPI_EVENT_DATA_RESET_REQUEST: case JVMPI_EVENT_JVM_INIT_DONE:
            case JVMPI_EVENT_JVM_SHUT_DOWN: case JVMPI_EVENT_ARENA_NEW:
            case JVMPI_EVENT_ARENA_DELETE: case JVMPI_EVENT_OBJECT_DUMP:
            case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
            case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
            case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
            case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
            case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: case JVMPI_EVENT_MONITOR_WAIT:
            case JVMPI_EVENT_MONITOR_WAITED: case JVMPI_EVENT_MONITOR_DUMP:
            case JVMPI_EVENT_GC_START: case JVMPI_EVENT_GC_FINISH:
                seen++;
                break;
            default:
                break;
            }
        }
        CHECK_EQ_INT(seen, 37);
    }
}

static void test_thread_codes(void)
{
    CHECK_EQ_INT(JVMPI_THREAD_RUNNABLE, 1);
    CHECK_EQ_INT(JVMPI_THREAD_MONITOR_WAIT, 2);
    CHECK_EQ_INT(JVMPI_THREAD_CONDVAR_WAIT, 3);
    CHECK_EQ_INT(JVMPI_THREAD_SUSPENDED, 0x8000);
    CHECK_EQ_INT(JVMPI_THREAD_INTERRUPTED, 0x4000);
    CHECK_EQ_INT(JVMPI_MINIMUM_PRIORITY, 1);
    CHECK_EQ_INT(JVMPI_NORMAL_PRIORITY, 5);
    CHECK_EQ_INT(JVMPI_MAXIMUM_PRIORITY, 10);
}

static void test_type_codes(void)
{
    CHECK_EQ_INT(JVMPI_NORMAL_OBJECT, 0);
    CHECK_EQ_INT(JVMPI_CLASS, 2);
    CHECK_EQ_INT(JVMPI_BOOLEAN, 4);
    CHECK_EQ_INT(JVMPI_CHAR, 5);
    CHECK_EQ_INT(JVMPI_FLOAT, 6);
    CHECK_EQ_INT(JVMPI_DOUBLE, 7);
    CHECK_EQ_INT(JVMPI_BYTE, 8);
    CHECK_EQ_INT(JVMPI_SHORT, 9);
    CHECK_EQ_INT(JVMPI_INT, 10);
    CHECK_EQ_INT(JVMPI_LONG, 11);
}

static void test_dump_codes(void)
{
    CHECK_EQ_INT(JVMPI_DUMP_LEVEL_0, 0);
    CHECK_EQ_INT(JVMPI_DUMP_LEVEL_1, 1);
    CHECK_EQ_INT(JVMPI_DUMP_LEVEL_2, 2);

    CHECK_EQ_INT(JVMPI_GC_ROOT_UNKNOWN, 0xff);
    CHECK_EQ_INT(JVMPI_GC_ROOT_JNI_GLOBAL, 0x01);
    CHECK_EQ_INT(JVMPI_GC_ROOT_JNI_LOCAL, 0x02);
    CHECK_EQ_INT(JVMPI_GC_ROOT_JAVA_FRAME, 0x03);
    CHECK_EQ_INT(JVMPI_GC_ROOT_NATIVE_STACK, 0x04);
    CHECK_EQ_INT(JVMPI_GC_ROOT_STICKY_CLASS, 0x05);
    CHECK_EQ_INT(JVMPI_GC_ROOT_THREAD_BLOCK, 0x06);
    CHECK_EQ_INT(JVMPI_GC_ROOT_MONITOR_USED, 0x07);
    CHECK_EQ_INT(JVMPI_GC_ROOT_THREAD_OBJ, 0x08);

    CHECK_EQ_INT(JVMPI_GC_CLASS_DUMP, 0x20);
    CHECK_EQ_INT(JVMPI_GC_INSTANCE_DUMP, 0x21);
    CHECK_EQ_INT(JVMPI_GC_OBJ_ARRAY_DUMP, 0x22);
    CHECK_EQ_INT(JVMPI_GC_PRIM_ARRAY_DUMP, 0x23);

    CHECK_EQ_INT(JVMPI_MONITOR_JAVA, 0x01);
    CHECK_EQ_INT(JVMPI_MONITOR_RAW, 0x02);
}

/* ---- JVMPI_Interface (§6.1) ---- */

static void test_interface_layout(void)
{
    if (!is_lp64())
        return;
    CHECK_EQ_INT(sizeof(JVMPI_Interface), 240);
    OFF(JVMPI_Interface, version, 0);
    OFF(JVMPI_Interface, NotifyEvent, 8);
    OFF(JVMPI_Interface, EnableEvent, 16);
    OFF(JVMPI_Interface, DisableEvent, 24);
    OFF(JVMPI_Interface, RequestEvent, 32);
    OFF(JVMPI_Interface, GetCallTrace, 40);
    OFF(JVMPI_Interface, ProfilerExit, 48);
    OFF(JVMPI_Interface, RawMonitorCreate, 56);
    OFF(JVMPI_Interface, RawMonitorEnter, 64);
    OFF(JVMPI_Interface, RawMonitorExit, 72);
    OFF(JVMPI_Interface, RawMonitorWait, 80);
    OFF(JVMPI_Interface, RawMonitorNotifyAll, 88);
    OFF(JVMPI_Interface, RawMonitorDestroy, 96);
    OFF(JVMPI_Interface, GetCurrentThreadCpuTime, 104);
    OFF(JVMPI_Interface, SuspendThread, 112);
    OFF(JVMPI_Interface, ResumeThread, 120);
    OFF(JVMPI_Interface, GetThreadStatus, 128);
    OFF(JVMPI_Interface, ThreadHasRun, 136);
    OFF(JVMPI_Interface, CreateSystemThread, 144);
    OFF(JVMPI_Interface, SetThreadLocalStorage, 152);
    OFF(JVMPI_Interface, GetThreadLocalStorage, 160);
    OFF(JVMPI_Interface, DisableGC, 168);
    OFF(JVMPI_Interface, EnableGC, 176);
    OFF(JVMPI_Interface, RunGC, 184);
    OFF(JVMPI_Interface, GetThreadObject, 192);
    OFF(JVMPI_Interface, GetMethodClass, 200);
    OFF(JVMPI_Interface, jobjectID2jobject, 208);
    OFF(JVMPI_Interface, jobject2jobjectID, 216);
    OFF(JVMPI_Interface, SuspendThreadList, 224);
    OFF(JVMPI_Interface, ResumeThreadList, 232);
}

static void test_interface_types(void)
{
    JVMPI_Interface f;
    memset(&f, 0, sizeof f);
    TYPE(f.version, jint);
    TYPE(f.NotifyEvent, void (*)(JVMPI_Event *));
    TYPE(f.EnableEvent, jint (*)(jint, void *));
    TYPE(f.DisableEvent, jint (*)(jint, void *));
    TYPE(f.RequestEvent, jint (*)(jint, void *));
    TYPE(f.GetCallTrace, void (*)(JVMPI_CallTrace *, jint));
    TYPE(f.ProfilerExit, void (*)(jint));
    TYPE(f.RawMonitorCreate, JVMPI_RawMonitor (*)(char *));
    TYPE(f.RawMonitorEnter, void (*)(JVMPI_RawMonitor));
    TYPE(f.RawMonitorExit, void (*)(JVMPI_RawMonitor));
    TYPE(f.RawMonitorWait, void (*)(JVMPI_RawMonitor, jlong));
    TYPE(f.RawMonitorNotifyAll, void (*)(JVMPI_RawMonitor));
    TYPE(f.RawMonitorDestroy, void (*)(JVMPI_RawMonitor));
    TYPE(f.GetCurrentThreadCpuTime, jlong (*)(void));
    TYPE(f.SuspendThread, void (*)(JNIEnv *));
    TYPE(f.ResumeThread, void (*)(JNIEnv *));
    TYPE(f.GetThreadStatus, jint (*)(JNIEnv *));
    TYPE(f.ThreadHasRun, jboolean (*)(JNIEnv *));
    TYPE(f.CreateSystemThread, jint (*)(char *, jint, void (*)(void *)));
    TYPE(f.SetThreadLocalStorage, void (*)(JNIEnv *, void *));
    TYPE(f.GetThreadLocalStorage, void *(*)(JNIEnv *));
    TYPE(f.DisableGC, void (*)(void));
    TYPE(f.EnableGC, void (*)(void));
    TYPE(f.RunGC, void (*)(void));
    TYPE(f.GetThreadObject, jobjectID (*)(JNIEnv *));
    TYPE(f.GetMethodClass, jobjectID (*)(jmethodID));
    TYPE(f.jobjectID2jobject, jobject (*)(jobjectID));
    TYPE(f.jobject2jobjectID, jobjectID (*)(jobject));
    TYPE(f.SuspendThreadList, void (*)(jint, JNIEnv **, jint *));
    TYPE(f.ResumeThreadList, void (*)(jint, JNIEnv **, jint *));
    CHECK(HAS_TYPE((jvmpi_void_function_of_void)0, void (*)(void *)),
          "jvmpi_void_function_of_void is not void (*)(void *)");
}

/* ---- JVMPI_Event (§6.2) ---- */

static void test_event_layout(void)
{
    if (!is_lp64())
        return;
    CHECK_EQ_INT(sizeof(JVMPI_Event), 88);
    FSIZE(JVMPI_Event, u, 72);
    EV(event_type, 0);
    EV(env_id, 8);
    EV(u, 16);

    EV(u.class_load, 16);
    EV(u.class_load.class_name, 16);
    EV(u.class_load.source_name, 24);
    EV(u.class_load.num_interfaces, 32);
    EV(u.class_load.num_methods, 36);
    EV(u.class_load.methods, 40);
    EV(u.class_load.num_static_fields, 48);
    EV(u.class_load.statics, 56);
    EV(u.class_load.num_instance_fields, 64);
    EV(u.class_load.instances, 72);
    EV(u.class_load.class_id, 80);
    FSIZE(JVMPI_Event, u.class_load, 72);

    EV(u.class_unload.class_id, 16);

    EV(u.class_load_hook.class_data, 16);
    EV(u.class_load_hook.class_data_len, 24);
    EV(u.class_load_hook.new_class_data, 32);
    EV(u.class_load_hook.new_class_data_len, 40);
    EV(u.class_load_hook.malloc_f, 48);

    EV(u.obj_alloc.arena_id, 16);
    EV(u.obj_alloc.class_id, 24);
    EV(u.obj_alloc.is_array, 32);
    EV(u.obj_alloc.size, 36);
    EV(u.obj_alloc.obj_id, 40);

    EV(u.obj_free.obj_id, 16);

    EV(u.obj_move.arena_id, 16);
    EV(u.obj_move.obj_id, 24);
    EV(u.obj_move.new_arena_id, 32);
    EV(u.obj_move.new_obj_id, 40);

    EV(u.new_arena.arena_id, 16);
    EV(u.new_arena.arena_name, 24);

    EV(u.delete_arena.arena_id, 16);

    EV(u.thread_start.thread_name, 16);
    EV(u.thread_start.group_name, 24);
    EV(u.thread_start.parent_name, 32);
    EV(u.thread_start.thread_id, 40);
    EV(u.thread_start.thread_env_id, 48);

    EV(u.heap_dump.dump_level, 16);
    EV(u.heap_dump.begin, 24);
    EV(u.heap_dump.end, 32);
    EV(u.heap_dump.num_traces, 40);
    EV(u.heap_dump.traces, 48);

    EV(u.jni_globalref_alloc.obj_id, 16);
    EV(u.jni_globalref_alloc.ref_id, 24);

    EV(u.jni_globalref_free.ref_id, 16);

    EV(u.method.method_id, 16);

    EV(u.method_entry2.method_id, 16);
    EV(u.method_entry2.obj_id, 24);

    EV(u.compiled_method_load.method_id, 16);
    EV(u.compiled_method_load.code_addr, 24);
    EV(u.compiled_method_load.code_size, 32);
    EV(u.compiled_method_load.lineno_table_size, 36);
    EV(u.compiled_method_load.lineno_table, 40);

    EV(u.compiled_method_unload.method_id, 16);

    EV(u.instruction.method_id, 16);
    EV(u.instruction.offset, 24);
    EV(u.instruction.u, 28);
    EV(u.instruction.u.if_info.is_true, 28);
    EV(u.instruction.u.tableswitch_info.key, 28);
    EV(u.instruction.u.tableswitch_info.low, 32);
    EV(u.instruction.u.tableswitch_info.hi, 36);
    EV(u.instruction.u.lookupswitch_info.chosen_pair_index, 28);
    EV(u.instruction.u.lookupswitch_info.pairs_total, 32);
    FSIZE(JVMPI_Event, u.instruction.u.if_info.is_true, 1);
    FSIZE(JVMPI_Event, u.instruction.u.lookupswitch_info.pairs_total, 4);
    FSIZE(JVMPI_Event, u.instruction.u, 12);
    FSIZE(JVMPI_Event, u.instruction, 24);

    EV(u.monitor_dump.begin, 16);
    EV(u.monitor_dump.end, 24);
    EV(u.monitor_dump.num_traces, 32);
    EV(u.monitor_dump.traces, 40);
    EV(u.monitor_dump.threads_status, 48);

    EV(u.raw_monitor.name, 16);
    EV(u.raw_monitor.id, 24);

    EV(u.monitor.object, 16);

    EV(u.monitor_wait.object, 16);
    EV(u.monitor_wait.timeout, 24);

    EV(u.gc_info.used_objects, 16);
    EV(u.gc_info.used_object_space, 24);
    EV(u.gc_info.total_object_space, 32);

    EV(u.object_dump.data_len, 16);
    EV(u.object_dump.data, 24);
}

static void test_event_types(void)
{
    JVMPI_Event e;
    memset(&e, 0, sizeof e);
    TYPE(e.event_type, jint);
    TYPE(e.env_id, JNIEnv *);

    TYPE(e.u.class_load.class_name, const char *);
    TYPE(e.u.class_load.source_name, char *);
    TYPE(e.u.class_load.num_interfaces, jint);
    TYPE(e.u.class_load.num_methods, jint);
    TYPE(e.u.class_load.methods, JVMPI_Method *);
    TYPE(e.u.class_load.num_static_fields, jint);
    TYPE(e.u.class_load.statics, JVMPI_Field *);
    TYPE(e.u.class_load.num_instance_fields, jint);
    TYPE(e.u.class_load.instances, JVMPI_Field *);
    TYPE(e.u.class_load.class_id, jobjectID);

    TYPE(e.u.class_unload.class_id, jobjectID);

    TYPE(e.u.class_load_hook.class_data, unsigned char *);
    TYPE(e.u.class_load_hook.class_data_len, jint);
    TYPE(e.u.class_load_hook.new_class_data, unsigned char *);
    TYPE(e.u.class_load_hook.new_class_data_len, jint);
    TYPE(e.u.class_load_hook.malloc_f, void *(*)(unsigned int));

    TYPE(e.u.obj_alloc.arena_id, jint);
    TYPE(e.u.obj_alloc.class_id, jobjectID);
    TYPE(e.u.obj_alloc.is_array, jint);
    TYPE(e.u.obj_alloc.size, jint);
    TYPE(e.u.obj_alloc.obj_id, jobjectID);

    TYPE(e.u.obj_free.obj_id, jobjectID);

    TYPE(e.u.obj_move.arena_id, jint);
    TYPE(e.u.obj_move.obj_id, jobjectID);
    TYPE(e.u.obj_move.new_arena_id, jint);
    TYPE(e.u.obj_move.new_obj_id, jobjectID);

    TYPE(e.u.new_arena.arena_id, jint);
    TYPE(e.u.new_arena.arena_name, const char *);

    TYPE(e.u.delete_arena.arena_id, jint);

    TYPE(e.u.thread_start.thread_name, char *);
    TYPE(e.u.thread_start.group_name, char *);
    TYPE(e.u.thread_start.parent_name, char *);
    TYPE(e.u.thread_start.thread_id, jobjectID);
    TYPE(e.u.thread_start.thread_env_id, JNIEnv *);

    TYPE(e.u.heap_dump.dump_level, int);
    TYPE(e.u.heap_dump.begin, char *);
    TYPE(e.u.heap_dump.end, char *);
    TYPE(e.u.heap_dump.num_traces, jint);
    TYPE(e.u.heap_dump.traces, JVMPI_CallTrace *);

    TYPE(e.u.jni_globalref_alloc.obj_id, jobjectID);
    TYPE(e.u.jni_globalref_alloc.ref_id, jobject);
    TYPE(e.u.jni_globalref_free.ref_id, jobject);

    TYPE(e.u.method.method_id, jmethodID);
    TYPE(e.u.method_entry2.method_id, jmethodID);
    TYPE(e.u.method_entry2.obj_id, jobjectID);

    TYPE(e.u.compiled_method_load.method_id, jmethodID);
    TYPE(e.u.compiled_method_load.code_addr, void *);
    TYPE(e.u.compiled_method_load.code_size, jint);
    TYPE(e.u.compiled_method_load.lineno_table_size, jint);
    TYPE(e.u.compiled_method_load.lineno_table, JVMPI_Lineno *);
    TYPE(e.u.compiled_method_unload.method_id, jmethodID);

    TYPE(e.u.instruction.method_id, jmethodID);
    TYPE(e.u.instruction.offset, jint);
    TYPE(e.u.instruction.u.if_info.is_true, jboolean);
    TYPE(e.u.instruction.u.tableswitch_info.key, jint);
    TYPE(e.u.instruction.u.tableswitch_info.low, jint);
    TYPE(e.u.instruction.u.tableswitch_info.hi, jint);
    TYPE(e.u.instruction.u.lookupswitch_info.chosen_pair_index, jint);
    TYPE(e.u.instruction.u.lookupswitch_info.pairs_total, jint);

    TYPE(e.u.monitor_dump.begin, char *);
    TYPE(e.u.monitor_dump.end, char *);
    TYPE(e.u.monitor_dump.num_traces, jint);
    TYPE(e.u.monitor_dump.traces, JVMPI_CallTrace *);
    TYPE(e.u.monitor_dump.threads_status, jint *);

    TYPE(e.u.raw_monitor.name, const char *);
    TYPE(e.u.raw_monitor.id, JVMPI_RawMonitor);

    TYPE(e.u.monitor.object, jobjectID);
    TYPE(e.u.monitor_wait.object, jobjectID);
    TYPE(e.u.monitor_wait.timeout, jlong);

    TYPE(e.u.gc_info.used_objects, jlong);
    TYPE(e.u.gc_info.used_object_space, jlong);
    TYPE(e.u.gc_info.total_object_space, jlong);

    TYPE(e.u.object_dump.data_len, jint);
    TYPE(e.u.object_dump.data, char *);
}

/* ---- auxiliary structs (§6.2) ---- */

static void test_aux_layout(void)
{
    CHECK_EQ_INT(sizeof(JVMPI_HeapDumpArg), 4);
    OFF(JVMPI_HeapDumpArg, heap_dump_level, 0);
    CHECK_EQ_INT(sizeof(JVMPI_Lineno), 8);
    OFF(JVMPI_Lineno, offset, 0);
    OFF(JVMPI_Lineno, lineno, 4);
    /* the opaque id types are plain pointers */
    CHECK_EQ_INT(sizeof(jobjectID), sizeof(void *));
    CHECK_EQ_INT(sizeof(JVMPI_RawMonitor), sizeof(void *));
    if (!is_lp64())
        return;

    CHECK_EQ_INT(sizeof(JVMPI_CallFrame), 16);
    OFF(JVMPI_CallFrame, lineno, 0);
    OFF(JVMPI_CallFrame, method_id, 8);

    CHECK_EQ_INT(sizeof(JVMPI_CallTrace), 24);
    OFF(JVMPI_CallTrace, env_id, 0);
    OFF(JVMPI_CallTrace, num_frames, 8);
    OFF(JVMPI_CallTrace, frames, 16);

    CHECK_EQ_INT(sizeof(JVMPI_Method), 32);
    OFF(JVMPI_Method, method_name, 0);
    OFF(JVMPI_Method, method_signature, 8);
    OFF(JVMPI_Method, start_lineno, 16);
    OFF(JVMPI_Method, end_lineno, 20);
    OFF(JVMPI_Method, method_id, 24);

    CHECK_EQ_INT(sizeof(JVMPI_Field), 16);
    OFF(JVMPI_Field, field_name, 0);
    OFF(JVMPI_Field, field_signature, 8);
}

static void test_aux_types(void)
{
    JVMPI_CallFrame cf;
    JVMPI_CallTrace ct;
    JVMPI_Method m;
    JVMPI_Field f;
    JVMPI_Lineno ln;
    JVMPI_HeapDumpArg ha;
    memset(&cf, 0, sizeof cf);
    memset(&ct, 0, sizeof ct);
    memset(&m, 0, sizeof m);
    memset(&f, 0, sizeof f);
    memset(&ln, 0, sizeof ln);
    memset(&ha, 0, sizeof ha);
    TYPE(cf.lineno, jint);
    TYPE(cf.method_id, jmethodID);
    TYPE(ct.env_id, JNIEnv *);
    TYPE(ct.num_frames, jint);
    TYPE(ct.frames, JVMPI_CallFrame *);
    TYPE(m.method_name, char *);
    TYPE(m.method_signature, char *);
    TYPE(m.start_lineno, jint);
    TYPE(m.end_lineno, jint);
    TYPE(m.method_id, jmethodID);
    TYPE(f.field_name, char *);
    TYPE(f.field_signature, char *);
    TYPE(ln.offset, jint);
    TYPE(ln.lineno, jint);
    TYPE(ha.heap_dump_level, jint);
}

int main(void)
{
    test_versions_and_results();
    test_event_numbers();
    test_thread_codes();
    test_type_codes();
    test_dump_codes();
    test_interface_layout();
    test_interface_types();
    test_event_layout();
    test_event_types();
    test_aux_layout();
    test_aux_types();
    if (!is_lp64())
        printf("note: not LP64, the LP64 size/offset pins were skipped\n");
    return UNIT_END();
}
