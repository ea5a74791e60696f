/* hprof_site.c — heap=sites: objects, allocation sites, GC brackets, arenas; SITES.
 *
 * OBJECT_ALLOC takes the allocating thread's trace (GetCallTrace, depth= frames) and counts
 * the object at its site, the pair (class or array kind, trace). Each live object is in a
 * map id -> (arena, site, size), so that OBJECT_FREE can count its site down, OBJECT_MOVE
 * can re-key it and ARENA_DELETE can drop every object of an arena. A requested
 * OBJECT_ALLOC (HPROF asks for objects it meets without having seen them, e.g. a contended
 * monitor) is recorded like an allocation at the <empty> trace: it is a live object all
 * the same.
 *
 * GC_START takes data_lock and GC_FINISH releases it: the specification asks an agent to
 * take in GC_START every lock that OBJECT_FREE, OBJECT_MOVE and ARENA_DELETE need, because
 * those come in thread-suspended mode, where an agent may neither block nor malloc. So
 * those three handlers neither lock (the thread in the bracket already holds data_lock)
 * nor allocate (deletion from the map never allocates, and a move re-inserts into the
 * slot a deletion just freed).
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>

struct site {
    struct cls *cls;        /* the class; the element class of an object array; NULL for primitive arrays */
    jint is_array;
    struct trace *trace;
    unsigned hash, index;
    struct site *next;
    long long alloc_bytes, live_bytes;
    long alloc_objs, live_objs;
};

static struct site **sites, **sbuckets;
static size_t nsites, cap_sites, nsbuckets;
static struct pmap objects;         /* id -> arena << 56 | site << 32 | size */
static volatile int in_gc;
static JNIEnv *volatile gc_env;
static long gc_count, unknown_frees;

struct arena {
    jint id;
    char *name;
};
static struct arena *arenas;
static size_t narenas, cap_arenas;

#define OBJ_VAL(arena, site, size) \
    ((uint64_t)(uint8_t)(arena) << 56 | (uint64_t)((site) & 0xffffff) << 32 | (uint32_t)(size))
#define OBJ_ARENA(v) ((jint)((v) >> 56))
#define OBJ_SITE(v) ((size_t)(((v) >> 32) & 0xffffff))
#define OBJ_SIZE(v) ((jint)(uint32_t)(v))

static struct site *site_get(struct cls *c, jint is_array, struct trace *t)
{
    uint64_t x = ((uint64_t)(uintptr_t)c * 31u + (uint64_t)(uint32_t)is_array) * 0x9e3779b97f4a7c15ULL +
                 t->serial;
    unsigned h = (unsigned)(x ^ (x >> 29));
    if (nsbuckets > 0)
        for (struct site *s = sbuckets[h & (nsbuckets - 1)]; s != NULL; s = s->next)
            if (s->hash == h && s->cls == c && s->is_array == is_array && s->trace == t)
                return s;
    if (nsites >= 0xffffff || !grow_array(&sites, &cap_sites, nsites + 1, sizeof *sites))
        return NULL;
    struct site *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cls = c;
    s->is_array = is_array;
    s->trace = t;
    s->hash = h;
    s->index = (unsigned)nsites;
    sites[nsites++] = s;
    if (nsites > nsbuckets) {
        size_t nb = nsbuckets ? nsbuckets * 2 : 4096;
        struct site **b = calloc(nb, sizeof *b);
        if (b != NULL) {
            for (size_t i = 0; i < nsites; i++) {
                sites[i]->next = b[sites[i]->hash & (nb - 1)];
                b[sites[i]->hash & (nb - 1)] = sites[i];
            }
            free(sbuckets);
            sbuckets = b;
            nsbuckets = nb;
            return s;
        }
    }
    if (nsbuckets == 0) {
        nsites--;
        free(s);
        return NULL;
    }
    s->next = sbuckets[h & (nsbuckets - 1)];
    sbuckets[h & (nsbuckets - 1)] = s;
    return s;
}

/* An object is gone: count its site down. Never allocates. Holding data_lock. */
static void object_gone(jobjectID id)
{
    uint64_t v;
    if (!pmap_del(&objects, id, &v)) {
        unknown_frees++;
        return;
    }
    size_t si = OBJ_SITE(v);
    if (si < nsites) {
        sites[si]->live_objs--;
        sites[si]->live_bytes -= OBJ_SIZE(v);
    }
}

