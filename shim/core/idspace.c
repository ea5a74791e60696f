/* idspace.c — 32-bit object ids that are reissued after a wrap, never while live (i386).
 *
 * The rules are in idspace.h. Concurrency: issuing is one fetch-and-add on the serial, as
 * on x86-64; an id the epoch must skip (below the base, held at the last pass, in the
 * window after it) costs another, and the end of an epoch is one compare-and-swap that
 * moves the serial to the next epoch's first id. A set is published once, before its
 * epoch begins, and read without a lock; it is freed three epochs later, long after any
 * reader of it has returned.
 */
#include "core/idspace.h"

#include <stdlib.h>
#include <string.h>

#define STEP 8

static inline size_t hslot(uint32_t id, size_t cap)
{
    return (size_t)((id >> 3) * 2654435761u) & (cap - 1);
}

static bool set_has(const struct idset *st, uint32_t id)
{
    if (st->n == 0)
        return false;
    for (size_t i = hslot(id, st->cap);; i = (i + 1) & (st->cap - 1)) {
        if (st->keys[i] == id)
            return true;
        if (st->keys[i] == 0)
            return false;
    }
}

static inline uint64_t low_mask(const struct idspace *s)
{
    return s->bits >= 64 ? UINT64_MAX : ((uint64_t)1 << s->bits) - 1;
}

void idspace_init(struct idspace *s, unsigned bits, uint32_t base, int64_t start)
{
    memset(s, 0, sizeof *s);
    s->bits = bits;
    s->base = base;
    uint64_t space = (uint64_t)1 << bits;
    /* Ids fetched before a pass began but tagged after it visited their object: at most
     * one per thread in flight. 65536 of them, or 1/16 of a small (simulated) space. */
    uint64_t m = (uint64_t)65536 * STEP;
    if (m > space / 16)
        m = space / 16 / STEP * STEP;
    s->margin = (uint32_t)m;
    if (start < (int64_t)base || (uint64_t)start >= space)
        start = base;
    atomic_store(&s->next, start / STEP * STEP);
}

/* The set of epoch e, or NULL if its pass has not ended. Epoch 0 needs none. */
static inline struct idset *set_of(struct idspace *s, int64_t e)
{
    struct idset *st = atomic_load_explicit(&s->slot[e % 3], memory_order_acquire);
    return st != NULL && st->epoch == e ? st : NULL;
}

/* True for the one caller that asks for the pass that makes epoch e's set. */
static bool ask(struct idspace *s, int64_t e)
{
    int64_t asked = atomic_load(&s->pass_asked);
    while (asked < e)
        if (atomic_compare_exchange_weak(&s->pass_asked, &asked, e))
            return true;
    return false;
}

uint32_t idspace_issue(struct idspace *s, bool *ask_pass)
{
    uint32_t top = (uint32_t)(((uint64_t)1 << s->bits) - STEP); /* the last id is never used */
    uint32_t pre = s->base + (uint32_t)(((uint64_t)top - s->base) / 4 * 3) / STEP * STEP;
    for (;;) {
        int64_t v = atomic_fetch_add(&s->next, STEP);
        int64_t e = v >> s->bits;
        uint32_t id = (uint32_t)((uint64_t)v & low_mask(s));
        const struct idset *st = NULL;
        if (e > 0 && (st = set_of(s, e)) == NULL) {
            atomic_fetch_sub(&s->next, STEP); /* not reached: the set comes first */
            return 0;
        }
        if (id >= top) {
            /* The pass asked for at 3/4 of the space has not ended: no id, and the serial
             * is given back; the epoch ends when the pass does (idspace_pass_end). */
            *ask_pass = ask(s, e + 1);
            atomic_fetch_sub(&s->next, STEP);
            return 0;
        }
        if (id < s->base) {
            int64_t cur = v + STEP, to = (e << s->bits) | s->base;
            while (cur < to && !atomic_compare_exchange_weak(&s->next, &cur, to))
                ;
            continue;
        }
        if (st != NULL && ((id >= st->wlo && id < atomic_load(&st->whi)) || set_has(st, id)))
            continue;
        if (id >= pre)
            *ask_pass = ask(s, e + 1);
        return id;
    }
}

int64_t idspace_pass_begin(struct idspace *s)
{
    return atomic_load(&s->next);
}

bool idspace_pass_end(struct idspace *s, int64_t began, const uint32_t *ids, size_t n)
{
    struct idset *st = calloc(1, sizeof *st);
    if (st == NULL)
        return false;
    int64_t e = began >> s->bits;
    st->epoch = e + 1;
    uint32_t at = (uint32_t)((uint64_t)began & low_mask(s));
    st->wlo = at > s->base + s->margin ? at - s->margin : s->base;
    st->cap = 64;
    while (st->cap < 2 * n + 2)
        st->cap <<= 1;
    if ((st->keys = calloc(st->cap, sizeof *st->keys)) == NULL) {
        free(st);
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ids[k];
        if (id == 0 || set_has(st, id))
            continue;
        size_t i = hslot(id, st->cap);
        while (st->keys[i] != 0)
            i = (i + 1) & (st->cap - 1);
        st->keys[i] = id;
        st->n++;
    }
    struct idset *old = atomic_exchange(&s->slot[st->epoch % 3], st);
    if (old != NULL) {
        free(old->keys);
        free(old);
    }
    /* The epoch ends now: the next one starts at the base. The window is every id issued
     * since the pass began, up to here; it is fixed before the serial moves on. */
    int64_t cur = atomic_load(&s->next), to = ((e + 1) << s->bits) | s->base;
    uint64_t top = ((uint64_t)1 << s->bits) - STEP;
    while (cur >> s->bits == e) {
        uint64_t w = ((uint64_t)cur & low_mask(s)) + STEP;
        atomic_store(&st->whi, (uint32_t)(w < top ? w : top));
        if (atomic_compare_exchange_weak(&s->next, &cur, to))
            break;
    }
    return true;
}

int64_t idspace_serial(struct idspace *s, uint32_t id)
{
    int64_t cur = atomic_load(&s->next);
    int64_t e = cur >> s->bits;
    if (e == 0)
        return id < (uint64_t)cur ? id : 0;
    const struct idset *st = set_of(s, e);
    if (st == NULL)
        return (e << s->bits) - STEP; /* no set yet: taken as older, the index decides */
    if (id >= st->wlo && id < atomic_load(&st->whi))
        return ((e - 1) << s->bits) | id; /* issued after the last pass, in the epoch before */
    if (set_has(st, id))
        return (e << s->bits) - STEP;     /* held by an object live at the pass */
    if (id < ((uint64_t)cur & low_mask(s)))
        return (e << s->bits) | id;       /* issued in this epoch */
    return 0;
}
