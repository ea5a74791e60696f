#!/bin/bash
# mem_handed.sh — OBJECT_FREE for every id an agent was handed, not only for objects
# OBJECT_ALLOC reported (tests/java/MemHanded.java, agent legacy-agents/mem_handed.c, which
# enables OBJECT_FREE and GC_START/GC_FINISH but never OBJECT_ALLOC). For each way JVMPI
# hands out object ids — jobject2jobjectID (and the requested OBJECT_ALLOC), MONITOR_WAIT
# objects, METHOD_ENTRY2 receivers, heap dumps at levels 0, 1 and 2, OBJECT_DUMP,
# MONITOR_DUMP, GetThreadObject with the requested THREAD_START — the workload drops the
# objects whose ids the agent collected, keeps one of some, runs System.gc() twice and
# exits. Each dropped object must have had exactly one OBJECT_FREE by JVM_SHUT_DOWN; no
# OBJECT_FREE for an id never handed out; no event or dump names an id after its
# OBJECT_FREE; frees only inside GC_START..GC_FINISH.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
o=$WORK/out

run_java "$(shim_arg mem_handed)" -cp "$CLASSES" MemHanded
expect_rc 0
expect_grep "$o" '^MemHanded: done$' "workload finished"
l=$(grep '^MemHanded: handed ' "$o")
N=$(echo "$l" | sed -n 's/.* n=\([0-9]*\) .*/\1/p')
MD=$(echo "$l" | sed -n 's/.* mdump=\([0-9]*\) .*/\1/p')
T=$(echo "$l" | sed -n 's/.* threads=\([0-9]*\)$/\1/p')
[ -n "$N" ] && [ -n "$MD" ] && [ -n "$T" ] || { bad "no ground truth from the workload"; N=-9 MD=-9 T=-9; }
expect_nogrep "$o" '^mem_handed: FAIL' "no FAIL from the agent (free of an id never handed out, twice, outside a bracket, use after free)"
expect_grep "$o" '^mem_handed: shutdown ids=[0-9]+ fails=0$' "the agent finished with no failure"
src() { sed -n "s/^mem_handed: src $1 handed=\([0-9]*\) freed=\([0-9]*\)$/\1\/\2/p" "$o"; }
# One object of jni, mon, entry2 and odump stays reachable; D1 and D2 have one more
# instance, kept, than the N dropped.
expect_eq "$(src jni)" "$N/$((N - 1))" "jobject2jobjectID ids: handed/freed"
expect_eq "$(src mon)" "$N/$((N - 1))" "MONITOR_WAIT objects: handed/freed"
expect_eq "$(src entry2)" "$N/$((N - 1))" "METHOD_ENTRY2 receivers: handed/freed"
expect_eq "$(src dump1)" "$((N + 1))/$N" "level-1 HEAP_DUMP instances of D1: handed/freed"
expect_eq "$(src dump2)" "$((N + 1))/$N" "level-2 HEAP_DUMP instances of D2: handed/freed"
expect_eq "$(src odump)" "$N/$((N - 1))" "OBJECT_DUMP array elements: handed/freed"
expect_eq "$(src mdump)" "$MD/$MD" "MONITOR_DUMP objects of the holding thread: handed/freed"
expect_eq "$(src thread)" "$T/$T" "GetThreadObject / requested THREAD_START thread objects: handed/freed"
d0=$(src dump0); f0=${d0#*/}
if [ -n "$f0" ] && [ "$f0" -ge "$N" ]; then ok "level-0 HEAP_DUMP ids freed: $f0 >= $N (the dropped D0)"; else bad "level-0 HEAP_DUMP ids freed: '$f0', expected >= $N"; fi
finish
