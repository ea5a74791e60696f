/* hprof_table.c — hash tables, and the class, method and thread tables HPROF keeps.
 *
 * Classes and methods come from CLASS_LOAD (enabled from JVM_OnLoad, so the VM tells us of
 * every class before any event names it), threads from THREAD_START; for an id we were
 * never told of, the *_get functions ask the VM with RequestEvent (CLASS_LOAD for a class
 * or a method's class via GetMethodClass, THREAD_START for a thread via GetThreadObject),
 * inside DisableGC/EnableGC as the specification requires for functions that take or
 * return a jobjectID. Records are never freed: traces, sites and the sampler keep
 * pointers to them. CLASS_UNLOAD and THREAD_END retire the id, not the record.
 *
 * pmap is an open-addressing map from a pointer-sized key to a 64-bit value with
 * backward-shift deletion: lookups and deletions never allocate, which is what
 * OBJECT_FREE needs (it must not malloc: it runs in the GC bracket).
 */
#include "hprof.h"

#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

char *xstrdup(const char *s)
{
    return strdup(s != NULL ? s : "");
}

unsigned hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int grow_array(void *arrp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)arrp, c * elem);
    if (p == NULL)
        return 0;
    *(void **)arrp = p;
    *cap = c;
    return 1;
}

/* ---- pmap ---- */

static size_t home(uintptr_t k, size_t cap)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    return (size_t)x & (cap - 1);
}

uint64_t *pmap_get(const struct pmap *m, const void *key)
{
    uintptr_t k = (uintptr_t)key;
    if (m->cap == 0 || k == 0)
        return NULL;
    for (size_t i = home(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == 0)
            return NULL;
        if (m->keys[i] == k)
            return &m->vals[i];
    }
}

static void put_raw(struct pmap *m, uintptr_t k, uint64_t v)
{
    size_t i = home(k, m->cap);
    while (m->keys[i] != 0 && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (m->keys[i] == 0)
        m->n++;
    m->keys[i] = k;
    m->vals[i] = v;
}

int pmap_put(struct pmap *m, const void *key, uint64_t val)
{
    uintptr_t k = (uintptr_t)key;
    if (k == 0)
        return 0;
    uint64_t *old = pmap_get(m, key);
    if (old != NULL) {
        *old = val;
        return 1;
    }
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        uintptr_t *ks = calloc(cap, sizeof *ks);
        uint64_t *vs = calloc(cap, sizeof *vs);
        if (ks == NULL || vs == NULL) {
            free(ks);
            free(vs);
            return 0;
        }
        struct pmap old_m = *m;
        m->keys = ks;
        m->vals = vs;
        m->cap = cap;
        m->n = 0;
        for (size_t i = 0; i < old_m.cap; i++)
            if (old_m.keys[i] != 0)
                put_raw(m, old_m.keys[i], old_m.vals[i]);
        free(old_m.keys);
        free(old_m.vals);
    }
    put_raw(m, k, val);
    return 1;
}

int pmap_del(struct pmap *m, const void *key, uint64_t *val)
{
    uintptr_t k = (uintptr_t)key;
    if (m->cap == 0 || k == 0)
        return 0;
    size_t mask = m->cap - 1, i = home(k, m->cap);
    while (m->keys[i] != k) {
        if (m->keys[i] == 0)
            return 0;
        i = (i + 1) & mask;
    }
    if (val != NULL)
        *val = m->vals[i];
    /* Backward shift: pull later entries of the run into the hole unless their home lies
     * cyclically in (hole, their slot]. */
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == 0)
            break;
        size_t h = home(m->keys[j], m->cap);
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->n--;
    return 1;
}

uintptr_t pmap_key_at(const struct pmap *m, size_t i)
{
    return i < m->cap ? m->keys[i] : 0;
}

/* ---- names ---- */

const char *prim_array_name(jint ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: return "boolean[]";
    case JVMPI_CHAR:    return "char[]";
    case JVMPI_FLOAT:   return "float[]";
    case JVMPI_DOUBLE:  return "double[]";
    case JVMPI_BYTE:    return "byte[]";
    case JVMPI_SHORT:   return "short[]";
    case JVMPI_INT:     return "int[]";
    case JVMPI_LONG:    return "long[]";
    default:            return NULL;
    }
}

