#!/bin/bash
# exec_methods.sh — METHOD_ENTRY / METHOD_ENTRY2 / METHOD_EXIT against the ground truth of a
# workload (tests/java/ExecMethods.java, ExecTarget.java, ExecThrow.java) through the
# exec_methods agent (legacy-agents/exec_methods.c), which names methods through CLASS_LOAD
# and keeps a per-thread shadow stack in JVMPI thread-local storage. Three runs:
#   both    ENTRY2 + ENTRY + EXIT: every invocation is ENTRY2 then ENTRY on its thread
#   entry   ENTRY + EXIT only: no ENTRY2 at all
#   entry2  ENTRY2 + EXIT only: no ENTRY at all
# Each with both mechanisms: methods=bci (the default: classes rewritten with probes) and
# methods=jvmti (JVMTI method events).
# In each: exactly N entries and N exits of static ExecTarget.hit on main (WN on the thread
# exec-worker, none elsewhere), M of ExecTarget.inst; exactly K of each native method called
# from ExecMethods.natives (System.nanoTime, Object.hashCode, Thread.currentThread; with
# methods=bci these natives of classes loaded before the agent get no events, a documented
# gap) and K of the native Adler32.update(II)I (a class loaded later: with methods=bci its
# native gets a wrapper); an
# exception thrown by ExecThrow.thrower through mid and top and caught in throwLoop, T times
# on main and T on exec-worker: T entries and T exits of each of the three, the depth below
# top the same at every call; C constructions of each of four kinds that throw before `this`
# is initialized (tests/java/ExecCtor.java): every constructor entered gets its EXIT; no
# EXIT that is not of the innermost open frame, no negative
# depth on a thread that started in the agent's view (main, exec-worker), every thread that
# ended did so at depth 0. With ENTRY2: obj_id NULL for static methods, and for inst() one
# and the same id every time, equal to jobject2jobjectID of the receiver (read through JNI
# from ExecMethods.target in a handler) and to the ids ENTRY2 gave for ExecTarget.<init> and
# for Object.hashCode called on it.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out

