#!/bin/bash
# sampler_hang.sh — a sampling profiler that calls JVMPI while holding its one global lock
# never hangs or stalls the JVM while other threads load classes, start threads, allocate and
# contend (tests/java/LoadStorm.java: 32 threads for 8 s, 3 classes defined by a fresh loader
# at a time on many threads). Agent legacy-agents/sampler_lock.c, HPROF's shape: every handler
# takes the one raw monitor (GC_START to GC_FINISH included), and its CreateSystemThread
# sampler, holding it every ~1 ms, suspends each thread, takes its call trace, resolves each
# frame with GetMethodClass and RequestEvent(CLASS_LOAD), and makes one more JVMPI call per
# round (requests of every kind, dumps, status, objects, CPU time, RawMonitorWait). HotSpot
# never made a JVMPI caller wait for another thread's handler, so all of this ended.
# Seven runs of sampler_lock with different mixes, one with the storm's threads virtual
# threads where the JVM has them (LoadStorm ... virtual), one ending by System.exit
# (LoadStorm ... exit: the VM ends on main, with the sampler still calling; a heap walk the
# shim starts then can deadlock HotSpot: core/state.c, shim_exit_near), and the bundled HPROF
# twice (cpu=samples; heap=sites,monitor=y). For each run:
#  - it ends by itself within RUN_TIMEOUT s (else: a hang; the JVM's native and Java
#    stacks are saved in hang.LABEL.gdb and hang.LABEL.jstack, the waiting frames shown,
#    and the JVM killed), with exit status 0 and the workload's DONE line;
#  - the shim logs no warning that a wait did not drain or timed out, and nothing crashed;
#  - sampler_lock: no FAIL (each request HotSpot answered succeeded with its event on the
#    caller, every frame's class resolved and got its CLASS_LOAD by the end, ...) and its
#    summary; its unrequested CLASS_LOADs of LoadStormCargo* and THREAD_STARTs of storm-NN
#    and storm-short-N equal what the workload counted (nothing lost while it sampled);
#  - HPROF: its tables, BEGIN to END, and no HPROF error.
# The runs stop early (FAIL) once hangs have used up the time budget of this test.
source "$ROOT/tests/it/lib.sh"
SECS=8
RUN_TIMEOUT=${SAMPLER_RUN_TIMEOUT:-60}
BUDGET=${SAMPLER_BUDGET:-285}   # tests/run.sh ends a test after 300 s
t_start=$(date +%s)
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9-]*\).*/\1/p"; }

# storm LABEL AGENT_ARG [virtual|exit] — LoadStorm under the agent; sets RC ("hang" if it had to
# be killed).
storm() {
  local label=$1 arg=$2 virt=${3:-} pid s
  # shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
  "$JAVA" -Xshare:auto ${JVMPI_TEST_JAVA_OPTS:-} "$arg" -cp "$CLASSES" LoadStorm $SECS 32 $virt \
    >"$WORK/out.$label" 2>"$WORK/err.$label" &
  pid=$!
  for ((s = 0; s < RUN_TIMEOUT; s++)); do
    kill -0 $pid 2>/dev/null || break
    sleep 1
  done
  if kill -0 $pid 2>/dev/null; then
    RC=hang
    command -v gdb >/dev/null &&
      timeout 40 gdb -p $pid -batch -ex 'thread apply all bt 24' >"$WORK/hang.$label.gdb" 2>&1
    timeout 15 "$(dirname "$JAVA")/jstack" $pid >"$WORK/hang.$label.jstack" 2>&1
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
  else
    wait $pid
    RC=$?
  fi
  echo "+ [$label] java ${JVMPI_TEST_JAVA_OPTS:+$JVMPI_TEST_JAVA_OPTS }$arg LoadStorm $SECS 32${virt:+ $virt} -> rc=$RC ($s s)"
}

