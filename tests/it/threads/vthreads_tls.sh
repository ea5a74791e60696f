#!/bin/bash
# vthreads_tls.sh — a per-thread table profiler (legacy-agents/vt_tls.c: its record of each
# thread made at THREAD_START and kept in SetThreadLocalStorage, read back with
# GetThreadLocalStorage in every event) on 400 virtual threads of tests/java/VtWork.java
# that block in the middle of methods, where the JVM has virtual threads (probed:
# Thread.ofVirtual), and on 400 platform threads everywhere (the control). Issue 27's
# promises for thread-local storage and the events that name a thread:
#  - every event finds in GetThreadLocalStorage(env_id) the record that env's THREAD_START
#    stored, the same as the agent's table holds for env_id: never none, never another
#    env's, never that of a thread that has ended (a record following a reused env), and a
#    new thread's env starts with none;
#  - the storage follows the thread across unmount and remount: the method counts kept in
#    each record are exactly VtWork's, per thread (names included, "" for unnamed ones);
#  - monitor events name the thread they happen on: each worker's MONITOR_WAIT and
#    MONITOR_WAITED inside VtWork.waiting equal its calls of Object.wait (VtWork's total),
#    its contended ENTERs its ENTEREDs (and the synchronized block is contended);
#  - GetCurrentThreadCpuTime never goes back within one thread's events;
#  - the CLASS_LOAD of VtWork$Once names the thread that loaded it (vt-0 / pt-0);
#  - no thread but the workers (no carrier) gets an event of VtWork's methods.
source "$ROOT/tests/it/lib.sh"
source "$ROOT/tests/it/threads/vtwork.bash"
VT_AGENT=vt_tls
N=400

check_run() {
  local mode=$1 n=$2 l="$1: "
  vt_done "$mode" "$n"
  vt_no_fails "$l"
  expect_nogrep "$VT_OUT" "^$VT_AGENT: fails [a-z_]+=[1-9]" "${l}every kind of check held (no_record, other_env, reused, stale_start, table, set, cpu_back, waits)"
  vt_expect_field workers "$n" "${l}workers (records that entered VtWork\$Task.run)"
  vt_expect_field workers_ended "$n" "${l}workers whose THREAD_END found their record"
  vt_same_threads "${l}method entries counted in each thread's own record"
  local w
  w=$(vt_sum waiting)
  vt_expect_field worker_monitor_wait "$w" "${l}MONITOR_WAITs in the workers' records, inside VtWork.waiting (VtWork's Object.wait calls)"
  vt_expect_field worker_monitor_waited "$w" "${l}MONITOR_WAITEDs in the workers' records, inside VtWork.waiting"
  local ce
  ce=$(vt_field worker_contended_enter)
  vt_expect_field worker_contended_entered "$ce" "${l}contended ENTERED = ENTER in the workers' records"
  if [ -n "$ce" ] && [ "$ce" -gt 0 ]; then ok "${l}$ce contended enters, in the workers' records"
  else bad "${l}no MONITOR_CONTENDED_ENTER in any worker's record ($ce)"; fi
  vt_expect_field nonworker_workload_entries 0 "${l}no other thread got an entry of VtWork's methods"
  local on
  on=$(sed -n 's/^VtWork: loaded VtWork\$Once on=\(.*\)$/\1/p' "$VT_OUT")
  expect_grep "$VT_OUT" "^$VT_AGENT: CLASS_LOAD VtWork\\\$Once on=$on\$" "${l}CLASS_LOAD of VtWork\$Once names the thread that loaded it ($on)"
}

vt_run vt_tls virtual $N
if vt_no_virtual; then
  expect_rc 0
  ok "this JVM has no Thread.ofVirtual: no virtual-thread checks here, the platform control below"
else
  check_run virtual $N
fi

vt_run vt_tls platform $N
check_run platform $N
finish
