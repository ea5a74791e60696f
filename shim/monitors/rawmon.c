/* rawmon.c — JVMPI raw monitors, owned by the shim, and RAW_MONITOR_CONTENDED_* events.
 *
 * JVMPI raw monitors are reentrant mutexes with wait/notifyAll that agents use from any
 * thread, Java or not, including inside event handlers. JVMTI raw monitors would do, but
 * they post no contention events, and JVMPI wants RAW_MONITOR_CONTENDED_ENTER/ENTERED/EXIT
 * (and the monitor dump wants owner, contenders and waiters). So the shim implements them
 * on a pthread mutex and two condition variables and generates the events itself.
 *
 * A JVMPI_RawMonitor handed to the agent is the address of a struct rawmon, but it is only
 * dereferenced after it was found in the registry (uthash, registry lock): NULL, garbage
 * and destroyed ids are detected and ignored with a log line, as HotSpot's magic check
 * ignored them. A monitor is freed when it is destroyed and no thread is inside a call on
 * it (refcount), so a thread blocked in Enter or Wait never touches freed memory.
 *
 * Names starting with '_' post no events (the spec's rule; hprof names its own lock
 * "_hprof_dump_lock"). Events are posted with no lock held: ENTER before blocking,
 * ENTERED after acquiring, EXIT after releasing when threads were waiting to enter.
 * Locks: registry lock, then a monitor's mutex (both leaves of the lock order).
 */
#include "core/api.h"
#include "events/events.h"
#include "events/report.h"
#include "monitors/rawmon.h"
#include "threads/threads.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#define RAWMON_MAGIC 0x5249504au /* "JPIR" */

static struct rawmon *registry;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_serial;

static struct rawmon *acquire(struct instance *inst, JVMPI_RawMonitor id, const char *fn)
{
    struct rawmon *m = NULL;
    if (id == NULL) {
        report_misuse(inst, LOG_WARN, "%s(NULL): not a raw monitor; ignored", fn);
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    HASH_FIND_PTR(registry, &id, m);
    if (m != NULL)
        m->refs++;
    pthread_mutex_unlock(&registry_lock);
    if (m == NULL)
        report_misuse(inst, LOG_WARN, "%s(%p): unknown or destroyed raw monitor; ignored", fn,
                                      (void *)id);
    return m;
}

static void free_monitor(struct rawmon *m)
{
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->enter_cv);
    pthread_cond_destroy(&m->wait_cv);
    m->magic = 0;
    free(m->name);
    free(m);
}

static void release(struct rawmon *m)
{
    pthread_mutex_lock(&registry_lock);
    bool gone = --m->refs == 0 && m->destroyed;
    pthread_mutex_unlock(&registry_lock);
    if (gone)
        free_monitor(m);
}

static void post_raw(int type, struct rawmon *m)
{
    if (m->silent || !events_any(type))
        return;
    JVMPI_Event ev;
    event_init(&ev, type, shim_current_jni());
    ev.u.raw_monitor.name = m->name;
    ev.u.raw_monitor.id = (JVMPI_RawMonitor)m;
    event_post_all(&ev);
}

JVMPI_RawMonitor jvmpi_RawMonitorCreate(struct instance *inst, char *name)
{
    struct rawmon *m = calloc(1, sizeof *m);
    if (m == NULL) {
        log_error("agent %d: RawMonitorCreate: out of memory", inst->slot);
        return NULL;
    }
    if (name == NULL) /* HotSpot crashed here (strlen(NULL)) */
        report_misuse(inst, LOG_INFO, "RawMonitorCreate(NULL name): created an unnamed monitor");
    /* The name is copied: agents pass stack buffers, and events and dumps show our copy. */
    m->name = strdup(name ? name : "");
    if (m->name == NULL) {
        free(m);
        return NULL;
    }
    m->magic = RAWMON_MAGIC;
    m->silent = name != NULL && name[0] == '_';
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->enter_cv, NULL);
    pthread_cond_init(&m->wait_cv, NULL);
    m->key = m;
    pthread_mutex_lock(&registry_lock);
    m->serial = ++next_serial;
    HASH_ADD_PTR(registry, key, m);
    pthread_mutex_unlock(&registry_lock);
    log_debug("agent %d: RawMonitorCreate(\"%s\") -> %p", inst->slot, m->name, (void *)m);
    return (JVMPI_RawMonitor)m;
}

