/* hprof_init.c — HPROF's JVM_OnLoad, its NotifyEvent switch, dumps and shutdown.
 *
 *   java -Xrunhprof[:help]|[option=value, ...] App                   (JDK 1.2-1.4)
 *   java -agentpath:/abs/libjvmpishim.so=legacy=/abs/libhprof.so[:options] App
 *
 * JVM_OnLoad parses the options (a bad one prints the usage and refuses the start with
 * JNI_ERR; `help` prints it and ends the VM with ProfilerExit(0)), gets the interface with
 * GetEnv(JVMPI_VERSION_1), opens the output (a file, or a socket for net=), writes the
 * header and enables the events the options need: always CLASS_LOAD/UNLOAD,
 * THREAD_START/END, JVM_INIT_DONE, JVM_SHUT_DOWN, DATA_DUMP_REQUEST and
 * DATA_RESET_REQUEST; for heap=, the object, arena and GC events; for cpu=times|old,
 * METHOD_ENTRY/EXIT; for monitor=y, the Java and raw monitor contention and wait events.
 * JVM_INIT_DONE starts the CPU sampler (cpu=samples).
 *
 * A dump (at JVM_SHUT_DOWN unless doe=n, and at every DATA_DUMP_REQUEST, which SIGQUIT
 * sends) writes, under dump_lock: the heap dump (RequestEvent(HEAP_DUMP), with GC
 * disabled around it, as the old hprof did), the new traces, SITES, the CPU table, the
 * monitor dump (RequestEvent(MONITOR_DUMP)) and the monitor times. DATA_RESET_REQUEST
 * starts CPU and monitor statistics again from zero; allocation sites are facts about
 * live objects and are kept. JVM_SHUT_DOWN stops the sampler first (bounded wait), turns
 * the method events off, dumps, and closes the output.
 */
#include "hprof.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

JavaVM *hprof_jvm;
JVMPI_Interface *jvmpi;
JVMPI_RawMonitor data_lock, dump_lock;
volatile int hprof_shutting_down;

void hprof_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "HPROF ERROR: %s\n", msg);
    fflush(stderr);
}

static const char *destination(char *buf, size_t len)
{
    if (opt.net_host != NULL)
        snprintf(buf, len, "%s:%d", opt.net_host, opt.net_port);
    else
        snprintf(buf, len, "%s", opt.file);
    return buf;
}

static void request_dump(jint type, const char *what)
{
    jvmpi->DisableGC();
    jint rc = jvmpi->RequestEvent(type, NULL);
    jvmpi->EnableGC();
    if (rc != JVMPI_SUCCESS)
        hprof_error("RequestEvent(%s) failed (%d): no %s in this dump", what, (int)rc, what);
}

static void dump_all(const char *why)
{
    char dest[600];
    jvmpi->RawMonitorEnter(dump_lock);
    fprintf(stderr, "HPROF: dumping the profile (%s) to %s ...", why, destination(dest, sizeof dest));
    fflush(stderr);
    if (opt.heap_dump)
        request_dump(JVMPI_EVENT_HEAP_DUMP, "HEAP_DUMP");
    LOCK();
    trace_write_new();
    if (opt.heap_sites)
        sites_write();
    cpu_write();
    io_flush();
    UNLOCK();
    if (opt.monitor)
        request_dump(JVMPI_EVENT_MONITOR_DUMP, "MONITOR_DUMP");
    LOCK();
    trace_write_new();
    monitor_time_write();
    io_flush();
    UNLOCK();
    fprintf(stderr, " done.\n");
    fflush(stderr);
    jvmpi->RawMonitorExit(dump_lock);
}

static void shutdown(void)
{
    cpu_stop_sampler();
    if (opt.cpu == CPU_TIMES || opt.cpu == CPU_OLD) { /* our own dump is not the program */
        jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        jvmpi->DisableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    }
    if (opt.doe)
        dump_all("at exit");
    LOCK();
    io_close();
    UNLOCK();
    hprof_shutting_down = 1;
}

