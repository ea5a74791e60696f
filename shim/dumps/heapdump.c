/* heapdump.c — RequestEvent(HEAP_DUMP) at levels 0, 1, 2 and RequestEvent(OBJECT_DUMP), and
 * the area's rows of the switchboard (dumps_module_init).
 *
 * A heap dump is built while the other threads are suspended (HotSpot built it at a
 * safepoint), in the JVMPI format of spec §4.2 / reference-behavior.md §4: records of a u1
 * type and data, ids and JNIEnv* native, numbers and primitive values big-endian. Every id
 * is the object's tag, the same id OBJECT_ALLOC, CLASS_LOAD, monitor events and ENTRY2
 * carry. Level 0 comes from one heap iteration (iterate.c); levels 1 and 2 from one
 * FollowReferences walk over the reachable heap (walk.c), then the objects it did not reach
 * (iterate.c). An OBJECT_DUMP reads its one object with JNI where it can (jnirecords.c) and
 * walks from it otherwise. This file holds the requests: it makes the class layouts
 * (layout.c), holds the other threads (world.c), runs the walk, puts the roots in front of
 * the records and posts the event, the objects the dump names announced first. The dump's
 * state is one struct walk (internal.h).
 */
#include "core/api.h"
#include "core/dumpcheck.h"
#include "core/ids.h"
#include "dumps/heapdump.h"
#include "dumps/internal.h"
#include "dumps/world.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"
#include "methods/bci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACE_DEPTH 1024

/* The other threads held still for the whole dump (world.c), and each thread's env and
 * frame count, for the frame roots. */
static void hold_world(JNIEnv *jni, struct walk *w, struct world *world)
{
    if (!world_hold(jni, world, TRACE_DEPTH)) {
        w->failed = true;
        return;
    }
    size_t n = world->n ? world->n : 1;
    w->thr_tags = calloc(n, sizeof *w->thr_tags);
    w->thr_envs = calloc(n, sizeof *w->thr_envs);
    w->thr_frames = calloc(n, sizeof *w->thr_frames);
    if (!w->thr_tags || !w->thr_envs || !w->thr_frames) {
        w->failed = true;
        return;
    }
    for (size_t i = 0; i < world->n; i++) {
        if (world->snap[i].thread == NULL)
            continue;
        jint fc = 0;
        jvmti_ignore((*g_shim.jvmti)->GetFrameCount(g_shim.jvmti, world->snap[i].thread, &fc),
                     "GetFrameCount for a heap dump's frame roots: without it they say -1");
        w->thr_tags[w->nthr] = ids_tag(ids_of_kept(jni, world->snap[i].thread));
        w->thr_envs[w->nthr] = world->snap[i].env;
        w->thr_frames[w->nthr] = fc;
        w->nthr++;
    }
}

static void walk_free(struct walk *w)
{
    unreached_drop(w);
    free(w->fresh);
    free_classes(w);
    free(w->prim_vals);
    db_free(&w->thread_roots);
    db_free(&w->other_roots);
    db_free(&w->objs);
    db_free(&w->cp);
    free(w->thr_tags);
    free(w->thr_envs);
    free(w->thr_frames);
    free(w->slots);
    free(w->slot_gen);
    free(w->elems);
    free(w->prim_copy);
    free(w->ifaces);
    free(w->len_ids);
    free(w->len_vals);
    free(w->vis);
    free(w->vbits);
    free(w->unreached);
    free(w->ord);
    free(w->ord_size);
    free(w->un_idx);
    free(w->un_done);
    free(w->fix);
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The record of `obj` (not a java.lang.Class) read with JNI. False if it needs the walk. */
static bool single_by_jni(struct walk *w, jobject obj)
{
    jlong cid = class_id_of(w->jni, obj);
    struct hclass *hc = cid ? hclass_find(w, cid) : NULL;
    if (hc == NULL || hc->is_class_class || hc->kind == HC_OTHER)
        return false;
    record_by_jni(w, obj, w->single_tag, hc);
    return true;
}

static bool single_is_class(struct walk *w, jobject single)
{
    jlong cid = class_id_of(w->jni, single);
    return cid != 0 && cid == w->class_class_id;
}

/* OBJECT_DUMP of a Class object the walk would give no record, or must not be given: the
 * mirror of a class not yet linked, and a Class object that is no class (a failed
 * definition's: build_classes made no layout for it), both instances of java.lang.Class read
 * with JNI; an array class's mirror, which has no record (true, nothing written). */
static bool single_mirror_by_jni(struct walk *w, jobject obj)
{
    struct hclass *self = hclass_find(w, w->single_tag);
    if (self == NULL && !single_is_class(w, obj))
        return false;
    if (self != NULL && (self->kind == HC_OBJ_ARRAY || self->kind == HC_PRIM_ARRAY))
        return true;
    if (self != NULL && (self->kind != HC_INSTANCE || self->linked))
        return false;
    mirror_by_jni(w, obj, w->single_tag);
    return true;
}

/* OBJECT_DUMP of a linked class: its record read with JNI, with the constant-pool entries,
 * signers and protection domain that one walk over all classes kept (classextras.c),
 * instead of a walk of its own. */
static bool single_class_by_extras(struct walk *w, jobject obj)
{
    struct hclass *self = hclass_find(w, w->single_tag);
    if (self == NULL || self->kind != HC_INSTANCE || !self->linked ||
        !single_is_class(w, obj) || !class_extras_take(w, w->single_tag))
        return false;
    mirror_by_jni(w, obj, w->single_tag);
    return true;
}

static bool single_is_prim_mirror(const struct walk *w)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == w->single_tag)
            return true;
    return false;
}

