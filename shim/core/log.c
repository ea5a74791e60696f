/* log.c — logging for the shim and the single JVMTI error check.
 *
 * Every message is one line prefixed "jvmpishim: <level>: " and goes to stderr or to the
 * file named by the logfile= option. A leaf lock keeps lines whole when threads log at
 * once. JVMTI errors are reported through jvmti_ok_at(), which names the error and what
 * the shim was doing, so nothing fails silently and nothing is logged twice.
 */
#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int log_level_now = LOG_WARN;
static FILE *log_out;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*warn_hook)(const char *line);

bool log_configure(int level, const char *path)
{
    log_level_now = level;
    if (path != NULL) {
        FILE *f = fopen(path, "a");
        if (f == NULL) {
            fprintf(stderr, "jvmpishim: error: logfile=%s: cannot open: %s\n", path,
                    strerror(errno));
            return false;
        }
        setvbuf(f, NULL, _IOLBF, 0);
        if (log_out != NULL)
            fclose(log_out); /* a later -agentpath of the shim named another file */
        log_out = f;
    }
    return true;
}

static const char *level_name(int level)
{
    switch (level) {
    case LOG_ERROR: return "error";
    case LOG_WARN:  return "warning";
    case LOG_INFO:  return "info";
    default:        return "debug";
    }
}

static void vlog(int level, bool hook_ok, const char *fmt, va_list ap)
{
    if (level > log_level_now)
        return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    pthread_mutex_lock(&log_lock);
    FILE *out = log_out ? log_out : stderr;
    fprintf(out, "jvmpishim: %s: %s\n", level_name(level), line);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
    void (*hook)(const char *) = __atomic_load_n(&warn_hook, __ATOMIC_ACQUIRE);
    if (level == LOG_WARN && hook_ok && hook != NULL)
        hook(line);
}

void log_msg(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, true, fmt, ap);
    va_end(ap);
}

void log_misuse(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, false, fmt, ap);
    va_end(ap);
}

void log_set_warn_hook(void (*hook)(const char *line))
{
    __atomic_store_n(&warn_hook, hook, __ATOMIC_RELEASE);
}

const char *jvmti_error_name(jvmtiError err)
{
    switch (err) {
#define E(n) case JVMTI_ERROR_##n: return "JVMTI_ERROR_" #n
    E(NONE); E(INVALID_THREAD); E(INVALID_THREAD_GROUP); E(INVALID_PRIORITY);
    E(THREAD_NOT_SUSPENDED); E(THREAD_SUSPENDED); E(THREAD_NOT_ALIVE); E(INVALID_OBJECT);
    E(INVALID_CLASS); E(CLASS_NOT_PREPARED); E(INVALID_METHODID); E(INVALID_LOCATION);
    E(INVALID_FIELDID); E(INVALID_MODULE); E(NO_MORE_FRAMES); E(OPAQUE_FRAME);
    E(TYPE_MISMATCH); E(INVALID_SLOT); E(DUPLICATE); E(NOT_FOUND);
    E(INVALID_MONITOR); E(NOT_MONITOR_OWNER); E(INTERRUPT); E(INVALID_CLASS_FORMAT);
    E(CIRCULAR_CLASS_DEFINITION); E(FAILS_VERIFICATION); E(UNSUPPORTED_REDEFINITION_METHOD_ADDED);
    E(UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED); E(INVALID_TYPESTATE);
    E(UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED); E(UNSUPPORTED_REDEFINITION_METHOD_DELETED);
    E(UNSUPPORTED_VERSION); E(NAMES_DONT_MATCH); E(UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED);
    E(UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED); E(UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED);
    E(UNMODIFIABLE_CLASS); E(UNMODIFIABLE_MODULE); E(NOT_AVAILABLE); E(MUST_POSSESS_CAPABILITY);
    E(NULL_POINTER); E(ABSENT_INFORMATION); E(INVALID_EVENT_TYPE); E(ILLEGAL_ARGUMENT);
    E(NATIVE_METHOD); E(CLASS_LOADER_UNSUPPORTED); E(OUT_OF_MEMORY); E(ACCESS_DENIED);
    E(WRONG_PHASE); E(INTERNAL); E(UNATTACHED_THREAD); E(INVALID_ENVIRONMENT);
#undef E
    default: break;
    }
    /* JDK 21+ added JVMTI_ERROR_UNSUPPORTED_OPERATION (73); the JDK 17 header lacks it. */
    if ((int)err == 73)
        return "JVMTI_ERROR_UNSUPPORTED_OPERATION";
    return "JVMTI_ERROR_(unknown)";
}

static _Atomic int vm_ending;

void log_vm_ending(void)
{
    vm_ending = 1;
}

bool log_vm_is_ending(void)
{
    return vm_ending != 0;
}

bool jvmti_failed_at(jvmtiError err, int level, const char *what)
{
    if (err == JVMTI_ERROR_NONE)
        return true;
    if (err == JVMTI_ERROR_WRONG_PHASE && vm_ending) {
        if (log_level_now >= LOG_DEBUG)
            log_msg(LOG_DEBUG, "%s: %s (%d): the JVM is exiting", what, jvmti_error_name(err),
                    (int)err);
        return false;
    }
    log_msg(level, "%s: %s (%d)", what, jvmti_error_name(err), (int)err);
    return false;
}
