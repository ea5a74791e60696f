/* prof32.c — an allocation profiler written for a 32-bit JVM, as such agents were
 * (tests/it/classes/prof32.sh; workload tests/java/AllocSites.java).
 *
 * Its source assumes 32 bits, as the i386 profilers it stands for did: JVM_OnLoad starts with
 * assert(sizeof(void *) == 4); class ids and method ids are kept as jint/int in its tables,
 * hashed as unsigned int, and an unknown class is asked for with
 * RequestEvent(CLASS_LOAD, (jobjectID)(int)id). On an i386 JVM all of this holds; built for
 * x86-64 from the same source the assertion stops the JVM in JVM_OnLoad, as
 * docs/porting.md's appendix says.
 *
 * CLASS_LOAD fills a class table (id -> name) and a method table (method id -> Class.method).
 * OBJECT_ALLOC of a NORMAL_OBJECT of a class whose name starts with AllocSites: counted per
 * class, and per site (the method of the top frame of GetCallTrace, depth 1). One raw
 * monitor guards the tables, released before any call that may send an event. At
 * JVM_SHUT_DOWN: "p32: count NAME N" (summed over classes of one name) and
 * "p32: site NAME Class.method N", then "p32: summary ...".
 */
#include <jvmpi.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;

#define NCLASS 16384
static struct { jint id; char *name; } classes[NCLASS];
#define NMETHOD 65536
static struct { int id; char *name; } methods[NMETHOD];
#define NSITE 1024
static struct { jint cls; int method; int count; } sites[NSITE];
static int unknown_classes, unknown_methods, traces_failed;

static int class_slot(jint id)
{
    unsigned int h = ((unsigned int)id >> 3) % NCLASS;
    while (classes[h].id != 0 && classes[h].id != id)
        h = (h + 1) % NCLASS;
    return h;
}

static int method_slot(int id)
{
    unsigned int h = ((unsigned int)id >> 2) % NMETHOD;
    while (methods[h].id != 0 && methods[h].id != id)
        h = (h + 1) % NMETHOD;
    return h;
}

static void class_load(JVMPI_Event *ev)
{
    int i, h;
    char buf[512];
    jvmpi->RawMonitorEnter(lock);
    h = class_slot((jint)ev->u.class_load.class_id);
    if (classes[h].id == 0) {
        classes[h].id = (jint)ev->u.class_load.class_id;
        classes[h].name = strdup(ev->u.class_load.class_name);
    }
    for (i = 0; i < ev->u.class_load.num_methods; i++) {
        int m = (int)ev->u.class_load.methods[i].method_id;
        h = method_slot(m);
        if (methods[h].id == 0) {
            sprintf(buf, "%.200s.%.200s", ev->u.class_load.class_name,
                    ev->u.class_load.methods[i].method_name);
            methods[h].id = m;
            methods[h].name = strdup(buf);
        }
    }
    jvmpi->RawMonitorExit(lock);
}

static void object_alloc(JVMPI_Event *ev)
{
    jint cls = (jint)ev->u.obj_alloc.class_id;
    JVMPI_CallTrace tr;
    JVMPI_CallFrame fr[1];
    int h, method = 0;
    unsigned int s;

    if (ev->u.obj_alloc.is_array != JVMPI_NORMAL_OBJECT || cls == 0)
        return;
    jvmpi->RawMonitorEnter(lock);
    h = class_slot(cls);
    jvmpi->RawMonitorExit(lock);
    if (classes[h].id == 0) {
        jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, (jobjectID)(int)cls);
        jvmpi->RawMonitorEnter(lock);
        h = class_slot(cls);
        jvmpi->RawMonitorExit(lock);
        if (classes[h].id == 0) {
            unknown_classes++;
            return;
        }
    }
    if (strncmp(classes[h].name, "AllocSites", 10) != 0)
        return;
    tr.env_id = ev->env_id;
    tr.frames = fr;
    tr.num_frames = 0;
    jvmpi->GetCallTrace(&tr, 1);
    if (tr.num_frames < 1)
        traces_failed++;
    else
        method = (int)fr[0].method_id;
    jvmpi->RawMonitorEnter(lock);
    s = ((unsigned int)cls * 31u + (unsigned int)method) % NSITE;
    while (sites[s].count != 0 && (sites[s].cls != cls || sites[s].method != method))
        s = (s + 1) % NSITE;
    sites[s].cls = cls;
    sites[s].method = method;
    sites[s].count++;
    jvmpi->RawMonitorExit(lock);
}

static void shut_down(void)
{
    int i, j, n, nsites = 0, total = 0;
    jvmpi->RawMonitorEnter(lock);
    /* per class name: classes of one name (one per loader) are summed */
    for (i = 0; i < NSITE; i++) {
        const char *name;
        if (sites[i].count == 0 || sites[i].cls == 0)
            continue;
        name = classes[class_slot(sites[i].cls)].name;
        n = 0;
        for (j = 0; j < NSITE; j++)
            if (sites[j].count != 0 && sites[j].cls != 0 &&
                strcmp(classes[class_slot(sites[j].cls)].name, name) == 0) {
                if (j < i)
                    break;
                n += sites[j].count;
            }
        if (j == NSITE)
            printf("p32: count %s %d\n", name, n);
    }
    for (i = 0; i < NSITE; i++) {
        const char *m;
        if (sites[i].count == 0)
            continue;
        j = method_slot(sites[i].method);
        if (methods[j].id == 0)
            unknown_methods++;
        m = methods[j].id != 0 ? methods[j].name : "?";
        printf("p32: site %s %s %d\n", classes[class_slot(sites[i].cls)].name, m, sites[i].count);
        nsites++;
        total += sites[i].count;
    }
    printf("p32: summary sites=%d objects=%d unknown_classes=%d unknown_methods=%d traces_failed=%d\n",
           nsites, total, unknown_classes, unknown_methods, traces_failed);
    fflush(stdout);
    jvmpi->RawMonitorExit(lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        object_alloc(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    assert(sizeof(void *) == 4);
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    lock = jvmpi->RawMonitorCreate("p32 tables");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    printf("p32: loaded\n");
    fflush(stdout);
    return JNI_OK;
}
