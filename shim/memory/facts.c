/* facts.c — what the last heap dump learned of each object it listed, so that
 * RequestEvent(OBJECT_ALLOC, id) for one of them costs O(1) and needs neither the object nor
 * a heap pass.
 *
 * Heap analyzers list the heap with a level-0 dump, then ask OBJECT_ALLOC for each id (its
 * class and size; HPROF's heap=dump does it inside the HEAP_DUMP handler for every object it
 * has not seen allocated). The shim's ids are tags, and JVMTI finds an object by its tag
 * only by walking the tag map, so each such request used to need the id index (core/ids.c),
 * built by a heap pass: 0.3 s at 100 k live objects, 3 s at 1 M. But the dump has just seen
 * every object it lists, with its class and size: its heap iteration (dumps/iterate.c) keeps
 * them here, one slot per object in an open-addressing table keyed by id:
 *
 *     id (a jobjectID: pointer-sized), u32 class index (and two flags), u32 size in words
 *
 * 16 bytes a slot on 64-bit JVMs (12 on 32-bit ones), the table between 3/8 and 3/4 full:
 * 21 to 43 bytes per object listed, about 30 on average, plus 8 bytes per class. The walk
 * appends its records to a list (16 bytes each) and the table is built from it in one go
 * when the set is published, region by region (build()); the list and a sorted copy of it
 * live only while the dump runs. The set is
 * published just before the dump's event goes out (so requests from its handler use it),
 * replaces and frees the previous dump's, and is freed in turn by the next dump: one set at
 * a time, two while a dump builds the next.
 *
 * A request answered from here posts what the dump saw. That is right while the object
 * still lives: so the facts answer only while no collection has finished since the dump
 * (GarbageCollectionFinish, on from the first set on, counts them: memory_gc_count); after
 * one, requests go back to resolving the object (one index pass, after which it is exact).
 *
 * Claims: a requested OBJECT_ALLOC marks its object announced (the tag's TAG_ALLOCATED and
 * size, ids_claim_allocated), so that it is never announced again and its free leaves the
 * tracked heap. Here the object is not at hand, so the claim is a flag in its slot: the
 * tracked heap counts it at once, its free (memory_facts_claimed_size, from ObjectFree)
 * leaves it, and the next dump, which sees the object's tag again, writes the claim into it
 * (memory_facts_was_claimed). Only objects of a dump that did not flag them already need
 * this (OBJECT_ALLOC was not on since start-up, the heap analyzer's usual case), and no
 * unrequested OBJECT_ALLOC is due for those, so the flag is all that the tag would say.
 *
 * facts_lock is a leaf: held for a lookup or a swap, across no JVM call.
 */
#include "core/ids.h"
#include "events/events.h"
#include "memory/internal.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

#define META_CLAIMED 0x80000000u   /* requested since the dump: counted in the tracked heap */
#define META_ALLOCATED 0x40000000u /* the tag had TAG_ALLOCATED at the dump */
#define META_CLASS 0x3FFFFFFFu
#define WORDS_MAX 0xFFFFFFFFu      /* larger objects are not kept: their requests resolve */

/* A slot of the table, and a record of the dump as its walk lists it. */
struct fact {
    jobjectID id;                  /* 0 = empty */
    _Atomic uint32_t meta;         /* class index and flags */
    uint32_t words;                /* size in 8-byte words */
};
struct fact_rec {
    jlong id;
    uint32_t meta, words;
};

struct mem_facts {
    struct fact *tab;              /* built at publish from recs */
    size_t cap, n;
    struct fact_rec *recs;         /* as the dump listed them, until publish */
    size_t nrecs, recs_cap;
    jlong *classes;                /* class index -> class id */
    size_t nclasses, classes_cap;
    jlong *ctab;                   /* class id -> index + 1, open addressing (pairs) */
    size_t ctab_cap;
    uint64_t gc_at;                /* memory_gc_count() when the dump read the heap */
    struct mem_facts *prev;        /* the set this one replaces (its claims), while built */
    bool oom;
    _Atomic int refs;
};

static pthread_mutex_t facts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_facts *cur;
static _Atomic uint64_t gc_count;
/* Set by the first claim, never cleared: until then no free can be a claimed one, and
 * ObjectFree (every tagged object's) passes without taking facts_lock. */
static _Atomic bool any_claim;

void mem_facts_gc_finished(void)
{
    atomic_fetch_add_explicit(&gc_count, 1, memory_order_relaxed);
}

uint64_t memory_gc_count(void)
{
    return atomic_load_explicit(&gc_count, memory_order_relaxed);
}

static inline size_t fact_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id >> 3) * 0x9E3779B97F4A7C15ULL >> 17) & (cap - 1);
}