static void unlink_waiter(struct rawmon_waiter **list, struct rawmon_waiter *w)
{
    for (; *list != NULL; list = &(*list)->next)
        if (*list == w) {
            *list = w->next;
            return;
        }
}

/* Take ownership (count 1) once nobody owns it; caller holds m->mu. */
static void lock_owned(struct rawmon *m)
{
    while (m->owned)
        pthread_cond_wait(&m->enter_cv, &m->mu);
    m->owned = true;
    m->owner = pthread_self();
    m->owner_env = shim_current_env(); /* a virtual thread in a handler: its env_id */
}

void jvmpi_RawMonitorEnter(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = acquire(inst, id, "RawMonitorEnter");
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    if (m->owned && pthread_equal(m->owner, pthread_self())) {
        m->count++;
        pthread_mutex_unlock(&m->mu);
        release(m);
        return;
    }
    if (!m->owned) {
        lock_owned(m);
        m->count = 1;
        pthread_mutex_unlock(&m->mu);
        release(m);
        return;
    }
    /* Contended: say so before blocking, with no lock held. */
    m->contenders++;
    struct rawmon_waiter me = {shim_current_env(), m->entering};
    m->entering = &me;
    pthread_mutex_unlock(&m->mu);
    post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, m);
    struct thread_rec *self = threads_self();
    if (self)
        atomic_store(&self->raw_state, JVMPI_THREAD_MONITOR_WAIT);
    pthread_mutex_lock(&m->mu);
    lock_owned(m);
    if (self)
        atomic_store(&self->raw_state, 0);
    m->count = 1;
    m->contenders--;
    unlink_waiter(&m->entering, &me);
    pthread_mutex_unlock(&m->mu);
    post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, m);
    release(m);
}

/* Give up ownership entirely; caller holds m->mu. Returns whether threads wait to enter. */
static bool unlock_owned(struct rawmon *m)
{
    m->owned = false;
    m->count = 0;
    m->owner_env = NULL;
    if (m->contenders > 0 || m->reentering > 0) {
        pthread_cond_broadcast(&m->enter_cv);
        return m->contenders > 0;
    }
    return false;
}

void jvmpi_RawMonitorExit(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = acquire(inst, id, "RawMonitorExit");
    if (m == NULL)
        return;
    bool contended = false;
    pthread_mutex_lock(&m->mu);
    if (!m->owned || !pthread_equal(m->owner, pthread_self())) {
        pthread_mutex_unlock(&m->mu);
        report_misuse(inst, LOG_INFO,
                      "RawMonitorExit(\"%s\"): the calling thread does not own it; ignored",
                      m->name);
        release(m);
        return;
    }
    if (--m->count == 0)
        contended = unlock_owned(m);
    pthread_mutex_unlock(&m->mu);
    if (contended)
        post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, m);
    release(m);
}