static const char *sig_prim(char c)
{
    switch (c) {
    case 'Z': return "boolean";
    case 'C': return "char";
    case 'F': return "float";
    case 'D': return "double";
    case 'B': return "byte";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    default:  return NULL;
    }
}

/* "[[Ljava.lang.String;" -> "java.lang.String[][]", "[I" -> "int[]"; others unchanged. */
char *display_name(const char *n)
{
    if (n == NULL)
        return xstrdup("<unknown class>");
    if (n[0] != '[')
        return xstrdup(n);
    int dims = 0;
    while (n[dims] == '[')
        dims++;
    const char *e = n + dims;
    size_t elen;
    const char *ebase;
    if (*e == 'L') {
        ebase = e + 1;
        elen = strcspn(ebase, ";");
    } else {
        ebase = sig_prim(*e) ? sig_prim(*e) : e;
        elen = strlen(ebase);
    }
    char *s = malloc(elen + 2 * (size_t)dims + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, ebase, elen);
    for (int i = 0; i < dims; i++)
        memcpy(s + elen + 2 * (size_t)i, "[]", 2);
    s[elen + 2 * (size_t)dims] = '\0';
    return s;
}

char *binary_name(const char *n)
{
    char *s = xstrdup(n);
    for (char *p = s; p && *p; p++)
        if (*p == '.')
            *p = '/';
    return s;
}

/* ---- tables ---- */

struct pmap classes_by_id, methods_by_id, threads_by_env;
struct thr **threads;
size_t nthreads;
static size_t cap_threads;
unsigned class_serials;
static unsigned thread_serials;

#define NAME_BUCKETS 16384
static struct cls *by_name[NAME_BUCKETS];

struct cls *cls_find(jobjectID id)
{
    uint64_t *v = pmap_get(&classes_by_id, id);
    return v ? (struct cls *)(uintptr_t)*v : NULL;
}