static void facts_free(struct mem_facts *f)
{
    if (f == NULL)
        return;
    shim_table_free(f->tab, f->cap * sizeof *f->tab);
    free(f->recs);
    free(f->classes);
    free(f->ctab);
    free(f);
}

static void facts_put(struct mem_facts *f)
{
    if (f != NULL && atomic_fetch_sub(&f->refs, 1) == 1) {
        facts_put(f->prev);
        facts_free(f);
    }
}

/* The current set with a reference, or NULL. */
static struct mem_facts *facts_get(void)
{
    pthread_mutex_lock(&facts_lock);
    struct mem_facts *f = cur;
    if (f != NULL)
        atomic_fetch_add(&f->refs, 1);
    pthread_mutex_unlock(&facts_lock);
    return f;
}

/* The table, from the records the walk listed. They come in heap order, and a hash
 * scatters them over a table of tens of megabytes: inserted so as the walk went, each took a
 * cache and a TLB miss, and the table was rehashed as it doubled (a level-0 walk of 1 M
 * objects: 800 ms on JDK 17 and 920 on JDK 25, against 620-690 and 610 now). Sorted first
 * by the table region they go to (shim_sort_by_region, stable: records of one id stay in the
 * walk's order), they fill it region by region; the table is sized once, 3/8 to 3/4 full.
 * An object listed twice (a heap iteration after a walk) keeps its first record. */
static bool build(struct mem_facts *f)
{
    size_t cap = 64;
    while (4 * f->nrecs > 3 * cap)
        cap <<= 1;
    struct fact *tab = shim_table_alloc(cap * sizeof *tab);
    struct fact_rec *sorted = malloc((f->nrecs + 1) * sizeof *sorted);
    if (tab == NULL || sorted == NULL ||
        !shim_sort_by_region(sorted, f->recs, f->nrecs, sizeof *sorted, cap, fact_slot)) {
        shim_table_free(tab, cap * sizeof *tab);
        free(sorted);
        return false;
    }
    free(f->recs);
    f->recs = NULL;
    size_t n = 0;
    for (size_t i = 0; i < f->nrecs; i++) {
        size_t k = fact_slot(sorted[i].id, cap);
        while (tab[k].id != NULL && ids_tag(tab[k].id) != sorted[i].id)
            k = (k + 1) & (cap - 1);
        if (tab[k].id != NULL)
            continue;
        tab[k].id = ids_from_tag(sorted[i].id);
        atomic_store_explicit(&tab[k].meta, sorted[i].meta, memory_order_relaxed);
        tab[k].words = sorted[i].words;
        n++;
    }
    free(sorted);
    f->nrecs = f->recs_cap = 0;
    f->tab = tab;
    f->cap = cap;
    f->n = n;
    return true;
}

static uint32_t class_index(struct mem_facts *f, jlong cid)
{
    if (2 * (f->nclasses + 1) > f->ctab_cap) {
        size_t cap = f->ctab_cap ? 2 * f->ctab_cap : 1024;
        jlong *t = calloc(2 * cap, sizeof *t);
        if (t == NULL)
            return META_CLASS;
        for (size_t i = 0; i < f->ctab_cap; i++)
            if (f->ctab[2 * i] != 0) {
                size_t k = fact_slot(f->ctab[2 * i], cap);
                while (t[2 * k] != 0)
                    k = (k + 1) & (cap - 1);
                t[2 * k] = f->ctab[2 * i];
                t[2 * k + 1] = f->ctab[2 * i + 1];
            }
        free(f->ctab);
        f->ctab = t;
        f->ctab_cap = cap;
    }
    size_t k = fact_slot(cid, f->ctab_cap);
    for (; f->ctab[2 * k] != 0; k = (k + 1) & (f->ctab_cap - 1))
        if (f->ctab[2 * k] == cid)
            return (uint32_t)(f->ctab[2 * k + 1] - 1);
    if (f->nclasses == f->classes_cap) {
        size_t c = f->classes_cap ? 2 * f->classes_cap : 1024;
        jlong *p = realloc(f->classes, c * sizeof *p);
        if (p == NULL)
            return META_CLASS;
        f->classes = p;
        f->classes_cap = c;
    }
    if (f->nclasses >= META_CLASS)
        return META_CLASS;
    f->classes[f->nclasses] = cid;
    f->ctab[2 * k] = cid;
    f->ctab[2 * k + 1] = (jlong)++f->nclasses;
    return (uint32_t)(f->nclasses - 1);
}

struct mem_facts *memory_facts_begin(void)
{
    /* The facts hold until a collection: counting them needs GarbageCollectionFinish, on
     * from the first set on, before the dump reads the heap. */
    static _Atomic bool gc_events;
    if (!g_shim.caps.can_generate_garbage_collection_events)
        return NULL;
    if (!atomic_exchange(&gc_events, true))
        events_need_always(JVMTI_EVENT_GARBAGE_COLLECTION_FINISH);
    struct mem_facts *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    atomic_store(&f->refs, 1);
    f->gc_at = memory_gc_count();
    f->prev = facts_get();
    return f;
}

