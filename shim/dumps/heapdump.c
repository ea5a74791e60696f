/* heapdump.c — RequestEvent(HEAP_DUMP) at levels 0, 1, 2 and RequestEvent(OBJECT_DUMP).
 *
 * The dump is built from one JVMTI FollowReferences walk over the reachable heap while the
 * other threads are suspended (HotSpot built it at a safepoint), in the JVMPI format of
 * spec §4.2 / reference-behavior.md §4: records of a u1 type and data, ids and JNIEnv*
 * native, numbers and primitive values big-endian. Every id is the object's tag, the same
 * id OBJECT_ALLOC, CLASS_LOAD, monitor events and ENTRY2 carry.
 *
 * JVMTI reports all roots before it visits any object, and every visited object first
 * as the referrer of its CLASS reference, then its fields, array elements or statics, so a
 * record is written as soon as the walk moves on to the next referrer (streaming; no
 * per-object storage). Field references and primitive fields come with JVMTI's field index
 * (interface fields of the whole hierarchy first, then each class's fields from
 * java.lang.Object down, in GetClassFields order); a per-class layout maps them to
 * JVMPI's order: the class's own fields in reverse declaration order, then its
 * superclass's, and so on — the order CLASS_LOAD lists them in.
 *
 * Roots: first the per-thread ones, JAVA_FRAME and JNI_LOCAL (obj, JNIEnv*, u4 frame
 * number counted N..1 from the top frame, as HotSpot did), then the others in the order
 * JVMTI reports them (HotSpot sorted each kind by address; the order carries no meaning):
 * JNI_GLOBAL (obj, handle:
 * JVMTI does not tell the handle, so it is NULL), STICKY_CLASS for system classes,
 * MONITOR_USED. JVMTI's THREAD and OTHER roots get no record: HotSpot emitted only these
 * six kinds (never THREAD_OBJ, UNKNOWN or THREAD_BLOCK); their objects are dumped all the
 * same.
 * Class dumps: super, loader, signers and protection domain from the walk, class name NULL
 * (as HotSpot), reserved NULL, instance size computed from the fields (12-byte header,
 * 4-byte references: compressed oops and class pointers, the default; 8-aligned),
 * interfaces, resolved constant-pool object
 * constants (u2 index, JVMPI_CLASS, id), statics in CLASS_LOAD's order. Level 1 omits
 * primitive field, static and array element values, as the spec says. Array-class mirrors
 * appear only at level 0, as in HotSpot. Mirrors of primitive classes (int.class, ...) are
 * instances of java.lang.Class, as in HotSpot; JVMTI's walk reports them only as roots and
 * referees, so their fields are read with JNI before the walk (prim_mirrors) and their
 * records written after it (prim_records).
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/dumpbuf.h"
#include "core/dumpcheck.h"
#include "core/ids.h"
#include "core/worker.h"
#include "dumps/heapdump.h"
#include "events/events.h"
#include "events/report.h"
#include "memory/memory.h"
#include "methods/bci.h"
#include "methods/calltrace.h"
#include "threads/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#define TRACE_DEPTH 1024

/* Field layout of a class, in JVMTI index space and JVMPI order. */
struct hfield {
    jint index;     /* JVMTI field index (for instances of THIS class) */
    char type;      /* signature char: 'L' for references ('[' folded into 'L') */
    jfieldID fid;   /* for reading a primitive mirror's fields with JNI (see prim_mirrors) */
};

struct hclass {
    jlong id;                   /* key: class id */
    enum { HC_INSTANCE, HC_OBJ_ARRAY, HC_PRIM_ARRAY, HC_OTHER } kind;
    char elem_type;             /* primitive arrays */
    jlong elem_id;              /* object arrays: element class id */
    jint nslots;                /* size of JVMTI index space for instances */
    jint n_inst;                /* instance fields, JVMPI order (own reversed, then super's) */
    struct hfield *inst;
    jint n_stat;                /* own statics, reverse declaration order */
    struct hfield *stat;
    char *stat_types;           /* signature chars of stat[], for the dump checker */
    jint num_interfaces;
    jlong instance_size;        /* from the heap if seen, else computed */
    jlong super_id;             /* JVMTI's walk does not report java.lang.Object as a super */
    bool is_class_class;        /* java.lang.Class */
    bool linked;                /* prepared: JVMTI lists its fields, and walks its mirror */
    bool filler;                /* the JVM's heap filler (no Java object): never dumped */
    bool borrowed;              /* inst and stat belong to the layout cache */
    UT_hash_handle hh;
};

/* Layouts of prepared classes outlive a dump: a class's fields, supers and interfaces never
 * change (RedefineClasses may not change them), and ids are never reused, so a layout made
 * once is right for every later dump: a second heap dump and every OBJECT_DUMP skip the
 * JVMTI field queries that were most of an OBJECT_DUMP's time. The walk's records borrow
 * the cached field arrays. Entries stay after their class is unloaded (a few hundred bytes
 * per class ever dumped). layout_lock is a leaf. */
static struct hclass *layout_cache;
static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;

static bool layout_cached(jlong id, struct hclass *out)
{
    struct hclass *c;
    pthread_mutex_lock(&layout_lock);
    HASH_FIND(hh, layout_cache, &id, sizeof id, c);
    if (c != NULL) {
        *out = *c;
        memset(&out->hh, 0, sizeof out->hh);
        out->stat_types = NULL;
        out->borrowed = true;
    }
    pthread_mutex_unlock(&layout_lock);
    return c != NULL;
}

/* Keep a copy of hc's layout; hc then borrows the cache's arrays. */
static void layout_keep(struct hclass *hc)
{
    struct hclass *c = malloc(sizeof *c);
    if (c == NULL)
        return;
    *c = *hc;
    memset(&c->hh, 0, sizeof c->hh);
    c->stat_types = NULL;
    pthread_mutex_lock(&layout_lock);
    struct hclass *old;
    HASH_FIND(hh, layout_cache, &c->id, sizeof c->id, old);
    if (old == NULL) {
        HASH_ADD(hh, layout_cache, id, sizeof c->id, c);
        hc->borrowed = true;
    }
    pthread_mutex_unlock(&layout_lock);
    if (old != NULL)
        free(c); /* another dump kept it first; hc keeps its own arrays */
}

struct walk {
    JNIEnv *jni;
    int level;
    /* OBJECT_ALLOC has been on since start-up: an object the walk is first to tag is one
     * JVMTI never reported (memory.c). Its tag gets the "allocation posted" flag here, and
     * (tag, class tag, size) goes to fresh, to be announced before the dump is delivered. */
    bool announce;
    jlong *fresh;
    size_t nfresh, fresh_cap;
    bool fresh_oom;
    bool single;                /* OBJECT_DUMP: only the initial object */
    jlong single_tag;
    struct hclass *classes;
    /* The classes again, by id in an open-addressing table (cmask + 1 slots, a power of
     * two): finish_current looks one up per record, and uthash's lookup (a Jenkins hash
     * and a chain) was 8 % of a dump's samples. */
    struct hclass **ctab;
    size_t cmask;
    jlong class_class_id;       /* id of java.lang.Class */
    /* Mirrors of the primitive classes: JVMTI reports them as roots and referees but never
     * as referrers (HotSpot's walk skips them), so their fields are read with JNI before
     * the walk and their records written after it, for those the walk reached.
     * prim_min..prim_max bounds their ids so that the check in ref_cb costs two compares. */
    jlong prim_ids[9];
    jlong *prim_vals;           /* [mirror * n_inst of java.lang.Class + field], as slots */
    bool prim_seen[9];
    int n_prims, prims_unseen;  /* once all are seen (they are VM roots), ref_cb stops looking */
    jlong prim_min, prim_max;
    /* Roots, buffered so they come out in HotSpot's order. */
    struct dumpbuf thread_roots, other_roots;
    struct dumpbuf objs;        /* the dump: roots (placed before the first record), then
                                 * object records; handed to the agent without a copy */
    bool roots_placed;
    size_t roots_len;           /* bytes of roots at the start of objs */
    /* thread tag -> (env, frame count) */
    jlong *thr_tags;
    JNIEnv **thr_envs;
    jint *thr_frames;
    size_t nthr;
    /* The referrer being assembled. */
    jlong cur_tag;              /* full tag; 0 = none */
    jlong cur_class;            /* its class id */
    jlong cur_size;
    jint cur_len;               /* array length, -1 for non-arrays */
    jlong *slots;               /* reference ids or raw primitive bits, by JVMTI index */
    uint32_t *slot_gen;         /* slots[i] belongs to the current record iff slot_gen[i] == gen */
    uint32_t gen;               /* bumped per record: nothing is cleared between records */
    jint slots_cap;
    jlong *elems;               /* object array elements */
    jint elems_cap;
    jint elems_used;            /* highest index written + 1: zeroed as the record is written */
    unsigned char *prim_copy;   /* a primitive array's elements, copied at callback time */
    size_t prim_copy_len, prim_copy_cap; /* reused from record to record, grown by doubling */
    jlong super_id, loader_id, signers_id, pd_id;
    jlong *ifaces;
    jint n_ifaces, ifaces_cap;
    struct dumpbuf cp;          /* constant pool entries of the class being assembled */
    jint n_cp;
    jlong hook_id;              /* the probe class's id: left out of the dump */
    /* Array lengths: JVMTI gives an object's length only where it is a referee, and an
     * array's record is written when it is the referrer. id -> length, open addressing. */
    jlong *len_ids;
    jint *len_vals;
    size_t len_cap, len_n;
    size_t records;
    bool failed;
    /* Levels 1 and 2: the ids the walk wrote a record for, so that the heap iteration after
     * it finds the objects it did not reach. A bitmap over the ids issued so far (one bit
     * per id: the ids are serials), or, when they span too many for that, a hash (open
     * addressing, at most half full). Ids issued during the dump (the walk's fresh tags)
     * lie past the bitmap and go to the hash. */
    uint64_t *vbits;
    jlong vbase, vlimit;        /* the bitmap covers ids in [vbase, vlimit) */
    jlong *vis;
    size_t vis_cap, vis_hn;     /* the hash: slots, entries */
    size_t vis_n;               /* records of the walk */
    /* Objects the walk did not reach: (id, class id) pairs, written after it with JNI. */
    jlong *unreached;
    size_t n_unreached, unreached_cap;
    uint64_t *ord;              /* each one's ordinal in the heap iteration */
    uint64_t ord_at, ord_next;
    size_t *un_idx, un_cap;     /* id -> index + 1 into unreached (open addressing) */
    unsigned char *un_done;     /* its record is written */
    /* Objects whose class the dump did not know (a hidden class the JVM loaded from the CDS
     * archive before the agent, which no JVMTI event or GetLoadedClasses names): (id, class
     * id) once JNI told the class, for the OBJECT_ALLOCs announced before the dump. */
    jlong *fix;
    size_t n_fix, fix_cap;
    size_t lost;                /* of them, collected before they could be read */
};

