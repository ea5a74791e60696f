#!/bin/bash
# shutdown.sh — JVMPI calls made inside the JVM_SHUT_DOWN handler still work (HotSpot
# disengaged only after the handler), and an agent daemon thread that keeps calling JVMPI
# after shutdown is parked: it never returns into agent code whose state the handler freed,
# and the VM still exits promptly with the right status.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }

check_shutcalls() {
  expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
  expect_grep "$WORK/out" '^lifecycle: shutcalls DisableEvent\(DATA_DUMP_REQUEST\) rc=0$' "DisableEvent works in the handler"
  expect_grep "$WORK/out" '^lifecycle: shutcalls RawMonitorCreate ok$' "RawMonitorCreate works in the handler"
  expect_grep "$WORK/out" '^lifecycle: shutcalls RawMonitorEnter/Exit/Destroy returned$' "raw monitor calls return in the handler"
  expect_grep "$WORK/out" '^lifecycle: shutcalls GetCurrentThreadCpuTime ok ' "GetCurrentThreadCpuTime works in the handler"
  expect_grep "$WORK/out" '^lifecycle: shutcalls done$'
  expect_grep "$WORK/out" '^lifecycle: JVM_SHUT_DOWN handler returns$'
  expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"
}

# 1. shutcalls, normal end of main.
run_java "$(shim_arg lifecycle shutcalls)" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$'
check_shutcalls

# 2. shutcalls, System.exit(5).
run_java "$(shim_arg lifecycle shutcalls)" -cp "$CLASSES" Exit 5
expect_rc 5
check_shutcalls

# 3. daemon thread hammering JVMPI through shutdown (normal end of main).
t0=$(ms_now)
run_java "$(shim_arg lifecycle daemon)" -cp "$CLASSES" Sleep 500
el=$(( $(ms_now) - t0 ))
expect_rc 0
if [ "$el" -lt 10000 ]; then ok "exited after ${el} ms"; else bad "exit took ${el} ms (daemon blocked the exit?)"; fi
expect_grep "$WORK/out" '^slept$'
expect_grep "$WORK/out" '^lifecycle: CreateSystemThread\(lifecycle-daemon\) rc=0$' "daemon created"
expect_grep "$WORK/out" '^lifecycle: daemon running \(50 iterations\)$' "daemon ran"
expect_grep "$WORK/out" '^lifecycle: daemon state freed after [0-9]+ iterations$' "handler freed the daemon state"
expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL (daemon never came back after shutdown)"

# 4. the same with System.exit(4).
t0=$(ms_now)
run_java "$(shim_arg lifecycle daemon)" -cp "$CLASSES" Exit 4
el=$(( $(ms_now) - t0 ))
expect_rc 4
if [ "$el" -lt 10000 ]; then ok "exited after ${el} ms"; else bad "exit took ${el} ms"; fi
expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL (daemon never came back after shutdown)"

finish
