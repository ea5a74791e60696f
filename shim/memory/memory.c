/* memory.c — the object events' start-up side: their rows and JVMTI callbacks, the heap
 * walk that announces the objects that existed, and the memory statistics.
 *
 * The events themselves are alloc.c's (OBJECT_ALLOC and ARENA_NEW) and gc.c's (OBJECT_FREE
 * and the GC bracket), and each of those files registers its own rows and callbacks, whose
 * hooks it keeps static; what the three files share is internal.h. The rows that need no
 * code are here: OBJECT_MOVE is never posted, since ids are tags and never change
 * (EnableEvent succeeds), and the one arena never goes away, so ARENA_DELETE is never
 * posted either.
 *
 * An agent that enabled OBJECT_ALLOC in JVM_OnLoad hears of the objects that already exist
 * at start-up, as HotSpot announced them: the classes first get ids (and the instance
 * classes their CLASS_LOAD, definition before use), then one heap walk tags every object
 * and alloc.c posts their OBJECT_ALLOCs.
 */
#include "classes/classes.h"
#include "core/ids.h"
#include "events/events.h"
#include "memory/internal.h"
#include "memory/memory.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start-up: objects that already exist, from one heap walk. */
struct sweep {
    jlong *tags;        /* (tag, class tag, size) triples */
    size_t n, cap;
};

/* Heap fillers: the dead space the JVM formats as objects of its own classes (JDK 25:
 * jdk.internal.vm.FillerObject and the FillerElement array, whose element class is `int`).
 * A heap walk reports them; they are no Java objects and HotSpot's heap had none, so the
 * start-up announcement skips them. Their class tags, found among the loaded classes. */
static jlong filler_tags[4];
static int filler_n;

static bool is_filler(jlong class_tag)
{
    for (int i = 0; i < filler_n; i++)
        if (filler_tags[i] == (class_tag & TAG_ID_MASK))
            return true;
    return false;
}

static jint JNICALL sweep_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                             void *user_data)
{
    (void)length;
    struct sweep *s = user_data;
    if ((class_tag != 0 && is_filler(class_tag)) || *tag_ptr == TAG_SHIM_OWN)
        return 0;
    if (*tag_ptr & TAG_ALLOCATED)
        return 0; /* already reported live (allocated while the shim started up) */
    if (*tag_ptr == 0)
        *tag_ptr = ids_new_tag(size, TAG_ALLOCATED);
    else
        *tag_ptr = ids_retag(*tag_ptr, size, TAG_ALLOCATED); /* same id, now with its size */
    if (s->n + 3 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 3 * 65536;
        jlong *t = realloc(s->tags, cap * sizeof *t);
        if (t == NULL)
            return JVMTI_VISIT_ABORT;
        s->tags = t;
        s->cap = cap;
    }
    s->tags[s->n++] = *tag_ptr;
    s->tags[s->n++] = class_tag;
    s->tags[s->n++] = size;
    return 0;
}

static void tag_loaded_classes(JNIEnv *jni)
{
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses for the start-up OBJECT_ALLOC sweep"))
        return;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        /* A class record (not just a tag): the sweep names each object's class through it.
         * Definition before use: agents with CLASS_LOAD hear of every instance class first
         * (as in the class replay); arrays only get a record. */
        jint st = 0;
        jvmti_ignore((*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cs[i], &st),
                     "GetClassStatus: unread, the class is prepared and announced");
        char *sig = NULL;
        if (filler_n < 4 &&
            jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cs[i], &sig, NULL),
                        LOG_DEBUG, "GetClassSignature looking for the heap filler classes")) {
            bool filler = strncmp(sig, "Ljdk/internal/vm/Filler", 23) == 0 ||
                          strncmp(sig, "[Ljdk/internal/vm/Filler", 24) == 0;
            jvmti_free(g_shim.jvmti, sig);
            if (filler) {
                jobjectID fid = classes_register(jni, cs[i]);
                if (fid != NULL)
                    filler_tags[filler_n++] = ids_tag(fid);
                (*jni)->DeleteLocalRef(jni, cs[i]);
                continue;
            }
        }
        /* Every Class object is announced below: an agent may ask CLASS_LOAD for any of them
         * from its handler, inside a JVMPI call, where a class could not be linked
         * (classes/announce.c, announce()). So those not yet linked are linked here, at
         * start-up, as the class replay links them (HotSpot's CLASS_LOAD needed no
         * linking). */
        if (!(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE |
                    JVMTI_CLASS_STATUS_ERROR))) {
            classes_prepare(jni, cs[i]);
            classes_id_announced(jni, cs[i]);
        } else {
            classes_register(jni, cs[i]);
        }
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    jvmti_free(g_shim.jvmti, cs);
}

