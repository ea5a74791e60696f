#!/bin/bash
# vthreads_modes.sh — what a virtual thread is to a thread-centric profiler that keeps a
# table per thread in JVMPI thread-local storage (legacy-agents/vt_census.c), in each mode,
# against what tests/java/VtCensus.java did: N virtual threads that sleep inside a method,
# then M alive at once.
#  - vthreads=threads (the default): each virtual thread gets one THREAD_START, on itself,
#    with its name and the group and parent group Java reports for it, and one THREAD_END;
#    every method event names a thread the agent was told of and nests per thread; the
#    shim's record of each virtual thread is freed at its end (JVMPISHIM_MEMSTATS: none
#    left, as many made as the workload started, at least M alive at once); the migration
#    report counts them and says the mode.
#  - vthreads=carriers: no THREAD_START for them, every event names a thread the agent knows
#    (a carrier), no record kept, and the report counts them and says the mode.
# Where the JVM has no virtual threads (probed by the workload) the agent runs as before and
# the report has no such line.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=300
export JVMPISHIM_MEMSTATS=1
N=300
M=5000
R=$WORK/report.txt
o=$WORK/out

summary() { grep '^vt_census: summary ' "$o" | head -n1; }
field() { summary | sed -n "s/.* $1=\\([0-9-]*\\).*/\\1/p"; }
memstat() { sed -n "s/^jvmpishim: memstats: vthreads.* $1=\\([0-9a-z]*\\).*/\\1/p" "$WORK/err" | head -n1; }

run_java "$(shim_arg vt_census "" "report=$R")" -cp "$CLASSES" VtCensus $N $M
expect_rc 0
expect_nogrep "$o" '^vt_census: FAIL' "no FAIL from the agent"
expect_grep "$o" '^vt_census: summary .* fails=0$' "agent counted no failure"
if grep -q '^VtCensus: no Thread.ofVirtual on this JVM$' "$o"; then
  expect_eq "$(field vc_starts)/$(field unknown_env)/$(field unbalanced)" "0/0/0" \
    "no virtual threads: starts of vc-* / events of unknown threads / unbalanced exits"
  expect_eq "$(memstat mode)/$(memstat records_made)" "off/0" "no virtual threads: no record made"
  expect_nogrep "$R" '^  - virtual threads seen' "no virtual threads in the report"
  echo "SKIPPED: the rest: this JVM has no Thread.ofVirtual (probed)"
  finish
fi

# vthreads=threads (the default).
expect_grep "$o" "^VtCensus: done n=$N m=$M\$" "workload finished"
expect_eq "$(field vc_starts)/$(field vc_ends)" "$N/$N" "threads: THREAD_START/THREAD_END of the $N vc-* virtual threads"
expect_eq "$(field vm_starts)/$(field vm_ends)" "$M/$M" "threads: THREAD_START/THREAD_END of the $M vm-* virtual threads"
expect_eq "$(field unknown_env)" "0" "threads: method events from an env_id the agent was not told of"
expect_eq "$(field unbalanced)" "0" "threads: METHOD_EXITs at depth 0 (nesting per thread)"
if [ "$(field vc_entries)" -ge $((2 * N)) ] 2>/dev/null; then
  ok "threads: METHOD_ENTRYs counted on the vc-* threads themselves ($(field vc_entries), at least work and leaf of each)"
else bad "threads: vc-* threads' own METHOD_ENTRYs: $(field vc_entries), expected at least $((2 * N))"; fi
if [ "$(field max_alive)" -ge "$M" ] 2>/dev/null; then
  ok "threads: at least $M threads alive at once in the agent's table ($(field max_alive))"
else bad "threads: at most $(field max_alive) threads alive at once, expected at least $M"; fi
java_names=$(sed -n 's/^VtCensus: vthread name=\(.*\) group=\(.*\) parent=\(.*\)$/name=\1 group=\2 parent=\3/p' "$o")
expect_grep "$o" "^vt_census: THREAD_START $java_names on_itself=yes\$" \
  "threads: vc-0's THREAD_START has the names Java gives ($java_names) and comes on that thread"
expect_eq "$(memstat mode)" "threads" "threads: the shim's mode"
expect_eq "$(memstat records_live)" "0" "threads: records of virtual threads left at exit (each freed at its end)"
expect_eq "$(memstat records_made)" "$((N + M))" "threads: records made, one per virtual thread started"
if [ "$(memstat records_peak)" -ge "$M" ] 2>/dev/null; then
  ok "threads: records alive at once, at most $(memstat records_peak) (at least the $M alive together)"
else bad "threads: records alive at once: $(memstat records_peak), expected at least $M"; fi
expect_grep "$R" "^  - virtual threads seen: $((N + M)); first: virtual thread \"v[cm]-[0-9]+\" was a JVMPI thread of its own \\(vthreads=threads\\)" \
  "threads: the report counts $((N + M)) virtual threads and says the mode"
grep -E '^vt_census: gc [0-9]+ ' "$o" | sed 's/^/     (memory) /'

# vthreads=carriers: as before virtual threads were JVMPI threads.
run_java "$(shim_arg vt_census "" "report=$R,vthreads=carriers")" -cp "$CLASSES" VtCensus $N $M
expect_rc 0
expect_grep "$o" "^VtCensus: done n=$N m=$M\$" "carriers: workload finished"
expect_grep "$o" '^vt_census: summary .* fails=0$' "carriers: agent counted no failure"
expect_eq "$(field vc_starts)/$(field vm_starts)" "0/0" "carriers: no THREAD_START for virtual threads"
expect_eq "$(field unknown_env)" "0" "carriers: every method event names a thread the agent was told of (a carrier)"
expect_nogrep "$o" '^vt_census: THREAD_START name=vc-0 ' "carriers: vc-0 not announced"
expect_eq "$(memstat mode)/$(memstat records_made)" "off/0" "carriers: no record made for virtual threads"
expect_grep "$R" "^  - virtual threads seen: $((N + M)); first: virtual thread \"v[cm]-[0-9]+\", its events posted with the env_id of its carrier thread \\(vthreads=carriers" \
  "carriers: the report counts $((N + M)) virtual threads and says the mode"
finish
