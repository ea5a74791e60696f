#!/bin/bash
# dump_definer.sh — a heap dump asked for while another thread is inside its CLASS_LOAD
# (tests/java/DumpDefiner.java, agent legacy-agents/dump_definer.c, HPROF-style: one lock,
# held around RequestEvent(HEAP_DUMP) and taken in the CLASS_LOAD handler). The loader
# thread defines DumpDefiner$Late, and Late's CLASS_LOAD handler waits for the lock the
# requesting thread holds: the dump must not wait for that thread (on HotSpot it went
# ahead), and Late's CLASS_LOAD must come after it, on the loader thread.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out

run_java "$(shim_arg dump_definer)" -cp "$CLASSES" DumpDefiner
expect_rc 0
expect_grep "$o" '^DumpDefiner: done$' "workload finished (no deadlock)"
expect_nogrep "$o" '^dump_definer: FAIL' "no FAIL from the agent"
expect_grep "$o" '^dump_definer: dump records=[1-9][0-9]* late_waiting=1$' \
  "the dump was delivered while Late's CLASS_LOAD handler waited for the agent's lock"
expect_grep "$o" '^dump_definer: late class_load after_dump=1$' \
  "Late's CLASS_LOAD was delivered after the dump"
finish
