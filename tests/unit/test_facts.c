/* test_facts.c — the kept facts of a heap dump (shim/memory/facts.c), without a JVM.
 *
 * A dump's walk lists objects as memory_facts_add records, in heap order, some twice (a heap
 * iteration after a walk); publish builds the table (sorted by region with core/tables.c,
 * sized once; 300 000 records make a table of 8 MB, in huge pages), and
 * RequestEvent(OBJECT_ALLOC) answers from it. Here: sets of 0 to 300 000 records with ids
 * in runs, scattered, and repeated, over a few hundred classes; every listed id must answer
 * its class and size (the first record where listed twice), ids never listed must not, a
 * claim must be seen by the next dump's walk and by the free of the object, and a
 * collection since the dump must stop the answers. Then a set that keeps nothing.
 */
#include "memory/facts.c"
#include "unit.h"

#include <stdlib.h>

/* What facts.c needs from the layers it is linked with in the shim (core/tables.c, its
 * table memory and region sort, is linked as it is). */
struct shim g_shim;
void events_need_always(jvmtiEvent ev)
{
    (void)ev;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define ID(serial) ((jlong)(0x80000 + 8 * (jlong)(serial)))
#define CLASS_OF(serial) ((jlong)(0x40000000 + 8 * (jlong)((serial) % 301)))
#define SIZE_OF(serial) ((jlong)(16 + 8 * (jlong)((serial) % 97)))

/* n records: a run of serials from 1, then ones scattered above (each in a stride of 64 of
 * its own, within the 32-bit id space of i386); every seventh listed again with another size
 * (the second record must lose). */
static void one_set(size_t n)
{
    struct mem_facts *f = memory_facts_begin();
    CHECK(f != NULL, "memory_facts_begin for %zu records", n);
    if (f == NULL)
        return;
    jlong *serials = malloc((n + 1) * sizeof *serials);
    for (size_t i = 0; i < n; i++) {
        serials[i] = i < n / 2 ? (jlong)i + 1 : (jlong)(n + 64 * i + rnd() % 64);
        memory_facts_add(f, ID(serials[i]), CLASS_OF(serials[i]), SIZE_OF(serials[i]));
        if (i % 7 == 0)
            memory_facts_add(f, ID(serials[i]), CLASS_OF(serials[i]), SIZE_OF(serials[i]) + 8);
    }
    memory_facts_add(f, 0, CLASS_OF(1), 16);      /* no id: not kept */
    memory_facts_add(f, ID(n + 3), 0, 16);        /* no class: not kept */
    memory_facts_publish(f);
    size_t bad = 0, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        jlong cid = 0, size = 0;
        bool now = false;
        if (!mem_facts_claim(ID(serials[i]), &cid, &size, &now))
            bad++;
        else if (cid != CLASS_OF(serials[i]) || size != SIZE_OF(serials[i]) || !now)
            wrong++;
    }
    CHECK(bad == 0, "%zu of %zu listed ids not found", bad, n);
    CHECK(wrong == 0, "%zu of %zu listed ids with the wrong class, size or claim", wrong, n);
    jlong cid, size;
    bool now = true;
    CHECK(!mem_facts_claim(0, &cid, &size, &now), "id 0 answered");
    CHECK(!mem_facts_claim(ID(n + 3), &cid, &size, &now), "an id listed without a class answered");
    if (n > 0) {
        CHECK(mem_facts_claim(ID(serials[0]), &cid, &size, &now) && !now,
              "a second claim is not a new one");
        CHECK_EQ_INT(mem_facts_claimed_size(ID(serials[0])), SIZE_OF(serials[0]));
        /* The next dump's walk sees the claim. */
        struct mem_facts *g = memory_facts_begin();
        CHECK(memory_facts_was_claimed(g, ID(serials[0])), "the next walk does not see the claim");
        CHECK(!memory_facts_was_claimed(g, ID(0x1fffffff)), "an id never listed was claimed");
        memory_facts_abandon(g);
    }
    free(serials);
}

int main(void)
{
    g_shim.caps.can_generate_garbage_collection_events = 1;
    size_t sizes[] = {0, 1, 5, 1000, 70000, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        one_set(sizes[i]);
    /* A collection since the dump: the facts no longer answer. */
    struct mem_facts *f = memory_facts_begin();
    memory_facts_add(f, ID(42), CLASS_OF(42), SIZE_OF(42));
    memory_facts_publish(f);
    jlong cid, size;
    bool now;
    CHECK(mem_facts_claim(ID(42), &cid, &size, &now), "a fresh set does not answer");
    mem_facts_gc_finished();
    CHECK(!mem_facts_claim(ID(42), &cid, &size, &now), "a set answered after a collection");
    /* An empty set replaces it: nothing answers. */
    memory_facts_publish(memory_facts_begin());
    CHECK(cur == NULL, "an empty set was kept");
    return UNIT_END();
}
