#!/bin/bash
# mem_live.sh — frees of a collection reach the agent before anything that comes after it
# (tests/java/MemLive.java, agent legacy-agents/mem_live.c, an HPROF-style live-object
# counter: OBJECT_ALLOC minus OBJECT_FREE per class, one raw monitor held GC_START..GC_FINISH).
# L MemLive$Marker stay reachable; three times K more are allocated, dropped and collected
# by System.gc(), and right after each collection the agent is asked for its figures:
#  - a level-0 HEAP_DUMP requested in a CLASS_LOAD handler the program triggers at once;
#  - a level-0 HEAP_DUMP requested in the DATA_DUMP_REQUEST handler (the program sends
#    itself SIGQUIT with kill(1));
#  - the JVM_SHUT_DOWN handler (main returns right after the collection).
# Each time the agent's live count of markers must be exactly L; in the dumps, the markers
# named must be exactly L, and no id the dump names may have had its OBJECT_FREE already.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out

run_java "$(shim_arg mem_live)" -cp "$CLASSES" MemLive
expect_rc 0
L=$(sed -n 's/^MemLive: keep=\([0-9]*\) .*/\1/p' "$o")
[ -n "$L" ] || { bad "no ground truth from the workload"; L=-1; }
expect_grep "$o" '^MemLive: exiting ' "workload finished"
expect_grep "$o" '^MemLive: phase sigquit dumped=true$' "the DATA_DUMP_REQUEST handler ran"
expect_nogrep "$o" '^mem_live: FAIL' "no FAIL from the agent"
for why in classload sigquit; do
  l=$(grep "^mem_live: dump why=$why " "$o" | head -n1)
  echo "     $l"
  expect_eq "$(echo "$l" | sed -n 's/.* live_markers=\([0-9]*\) dump_markers=\([0-9]*\) freed_in_dump=\([0-9]*\).*/\1\/\2\/\3/p')" \
    "$L/$L/0" "$why dump: live markers / markers in the dump / freed ids in the dump"
done
l=$(grep '^mem_live: shutdown ' "$o")
echo "     $l"
expect_eq "$(echo "$l" | sed -n 's/.* live_markers=\([0-9]*\) in_gc=\([0-9]*\)$/\1\/\2/p')" "$L/0" \
  "JVM_SHUT_DOWN: live markers / bracket open"
finish
