#!/bin/bash
# calltrace_retransform.sh — GetCallTrace's line numbers stay right when class rewriting
# moves every bci (legacy-agents/trace_retrans.c, workload tests/java/TraceRetrans.java).
# The agent samples a thread that keeps calling work(), whose time goes to the loop on
# LINE:work, before, while and after METHOD_ENTRY is enabled (methods=bci rewrites the
# loaded classes, then restores them). In each phase at least 9 in 10 work() frames must
# be on LINE:work and every loop() frame under them on LINE:call. A line table cached
# before the rewrite and used after it puts the loop's back edge on the next line, LINE:w3
# (measured: 199 of 200 samples when the cache was not dropped).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
SRC=$ROOT/tests/java/TraceRetrans.java
L() { grep -n -- "// LINE:$1\$" "$SRC" | head -n1 | cut -d: -f1; }
LWORK=$(L work); LCALL=$(L call)
echo "     source lines: work=$LWORK call=$LCALL"

run_java "$(shim_arg trace_retrans)" -cp "$CLASSES" TraceRetrans
o=$WORK/out
expect_rc 0
expect_grep "$o" '^TraceRetrans: done=true$' "the agent finished its three phases"
expect_nogrep "$o" '^trace_retrans: FAIL' "no FAIL from the agent"
expect_grep "$o" '^trace_retrans: worker entries while on: >=100$' "the worker ran rewritten code (METHOD_ENTRY from it)"
for p in before on off; do
  line=$(grep "^trace_retrans: phase $p " "$o")
  echo "     $line"
  work=$(echo "$line" | sed -n 's/.* work=\([0-9]*\) .*/\1/p')
  wl=$(echo "$line" | sed -n 's/.* work_lines=\([^ ]*\) .*/\1/p')
  cl=$(echo "$line" | sed -n 's/.* call_lines=\([^ ]*\)$/\1/p')
  onwork=$(echo "$wl" | tr ',' '\n' | awk -F: -v l="$LWORK" '$1 == l { print $2 }')
  if [ -n "$work" ] && [ "$work" -ge 50 ] 2>/dev/null; then ok "$p: $work samples in work()"; else bad "$p: too few samples in work() ($work)"; show; fi
  if [ -n "$onwork" ] && [ $((onwork * 10)) -ge $((work * 9)) ]; then
    ok "$p: work() frames on LINE:work ($LWORK): $onwork of $work"
  else
    bad "$p: work() frames on LINE:work ($LWORK): ${onwork:-0} of $work (lines:count $wl)"
  fi
  expect_eq "$cl" "$LCALL:$work" "$p: every loop() frame on LINE:call (line:count)"
done
finish