static size_t len_slot(const struct walk *w, jlong id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (w->len_cap - 1);
}

static void len_put(struct walk *w, jlong id, jint length)
{
    if (length < 0)
        return;
    if (2 * (w->len_n + 1) > w->len_cap) {
        size_t cap = w->len_cap ? w->len_cap * 2 : 4096;
        jlong *ids = calloc(cap, sizeof *ids);
        jint *vals = calloc(cap, sizeof *vals);
        if (ids == NULL || vals == NULL) {
            free(ids);
            free(vals);
            w->failed = true;
            return;
        }
        jlong *old_ids = w->len_ids;
        jint *old_vals = w->len_vals;
        size_t old_cap = w->len_cap;
        w->len_ids = ids;
        w->len_vals = vals;
        w->len_cap = cap;
        w->len_n = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old_ids[i] != 0)
                len_put(w, old_ids[i], old_vals[i]);
        free(old_ids);
        free(old_vals);
    }
    size_t i = len_slot(w, id);
    while (w->len_ids[i] != 0 && w->len_ids[i] != id)
        i = (i + 1) & (w->len_cap - 1);
    if (w->len_ids[i] == 0) {
        w->len_ids[i] = id;
        w->len_vals[i] = length;
        w->len_n++;
    }
}

static jint len_get(const struct walk *w, jlong id)
{
    if (w->len_cap == 0)
        return -1;
    size_t i = len_slot(w, id);
    while (w->len_ids[i] != 0) {
        if (w->len_ids[i] == id)
            return w->len_vals[i];
        i = (i + 1) & (w->len_cap - 1);
    }
    return -1;
}

static size_t vis_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 21) & (cap - 1);
}

/* A bitmap of at most 32 MB: ids issued up to 256 M. */
#define VIS_BITMAP_MAX_IDS ((jlong)1 << 28)

static void vis_init(struct walk *w)
{
    jlong base = ids_first(), limit = ids_next(), n = (limit - base) / 8 + 1;
    if (n > VIS_BITMAP_MAX_IDS || (w->vbits = calloc((size_t)(n + 63) / 64, 8)) == NULL)
        return;
    w->vbase = base;
    w->vlimit = limit;
}

static void vis_add(struct walk *w, jlong id)
{
    if (id >= w->vbase && id < w->vlimit && w->vbits != NULL) {
        uint64_t b = (uint64_t)(id - w->vbase) / 8;
        w->vbits[b / 64] |= (uint64_t)1 << (b % 64);
        w->vis_n++;
        return;
    }
    w->vis_n++;
    if (2 * (w->vis_hn + 1) > w->vis_cap) {
        size_t cap = w->vis_cap ? w->vis_cap * 2 : 1 << 16;
        jlong *v = calloc(cap, sizeof *v);
        if (v == NULL) {
            w->failed = true;
            return;
        }
        for (size_t i = 0; i < w->vis_cap; i++)
            if (w->vis[i] != 0) {
                size_t k = vis_slot(w->vis[i], cap);
                while (v[k] != 0)
                    k = (k + 1) & (cap - 1);
                v[k] = w->vis[i];
            }
        free(w->vis);
        w->vis = v;
        w->vis_cap = cap;
    }
    size_t k = vis_slot(id, w->vis_cap);
    while (w->vis[k] != 0 && w->vis[k] != id)
        k = (k + 1) & (w->vis_cap - 1);
    if (w->vis[k] == 0) {
        w->vis[k] = id;
        w->vis_hn++;
    }
}

static bool vis_has(const struct walk *w, jlong id)
{
    if (id >= w->vbase && id < w->vlimit && w->vbits != NULL) {
        uint64_t b = (uint64_t)(id - w->vbase) / 8;
        return (w->vbits[b / 64] >> (b % 64)) & 1;
    }
    if (w->vis_cap == 0)
        return false;
    for (size_t k = vis_slot(id, w->vis_cap); w->vis[k] != 0; k = (k + 1) & (w->vis_cap - 1))
        if (w->vis[k] == id)
            return true;
    return false;
}

/* Room for one more (tag, class tag, size) in fresh; false (and fresh_oom) if none. */
static bool fresh_room(struct walk *w)
{
    if (w->nfresh + 3 > w->fresh_cap) {
        size_t cap = w->fresh_cap ? w->fresh_cap * 2 : 3 * 256;
        jlong *f = realloc(w->fresh, cap * sizeof *f);
        if (f == NULL) {
            w->fresh_oom = true; /* not announced: an id without its OBJECT_ALLOC */
            return false;
        }
        w->fresh = f;
        w->fresh_cap = cap;
    }
    return true;
}

static void fresh_add(struct walk *w, jlong tag, jlong class_tag, jlong size)
{
    w->fresh[w->nfresh++] = tag;
    w->fresh[w->nfresh++] = class_tag;
    w->fresh[w->nfresh++] = size;
}

static jlong tag_or_new(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size)
{
    if (*tag_ptr != 0)
        return *tag_ptr & TAG_ID_MASK;
    if (!w->announce || !fresh_room(w)) {
        *tag_ptr = ids_new_tag(size, 0);
        return *tag_ptr & TAG_ID_MASK;
    }
    *tag_ptr = ids_new_tag(size, TAG_ALLOCATED);
    fresh_add(w, *tag_ptr, class_tag, size);
    return *tag_ptr & TAG_ID_MASK;
}

static size_t ctab_slot(jlong id, size_t mask)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 24) & mask;
}

static struct hclass *hclass_find(struct walk *w, jlong id)
{
    if (w->ctab == NULL) {
        struct hclass *c;
        HASH_FIND(hh, w->classes, &id, sizeof id, c);
        return c;
    }
    for (size_t i = ctab_slot(id, w->cmask);; i = (i + 1) & w->cmask) {
        struct hclass *c = w->ctab[i];
        if (c == NULL || c->id == id)
            return c;
    }
}

/* After build_classes: the open-addressing index, at most half full. */
static void index_classes(struct walk *w)
{
    size_t n = HASH_COUNT(w->classes), cap = 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    w->ctab = calloc(cap, sizeof *w->ctab);
    if (w->ctab == NULL)
        return; /* hclass_find falls back to the hash */
    w->cmask = cap - 1;
    for (struct hclass *c = w->classes; c != NULL; c = c->hh.next) {
        size_t i = ctab_slot(c->id, w->cmask);
        while (w->ctab[i] != NULL)
            i = (i + 1) & w->cmask;
        w->ctab[i] = c;
    }
}

/* The value the walk reported for JVMTI field index i of the current record, else 0. */
static inline jlong slot_value(const struct walk *w, jint i)
{
    return (i < w->slots_cap && w->slot_gen[i] == w->gen) ? w->slots[i] : 0;
}

static int type_size(char t)
{
    switch (t) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return (int)sizeof(void *);
    }
}

/* ---- class layouts (before the walk, with JNI and JVMTI) ---- */

static void collect_interfaces(JNIEnv *jni, jclass c, jclass **seen, jint *n, jint *cap)
{
    jint ni = 0;
    jclass *is = NULL;
    if ((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, c, &ni, &is) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < ni; i++) {
        bool dup = false;
        for (jint k = 0; k < *n && !dup; k++)
            dup = (*jni)->IsSameObject(jni, (*seen)[k], is[i]);
        if (!dup) {
            if (*n == *cap) {
                jint nc = *cap ? *cap * 2 : 8;
                jclass *p = realloc(*seen, sizeof *p * (size_t)nc);
                if (p == NULL)
                    continue;
                *seen = p;
                *cap = nc;
            }
            (*seen)[(*n)++] = is[i];
            collect_interfaces(jni, is[i], seen, n, cap);
        }
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)is);
}

static jint field_count(jclass c)
{
    jint n = 0;
    jfieldID *fs = NULL;
    if ((*g_shim.jvmti)->GetClassFields(g_shim.jvmti, c, &n, &fs) != JVMTI_ERROR_NONE)
        return 0;
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)fs);
    return n;
}

static char sig_type(const char *sig)
{
    return (sig[0] == 'L' || sig[0] == '[') ? 'L' : sig[0];
}

