#!/bin/bash
# invis_gc.sh — the shim's own Java work produces no JVMPI event, and every collection gets
# its GC bracket. The invis_gc agent (legacy-agents/invis_gc.c) keeps HPROF's one global
# lock: GC_START enters it, GC_FINISH leaves it, and OBJECT_ALLOC, OBJECT_FREE, CLASS_LOAD,
# THREAD_START/END enter it. tests/java/InvisGc.java starts 8 threads that load classes and
# allocate while main calls System.gc() N=3 times; its marker class makes the agent call
# RunGC once from the CLASS_LOAD handler and twice from a CreateSystemThread thread (M=3).
# Checked: no OBJECT_ALLOC/CLASS_LOAD/THREAD_START on the bracket thread inside a bracket,
# no handler waited > 3 s for the lock (and the agent's watchdog never saw a wait > 5 s),
# brackets alternate, the agent's RunGC calls all returned, and the agent saw one bracket per
# collection the JVM ran: at least C1 - C0 brackets (the collections GarbageCollectorMXBean
# counted during main), at most the pauses the JVM's own GC log (-Xlog:gc) records from start
# to exit (a collection the 8 threads cause after main read C1 gets its bracket too; one the
# shim runs itself, when OBJECT_ALLOC is enabled late, has none).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
N=3; M=3
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9-]*\).*/\1/p"; }

t0=$(date +%s)
rm -f "$WORK/gc.log"
run_java "-Xlog:gc:file=$WORK/gc.log" "$(shim_arg invis_gc "status=$WORK/brackets")" -cp "$CLASSES" InvisGc $N $M "$WORK/brackets"
echo "     $(( $(date +%s) - t0 )) s"
if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then bad "VM did not exit within ${JAVA_TIMEOUT}s: deadlock?"; show; fi
expect_rc 0
expect_nogrep "$o" '^invis_gc: FAIL' "the agent saw no violation (no table event on the bracket thread inside a bracket, no wait > 3 s)"
expect_nogrep "$WORK/err" 'jvmpishim: warn' "no shim warning"
jl=$(grep '^InvisGc: gcs_at_main=' "$o"); echo "     $jl"
sl=$(grep '^invis_gc: shutdown ' "$o"); echo "     $sl"
c0=$(field "$jl" gcs_at_main); c1=$(field "$jl" gcs_at_end)
b=$(field "$sl" brackets); r=$(field "$sl" rungc)
expect_eq "$r" "$M" "RunGC calls the agent made"
if [ -n "$c0" ] && [ -n "$c1" ] && [ $((c1 - c0)) -ge $((N + M)) ]; then ok "the JVM ran $((c1 - c0)) >= N+M collections during main"; else bad "JVM collections during main: '$c0'..'$c1'"; fi
p=$(grep -c ' Pause ' "$WORK/gc.log" 2>/dev/null)
if [ -n "$b" ] && [ -n "$c1" ] && [ "$b" -ge $((c1 - c0)) ] && [ "$b" -le "${p:-0}" ]; then
  ok "GC brackets $b: one per collection ($((c1 - c0)) during main, $p pauses in the JVM's GC log)"
else
  bad "GC brackets '$b', JVM collections $((c1 - c0)) during main, '$p' pauses in the JVM's GC log"
fi
finish
