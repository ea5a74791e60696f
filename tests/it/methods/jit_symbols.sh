#!/bin/bash
# jit_symbols.sh — every COMPILED_METHOD_LOAD's class is defined first, through the
# JIT-symbol agent legacy-agents/jit_symbols.c (workload tests/java/CovPair.java: 8 threads
# defining classes through loaders of their own at once).
#
# The agent looks the class GetMethodClass gives for each compiled method up in the table its
# CLASS_LOAD handler fills, and calls abort() on a miss, as JIT-symbol agents did. Under
# -Xcomp (the c1 mode of tests/run.sh) methods are compiled before they first run, during the
# start-up announcement too, so a class must be defined whatever thread needs it first.
# Checks: exit 0 (no abort), no ASSERT line, the workload ran, and the agent named at least
# one compiled method (under -Xint: adapters at most), every one it was given.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=${JAVA_TIMEOUT:-180}
o=$WORK/out

run_java "$(shim_arg jit_symbols)" -cp "$CLASSES" CovPair
expect_rc 0
expect_nogrep "$o" '^jit_symbols: ASSERT' "no compiled method of a class no CLASS_LOAD defined"
expect_grep "$o" '^CovPair: done$' "workload finished"
expect_grep "$o" '^jit_symbols: loaded$' "agent loaded"
s=$(grep '^jit_symbols: summary ' "$o")
echo "     $s"
v() { echo "$s" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
if [ "${VM_MODE:-default}" = int ]; then
  # -Xint still compiles native-method and method-handle adapters on some JDKs.
  echo "     under -Xint: $(v compiled) COMPILED_METHOD_LOADs (adapters only)"
elif [ "$(v compiled)" -gt 0 ] 2>/dev/null; then ok "$(v compiled) COMPILED_METHOD_LOADs ($(v startup) before JVM_INIT_DONE)"; else bad "no COMPILED_METHOD_LOAD"; fi
if [ "$(v classes)" -gt 100 ] 2>/dev/null; then ok "$(v classes) classes defined by CLASS_LOAD"; else bad "classes=$(v classes)"; fi
expect_eq "$(v named)" "$(v compiled)" "compiled methods named through GetMethodClass and CLASS_LOAD"
finish