static void layout_class(JNIEnv *jni, struct hclass *hc, jclass cls)
{
    jvmtiEnv *j = g_shim.jvmti;
    /* The superclass chain, bottom (cls) first. */
    jclass chain[256];
    jint depth = 0;
    chain[depth++] = (*jni)->NewLocalRef(jni, cls);
    while (depth < 256) {
        jclass s = (*jni)->GetSuperclass(jni, chain[depth - 1]);
        if (s == NULL)
            break;
        chain[depth++] = s;
    }
    /* Interface fields of the whole hierarchy come first in JVMTI's index space. */
    jclass *ifs = NULL;
    jint nif = 0, capif = 0, iface_fields = 0;
    for (jint d = 0; d < depth; d++)
        collect_interfaces(jni, chain[d], &ifs, &nif, &capif);
    for (jint k = 0; k < nif; k++) {
        iface_fields += field_count(ifs[k]);
        (*jni)->DeleteLocalRef(jni, ifs[k]);
    }
    free(ifs);
    jint direct = 0;
    jclass *dis = NULL;
    if ((*j)->GetImplementedInterfaces(j, cls, &direct, &dis) == JVMTI_ERROR_NONE) {
        for (jint k = 0; k < direct; k++)
            (*jni)->DeleteLocalRef(jni, dis[k]);
        (*j)->Deallocate(j, (unsigned char *)dis);
    }
    hc->num_interfaces = direct;
    if (depth > 1)
        hc->super_id = ids_tag(ids_of(jni, chain[1]));

    /* base[d]: index of the first field of chain[d] = interface fields + fields of the
     * classes above it. */
    jint base[256], total = iface_fields;
    for (jint d = depth - 1; d >= 0; d--) {
        base[d] = total;
        total += field_count(chain[d]);
    }
    hc->nslots = total;
    hc->inst = calloc(total ? (size_t)total : 1, sizeof *hc->inst);
    hc->stat = calloc(total ? (size_t)total : 1, sizeof *hc->stat);
    jlong computed = 12;
    for (jint d = 0; d < depth && hc->inst && hc->stat; d++) {
        jint nf = 0;
        jfieldID *fs = NULL;
        if ((*j)->GetClassFields(j, chain[d], &nf, &fs) != JVMTI_ERROR_NONE)
            continue;
        for (jint i = nf - 1; i >= 0; i--) { /* reverse declaration order */
            char *name = NULL, *sig = NULL;
            jint mods = 0;
            if ((*j)->GetFieldName(j, chain[d], fs[i], &name, &sig, NULL) != JVMTI_ERROR_NONE)
                continue;
            (*j)->GetFieldModifiers(j, chain[d], fs[i], &mods);
            struct hfield f = {base[d] + i, sig_type(sig), fs[i]};
            if (mods & 0x0008) {
                if (d == 0)
                    hc->stat[hc->n_stat++] = f;
            } else {
                hc->inst[hc->n_inst++] = f;
                computed += f.type == 'L' ? 4 : type_size(f.type); /* compressed oops */
            }
            (*j)->Deallocate(j, (unsigned char *)name);
            (*j)->Deallocate(j, (unsigned char *)sig);
        }
        (*j)->Deallocate(j, (unsigned char *)fs);
    }
    hc->instance_size = (computed + 7) & ~7LL;
    for (jint d = 0; d < depth; d++)
        (*jni)->DeleteLocalRef(jni, chain[d]);
}

/* The layout record of one class, added to the walk's table (once per class). */
static void build_class(struct walk *w, jclass cls, jclass class_class)
{
    JNIEnv *jni = w->jni;
    jobjectID id = classes_id_announced(jni, cls);
    struct hclass *hc = NULL;
    if (id != NULL)
        HASH_FIND(hh, w->classes, &(jlong){ids_tag(id)}, sizeof(jlong), hc);
    if (hc != NULL || id == NULL || (hc = calloc(1, sizeof *hc)) == NULL)
        return;
    if (layout_cached(ids_tag(id), hc)) {
        if (hc->is_class_class)
            w->class_class_id = hc->id;
        HASH_ADD(hh, w->classes, id, sizeof hc->id, hc);
        return;
    }
    (*jni)->PushLocalFrame(jni, 32);
    hc->id = ids_tag(id);
    jint st = 0;
    (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, cls, &st);
    char *sig = NULL;
    (*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, cls, &sig, NULL);
    if (st & JVMTI_CLASS_STATUS_PRIMITIVE) {
        hc->kind = HC_OTHER;
    } else if (sig != NULL && sig[0] == '[') {
        jint is_array = 0;
        jobjectID elem = NULL;
        classes_alloc_info(jni, cls, &is_array, &elem);
        hc->kind = is_array == JVMPI_CLASS ? HC_OBJ_ARRAY : HC_PRIM_ARRAY;
        hc->elem_type = sig[1];
        hc->elem_id = ids_tag(elem);
    } else {
        hc->kind = HC_INSTANCE;
        hc->linked = (st & JVMTI_CLASS_STATUS_PREPARED) != 0;
        layout_class(jni, hc, cls);
        hc->is_class_class = class_class != NULL && (*jni)->IsSameObject(jni, cls, class_class);
        if (hc->is_class_class)
            w->class_class_id = hc->id;
    }
    /* Heap fillers: the dead space JDK 25 formats as objects of its own classes
     * (jdk.internal.vm.FillerObject, FillerElement[]). No Java object; HotSpot had none. */
    hc->filler = sig != NULL && (strncmp(sig, "Ljdk/internal/vm/Filler", 23) == 0 ||
                                 strncmp(sig, "[Ljdk/internal/vm/Filler", 24) == 0);
    if (sig)
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
    /* Before preparation JVMTI lists no fields: such a layout is for this dump only. An
     * array class's element id is cached only once known. */
    if ((st & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY)) &&
        (hc->kind != HC_INSTANCE || (hc->inst != NULL && hc->stat != NULL)) &&
        (hc->kind != HC_OBJ_ARRAY || hc->elem_id != 0))
        layout_keep(hc);
    HASH_ADD(hh, w->classes, id, sizeof hc->id, hc);
    (*jni)->PopLocalFrame(jni, NULL);
}

/* Class layouts before the walk. A heap dump needs every loaded class's; OBJECT_DUMP
 * (single) only those its one record can name: the object's class, java.lang.Class (a
 * primitive mirror's fields, and whether the object is a class), and, for a class mirror,
 * that class. Building every layout cost an OBJECT_DUMP 10-30 ms with a few thousand
 * classes loaded. */
static bool build_classes(struct walk *w, jobject single)
{
    JNIEnv *jni = w->jni;
    jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
    if (single != NULL) {
        jclass oc = (*jni)->GetObjectClass(jni, single);
        if (class_class != NULL)
            build_class(w, class_class, class_class);
        if (oc != NULL)
            build_class(w, oc, class_class);
        jint st = 0;
        /* Not a primitive mirror's: GetLoadedClasses, which the heap dump's table comes
         * from, never lists those, and their record is an instance of java.lang.Class. */
        if (oc != NULL && class_class != NULL && (*jni)->IsSameObject(jni, oc, class_class) &&
            (*g_shim.jvmti)->GetClassStatus(g_shim.jvmti, (jclass)single, &st) ==
                JVMTI_ERROR_NONE && !(st & JVMTI_CLASS_STATUS_PRIMITIVE))
            build_class(w, (jclass)single, class_class);
        if (oc != NULL)
            (*jni)->DeleteLocalRef(jni, oc);
        if (class_class != NULL)
            (*jni)->DeleteLocalRef(jni, class_class);
        return true;
    }
    jint n = 0;
    jclass *cs = NULL;
    if (!jvmti_ok((*g_shim.jvmti)->GetLoadedClasses(g_shim.jvmti, &n, &cs),
                  "GetLoadedClasses for a heap dump"))
        return false;
    (*jni)->EnsureLocalCapacity(jni, n + 16); /* one local reference per class */
    for (jint i = 0; i < n; i++) {
        build_class(w, cs[i], class_class);
        (*jni)->DeleteLocalRef(jni, cs[i]);
    }
    (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)cs);
    if (class_class != NULL)
        (*jni)->DeleteLocalRef(jni, class_class);
    return true;
}

static void free_classes(struct walk *w)
{
    free(w->ctab);
    w->ctab = NULL;
    struct hclass *c, *tmp;
    HASH_ITER(hh, w->classes, c, tmp) {
        HASH_DEL(w->classes, c);
        if (!c->borrowed) {
            free(c->inst);
            free(c->stat);
        }
        free(c->stat_types);
        free(c);
    }
}

/* ---- writing records ---- */

static void put_id(struct dumpbuf *b, jlong id)
{
    db_ptr(b, (const void *)(intptr_t)id);
}

static void put_value(struct dumpbuf *b, char type, jlong v)
{
    switch (type) {
    case 'Z': case 'B': db_u1(b, (uint8_t)v); break;
    case 'C': case 'S': db_u2(b, (uint16_t)v); break;
    case 'I': case 'F': db_u4(b, (uint32_t)v); break;
    case 'J': case 'D': db_u8(b, (uint64_t)v); break;
    default: put_id(b, v); break;
    }
}

static jint level0_type(struct hclass *hc)
{
    if (hc == NULL || hc->kind == HC_INSTANCE || hc->kind == HC_OTHER)
        return JVMPI_NORMAL_OBJECT;
    if (hc->kind == HC_OBJ_ARRAY)
        return JVMPI_CLASS;
    return classes_type_code(hc->elem_type);
}

/* JVMTI reports every root before the first referrer, so when the first record is due the
 * roots are complete: they go to the front of the dump buffer in HotSpot's order (per-thread
 * roots first). The 70 MB dump of 2 M objects was copied once more before this. */
static void place_roots(struct walk *w)
{
    if (w->roots_placed)
        return;
    w->roots_placed = true;
    if (w->single)
        return;
    db_bytes(&w->objs, w->thread_roots.p, w->thread_roots.len);
    db_bytes(&w->objs, w->other_roots.p, w->other_roots.len);
    w->roots_len = w->objs.len;
    w->thread_roots.len = w->other_roots.len = 0;
}

