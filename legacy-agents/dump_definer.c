/* dump_definer.c — an HPROF-style agent that asks for a heap dump while holding its one
 * lock, for tests/it/dumps/dump_definer.sh (workload tests/java/DumpDefiner.java).
 *
 * HPROF-family agents guarded all their tables with one raw monitor and held it around
 * RequestEvent(HEAP_DUMP) (their dump handler fills the same tables); their CLASS_LOAD
 * handler takes that monitor too. Here the dump is asked for while another thread is
 * inside its CLASS_LOAD handler, waiting for that monitor: on HotSpot the dump simply
 * went ahead (at a safepoint) and the waiting CLASS_LOAD was delivered after it.
 *
 * CLASS_LOAD of DumpDefiner$Go (loaded by main): enter the lock, set DumpDefiner.armed
 * (JNI) so that the workload's loader thread defines DumpDefiner$Late, wait (at most 30 s)
 * until Late's CLASS_LOAD handler has started on that thread (it then waits for the lock),
 * RequestEvent(HEAP_DUMP, level 0), leave the lock.
 * CLASS_LOAD of DumpDefiner$Late: note that the handler started, enter the lock, note
 * whether the dump had already been delivered, leave.
 *
 * Output ("dump_definer: ..."):
 *   dump records=N late_waiting=0|1     the HEAP_DUMP handler ran (late_waiting: Late's
 *                                       CLASS_LOAD handler was waiting for the lock then)
 *   late class_load after_dump=0|1      Late's CLASS_LOAD got the lock
 *   FAIL ...                            RequestEvent failed, or Late's handler never started
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static volatile int late_started;
static int dumped, late_waiting;

static void say(const char *line)
{
    printf("dump_definer: %s\n", line);
    fflush(stdout);
}

static void go(JNIEnv *env)
{
    jvmpi->RawMonitorEnter(lock);
    /* The workload's class, through the system loader: FindClass here would search the
     * loader of the frame that called into the VM (Class.forName's: the boot loader). */
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID sys = cl ? (*env)->GetStaticMethodID(env, cl, "getSystemClassLoader",
                                                   "()Ljava/lang/ClassLoader;") : NULL;
    jmethodID load = cl ? (*env)->GetMethodID(env, cl, "loadClass",
                                              "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
    jobject loader = sys ? (*env)->CallStaticObjectMethod(env, cl, sys) : NULL;
    jstring name = (*env)->NewStringUTF(env, "DumpDefiner");
    jclass c = loader && load ? (jclass)(*env)->CallObjectMethod(env, loader, load, name) : NULL;
    jfieldID f = c ? (*env)->GetStaticFieldID(env, c, "armed", "Z") : NULL;
    if (f == NULL || (*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        say("FAIL cannot find DumpDefiner.armed");
        jvmpi->RawMonitorExit(lock);
        return;
    }
    (*env)->SetStaticBooleanField(env, c, f, JNI_TRUE);
    for (int i = 0; i < 30000 && !late_started; i++) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!late_started)
        say("FAIL the CLASS_LOAD handler of DumpDefiner$Late did not start within 30 s");
    late_waiting = late_started;
    JVMPI_HeapDumpArg arg;
    arg.heap_dump_level = JVMPI_DUMP_LEVEL_0;
    if (jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg) != JVMPI_SUCCESS)
        say("FAIL RequestEvent(HEAP_DUMP)");
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    char line[256];
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *name = ev->u.class_load.class_name;
        if (name != NULL && strcmp(name, "DumpDefiner$Go") == 0) {
            go(ev->env_id);
        } else if (name != NULL && strcmp(name, "DumpDefiner$Late") == 0) {
            late_started = 1;
            jvmpi->RawMonitorEnter(lock);
            snprintf(line, sizeof line, "late class_load after_dump=%d", dumped);
            say(line);
            jvmpi->RawMonitorExit(lock);
        }
        break;
    }
    case JVMPI_EVENT_HEAP_DUMP: {
        long n = 0;
        const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
        const unsigned char *end = (const unsigned char *)ev->u.heap_dump.end;
        for (; p < end; p += 1 + sizeof(void *))
            n++;
        jvmpi->RawMonitorEnter(lock);
        dumped = 1;
        snprintf(line, sizeof line, "dump records=%ld late_waiting=%d", n, late_waiting);
        say(line);
        jvmpi->RawMonitorExit(lock);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("_dump_definer_lock");
    if (jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) != JVMPI_SUCCESS)
        say("FAIL EnableEvent(CLASS_LOAD)");
    return JNI_OK;
}
