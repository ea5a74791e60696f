/* idspace.h — where object ids come from when a jobjectID has 32 bits (i386; idspace.c).
 *
 * On x86-64 an id is a 41-bit serial, never reused (ids.c). On i386 a jobjectID is 4 bytes:
 * 2^29 ids of 8-byte alignment from ID_BASE, which a long-running program can exhaust. So the
 * space is used in epochs: the serial (64 bits, epoch << bits | id) keeps counting, the id is
 * its low bits, and an id is issued again in a later epoch only if no live object holds it.
 * At 3/4 of an epoch the worker collects the ids of every tagged object (one heap pass);
 * when it ends, the next epoch begins, from the base again: it skips those ids and the ids
 * issued while the pass ran (a window, widened by a margin for ids fetched before the pass
 * but not yet set as tags). Every epoch has the whole space but those. Pure: no JVM, so the
 * unit tests simulate many wraps in a small space (bits = 12 instead of 32).
 */
#ifndef JVMPISHIM_IDSPACE_H
#define JVMPISHIM_IDSPACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The live ids collected by one pass, for the epoch after the pass's. */
struct idset {
    int64_t epoch;
    uint32_t wlo;           /* the window [wlo, whi): ids issued in the epoch before, */
    _Atomic uint32_t whi;   /* after its pass began (less a margin): not reissued */
    size_t cap, n;     /* open addressing, 0 empty */
    uint32_t *keys;
};

struct idspace {
    _Atomic int64_t next;          /* the next serial: epoch << bits | id */
    unsigned bits;                 /* 32 on i386 */
    uint32_t base, margin;
    struct idset *_Atomic slot[3]; /* slot[e % 3]: the set of epoch e (an old one freed late) */
    _Atomic int64_t pass_asked;    /* the last epoch that asked for a pass, + 1 */
};

void idspace_init(struct idspace *s, unsigned bits, uint32_t base, int64_t start);
/* A new id (its low bits; never 0), or 0 when the space is exhausted because the pass that
 * frees it has not ended yet. *ask_pass is set true once per epoch: call idspace_pass_*. */
uint32_t idspace_issue(struct idspace *s, bool *ask_pass);
/* A pass: begin returns the serial it starts at; the caller collects every live tagged
 * object's id, then end builds the next epoch's set from them (ids may repeat, 0 ignored). */
int64_t idspace_pass_begin(struct idspace *s);
bool idspace_pass_end(struct idspace *s, int64_t began, const uint32_t *ids, size_t n);
/* The serial id was issued at, for "issued before a point" questions; an id held by a
 * live object at the last pass answers one just before this epoch; 0 for an id that no
 * live object can hold (issued in an earlier epoch and not live at the pass, or never). */
int64_t idspace_serial(struct idspace *s, uint32_t id);

#endif
