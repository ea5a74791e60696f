#!/bin/bash
# exec_compiled.sh — COMPILED_METHOD_LOAD / COMPILED_METHOD_UNLOAD through the exec_compiled
# agent (legacy-agents/exec_compiled.c); workload tests/java/ExecHot.java spins in
# ExecHot.spin for 3 s (compiled by C1 and C2). Two runs:
#   onload  enabled in JVM_OnLoad: spin's compilations arrive live, with code_addr set,
#           code_size > 0, a non-empty line table whose every line lies in spin's
#           [start_lineno, end_lineno] from CLASS_LOAD and every offset in [0, code_size)
#   late    enabled by the agent's system thread only after the workload stopped calling
#           spin: the replay during EnableEvent (on that thread) must still deliver spin,
#           with the same validity. (Code compiled while the event was off carries only the
#           safepoint entries of its debug info: HotSpot's address-location map is sparse
#           then, so no minimum size is asked of a replayed table.)
# In both: every COMPILED_METHOD_LOAD names a method a CLASS_LOAD defined before, none has
# code_addr NULL or code_size <= 0 or a bad table, no offset outside the code; spin's
# start_lineno / end_lineno are the lines of its first and last statement in the source;
# a COMPILED_METHOD_UNLOAD, if any arrives, names a known method (not required to arrive).
# VM modes (tests/run.sh --modes): under -Xcomp, C1 would inline spin into main, compiled
# before it first runs, so spin is kept from being inlined (in every mode: it is what the
# test looks at). Under -Xint nothing of the workload is compiled: only the checks that hold
# for every COMPILED_METHOD_LOAD (adapters may still come) are made.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
NOINL="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,ExecHot::spin"
INT=0; [ "${VM_MODE:-default}" = int ] && INT=1
o=$WORK/out
src=$ROOT/tests/java/ExecHot.java
S=$(grep -n '// SPIN-FIRST$' "$src" | cut -d: -f1)
E=$(grep -n '// SPIN-LAST$' "$src" | cut -d: -f1)

check_common() { # MODE
  expect_rc 0
  expect_grep "$o" '^ExecHot: done$' "workload finished"
  expect_grep "$o" "^exec_compiled: loaded mode=$1\$" "agent loaded in mode $1"
  expect_nogrep "$o" '^exec_compiled: FAIL' "no live violation reported by the agent"
  expect_grep "$o" "^exec_compiled: spin defined start_lineno=$S end_lineno=$E\$" \
    "CLASS_LOAD: spin's start_lineno/end_lineno = its first/last statement ($S, $E)"
  local s
  s=$(grep '^exec_compiled: summary ' "$o")
  echo "     $s"
  v() { echo "$s" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
  if [ "$INT" = 1 ]; then echo "     under -Xint: $(v loads) COMPILED_METHOD_LOADs (adapters only)"
  elif [ "$(v loads)" -gt 0 ] 2>/dev/null; then ok "$(v loads) COMPILED_METHOD_LOADs"; else bad "no COMPILED_METHOD_LOAD at all"; fi
  expect_eq "$(v unknown)" 0 "loads of a method no CLASS_LOAD defined before"
  expect_eq "$(v null_addr)" 0 "loads with code_addr NULL"
  expect_eq "$(v bad_size)" 0 "loads with code_size <= 0"
  expect_eq "$(v bad_table)" 0 "loads with a bad lineno_table"
  expect_eq "$(v bad_offsets)" 0 "line-table offsets outside [0, code_size) (all methods)"
  expect_eq "$(v fails)" 0 "violations counted by the agent"
  echo "     lines outside the method's [start_lineno, end_lineno] in other methods (info): $(v lines_out_of_range) in $(v methods_with_lines_out_of_range) methods"
  grep '^exec_compiled: lines_out_of_range sample ' "$o" | sed 's/^/     /'
  if [ "$(v unloads)" -gt 0 ] 2>/dev/null; then
    expect_eq "$(v unload_unknown)" 0 "COMPILED_METHOD_UNLOADs ($(v unloads)) of an unknown method"
    echo "     unloads whose code address (in compiled_method_load.code_addr) was loaded for that method: $(v unload_addr_known) of $(v unloads)"
  else
    echo "     no COMPILED_METHOD_UNLOAD arrived (not required)"
  fi
  [ "$INT" = 1 ] && return
  expect_nogrep "$o" '^exec_compiled: spin load .* code_addr=NULL' "every spin load has code_addr set"
  expect_nogrep "$o" '^exec_compiled: spin load .* code_size=(0|-)' "every spin load has code_size > 0"
  expect_nogrep "$o" '^exec_compiled: spin load .* bad_offsets=[1-9]' "every spin table offset in [0, code_size)"
  expect_nogrep "$o" '^exec_compiled: spin load .* bad_lines=[1-9]' "every spin table line in [$S, $E]"
  expect_grep "$o" "^exec_compiled: spin lines start=$S end=$E loads=[1-9][0-9]* .* bad_offsets=0 bad_lines=0\$" "spin: at least one COMPILED_METHOD_LOAD, all tables valid"
  grep '^exec_compiled: spin load ' "$o" | sed 's/^/     /'
}

# ---- 1. enabled in JVM_OnLoad ----------------------------------------------------------
# shellcheck disable=SC2086 # NOINL is a list of options
run_java $NOINL "$(shim_arg exec_compiled onload)" -cp "$CLASSES" ExecHot
check_common onload
[ "$INT" = 1 ] || {
expect_grep "$o" '^exec_compiled: spin lines .* live=[1-9]' "spin's compilations delivered live"
expect_grep "$o" "^exec_compiled: spin load via=live code_addr=set code_size=[1-9][0-9]* table=[1-9][0-9]* min_line=$S " \
  "a live spin load with a non-empty line table starting at line $S (bci 0)"
}
cp "$o" "$WORK/out.onload"; cp "$WORK/err" "$WORK/err.onload"

# ---- 2. enabled late, from a system thread, after spin stopped running ----------------
# shellcheck disable=SC2086 # NOINL is a list of options
run_java $NOINL "$(shim_arg exec_compiled late)" -cp "$CLASSES" ExecHot late
check_common late
expect_grep "$o" '^exec_compiled: init startup_loads=0$' "nothing before enabling"
[ "$INT" = 1 ] || {
expect_grep "$o" '^exec_compiled: enable from system thread COMPILED_METHOD_LOAD rc=0 COMPILED_METHOD_UNLOAD rc=0 replayed=[1-9][0-9]* spin_replayed=[1-9][0-9]*$' \
  "EnableEvent(COMPILED_METHOD_LOAD) late: SUCCESS, compiled methods replayed during the call, spin among them"
expect_grep "$o" '^exec_compiled: spin lines .* replay=[1-9]' "spin delivered by the replay (on the enabling thread)"
}
cp "$o" "$WORK/out.late"; cp "$WORK/err" "$WORK/err.late"

finish
