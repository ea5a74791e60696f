#!/bin/bash
# jit_twice.sh — one COMPILED_METHOD_LOAD per compiled body, however many JVMTI agents
# listen. A native JVMTI agent (build/tools/libcmlgen.so, tests/tools/cmlgen.c) in the same
# JVM enables CompiledMethodLoad and calls GenerateEvents 6 times (JVMTI then posts every
# compiled method again, to every environment). The JIT-symbol agent jit_bodies
# (legacy-agents/jit_bodies.c) counts COMPILED_METHOD_LOAD per (method_id, code_addr) and
# fails on a second one, and on a method whose class it had no CLASS_LOAD for. Runs: the
# native agent before the shim and after it; and with the legacy agent enabling the event
# late, from a system thread while methods compile (the shim replays what was compiled).
# Workload tests/java/InvisHook.java (8 threads calling small methods).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
GEN="-agentpath:${ARCH_BUILD:-$ROOT/build}/tools/libcmlgen.so"

check() {
  expect_rc 0
  expect_grep "$o" '^InvisHook: calls=[1-9]' "$1: workload ran"
  expect_grep "$o" '^cmlgen: loads=[0-9]+ generates=[1-9]$' "$1: the JVMTI agent replayed compiled code (GenerateEvents)"
  expect_nogrep "$o" '^jit: FAIL' "$1: no duplicate COMPILED_METHOD_LOAD, every method's class defined first"
  expect_grep "$o" '^jit: done loads=([0-9]+) bodies=\1 dups=0 unknown_class=0 fails=0$' "$1: as many COMPILED_METHOD_LOAD as distinct bodies"
  # Under -Xint nothing is compiled: then neither agent hears of compiled code.
  local gl jl
  gl=$(sed -n 's/^cmlgen: loads=\([0-9]*\) .*/\1/p' "$o"); jl=$(sed -n 's/^jit: done loads=\([0-9]*\) .*/\1/p' "$o")
  if [ "${gl:-0}" -gt 0 ] && [ "${jl:-0}" -eq 0 ]; then bad "$1: the JVMTI agent saw compiled code, the JVMPI agent none"; fi
  echo "     $(grep -E '^(jit: done|cmlgen:)' "$o" | tr '\n' ' ')"
}

run_java "$GEN" "$(shim_arg jit_bodies)" -cp "$CLASSES" InvisHook 500
check "JVMTI agent first"
run_java "$(shim_arg jit_bodies)" "$GEN" -cp "$CLASSES" InvisHook 500
check "shim first"
run_java "$GEN" "$(shim_arg jit_bodies late)" -cp "$CLASSES" InvisHook 800
check "enabled late"
finish
