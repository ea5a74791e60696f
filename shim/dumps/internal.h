/* internal.h — what the files of dumps/ share: the class layouts, the heap walk's state, and
 * the functions one file calls in another.
 *
 * A heap or object dump is one `struct walk`, built by heapdump.c (the requests) and filled
 * by the files below it: layout.c (class layouts, before the walk), records.c (the record
 * writer and its side tables), walk.c (levels 1 and 2: the FollowReferences walk and the
 * primitive mirrors), iterate.c (level 0, and the objects the walk did not reach, by
 * IterateThroughHeap) and jnirecords.c (records read with JNI). One struct, passed by
 * pointer, because every record depends on state several of them set up; only dumps/
 * includes this header.
 */
#ifndef JVMPISHIM_DUMPS_INTERNAL_H
#define JVMPISHIM_DUMPS_INTERNAL_H

#include "core/shim.h"
#include "core/dumpbuf.h"

#include <uthash.h>

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

struct walk {
    JNIEnv *jni;
    int level;
    /* OBJECT_ALLOC has been on since start-up: an object the walk is first to tag is one
     * JVMTI never reported (memory/alloc.c). Its tag gets the "allocation posted" flag here, and
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
     * and a chain) costs 8 % of a dump's samples. */
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
    jlong *ord_size;            /* and its size, to tell a heap that changed since */
    uint64_t ord_at, ord_next;
    bool ord_shifted;           /* the second iteration found the heap changed */
    jvmtiEnv *scan;             /* the unreached pass's own environment (unreached_prepare) */
    bool scan_tagged;           /* its loaded classes tagged */
    size_t *un_idx, un_cap;     /* id -> index + 1 into unreached (open addressing) */
    unsigned char *un_done;     /* its record is written */
    /* Objects whose class the dump did not know (a hidden class the JVM loaded from the CDS
     * archive before the agent, which no JVMTI event or GetLoadedClasses names): (id, class
     * id) once JNI told the class, for the OBJECT_ALLOCs announced before the dump. */
    jlong *fix;
    size_t n_fix, fix_cap;
    size_t lost;                /* of them, collected before they could be read */
    /* What the heap iteration sees of each object it lists (class, size), kept for the
     * OBJECT_ALLOC requests that follow the dump (memory/facts.c); NULL for OBJECT_DUMP. */
    struct mem_facts *facts;
};

/* layout.c: class layouts, before the walk (and for a class met later, learn_class). */
struct hclass *hclass_find(struct walk *w, jlong id);
void index_classes(struct walk *w);    /* after build_classes: the open-addressing index */
void build_class(struct walk *w, jclass cls, jclass class_class);
bool build_classes(struct walk *w, jobject single);
void free_classes(struct walk *w);

/* records.c: the record writer. */
int type_size(char t);
void put_id(struct dumpbuf *b, jlong id);
jint level0_type(struct hclass *hc);
void len_put(struct walk *w, jlong id, jint length);
size_t vis_slot(jlong id, size_t cap);
void vis_init(struct walk *w);
bool vis_has(const struct walk *w, jlong id);
bool fresh_room(struct walk *w);
void fresh_add(struct walk *w, jlong tag, jlong class_tag, jlong size);
jlong tag_or_new(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size);
void place_roots(struct walk *w);
void finish_current(struct walk *w);
bool ensure_slots(struct walk *w, jint n);
bool ensure_elems(struct walk *w, jint n);
void switch_to(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size, jint length);

/* walk.c: levels 1 and 2, and OBJECT_DUMP of a class mirror. */
jlong jni_value(JNIEnv *jni, jobject o, const struct hfield *f, bool is_static, jobject *ref);
void prim_mirrors(struct walk *w);
void prim_records(struct walk *w);
bool run_walk(struct walk *w, jobject initial);

/* iterate.c: every object in the heap. */
bool level0_records(struct walk *w);    /* a level-0 dump's records, one heap iteration */
void unreached_prepare(struct walk *w); /* before a dump's first iteration */
bool unreached_records(struct walk *w); /* after the walk: the objects it did not reach */
void unreached_drop(struct walk *w);    /* the pass's environment, if still there */
void apply_fixes(struct walk *w);       /* the classes unreached_records learned, for fresh */

/* jnirecords.c: records read with JNI. */
jlong class_id_of(JNIEnv *jni, jobject obj);
void record_by_jni(struct walk *w, jobject obj, jlong id, struct hclass *hc);
void mirror_by_jni(struct walk *w, jclass cls, jlong id);

/* classextras.c: a class's constant-pool entries, signers and protection domain, kept from
 * one walk over all classes for the OBJECT_DUMPs of class objects. */
bool class_extras_take(struct walk *w, jlong id); /* into w; false: walk from its mirror */
void class_extras_drop(void);                     /* a heap dump begins */

/* heapdump.c */
double now_s(void);

/* monitordump.c: registers MONITOR_DUMP's row (called by dumps_module_init). */
void monitordump_module_init(void);

#endif
