#!/bin/bash
# mem_lock.sh — the JVMPI locking discipline must not deadlock: the mem_gc agent
# (legacy-agents/mem_gc.c, mode "stress") RawMonitorEnter's its lock in GC_START and
# RawMonitorExit's it in GC_FINISH, and takes the same lock in every OBJECT_ALLOC handler,
# while tests/java/MemStress.java allocates on 8 threads for 2 s and calls System.gc()
# every 200 ms. The VM must exit 0 within the timeout, with brackets balanced, every free
# inside one and for a reported id, and no allocation lost (the agent saw at least as many
# OBJECT_ALLOC as the threads counted allocations). Second run: the 8 threads are daemons
# still allocating when main drops 200,000 objects, calls System.gc() and returns: the VM
# must still exit (frees pending, allocation events in flight).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=30
o=$WORK/out

check_brackets() {
  local f what
  while IFS='|' read -r f what; do
    expect_nogrep "$o" "^mem_gc: fails $f=" "$what"
  done <<'LIST'
gc_start_nested|GC_START never nested
gc_finish_without_start|no GC_FINISH without GC_START
free_outside_gc|every OBJECT_FREE between GC_START and GC_FINISH
free_other_thread|every OBJECT_FREE on the thread of its GC_START
free_unknown_id|no OBJECT_FREE for an id OBJECT_ALLOC never reported
free_twice|no id freed twice
gc_info|GC_FINISH statistics plausible
object_move|no OBJECT_MOVE
arena_delete|no ARENA_DELETE
other|no other violation
LIST
  grep '^mem_gc: fails alloc_twice=' "$o" | sed 's/^/     note (see mem_alloc.sh): /'
}
field() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }

# ---- 1. 8 threads for 2 s, joined ---------------------------------------------------------
t0=$(date +%s)
run_java "$(shim_arg mem_gc stress)" -cp "$CLASSES" MemStress 8 2000
echo "     $(( $(date +%s) - t0 )) s"
if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then bad "VM did not exit within ${JAVA_TIMEOUT}s: deadlock?"; show; fi
expect_rc 0
expect_grep "$o" '^MemStress: threads=8 allocated=[0-9]+ gcs=[0-9]+$' "workload finished"
check_brackets
l=$(grep '^mem_gc: shutdown ' "$o"); echo "     $l"
jl=$(grep '^MemStress: threads=' "$o")
ja=$(field "$jl" allocated)
a=$(field "$l" allocs); fr=$(field "$l" frees); s=$(field "$l" gc_starts); f=$(field "$l" gc_finishes)
if [ -n "$a" ] && [ -n "$ja" ] && [ "$a" -ge "$ja" ]; then ok "OBJECT_ALLOC events $a >= $ja allocations the 8 threads made"; else bad "OBJECT_ALLOC events '$a' < '$ja' allocations counted by the threads"; fi
if [ -n "$s" ] && [ "$s" = "$f" ] && [ "$s" -ge 3 ]; then ok "GC_START = GC_FINISH = $s"; else bad "GC_START '$s' GC_FINISH '$f'"; fi
if [ -n "$fr" ] && [ "$fr" -gt 0 ]; then ok "$fr OBJECT_FREE while the threads allocated"; else bad "no OBJECT_FREE"; fi
echo "     note: OBJECT_ALLOC handlers on other threads that ran into an open bracket: $(field "$l" allocs_waiting_for_bracket)"

# ---- 2. exit while 8 daemon threads allocate, frees pending --------------------------------
t0=$(date +%s)
run_java "$(shim_arg mem_gc stress)" -cp "$CLASSES" MemStress 8 2000 exit
echo "     $(( $(date +%s) - t0 )) s"
if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then bad "VM did not exit within ${JAVA_TIMEOUT}s with threads allocating and frees pending"; show; fi
expect_rc 0
expect_grep "$o" '^MemStress: threads=8 exiting while they allocate' "workload returned from main"
expect_grep "$o" '^mem_gc: shutdown ' "JVM_SHUT_DOWN delivered"
check_brackets
finish
