#!/bin/bash
# profiler_exit.sh — ProfilerExit(N) ends the VM with status N at once, without JVM_SHUT_DOWN
# (HotSpot's vm_exit skipped before_exit), from the JVM_INIT_DONE handler and from a system
# thread; an ordinary System.exit(3) gives status 3 and exactly one JVM_SHUT_DOWN.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }

# 1. ProfilerExit(7) inside JVM_INIT_DONE.
run_java "$(shim_arg lifecycle exit=7)" -cp "$CLASSES" Hello
expect_rc 7
expect_grep "$WORK/out" '^lifecycle: calling ProfilerExit\(7\) in JVM_INIT_DONE$' "ProfilerExit(7) called"
expect_nogrep "$WORK/out" '^hello$' "application did not run"
expect_nogrep "$WORK/out" 'event JVM_SHUT_DOWN' "no JVM_SHUT_DOWN after ProfilerExit"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"

# 2. ProfilerExit(0) is an exit with status 0, still before main.
run_java "$(shim_arg lifecycle exit=0)" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^lifecycle: calling ProfilerExit\(0\)' "ProfilerExit(0) called"
expect_nogrep "$WORK/out" '^hello$' "application did not run"
expect_nogrep "$WORK/out" 'event JVM_SHUT_DOWN' "no JVM_SHUT_DOWN after ProfilerExit(0)"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"

# 3. ProfilerExit(9) from a system thread while main sleeps 5 s: prompt exit.
t0=$(ms_now)
run_java "$(shim_arg lifecycle threadexit=9)" -cp "$CLASSES" Sleep 5000
el=$(( $(ms_now) - t0 ))
expect_rc 9
if [ "$el" -lt 4500 ]; then ok "exited after ${el} ms (< 4500)"; else bad "exit took ${el} ms, main slept 5000"; fi
expect_grep "$WORK/out" '^lifecycle: CreateSystemThread\(exiter\) rc=0$' "exiter thread created"
expect_grep "$WORK/out" '^lifecycle: exiter calling ProfilerExit\(9\)$' "ProfilerExit(9) called from the thread"
expect_nogrep "$WORK/out" '^slept$' "main did not finish"
expect_nogrep "$WORK/out" 'event JVM_SHUT_DOWN' "no JVM_SHUT_DOWN after ProfilerExit"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"

# 4. System.exit(3): status 3, JVM_SHUT_DOWN once, on the exiting thread.
run_java "$(shim_arg lifecycle)" -cp "$CLASSES" Exit 3
expect_rc 3
expect_grep "$WORK/out" '^exiting 3$'
expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=2 env=0x[0-9a-f]+ current=yes$' "JVM_SHUT_DOWN on the current thread"
expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"

finish