void on_object_alloc(JVMPI_Event *ev)
{
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    jobjectID obj = ev->u.obj_alloc.obj_id;
    jint is_array = ev->u.obj_alloc.is_array, size = ev->u.obj_alloc.size;
    JVMPI_CallFrame f[opt.depth > 0 ? opt.depth : 1];
    int n = 0;
    struct thr *th = NULL;
    /* A requested event reports an old object: the requester's stack says nothing of it. */
    if (!requested) {
        n = trace_capture(ev->env_id, f, opt.depth);
        if (opt.thread)
            th = thr_get(ev->env_id);
    }
    struct cls *c = ev->u.obj_alloc.class_id ? cls_get(ev->u.obj_alloc.class_id, 1) : NULL;

    LOCK();
    if (requested && pmap_get(&objects, obj) != NULL) {
        UNLOCK(); /* known already */
        return;
    }
    struct trace *t = trace_intern(f, n, th);
    struct site *s = t ? site_get(c, is_array, t) : NULL;
    if (s != NULL) {
        if (pmap_get(&objects, obj) != NULL)
            object_gone(obj); /* an id used again without OBJECT_FREE: the old object died */
        s->alloc_objs++;
        s->alloc_bytes += size;
        s->live_objs++;
        s->live_bytes += size;
        pmap_put(&objects, obj, OBJ_VAL(ev->u.obj_alloc.arena_id, s->index, size));
    }
    UNLOCK();
}

static int locked_by_bracket(JNIEnv *env)
{
    return in_gc && gc_env == env;
}

void on_object_free(JVMPI_Event *ev)
{
    int own = locked_by_bracket(ev->env_id);
    if (!own) /* not JVMPI's rule, but harmless: a free outside a bracket */
        LOCK();
    object_gone(ev->u.obj_free.obj_id);
    if (!own)
        UNLOCK();
}

void on_object_move(JVMPI_Event *ev)
{
    int own = locked_by_bracket(ev->env_id);
    uint64_t v;
    if (!own)
        LOCK();
    if (pmap_del(&objects, ev->u.obj_move.obj_id, &v))
        pmap_put(&objects, ev->u.obj_move.new_obj_id,
                 OBJ_VAL(ev->u.obj_move.new_arena_id, OBJ_SITE(v), OBJ_SIZE(v)));
    /* A class object that moves takes its class id along. */
    if (pmap_del(&classes_by_id, ev->u.obj_move.obj_id, &v)) {
        ((struct cls *)(uintptr_t)v)->id = ev->u.obj_move.new_obj_id;
        pmap_put(&classes_by_id, ev->u.obj_move.new_obj_id, v);
    }
    if (!own)
        UNLOCK();
}

void on_arena_new(JVMPI_Event *ev)
{
    char *name = xstrdup(ev->u.new_arena.arena_name);
    LOCK();
    if (grow_array(&arenas, &cap_arenas, narenas + 1, sizeof *arenas)) {
        arenas[narenas].id = ev->u.new_arena.arena_id;
        arenas[narenas++].name = name;
        name = NULL;
    }
    UNLOCK();
    free(name);
}

void on_arena_delete(JVMPI_Event *ev)
{
    jint a = ev->u.delete_arena.arena_id;
    int own = locked_by_bracket(ev->env_id);
    if (!own)
        LOCK();
    /* Every object of the arena is gone. Deleting at slot i may pull a later entry into
     * it, so slot i is looked at again; entries only move backwards, never past i. */
    for (size_t i = 0; i < objects.cap; i++) {
        uintptr_t k;
        while ((k = pmap_key_at(&objects, i)) != 0 && OBJ_ARENA(*pmap_get(&objects, (void *)k)) == a)
            object_gone((jobjectID)k);
    }
    for (size_t i = 0; i < narenas; i++)
        if (arenas[i].id == a)
            arenas[i].id = -1;
    if (!own)
        UNLOCK();
}

void on_gc_start(JVMPI_Event *ev)
{
    LOCK(); /* held until GC_FINISH: OBJECT_FREE and OBJECT_MOVE come in between */
    in_gc = 1;
    gc_env = ev->env_id;
    gc_count++;
}

void on_gc_finish(JVMPI_Event *ev)
{
    (void)ev;
    if (!in_gc)
        LOCK(); /* a GC_FINISH without its GC_START */
    in_gc = 0;
    gc_env = NULL;
    UNLOCK();
}

int gc_bracket_holder(JNIEnv *env)
{
    return locked_by_bracket(env);
}

/* Holding data_lock. */
int object_info(jobjectID id, struct cls **c, jint *is_array, struct trace **t, jint *size)
{
    uint64_t *v = pmap_get(&objects, id);
    if (v == NULL || OBJ_SITE(*v) >= nsites)
        return 0;
    struct site *s = sites[OBJ_SITE(*v)];
    if (c)
        *c = s->cls;
    if (is_array)
        *is_array = s->is_array;
    if (t)
        *t = s->trace;
    if (size)
        *size = OBJ_SIZE(*v);
    return 1;
}