struct cls *cls_find_name(const char *name)
{
    for (struct cls *c = by_name[hash_str(name) & (NAME_BUCKETS - 1)]; c; c = c->name_next)
        if (!c->unloaded && strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

struct meth *meth_find(jmethodID mid)
{
    uint64_t *v = pmap_get(&methods_by_id, mid);
    return v ? (struct meth *)(uintptr_t)*v : NULL;
}

struct thr *thr_find(JNIEnv *env)
{
    uint64_t *v = pmap_get(&threads_by_env, env);
    return v ? (struct thr *)(uintptr_t)*v : NULL;
}

/* Binary: LOAD CLASS for a new class record. Holding data_lock. */
static void write_load_class(struct cls *c)
{
    if (!opt.binary)
        return;
    uint64_t name = io_utf8_id(c->bin_name);
    struct buf b = {0};
    buf_u4(&b, c->serial);
    buf_id(&b, (uint64_t)(uintptr_t)c->id);
    buf_u4(&b, trace_empty() ? trace_empty()->serial : 0);
    buf_id(&b, name);
    if (!b.oom)
        io_record(HPROF_LOAD_CLASS, &b);
    buf_free(&b);
}

static void link_name(struct cls *c)
{
    unsigned h = hash_str(c->name) & (NAME_BUCKETS - 1);
    c->name_next = by_name[h];
    by_name[h] = c;
}

static struct field *copy_fields(const JVMPI_Field *f, jint n)
{
    if (n <= 0 || f == NULL)
        return NULL;
    struct field *out = calloc((size_t)n, sizeof *out);
    for (jint i = 0; out && i < n; i++) {
        out[i].name = xstrdup(f[i].field_name);
        out[i].sig = xstrdup(f[i].field_signature);
    }
    return out;
}

void on_class_load(JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_load.class_id;
    if (id == NULL)
        return;
    /* Build the record without the lock: malloc may take a while. */
    struct cls *c = calloc(1, sizeof *c);
    if (c == NULL)
        return;
    c->id = id;
    c->name = xstrdup(ev->u.class_load.class_name);
    c->disp = display_name(ev->u.class_load.class_name);
    c->bin_name = binary_name(ev->u.class_load.class_name);
    c->source = ev->u.class_load.source_name ? xstrdup(ev->u.class_load.source_name) : NULL;
    c->num_interfaces = ev->u.class_load.num_interfaces;
    c->nstatics = ev->u.class_load.statics ? ev->u.class_load.num_static_fields : 0;
    c->ninst = ev->u.class_load.instances ? ev->u.class_load.num_instance_fields : 0;
    c->statics = copy_fields(ev->u.class_load.statics, c->nstatics);
    c->inst = copy_fields(ev->u.class_load.instances, c->ninst);
    c->layout_n = -1;
    if ((c->nstatics && !c->statics) || (c->ninst && !c->inst))
        c->nstatics = c->ninst = 0; /* out of memory: no field detail */
    jint nm = ev->u.class_load.methods ? ev->u.class_load.num_methods : 0;
    struct meth *ms = nm > 0 ? calloc((size_t)nm, sizeof *ms) : NULL;
    if (ms == NULL)
        nm = 0;
    for (jint i = 0; i < nm; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        ms[i].id = m->method_id;
        ms[i].cls = c;
        ms[i].name = xstrdup(m->method_name);
        ms[i].sig = xstrdup(m->method_signature);
    }

    LOCK();
    struct cls *old = cls_find(id);
    if (old != NULL && !old->unloaded) {
        UNLOCK(); /* told twice (a request, or a replay): keep the first record */
        for (jint i = 0; i < nm; i++) {
            free(ms[i].name);
            free(ms[i].sig);
        }
        free(ms);
        for (int i = 0; i < c->nstatics; i++) {
            free(c->statics[i].name);
            free(c->statics[i].sig);
        }
        for (int i = 0; i < c->ninst; i++) {
            free(c->inst[i].name);
            free(c->inst[i].sig);
        }
        free(c->statics);
        free(c->inst);
        free(c->name);
        free(c->disp);
        free(c->bin_name);
        free(c->source);
        free(c);
        return;
    }
    c->serial = ++class_serials;
    pmap_put(&classes_by_id, id, (uint64_t)(uintptr_t)c);
    link_name(c);
    for (jint i = 0; i < nm; i++)
        pmap_put(&methods_by_id, ms[i].id, (uint64_t)(uintptr_t)&ms[i]);
    write_load_class(c);
    UNLOCK();
}

void on_class_unload(JVMPI_Event *ev)
{
    uint64_t v;
    LOCK();
    if (pmap_del(&classes_by_id, ev->u.class_unload.class_id, &v)) {
        struct cls *c = (struct cls *)(uintptr_t)v;
        c->unloaded = 1;
        if (opt.binary) {
            struct buf b = {0};
            buf_u4(&b, c->serial);
            io_record(HPROF_UNLOAD_CLASS, &b);
            buf_free(&b);
        }
    }
    UNLOCK();
}

/* Binary array classes JVMPI never named: made up, with an id no object has. Holding data_lock. */
struct cls *cls_synthetic_array(struct cls *elem)
{
    static uint64_t next = 1;
    const char *en = elem ? elem->name : "java.lang.Object";
    size_t n = strlen(en) + 4;
    char *name = malloc(n);
    if (name == NULL)
        return NULL;
    if (en[0] == '[')
        snprintf(name, n, "[%s", en);
    else
        snprintf(name, n, "[L%s;", en);
    struct cls *c = cls_find_name(name);
    if (c != NULL) {
        free(name);
        return c;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        free(name);
        return NULL;
    }
    c->id = (jobjectID)(uintptr_t)(0x8000000000000000ULL | (next++ << 3));
    c->name = name;
    c->disp = display_name(name);
    c->bin_name = binary_name(name);
    c->synthetic = 1;
    c->layout_n = -1;
    c->serial = ++class_serials;
    pmap_put(&classes_by_id, c->id, (uint64_t)(uintptr_t)c);
    link_name(c);
    write_load_class(c);
    return c;
}

struct cls *cls_get(jobjectID id, int gc_disabled)
{
    if (id == NULL)
        return NULL;
    LOCK();
    struct cls *c = cls_find(id);
    UNLOCK();
    if (c != NULL)
        return c;
    if (!gc_disabled)
        jvmpi->DisableGC();
    jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
    if (!gc_disabled)
        jvmpi->EnableGC();
    LOCK();
    c = cls_find(id);
    UNLOCK();
    return c;
}

void meth_resolve(jmethodID mid)
{
    if (mid == NULL)
        return;
    LOCK();
    struct meth *m = meth_find(mid);
    UNLOCK();
    if (m != NULL)
        return;
    jvmpi->DisableGC();
    jobjectID c = jvmpi->GetMethodClass(mid);
    if (c != NULL)
        jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, c);
    jvmpi->EnableGC();
}

/* ---- threads ---- */

static void write_thread_start(struct thr *t)
{
    if (!opt.binary) {
        io_printf("THREAD START (obj=%lx, id = %u, name=\"%s\", group=\"%s\")\n",
                  (unsigned long)(uintptr_t)t->obj, t->serial, t->name, t->group);
        return;
    }
    uint64_t n = io_utf8_id(t->name), g = io_utf8_id(t->group), p = io_utf8_id(t->parent);
    struct buf b = {0};
    buf_u4(&b, t->serial);
    buf_id(&b, (uint64_t)(uintptr_t)t->obj);
    buf_u4(&b, trace_empty() ? trace_empty()->serial : 0);
    buf_id(&b, n);
    buf_id(&b, g);
    buf_id(&b, p);
    if (!b.oom)
        io_record(HPROF_START_THREAD, &b);
    buf_free(&b);
}

void on_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL)
        env = ev->env_id;
    if (env == NULL)
        return;
    struct thr *t = calloc(1, sizeof *t);
    if (t == NULL)
        return;
    t->env = env;
    t->obj = ev->u.thread_start.thread_id;
    t->name = xstrdup(ev->u.thread_start.thread_name);
    t->group = xstrdup(ev->u.thread_start.group_name);
    t->parent = xstrdup(ev->u.thread_start.parent_name);
    t->live = 1;
    LOCK();
    struct thr *old = thr_find(env);
    if (old != NULL || !grow_array(&threads, &cap_threads, nthreads + 1, sizeof *threads)) {
        UNLOCK(); /* told twice: the first record stands */
        free(t->name);
        free(t->group);
        free(t->parent);
        free(t);
        return;
    }
    t->serial = ++thread_serials;
    threads[nthreads++] = t;
    pmap_put(&threads_by_env, env, (uint64_t)(uintptr_t)t);
    write_thread_start(t);
    UNLOCK();
    jvmpi->SetThreadLocalStorage(env, t);
}