static bool hc_lookup(void *ctx, uint64_t id, struct dump_class_info *out)
{
    struct hclass *hc = hclass_find(ctx, (jlong)id);
    if (hc == NULL || hc->kind != HC_INSTANCE)
        return false;
    if (hc->stat_types == NULL) {
        hc->stat_types = malloc((size_t)hc->n_stat + 1);
        if (hc->stat_types == NULL)
            return false;
        for (jint i = 0; i < hc->n_stat; i++)
            hc->stat_types[i] = hc->stat[i].type;
    }
    out->num_interfaces = hc->num_interfaces;
    out->n_statics = hc->n_stat;
    out->static_types = hc->stat_types;
    return true;
}

/* The checkdumps option: walk the dump just built to its end before the agent sees it. */
static void check_dump(struct walk *w, const unsigned char *p, size_t len, int level,
                       const char *what)
{
    size_t bad = 0;
    char msg[256];
    if (dump_walk_heap(p, len, level, hc_lookup, w, NULL, NULL, &bad, msg, sizeof msg) != 0)
        log_error("checkdumps: %s level %d is malformed at offset %zu of %zu: %s", what, level,
                  bad, len, msg);
    else
        log_info("checkdumps: %s level %d: %zu bytes, well-formed", what, level, len);
}

/* Build a dump: level 0..2 of the whole reachable heap, or (single) one object's record. */
static jint build_and_post(struct instance *inst, JNIEnv *jni, int level, jobject single)
{
    double t0 = now_s();
    struct walk w;
    memset(&w, 0, sizeof w);
    w.jni = jni;
    w.level = level;
    w.single = single != NULL;
    w.gen = 1;
    w.announce = memory_alloc_complete();
    /* The probe class is the shim's: its mirror, the roots and constant-pool entries that
     * name it, are left out of every dump (HotSpot had no such class). Its tag, if it has
     * none yet, carries no "allocated" flag: it is never announced nor freed. */
    jclass hook = bci_hook_class();
    if (hook != NULL) {
        jlong t = 0;
        if (jvmti_ok_at((*g_shim.jvmti)->GetTag(g_shim.jvmti, hook, &t), LOG_DEBUG,
                        "GetTag of the probe class for a dump") && t == 0) {
            t = ids_new_tag(0, 0);
            if (!jvmti_ok_at((*g_shim.jvmti)->SetTag(g_shim.jvmti, hook, t), LOG_DEBUG,
                             "SetTag of the probe class for a dump"))
                t = 0;
        }
        w.hook_id = t & TAG_ID_MASK;
    }
    db_init(&w.thread_roots, 4096);
    db_init(&w.other_roots, 4096);
    db_init(&w.objs, single ? 4096 : 1 << 20);
    db_init(&w.cp, 256);
    jint rc = JVMPI_FAIL;
    struct world ts;
    memset(&ts, 0, sizeof ts);
    if (single != NULL) {
        jobjectID id = ids_of(jni, single);
        w.single_tag = ids_tag(id);
        /* The walk starts at it, so it is never a referee: take an array's length here. */
        jclass oc = (*jni)->GetObjectClass(jni, single);
        char *sig = NULL;
        if (jvmti_ok_at((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, oc, &sig, NULL),
                        LOG_DEBUG, "GetClassSignature of an OBJECT_DUMP's object")) {
            if (sig[0] == '[')
                len_put(&w, w.single_tag, (*jni)->GetArrayLength(jni, single));
            jvmti_free(g_shim.jvmti, sig);
        }
        (*jni)->DeleteLocalRef(jni, oc);
    }
    if (!build_classes(&w, single)) {
        walk_free(&w);
        return JVMPI_FAIL;
    }
    index_classes(&w);
    /* OBJECT_DUMP needs the primitive mirrors only to tell whether its object is one. */
    if (single == NULL || single_is_class(&w, single))
        prim_mirrors(&w);
    double tc = now_s();
    bool ok;
    if (single == NULL) {
        /* The class extras kept for OBJECT_DUMP start afresh with each dump: one built from
         * here on (for the classes the walk does not reach, or by a request meanwhile) is no
         * older than the dump. */
        class_extras_drop();
        w.facts = memory_facts_begin();
        hold_world(jni, &w, &ts);
        unreached_prepare(&w); /* before the first iteration: see there */
        if (level == JVMPI_DUMP_LEVEL_0) {
            ok = !w.failed && level0_records(&w);
        } else {
            vis_init(&w);
            ok = !w.failed && run_walk(&w, NULL);
        }
    } else if (single_is_prim_mirror(&w)) {
        ok = !w.failed; /* its record is written from what prim_mirrors read */
    } else if (!w.failed && single_mirror_by_jni(&w, single)) {
        ok = !w.failed;
    } else if (!w.failed && single_by_jni(&w, single)) {
        ok = !w.failed;
    } else if (!w.failed && single_class_by_extras(&w, single)) {
        ok = !w.failed;
    } else {
        ok = !w.failed && run_walk(&w, single);
    }
    if (ok)
        prim_records(&w);
    if (ok && single == NULL)
        ok = unreached_records(&w); /* before the threads run again (see above) */
    ok = ok && !w.failed; /* out of memory in a callback (array lengths, element copies) */
    world_resume(&ts);
    double t1 = now_s();
    if (t1 - t0 > 1.0)
        fprintf(stderr, "jvmpishim: heap dump level %d: %zu records in %.1f s\n", level,
                w.records, t1 - t0);

    place_roots(&w);
    struct dumpbuf out = w.objs;
    memset(&w.objs, 0, sizeof w.objs);
    if (w.thread_roots.len + w.other_roots.len > 0) {
        /* Roots after the first record, which JVMTI does not do: join them to the others,
         * at the cost of a copy. */
        struct dumpbuf j;
        db_init(&j, out.len + w.thread_roots.len + w.other_roots.len);
        db_bytes(&j, out.p, w.roots_len);
        db_bytes(&j, w.thread_roots.p, w.thread_roots.len);
        db_bytes(&j, w.other_roots.p, w.other_roots.len);
        db_bytes(&j, out.p + w.roots_len, out.len - w.roots_len);
        j.oom |= out.oom;
        db_free(&out);
        out = j;
    }
    const char *what = single ? "OBJECT_DUMP" : "HEAP_DUMP";
    /* The buffer grows by doubling (dumpbuf.c): its capacity is the dump's peak memory. */
    log_info("%s level %d: %zu bytes in a %zu-byte buffer, %zu records; class layouts %.0f ms, "
             "walk %.0f ms", what, level, out.len, out.cap, w.records, (tc - t0) * 1e3,
             (t1 - tc) * 1e3);
    bool good = ok && !out.oom && !w.objs.oom && !w.thread_roots.oom && !w.other_roots.oom;
    if (single == NULL && good)
        memory_facts_publish(w.facts); /* before the event: its handler's requests use them */
    else if (single == NULL)
        memory_facts_abandon(w.facts);
    w.facts = NULL;
    if (!good && !ok && log_vm_is_ending()) {
        /* A request from another thread of the agent while the JVM exits: JVMTI's heap
         * functions answer WRONG_PHASE from VMDeath on. */
        log_info("agent %d: RequestEvent(%s) while the JVM exits: JVMPI_FAIL", inst->slot, what);
    } else if (!good) {
        log_error("agent %d: RequestEvent(%s): %s: JVMPI_FAIL", inst->slot, what,
                  ok ? "out of memory" : "the heap walk failed");
    } else if (single != NULL && w.records == 0) {
        /* A heap analyzer asks about every id of a dump: one warning, the others at info. */
        static atomic_bool warned;
        report_misuse(inst, atomic_exchange(&warned, true) ? LOG_INFO : LOG_WARN,
                      "RequestEvent(OBJECT_DUMP): the object has no dump record (an "
                      "array class's mirror): JVMPI_FAIL");
    } else {
        if (g_shim.check_dumps)
            check_dump(&w, out.p, out.len, single ? 2 : level, what);
        /* Definition before use, after the other threads run again (an agent's handler may
         * wait for one of them) and before the dump names the objects. */
        apply_fixes(&w);
        memory_announce_tags(jni, w.fresh, w.nfresh / 3);
        if (w.fresh_oom)
            log_warn("%s: out of memory: some objects the dump names have no OBJECT_ALLOC", what);
        JVMPI_Event ev;
        if (single != NULL) {
            event_init(&ev, JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT, jni);
            ev.u.object_dump.data_len = (jint)out.len;
            ev.u.object_dump.data = (char *)out.p;
            /* HotSpot filled heap_dump.begin/end here (begin overlays data): agents that
             * read heap_dump.end find it too. */
            ev.u.heap_dump.end = (char *)out.p + out.len;
        } else {
            event_init(&ev, JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT, jni);
            ev.u.heap_dump.dump_level = level;
            ev.u.heap_dump.begin = (char *)out.p;
            ev.u.heap_dump.end = (char *)out.p + out.len;
            ev.u.heap_dump.num_traces = (jint)ts.n;
            ev.u.heap_dump.traces = ts.n ? ts.traces : NULL;
        }
        event_post(inst, &ev);
        rc = JVMPI_SUCCESS;
    }
    db_free(&out);
    world_free(jni, &ts);
    walk_free(&w);
    return rc;
}