struct cls *object_class(jobjectID obj, int gc_disabled)
{
    struct cls *c = NULL;
    jint ia = 0;
    if (obj == NULL)
        return NULL;
    LOCK();
    int known = object_info(obj, &c, &ia, NULL, NULL);
    UNLOCK();
    if (!known) {
        if (!gc_disabled)
            jvmpi->DisableGC();
        jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj);
        if (!gc_disabled)
            jvmpi->EnableGC();
        LOCK();
        object_info(obj, &c, &ia, NULL, NULL);
        UNLOCK();
    }
    return ia == JVMPI_NORMAL_OBJECT ? c : NULL;
}

static void site_name(const struct site *s, char *buf, size_t len)
{
    const char *p = prim_array_name(s->is_array);
    if (p != NULL)
        snprintf(buf, len, "%s", p);
    else if (s->is_array == JVMPI_CLASS)
        snprintf(buf, len, "%s[]", s->cls ? s->cls->disp : "<unknown class>");
    else
        snprintf(buf, len, "%s", s->cls ? s->cls->disp : "<unknown class>");
}

static int by_live(const void *a, const void *b)
{
    const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t clamp_u4(long long v)
{
    return v < 0 ? 0 : v > 0xffffffffLL ? 0xffffffffu : (uint32_t)v;
}

/* SITES (ASCII) or ALLOC SITES (binary). Holding data_lock; traces already written. */
void sites_write(void)
{
    long long live_b = 0, live_o = 0, alloc_b = 0, alloc_o = 0;
    for (size_t i = 0; i < nsites; i++) {
        live_b += sites[i]->live_bytes;
        live_o += sites[i]->live_objs;
        alloc_b += sites[i]->alloc_bytes;
        alloc_o += sites[i]->alloc_objs;
    }
    struct site **ss = malloc((nsites ? nsites : 1) * sizeof *ss);
    if (ss == NULL)
        return;
    memcpy(ss, sites, nsites * sizeof *ss);
    qsort(ss, nsites, sizeof *ss, by_live);
    size_t nrows = 0;
    for (; nrows < nsites; nrows++) {
        double self = live_b > 0 ? (double)ss[nrows]->live_bytes / (double)live_b : 0.0;
        if (self < opt.cutoff)
            break;
    }
    if (!opt.binary) {
        io_printf("SITES BEGIN (ordered by live bytes) %s\n", io_date());
        io_printf("        percent        live       alloc'ed    stack class\n");
        io_printf("rank  self  accum   bytes objs   bytes   objs trace name\n");
        double accum = 0;
        for (size_t i = 0; i < nrows; i++) {
            struct site *s = ss[i];
            char name[1100];
            site_name(s, name, sizeof name);
            double self = live_b > 0 ? 100.0 * (double)s->live_bytes / (double)live_b : 0.0;
            accum += self;
            io_printf("%4zu %4.2f%% %5.2f%% %7lld %4ld %7lld %6ld %5u %s\n", i + 1, self, accum,
                      s->live_bytes, s->live_objs, s->alloc_bytes, s->alloc_objs,
                      s->trace->serial, name);
        }
        io_printf("SITES END\n");
    } else {
        struct buf b = {0};
        float cut = (float)opt.cutoff;
        uint32_t cutbits;
        memcpy(&cutbits, &cut, 4);
        buf_u2(&b, 0);
        buf_u4(&b, cutbits);
        buf_u4(&b, clamp_u4(live_b));
        buf_u4(&b, clamp_u4(live_o));
        buf_u8(&b, (uint64_t)alloc_b);
        buf_u8(&b, (uint64_t)alloc_o);
        buf_u4(&b, (uint32_t)nrows);
        for (size_t i = 0; i < nrows; i++) {
            struct site *s = ss[i];
            buf_u1(&b, (unsigned)s->is_array);
            buf_u4(&b, s->cls && prim_array_name(s->is_array) == NULL ? s->cls->serial : 0);
            buf_u4(&b, s->trace->serial);
            buf_u4(&b, clamp_u4(s->live_bytes));
            buf_u4(&b, clamp_u4(s->live_objs));
            buf_u4(&b, clamp_u4(s->alloc_bytes));
            buf_u4(&b, clamp_u4(s->alloc_objs));
        }
        if (!b.oom)
            io_record(HPROF_ALLOC_SITES, &b);
        buf_free(&b);
    }
    free(ss);
}