void memory_facts_add(struct mem_facts *f, jlong tag, jlong class_id, jlong size)
{
    jlong id = tag & TAG_ID_MASK;
    uint64_t words = (uint64_t)(size + 7) / 8;
    if (f == NULL || f->oom || id == 0 || class_id == 0 || size <= 0 || words > WORDS_MAX)
        return;
    if (f->nrecs == f->recs_cap) {
        size_t c = f->recs_cap ? 2 * f->recs_cap : 1 << 14;
        struct fact_rec *r = realloc(f->recs, c * sizeof *r);
        if (r == NULL) {
            f->oom = true;
            return;
        }
        f->recs = r;
        f->recs_cap = c;
    }
    uint32_t ci = class_index(f, class_id);
    if (ci == META_CLASS) {
        f->oom = true;
        return;
    }
    f->recs[f->nrecs++] = (struct fact_rec){
        id, ci | ((tag & TAG_ALLOCATED) ? META_ALLOCATED : 0), (uint32_t)words};
}

/* The slot of id in f, or -1. */
static long find(const struct mem_facts *f, jlong id)
{
    if (f == NULL || f->cap == 0)
        return -1;
    for (size_t k = fact_slot(id, f->cap); f->tab[k].id != NULL; k = (k + 1) & (f->cap - 1))
        if (ids_tag(f->tab[k].id) == id)
            return (long)k;
    return -1;
}

bool memory_facts_was_claimed(const struct mem_facts *next, jlong id)
{
    /* Read by the next dump's heap iteration, on the VM thread, with no lock: that dump
     * holds a reference to the set (prev) until it publishes its own. Until the first claim
     * nothing can be claimed, and the lookup (a cache miss per object of the walk) is
     * skipped. */
    if (!atomic_load_explicit(&any_claim, memory_order_acquire))
        return false;
    const struct mem_facts *f = next != NULL ? next->prev : NULL;
    long k = find(f, id);
    return k >= 0 && (atomic_load_explicit(&f->tab[k].meta, memory_order_relaxed) & META_CLAIMED);
}

void memory_facts_publish(struct mem_facts *f)
{
    if (f != NULL) {
        facts_put(f->prev);
        f->prev = NULL;
    }
    if (f != NULL && !f->oom && !build(f))
        f->oom = true;
    if (f != NULL && (f->oom || f->n == 0)) {
        if (f->oom)
            log_warn("heap dump: out of memory keeping what it saw of %zu objects: "
                     "OBJECT_ALLOC requests for its ids will resolve each object", f->nrecs);
        facts_put(f);
        f = NULL;
    }
    pthread_mutex_lock(&facts_lock);
    struct mem_facts *old = cur;
    cur = f;
    pthread_mutex_unlock(&facts_lock);
    facts_put(old);
    if (f != NULL)
        log_info("heap dump: kept the class and size of %zu objects (%zu classes): %zu bytes",
                 f->n, f->nclasses,
                 f->cap * sizeof *f->tab +
                     f->classes_cap * sizeof *f->classes + 2 * f->ctab_cap * sizeof *f->ctab);
}

void memory_facts_abandon(struct mem_facts *f)
{
    facts_put(f);
}

bool mem_facts_claim(jlong id, jlong *class_id, jlong *size, bool *claimed_now)
{
    bool found = false;
    pthread_mutex_lock(&facts_lock);
    struct mem_facts *f = cur;
    long k = f != NULL && memory_gc_count() == f->gc_at ? find(f, id) : -1;
    if (k >= 0) {
        uint32_t m = atomic_load_explicit(&f->tab[k].meta, memory_order_relaxed);
        *class_id = f->classes[m & META_CLASS];
        *size = (jlong)f->tab[k].words * 8;
        *claimed_now = !(m & (META_CLAIMED | META_ALLOCATED));
        if (*claimed_now) {
            atomic_store_explicit(&f->tab[k].meta, m | META_CLAIMED, memory_order_relaxed);
            atomic_store_explicit(&any_claim, true, memory_order_release);
        }
        found = true;
    }
    pthread_mutex_unlock(&facts_lock);
    return found;
}

jlong mem_facts_claimed_size(jlong id)
{
    jlong size = -1;
    if (!atomic_load_explicit(&any_claim, memory_order_acquire))
        return size;
    pthread_mutex_lock(&facts_lock);
    long k = find(cur, id);
    if (k >= 0 && (atomic_load_explicit(&cur->tab[k].meta, memory_order_relaxed) & META_CLAIMED))
        size = (jlong)cur->tab[k].words * 8;
    pthread_mutex_unlock(&facts_lock);
    return size;
}
