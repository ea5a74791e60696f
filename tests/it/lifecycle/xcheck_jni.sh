#!/bin/bash
# xcheck_jni.sh — the shim's JNI use under -Xcheck:jni: representative scenarios, each run
# with -Xcheck:jni, must produce no JNI warning ("WARNING in native method", "FATAL ERROR in
# native method", "WARNING: JNI local refs: N, exceeds capacity: M"; HotSpot prints them on
# stdout) and must still do their work. The agents used here are JNI-clean themselves, so a
# warning is the shim's (docs/reliability.md, "-Xcheck:jni", lists the test agents that are
# not, and what the shim got wrong before).
#   two agents   multi (legacy-agents/multi.c) A: OBJECT_ALLOC, GC_START/FINISH, OBJECT_FREE,
#                RunGC, HEAP_DUMP levels 0/1/2, OBJECT_DUMP, MONITOR_DUMP; B: METHOD_ENTRY,
#                METHOD_ENTRY2, the Java monitor events; both: THREAD_START/END, CLASS_LOAD,
#                TLS, JNI in a handler (tests/java/MultiWork.java: a contended enter, a wait)
#   methods      exec_methods both: ENTRY2/ENTRY/EXIT, exceptions (ExecMethods)
#   unload       ident_unload: CLASS_LOAD_HOOK and CLASS_UNLOAD of 3 classes (IdentUnload 3)
#   frees        mem_gc free: OBJECT_FREE inside GC brackets at volume (MemFree)
#   jnirefs      mem_jniref: the replaced JNI function table (MemRefs)
#   compiled     exec_compiled onload: COMPILED_METHOD_LOAD with line tables (ExecHot)
#   exit         lifecycle exit=7: ProfilerExit inside JVM_INIT_DONE, the halt path
# A control run first proves the check is on and seen: a plain JVMTI agent built here makes
# two JNI mistakes at VMInit, and the warnings must be found: the unchecked exception always,
# the local reference overflow where this JVM reports one at all (probed, not keyed on a
# version: some JDK 17 and 25 builds report none).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
o=$WORK/out
PAT='WARNING in native method|FATAL ERROR in native method|WARNING: JNI local refs'

no_warnings() { # WHAT
  local n
  n=$(cat "$o" "$WORK/err" | grep -cE "$PAT")
  if [ "$n" -eq 0 ]; then ok "$1: no JNI warning under -Xcheck:jni"
  else bad "$1: $n JNI warning lines under -Xcheck:jni"; cat "$o" "$WORK/err" | grep -E -A6 "$PAT" | head -20 | sed 's/^/     > /'; fi
}

echo "== control: a JVMTI agent that misuses JNI"
cat >"$WORK/misuse.c" <<'EOF'
/* misuse.c — at VMInit: 40 local references in a callback frame (16 are guaranteed), then
 * a JNI call with an exception pending check not made. -Xcheck:jni must report both. */
#include <jvmti.h>
#include <string.h>
static void JNICALL vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti; (void)thread;
    for (int i = 0; i < 40; i++)
        (*jni)->NewStringUTF(jni, "x");
    jclass c = (*jni)->FindClass(jni, "java/lang/Integer");
    jmethodID m = (*jni)->GetStaticMethodID(jni, c, "parseInt", "(Ljava/lang/String;)I");
    (*jni)->CallStaticIntMethod(jni, c, m, (*jni)->NewStringUTF(jni, "not a number"));
    (*jni)->FindClass(jni, "java/lang/String"); /* no ExceptionCheck before this call */
    (*jni)->ExceptionClear(jni);
}
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = vm_init;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    return JNI_OK;
}
EOF
if ${CC:-cc} -shared -fPIC -Wall -Wextra -Werror -I"$JDK_HOME_T/include" -I"$JDK_HOME_T/include/linux" \
     -o "$WORK/libmisuse.so" "$WORK/misuse.c" 2>"$WORK/cc.err"; then
  run_java -Xcheck:jni "-agentpath:$WORK/libmisuse.so" -cp "$CLASSES" Hello
  expect_rc 0
  # Whether -Xcheck:jni reports a local reference overflow belongs to the JVM build, not to
  # its version number: 17.0.15 did, 17.0.21 and 25 do not. This control learns it from the
  # run: it either sees the report, or notes that this JVM gives none; the unchecked
  # exception below then proves alone that -Xcheck:jni is on and its warnings are seen.
  if grep -Eq '^WARNING: JNI local refs: [0-9]+, exceeds capacity: [0-9]+$' "$o"; then
    ok "control: the local reference overflow is reported (this JVM checks local reference capacity)"
  else
    echo "     (probed: this JVM's -Xcheck:jni reports no local reference overflow; the unchecked exception must prove the check is on)"
  fi
  expect_grep "$o" '^WARNING in native method: JNI call made without checking exceptions when required to from CallStaticIntMethod' \
    "control: the unchecked exception is reported"
