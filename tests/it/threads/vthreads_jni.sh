#!/bin/bash
# vthreads_jni.sh — an agent that uses the event's env_id as the JNIEnv * of its handler,
# the JDK 1.2 way (legacy-agents/vt_jnienv.c), on 400 virtual threads of
# tests/java/VtWork.java that block in the middle of methods, where the JVM has virtual
# threads (probed: Thread.ofVirtual), and on 400 platform threads everywhere (the control).
# Issue 27's promise: JNI calls through env_id act on the thread the event is about. In
# every THREAD_START posted on the new thread and every METHOD_ENTRY of VtWork.leaf (each
# worker calls it before and after it blocks, so after a remount too), through
# (*env_id)->...: the thread object of GetThreadObject(env_id) answers getName() with
# THREAD_START's name, Thread.currentThread() is that object, no exception is left
# pending; Thread.isVirtual(), where the JVM has it, says what VtWork made. Every leaf call
# is checked (VtWork's counts, per thread).
source "$ROOT/tests/it/lib.sh"
source "$ROOT/tests/it/threads/vtwork.bash"
VT_AGENT=vt_jnienv
N=400

# check_run MODE N VIRTUAL — VIRTUAL: what isVirtual() must say of the workers (1, 0, or -
# where the JVM has no Thread.isVirtual).
check_run() {
  local mode=$1 n=$2 v=$3 l="$1: "
  vt_done "$mode" "$n"
  vt_no_fails "$l"
  expect_nogrep "$VT_OUT" "^$VT_AGENT: fails [a-z_]+=[1-9]" "${l}every kind of check held (no_thread_object, thread_id, name, current, exception, local_frame, unknown_env)"
  vt_same_threads "${l}leaf entries checked through env_id per thread, isVirtual()=$v" "s/^\(name=.*\) body=.* leaf=\([0-9]*\)\$/\1 leaf=\2 virtual=$v/"
  vt_expect_field leaf_checks "$(vt_sum leaf)" "${l}JNI checks in METHOD_ENTRY of leaf (VtWork's leaf calls)"
  local sc
  sc=$(vt_field start_checks)
  if [ -n "$sc" ] && [ "$sc" -ge "$n" ]; then ok "${l}$sc THREAD_STARTs checked through env_id (at least the $n workers')"
  else bad "${l}THREAD_STARTs checked through env_id: $sc, fewer than the $n workers"; fi
}

vt_run vt_jnienv virtual $N
if vt_no_virtual; then
  expect_rc 0
  ok "this JVM has no Thread.ofVirtual: no virtual-thread checks here, the platform control below"
  pv=-
else
  check_run virtual $N 1
  pv=0
fi

vt_run vt_jnienv platform $N
# A JVM without virtual threads has no Thread.isVirtual either (the agent looks it up).
[ "$pv" = - ] || grep -q "^$VT_AGENT: thread .* virtual=-\$" "$VT_OUT" && pv=-
check_run platform $N "$pv"
finish
