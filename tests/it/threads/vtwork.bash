# vtwork.bash — helpers of the vthreads_* tests (sourced after lib.sh; not a test itself:
# tests/run.sh runs only *.sh). They run tests/java/VtWork.java under a legacy agent and
# compare the agent's per-thread lines with the workload's own.
#
# VtWork prints, per worker, "VtWork: thread name=NAME body=1 sleepy=.. locked=.. synced=..
# waiting=.. reading=.. leaf=.."; the agents print their view in the same shape, prefixed
# with their own name. Unnamed virtual threads are all called "", so lines are compared as
# multisets (sorted), which is exact for the named ones.

# Four carriers whatever the machine's CPU count, so that a virtual thread that blocks is
# likely to come back on another carrier. A JVM without virtual threads ignores it.
VT_JAVA_OPTS="-Djdk.virtualThreadScheduler.parallelism=4"

# vt_run AGENT MODE N [SHIM_OPTIONS] — VtWork MODE N (virtual | platform) under AGENT; out
# and err stay in $WORK/out, $WORK/err and are kept as $WORK/AGENT-MODE-N[-SHIM_OPTIONS].out
# and .err for the checks that follow (and for a reader of a failed run).
vt_run() {
  local agent=$1 mode=$2 n=$3 sopt=${4:-}
  # shellcheck disable=SC2086 # VT_JAVA_OPTS is a list of options
  run_java "$(shim_arg "$agent" "" "$sopt")" $VT_JAVA_OPTS -cp "$CLASSES" VtWork "$mode" "$n"
  VT_OUT=$WORK/$agent-$mode-$n${sopt:+-$sopt}.out
  cp "$WORK/out" "$VT_OUT"
  cp "$WORK/err" "${VT_OUT%.out}.err"
}

# vt_no_virtual — the last run found no Thread.ofVirtual (the probe: VtWork looks for it by
# reflection and says so; no version number is consulted).
vt_no_virtual() { grep -q '^VtWork: no Thread.ofVirtual on this JVM$' "$VT_OUT"; }

# vt_done MODE N — the last run ended normally and VtWork finished.
vt_done() {
  expect_rc 0
  expect_grep "$VT_OUT" "^VtWork: DONE mode=$1 threads=$2\$" "VtWork ($1, $2 threads) finished"
}

# vt_field NAME — the value of NAME=... in the agent's summary line of the last run.
vt_field() { sed -n "s/^$VT_AGENT: summary .*[ ]$1=\([^ ]*\).*/\1/p" "$VT_OUT" | tail -n 1; }

# vt_expect_field NAME VALUE [what] — the summary holds NAME=VALUE.
vt_expect_field() { expect_eq "$(vt_field "$1")" "$2" "${3:-$VT_AGENT summary $1}"; }

# vt_sum KEY — the sum over VtWork's thread lines of KEY=N.
vt_sum() { sed -n "s/^VtWork: thread .* $1=\([0-9]*\).*/\1/p" "$VT_OUT" | awk '{s += $1} END {print s + 0}'; }

# vt_same_threads WHAT [SED] — the agent's "thread ..." lines equal VtWork's, as multisets;
# SED (a sed expression) first reduces VtWork's lines to what this agent prints.
vt_same_threads() {
  local what=$1 reduce=${2:-}
  sed -n 's/^VtWork: thread //p' "$VT_OUT" | { if [ -n "$reduce" ]; then sed "$reduce"; else cat; fi; } |
    LC_ALL=C sort >"$WORK/want.threads"
  sed -n "s/^$VT_AGENT: thread //p" "$VT_OUT" | LC_ALL=C sort >"$WORK/got.threads"
  if cmp -s "$WORK/want.threads" "$WORK/got.threads"; then
    ok "$what: $(wc -l <"$WORK/got.threads") threads, each as VtWork counted it"
  else
    bad "$what: the agent's per-thread lines differ from VtWork's (< VtWork, > agent; first 10)"
    diff "$WORK/want.threads" "$WORK/got.threads" | grep '^[<>]' | head -n 10 | sed 's/^/     /'
    echo "     ($(wc -l <"$WORK/want.threads") VtWork lines, $(wc -l <"$WORK/got.threads") agent lines)"
  fi
}

# vt_no_fails — no FAIL line and every "fails KIND=N" of the agent is 0.
vt_no_fails() {
  expect_nogrep "$VT_OUT" "^$VT_AGENT: FAIL" "${1:-}no FAIL line from $VT_AGENT"
  vt_expect_field fails 0 "${1:-}$VT_AGENT counted no failure"
}