# hang_report LABEL — the threads that wait, from the saved native stacks.
hang_report() {
  local g=$WORK/hang.$1.gdb
  [ -s "$g" ] || { echo "     (no native stacks: gdb missing or failed)"; return; }
  echo "     native stacks: $g; threads in the shim or the agent (innermost frames of theirs):"
  awk '/^Thread /{ if (t != "" && keep) print t; t = $0; keep = 0; n = 0; next }
       /^#/ { fn = $3 == "in" ? $4 : $2
              if ((/ at shim\// || / at legacy-agents\//) && n < 5) { t = t " <- " fn; n++; keep = 1 } }
       END { if (t != "" && keep) print t }' "$g" | sed -e 's/^Thread [0-9]* (Thread 0x[0-9a-f]* (LWP [0-9]*) \("[^"]*"\)):/     \1/' -e 's/"storm-[0-9]*"/"storm-NN"/' | sort | uniq -c | sort -rn | head -12
}

# common LABEL — what every run must show.
common() {
  local l=$1 o=$WORK/out.$1 e=$WORK/err.$1
  if [ "$RC" = hang ]; then
    bad "[$l] the JVM did not end within $RUN_TIMEOUT s (a $SECS s workload): hang, killed"
    tail -n 3 "$o" | sed 's/^/     | /'
    hang_report "$l"
    return 1
  fi
  ok "[$l] the JVM ended by itself"
  expect_rc 0
  expect_grep "$o" '^LoadStorm: DONE$' "[$l] workload's DONE line"
  expect_nogrep "$e" 'jvmpishim: warn.*(drain|timed out|time-out|timeout|gave up|waited)' "[$l] no shim warning of a wait that did not drain or timed out"
  expect_nogrep "$e" 'jvmpishim: error|SIGSEGV|SIGBUS|hs_err|fatal error|Internal Error' "[$l] no shim error, no crash"
  return 0
}

# Room for one more run, a hang and its stacks included (gdb and jstack: 55 s at most)?
budget_left() {
  local used=$(( $(date +%s) - t_start ))
  [ $((used + RUN_TIMEOUT + 55)) -le "$BUDGET" ]
}

# The mixes, the two HPROF runs among them so that a hang early leaves them their turn.
runs=(
  "trace:calls=trace"
  "hprof-cpu:hprof=cpu=samples"
  "during-mon:resolve=during,monitor"
  "alloc:alloc,resolve=during,heap=200"
  "hprof-heap:hprof=heap=sites,monitor=y"
  "all:calls=all"
  "alloc-mon:alloc,monitor,calls=trace"
  "virtual:calls=trace"
  "all-exit:calls=all"
)
skipped=""
for r in "${runs[@]}"; do
  label=${r%%:*}; opts=${r#*:}
  if ! budget_left; then skipped="$skipped $label"; continue; fi
  case "$opts" in
    hprof=*)
      h=${opts#hprof=}
      rm -f "$WORK/hprof.$label.txt"
      storm "$label" "$(shim_arg hprof "$h,file=$WORK/hprof.$label.txt")"
      common "$label" || continue
      expect_nogrep "$WORK/err.$label" 'HPROF ERROR' "[$label] no HPROF error"
      p=$WORK/hprof.$label.txt
      case "$h" in
        cpu=*)
          expect_count "$p" '^CPU SAMPLES BEGIN \(total = [1-9][0-9]*\) ' 1 "[$label] HPROF's CPU SAMPLES table, with samples"
          expect_count "$p" '^CPU SAMPLES END$' 1 "[$label] CPU SAMPLES table ends"
          ;;
        *)
          rows=$(awk '/^SITES BEGIN/ {on = 1; next} /^SITES END/ {on = 0} on && $1 ~ /^[0-9]+$/ {n++} END {print n + 0}' "$p")
          [ "$rows" -gt 0 ] && ok "[$label] HPROF's SITES table, $rows rows" || bad "[$label] HPROF's SITES table has no rows"
          expect_count "$p" '^SITES END$' 1 "[$label] SITES table ends"
          expect_count "$p" '^MONITOR TIME BEGIN ' 1 "[$label] HPROF's MONITOR TIME table"
          expect_count "$p" '^MONITOR TIME END$' 1 "[$label] MONITOR TIME table ends"
          ;;
      esac
      ;;
    *)
      virt=""; [ "$label" = virtual ] && virt=virtual; [ "$label" = all-exit ] && virt=exit
      storm "$label" "$(shim_arg sampler_lock "$opts")" $virt
      common "$label" || continue
      o=$WORK/out.$label
      [ "$virt" = virtual ] && echo "     $(grep '^LoadStorm: virtual=' "$o") (virtual threads where the JVM has them, each a JVMPI thread)"
      expect_nogrep "$o" '^sampler_lock: FAIL' "[$label] no FAIL from the agent"
      sum=$(grep '^sampler_lock: summary ' "$o")
      expect_grep "$o" '^sampler_lock: summary rounds=[1-9][0-9]* samples=[1-9][0-9]* frames=[1-9][0-9]* .* fails=0$' "[$label] agent's summary: it sampled, no failure"
      echo "     $sum"
      grep '^sampler_lock: slowest ' "$o" | sed 's/^/     /'
      truth=$(grep '^LoadStorm: truth ' "$o"); loads=$(grep '^sampler_lock: loads ' "$o")
      expect_eq "$(field "$loads" cargo)" "$(field "$truth" classes_defined)" "[$label] CLASS_LOADs of LoadStormCargo* = classes the workload defined"
      expect_eq "$(field "$loads" storm_threads)" "$(field "$truth" threads)" "[$label] THREAD_STARTs of storm-NN"
      expect_eq "$(field "$loads" short_threads)" "$(field "$truth" short_threads)" "[$label] THREAD_STARTs of storm-short-N = short threads the workload started"
      ;;
  esac
done
[ -z "$skipped" ] || bad "not run, the time budget ($BUDGET s) spent:$skipped"
finish
