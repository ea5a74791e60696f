/* info.c — the CLASS_LOAD payload: built from JVMTI queries, kept with the class record,
 * posted.
 *
 * The payload (struct class_info) carries the dotted name, SourceFile (NULL when absent,
 * as HotSpot), the count of directly implemented interfaces, methods in class-file order
 * (can_maintain_original_method_order) with start_lineno = line of bci 0 and end_lineno =
 * line of the last bci (-1 for native and abstract methods, as HotSpot), and static and
 * instance fields in REVERSE declaration order — HotSpot's FieldStream order, which heap
 * dumps also use. It is built once per class and kept with its record: agents keep the
 * names' pointers, and a CLASS_LOAD request inside a CLASS_UNLOAD handler is answered from
 * it after the class is gone.
 */
#include "classes/internal.h"
#include "core/ids.h"
#include "events/events.h"

#include <stdlib.h>
#include <string.h>

void info_free(struct class_info *ci)
{
    if (ci == NULL)
        return;
    free(ci->name);
    free(ci->source);
    for (jint i = 0; i < ci->num_methods; i++) {
        free(ci->methods[i].method_name);
        free(ci->methods[i].method_signature);
    }
    for (jint i = 0; i < ci->num_statics; i++) {
        free(ci->statics[i].field_name);
        free(ci->statics[i].field_signature);
    }
    for (jint i = 0; i < ci->num_instances; i++) {
        free(ci->instances[i].field_name);
        free(ci->instances[i].field_signature);
    }
    free(ci->methods);
    free(ci->statics);
    free(ci->instances);
    free(ci);
}

static char *jvmti_strdup(char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s)
        jvmti_free(g_shim.jvmti, s);
    return d;
}

/* "Ljava/lang/String;" -> "java.lang.String"; "[I" stays "[I"; '/' -> '.' throughout,
 * as Class.getName() does. A hidden class's JVMTI name ends in ".0x..." (the only '.' an
 * internal name can have); Class.getName() writes that one as '/'. */
static char *external_name(const char *sig)
{
    size_t n = strlen(sig);
    const char *p = sig;
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        p = sig + 1;
        n -= 2;
    }
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t hidden_dot = n;
    for (size_t i = 0; i < n; i++) {
        out[i] = p[i] == '/' ? '.' : p[i];
        if (p[i] == '.')
            hidden_dot = i;
    }
    if (hidden_dot < n && sig[0] == 'L')
        out[hidden_dot] = '/';
    out[n] = '\0';
    return out;
}

/* Line of a bytecode index: the entry with the greatest start <= bci; -1 if none. */
static jint line_of(const jvmtiLineNumberEntry *t, jint n, jlocation bci)
{
    jint line = -1;
    jlocation best = -1;
    for (jint i = 0; i < n; i++)
        if (t[i].start_location <= bci && t[i].start_location > best) {
            best = t[i].start_location;
            line = t[i].line_number;
        }
    return line;
}

static void method_lines(jmethodID m, jint *start, jint *end)
{
    *start = *end = -1;
    jint n = 0;
    jvmtiLineNumberEntry *t = NULL;
    jlocation lo = 0, hi = 0;
    jvmtiError err = (*g_shim.jvmti)->GetLineNumberTable(g_shim.jvmti, m, &n, &t);
    if (err == JVMTI_ERROR_NATIVE_METHOD || err == JVMTI_ERROR_ABSENT_INFORMATION)
        return; /* native, abstract, or compiled without -g:lines: no lines, as HotSpot */
    if (!jvmti_ok_at(err, LOG_DEBUG, "GetLineNumberTable for CLASS_LOAD's line numbers"))
        return;
    if (jvmti_ok_at((*g_shim.jvmti)->GetMethodLocation(g_shim.jvmti, m, &lo, &hi), LOG_DEBUG,
                    "GetMethodLocation for CLASS_LOAD's end line")) {
        *start = line_of(t, n, 0);
        *end = line_of(t, n, hi < 0 ? 0 : hi);
    }
    jvmti_free(g_shim.jvmti, t);
}

struct class_info *info_build(JNIEnv *jni, jclass cls)
{
    jvmtiEnv *j = g_shim.jvmti;
    struct class_info *ci = calloc(1, sizeof *ci);
    if (ci == NULL)
        return NULL;
    char *sig = NULL;
    if (!jvmti_ok_at((*j)->GetClassSignature(j, cls, &sig, NULL), LOG_WARN,
                     "GetClassSignature for CLASS_LOAD")) {
        free(ci);
        return NULL;
    }
    ci->name = external_name(sig);
    bool is_array = sig[0] == '[';
    jvmti_free(j, sig);
    if (is_array)
        return ci; /* HotSpot: arrays have no source, interfaces, methods or fields */

    char *src = NULL;
    jvmtiError err = (*j)->GetSourceFileName(j, cls, &src);
    if (err == JVMTI_ERROR_ABSENT_INFORMATION)
        ci->source = NULL; /* no SourceFile attribute: NULL, as HotSpot */
    else if (jvmti_ok_at(err, LOG_DEBUG, "GetSourceFileName for CLASS_LOAD"))
        ci->source = jvmti_strdup(src);

