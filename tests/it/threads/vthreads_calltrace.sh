#!/bin/bash
# vthreads_calltrace.sh — a sampling profiler (legacy-agents/vt_calltrace.c) that calls
# GetCallTrace and GetThreadLocalStorage on env_ids from events, on 400 virtual threads of
# tests/java/VtWork.java that block in the middle of methods, where the JVM has virtual
# threads (probed: Thread.ofVirtual), and on 400 platform threads everywhere (the control).
# VtWork's method structure (Task.run -> body -> a middle method -> leaf, each a direct
# call) says what every stack must look like. Issue 27's promises:
#  - in each METHOD_ENTRY of VtWork.leaf, GetCallTrace of the event's own env_id gives leaf,
#    a middle method, body and Task.run on top, and no carrier frame (ForkJoinPool,
#    ForkJoinWorkerThread, CarrierThread) below them; GetThreadLocalStorage(env_id) gives
#    the record its THREAD_START stored; every leaf call is checked so (VtWork's counts, per
#    thread);
#  - a sampler thread that suspends workers (SuspendThread), asks GetThreadStatus,
#    GetThreadLocalStorage and GetCallTrace and resumes them finds, for every worker inside
#    Task.run, mounted or not: a valid status, its own record, and a trace of the same
#    structure holding Task.run; and it catches workers blocked inside a middle method
#    (a virtual thread there is unmounted: its own frames, not its carrier's).
source "$ROOT/tests/it/lib.sh"
source "$ROOT/tests/it/threads/vtwork.bash"
VT_AGENT=vt_calltrace
N=400

check_run() {
  local mode=$1 n=$2 l="$1: "
  vt_done "$mode" "$n"
  vt_no_fails "$l"
  expect_nogrep "$VT_OUT" "^$VT_AGENT: fails [a-z_]+=[1-9]" "${l}every kind of check held (self, self_tls, status, tls, empty, no_run, chain, carrier)"
  vt_same_threads "${l}leaf entries checked per thread" 's/^\(name=.*\) body=.* leaf=\([0-9]*\)$/\1 leaf=\2/'
  vt_expect_field self_checks "$(vt_sum leaf)" "${l}own-trace checks in METHOD_ENTRY of leaf (VtWork's leaf calls)"
  local s sr sb
  s=$(vt_field samples); sr=$(vt_field samples_with_run); sb=$(vt_field samples_blocked)
  if [ -n "$s" ] && [ "$s" -gt 0 ]; then ok "${l}the sampler suspended and traced workers $s times"
  else bad "${l}the sampler took no sample ($s)"; fi
  expect_eq "$sr" "$s" "${l}samples whose trace holds Task.run"
  if [ -n "$sb" ] && [ "$sb" -gt 0 ]; then
    ok "${l}$sb samples caught a worker blocked inside a middle method ($(sed -n "s/^$VT_AGENT: blocked //p" "$VT_OUT"))"
  else bad "${l}no sample caught a worker blocked inside a middle method ($sb)"; fi
}

vt_run vt_calltrace virtual $N
if vt_no_virtual; then
  expect_rc 0
  ok "this JVM has no Thread.ofVirtual: no virtual-thread checks here, the platform control below"
else
  check_run virtual $N
fi

vt_run vt_calltrace platform $N
check_run platform $N
finish