/* The current referrer is complete: write its record. */
static void finish_current(struct walk *w)
{
    if (w->cur_tag == 0)
        return;
    place_roots(w);
    jlong id = w->cur_tag & TAG_ID_MASK;
    if (w->level > 0 && !w->single)
        vis_add(w, id);
    struct hclass *oc = hclass_find(w, w->cur_class);   /* its class */
    /* Only a java.lang.Class instance can be a class itself: one lookup for the others. */
    struct hclass *self = (w->level > 0 && oc != NULL && oc->is_class_class) ? hclass_find(w, id) : NULL;
    struct dumpbuf *b = &w->objs;
    bool prims = w->level >= 2;
    w->records++;

    if (w->level == 0) {
        db_u1(b, (uint8_t)level0_type(oc));
        put_id(b, id);
    } else if (self != NULL && oc != NULL && oc->is_class_class &&
               (self->kind != HC_INSTANCE || self->linked)) {
        /* A class not yet linked falls through to an instance of java.lang.Class (below):
         * JVMTI lists no fields or interfaces for it, and a CLASS_DUMP needs both. */
        if (self->kind == HC_INSTANCE) {
            db_u1(b, JVMPI_GC_CLASS_DUMP);
            put_id(b, id);
            put_id(b, w->super_id ? w->super_id : self->super_id);
            put_id(b, w->loader_id);
            put_id(b, w->signers_id);
            put_id(b, w->pd_id);
            put_id(b, 0);   /* class name: HotSpot's interned-name lookup gave NULL */
            put_id(b, 0);   /* reserved */
            db_u4(b, (uint32_t)self->instance_size);
            /* Interfaces as JVMTI reported them; JVMPI writes no count (the reader has
             * num_interfaces from CLASS_LOAD), so exactly that many. */
            for (jint i = 0; i < self->num_interfaces; i++)
                put_id(b, i < w->n_ifaces ? w->ifaces[i] : 0);
            db_u2(b, (uint16_t)w->n_cp);
            db_bytes(b, w->cp.p, w->cp.len);
            for (jint i = 0; i < self->n_stat; i++) {
                struct hfield *f = &self->stat[i];
                jlong v = slot_value(w, f->index);
                if (f->type == 'L')
                    put_id(b, v);
                else if (prims)
                    put_value(b, f->type, v);
            }
        } else {
            w->records--; /* array-class mirrors: level 0 only (HotSpot) */
        }
    } else if (oc != NULL && oc->kind == HC_OBJ_ARRAY) {
        db_u1(b, JVMPI_GC_OBJ_ARRAY_DUMP);
        put_id(b, id);
        jint len = w->cur_len >= 0 ? w->cur_len : len_get(w, id);
        if (len < 0)
            len = 0;
        db_u4(b, (uint32_t)len);
        put_id(b, oc->elem_id);
        /* Read and zero in one pass: the buffer is clean for the next array. */
        jint n = len < w->elems_cap ? len : w->elems_cap;
        if (db_room(b, (size_t)len * sizeof(void *))) {
            for (jint i = 0; i < n; i++) {
                void *e = (void *)(intptr_t)w->elems[i];
                memcpy(b->p + b->len, &e, sizeof e);
                b->len += sizeof e;
                w->elems[i] = 0;
            }
            for (jint i = n; i < len; i++) {
                memset(b->p + b->len, 0, sizeof(void *));
                b->len += sizeof(void *);
            }
            if (w->elems_used <= n)
                w->elems_used = 0;
        }
    } else if (oc != NULL && oc->kind == HC_PRIM_ARRAY) {
        db_u1(b, JVMPI_GC_PRIM_ARRAY_DUMP);
        put_id(b, id);
        jint len = w->cur_len < 0 ? 0 : w->cur_len;
        db_u4(b, (uint32_t)len);
        db_u1(b, (uint8_t)classes_type_code(oc->elem_type));
        if (prims) {
            /* Native elements to big-endian, the whole array at once. */
            size_t es = (size_t)type_size(oc->elem_type);
            size_t total = (size_t)len * es;
            size_t have = w->prim_copy_len < total ? w->prim_copy_len / es * es : total;
            if (db_room(b, total)) {
                unsigned char *d = b->p + b->len;
                const unsigned char *e = w->prim_copy;
                if (es == 1) {
                    if (have)
                        memcpy(d, e, have);
                } else {
                    for (size_t k = 0; k < have; k += es)
                        for (size_t j = 0; j < es; j++)
                            d[k + j] = e[k + es - 1 - j];
                }
                memset(d + have, 0, total - have);
                b->len += total;
            }
        }
    } else if (oc != NULL && oc->kind == HC_INSTANCE) {
        if (oc->instance_size == 0 || w->cur_size > 0)
            oc->instance_size = w->cur_size;
        db_u1(b, JVMPI_GC_INSTANCE_DUMP);
        put_id(b, id);
        put_id(b, oc->id);
        size_t len_at = db_reserve(b, 4);
        size_t start = b->len;
        for (jint i = 0; i < oc->n_inst; i++) {
            struct hfield *f = &oc->inst[i];
            jlong v = slot_value(w, f->index);
            if (f->type == 'L')
                put_id(b, v);
            else if (prims)
                put_value(b, f->type, v);
        }
        db_put_u4_at(b, len_at, (uint32_t)(b->len - start));
    } else {
        w->records--; /* an object of a class the dump does not know (loaded mid-walk) */
    }

    /* reset: no clearing per record. Slots go stale by the generation bump; the element
     * buffer was zeroed while it was written (only a record that was not written, an
     * object of an unknown class, leaves elements to clear here); the primitive copy is
     * kept for the next array. Clearing the buffers whole after every record once made
     * dumps quadratic in the largest array; clearing what was used was still 18 % of a
     * dump's samples, in memset. */
    w->cur_tag = 0;
    if (++w->gen == 0) { /* wrapped after 2^32 records: start the stamps over */
        if (w->slot_gen)
            memset(w->slot_gen, 0, sizeof *w->slot_gen * (size_t)w->slots_cap);
        w->gen = 1;
    }
    if (w->elems_used > 0) {
        memset(w->elems, 0, sizeof *w->elems * (size_t)w->elems_used);
        w->elems_used = 0;
    }
    w->prim_copy_len = 0;
    w->super_id = w->loader_id = w->signers_id = w->pd_id = 0;
    w->n_ifaces = 0;
    w->cp.len = 0;
    w->n_cp = 0;
}

static bool ensure_slots(struct walk *w, jint n)
{
    if (n <= w->slots_cap)
        return true;
    jint cap = w->slots_cap ? w->slots_cap : 64;
    while (cap < n)
        cap *= 2;
    jlong *s = realloc(w->slots, sizeof *s * (size_t)cap);
    if (s == NULL)
        return false;
    w->slots = s;
    uint32_t *g = realloc(w->slot_gen, sizeof *g * (size_t)cap);
    if (g == NULL)
        return false;
    memset(g + w->slots_cap, 0, sizeof *g * (size_t)(cap - w->slots_cap));
    w->slot_gen = g;
    w->slots_cap = cap;
    return true;
}

static bool ensure_elems(struct walk *w, jint n)
{
    if (n <= w->elems_cap)
        return true;
    jint cap = w->elems_cap ? w->elems_cap : 64;
    while (cap < n)
        cap *= 2;
    jlong *e = realloc(w->elems, sizeof *e * (size_t)cap);
    if (e == NULL)
        return false;
    memset(e + w->elems_cap, 0, sizeof *e * (size_t)(cap - w->elems_cap));
    w->elems = e;
    w->elems_cap = cap;
    return true;
}

/* Start assembling referrer (full tag) if it is not the current one. */
static void switch_to(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size, jint length)
{
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    if (w->cur_tag != 0 && (w->cur_tag & TAG_ID_MASK) == id)
        return;
    finish_current(w);
    w->cur_tag = *tag_ptr;
    w->cur_class = class_tag & TAG_ID_MASK;
    w->cur_size = size;
    w->cur_len = length;
}

static JNIEnv *thread_env(struct walk *w, jlong thread_tag, jint *frames)
{
    for (size_t i = 0; i < w->nthr; i++)
        if (w->thr_tags[i] == (thread_tag & TAG_ID_MASK)) {
            *frames = w->thr_frames[i];
            return w->thr_envs[i];
        }
    *frames = 0;
    return NULL;
}

/* ---- mirrors of primitive classes ---- */

/* A field of o (an object, or a class for a static field) as the walk would have reported
 * it: the raw bits of a primitive; for a reference, 0 and the referee as a new local
 * reference in *ref (NULL for null), which the caller turns into an id. */
static jlong jni_value(JNIEnv *jni, jobject o, const struct hfield *f, bool is_static,
                       jobject *ref)
{
#define JNI_GET(T) (is_static ? (*jni)->GetStatic##T##Field(jni, (jclass)o, f->fid) \
                              : (*jni)->Get##T##Field(jni, o, f->fid))
    *ref = NULL;
    switch (f->type) {
    case 'Z': return JNI_GET(Boolean);
    case 'B': return (uint8_t)JNI_GET(Byte);
    case 'C': return JNI_GET(Char);
    case 'S': return (uint16_t)JNI_GET(Short);
    case 'I': return (uint32_t)JNI_GET(Int);
    case 'J': return JNI_GET(Long);
    case 'F': {
        jfloat x = JNI_GET(Float);
        uint32_t bits;
        memcpy(&bits, &x, 4);
        return bits;
    }
    case 'D': {
        jdouble x = JNI_GET(Double);
        jlong v;
        memcpy(&v, &x, 8);
        return v;
    }
    default:
        *ref = JNI_GET(Object);
        return 0;
    }
#undef JNI_GET
}