    jint ni = 0;
    jclass *ifs = NULL;
    if (jvmti_ok_at((*j)->GetImplementedInterfaces(j, cls, &ni, &ifs), LOG_DEBUG,
                    "GetImplementedInterfaces for CLASS_LOAD")) {
        ci->num_interfaces = ni;
        for (jint i = 0; i < ni; i++)
            (*jni)->DeleteLocalRef(jni, ifs[i]);
        jvmti_free(j, ifs);
    }

    jint nm = 0;
    jmethodID *ms = NULL;
    if (jvmti_ok_at((*j)->GetClassMethods(j, cls, &nm, &ms), LOG_DEBUG,
                    "GetClassMethods for CLASS_LOAD")) {
        note_methods_of(ms, nm, ids_tag(ids_peek(cls)));
        ci->methods = calloc(nm ? nm : 1, sizeof *ci->methods);
        for (jint i = 0; ci->methods && i < nm; i++) {
            char *name = NULL, *msig = NULL;
            if (!jvmti_ok_at((*j)->GetMethodName(j, ms[i], &name, &msig, NULL), LOG_DEBUG,
                             "GetMethodName for CLASS_LOAD"))
                continue;
            if (name != NULL && strncmp(name, BCI_NATIVE_PREFIX, strlen(BCI_NATIVE_PREFIX)) == 0) {
                /* A native renamed by method-event instrumentation (bci.c): the agent knows
                 * the method by its wrapper, which has the original name. */
                jvmti_free(j, name);
                jvmti_free(j, msig);
                continue;
            }
            JVMPI_Method *m = &ci->methods[ci->num_methods++];
            m->method_name = jvmti_strdup(name);
            m->method_signature = jvmti_strdup(msig);
            m->method_id = ms[i];
            method_lines(ms[i], &m->start_lineno, &m->end_lineno);
        }
        jvmti_free(j, ms);
    }

    jint nf = 0;
    jfieldID *fs = NULL;
    if (jvmti_ok_at((*j)->GetClassFields(j, cls, &nf, &fs), LOG_DEBUG,
                    "GetClassFields for CLASS_LOAD")) {
        ci->statics = calloc(nf ? nf : 1, sizeof *ci->statics);
        ci->instances = calloc(nf ? nf : 1, sizeof *ci->instances);
        /* JVMTI lists fields in declaration order; JVMPI (HotSpot) used the reverse. */
        for (jint i = nf - 1; ci->statics && ci->instances && i >= 0; i--) {
            char *name = NULL, *fsig = NULL;
            jint mods = 0;
            if (!jvmti_ok_at((*j)->GetFieldName(j, cls, fs[i], &name, &fsig, NULL), LOG_DEBUG,
                             "GetFieldName for CLASS_LOAD"))
                continue;
            jvmti_ignore((*j)->GetFieldModifiers(j, cls, fs[i], &mods),
                         "GetFieldModifiers for CLASS_LOAD: a field it fails for is listed "
                         "as an instance field");
            JVMPI_Field *f = (mods & 0x0008) ? &ci->statics[ci->num_statics++]
                                             : &ci->instances[ci->num_instances++];
            f->field_name = jvmti_strdup(name);
            f->field_signature = jvmti_strdup(fsig);
        }
        jvmti_free(j, fs);
    }
    return ci;
}

static void fill_event(JVMPI_Event *ev, const struct class_info *ci, jlong tag)
{
    ev->u.class_load.class_name = ci->name;
    ev->u.class_load.source_name = ci->source;
    ev->u.class_load.num_interfaces = ci->num_interfaces;
    ev->u.class_load.num_methods = ci->num_methods;
    ev->u.class_load.methods = ci->num_methods ? ci->methods : NULL;
    ev->u.class_load.num_static_fields = ci->num_statics;
    ev->u.class_load.statics = ci->num_statics ? ci->statics : NULL;
    ev->u.class_load.num_instance_fields = ci->num_instances;
    ev->u.class_load.instances = ci->num_instances ? ci->instances : NULL;
    ev->u.class_load.class_id = ids_from_tag(tag);
}

/* False if nothing was delivered: the class's members could not be read (it is being
 * unloaded), or the agent gets no more events. */
bool post_class_load(JNIEnv *jni, struct instance *inst, struct class_rec *r,
                            jclass cls, bool requested)
{
    struct class_info *ci = atomic_load(&r->saved);
    if (ci == NULL && cls != NULL) {
        /* One copy per class, kept with the record until its CLASS_UNLOAD was delivered:
         * agents keep the names' pointers (HotSpot's stayed readable while the class was
         * loaded), and a CLASS_LOAD request inside a CLASS_UNLOAD handler is answered from
         * it. Built when first announced (the class is linked by then). */
        ci = info_build(jni, cls);
        struct class_info *none = NULL;
        if (ci != NULL && !atomic_compare_exchange_strong(&r->saved, &none, ci)) {
            info_free(ci);
            ci = none;
        }
    }
    if (ci == NULL)
        return false;
    JVMPI_Event ev;
    event_init(&ev, JVMPI_EVENT_CLASS_LOAD | (requested ? JVMPI_REQUESTED_EVENT : 0), jni);
    fill_event(&ev, ci, r->tag);
    return event_post(inst, &ev);
}