# Does this JVM post JVMTI MethodEntry for Thread.currentThread? It is an interpreter
# intrinsic on some JVMs (JDK 25 posts nothing for it; JDK 17 does). That belongs to the
# JVM, not to its version number: a bare JVMTI agent built here counts MethodEntry of
# Thread.currentThread on the main thread of a program that calls it 1000 times.
probe_ct() {
  cat >"$WORK/ctprobe.c" <<'EOF'
/* ctprobe.c — count JVMTI MethodEntry events of java.lang.Thread.currentThread on the
 * VMInit thread (main); print the count at VMDeath. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
static jmethodID ct;
static long n;
static void JNICALL entry(jvmtiEnv *j, JNIEnv *e, jthread t, jmethodID m)
{
    (void)j; (void)e; (void)t;
    if (m == ct)
        n++;
}
static void JNICALL init(jvmtiEnv *j, JNIEnv *e, jthread t)
{
    jclass c = (*e)->FindClass(e, "java/lang/Thread");
    ct = (*e)->GetStaticMethodID(e, c, "currentThread", "()Ljava/lang/Thread;");
    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, t);
}
static void JNICALL death(jvmtiEnv *j, JNIEnv *e)
{
    (void)j; (void)e;
    printf("ctprobe: entries=%ld\n", n);
    fflush(stdout);
}
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *j = NULL;
    if ((*vm)->GetEnv(vm, (void **)&j, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_method_entry_events = 1;
    if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = init;
    cb.VMDeath = death;
    cb.MethodEntry = entry;
    (*j)->SetEventCallbacks(j, &cb, sizeof cb);
    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    return JNI_OK;
}
EOF
  cat >"$WORK/CtProbe.java" <<'EOF'
public class CtProbe {
    public static void main(String[] a) {
        int h = 0;
        for (int i = 0; i < 1000; i++)
            h += Thread.currentThread().hashCode() & 1;
        System.out.println("CtProbe: done " + (h >= 0));
    }
}
EOF
  ${CC:-cc} -shared -fPIC -Wall -Wextra -Werror -I"$JDK_HOME_T/include" -I"$JDK_HOME_T/include/linux" \
    -o "$WORK/libctprobe.so" "$WORK/ctprobe.c" 2>"$WORK/cc.err" || { bad "cannot build the probe agent"; cat "$WORK/cc.err"; return; }
  "$JDK_HOME_T/bin/javac" -d "$WORK" "$WORK/CtProbe.java" 2>"$WORK/javac.err" || { bad "cannot compile CtProbe"; cat "$WORK/javac.err"; return; }
  run_java "-agentpath:$WORK/libctprobe.so" -cp "$WORK" CtProbe
  CT_PROBE=$(sed -n 's/^ctprobe: entries=\([0-9]*\)$/\1/p' "$o")
  [ -n "$CT_PROBE" ] && grep -q '^CtProbe: done true$' "$o" && ok "probe: this JVM posts $CT_PROBE JVMTI MethodEntry events for 1000 calls of Thread.currentThread" ||
    { bad "the Thread.currentThread probe did not run"; show; }
}
CT_PROBE=""
probe_ct

# mline KIND NAME THREAD — "entry2=.. entry=.. exit=.." of a watched method (KIND method|native)
mline() { sed -n "s|^exec_methods: $1 $2 \(from=ExecMethods.natives \)\{0,1\}thread=$3 ||p" "$o" | head -n1; }

check_mode() { # MODE MECHANISM
  local mode=$1 mech=$2
  expect_rc 0
  expect_grep "$o" '^ExecMethods: done$' "workload finished"
  expect_grep "$o" "^exec_methods: loaded mode=$mode\$" "agent loaded in mode $mode"
  expect_nogrep "$o" '^exec_methods: FAIL' "no live violation reported by the agent"
  expect_grep "$o" '^exec_methods: totals .* fails=0$' "agent counted no violation"
  local f what
  while IFS='|' read -r f what; do
    expect_nogrep "$o" "^exec_methods: fails $f=" "$what"
  done <<'EOF'
order|ENTRY2 then ENTRY for every invocation, nothing in between on that thread
env|env_id is the thread the event runs on
nest|every EXIT is of the innermost open frame
negative|no negative depth on main or on threads started later
recv_static|ENTRY2 of static workload methods has obj_id NULL
recv_inst|ENTRY2 of inst() has a non-NULL obj_id, the same every time
no_thread|every thread announced by THREAD_START before its first method event
mode|no event type the agent did not enable
EOF
  local t
  t=$(sed -n 's/^ExecMethods: main hit=\([0-9]*\) inst=\([0-9]*\) natives=\([0-9]*\) caught=\([0-9]*\)$/\1 \2 \3 \4/p' "$o")
  read -r N M K T <<<"$t"
  t=$(sed -n 's/^ExecMethods: worker hit=\([0-9]*\) caught=\([0-9]*\)$/\1 \2/p' "$o")
  read -r WN WT <<<"$t"
  [ -n "${N:-}" ] && [ -n "${WN:-}" ] || { bad "no ground truth from the workload"; N=1 M=1 K=1 T=1 WN=1 WT=1; }
  expect_eq "$T" 1000 "exceptions caught on main (Java)"
  expect_eq "$WT" "$T" "exceptions caught on exec-worker (Java)"
  # cnt X: the expected "entry2=.. entry=.. exit=.." for X invocations in this mode
  cnt() { case $mode in both) echo "entry2=$1 entry=$1 exit=$1" ;; entry) echo "entry2=0 entry=$1 exit=$1" ;;
          entry2) echo "entry2=$1 entry=0 exit=$1" ;; esac; }
  expect_eq "$(mline method 'ExecTarget.hit(I)V' main)" "$(cnt "$N")" "static ExecTarget.hit on main"
  expect_eq "$(mline method 'ExecTarget.hit(I)V' worker)" "$(cnt "$WN")" "static ExecTarget.hit on exec-worker"
  expect_eq "$(mline method 'ExecTarget.hit(I)V' other)" "$(cnt 0)" "ExecTarget.hit on other threads"
  expect_eq "$(mline method 'ExecTarget.inst(I)V' main)" "$(cnt "$M")" "ExecTarget.inst on main"
  expect_eq "$(mline method 'ExecTarget.inst(I)V' worker)" "$(cnt 0)" "ExecTarget.inst on exec-worker"
  expect_eq "$(mline method 'ExecTarget.<init>(I)V' main)" "$(cnt 1)" "ExecTarget.<init> on main"
  expect_eq "$(mline method 'ExecMethods.natives()J' main)" "$(cnt 1)" "ExecMethods.natives on main"
  local kb=$K
  [ "$mech" = bci ] && kb=0 # natives of classes loaded before the agent: no wrapper (documented)
  expect_eq "$(mline native 'java.lang.System.nanoTime()J' main)" "$(cnt "$kb")" "native System.nanoTime from natives() ($mech)"
  expect_eq "$(mline native 'java.lang.Object.hashCode()I' main)" "$(cnt "$kb")" "native Object.hashCode from natives() ($mech)"
  expect_eq "$(mline method 'java.util.zip.Adler32.update(II)I' main)" "$(cnt "$K")" "native Adler32.update(II)I, class loaded late ($mech)"
  # Thread.currentThread is an interpreter intrinsic on some JVMs (JDK 25): HotSpot then
  # posts no JVMTI MethodEntry/MethodExit for it, as the bare JVMTI probe above measured
  # on this JVM; docs/mapping.md documents the gap. With methods=bci it is a native of a
  # class loaded before the agent: never reported.
  if [ "$mech" = bci ] || [ "${CT_PROBE:-0}" -lt 1000 ]; then want_ct=0; else want_ct=$K; fi
  expect_eq "$(mline native 'java.lang.Thread.currentThread()Ljava/lang/Thread;' main)" "$(cnt "$want_ct")" \
    "native Thread.currentThread from natives() (JVMTI reports intrinsics only on some JDKs)"
  local m th
  for m in top mid thrower; do
    for th in main worker; do
      expect_eq "$(mline method "ExecThrow.$m(I)I" $th)" "$(cnt "$T")" "ExecThrow.$m on $th (left by exception)"
    done
  done
  for th in main worker; do
    expect_eq "$(mline method 'ExecMethods.throwLoop()I' $th)" "$(cnt 1)" "ExecMethods.throwLoop on $th"
  done
  # constructors left by a throw before `this` was initialized: 4 kinds x C on main
  local C
  C=$(sed -n 's/^ExecMethods: ctors each=\([0-9]*\) caught=\([0-9]*\)$/\1 \2/p' "$o")
  [ -n "$C" ] || { bad "no constructor ground truth from the workload"; C="0 0"; }
  expect_eq "${C#* }" "$(( ${C%% *} * 4 ))" "constructor exceptions caught (Java)"
  C=${C%% *}
  expect_eq "$(mline method 'ExecCtor.<init>(I)V' main)" "$(cnt $((C * 3)))" \
    "ExecCtor(int): left by super(...)'s argument, by the superclass, and under this(...)"
  expect_eq "$(mline method 'ExecCtor.<init>(II)V' main)" "$(cnt "$C")" "ExecCtor(int,int): left from inside this(...)"
  expect_eq "$(mline method 'ExecCtor.<init>(Ljava/lang/String;)V' main)" "$(cnt "$C")" \
    "ExecCtor(String): left by this(...)'s argument"
  expect_eq "$(mline method 'ExecCtorBase.<init>(I)V' main)" "$(cnt $((C * 2)))" "ExecCtorBase: left by its own throw"
  expect_grep "$o" "^exec_methods: exc thread=main top_calls=$T top_depth=[0-9]+ varied=0\$" \
    "main: depth below ExecThrow.top the same at all $T calls and after each"
  expect_grep "$o" "^exec_methods: exc thread=exec-worker top_calls=$T top_depth=[0-9]+ varied=0\$" \
    "exec-worker: depth below ExecThrow.top the same at all $T calls and after each"
  expect_grep "$o" '^exec_methods: init thread=main depth=0 pending2=0$' "main has no open frame at JVM_INIT_DONE"
  expect_grep "$o" '^exec_methods: thread name=main cat=main strict=1 ' "main's depth checked from JVM_INIT_DONE on"
  expect_grep "$o" '^exec_methods: thread name=exec-worker cat=worker strict=1 lazy=0 ended=1 depth=0 end_depth=0 ' \
    "exec-worker: started after JVM_INIT_DONE, ended at depth 0"
  expect_nogrep "$o" '^exec_methods: thread .* ended=1 .* end_depth=(-|[1-9])' "every thread that ended did so at depth 0"
  expect_grep "$o" '^exec_methods: totals .* negative=0 ended_unbalanced=0 lazy_threads=0 ' \
    "totals: no negative depth, no ended thread unbalanced, no thread without THREAD_START"
  local tot e2 e
  tot=$(grep '^exec_methods: totals ' "$o")
  e2=$(echo "$tot" | sed -n 's/.* entry2=\([0-9]*\) .*/\1/p'); e=$(echo "$tot" | sed -n 's/.* entry=\([0-9]*\) .*/\1/p')
  r=$(grep '^exec_methods: receiver ' "$o")
  echo "     $tot"; echo "     $r"
  case $mode in
    both)
      expect_eq "$e2" "$e" "total ENTRY2 = total ENTRY"
      ;;
    entry)
      expect_eq "$e2" 0 "total ENTRY2 (not enabled)"
      ;;
    entry2)
      expect_eq "$e" 0 "total ENTRY (not enabled)"
      ;;
  esac
  if [ "$mode" = entry ]; then
    expect_grep "$o" '^exec_methods: receiver inst=\(nil\) .* jni=0x[0-9a-f]+ ' "checkReceiver ran (jobject2jobjectID of the receiver)"
  else
    expect_grep "$o" '^exec_methods: receiver inst=0x[0-9a-f]+ distinct_changes=0 ' "ENTRY2 of inst(): one non-NULL obj_id, the same all $M times"
    expect_grep "$o" '^exec_methods: receiver .* inst_is_jni=1 ' "ENTRY2 obj_id of inst() = jobject2jobjectID(receiver)"
    expect_grep "$o" '^exec_methods: receiver .* init_is_jni=1 ' "ENTRY2 obj_id of ExecTarget.<init> = the same id"
    [ "$mech" = jvmti ] && expect_grep "$o" '^exec_methods: receiver .* hashCode_other_ids=0 .* hash_is_jni=1$' "ENTRY2 obj_id of target.hashCode() (native) = the same id"
  fi
}

for mech in bci jvmti; do
  for mode in both entry entry2; do
    echo "--- methods=$mech, mode $mode"
    run_java "$(shim_arg exec_methods $mode "methods=$mech")" -cp "$CLASSES" ExecMethods
    check_mode $mode $mech
    cp "$o" "$WORK/out.$mech.$mode"; cp "$WORK/err" "$WORK/err.$mech.$mode"
  done
done

finish
