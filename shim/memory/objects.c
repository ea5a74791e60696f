/* objects.c — object ids for agents: jobject2jobjectID / jobjectID2jobject, and the GC
 * control functions DisableGC / EnableGC / RunGC.
 *
 * DisableGC: HotSpot locked the collector so that raw-oop jobjectIDs could not move or die
 * while an agent used them. The shim's ids are tags, which never change, so the collector
 * itself keeps running; DisableGC/EnableGC nest per agent (an unbalanced EnableGC is
 * logged) and hold back the GC bracket the agent sees (GC_START, OBJECT_FREE, GC_FINISH),
 * so between DisableGC and EnableGC no OBJECT_FREE arrives (gc.c). What an agent can still
 * rely on: an id stays the same for the object's life and is never reused;
 * jobjectID2jobject of a live id gives a local ref that keeps the object alive as long as
 * the agent holds it.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

static _Atomic int disable_depth[SHIM_MAX_INSTANCES];

void jvmpi_DisableGC(struct instance *inst)
{
    atomic_fetch_add(&disable_depth[inst->slot], 1);
    gc_disable_enter(); /* no GC bracket (GC_START..GC_FINISH) until EnableGC */
}

void jvmpi_EnableGC(struct instance *inst)
{
    if (atomic_fetch_sub(&disable_depth[inst->slot], 1) <= 0) {
        atomic_fetch_add(&disable_depth[inst->slot], 1);
        report_misuse(inst, LOG_INFO, "EnableGC without a matching DisableGC: ignored");
        return;
    }
    gc_disable_exit();
}

void jvmpi_RunGC(struct instance *inst)
{
    (void)inst;
    jvmti_ok_at((*g_shim.jvmti)->ForceGarbageCollection(g_shim.jvmti), LOG_WARN,
                "RunGC: ForceGarbageCollection");
}

jobjectID jvmpi_jobject2jobjectID(struct instance *inst, jobject ref)
{
    JNIEnv *jni = shim_current_jni();
    if (ref == NULL) {
        report_misuse(inst, LOG_INFO, "jobject2jobjectID(NULL): NULL");
        return NULL;
    }
    if (jni == NULL) {
        report_misuse(inst, LOG_WARN,
                      "jobject2jobjectID from a thread the JVM does not know: NULL");
        return NULL;
    }
    return memory_id_announced(jni, ref);
}

jobject jvmpi_jobjectID2jobject(struct instance *inst, jobjectID id)
{
    JNIEnv *jni = shim_current_jni();
    if (id == NULL) {
        ids_bad(inst, IDS_BAD_NULL, "jobjectID2jobject(NULL): NULL%s", "");
        return NULL;
    }
    if (jni == NULL) {
        report_misuse(inst, LOG_WARN,
                      "jobjectID2jobject from a thread the JVM does not know: NULL");
        return NULL;
    }
    const char *why = NULL;
    /* A local ref in the caller's current frame, as HotSpot made. */
    jobject o = ids_resolve(jni, id, &why);
    if (o == NULL)
        ids_bad(inst, ids_bad_kind(why), "jobjectID2jobject(%p): %s: NULL", (void *)id, why);
    return o;
}