/* A field of obj as the walk would have reported it: raw bits, or the referee's id. */
static jlong jni_field(JNIEnv *jni, jobject obj, const struct hfield *f)
{
    jobject r;
    jlong v = jni_value(jni, obj, f, false, &r);
    if (r != NULL) {
        v = ids_tag(ids_of(jni, r));
        (*jni)->DeleteLocalRef(jni, r);
    }
    return v;
}

/* Before the walk, and before the other threads are held (tagging takes a lock a held
 * thread might own): the nine mirrors (int.class ... void.class), from
 * Class.getPrimitiveClass, which is native and runs no Java code, and at levels 1 and 2
 * their fields. The walk does not follow those fields, so an object reachable only from a
 * primitive mirror (a cached name, reflection data) is named but has no record. */
static void prim_mirrors(struct walk *w)
{
    static const char *const names[9] = {"boolean", "byte", "char", "short", "int", "long",
                                         "float", "double", "void"};
    JNIEnv *jni = w->jni;
    w->prim_min = 1;
    w->prim_max = 0;
    struct hclass *cc = hclass_find(w, w->class_class_id);
    jclass ccl = (*jni)->FindClass(jni, "java/lang/Class");
    jmethodID m = ccl ? (*jni)->GetStaticMethodID(jni, ccl, "getPrimitiveClass",
                                                  "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
    if (m == NULL || cc == NULL) {
        (*jni)->ExceptionClear(jni);
        if (ccl)
            (*jni)->DeleteLocalRef(jni, ccl);
        log_warn("heap dump: no java.lang.Class layout or Class.getPrimitiveClass: "
                 "primitive mirrors are not dumped");
        return;
    }
    bool fields = w->level >= 1 && cc->n_inst > 0;
    if (fields && (w->prim_vals = calloc(9 * (size_t)cc->n_inst, sizeof *w->prim_vals)) == NULL) {
        w->failed = true;
        return;
    }
    for (int i = 0; i < 9; i++) {
        jstring n = (*jni)->NewStringUTF(jni, names[i]);
        shim_own_java_begin();
        jobject c = n ? (*jni)->CallStaticObjectMethod(jni, ccl, m, n) : NULL;
        shim_own_java_end();
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        if (n)
            (*jni)->DeleteLocalRef(jni, n);
        jobjectID id = c ? ids_of(jni, c) : NULL;
        if (id != NULL) {
            jlong t = ids_tag(id);
            for (jint k = 0; fields && k < cc->n_inst; k++)
                w->prim_vals[(size_t)w->n_prims * (size_t)cc->n_inst + (size_t)k] =
                    jni_field(jni, c, &cc->inst[k]);
            w->prim_ids[w->n_prims++] = t;
            w->prims_unseen++;
            if (w->prim_min > w->prim_max) {
                w->prim_min = w->prim_max = t;
            } else {
                if (t < w->prim_min) w->prim_min = t;
                if (t > w->prim_max) w->prim_max = t;
            }
        }
        if (c)
            (*jni)->DeleteLocalRef(jni, c);
    }
    (*jni)->DeleteLocalRef(jni, ccl);
}

static void prim_mark(struct walk *w, jlong id)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == id && !w->prim_seen[i]) {
            w->prim_seen[i] = true;
            w->prims_unseen--;
        }
}

/* After the walk: one record per mirror the walk reached, or (OBJECT_DUMP) for the
 * requested mirror: an instance of java.lang.Class with the fields read before the walk. */
static void prim_records(struct walk *w)
{
    struct hclass *cc = hclass_find(w, w->class_class_id);
    if (cc == NULL)
        return;
    for (int i = 0; i < w->n_prims; i++) {
        if (w->single ? w->prim_ids[i] != w->single_tag : !w->prim_seen[i])
            continue;
        finish_current(w);
        w->cur_tag = w->prim_ids[i];
        w->cur_class = cc->id;
        w->cur_size = 0;
        w->cur_len = -1;
        for (jint k = 0; w->prim_vals != NULL && k < cc->n_inst; k++) {
            struct hfield *f = &cc->inst[k];
            if (ensure_slots(w, f->index + 1)) {
                w->slots[f->index] = w->prim_vals[(size_t)i * (size_t)cc->n_inst + (size_t)k];
                w->slot_gen[f->index] = w->gen;
            }
        }
        finish_current(w);
    }
}

static jint JNICALL ref_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                           jlong class_tag, jlong referrer_class_tag, jlong size,
                           jlong *tag_ptr, jlong *referrer_tag_ptr, jint length, void *ud)
{
    struct walk *w = ud;
    if (w->hook_id != 0 && (*tag_ptr & TAG_ID_MASK) == w->hook_id)
        return 0; /* the probe class: not shown, not followed */
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    if (length >= 0)
        len_put(w, id, length); /* the referee is an array: its record needs the length */
    if (w->prims_unseen > 0 && id >= w->prim_min && id <= w->prim_max)
        prim_mark(w, id);
    if (w->single) {
        /* OBJECT_DUMP: only references from the initial object; visit nothing else. */
        if (referrer_tag_ptr == NULL || (*referrer_tag_ptr & TAG_ID_MASK) != w->single_tag)
            return 0;
    }
    if (referrer_tag_ptr == NULL) {
        /* A root. */
        if (w->level == 0 || w->single)
            return JVMTI_VISIT_OBJECTS;
        jint frames = 0;
        JNIEnv *env;
        switch (kind) {
        case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
            env = thread_env(w, info->stack_local.thread_tag, &frames);
            if (env != NULL && env == worker_env())
                break; /* the shim's own thread is not shown */
            db_u1(&w->thread_roots, JVMPI_GC_ROOT_JAVA_FRAME);
            put_id(&w->thread_roots, id);
            db_ptr(&w->thread_roots, env);
            db_u4(&w->thread_roots, frames > 0 ? (uint32_t)(frames - info->stack_local.depth) : (uint32_t)-1);
            break;
        case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
            env = thread_env(w, info->jni_local.thread_tag, &frames);
            if (env != NULL && env == worker_env())
                break;
            db_u1(&w->thread_roots, JVMPI_GC_ROOT_JNI_LOCAL);
            put_id(&w->thread_roots, id);
            db_ptr(&w->thread_roots, env);
            db_u4(&w->thread_roots, frames > 0 ? (uint32_t)(frames - info->jni_local.depth) : (uint32_t)-1);
            break;
        case JVMTI_HEAP_REFERENCE_JNI_GLOBAL:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_JNI_GLOBAL);
            put_id(&w->other_roots, id);
            db_ptr(&w->other_roots, NULL);
            break;
        case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_STICKY_CLASS);
            put_id(&w->other_roots, id);
            break;
        case JVMTI_HEAP_REFERENCE_MONITOR:
            db_u1(&w->other_roots, JVMPI_GC_ROOT_MONITOR_USED);
            put_id(&w->other_roots, id);
            break;
        default:
            /* THREAD (a live thread's object) and OTHER: HotSpot wrote no root record for
             * these (THREAD_OBJ and UNKNOWN were defined but never emitted, and a strict
             * reader stops at them), so none is written; the objects are dumped all the
             * same, and a thread object is named by the JAVA_FRAME roots of the frames
             * that hold it. */
            break;
        }
        return JVMTI_VISIT_OBJECTS;
    }
    /* A reference from an object: it belongs to the referrer's record. */
    switch_to(w, referrer_tag_ptr, referrer_class_tag, 0, -1);
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_CLASS:
        w->cur_class = class_tag == 0 ? w->cur_class : (referrer_class_tag & TAG_ID_MASK);
        break;
    case JVMTI_HEAP_REFERENCE_FIELD:
    case JVMTI_HEAP_REFERENCE_STATIC_FIELD:
        if (ensure_slots(w, info->field.index + 1)) {
            w->slots[info->field.index] = id;
            w->slot_gen[info->field.index] = w->gen;
        }
        break;
    case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT:
        if (ensure_elems(w, info->array.index + 1)) {
            w->elems[info->array.index] = id;
            if (info->array.index >= w->elems_used)
                w->elems_used = info->array.index + 1;
        }
        break;
    case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
        db_u2(&w->cp, (uint16_t)info->constant_pool.index);
        db_u1(&w->cp, JVMPI_CLASS);
        put_id(&w->cp, id);
        w->n_cp++;
        break;
    case JVMTI_HEAP_REFERENCE_SUPERCLASS: w->super_id = id; break;
    case JVMTI_HEAP_REFERENCE_CLASS_LOADER: w->loader_id = id; break;
    case JVMTI_HEAP_REFERENCE_SIGNERS: w->signers_id = id; break;
    case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN: w->pd_id = id; break;
    case JVMTI_HEAP_REFERENCE_INTERFACE:
        if (w->n_ifaces == w->ifaces_cap) {
            jint c = w->ifaces_cap ? w->ifaces_cap * 2 : 8;
            jlong *p = realloc(w->ifaces, sizeof *p * (size_t)c);
            if (p == NULL)
                break;
            w->ifaces = p;
            w->ifaces_cap = c;
        }
        w->ifaces[w->n_ifaces++] = id;
        break;
    default:
        break;
    }
    return w->single ? 0 : JVMTI_VISIT_OBJECTS;
}

