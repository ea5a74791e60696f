/* records.c — the heap dump's record writer and the side tables it needs.
 *
 * JVMTI reports all roots before it visits any object, and every visited object first as
 * the referrer of its CLASS reference, then its fields, array elements or statics, so a
 * record is assembled from the callbacks (switch_to, the slots and elements of struct walk)
 * and written as soon as the walk moves on to the next referrer (finish_current): streaming,
 * no per-object storage. Class dumps: super, loader, signers and protection domain from the
 * walk, class name NULL (as HotSpot), reserved NULL, the instance size of the layout,
 * interfaces, resolved constant-pool object constants (u2 index, JVMPI_CLASS, id), statics
 * in CLASS_LOAD's order. Level 1 omits primitive field, static and array element values, as
 * the spec says. Array-class mirrors appear only at level 0, as in HotSpot.
 *
 * The side tables: array lengths (JVMTI gives them where the array is a referee), the ids
 * the walk wrote a record for (for the heap iteration after it), and the objects the dump
 * is first to tag (announced before the dump is delivered). Hashes are open addressing.
 */
#include "classes/classes.h"
#include "core/api.h"
#include "core/ids.h"
#include "dumps/internal.h"

#include <stdlib.h>
#include <string.h>

static size_t len_slot(const struct walk *w, jlong id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (w->len_cap - 1);
}

void len_put(struct walk *w, jlong id, jint length)
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

size_t vis_slot(jlong id, size_t cap)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 21) & (cap - 1);
}

/* A bitmap of at most 32 MB: ids issued up to 256 M. */
#define VIS_BITMAP_MAX_IDS ((jlong)1 << 28)

void vis_init(struct walk *w)
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

bool vis_has(const struct walk *w, jlong id)
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
bool fresh_room(struct walk *w)
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

void fresh_add(struct walk *w, jlong tag, jlong class_tag, jlong size)
{
    w->fresh[w->nfresh++] = tag;
    w->fresh[w->nfresh++] = class_tag;
    w->fresh[w->nfresh++] = size;
}

jlong tag_or_new(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size)
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

/* The value the walk reported for JVMTI field index i of the current record, else 0. */
static inline jlong slot_value(const struct walk *w, jint i)
{
    return (i < w->slots_cap && w->slot_gen[i] == w->gen) ? w->slots[i] : 0;
}

int type_size(char t)
{
    switch (t) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return (int)sizeof(void *);
    }
}

/* ---- writing records ---- */

void put_id(struct dumpbuf *b, jlong id)
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

jint level0_type(struct hclass *hc)
{
    if (hc == NULL || hc->kind == HC_INSTANCE || hc->kind == HC_OTHER)
        return JVMPI_NORMAL_OBJECT;
    if (hc->kind == HC_OBJ_ARRAY)
        return JVMPI_CLASS;
    return classes_type_code(hc->elem_type);
}

/* JVMTI reports every root before the first referrer, so when the first record is due the
 * roots are complete: they go to the front of the dump buffer in HotSpot's order (per-thread
 * roots first), with no copy of the records (a 70 MB dump of 2 M objects, copied once
 * more otherwise). */
void place_roots(struct walk *w)
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
void finish_current(struct walk *w)
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
     * kept for the next array. Clearing the buffers whole after every record would make
     * dumps quadratic in the largest array; clearing what was used costs 18 % of a dump's
     * samples, in memset. */
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

bool ensure_slots(struct walk *w, jint n)
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

bool ensure_elems(struct walk *w, jint n)
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
void switch_to(struct walk *w, jlong *tag_ptr, jlong class_tag, jlong size, jint length)
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
