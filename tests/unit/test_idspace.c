/* test_idspace.c — 32-bit object ids across many wraps of their space, by simulation.
 *
 * core/idspace.c is what names objects on i386, where a jobjectID has 4 bytes. A real
 * program would need 2^29 allocations per wrap; here the same code runs with a 12-bit space
 * (504 ids) for a million allocations, about two thousand wraps, with objects that live
 * long, short, or forever, and the pass that collects live ids run late (as the worker
 * would). Every id issued must be non-NULL, 8-aligned, and held by no live object; every
 * live id must answer a serial (so it resolves), and an id that no live object holds and
 * that was not issued in the current epoch must answer 0 (refused at once). Then the real
 * 32-bit space: started near its top, it wraps and its first epoch skips the survivors.
 */
#include "core/idspace.h"
#include "unit.h"

#include <stdlib.h>

#define BITS 12
#define SPACE (1u << BITS)
#define BASE 64u

static unsigned char live[SPACE]; /* live[id]: an object holds id */
static unsigned char held[SPACE]; /* held[id]: live at the last pass (its set) */
static int64_t held_epoch;
static uint32_t pool[SPACE];      /* the live ids, in any order */
static size_t npool;

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void drop_sets(struct idspace *s)
{
    for (int i = 0; i < 3; i++) {
        struct idset *st = atomic_load(&s->slot[i]);
        if (st != NULL) {
            free(st->keys);
            free(st);
        }
    }
}

static void kill_at(size_t k)
{
    live[pool[k]] = 0;
    pool[k] = pool[--npool];
}

static void simulate(void)
{
    struct idspace s;
    idspace_init(&s, BITS, BASE, BASE);
    long issued = 0, dup = 0, bad = 0, exhausted = 0, passes = 0, serial_lost = 0, wrongly_known = 0;
    int pending = -1;          /* steps until the asked pass runs */
    uint32_t forever[8];       /* objects that never die, taken from the first ids */
    for (long step = 0; step < 1000000; step++) {
        bool ask = false;
        uint32_t id = idspace_issue(&s, &ask);
        if (id == 0) {
            exhausted++;
        } else {
            issued++;
            if (id % 8 != 0 || id < BASE || id >= SPACE)
                bad++;
            else if (live[id])
                dup++;
            else if (npool < SPACE / 8 / 3) { /* the heap holds at most a third of the space */
                live[id] = 1;
                pool[npool++] = id;
                if (step < 8)
                    forever[step] = id;
            }
        }
        if (ask)
            pending = (int)(rnd() % 20); /* the worker gets to it a little later */
        if (pending == 0) {
            int64_t began = idspace_pass_begin(&s);
            idspace_pass_end(&s, began, pool, npool);
            memset(held, 0, sizeof held);
            for (size_t k = 0; k < npool; k++)
                held[pool[k]] = 1;
            held_epoch = (began >> BITS) + 1;
            passes++;
        }
        if (pending >= 0)
            pending--;
        /* Deaths: most objects die young, some live across several wraps. */
        if (npool > 8 && rnd() % 3 != 0) {
            size_t k = 8 + rnd() % (npool - 8);
            if (rnd() % 64 != 0 || npool > SPACE / 8 / 4)
                kill_at(k);
        }
        if (step % 997 == 0) {
            for (size_t k = 0; k < npool; k++)
                if (idspace_serial(&s, pool[k]) == 0)
                    serial_lost++;
            int64_t cur = atomic_load(&s.next), e = cur >> BITS;
            struct idset *st = atomic_load(&s.slot[e % 3]);
            for (uint32_t v = (uint32_t)(cur & (SPACE - 1)); v < SPACE; v += 8)
                if (v >= BASE && !live[v] && !(held_epoch == e && held[v]) &&
                    !(e > 0 && st != NULL && v >= st->wlo && v < st->whi) &&
                    idspace_serial(&s, v) != 0) /* not issued yet, not held at the pass */
                    wrongly_known++;
        }
    }
    for (int i = 0; i < 8; i++)
        CHECK(live[forever[i]], "an object that never dies keeps its id %#x", forever[i]);
    int64_t epochs = atomic_load(&s.next) >> BITS;
    printf("simulated: %ld ids issued over %lld wraps of a %u-id space, %ld passes, %ld "
           "refused for a pending pass\n", issued, (long long)epochs, (SPACE - BASE) / 8, passes,
           exhausted);
    CHECK(epochs > 1000, "the space wrapped many times (%lld)", (long long)epochs);
    CHECK(dup == 0, "no id issued while an object held it (%ld)", dup);
    CHECK(bad == 0, "every id is 8-aligned, in the space, never NULL (%ld bad)", bad);
    CHECK(serial_lost == 0, "every live id answers a serial (%ld did not)", serial_lost);
    CHECK(wrongly_known == 0, "no id beyond those issued answers one (%ld)", wrongly_known);
    CHECK(exhausted < issued / 100, "the pass is rarely late (%ld of %ld)", exhausted, issued);
    drop_sets(&s);
}

/* The real space: 2^29 ids from 0x80000, started 100 ids before its top. */
static void real_space(void)
{
    struct idspace s;
    const uint32_t base = 0x80000;
    idspace_init(&s, 32, base, (int64_t)0x100000000 - 100 * 8);
    uint32_t keep[50];
    bool ask = false;
    int64_t began = 0;
    for (int i = 0; i < 99; i++) { /* up to the last id but one: the last is never used */
        uint32_t id = idspace_issue(&s, &ask);
        if (i == 0) {
            CHECK(id == 0xFFFFFCE0u, "the first id is where the start said (%#x)", id);
            CHECK(ask, "the pass is asked for before the wrap");
            began = idspace_pass_begin(&s); /* the worker starts it */
        }
        if (i < 50)
            keep[i] = id;
    }
    uint32_t none = idspace_issue(&s, &ask);
    CHECK(none == 0, "at the top, before the pass ends, no id (%#x)", none);
    /* The pass saw 50 ids live (the others died). */
    CHECK(idspace_pass_end(&s, began, keep, 50), "the pass ends");
    bool ask2 = false;
    uint32_t first = idspace_issue(&s, &ask2);
    CHECK(first == base, "after the wrap the first id is the base again (%#x)", first);
    CHECK((atomic_load(&s.next) >> 32) == 1, "in epoch 1");
    for (int i = 0; i < 50; i++)
        CHECK(idspace_serial(&s, keep[i]) != 0, "a survivor's id %#x still resolves", keep[i]);
    CHECK(idspace_serial(&s, 0xFFFFFF00u) != 0, "an id issued after the pass is kept out");
    CHECK(idspace_serial(&s, 0x80000000u) == 0, "an id not yet issued in this epoch is refused");
    CHECK(idspace_serial(&s, base) != 0, "the id just issued resolves");
    drop_sets(&s);
}

int main(void)
{
    simulate();
    real_space();
    return UNIT_END();
}
