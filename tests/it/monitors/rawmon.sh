#!/bin/bash
# rawmon.sh — raw monitors and thread basics through the rawmon agent (see
# legacy-agents/rawmon.c): CreateSystemThread rules, contention events with the VM's copy of
# the name and the right id and thread, none for '_' names, reentrancy, Wait/NotifyAll,
# robustness against NULL/destroyed monitors, non-owner Exit, thread-local storage, CPU time,
# and that threads blocked in RawMonitorEnter for a second sleep (their CPU time stays low).
# Run twice: checks inside the JVM_INIT_DONE handler (sync), and on a system thread while
# main runs (async).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90

check_rawmon() {
  local o=$WORK/out
  expect_grep "$o" '^rawmon: done$' "agent finished its checks"
  expect_nogrep "$o" '^rawmon: FAIL' "no FAIL from the agent"
  expect_grep "$o" '^rawmon: onload create_system_thread rc=-1$' "CreateSystemThread in JVM_OnLoad -> JNI_ERR"
  expect_grep "$o" '^rawmon: create_system_thread prio=7 rc=-1$' "CreateSystemThread priority 7 -> JNI_ERR"
  local p
  for p in 1 5 10; do
    expect_grep "$o" "^rawmon: create_system_thread prio=$p rc=0 ran=yes arg=NULL newthread=yes name=rawmon-prio$p java_priority=$p daemon=yes\$" \
      "CreateSystemThread priority $p: f(NULL) on a new daemon thread"
  done
  local line e ed x b
  line=$(grep -E '^rawmon: contention mon_a ' "$o" | head -n1)
  e=$(echo "$line" | sed -n 's/.* enter=\([0-9]*\).*/\1/p')
  ed=$(echo "$line" | sed -n 's/.* entered=\([0-9]*\).*/\1/p')
  x=$(echo "$line" | sed -n 's/.* exit=\([0-9]*\).*/\1/p')
  b=$(echo "$line" | sed -n 's/.* blocked=\([0-9]*\).*/\1/p')
  echo "     mon_a: blocked=$b enter=$e entered=$ed exit=$x"
  if [ -n "$e" ] && [ "$e" -ge 1 ] && [ "$e" = "$ed" ]; then ok "mon_a: CONTENDED_ENTER = CONTENDED_ENTERED = $e >= 1"
  else bad "mon_a: enter=$e entered=$ed"; show; fi
  if [ -n "$x" ] && [ "$x" -ge 1 ]; then ok "mon_a: CONTENDED_EXIT = $x >= 1"; else bad "mon_a: exit=$x"; fi
  if [ -n "$b" ] && [ -n "$e" ] && [ "$e" -ge "$b" ]; then ok "mon_a: every blocked Enter ($b) posted CONTENDED_ENTER"; else bad "mon_a: blocked=$b enter=$e"; fi
  expect_grep "$o" '^rawmon: contention _silent rounds=20 blocked=[0-9]+ enter=0 entered=0 exit=0$' "_silent: no contention events"
  expect_grep "$o" '^rawmon: reentrancy entered_while_held_once=no entered_after_release=yes$' "reentrant Enter/Exit"
  expect_grep "$o" '^rawmon: nonowner_exit entered_while_owned=no entered_after_owner_exit=yes$' "Exit by a non-owner ignored"
  expect_grep "$o" '^rawmon: wait ms=100 elapsed=' "Wait(100) returned"
  expect_grep "$o" '^rawmon: wait ms=0 notified=yes ' "Wait(0) returned after NotifyAll"
  expect_grep "$o" '^rawmon: null monitor calls returned$' "NULL monitor ignored"
  expect_grep "$o" '^rawmon: destroyed monitor calls returned$' "destroyed monitor ignored"
  expect_grep "$o" '^rawmon: monitor after bad calls ok$' "monitors work after bad calls"
  local f
  for f in Enter Exit Wait NotifyAll Destroy; do
    expect_grep "$WORK/err" "RawMonitor$f.*NULL" "shim logged RawMonitor$f(NULL)"
    expect_grep "$WORK/err" "RawMonitor$f.*(destroyed|unknown|invalid)" "shim logged RawMonitor$f on a destroyed monitor"
  done
  expect_grep "$o" '^rawmon: tls initial=.* set=0x1234 got=0x1234$' "TLS round trip"
  expect_grep "$o" '^rawmon: tls other_thread initial=\(nil\) got=0x5678 seen_from_main=0x5678 main_still=0x1234$' "TLS per thread"
  expect_grep "$o" '^rawmon: tls set\(NULL\) ignored: get\(NULL\)=\(nil\) main=0x1234$' "TLS with NULL env"
  expect_grep "$o" '^rawmon: cpu busy100ms=' "GetCurrentThreadCpuTime measured"
  expect_grep "$o" '^rawmon: park held=1000ms ' "contenders blocked for a second (each used < 50 ms of CPU, or a FAIL line)"
  grep '^rawmon: park ' "$o" | sed 's/^/     /'
  expect_count "$o" '^rawmon: event JVM_SHUT_DOWN$' 1 "JVM_SHUT_DOWN once"
}

# 1. sync: everything inside the JVM_INIT_DONE handler, then main runs.
run_java "$(shim_arg rawmon)" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^rawmon: mode=sync$'
check_rawmon
expect_grep "$WORK/out" '^hello$' "application ran after the checks"
d=$(grep -n '^rawmon: done$' "$WORK/out" | head -n1 | cut -d: -f1)
h=$(grep -n '^hello$' "$WORK/out" | head -n1 | cut -d: -f1)
if [ -n "$d" ] && [ -n "$h" ] && [ "$d" -lt "$h" ]; then ok "main ran after the JVM_INIT_DONE handler returned"; else bad "done@$d hello@$h"; fi
cp "$WORK/out" "$WORK/out.sync"

# 2. async: on a system thread while main waits for jvmpishim.test.done.
run_java "$(shim_arg rawmon async)" -cp "$CLASSES" WaitProp jvmpishim.test.done 60000
expect_rc 0
expect_grep "$WORK/out" '^rawmon: mode=async$'
expect_grep "$WORK/out" '^prop jvmpishim.test.done=rawmon$' "agent signalled the application through JNI"
check_rawmon

finish
