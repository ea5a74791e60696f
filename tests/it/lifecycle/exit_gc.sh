#!/bin/bash
# exit_gc.sh — a collection at the very end of a program, bracketed as the VM ends: the
# bracket the exiting thread posts in the worker's name (memory/gc.c) comes after a
# THREAD_START of the worker, when the worker posted no bracket before (it is announced by
# its own events otherwise). tests/java/GcAtEnd.java ends with System.gc(); rec_tracer
# (OBJECT_ALLOC/FREE, GC, threads) records it, three runs: `jvmpitrace check` finds the
# contract held in each (no event names a thread without its THREAD_START), every run has
# its GC_START, and the runs whose bracket named the worker from another thread are counted
# (on JDK 25, where the launcher's thread ends first, all of them were).
source "$ROOT/tests/it/lib.sh"
T=$ROOT/build/jvmpitrace
at_exit=0
for r in 1 2 3; do
  rec=$WORK/exit$r.jvmpirec
  run_java "$(shim_arg rec_tracer "" "record=$rec")" -cp "$CLASSES" GcAtEnd
  expect_rc 0
  expect_grep "$WORK/out" '^rec_tracer: done .* fails=0$' "run $r: the tracer finished"
  "$T" check "$rec" >"$WORK/check$r" 2>&1
  if [ $? -eq 0 ]; then ok "run $r: jvmpitrace check: the contract held"; else bad "run $r: jvmpitrace check"; show "$WORK/check$r"; fi
  "$T" print "$rec" --event=THREAD_START,GC_START --no-calls >"$WORK/print$r" 2>&1
  expect_grep "$WORK/print$r" '\] GC_START' "run $r: the collection was bracketed"
  # The worker's THREAD_START posted by another thread shows the worker as its env.
  if grep -Eq '^#[0-9]+ \[[^]]*\] THREAD_START env=JVMPI shim worker ' "$WORK/print$r"; then
    at_exit=$((at_exit + 1))
  fi
done
echo "     runs whose worker was announced by the exiting thread: $at_exit of 3"
finish
