/* nsites.c — a native JVMTI agent doing HPROF heap=sites' job, the floor of that benchmark
 * (bench/calls.sh hprof): what a user porting HPROF's allocation sites by hand would write.
 *
 * SampledObjectAlloc with SetHeapSamplingInterval(0) set in Agent_OnLoad, so every
 * allocation is reported; per allocation a 4-frame GetStackTrace of the allocating thread
 * (HPROF's default depth), the class's tag (set once per class: the class id) and a count
 * in a table of sites keyed by the class and the frames' methods and locations, under one
 * pthread mutex, as HPROF keeps its site table under its one lock. No object tags and no
 * frees: HPROF's live figures need OBJECT_FREE, which the shim's run pays for and this floor
 * does not, so the floor is a lower bound. Prints at VMDeath:
 *   nsites: allocs=N sites=S
 */
#include <jvmti.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 4

struct site {
    jlong cls;
    jmethodID m[DEPTH];
    jlocation at[DEPTH];
    long count;
};

static struct site *sites;
static size_t cap, used;
static long allocs;
static jlong next_class_tag = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash(const struct site *s)
{
    uint64_t h = (uint64_t)s->cls * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < DEPTH; i++)
        h = (h ^ (uint64_t)(uintptr_t)s->m[i] ^ (uint64_t)s->at[i]) * 0x100000001B3ULL;
    return h;
}

static int same(const struct site *a, const struct site *b)
{
    return a->cls == b->cls && memcmp(a->m, b->m, sizeof a->m) == 0 &&
           memcmp(a->at, b->at, sizeof a->at) == 0;
}

/* Under lock. */
static void count(const struct site *k)
{
    if (2 * (used + 1) > cap) {
        size_t ncap = cap ? cap * 2 : 1024;
        struct site *n = calloc(ncap, sizeof *n);
        if (n == NULL)
            return;
        for (size_t i = 0; i < cap; i++)
            if (sites[i].count) {
                size_t j = hash(&sites[i]) & (ncap - 1);
                while (n[j].count)
                    j = (j + 1) & (ncap - 1);
                n[j] = sites[i];
            }
        free(sites);
        sites = n;
        cap = ncap;
    }
    size_t j = hash(k) & (cap - 1);
    while (sites[j].count && !same(&sites[j], k))
        j = (j + 1) & (cap - 1);
    if (!sites[j].count) {
        sites[j] = *k;
        used++;
    }
    sites[j].count++;
}

static void JNICALL on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject obj,
                             jclass cls, jlong size)
{
    (void)jni; (void)obj; (void)size;
    struct site k;
    memset(&k, 0, sizeof k);
    jvmtiFrameInfo f[DEPTH];
    jint n = 0;
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, DEPTH, f, &n) != JVMTI_ERROR_NONE)
        n = 0;
    for (jint i = 0; i < n; i++) {
        k.m[i] = f[i].method;
        k.at[i] = f[i].location;
    }
    (*jvmti)->GetTag(jvmti, cls, &k.cls);
    pthread_mutex_lock(&lock);
    if (k.cls == 0) {
        k.cls = next_class_tag++;
        (*jvmti)->SetTag(jvmti, cls, k.cls);
    }
    count(&k);
    allocs++;
    pthread_mutex_unlock(&lock);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti; (void)jni;
    pthread_mutex_lock(&lock);
    printf("nsites: allocs=%ld sites=%zu\n", allocs, used);
    pthread_mutex_unlock(&lock);
    fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_generate_sampled_object_alloc_events = 1;
    c.can_tag_objects = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &c) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.SampledObjectAlloc = on_alloc;
    cb.VMDeath = on_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetHeapSamplingInterval(jvmti, 0);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    return JNI_OK;
}
