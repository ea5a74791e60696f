#!/bin/bash
# ids_wrap — i386 only: 32-bit object ids through the wrap of their space (core/idspace.c).
# JVMPISHIM_ID_START starts the ids 8191 ids before the top of the 32-bit space, so the
# mem_alloc agent (OBJECT_ALLOC from JVM_OnLoad, every object replayed and allocated) goes
# through the wrap: the shim collects the live ids first (its log says how many), then
# issues ids from 0x80000 again. The agent's own checks must all hold across it (no NULL
# id, no object reported twice, every class defined before use), and more objects must be
# reported than there were ids before the top. On x86-64 (41-bit ids) there is no wrap to test: skipped.
source "$ROOT/tests/it/lib.sh"
[ "${ID_BYTES:-8}" = 4 ] || skip "x86-64 ids are 41 bits: no wrap to test"
export JAVA_TIMEOUT=120
o=$WORK/out
JVMPISHIM_ID_START=0xFFFF0000 run_java "$(shim_arg mem_alloc onload log=info)" -cp "$CLASSES" MemAlloc
expect_rc 0
expect_grep "$WORK/err" 'ids: JVMPISHIM_ID_START: the first id is 0xffff0000' "the ids start 8191 before the top"
expect_grep "$WORK/err" 'ids: the 32-bit id space wraps soon: [0-9]+ ids are live and will not be reissued \(epoch 1\)' \
  "the live ids were collected before the wrap"
expect_nogrep "$WORK/err" 'id space is used up|could not be collected' "no object went without an id"
expect_grep "$o" '^MemAlloc: done$' "workload finished"
expect_nogrep "$o" '^mem_alloc: FAIL' "no violation reported by the agent"
expect_grep "$o" '^mem_alloc: totals .* fails=0$' "the agent counted no violation (NULL id, an object reported twice, a class not defined)"
n=$(sed -n 's/^mem_alloc: totals unrequested=\([0-9]*\) .*/\1/p' "$o")
if [ -n "$n" ] && [ "$n" -gt 8191 ]; then ok "$n objects reported: the ids wrapped"; else bad "objects reported: '$n', want more than 8191"; fi
finish