void on_thread_end(JVMPI_Event *ev)
{
    JNIEnv *env = ev->env_id;
    struct thr *t = jvmpi->GetThreadLocalStorage(env);
    LOCK();
    if (t == NULL || t->env != env || !t->live)
        t = thr_find(env);
    if (t != NULL && t->live) {
        t->live = 0;
        pmap_del(&threads_by_env, env, NULL); /* a later thread may get the same JNIEnv */
        if (!opt.binary) {
            io_printf("THREAD END (id = %u)\n", t->serial);
        } else {
            struct buf b = {0};
            buf_u4(&b, t->serial);
            io_record(HPROF_END_THREAD, &b);
            buf_free(&b);
        }
    }
    UNLOCK();
    jvmpi->SetThreadLocalStorage(env, NULL);
}

struct thr *thr_get(JNIEnv *env)
{
    if (env == NULL)
        return NULL;
    struct thr *t = jvmpi->GetThreadLocalStorage(env);
    if (t != NULL && t->env == env && t->live)
        return t;
    LOCK();
    t = thr_find(env);
    UNLOCK();
    if (t != NULL)
        return t;
    /* Never told of this thread: ask for its THREAD_START. */
    jvmpi->DisableGC();
    jobjectID obj = jvmpi->GetThreadObject(env);
    if (obj != NULL)
        jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, obj);
    jvmpi->EnableGC();
    LOCK();
    t = thr_find(env);
    UNLOCK();
    return t;
}

/* The serial of a live thread, else of the last ended thread that had this JNIEnv (the
 * thread that ends the VM has had its THREAD_END when the exit dump names it). */
unsigned thread_serial_of(JNIEnv *env)
{
    struct thr *t = thr_find(env);
    if (t != NULL)
        return t->serial;
    for (size_t i = nthreads; env != NULL && i-- > 0;)
        if (threads[i]->env == env)
            return threads[i]->serial;
    return 0;
}