void memory_replay(JNIEnv *jni)
{
    if (!events_any(JVMPI_EVENT_OBJECT_ALLOC))
        return;
    /* Classes first get ids, so every object's class tag names a class. */
    tag_loaded_classes(jni);
    struct sweep s = {0};
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = sweep_cb;
    mem_sweep_begin();
    jvmtiError err = (*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, 0, NULL, &hc, &s);
    mem_sweep_end();
    if (!jvmti_ok(err, "IterateThroughHeap for the start-up OBJECT_ALLOC sweep")) {
        free(s.tags);
        return;
    }
    memory_announce_tags(jni, s.tags, s.n / 3);
    mem_alloc_now_complete();
    log_debug("start-up replay: %zu objects", s.n / 3);
    free(s.tags);
}

/* JVMPISHIM_MEMSTATS=1: one line on stderr at VMDeath with what the shim holds per
 * tracked object. The shim keeps no per-object table (the id, the "reported" flag and the
 * size live in the object's JVMTI tag, in the JVM's tag map); what it allocates in
 * proportion to objects is the queue of frees waiting for the next GC bracket and the
 * sizes too large for a tag. Those are counted here, with the process's malloc figure
 * (all arenas), which the benchmark compares with the native agent's at the same point. */
void memory_print_stats(void)
{
    const char *e = getenv("JVMPISHIM_MEMSTATS");
    if (e == NULL || e[0] == '\0' || e[0] == '0')
        return;
    jlong objects = 0, bytes = 0;
    mem_live_sum(&objects, &bytes);
    size_t queue, queue_peak;
    mem_free_queue_bytes(&queue, &queue_peak);
    size_t big;
    size_t nbig = mem_big_sizes(&big);
    struct mallinfo2 mi = mallinfo2();
    size_t own = queue + big, own_peak = queue_peak + big;
    fprintf(stderr,
            "jvmpishim: memstats: live_objects=%lld live_bytes=%lld own_bytes=%zu "
            "own_peak_bytes=%zu own_peak_per_object=%.3f free_queue=%zu free_queue_peak=%zu "
            "large_sizes=%zu large_size_bytes=%zu malloc_in_use=%zu\n",
            (long long)objects, (long long)bytes, own, own_peak,
            objects > 0 ? (double)own_peak / (double)objects : 0.0, queue, queue_peak, nbig,
            big, mi.uordblks + mi.hblkhd);
}

void memory_module_init(void)
{
    mem_alloc_register();
    mem_gc_register();
    /* Ids never move and the one arena never goes away: these succeed and never come. */
    struct event_row never = {.kind = EVK_ON};
    events_register(JVMPI_EVENT_OBJECT_MOVE, &never);
    events_register(JVMPI_EVENT_ARENA_DELETE, &never);
    struct event_row arena = {.kind = EVK_ON};
    events_register(JVMPI_EVENT_ARENA_NEW, &arena);
}

void memory_module_callbacks(jvmtiEventCallbacks *cb)
{
    mem_alloc_callbacks(cb);
    mem_gc_callbacks(cb);
}