static jint JNICALL prim_field_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                  jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
                                  jvmtiPrimitiveType type, void *ud)
{
    (void)kind; (void)type;
    struct walk *w = ud;
    if (w->single && (*object_tag_ptr & TAG_ID_MASK) != w->single_tag)
        return 0;
    switch_to(w, object_tag_ptr, object_class_tag, 0, -1);
    if (ensure_slots(w, info->field.index + 1)) {
        w->slots[info->field.index] = value.j; /* raw bits; put_value narrows by type */
        switch (type) {
        case JVMTI_PRIMITIVE_TYPE_BOOLEAN: w->slots[info->field.index] = value.z; break;
        case JVMTI_PRIMITIVE_TYPE_BYTE: w->slots[info->field.index] = (uint8_t)value.b; break;
        case JVMTI_PRIMITIVE_TYPE_CHAR: w->slots[info->field.index] = value.c; break;
        case JVMTI_PRIMITIVE_TYPE_SHORT: w->slots[info->field.index] = (uint16_t)value.s; break;
        case JVMTI_PRIMITIVE_TYPE_INT: w->slots[info->field.index] = (uint32_t)value.i; break;
        case JVMTI_PRIMITIVE_TYPE_FLOAT: {
            uint32_t bits;
            memcpy(&bits, &value.f, 4);
            w->slots[info->field.index] = bits;
            break;
        }
        default: break; /* long, double: all 64 bits */
        }
        w->slot_gen[info->field.index] = w->gen;
    }
    return 0;
}

static jint JNICALL prim_array_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                  jvmtiPrimitiveType type, const void *elements, void *ud)
{
    struct walk *w = ud;
    if (w->single && (*tag_ptr & TAG_ID_MASK) != w->single_tag)
        return 0;
    switch_to(w, tag_ptr, class_tag, size, count);
    w->cur_len = count;
    w->cur_size = size;
    int es = 1;
    switch (type) {
    case JVMTI_PRIMITIVE_TYPE_CHAR: case JVMTI_PRIMITIVE_TYPE_SHORT: es = 2; break;
    case JVMTI_PRIMITIVE_TYPE_INT: case JVMTI_PRIMITIVE_TYPE_FLOAT: es = 4; break;
    case JVMTI_PRIMITIVE_TYPE_LONG: case JVMTI_PRIMITIVE_TYPE_DOUBLE: es = 8; break;
    default: es = 1; break;
    }
    if (w->level >= 2) {
        /* One buffer for the whole dump, grown by doubling: no malloc per array. */
        size_t need = (size_t)count * (size_t)es;
        if (need > w->prim_copy_cap) {
            size_t cap = w->prim_copy_cap ? w->prim_copy_cap : 4096;
            while (cap < need)
                cap *= 2;
            unsigned char *p = realloc(w->prim_copy, cap);
            if (p == NULL) {
                w->failed = true;
                return 0;
            }
            w->prim_copy = p;
            w->prim_copy_cap = cap;
        }
        memcpy(w->prim_copy, elements, need);
        w->prim_copy_len = need;
    }
    return 0;
}

/* ---- threads: env and frame count per thread, for the frame roots ---- */

static void threads_hold(JNIEnv *jni, struct walk *w, struct world *world)
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
        (*g_shim.jvmti)->GetFrameCount(g_shim.jvmti, world->snap[i].thread, &fc);
        w->thr_tags[w->nthr] = ids_tag(ids_of_kept(jni, world->snap[i].thread));
        w->thr_envs[w->nthr] = world->snap[i].env;
        w->thr_frames[w->nthr] = fc;
        w->nthr++;
    }
}

static void walk_free(struct walk *w)
{
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
    free(w->un_idx);
    free(w->un_done);
    free(w->fix);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- OBJECT_DUMP without a heap walk ----
 *
 * FollowReferences from one object still costs the whole heap on JDK 17 (its object marker
 * restores every object's mark word when the walk ends: 8 ms per call with 1 M objects).
 * An instance's or an array's record needs only its own fields or elements, which JNI
 * reads in place, as HotSpot's OBJECT_DUMP read them in place without stopping the other
 * threads. A class mirror's record also needs what only the walk reports (resolved
 * constant-pool entries, signers, protection domain), so it keeps the walk. */

/* The id of obj's class (never waits for a definition: see build_classes), or 0. */
static jlong class_id_of(JNIEnv *jni, jobject obj)
{
    jclass oc = (*jni)->GetObjectClass(jni, obj);
    jobjectID cid = oc ? classes_id_announced(jni, oc) : NULL;
    if (oc)
        (*jni)->DeleteLocalRef(jni, oc);
    return ids_tag(cid);
}

/* The id of a referenced object, as tag_or_new gives it in the walk. */
static jlong jni_walk_field(struct walk *w, jobject o, const struct hfield *f, bool is_static);

static jlong jni_ref_id(struct walk *w, jobject r)
{
    if (r == NULL)
        return 0;
    JNIEnv *jni = w->jni;
    jlong t = 0;
    if ((*g_shim.jvmti)->GetTag(g_shim.jvmti, r, &t) != JVMTI_ERROR_NONE)
        return 0;
    if (t != 0)
        return (t & TAG_ID_MASK) == w->hook_id ? 0 : (t & TAG_ID_MASK);
    /* An object whose class JVMTI cannot name is a dormant object of the CDS archive (of a
     * class this run has not loaded): no Java object, so no id (unreached_write). */
    jlong ctag = class_id_of(jni, r);
    if (ctag == 0)
        return 0;
    if (!w->announce || !fresh_room(w))
        return ids_tag(ids_of(jni, r));
    jlong size = 0;
    (*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, r, &size);
    jobjectID id = ids_claim_allocated(jni, r, size, &t);
    if (t != 0)
        fresh_add(w, t, ctag, size); /* announced before the dump is delivered */
    return ids_tag(id);
}

/* The record of `obj` (id), an instance or an array of class hc (not java.lang.Class), read
 * with JNI. */
static void record_by_jni(struct walk *w, jobject obj, jlong id, struct hclass *hc)
{
    JNIEnv *jni = w->jni;
    w->cur_tag = id;
    w->cur_class = hc->id;
    w->cur_size = 0;
    w->cur_len = -1;
    if (hc->kind == HC_INSTANCE) {
        if (!ensure_slots(w, hc->nslots + 1)) {
            w->failed = true;
            return;
        }
        for (jint i = 0; i < hc->n_inst; i++) {
            struct hfield *f = &hc->inst[i];
            w->slots[f->index] = jni_walk_field(w, obj, f, false);
            w->slot_gen[f->index] = w->gen;
        }
    } else {
        jint len = (*jni)->GetArrayLength(jni, obj);
        w->cur_len = len;
        if (hc->kind == HC_OBJ_ARRAY) {
            if (len > 0 && !ensure_elems(w, len)) {
                w->failed = true;
                return;
            }
            for (jint i = 0; i < len; i++) {
                jobject e = (*jni)->GetObjectArrayElement(jni, obj, i);
                w->elems[i] = jni_ref_id(w, e);
                if (e)
                    (*jni)->DeleteLocalRef(jni, e);
            }
            w->elems_used = len;
        } else {
            size_t es = (size_t)type_size(hc->elem_type), need = (size_t)len * es;
            if (need > w->prim_copy_cap) {
                unsigned char *p = realloc(w->prim_copy, need);
                if (p == NULL) {
                    w->failed = true;
                    return;
                }
                w->prim_copy = p;
                w->prim_copy_cap = need;
            }
            switch (hc->elem_type) {
            case 'Z': (*jni)->GetBooleanArrayRegion(jni, obj, 0, len, (jboolean *)w->prim_copy); break;
            case 'B': (*jni)->GetByteArrayRegion(jni, obj, 0, len, (jbyte *)w->prim_copy); break;
            case 'C': (*jni)->GetCharArrayRegion(jni, obj, 0, len, (jchar *)w->prim_copy); break;
            case 'S': (*jni)->GetShortArrayRegion(jni, obj, 0, len, (jshort *)w->prim_copy); break;
            case 'I': (*jni)->GetIntArrayRegion(jni, obj, 0, len, (jint *)w->prim_copy); break;
            case 'J': (*jni)->GetLongArrayRegion(jni, obj, 0, len, (jlong *)w->prim_copy); break;
            case 'F': (*jni)->GetFloatArrayRegion(jni, obj, 0, len, (jfloat *)w->prim_copy); break;
            case 'D': (*jni)->GetDoubleArrayRegion(jni, obj, 0, len, (jdouble *)w->prim_copy); break;
            default: need = 0; break;
            }
            w->prim_copy_len = need;
        }
    }
    finish_current(w);
}

/* A field of o (static: of class o) as the walk would have reported it, a reference as the
 * id the walk gives it (cf. jni_field). */
static jlong jni_walk_field(struct walk *w, jobject o, const struct hfield *f, bool is_static)
{
    jobject r;
    jlong v = jni_value(w->jni, o, f, is_static, &r);
    if (r != NULL) {
        v = jni_ref_id(w, r);
        (*w->jni)->DeleteLocalRef(w->jni, r);
    }
    return v;
}

/* The record of a Class object (id) read with JNI, for those the walk does not write: a
 * class not yet linked (JVMTI's walk skips its mirror) is an instance of java.lang.Class,
 * its fields as the program sees them, like a primitive mirror; a linked class the walk did
 * not reach (its loader unreachable, not yet unloaded) gets its CLASS_DUMP from what JNI and
 * JVMTI tell: superclass, loader, interfaces and statics (signers, protection domain and
 * resolved constant-pool entries only the walk reports: none); an array class's mirror has
 * a level-0 record only. */
static void mirror_by_jni(struct walk *w, jclass cls, jlong id)
{
    JNIEnv *jni = w->jni;
    struct hclass *self = hclass_find(w, id);
    struct hclass *cc = hclass_find(w, w->class_class_id);
    if (cc == NULL || (self != NULL && self->kind != HC_INSTANCE))
        return;
    w->cur_tag = id;
    w->cur_class = cc->id;
    w->cur_size = 0;
    w->cur_len = -1;
    if (self == NULL || !self->linked) {
        if (!ensure_slots(w, cc->nslots + 1)) {
            w->failed = true;
            return;
        }
        for (jint i = 0; i < cc->n_inst; i++) {
            struct hfield *f = &cc->inst[i];
            w->slots[f->index] = jni_walk_field(w, cls, f, false);
            w->slot_gen[f->index] = w->gen;
        }
        finish_current(w);
        return;
    }
    if (!ensure_slots(w, self->nslots + 1)) {
        w->failed = true;
        return;
    }
    jobject loader = NULL;
    (*g_shim.jvmti)->GetClassLoader(g_shim.jvmti, cls, &loader);
    w->loader_id = jni_ref_id(w, loader);
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    jint ni = 0;
    jclass *ifs = NULL;
    if ((*g_shim.jvmti)->GetImplementedInterfaces(g_shim.jvmti, cls, &ni, &ifs) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < ni; i++) {
            if (w->n_ifaces == w->ifaces_cap) {
                jint c = w->ifaces_cap ? w->ifaces_cap * 2 : 8;
                jlong *p = realloc(w->ifaces, sizeof *p * (size_t)c);
                if (p != NULL) {
                    w->ifaces = p;
                    w->ifaces_cap = c;
                }
            }
            if (w->n_ifaces < w->ifaces_cap)
                w->ifaces[w->n_ifaces++] = jni_ref_id(w, ifs[i]);
            (*jni)->DeleteLocalRef(jni, ifs[i]);
        }
        (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)ifs);
    }
    for (jint i = 0; i < self->n_stat; i++) {
        struct hfield *f = &self->stat[i];
        w->slots[f->index] = jni_walk_field(w, cls, f, true);
        w->slot_gen[f->index] = w->gen;
    }
    finish_current(w);
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

