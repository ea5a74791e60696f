/* fidelity.c — the per-item fidelity table behind the migration report.
 *
 * One row per JVMPI function and event: exact, differs (and the one thing an agent is most
 * likely to notice), or unavailable (and why). docs/mapping.md has the full story for each
 * row; tests/unit/test_fidelity.c holds the two to the same status. A row's status can still
 * turn "unavailable" at run time when the JVM refuses a capability; the report asks the
 * event switchboard for that.
 */
#include "core/fidelity.h"

#include <stddef.h>
#include <string.h>

#define F(name, st, w, how) {name, -1, st, w, how}
#define E(num, name, st, w, how) {name, num, st, w, how}

static const struct fidelity_row rows[] = {
    F("NotifyEvent", FID_EXACT, FW_NONE, "called from one place, never with a shim lock held; silent after JVM_SHUT_DOWN"),
    F("EnableEvent", FID_DIFFERS, FW_HARMLESS, "NOT_AVAILABLE (with one warning) for events this JVM cannot give, where HotSpot said SUCCESS; enabling OBJECT_ALLOC after JVM_OnLoad runs one hidden GC"),
    F("DisableEvent", FID_DIFFERS, FW_HARMLESS, "same return codes as EnableEvent; disabling allocation events runs no GC"),
    F("RequestEvent", FID_DIFFERS, FW_HARMLESS, "bad ids answer JVMPI_FAIL with a warning (once per kind, then counted) where HotSpot crashed"),
    F("GetCallTrace", FID_DIFFERS, FW_MAY, "returns the real stack of any live thread, suspended or not; HotSpot gave 0 frames for a running other thread"),
    F("ProfilerExit", FID_EXACT, FW_NONE, "Runtime.halt: no THREAD_END, no JVM_SHUT_DOWN, no shutdown hooks"),
    F("RawMonitorCreate", FID_DIFFERS, FW_HARMLESS, "monitors named _... post no contention events (as the spec says; HotSpot posted them)"),
    F("RawMonitorEnter", FID_DIFFERS, FW_MAY, "bad monitor ids are ignored with a warning; not async-signal-safe"),
    F("RawMonitorExit", FID_EXACT, FW_NONE, "exit by a non-owner is ignored, as on HotSpot"),
    F("RawMonitorWait", FID_DIFFERS, FW_HARMLESS, "Thread.interrupt does not end the wait"),
    F("RawMonitorNotifyAll", FID_EXACT, FW_NONE, "notify by a non-owner is ignored, as on HotSpot"),
    F("RawMonitorDestroy", FID_DIFFERS, FW_HARMLESS, "a monitor owned by another thread is not destroyed (warning); stale ids are detected"),
    F("GetCurrentThreadCpuTime", FID_EXACT, FW_NONE, "the calling thread's CPU time in nanoseconds (clock_gettime)"),
    F("SuspendThread", FID_DIFFERS, FW_HARMLESS, "bad or ended env ids are ignored with a message"),
    F("ResumeThread", FID_DIFFERS, FW_HARMLESS, "only threads JVMPI suspended are resumed"),
    F("GetThreadStatus", FID_DIFFERS, FW_MAY, "computed from JVMTI thread state; unknown env ids answer RUNNABLE"),
    F("ThreadHasRun", FID_DIFFERS, FW_HARMLESS, "measured from thread CPU time between calls"),
    F("CreateSystemThread", FID_DIFFERS, FW_MAY, "a JVMTI agent thread (daemon, system group); refused before JVM_INIT_DONE"),
    F("SetThreadLocalStorage", FID_EXACT, FW_NONE, "one slot per agent per thread"),
    F("GetThreadLocalStorage", FID_EXACT, FW_NONE, "one slot per agent per thread"),
    F("DisableGC", FID_DIFFERS, FW_MAY, "holds back the shim's GC brackets and frees; the JVM's own collector is not stopped"),
    F("EnableGC", FID_DIFFERS, FW_HARMLESS, "pairs with DisableGC; an unmatched call is ignored"),
    F("RunGC", FID_DIFFERS, FW_HARMLESS, "a full collection (JVMTI ForceGarbageCollection); the GC bracket the agent sees follows it"),
    F("GetThreadObject", FID_DIFFERS, FW_HARMLESS, "unknown env ids answer NULL with a message"),
    F("GetMethodClass", FID_DIFFERS, FW_HARMLESS, "announces the class first (CLASS_LOAD) if the agent has not seen it"),
    F("jobjectID2jobject", FID_DIFFERS, FW_HARMLESS, "O(1) amortized through an index of weak references built in one heap pass; bad ids answer NULL with a warning"),
    F("jobject2jobjectID", FID_EXACT, FW_NONE, "tags the object on first use"),
    F("SuspendThreadList", FID_DIFFERS, FW_HARMLESS, "per-entry results as HotSpot (0, 10, 14)"),
    F("ResumeThreadList", FID_DIFFERS, FW_HARMLESS, "per-entry results 0 or 10"),

    E(1, "METHOD_ENTRY", FID_DIFFERS, FW_MAY, "from class-rewriting probes (methods=bci): natives of classes loaded before the agent, hidden classes and intrinsics get none"),
    E(2, "METHOD_ENTRY2", FID_DIFFERS, FW_MAY, "as METHOD_ENTRY; the receiver is passed by the probe (constructors: named by the probe after their super(...) call, delivered from there)"),
    E(3, "METHOD_EXIT", FID_DIFFERS, FW_MAY, "as METHOD_ENTRY; exits balance entries, exceptions included"),
    E(4, "OBJECT_ALLOC", FID_DIFFERS, FW_MAY, "allocations removed by escape analysis never happen and are not reported"),
    E(5, "OBJECT_FREE", FID_DIFFERS, FW_HARMLESS, "for every id handed out; posted after the collection, inside a synthesized GC bracket, before any later dump, DATA_DUMP_REQUEST or JVM_SHUT_DOWN"),
    E(6, "OBJECT_MOVE", FID_DIFFERS, FW_HARMLESS, "never posted: ids are stable for an object's life"),
    E(7, "COMPILED_METHOD_LOAD", FID_DIFFERS, FW_MAY, "code compiled before the event was enabled is replayed with a sparse line map"),
    E(8, "COMPILED_METHOD_UNLOAD", FID_DIFFERS, FW_HARMLESS, "posted whenever compiled code is unloaded, not only with its class"),
    E(9, "INSTRUCTION_START", FID_DIFFERS, FW_MAY, "from class-rewriting probes, in compiled code too; hidden classes get none; unavailable with methods=jvmti"),
    E(33, "THREAD_START", FID_DIFFERS, FW_HARMLESS, "threads that existed before the agent are replayed; the shim's own threads are never shown"),
    E(34, "THREAD_END", FID_DIFFERS, FW_HARMLESS, "repeats the THREAD_START payload; threads alive at exit get none, as on HotSpot"),
    E(35, "CLASS_LOAD_HOOK", FID_DIFFERS, FW_MAY, "hidden classes are never hooked; new_class_data is preset to the original bytes"),
    E(37, "HEAP_DUMP", FID_DIFFERS, FW_MAY, "reachable objects only; JNI_GLOBAL handles are NULL; only HotSpot's six root kinds"),
    E(38, "JNI_GLOBALREF_ALLOC", FID_EXACT, FW_NONE, "from the JNI function table"),
    E(39, "JNI_GLOBALREF_FREE", FID_EXACT, FW_NONE, "from the JNI function table"),
    E(40, "JNI_WEAK_GLOBALREF_ALLOC", FID_EXACT, FW_NONE, "from the JNI function table"),
    E(41, "JNI_WEAK_GLOBALREF_FREE", FID_EXACT, FW_NONE, "from the JNI function table"),
    E(42, "CLASS_LOAD", FID_DIFFERS, FW_HARMLESS, "posted on the defining thread, which links the class early; methods in class-file order"),
    E(43, "CLASS_UNLOAD", FID_DIFFERS, FW_HARMLESS, "posted by the shim's worker thread, some time after the collection"),
    E(44, "DATA_DUMP_REQUEST", FID_DIFFERS, FW_HARMLESS, "also posted on jcmd JVMTI.data_dump"),
    E(45, "DATA_RESET_REQUEST", FID_DIFFERS, FW_HARMLESS, "posted right after DATA_DUMP_REQUEST, as on HotSpot; also on jcmd"),
    E(46, "JVM_INIT_DONE", FID_EXACT, FW_NONE, "after JVM_OnLoad and the start-up replay, before main"),
    E(47, "JVM_SHUT_DOWN", FID_EXACT, FW_NONE, "once, on the exiting thread; nothing after it"),
    E(48, "ARENA_NEW", FID_DIFFERS, FW_HARMLESS, "one arena, id 1, \"Java heap\""),
    E(49, "ARENA_DELETE", FID_DIFFERS, FW_HARMLESS, "never posted: the one arena lives as long as the VM"),
    E(50, "OBJECT_DUMP", FID_DIFFERS, FW_MAY, "record layout as HotSpot; read in place, no thread stopped; instance sizes assume compressed references"),
    E(51, "RAW_MONITOR_CONTENDED_ENTER", FID_DIFFERS, FW_MAY, "only for the agent's own raw monitors; the JVM's internal ones are invisible"),
    E(52, "RAW_MONITOR_CONTENDED_ENTERED", FID_DIFFERS, FW_MAY, "as RAW_MONITOR_CONTENDED_ENTER"),
    E(53, "RAW_MONITOR_CONTENDED_EXIT", FID_DIFFERS, FW_MAY, "as RAW_MONITOR_CONTENDED_ENTER"),
    E(54, "MONITOR_CONTENDED_ENTER", FID_EXACT, FW_NONE, "JVMTI MonitorContendedEnter"),
    E(55, "MONITOR_CONTENDED_ENTERED", FID_EXACT, FW_NONE, "JVMTI MonitorContendedEntered"),
    E(56, "MONITOR_CONTENDED_EXIT", FID_DIFFERS, FW_MAY, "seen from the contender's side, just before ENTERED, or from an owner that ends first; missing if the owner had already left"),
    E(57, "MONITOR_WAIT", FID_EXACT, FW_NONE, "JVMTI MonitorWait"),
    E(58, "MONITOR_WAITED", FID_EXACT, FW_NONE, "JVMTI MonitorWaited, with the measured time"),
    E(59, "MONITOR_DUMP", FID_DIFFERS, FW_HARMLESS, "built from per-thread JVMTI facts; raw monitors are the agent's own"),
    E(60, "GC_START", FID_DIFFERS, FW_MAY, "a bracket synthesized after the JVM's collection, around the frees it reported"),
    E(61, "GC_FINISH", FID_DIFFERS, FW_MAY, "used_objects/used_object_space count the objects OBJECT_ALLOC reported and not yet freed, not the whole heap"),
};

const struct fidelity_row *fidelity_rows(int *n)
{
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

const struct fidelity_row *fidelity_function(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].event < 0 && strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

const struct fidelity_row *fidelity_event(int t)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].event == t)
            return &rows[i];
    return NULL;
}

const char *fidelity_weight_name(enum fid_weight w)
{
    switch (w) {
    case FW_MAY: return "may";
    case FW_HARMLESS: return "harmless";
    default: return "-";
    }
}

const char *fidelity_name(enum fidelity f)
{
    switch (f) {
    case FID_EXACT: return "exact";
    case FID_DIFFERS: return "differs";
    default: return "unavailable";
    }
}
