#!/bin/bash
# client_gc.sh — a game's JNI library gets JVMPI itself (legacy-agents/gchold.c: System.loadLibrary,
# GetJavaVM + GetEnv(JVMPI_VERSION_1_1) in an init() native, a static JVMPI_Interface pointer)
# and four Java threads call DisableGC/EnableGC around each frame's allocation while the main
# thread forces collections (tests/java/GcApp.java).
# Runs: -agentpath with no legacy=; beside a legacy= agent with report= (the library's report
# goes to PATH.1, and counts its DisableGC calls).
# Checked: every frame ran (the library's count = the workload's); the library got GC_START and
# GC_FINISH in pairs, at least one, and never a GC_START while a thread had GC disabled; no
# JVMPI warning from the JVM, no shim warning.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
check_run() { # LABEL
  local l=$1 frames s f
  expect_rc 0
  expect_nogrep "$o" 'FAIL' "$l: no violation"
  expect_grep "$o" '^gchold: init version=0x10000003$' "$l: GetEnv(JVMPI_VERSION_1_1) gave an interface"
  expect_nogrep "$o" 'JVMPI.*no longer supported' "$l: the JVM printed no JVMPI warning"
  expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "$l: no shim error or warning"
  frames=$(sed -n 's/^GcApp: frames=\([0-9]*\) .*/\1/p' "$o")
  expect_eq "$(sed -n 's/^gchold: summary frames=\([0-9]*\) .*/\1/p' "$o")" "${frames:-none}" "$l: frames the library held GC for"
  s=$(sed -n 's/^gchold: summary .* gc_start=\([0-9]*\) .*/\1/p' "$o")
  f=$(sed -n 's/^gchold: summary .* gc_finish=\([0-9]*\) .*/\1/p' "$o")
  [ "${s:-0}" -ge 1 ] && ok "$l: $s GC_START events" || bad "$l: no GC_START"
  expect_eq "$f" "$s" "$l: GC_FINISH count (one per GC_START)"
  expect_grep "$o" '^gchold: summary .* starts_in_frame=0 ' "$l: no GC_START while a thread had GC disabled"
}
LIB="-Djava.library.path=$AGENTS"
run_java "-agentpath:$SHIM" $LIB -cp "$CLASSES" GcApp
check_run "no legacy="
run_java "$(shim_arg lifecycle "" "report=$WORK/r.txt")" $LIB -cp "$CLASSES" GcApp
check_run "beside a legacy= agent"
frames=$(sed -n 's/^GcApp: frames=\([0-9]*\) .*/\1/p' "$o")
expect_grep "$WORK/r.txt" '^agent: +.*/liblifecycle\.so \(agent 0; 2 agents' "beside a legacy= agent: the agent's report at PATH"
expect_grep "$WORK/r.txt.1" '^asked: +GetEnv\(JVMPI_VERSION_\*\) from a native method on thread "main" ' "beside a legacy= agent: the library's report at PATH.1 says how it asked"
expect_grep "$WORK/r.txt.1" "^  DisableGC +$frames " "beside a legacy= agent: the library's report counts its $frames DisableGC calls"
finish