else
  bad "cannot build the control agent"; cat "$WORK/cc.err"
fi

echo "== two agents: allocation, GC, dumps, methods, monitors, threads, classes"
run_java -Xcheck:jni "-agentpath:$SHIM=legacy=$AGENTS/libmulti.so:name=A,alloc,gc,dumps" \
  "-agentpath:$SHIM=legacy=$AGENTS/libmulti.so:name=B,entry,entry2,mon" -cp "$CLASSES" MultiWork
expect_rc 0
expect_grep "$o" '^MultiWork: done known=42$' "workload finished"
expect_grep "$o" '^MultiWork: monitors contended=1 waits=1$' "workload made its contended enter and wait"
expect_nogrep "$o" '^multi\[[AB]\]: FAIL' "no violation seen by either agent"
expect_grep "$o" '^multi\[A\]: dump level=0 rc=0 records=[0-9]+ known=1 found=5 of 5$' "A: level-0 heap dump with the 5 targets"
expect_grep "$o" '^multi\[A\]: dumps heap1 rc=0 bytes=[1-9][0-9]* heap2 rc=0 bytes=[1-9][0-9]* object rc=0 bytes=[1-9][0-9]* monitor rc=0 bytes=[1-9][0-9]*$' \
  "A: heap dumps at levels 1 and 2, OBJECT_DUMP and MONITOR_DUMP delivered"
sumv() { sed -n "s/^multi\[$1\]: summary.* $2=\([0-9]*\).*/\\1/p" "$o"; }
for x in "A alloc" "A gc_start" "A gc_finish" "A obj_free" "B entry" "B entry2" "B mon_enter" "B mon_entered" "B mon_exit" "B mon_wait" "B mon_waited"; do
  set -- $x
  [ "$(sumv "$1" "$2")" -gt 0 ] 2>/dev/null && ok "$1: $2 events arrived ($(sumv "$1" "$2"))" || bad "$1: no $2 events"
done
no_warnings "two agents"

echo "== methods"
run_java -Xcheck:jni "$(shim_arg exec_methods both)" -cp "$CLASSES" ExecMethods
expect_rc 0
expect_grep "$o" '^exec_methods: totals entry2=[1-9][0-9]* entry=[1-9][0-9]* exit=[1-9][0-9]* .* fails=0$' "method events arrived, the agent counted no failure"
no_warnings "methods"

echo "== unload"
run_java -Xcheck:jni "$(shim_arg ident_unload)" -cp "$CLASSES" IdentUnload 3
expect_rc 0
expect_grep "$o" '^ident_unload: summary .* unloadee_unloads=3 fails=0$' "3 classes unloaded, no failure"
no_warnings "unload"

echo "== frees"
run_java -Xcheck:jni "$(shim_arg mem_gc free)" -cp "$CLASSES" MemFree
expect_rc 0
expect_grep "$o" '^mem_gc: done gcs=[1-9][0-9]* .* drop_freed=[1-9][0-9]* ' "GC brackets with OBJECT_FREE arrived"
expect_nogrep "$o" '^mem_gc: FAIL' "no failure from the agent"
no_warnings "frees"

echo "== jnirefs"
run_java -Xcheck:jni "$(shim_arg mem_jniref)" -cp "$CLASSES" MemRefs
expect_rc 0
expect_grep "$o" '^mem_jniref: shutdown .* fails=0$' "the agent counted no failure"
no_warnings "jnirefs"

echo "== compiled"
run_java -Xcheck:jni "$(shim_arg exec_compiled onload)" -cp "$CLASSES" ExecHot
expect_rc 0
expect_grep "$o" '^exec_compiled: shutdown loads=[1-9][0-9]* .* fails=0$' "COMPILED_METHOD_LOAD events arrived, no failure"
no_warnings "compiled"

echo "== exit"
run_java -Xcheck:jni "$(shim_arg lifecycle exit=7)" -cp "$CLASSES" Hello
expect_rc 7
expect_nogrep "$o" '^hello$' "the application did not run"
no_warnings "exit"

finish
