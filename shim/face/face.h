/* face.h — the JVMPI face: loading an agent, its JVMPI_Interface, and the JVMPI lifecycle.
 *
 * What the entry point (agent.c, modules.c) calls to start, serve and stop the legacy
 * agents, and the shape of an area module's hooks: modules.c hands its table of the areas
 * to the lifecycle, which runs each phase over the table in its order. Nothing below the
 * face includes this header.
 */
#ifndef JVMPISHIM_FACE_H
#define JVMPISHIM_FACE_H

#include "core/shim.h"

/* ---- loader.c ---- */
/* Resolve and dlopen the agent of inst->opts; no agent code runs. JNI_OK or JNI_ERR (logged). */
jint loader_open(struct instance *inst);
/* Call JVM_OnLoad with the proxy JavaVM. JNI_OK or JNI_ERR (logged). Needs a live JNIEnv. */
jint loader_call_onload(struct instance *inst);
void loader_init_proxy_vm(struct instance *inst);

/* ---- clients.c ---- */
/* Point the JVM's one JavaVM at a copy of its function table whose GetEnv answers the JVMPI
 * versions for every library of the program (Agent_OnLoad). False if not installed (said). */
bool clients_install(JavaVM *vm);
/* The options of an -agentpath without legacy= (the first one's): the clients' report=. */
void clients_set_options(const struct shim_options *o);
bool clients_report_wanted(void);

/* ---- interface.c ---- */
void interface_init(struct instance *inst);

/* ---- the phases of the shim's life, and an area module's hook for each ---- */

/* What Agent_OnLoad settled from the first agent's options, for the onload hooks. */
struct start_choice {
    bool bci;               /* method events by class rewriting (not methods=jvmti) */
    bool vthreads_own;      /* virtual threads as JVMPI threads of their own, where the JVM has them */
    bool report;            /* report= given at load: the report counts what it may */
};

/* The JVMTI callback table: JDK 17's, then JDK 21's VirtualThreadStart and VirtualThreadEnd.
 * `extended` is set by a hook that fills those two: only then is the larger size passed. */
struct callback_table {
    jvmtiEventCallbacks cb;
    void *vthread_start, *vthread_end;
    bool extended;
};

/* One area module: its hook for each phase, any of them NULL. The phases, in the order
 * they come; within a phase the modules run in table order. */
struct area_module {
    const char *name;
    void (*onload)(const struct start_choice *c); /* Agent_OnLoad, capabilities known: rows */
    void (*callbacks)(struct callback_table *t);  /* its JVMTI callbacks */
    jint (*enable)(void);                         /* JVMTI events it always needs */
    void (*live)(JNIEnv *jni);      /* VMInit (or attach), before any agent code runs */
    void (*own_java)(JNIEnv *jni);  /* the shim's own Java set-up; posts nothing */
    void (*onload_done)(void);      /* every agent's JVM_OnLoad has returned */
    void (*replay)(JNIEnv *jni);    /* the start-up replay: what exists, told to the agents */
    void (*data_dump)(JNIEnv *jni); /* SIGQUIT, before DATA_DUMP_REQUEST (if enabled) */
    void (*death)(JNIEnv *jni);     /* VMDeath, before JVM_SHUT_DOWN is posted */
    void (*stop)(void);             /* after JVM_SHUT_DOWN: the agents hear nothing more */
};

/* modules.c's table, handed over once at the top of Agent_OnLoad / Agent_OnAttach. */
void lifecycle_set_modules(const struct area_module *mods, size_t n);
/* The Agent_OnLoad phases, run by the entry point over the same table. */
void lifecycle_onload(const struct start_choice *c);
void lifecycle_callbacks(struct callback_table *t);
jint lifecycle_enable(void);

/* ---- lifecycle.c ---- */
/* Called at the top of every JVMPI function: after shutdown, calls from threads other
 * than the shutdown thread park here until the process ends (HotSpot did the same);
 * returns false on the shutdown thread after its handler returned (call is refused). */
bool lifecycle_call_allowed(const char *fn);
/* Start the agents (VMInit, or the attaching thread): JVM_OnLoad of each, the replay,
 * JVM_INIT_DONE. False if an agent failed to start (nothing was posted then). */
bool lifecycle_start(JNIEnv *jni);
void lifecycle_vm_init(JNIEnv *jni);    /* lifecycle_start (once), or refuse the VM's start */
void lifecycle_vm_death(JNIEnv *jni);   /* JVM_SHUT_DOWN */
void lifecycle_data_dump(void);         /* DATA_DUMP_REQUEST and DATA_RESET_REQUEST */
/* After a failed attach: the shim stays inactive; and what cannot be had late. */
void lifecycle_attach_abandon(const char *why);
void lifecycle_attach_mark_unavailable(void);

#endif
