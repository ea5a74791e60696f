/* archive.c — the CDS archive's dormant subgraphs made safe to read: their classes loaded.
 *
 * The class data sharing archive maps a part of the heap that holds, besides the mirrors and
 * strings every run uses, object subgraphs that stay dormant until their class is
 * initialized (the FDBigInteger caches, the jar manifest's known attribute names, the module
 * graph when it is not used). A dormant subgraph's head is often an object of a class
 * already loaded (an Object[], a HashMap), and it holds objects of classes this run never
 * loaded, which have no ClassLoaderData. IterateThroughHeap shows the head like any
 * unreachable object; a heap dump lists it and the id index (core/ids.c) takes a reference
 * to it, and once a JNI reference to it exists, the collector's next marking walks from it
 * into those objects and crashes in ClassLoaderData::oops_do (measured on JDK 17 with G1: a
 * 32-thread class-loading storm with dumps and requests for their ids crashed 1 to 5 runs in
 * 6, always on FDBigInteger[]; none in 18 since). No JVMTI callback tells such a head from
 * the program's garbage, which a dump must list. So before any agent runs, the shim loads, without
 * initializing them, the classes whose static fields anchor these subgraphs: loading
 * restores each class and its array class with a loader, and the objects of a subgraph are
 * then ordinary objects to the collector, however they are reached. A class the JDK does not
 * have is skipped. The list is the set HotSpot archives subgraphs for (its heapShared.cpp);
 * a JDK that archives more would need it extended, and docs/design.md says how the crash
 * shows. Nothing is posted for these loads (the shim's own Java); the start-up replay
 * announces them with the other loaded classes.
 */
#include "dumps/heapdump.h"

#include <stdio.h>
#include <string.h>

#include "core/api.h"

static const char *const anchors[] = {
    "jdk.internal.math.FDBigInteger",
    "java.util.jar.Attributes$Name",
    "sun.util.locale.BaseLocale",
    "java.lang.Integer$IntegerCache",
    "java.lang.Long$LongCache",
    "java.lang.Byte$ByteCache",
    "java.lang.Short$ShortCache",
    "java.lang.Character$CharacterCache",
    "java.util.ImmutableCollections",
    "java.lang.ModuleLayer",
    "java.lang.module.Configuration",
    "jdk.internal.module.ArchivedModuleGraph",
    "jdk.internal.module.ArchivedBootLayer",
    "jdk.internal.loader.ArchivedClassLoaders",
};

/* Whether the process maps a CDS archive (a .jsa file): without one there is no archived
 * heap and nothing to load. */
static bool cds_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return true; /* cannot tell: loading a few JDK classes is harmless */
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        size_t n = strcspn(line, "\n");
        found = n >= 4 && memcmp(line + n - 4, ".jsa", 4) == 0;
    }
    fclose(f);
    return found;
}

void dumps_load_archive_anchors(JNIEnv *jni)
{
    if (!cds_mapped()) {
        log_debug("dumps: no CDS archive mapped: no dormant subgraphs to make safe");
        return;
    }
    if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        log_warn("dumps: no JNI frame to load the CDS archive's subgraph classes: a heap dump "
                 "may reach a dormant archived object");
        return;
    }
    jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
    static const char sig[] = "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;";
    jmethodID for_name = cls ? (*jni)->GetStaticMethodID(jni, cls, "forName", sig) : NULL;
    if (for_name == NULL) {
        (*jni)->ExceptionClear(jni);
        (*jni)->PopLocalFrame(jni, NULL);
        log_warn("dumps: Class.forName not found: the CDS archive's subgraph classes are not "
                 "loaded, and a heap dump may reach a dormant archived object");
        return;
    }
    int loaded = 0, absent = 0;
    for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
        jstring name = (*jni)->NewStringUTF(jni, anchors[i]);
        jobject c = name ? (*jni)->CallStaticObjectMethod(jni, cls, for_name, name, JNI_FALSE, NULL)
                         : NULL;
        if ((*jni)->ExceptionCheck(jni) || c == NULL) {
            (*jni)->ExceptionClear(jni);
            absent++;
            log_debug("dumps: %s is not in this JDK", anchors[i]);
        } else {
            loaded++;
        }
        if (c)
            (*jni)->DeleteLocalRef(jni, c);
        if (name)
            (*jni)->DeleteLocalRef(jni, name);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    log_info("dumps: %d classes anchoring the CDS archive's heap subgraphs loaded (%d not in "
             "this JDK)", loaded, absent);
}
