#!/bin/bash
# dump_strict.sh — heap dumps as a strict reader of the time reads them
# (legacy-agents/dump_strict.c, workload tests/java/DumpStrict.java): a switch over exactly
# the record kinds HotSpot emitted, fatal on any other (reference-behavior.md §4.3: roots
# JNI_GLOBAL, JNI_LOCAL, JAVA_FRAME, NATIVE_STACK, STICKY_CLASS, MONITOR_USED; no
# THREAD_OBJ, UNKNOWN or THREAD_BLOCK), record lengths from CLASS_LOAD facts only, and the
# records of the workload's objects checked byte by byte: a Point with eight fields over
# two classes, its class dump (super, interfaces, statics), an object array, an int[], and
# the mirror int.class as an instance of java.lang.Class (levels 1 and 2) or a
# NORMAL_OBJECT (level 0). Run with checkdumps, which must find every dump well-formed.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out

run_java "$(shim_arg dump_strict "" "checkdumps,log=info")" -cp "$CLASSES" DumpStrict
expect_rc 0
expect_grep "$o" '^DumpStrict: done ' "workload finished"
expect_grep "$o" '^dump_strict: done fails=0$' "the reader finished with no failure"
expect_nogrep "$o" '^dump_strict: FAIL' "no FAIL from the strict reader"
expect_grep "$o" '^dump_strict: level 0 .* int_class=1$' "level 0: int.class once, as NORMAL_OBJECT"
for l in 1 2; do
  expect_grep "$o" "^dump_strict: level $l .* point=1 point_class=1 arr=1 ints=1 int_class=1\$" \
    "level $l: Point, its class, the arrays and int.class each dumped once"
  expect_grep "$o" "^dump_strict: level $l records=[0-9]+ roots=[1-9][0-9]* " "level $l: roots present"
done
expect_count "$WORK/err" 'checkdumps: HEAP_DUMP level [012]: [0-9]+ bytes, well-formed' 3 "checkdumps: the three dumps well-formed"
expect_nogrep "$WORK/err" 'malformed' "checkdumps: nothing malformed"
finish