void jvmpi_RawMonitorWait(struct instance *inst, JVMPI_RawMonitor id, jlong ms)
{
    struct rawmon *m = acquire(inst, id, "RawMonitorWait");
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    if (!m->owned || !pthread_equal(m->owner, pthread_self())) {
        pthread_mutex_unlock(&m->mu);
        report_misuse(inst, LOG_INFO,
                      "RawMonitorWait(\"%s\"): the calling thread does not own it; returns at once",
                      m->name);
        release(m);
        return;
    }
    int saved = m->count;
    JNIEnv *saved_env = m->owner_env;
    bool contended = unlock_owned(m);
    uint64_t gen0 = m->notify_gen;
    if (contended) {
        /* The release happens now: say so now, not when the wait ends. A notify in the
         * unlocked window is not lost: it moves notify_gen past gen0. */
        pthread_mutex_unlock(&m->mu);
        post_raw(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, m);
        pthread_mutex_lock(&m->mu);
    }
    m->waiters++;
    struct rawmon_waiter me = {shim_current_env(), m->waiting};
    m->waiting = &me;
    uint64_t gen = gen0;
    struct timespec deadline;
    if (ms > 0) {
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += ms / 1000;
        deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    struct thread_rec *self = threads_self();
    if (self)
        atomic_store(&self->raw_state, JVMPI_THREAD_CONDVAR_WAIT);
    /* JVMPI: ms <= 0 waits until notified. */
    while (m->notify_gen == gen) {
        if (ms > 0) {
            if (pthread_cond_timedwait(&m->wait_cv, &m->mu, &deadline) == ETIMEDOUT)
                break;
        } else {
            pthread_cond_wait(&m->wait_cv, &m->mu);
        }
    }
    m->waiters--;
    unlink_waiter(&m->waiting, &me);
    m->reentering++;
    me.next = m->entering;
    m->entering = &me;
    lock_owned(m);
    m->reentering--;
    unlink_waiter(&m->entering, &me);
    if (self)
        atomic_store(&self->raw_state, 0);
    m->count = saved;
    m->owner_env = saved_env;
    pthread_mutex_unlock(&m->mu);
    release(m);
}

void jvmpi_RawMonitorNotifyAll(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = acquire(inst, id, "RawMonitorNotifyAll");
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    if (!m->owned || !pthread_equal(m->owner, pthread_self())) {
        report_misuse(inst, LOG_INFO,
                      "RawMonitorNotifyAll(\"%s\"): the calling thread does not own it; ignored",
                      m->name);
    } else {
        m->notify_gen++;
        pthread_cond_broadcast(&m->wait_cv);
    }
    pthread_mutex_unlock(&m->mu);
    release(m);
}

void jvmpi_RawMonitorDestroy(struct instance *inst, JVMPI_RawMonitor id)
{
    struct rawmon *m = acquire(inst, id, "RawMonitorDestroy");
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    if (m->owned && !pthread_equal(m->owner, pthread_self())) {
        /* HotSpot: destroying a monitor another thread owns fails silently. */
        pthread_mutex_unlock(&m->mu);
        report_misuse(inst, LOG_WARN,
                      "RawMonitorDestroy(\"%s\"): owned by another thread; not destroyed",
                      m->name);
        release(m);
        return;
    }
    if (m->owned)
        unlock_owned(m); /* the owner may destroy: released first, as HotSpot did */
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_lock(&registry_lock);
    if (!m->destroyed) {
        m->destroyed = true;
        HASH_DEL(registry, m);
    }
    pthread_mutex_unlock(&registry_lock);
    log_debug("RawMonitorDestroy(\"%s\")", m->name);
    release(m);
}

static JNIEnv **copy_envs(const struct rawmon_waiter *w, int *n)
{
    int k = 0;
    for (const struct rawmon_waiter *x = w; x != NULL; x = x->next)
        k++;
    JNIEnv **v = calloc(k ? (size_t)k : 1, sizeof *v);
    *n = 0;
    if (v == NULL)
        return NULL;
    for (const struct rawmon_waiter *x = w; x != NULL; x = x->next)
        v[(*n)++] = x->env;
    return v;
}

size_t rawmon_snapshot(struct rawmon_info **out)
{
    pthread_mutex_lock(&registry_lock);
    size_t n = HASH_COUNT(registry), i = 0;
    struct rawmon_info *v = calloc(n ? n : 1, sizeof *v);
    struct rawmon *m, *tmp;
    if (v != NULL) {
        HASH_ITER(hh, registry, m, tmp) {
            pthread_mutex_lock(&m->mu);
            if (m->owned || m->entering != NULL || m->waiting != NULL) {
                v[i].id = (JVMPI_RawMonitor)m;
                v[i].name = m->name;
                v[i].owner_env = m->owned ? m->owner_env : NULL;
                v[i].enter_envs = copy_envs(m->entering, &v[i].n_enter);
                v[i].wait_envs = copy_envs(m->waiting, &v[i].n_wait);
                v[i].mon = m;
                m->refs++; /* keeps name valid after a concurrent destroy */
                i++;
            }
            pthread_mutex_unlock(&m->mu);
        }
    }
    pthread_mutex_unlock(&registry_lock);
    *out = v;
    return v ? i : 0;
}

void rawmon_snapshot_free(struct rawmon_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].enter_envs);
        free(v[i].wait_envs);
        release(v[i].mon);
    }
    free(v);
}
