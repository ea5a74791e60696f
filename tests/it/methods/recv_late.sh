#!/bin/bash
# recv_late.sh — a receiver named again after the agent switched CLASS_LOAD on comes after
# its class's CLASS_LOAD (legacy-agents/recv_late.c against tests/java/RecvLate.java).
#
# The agent enables METHOD_ENTRY2 only, learns each receiver's class_id by
# RequestEvent(OBJECT_ALLOC), and once 8 receivers have had 1 000 ENTRY2s each (the
# workload's) enables CLASS_LOAD from its handler. The workload's 4 threads call an inherited method on 4 receivers each,
# so the receivers' classes (RecvLate$R1..R4) are named by the receivers alone. The shim
# keeps, per thread, the receivers whose class every listening agent was told of, and
# skips the class for them: this is what must not skip a class once an agent starts to
# listen. Checked: no FAIL; after the switch, ENTRY2s of known receivers were judged, among
# them the workload's, and the workload's 4 receiver classes were announced.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120

run_java "-agentpath:$SHIM=legacy=$AGENTS/librecv_late.so:after=1000" -cp "$CLASSES" RecvLate 4 60000
o=$WORK/out
expect_rc 0
expect_grep "$o" '^RecvLate: done threads=4 calls=60000 ' "the workload finished"
expect_grep "$o" '^recv_late: CLASS_LOAD enabled once 8 receivers had 1000 ENTRY2s each' "CLASS_LOAD switched on from the ENTRY2 handler"
expect_nogrep "$o" '^recv_late: FAIL' "no FAIL from the agent"
expect_grep "$o" '^recv_late: summary phase1=[0-9]+ checked=[0-9]{5,} workload_checked=[0-9]{5,} classes=[0-9]+ workload_classes=4 receivers=[0-9]+ fails=0$' \
  "after the switch, every receiver's class announced before its ENTRY2 (the workload's 4 among them)"
finish
