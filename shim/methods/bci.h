/* bci.h — method and instruction events by bytecode instrumentation (bci.c). */
#ifndef JVMPISHIM_BCI_H
#define JVMPISHIM_BCI_H

#include "classes/classes.h"
#include "core/shim.h"

/* Agent_OnLoad / Agent_OnAttach, after the main env has its capabilities: create the
 * retransformation-capable env. Returns false if this JVM cannot rewrite classes (then the
 * method events fall back to JVMTI MethodEntry/MethodExit, see methods.c). */
bool bci_init(void);
bool bci_available(void);
/* VMInit (or attach), before any JVM_OnLoad: define the hook class and bind its natives. */
bool bci_start(JNIEnv *jni);
/* The event mask changed: instrument or restore the loaded classes as the enabled method
 * and instruction events now need. Safe from any thread. */
void bci_update(void);
/* Is m one of the hook methods? (Stack traces hide their frame.) */
bool bci_is_hook_method(jmethodID m);
/* The probe class java.lang.JvmpiShimHook (a global ref), or NULL: never shown to agents
 * (CLASS_LOAD, COMPILED_METHOD_LOAD, dumps). */
jclass bci_hook_class(void);
/* How many RetransformClasses calls have returned: a class's constant pool is renumbered
 * by one (dumps/classextras.c keeps entries by index). */
uint64_t bci_retransform_count(void);
/* Shutdown: hooks become no-ops. */
void bci_stop(void);

#endif
