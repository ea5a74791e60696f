/* stripe.h — striped counters: a count many threads change on every event without
 * sharing a cache line; reading the total is the rare operation (shutdown, GC bracket).
 *
 * Each thread is given one of STRIPES padded slots; add/sub touch only that slot, sum()
 * reads them all. A sum taken while threads change slots is a snapshot: exact once the
 * writers have stopped, which is what its users wait for.
 */
#ifndef JVMPISHIM_STRIPE_H
#define JVMPISHIM_STRIPE_H

#include <stdatomic.h>

#define STRIPES 64

struct stripe_slot {
    _Atomic long v;
    char pad[64 - sizeof(long)];
};

struct striped {
    struct stripe_slot s[STRIPES];
};

int stripe_index(void);     /* this thread's slot (stable for its life) */

static inline void striped_add(struct striped *c, long d)
{
    /* seq_cst: the GC gate pairs this with a flag check (store-then-load on both sides). */
    atomic_fetch_add_explicit(&c->s[stripe_index()].v, d, memory_order_seq_cst);
}

static inline long striped_sum(struct striped *c)
{
    long t = 0;
    for (int i = 0; i < STRIPES; i++)
        t += atomic_load_explicit(&c->s[i].v, memory_order_seq_cst);
    return t;
}

#endif
