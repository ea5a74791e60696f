/* symclash.c — a JDK 1.3-style JVMPI agent whose globals have the common short names that
 * C agents of the time left non-static (tests/it/lifecycle/load_symbols.sh, workload Hello).
 *
 * Many agents were a handful of .c files sharing state through plain globals: a table of
 * threads, of classes, a lock, a count, a verbose flag, an init() and a debug() helper. Not
 * being static, each is exported from the agent's library. JDK 25's libjvm exports
 * functions named threads, events, debug, verify, flush, find, help (debugging helpers), and
 * the launcher loads libjvm RTLD_GLOBAL; an agent's own reference to its global "threads"
 * must still reach the agent's variable, never libjvm's function.
 *
 * JVM_OnLoad writes a distinct value into each global and calls each exported function;
 * JVM_INIT_DONE, every THREAD_START and JVM_SHUT_DOWN read the globals back and call the
 * functions again. Output: "symclash: ok name" once per global and function that held its
 * value at JVM_SHUT_DOWN, "symclash: FAIL name ..." otherwise, and
 * "symclash: shutdown checked=N fails=F".
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>

static JVMPI_Interface *jvmpi;

/* The exported globals, as a 1999 agent's globals.c would have them. */
int threads;
int classes;
int methods;
long heap;
int events;
void *lock;
void *table;
int count;
int verbose;
char options[64];
int debug_level;
int flush_pending;
int universe;

/* Exported helpers with common names (libjvm 25 exports debug, verify, find, help, flush). */
int init(void) { return 1001; }
int debug(void) { return 1002; }
int verify(void) { return 1003; }
int find(void) { return 1004; }
int help(void) { return 1005; }
int flush(void) { return 1006; }

static int fails, checked;
static char lock_buf[16], table_buf[16];

#define CHECK(name, got, want)                                                          \
    do {                                                                                \
        checked++;                                                                      \
        if ((long)(got) != (long)(want)) {                                              \
            fails++;                                                                    \
            printf("symclash: FAIL %s = %ld at %s, expected %ld\n", name, (long)(got),  \
                   when, (long)(want));                                                 \
        } else if (final) {                                                             \
            printf("symclash: ok %s\n", name);                                          \
        }                                                                               \
    } while (0)

static void check_all(const char *when, int final)
{
    CHECK("threads", threads, 11);
    CHECK("classes", classes, 12);
    CHECK("methods", methods, 13);
    CHECK("heap", heap, 14);
    CHECK("events", events, 15);
    CHECK("lock", lock == (void *)lock_buf, 1);
    CHECK("table", table == (void *)table_buf, 1);
    CHECK("count", count, 18);
    CHECK("verbose", verbose, 19);
    CHECK("options", strcmp(options, "symclash-options"), 0);
    CHECK("debug_level", debug_level, 20);
    CHECK("flush_pending", flush_pending, 21);
    CHECK("universe", universe, 22);
    CHECK("init()", init(), 1001);
    CHECK("debug()", debug(), 1002);
    CHECK("verify()", verify(), 1003);
    CHECK("find()", find(), 1004);
    CHECK("help()", help(), 1005);
    CHECK("flush()", flush(), 1006);
    fflush(stdout);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        check_all("JVM_INIT_DONE", 0);
        break;
    case JVMPI_EVENT_THREAD_START:
        check_all("THREAD_START", 0);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        check_all("JVM_SHUT_DOWN", 1);
        printf("symclash: shutdown checked=%d fails=%d\n", checked, fails);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *opts, void *reserved)
{
    (void)opts;
    (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    threads = 11;
    classes = 12;
    methods = 13;
    heap = 14;
    events = 15;
    lock = lock_buf;
    table = table_buf;
    count = 18;
    verbose = 19;
    strcpy(options, "symclash-options");
    debug_level = 20;
    flush_pending = 21;
    universe = 22;
    check_all("JVM_OnLoad", 0);
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
