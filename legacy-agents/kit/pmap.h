/* kit/pmap.h — a map from pointers (JVMPI ids) to pointers, for a test agent's tables.
 *
 * Agents remember what the VM announced (class id -> name, method id -> class, object
 * id -> record) and look it up in later events. Open addressing, grows at half full,
 * never deletes (an agent marks dead entries in the value instead); NULL is no key. Not
 * thread-safe: the caller holds its lock. A zeroed struct pmap is an empty map; the first
 * put allocates KIT_PMAP_FIRST slots (a power of two, default 4096), set before including
 * for an agent that expects many entries.
 */
#ifndef KIT_PMAP_H
#define KIT_PMAP_H

#include <stdlib.h>

#ifndef KIT_FN
#define KIT_FN static __attribute__((unused))
#define KIT_VAR static __attribute__((unused))
#endif
#ifndef KIT_PMAP_FIRST
#define KIT_PMAP_FIRST 4096
#endif

struct pmap {
    void **k;
    void **v;
    size_t cap, n;
};

/* Ids are aligned addresses: mix the bits so that neighbours spread over the table. */
KIT_FN size_t hash_ptr(void *p, size_t cap)
{
    unsigned long long x = (unsigned long long)(size_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

KIT_FN void **pm_slot(struct pmap *s, void *key)
{
    size_t i = hash_ptr(key, s->cap);
    while (s->k[i] != NULL && s->k[i] != key)
        i = (i + 1) & (s->cap - 1);
    return &s->k[i];
}

KIT_FN void pm_put(struct pmap *s, void *key, void *val)
{
    if (s->cap == 0 || (s->n + 1) * 2 > s->cap) {
        struct pmap old = *s;
        s->cap = old.cap ? old.cap * 2 : KIT_PMAP_FIRST;
        s->k = calloc(s->cap, sizeof *s->k);
        s->v = calloc(s->cap, sizeof *s->v);
        s->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.k[i] != NULL)
                pm_put(s, old.k[i], old.v[i]);
        free(old.k);
        free(old.v);
    }
    void **slot = pm_slot(s, key);
    if (*slot == NULL)
        s->n++;
    *slot = key;
    s->v[slot - s->k] = val;
}

/* 1 if key is in the map (its value in *val when val is not NULL), else 0: a stored NULL
 * value is still "known". */
KIT_FN int pm_get(struct pmap *s, void *key, void **val)
{
    if (s->cap == 0 || key == NULL)
        return 0;
    void **slot = pm_slot(s, key);
    if (*slot == NULL)
        return 0;
    if (val)
        *val = s->v[slot - s->k];
    return 1;
}

/* Where key's value is kept, to read or change it in place, or NULL for an unknown key. */
KIT_FN void **pm_ref(struct pmap *s, void *key)
{
    if (s->cap == 0 || key == NULL)
        return NULL;
    void **slot = pm_slot(s, key);
    return *slot == NULL ? NULL : &s->v[slot - s->k];
}

/* The value of key, or NULL for an unknown key. */
KIT_FN void *pm_find(struct pmap *s, void *key)
{
    if (s->cap == 0 || key == NULL)
        return NULL;
    void **slot = pm_slot(s, key);
    return *slot == NULL ? NULL : s->v[slot - s->k];
}

#endif
