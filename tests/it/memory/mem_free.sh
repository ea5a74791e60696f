#!/bin/bash
# mem_free.sh — OBJECT_FREE, GC_START / GC_FINISH, DisableGC / EnableGC, OBJECT_MOVE and
# ARENA_DELETE through the mem_gc agent (legacy-agents/mem_gc.c, mode "free") and the
# workload tests/java/MemFree.java. The agent tracks every id OBJECT_ALLOC reports (from
# JVM_OnLoad on, start-up replay included), takes its lock in GC_START and releases it in
# GC_FINISH, and checks live: frees only inside GC_START..GC_FINISH on the bracket's thread,
# only for reported ids, never twice, never for a MemFree$Keep (reachable to the end);
# brackets balanced and not nested; gc_info used_objects > 0, used_object_space > 0,
# total_object_space >= used_object_space; no OBJECT_MOVE / ARENA_DELETE ever (EnableEvent
# of both returns JVMPI_SUCCESS). Against the workload's ground truth:
#  - after dropping N MemFree$Drop and two System.gc() with sleeps, all N were freed, no
#    Keep, and GC_FINISH used_objects fell by >= 0.9 N;
#  - between DisableGC (on the agent's thread) and EnableGC, while the workload dropped N3
#    MemFree$Late and ran System.gc() and slept 1 s, no GC_START and no OBJECT_FREE came;
#    after EnableGC all N3 were freed.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40
o=$WORK/out

run_java "$(shim_arg mem_gc free)" -cp "$CLASSES" MemFree
expect_rc 0
expect_grep "$o" '^MemFree: done$' "workload finished"
for e in CLASS_LOAD JVM_INIT_DONE JVM_SHUT_DOWN ARENA_NEW GC_START GC_FINISH OBJECT_FREE OBJECT_ALLOC; do
  expect_grep "$o" "^mem_gc: enable $e rc=0\$" "EnableEvent($e) = JVMPI_SUCCESS"
done
expect_grep "$o" '^mem_gc: enable OBJECT_MOVE rc=0$' "EnableEvent(OBJECT_MOVE) = JVMPI_SUCCESS"
expect_grep "$o" '^mem_gc: enable ARENA_DELETE rc=0$' "EnableEvent(ARENA_DELETE) = JVMPI_SUCCESS"

while IFS='|' read -r f what; do
  expect_nogrep "$o" "^mem_gc: fails $f=" "$what"
done <<'LIST'
gc_start_nested|GC_START never nested (each has its GC_FINISH before the next)
gc_finish_without_start|no GC_FINISH without a GC_START
free_outside_gc|every OBJECT_FREE between GC_START and GC_FINISH
free_other_thread|every OBJECT_FREE on the thread of its GC_START
free_unknown_id|no OBJECT_FREE for an id OBJECT_ALLOC never reported
free_twice|no id freed twice
free_of_live_object|no OBJECT_FREE for a MemFree$Keep (still reachable)
gc_info|GC_FINISH: used_objects > 0, used_object_space > 0, total_object_space >= used_object_space
object_move|no OBJECT_MOVE
arena_delete|no ARENA_DELETE
gc_start_while_disabled|no GC_START between DisableGC and EnableGC
free_while_disabled|no OBJECT_FREE between DisableGC and EnableGC
other|no other violation
LIST
# alloc_twice belongs to OBJECT_ALLOC (asserted by mem_alloc.sh); shown here for context.
grep '^mem_gc: fails alloc_twice=' "$o" | sed 's/^/     note (see mem_alloc.sh): /'

N=$(sed -n 's/^MemFree: allocated drop=\([0-9]*\) .*/\1/p' "$o")
K=$(sed -n 's/^MemFree: allocated .* keep=\([0-9]*\) .*/\1/p' "$o")
N3=$(sed -n 's/^MemFree: allocated .* late=\([0-9]*\)$/\1/p' "$o")
[ -n "$N" ] && [ -n "$K" ] && [ -n "$N3" ] || { bad "no ground truth from the workload"; N=1 K=1 N3=1; }
field() { echo "$1" | sed -n "s/.* $2=\(-\?[0-9]*\).*/\1/p"; }

l=$(grep '^mem_gc: before ' "$o")
echo "     $l"
expect_eq "$(field "$l" drop_alloc)/$(field "$l" keep_alloc)/$(field "$l" late_alloc)" "$N/$K/$N3" "OBJECT_ALLOC count of Drop/Keep/Late"
expect_eq "$(field "$l" drop_freed)" 0 "Drop objects freed while reachable"
if [ "$(field "$l" gcs)" -ge 1 ] 2>/dev/null; then ok "a GC_FINISH arrived after the first System.gc() (used_objects=$(field "$l" used_objects))"; else bad "no GC_FINISH after the first System.gc()"; fi

l=$(grep '^mem_gc: after gcs=' "$o")
echo "     $l"
expect_eq "$(field "$l" drop_freed)" "$N" "Drop objects freed after drop + 2 x System.gc()"
expect_eq "$(field "$l" keep_freed)" 0 "Keep objects freed"
d=$(sed -n 's/^mem_gc: after used_objects_drop=\(-\?[0-9]*\) .*/\1/p' "$o")
want=$(( N * 9 / 10 ))
if [ -n "$d" ] && [ "$d" -ge "$want" ]; then ok "GC_FINISH used_objects fell by $d >= 0.9 N = $want"; else bad "GC_FINISH used_objects fell by '$d', expected >= $want"; fi

expect_grep "$o" '^mem_gc: DisableGC returned$' "agent thread: DisableGC returned"
expect_grep "$o" '^mem_gc: window gc_starts=0 frees=0 late_freed=0 ' "DisableGC..EnableGC (System.gc() + 1 s inside): no GC_START, no OBJECT_FREE"
# The frees of the Late objects come after EnableGC, in a bracket.
e=$(grep -n '^mem_gc: calling EnableGC$' "$o" | head -n1 | cut -d: -f1)
g=$(awk -v from="${e:-0}" -v n="$N3" 'NR > from && /^mem_gc: gc n=/ { split($0, a, "frees="); split(a[2], b, " "); if (b[1] + 0 >= n) { print NR; exit } }' "$o")
if [ -n "$e" ] && [ -n "$g" ]; then ok "a bracket with >= $N3 frees followed EnableGC (line $g > $e)"; else bad "no bracket with >= $N3 frees after EnableGC (EnableGC at line '$e')"; show; fi
l=$(grep '^mem_gc: done ' "$o")
echo "     $l"
expect_eq "$(field "$l" late_freed)" "$N3" "Late objects freed after EnableGC"
expect_eq "$(field "$l" drop_freed)/$(field "$l" keep_freed)" "$N/0" "Drop/Keep freed at the end"

l=$(grep '^mem_gc: shutdown ' "$o")
echo "     $l"
s=$(field "$l" gc_starts); f=$(field "$l" gc_finishes)
if [ -n "$s" ] && [ "$s" = "$f" ] && [ "$s" -ge 3 ]; then ok "GC_START = GC_FINISH = $s (>= 3 System.gc())"; else bad "GC_START $s, GC_FINISH $f"; fi
expect_eq "$(field "$l" in_gc)" 0 "no bracket open at JVM_SHUT_DOWN"
expect_eq "$(field "$l" keep_freed)" 0 "Keep objects freed by JVM_SHUT_DOWN"
expect_eq "$(field "$l" object_move)/$(field "$l" arena_delete)" "0/0" "OBJECT_MOVE/ARENA_DELETE events"
finish
