/* stripe.c — each thread's stripe slot (core/stripe.h): handed out round-robin on the
 * thread's first striped change and kept for its life.
 *
 * A counter that only grows picks the slot, so threads that start together land on
 * different cache lines; the slot is a thread-local, read without a lock on every striped
 * change by a thread that holds no per-thread address to hash (stripe_of).
 */
#include "core/stripe.h"

static _Atomic int next_stripe;
static _Thread_local int tl_stripe = -1;

int stripe_index(void)
{
    if (tl_stripe < 0)
        tl_stripe = atomic_fetch_add(&next_stripe, 1) % STRIPES;
    return tl_stripe;
}