/* OBJECT_DUMP of the mirror of a class not yet linked: the walk would give no record. */
static bool single_mirror_by_jni(struct walk *w, jobject obj)
{
    struct hclass *self = hclass_find(w, w->single_tag);
    if (self == NULL || self->kind != HC_INSTANCE || self->linked)
        return false;
    mirror_by_jni(w, obj, w->single_tag);
    return true;
}

static bool single_is_class(struct walk *w, jobject single)
{
    jlong cid = class_id_of(w->jni, single);
    return cid != 0 && cid == w->class_class_id;
}

static bool single_is_prim_mirror(const struct walk *w)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == w->single_tag)
            return true;
    return false;
}

/* ---- every object in the heap (IterateThroughHeap) ----
 * HotSpot's HeapDumper iterated the whole heap at every level (object_iterate): objects
 * that are unreachable but not yet collected were dumped like the others, and a profiler
 * that dumps at JVM_SHUT_DOWN, after main returned, counted the program's data there. JVMTI's
 * FollowReferences reaches only what is reachable; IterateThroughHeap visits every object.
 * Level 0 needs only each object's type and id: one heap iteration writes it (cheaper than
 * following references). Levels 1 and 2 keep the walk, which reports references, roots and
 * the class-level facts, and then iterate the heap for the objects the walk did not reach;
 * those are read with JNI (their references as they stand: nothing can change an
 * unreachable object), through the id index (one pass, core/ids.c), while the other threads
 * are still held, so no collection takes them first. */

static bool is_prim_mirror(const struct walk *w, jlong id)
{
    for (int i = 0; i < w->n_prims; i++)
        if (w->prim_ids[i] == id)
            return true;
    return false;
}

/* Objects no dump shows: the shim's own (the priming arrays, the probe class's mirror) and
 * the JVM's heap fillers. */
static bool not_dumped(struct walk *w, jlong class_tag, jlong tag)
{
    if (tag == TAG_SHIM_OWN || (w->hook_id != 0 && (tag & TAG_ID_MASK) == w->hook_id))
        return true;
    struct hclass *oc = class_tag != 0 ? hclass_find(w, class_tag & TAG_ID_MASK) : NULL;
    return oc != NULL && oc->filler;
}

/* Note the object at ordinal ord for the second iteration (see unreached_records). */
static jint note_unreached(struct walk *w, uint64_t ord, jlong id, jlong class_tag)
{
    if (w->n_unreached + 2 > w->unreached_cap) {
        size_t cap = w->unreached_cap ? w->unreached_cap * 2 : 2 * 1024;
        jlong *p = realloc(w->unreached, cap * sizeof *p);
        if (p == NULL) {
            w->failed = true;
            return JVMTI_VISIT_ABORT;
        }
        w->unreached = p;
        w->unreached_cap = cap;
        uint64_t *o = realloc(w->ord, cap / 2 * sizeof *o);
        if (o == NULL) {
            w->failed = true;
            return JVMTI_VISIT_ABORT;
        }
        w->ord = o;
    }
    w->ord[w->n_unreached / 2] = ord;
    w->unreached[w->n_unreached++] = id;
    w->unreached[w->n_unreached++] = class_tag & TAG_ID_MASK;
    return 0;
}

/* An object of a class the dump has no layout for (see fix above). */
static bool class_unknown(struct walk *w, jlong class_tag)
{
    return class_tag == 0 || hclass_find(w, class_tag & TAG_ID_MASK) == NULL;
}

/* An object of a class the dump does not know is left for unreached_records, untagged
 * (class_unknown): it may be a dormant object of the CDS archive, of a class this run has not
 * loaded, which no dump shows. */
static jint JNICALL level0_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)length;
    struct walk *w = ud;
    uint64_t ord = w->ord_at++;
    if (not_dumped(w, class_tag, *tag_ptr))
        return 0;
    if (class_unknown(w, class_tag))
        return note_unreached(w, ord, *tag_ptr & TAG_ID_MASK, class_tag);
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    db_u1(&w->objs, (uint8_t)level0_type(hclass_find(w, class_tag & TAG_ID_MASK)));
    put_id(&w->objs, id);
    w->records++;
    return 0;
}

static jint JNICALL unreached_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)length;
    struct walk *w = ud;
    uint64_t ord = w->ord_at++;
    if (not_dumped(w, class_tag, *tag_ptr))
        return 0;
    /* The walk wrote no record for an object whose class it did not know either; such an
     * object is not tagged here (see level0_cb). */
    if (class_unknown(w, class_tag))
        return note_unreached(w, ord, *tag_ptr & TAG_ID_MASK, class_tag);
    jlong id = tag_or_new(w, tag_ptr, class_tag, size);
    if (vis_has(w, id) || is_prim_mirror(w, id))
        return 0;
    return note_unreached(w, ord, id, class_tag);
}

static bool iterate(struct walk *w, jvmtiHeapIterationCallback cb, const char *what)
{
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_iteration_callback = cb;
    shim_crit_begin(); /* HotSpot's escape barrier: see run_walk() */
    jvmtiError err = (*g_shim.jvmti)->IterateThroughHeap(g_shim.jvmti, 0, NULL, &hc, w);
    shim_crit_end();
    return jvmti_ok_at(err, LOG_WARN, what);
}

/* The objects the walk did not reach, as local references, without an index of the whole
 * heap: IterateThroughHeap visits the objects in the same order again while nothing
 * allocates or collects (the other threads are held), so a second iteration, in a JVMTI
 * environment of the shim's own, tags exactly the ordinals the first one found unreached,
 * and GetObjectsWithTags there returns them: the cost is that of the unreached objects, not
 * of the heap (an index pass over 1 M objects was 3 s for 14 000 unreached ones). Each
 * object's id is then read from its tag in the main environment and checked against the
 * list; any the second iteration missed (the heap changed after all) are resolved through
 * the id index. */
static jint JNICALL ordinal_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
    (void)class_tag; (void)size; (void)length;
    struct walk *w = ud;
    if (w->ord_next < w->n_unreached / 2 && w->ord_at == w->ord[w->ord_next]) {
        *tag_ptr = w->unreached[2 * w->ord_next] != 0 ? 1 : 2; /* 2: no id yet */
        w->ord_next++;
    }
    w->ord_at++;
    return w->ord_next < w->n_unreached / 2 ? 0 : JVMTI_VISIT_ABORT;
}

static size_t unreached_find(const struct walk *w, jlong id)
{
    size_t n = w->n_unreached / 2;
    for (size_t k = vis_slot(id, w->un_cap); w->un_idx[k] != 0; k = (k + 1) & (w->un_cap - 1))
        if (w->unreached[2 * (w->un_idx[k] - 1)] == id)
            return w->un_idx[k] - 1;
    return n;
}

/* The class of o, which the dump did not know: announced (its CLASS_LOAD first), given a
 * layout, and noted for o's OBJECT_ALLOC (fix). */
static struct hclass *learn_class(struct walk *w, jobject o, jlong id, jlong *cid)
{
    JNIEnv *jni = w->jni;
    jclass c = (*jni)->GetObjectClass(jni, o);
    jobjectID cidn = c != NULL ? classes_id_announced(jni, c) : NULL;
    struct hclass *hc = cidn != NULL ? hclass_find(w, ids_tag(cidn)) : NULL;
    if (cidn != NULL && hc == NULL) {
        jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
        build_class(w, c, class_class);
        if (class_class != NULL)
            (*jni)->DeleteLocalRef(jni, class_class);
        free(w->ctab); /* index_classes again, with the new class */
        w->ctab = NULL;
        index_classes(w);
        hc = hclass_find(w, ids_tag(cidn));
    }
    if (c != NULL)
        (*jni)->DeleteLocalRef(jni, c);
    if (cidn != NULL && id != 0 && w->n_fix + 2 > w->fix_cap) {
        size_t cap = w->fix_cap ? 2 * w->fix_cap : 64;
        jlong *f = realloc(w->fix, cap * sizeof *f);
        if (f != NULL) {
            w->fix = f;
            w->fix_cap = cap;
        }
    }
    if (cidn != NULL && id != 0 && w->n_fix + 2 <= w->fix_cap) {
        w->fix[w->n_fix++] = id;
        w->fix[w->n_fix++] = ids_tag(cidn);
    }
    *cid = ids_tag(cidn);
    return hc;
}