static void notify_event(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (hprof_shutting_down && type != JVMPI_EVENT_GC_FINISH) /* GC_FINISH still unlocks */
        return;
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_object_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_object_free(ev);
        break;
    case JVMPI_EVENT_OBJECT_MOVE:
        on_object_move(ev);
        break;
    case JVMPI_EVENT_ARENA_NEW:
        on_arena_new(ev);
        break;
    case JVMPI_EVENT_ARENA_DELETE:
        on_arena_delete(ev);
        break;
    case JVMPI_EVENT_GC_START:
        on_gc_start(ev);
        break;
    case JVMPI_EVENT_GC_FINISH:
        on_gc_finish(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        on_method_entry(ev);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on_method_exit(ev);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        on_monitor_event(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        on_monitor_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        cpu_start_sampler();
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        dump_all("on request");
        break;
    case JVMPI_EVENT_DATA_RESET_REQUEST:
        LOCK();
        cpu_reset();
        monitor_reset();
        UNLOCK();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shutdown();
        break;
    default:
        break;
    }
}

/* Enable an event; a required one that cannot be had refuses the start. */
static int enable(jint type, const char *name, int required)
{
    jint rc = jvmpi->EnableEvent(type, NULL);
    if (rc == JVMPI_SUCCESS)
        return 1;
    if (required)
        hprof_error("EnableEvent(%s) failed (%d)", name, (int)rc);
    else
        fprintf(stderr, "HPROF: %s is not available on this VM (%d)\n", name, (int)rc);
    return 0;
}

#define ENABLE(ev, req) enable(JVMPI_EVENT_##ev, #ev, req)

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    hprof_jvm = vm;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK || jvmpi == NULL) {
        hprof_error("JVMPI is not available: GetEnv(JVMPI_VERSION_1) failed");
        return JNI_ERR;
    }
    if (hprof_parse_options(options) != 0) {
        hprof_usage(stderr);
        return JNI_ERR;
    }
    if (opt.help) {
        hprof_usage(stdout);
        fflush(stdout);
        jvmpi->ProfilerExit(0); /* as -Xrunhprof:help did: the program does not run */
        return JNI_ERR;
    }
    data_lock = jvmpi->RawMonitorCreate("_hprof_data_lock");
    dump_lock = jvmpi->RawMonitorCreate("_hprof_dump_lock");
    if (data_lock == NULL || dump_lock == NULL) {
        hprof_error("RawMonitorCreate failed");
        return JNI_ERR;
    }
    if (io_open() != 0)
        return JNI_ERR;
    LOCK();
    io_header();
    trace_empty();      /* TRACE 1, the <empty> trace, which records without a trace name */
    trace_write_new();
    io_flush();
    UNLOCK();
    jvmpi->NotifyEvent = notify_event;

    int ok = ENABLE(CLASS_LOAD, 1) & ENABLE(THREAD_START, 1) & ENABLE(THREAD_END, 1) &
             ENABLE(JVM_INIT_DONE, 1) & ENABLE(JVM_SHUT_DOWN, 1);
    if (!ok)
        return JNI_ERR;
    ENABLE(CLASS_UNLOAD, 0);
    ENABLE(DATA_DUMP_REQUEST, 0);
    ENABLE(DATA_RESET_REQUEST, 0);
    if (opt.heap_sites || opt.heap_dump) {
        if (!ENABLE(OBJ_ALLOC, 1))
            return JNI_ERR;
        ENABLE(GC_START, 1);
        ENABLE(GC_FINISH, 1);
        ENABLE(OBJ_FREE, 1);
        ENABLE(OBJ_MOVE, 0);
        ENABLE(NEW_ARENA, 0);
        ENABLE(DELETE_ARENA, 0);
    }
    if (opt.cpu == CPU_TIMES || opt.cpu == CPU_OLD) {
        if (!(ENABLE(METHOD_ENTRY, 1) & ENABLE(METHOD_EXIT, 1)))
            return JNI_ERR;
    }
    if (opt.monitor && opt.binary) {
        fprintf(stderr, "HPROF: monitor=y has no binary form: no monitor data is written with format=b\n");
        opt.monitor = 0;
    }
    if (opt.monitor) {
        ENABLE(MONITOR_CONTENDED_ENTER, 0);
        ENABLE(MONITOR_CONTENDED_ENTERED, 0);
        ENABLE(MONITOR_CONTENDED_EXIT, 0);
        ENABLE(MONITOR_WAIT, 0);
        ENABLE(MONITOR_WAITED, 0);
        ENABLE(RAW_MONITOR_CONTENDED_ENTER, 0);
        ENABLE(RAW_MONITOR_CONTENDED_ENTERED, 0);
        ENABLE(RAW_MONITOR_CONTENDED_EXIT, 0);
    }
    return JNI_OK;
}