static jint heapdump_request(struct instance *inst, JNIEnv *jni, void *arg)
{
    int level = arg ? ((JVMPI_HeapDumpArg *)arg)->heap_dump_level : JVMPI_DUMP_LEVEL_2;
    if (level < JVMPI_DUMP_LEVEL_0 || level > JVMPI_DUMP_LEVEL_2) {
        report_misuse(inst, LOG_WARN,
                      "RequestEvent(HEAP_DUMP) with heap_dump_level %d: levels are 0, 1 "
                      "and 2: JVMPI_FAIL", level);
        return JVMPI_FAIL;
    }
    /* Frees of a collection that has finished come before the dump (HotSpot posted them
     * during the collection): the agent's books then match what the dump holds. */
    memory_deliver_frees(jni, false);
    (*jni)->PushLocalFrame(jni, 64);
    jint rc = build_and_post(inst, jni, level, NULL);
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

static jint objectdump_request(struct instance *inst, JNIEnv *jni, void *arg)
{
    jobjectID id = arg;
    memory_deliver_frees(jni, false); /* as for HEAP_DUMP */
    (*jni)->PushLocalFrame(jni, 64);
    const char *why = NULL;
    jobject o = ids_resolve(jni, id, &why);
    jint rc = JVMPI_FAIL;
    if (o == NULL)
        ids_bad(inst, ids_bad_kind(why), "RequestEvent(OBJECT_DUMP, %p): %s: JVMPI_FAIL",
                (void *)id, why);
    else
        rc = build_and_post(inst, jni, JVMPI_DUMP_LEVEL_2, o);
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

void dumps_module_init(void)
{
    monitordump_module_init();
    struct event_row hdump = {.kind = EVK_REQUEST_ONLY, .request = heapdump_request};
    events_register(JVMPI_EVENT_HEAP_DUMP, &hdump);
    struct event_row odump = {.kind = EVK_REQUEST_ONLY, .request = objectdump_request};
    events_register(JVMPI_EVENT_OBJECT_DUMP, &odump);
}
