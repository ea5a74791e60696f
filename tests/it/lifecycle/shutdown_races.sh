#!/bin/bash
# shutdown_races.sh — the end of the VM racing the agent, through legacy-agents/racer.c and
# tests/java/Race.java (8 threads "race-N" calling, allocating and locking without pause,
# with METHOD_ENTRY/EXIT and OBJECT_ALLOC on and a handler that spins 100-200 us on each of
# their events, so they are mid-event whenever the VM goes down). shutdown.sh covers calls
# inside the JVM_SHUT_DOWN handler and one daemon; profiler_exit.sh covers ProfilerExit from
# JVM_INIT_DONE and from an idle VM. Here, each scenario 5 times, with a different exit code
# each time:
#  1. System.exit(N) while the race threads are mid-event (the agent sees them in their
#     handlers when main reaches aboutToExit).
#  2. The same with 4 agent daemon threads calling RawMonitorEnter/Exit, GetCallTrace,
#     GetCurrentThreadCpuTime and RequestEvent(THREAD_START / CLASS_LOAD) without pause,
#     before, during (they must get calls through while the handler runs, their requests
#     answered on them, as HotSpot answered them until disengage()) and after
#     JVM_SHUT_DOWN (they must never come back: checked from the agent's atexit handler,
#     once the VM is certainly past shutdown).
#  3. ProfilerExit(N) from a METHOD_ENTRY handler on a race thread.
#  4. ProfilerExit(N) from an agent thread, with 2 daemons calling JVMPI meanwhile.
#  5. ProfilerExit(N) inside the JVM_SHUT_DOWN handler of a System.exit(5): N wins.
# Every run: exit status N (so no hang: the run ends under its timeout), no hs_err file, no
# "racer: VIOLATION" (an event after JVM_SHUT_DOWN returned, an event on another thread
# during it, a handler still running elsewhere when it began, a parked call that came back,
# an event after ProfilerExit once the process was exiting) and no "racer: FAIL". The agent's
# JVM_SHUT_DOWN handler frees and poisons all its state, so a late touch would also crash.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
REPS=5
o=$WORK/out

common() { # what
  local what=$1
  if ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1; then bad "$what: the VM crashed (hs_err file)"; rm -f "$WORK"/hs_err_pid*.log
  else ok "$what: no hs_err file"; fi
  expect_nogrep "$o" '^racer: (VIOLATION|FAIL)' "$what: no violation"
  expect_grep "$o" '^racer: atexit .* after_exit_began=0 .* violations=0$' "$what: nothing came back once the process was exiting"
}

for i in $(seq 1 $REPS); do
  code=$((10 + i))
  w="exit mid-event #$i"
  run_java "$(shim_arg racer slow=200,atexit=100)" -cp "$CLASSES" Race 8 200 $code
  expect_rc $code
  expect_count "$o" '^racer: JVM_SHUT_DOWN race_events=' 1 "$w: JVM_SHUT_DOWN once"
  m=$(sed -n 's/^racer: JVM_SHUT_DOWN race_events=[0-9]* mid_event_at_exit=\([0-9-]*\)$/\1/p' "$o")
  if [ -n "$m" ] && [ "$m" -ge 1 ]; then ok "$w: $m race threads were in a handler when main called System.exit"
  else bad "$w: mid_event_at_exit=$m, expected >= 1"; show; fi
  expect_grep "$o" '^racer: JVM_SHUT_DOWN handler returns freed=[0-9]+ ' "$w: the handler freed the agent's state"
  common "$w"
done

for i in $(seq 1 $REPS); do
  code=$((20 + i))
  w="exit with daemons #$i"
  run_java "$(shim_arg racer slow=100,daemons=4,atexit=100)" -cp "$CLASSES" Race 8 200 $code
  expect_rc $code
  expect_count "$o" '^racer: JVM_SHUT_DOWN race_events=' 1 "$w: JVM_SHUT_DOWN once"
  d=$(sed -n 's/^racer: JVM_SHUT_DOWN handler returns .* daemon_calls_during=\([0-9]*\) .*/\1/p' "$o")
  if [ -n "$d" ] && [ "$d" -ge 1 ]; then ok "$w: the daemons got $d rounds of calls through during JVM_SHUT_DOWN"
  else bad "$w: daemon_calls_during=$d, expected >= 1"; show; fi
  common "$w"
done

for i in $(seq 1 $REPS); do
  code=$((30 + i))
  w="ProfilerExit in a METHOD_ENTRY handler #$i"
  run_java "$(shim_arg racer slow=100,after=300,atexit=100,pexit=handler:$code)" -cp "$CLASSES" Race 8 100 -1
  expect_rc $code
  expect_grep "$o" "^racer: calling ProfilerExit\\($code\\) in a METHOD_ENTRY handler on race-0 " "$w: called from the handler"
  expect_nogrep "$o" '^racer: JVM_SHUT_DOWN' "$w: no JVM_SHUT_DOWN"
  expect_nogrep "$o" '^race: no ProfilerExit came' "$w: the VM ended by ProfilerExit"
  common "$w"
done

for i in $(seq 1 $REPS); do
  code=$((40 + i))
  w="ProfilerExit from an agent thread #$i"
  run_java "$(shim_arg racer slow=100,daemons=2,after=1000,atexit=100,pexit=thread:$code)" -cp "$CLASSES" Race 8 100 -1
  expect_rc $code
  expect_grep "$o" "^racer: exiter calling ProfilerExit\\($code\\) after [0-9]+ race events" "$w: called from the thread"
  expect_nogrep "$o" '^racer: JVM_SHUT_DOWN' "$w: no JVM_SHUT_DOWN"
  common "$w"
done

for i in $(seq 1 $REPS); do
  code=$((50 + i))
  w="ProfilerExit inside JVM_SHUT_DOWN #$i"
  run_java "$(shim_arg racer slow=100,daemons=2,atexit=100,pexit=shutdown:$code)" -cp "$CLASSES" Race 8 200 5
  expect_rc $code
  expect_grep "$o" "^racer: calling ProfilerExit\\($code\\) in the JVM_SHUT_DOWN handler$" "$w: called in the handler"
  expect_nogrep "$o" '^racer: JVM_SHUT_DOWN handler returns' "$w: ProfilerExit did not return"
  common "$w"
done

finish
