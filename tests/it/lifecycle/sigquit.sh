#!/bin/bash
# sigquit.sh — SIGQUIT (kill -QUIT) makes the VM print its thread dump and post
# DATA_DUMP_REQUEST then DATA_RESET_REQUEST, once each, on the current thread (HotSpot posted
# both back to back from the signal); the application keeps running and ends normally with
# one JVM_SHUT_DOWN after them. A second run disables DATA_DUMP_REQUEST in JVM_INIT_DONE:
# then only DATA_RESET_REQUEST arrives.
source "$ROOT/tests/it/lib.sh"

# run_sigquit AGENT_OPTIONS — run Sleep 3000 under the lifecycle agent, send one SIGQUIT
# once main runs. java runs in the background (not under timeout(1), so the signal goes to
# the JVM itself), with a watchdog.
run_sigquit() {
  "$JAVA" -Xshare:auto "$(shim_arg lifecycle "$1")" -cp "$CLASSES" Sleep 3000 >"$WORK/out" 2>"$WORK/err" &
  local jpid=$! wd started=no
  ( sleep 60; kill -9 "$jpid" 2>/dev/null ) &
  wd=$!
  for _ in $(seq 1 300); do
    if grep -q '^sleeping' "$WORK/out" 2>/dev/null; then started=yes; break; fi
    kill -0 "$jpid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$started" = yes ]; then ok "application started"; else bad "application did not start"; fi
  sleep 1
  if kill -QUIT "$jpid" 2>/dev/null; then ok "SIGQUIT sent"; else bad "could not send SIGQUIT"; fi
  wait "$jpid"
  RC=$?
  kill "$wd" 2>/dev/null; wait "$wd" 2>/dev/null
  echo "+ java $(shim_arg lifecycle "$1") Sleep 3000, SIGQUIT after 1 s -> rc=$RC"
}

# 1. Both request events enabled.
run_sigquit ""
expect_rc 0
expect_grep "$WORK/out" '^slept$' "application finished normally"
expect_grep "$WORK/out" 'Full thread dump' "the VM printed its thread dump"
expect_count "$WORK/out" '^lifecycle: event DATA_DUMP_REQUEST ' 1 "DATA_DUMP_REQUEST once"
expect_count "$WORK/out" '^lifecycle: event DATA_RESET_REQUEST ' 1 "DATA_RESET_REQUEST once"
expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
expect_grep "$WORK/out" '^lifecycle: event JVM_INIT_DONE seq=1 .*current=yes$' "JVM_INIT_DONE first"
expect_grep "$WORK/out" '^lifecycle: event DATA_DUMP_REQUEST seq=2 env=0x[0-9a-f]+ current=yes$' "DATA_DUMP_REQUEST second, current thread"
expect_grep "$WORK/out" '^lifecycle: event DATA_RESET_REQUEST seq=3 env=0x[0-9a-f]+ current=yes$' "DATA_RESET_REQUEST third, current thread"
expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=4 env=0x[0-9a-f]+ current=yes$' "JVM_SHUT_DOWN last"
d=$(sed -n 's/^lifecycle: event DATA_DUMP_REQUEST seq=[0-9]* env=\(0x[0-9a-f]*\).*/\1/p' "$WORK/out")
r=$(sed -n 's/^lifecycle: event DATA_RESET_REQUEST seq=[0-9]* env=\(0x[0-9a-f]*\).*/\1/p' "$WORK/out")
expect_eq "$r" "$d" "DATA_RESET_REQUEST thread (same as DATA_DUMP_REQUEST)"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"

# 2. DATA_DUMP_REQUEST disabled again in JVM_INIT_DONE.
run_sigquit nodump
expect_rc 0
expect_grep "$WORK/out" '^slept$' "application finished normally"
expect_grep "$WORK/out" '^lifecycle: nodump DisableEvent\(DATA_DUMP_REQUEST\) rc=0$' "DisableEvent(DATA_DUMP_REQUEST) in JVM_INIT_DONE"
expect_count "$WORK/out" '^lifecycle: event DATA_DUMP_REQUEST ' 0 "no DATA_DUMP_REQUEST once disabled"
expect_count "$WORK/out" '^lifecycle: event DATA_RESET_REQUEST ' 1 "DATA_RESET_REQUEST once"
expect_grep "$WORK/out" '^lifecycle: event DATA_RESET_REQUEST seq=2 env=0x[0-9a-f]+ current=yes$' "DATA_RESET_REQUEST second, current thread"
expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=3 ' "JVM_SHUT_DOWN last"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"
finish