static int cmp_pair(const void *a, const void *b)
{
    jlong x = *(const jlong *)a, y = *(const jlong *)b;
    return x < y ? -1 : x > y;
}

/* The OBJECT_ALLOCs still to announce name the classes learn_class found. */
static void apply_fixes(struct walk *w)
{
    if (w->n_fix == 0 || w->fix == NULL)
        return;
    qsort(w->fix, w->n_fix / 2, 2 * sizeof *w->fix, cmp_pair);
    for (size_t i = 0; i + 2 < w->nfresh; i += 3) {
        jlong key = w->fresh[i] & TAG_ID_MASK;
        jlong *f = bsearch(&key, w->fix, w->n_fix / 2, 2 * sizeof *w->fix, cmp_pair);
        if (f != NULL)
            w->fresh[i + 1] = f[1];
    }
}

/* The record of o, whose id may be 0 (no tag yet: see level0_cb) and whose class cid may be
 * unknown to the dump (learn_class). An object whose class JVMTI cannot name (a dormant
 * object of the CDS archive) has no record and gets no id. */
static void unreached_write(struct walk *w, jobject o, jlong id, jlong cid)
{
    JNIEnv *jni = w->jni;
    struct hclass *hc = cid != 0 ? hclass_find(w, cid) : NULL;
    if (hc == NULL && (hc = learn_class(w, o, id, &cid)) == NULL)
        return;
    if (id == 0) {
        jlong t = 0, size = 0;
        (*g_shim.jvmti)->GetObjectSize(g_shim.jvmti, o, &size);
        if (w->announce && fresh_room(w)) {
            id = ids_tag(ids_claim_allocated(jni, o, size, &t));
            if (t != 0)
                fresh_add(w, t, cid, size);
        } else {
            id = ids_tag(ids_of(jni, o));
        }
        if (id == 0)
            return;
    }
    if (w->level == JVMPI_DUMP_LEVEL_0) {
        db_u1(&w->objs, (uint8_t)level0_type(hc));
        put_id(&w->objs, id);
        w->records++;
    } else if (cid == w->class_class_id) {
        mirror_by_jni(w, o, id);
    } else if (hc->kind != HC_OTHER) {
        record_by_jni(w, o, id, hc);
    }
}

/* After the walk (levels 1 and 2), the records of the objects it did not reach, and of those
 * of classes it did not know; after a level-0 iteration, the classes of the latter. */
static double now_s(void);
static bool unreached_records(struct walk *w)
{
    double t0 = now_s();
    if (w->level > JVMPI_DUMP_LEVEL_0 &&
        !iterate(w, unreached_cb, "IterateThroughHeap for the objects a heap dump's walk did "
                                  "not reach"))
        return false;
    double t1 = now_s();
    size_t n = w->n_unreached / 2;
    if (n == 0)
        return true;
    JNIEnv *jni = w->jni;
    w->un_cap = 64;
    while (w->un_cap < 2 * n)
        w->un_cap *= 2;
    w->un_idx = calloc(w->un_cap, sizeof *w->un_idx);
    w->un_done = calloc(n, 1);
    if (w->un_idx == NULL || w->un_done == NULL)
        return !(w->failed = true);
    for (size_t i = 0; i < n; i++) {
        if (w->unreached[2 * i] == 0) {
            w->un_done[i] = 1; /* no id: found by its scan tag (2) alone, or not at all */
            continue;
        }
        size_t k = vis_slot(w->unreached[2 * i], w->un_cap);
        while (w->un_idx[k] != 0)
            k = (k + 1) & (w->un_cap - 1);
        w->un_idx[k] = i + 1;
    }
    jvmtiEnv *scan = ids_scan_env();
    jint got = 0;
    jobject *objs = NULL;
    if (scan != NULL && (*jni)->PushLocalFrame(jni, 16) == JNI_OK) {
        jvmtiHeapCallbacks hc;
        memset(&hc, 0, sizeof hc);
        hc.heap_iteration_callback = ordinal_cb;
        jlong tags[2] = {1, 2}, *stags = NULL;
        w->ord_at = w->ord_next = 0;
        shim_crit_begin(); /* HotSpot's escape barrier: see run_walk() */
        jvmtiError err = (*scan)->IterateThroughHeap(scan, 0, NULL, &hc, w);
        shim_crit_end();
        if (jvmti_ok_at(err, LOG_WARN,
                        "IterateThroughHeap to find a heap dump's unreached objects") &&
            jvmti_ok_at((*scan)->GetObjectsWithTags(scan, 2, tags, &got, &objs, &stags), LOG_WARN,
                        "GetObjectsWithTags for a heap dump's unreached objects")) {
            for (jint k = 0; k < got && !w->failed; k++) {
                jlong t = 0;
                (*g_shim.jvmti)->GetTag(g_shim.jvmti, objs[k], &t);
                size_t i = stags[k] == 1 ? unreached_find(w, t & TAG_ID_MASK) : n;
                (*jni)->PushLocalFrame(jni, 16);
                if (stags[k] == 2 && t == 0) {
                    unreached_write(w, objs[k], 0, 0);
                } else if (i < n && !w->un_done[i]) {
                    w->un_done[i] = 1;
                    unreached_write(w, objs[k], w->unreached[2 * i], w->unreached[2 * i + 1]);
                }
                (*jni)->PopLocalFrame(jni, NULL);
            }
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)objs);
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)stags);
        }
        (*jni)->PopLocalFrame(jni, NULL);
    }
    if (scan != NULL)
        (*scan)->DisposeEnvironment(scan);
    /* What the second iteration missed, through the index (one pass at most). */
    for (size_t i = 0; i < n && !w->failed; i++) {
        if (w->un_done[i])
            continue;
        if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
            w->failed = true;
            break;
        }
        const char *why = NULL;
        jobject o = ids_resolve(jni, ids_from_tag(w->unreached[2 * i]), &why);
        if (o == NULL)
            w->lost++;
        else
            unreached_write(w, o, w->unreached[2 * i], w->unreached[2 * i + 1]);
        (*jni)->PopLocalFrame(jni, NULL);
    }
    if (w->lost > 0)
        log_info("heap dump: %zu unreachable objects were collected before they were read: "
                 "no record", w->lost);
    log_info("heap dump: %zu objects read with JNI (not reached by the walk, or of a class it "
             "did not know; %zu reached): found in %.0f ms, read in %.0f ms", n, w->vis_n,
             (t1 - t0) * 1e3, (now_s() - t1) * 1e3);
    return true;
}

static bool run_walk(struct walk *w, jobject initial)
{
    jvmtiHeapCallbacks hc;
    memset(&hc, 0, sizeof hc);
    hc.heap_reference_callback = ref_cb;
    /* Primitive field values only where they are written (level 2): each callback costs
     * JVMTI a tag lookup, and every object is seen anyway as the referrer of its class.
     * Arrays report their length through the array callback, so it stays at level 1. */
    if (w->level >= 2 || w->single)
        hc.primitive_field_callback = prim_field_cb;
    if (w->level >= 1 || w->single)
        hc.array_primitive_value_callback = prim_array_cb;
    /* A heap walk of every thread's objects starts with HotSpot's escape barrier for every
     * thread; a walker suspended inside it would make every thread's next JVMTI call wait
     * for ever, the resume included (measured on JDK 25, memory.c flush_frees). So the walk
     * is a critical section (shim.h): a JVMPI suspender leaves the walker running. */
    shim_crit_begin();
    jvmtiError err = (*g_shim.jvmti)->FollowReferences(g_shim.jvmti, 0, NULL, initial, &hc, w);
    shim_crit_end();
    bool ok = jvmti_ok(err, "FollowReferences for a heap dump");
    finish_current(w);
    return ok;
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
        if ((*g_shim.jvmti)->GetTag(g_shim.jvmti, hook, &t) == JVMTI_ERROR_NONE && t == 0) {
            t = ids_new_tag(0, 0);
            if ((*g_shim.jvmti)->SetTag(g_shim.jvmti, hook, t) != JVMTI_ERROR_NONE)
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
        if ((*g_shim.jvmti)->GetClassSignature(g_shim.jvmti, oc, &sig, NULL) == JVMTI_ERROR_NONE) {
            if (sig[0] == '[')
                len_put(&w, w.single_tag, (*jni)->GetArrayLength(jni, single));
            (*g_shim.jvmti)->Deallocate(g_shim.jvmti, (unsigned char *)sig);
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
        threads_hold(jni, &w, &ts);
        if (level == JVMPI_DUMP_LEVEL_0) {
            ok = !w.failed && iterate(&w, level0_cb, "IterateThroughHeap for a level-0 heap dump");
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
    if (!ok || out.oom || w.objs.oom || w.thread_roots.oom || w.other_roots.oom) {
        log_error("agent %d: RequestEvent(%s): %s: JVMPI_FAIL", inst->slot, what,
                  ok ? "out of memory" : "the heap walk failed");
    } else if (single != NULL && w.records == 0) {
        report_misuse(inst, LOG_WARN,
                      "RequestEvent(OBJECT_DUMP): the object has no dump record (an "
                      "array class): JVMPI_FAIL");
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

jint heapdump_request(struct instance *inst, JNIEnv *jni, void *arg)
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

jint objectdump_request(struct instance *inst, JNIEnv *jni, void *arg)
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
