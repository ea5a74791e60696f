/* events.h — rows of the event switchboard, for modules that deliver events. */
#ifndef JVMPISHIM_EVENTS_H
#define JVMPISHIM_EVENTS_H

#include "core/shim.h"

#define EVENT_MAX_JVMTI 4

enum event_kind {
    EVK_LATER = 0,      /* defined by JVMPI, not delivered by this version of the shim */
    EVK_ON,             /* delivered */
    EVK_REQUEST_ONLY,   /* HEAP_DUMP, OBJECT_DUMP, MONITOR_DUMP: RequestEvent only */
    EVK_UNAVAILABLE     /* cannot be had on this JVM (why says so) */
};

struct event_row {
    const char *name;
    enum event_kind kind;
    const char *why;                        /* for EVK_UNAVAILABLE: one clause, "because ..." */
    jvmtiEvent jvmti[EVENT_MAX_JVMTI];      /* JVMTI events needed while enabled (0-terminated) */
    void (*on_change)(int t, bool any_enabled);     /* called after the mask changed */
    jint (*request)(struct instance *inst, void *arg);  /* RequestEvent handler */
    int warned, warned_request;
};

void events_init(void);
/* A module takes over row t (kind, JVMTI needs, hooks). Call before VMInit. */
void events_register(int t, const struct event_row *row);
void events_set_unavailable(int t, const char *why);
/* A JVMTI event the shim needs on whatever the agents enabled. Call before VMInit. */
void events_need_always(jvmtiEvent e);
/* Keep JVMTI event e on (hold) whatever the agents want, or let it follow them again. */
void events_hold_jvmti(jvmtiEvent e, bool hold);
const struct event_row *events_row(int t);

#endif
