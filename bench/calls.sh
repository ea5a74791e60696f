#!/bin/bash
# calls.sh — what the JVMPI calls agents make around every event cost (docs/performance.md,
# "Calls around every event").
#
#   bench/calls.sh [micro] [tracer] [hprof] [hprof4] [hprofcpu] [bytecode]    default: all six
#
# Environment: BENCH_JDKS (default: tools/find-jdk.sh all), BENCH_CALLS_ROUNDS (rounds of
# tracer and hprof, default 5), BENCH_CALLS_MICRO_ROUNDS (rounds inside the micro agent,
# default 15), BENCH_TIMEOUT (per run, default 600 s), BENCH_SHIM_OLD (another build of the
# shim, run side by side in tracer and hprofcpu: before and after a change). Needs `make all`
# (the shim and the bundled HPROF) and builds bench/ itself (make -f bench/Makefile).
#
# micro   bench/agents/bcalls.c in one JVM per JDK (workload Idle, which runs while the
#         agent's last part does): each measurement alternates the JVMPI call and its native
#         floor in the same process, round after round, and prints medians and the median of
#         the per-round ratios: a RawMonitorEnter+Exit pair against a pthread mutex pair
#         (uncontended: single-threaded loops timed in thread CPU time; 8 threads on one
#         monitor and 8 threads on 8 monitors: wall time), GetMethodClass, GetCurrentThread-
#         CpuTime against clock_gettime, a tracer's per-event sequence (raw monitor,
#         GetMethodClass, CPU time) against pthread mutex + clock_gettime, and EnableEvent+
#         DisableEvent of every event type, from the main thread before main runs (idle),
#         from a system thread while main runs (busy) and from a thread of the agent's own
#         that the JVM does not know (pthread). Goals: pair <= 2 x mutex + 10 ns; contended
#         <= 1.5 x; GetMethodClass <= 50 ns; tracer sequence <= 2 x; a switch <= 1 ms for
#         every event that needs no collection or retransformation.
# tracer  MethodCalls 1000000 with bench/agents/btracer.c (raw monitor, GetMethodClass and
#         GetCurrentThreadCpuTime on every METHOD_ENTRY/EXIT), against the same agent making
#         the native calls instead (option native: pthread mutex, clock_gettime), and no
#         agent; order rotating per round. Goal: jvmpi / native <= 2.
# hprof   Sites 40 (about a second of allocating work without an agent) with the bundled
#         HPROF (legacy-agents/hprof, heap=sites: OBJECT_ALLOC with a 4-frame GetCallTrace
#         per allocation, its raw monitor around every event), against no agent and against
#         the native floor (bench/agents/nsites.c: SampledObjectAlloc at interval 0 and a
#         4-frame GetStackTrace per allocation, counted in a site table under one mutex);
#         order rotating. Goal: hprof / none <= 3. Then one more HPROF run with report=,
#         whose time table (where the time goes) is printed.
# hprof4  the same on Sites 20 4: four threads allocating at once, so that HPROF's one raw
#         monitor around every OBJECT_ALLOC is contended (the case of an allocation profiler
#         whose report showed RawMonitorEnter at 0.92 us against 0.05 us for Exit), and the
#         native floor's one mutex with it. Same goal.
# hprofcpu MethodCalls 1000000 with the bundled HPROF's cpu=times (METHOD_ENTRY/EXIT, the
#         thread's CPU time from GetCurrentThreadCpuTime at each, a 4-frame trace per new
#         method, its raw monitor around every event), against no agent (and BENCH_SHIM_OLD's
#         build where given); then one more run with report=. No goal: the real agent's cost,
#         before and after.
# bytecode MethodCalls 1000000 with bench/agents/bbytecode.c, a per-bytecode coverage tracer
#         (INSTRUCTION_START counted per method and offset, METHOD_ENTRY2 and METHOD_EXIT, its
#         tables found through thread-local storage and a raw monitor), against the same
#         workload with INSTRUCTION_START delivered to an empty handler (bench/agents/
#         bdeliver.c insn: the mechanism's own cost) and no agent; order rotating. Goal:
#         bytecode / none <= 15 (what users of such tracers accepted).
#
# Output: build/bench/calls-<date-time>/ (raw runs, report.txt); the tables go to stdout
# and report.txt. Exit status 0 when every run completed, 1 if one crashed, hung or
# printed no result or an agent said FAIL (goal misses are results, not failures).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SCEN=${*:-micro tracer hprof hprof4 hprofcpu bytecode}
OLD=${BENCH_SHIM_OLD:-}
[ -z "$OLD" ] || [ -f "$OLD" ] || { echo "calls.sh: BENCH_SHIM_OLD=$OLD: no such file" >&2; exit 2; }
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
ROUNDS=${BENCH_CALLS_ROUNDS:-5}
MROUNDS=${BENCH_CALLS_MICRO_ROUNDS:-15}
TIMEOUT=${BENCH_TIMEOUT:-600}
SHIM=$ROOT/build/libjvmpishim.so
HPROF=$ROOT/build/agents/libhprof.so
AG=$ROOT/build/bench/agents
CP=$ROOT/build/bench/classes
[ -f "$SHIM" ] && [ -f "$HPROF" ] || { echo "calls.sh: run make all first" >&2; exit 2; }
make -s -f bench/Makefile JDK="$(tools/find-jdk.sh build)" >/dev/null || { echo "calls.sh: bench/ did not build" >&2; exit 2; }
OUT=$ROOT/build/bench/calls-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
exec > >(tee "$OUT/report.txt") 2>&1
echo "calls.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "shim: $SHIM, sha256 $(sha256sum "$SHIM" | cut -c1-16)"
[ -z "$OLD" ] || echo "old shim (BENCH_SHIM_OLD): $OLD, sha256 $(sha256sum "$OLD" | cut -c1-16)"
FAILED=0

run() { # NAME JAVA ARGS... -> $OUT/raw/NAME.{out,err}
  local name=$1; shift
  printf '%q ' "$@" >"$OUT/raw/$name.cmd"; echo >>"$OUT/raw/$name.cmd"
  (cd "$OUT/raw" && timeout -k 10 "$TIMEOUT" "$@" >"$OUT/raw/$name.out" 2>"$OUT/raw/$name.err")
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^BENCH ' "$OUT/raw/$name.out"; then
    echo "  !! $name: rc=$rc, no BENCH line? (see $OUT/raw/$name.err)"
    FAILED=1
  fi
}
val() { sed -n "s/^BENCH .* $2=\\([0-9]*\\).*/\\1/p" "$OUT/raw/$1.out" | head -n 1; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END { if (NR == 0) print "-"; else print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print ""; else printf "%.3f", a / b }'; }

# rounds SCEN CONFIG=ARGS... : ROUNDS rounds of the configurations, order rotating; the
# workload and its arguments follow "--".
rounds() {
  local scen=$1 j=$2 v=$3; shift 3
  local -a confs=() wl=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do confs+=("$1"); shift; done
  shift
  wl=("$@")
  local n=${#confs[@]} r k
  for r in $(seq 1 "$ROUNDS"); do
    local line="  round $r:"
    for k in $(seq 0 $((n - 1))); do
      local c=${confs[$(( (k + r - 1) % n ))]}
      local name=${c%%=*} args=${c#*=}
      local -a a=()
      [ "$args" != none ] && a=("$args")
      run "jdk$v-$scen-r$r-$name" "$j/bin/java" "${a[@]}" -cp "$CP" "${wl[@]}"
      line="$line $name $(val "jdk$v-$scen-r$r-$name" elapsed_ms) ms |"
    done
    echo "${line% |}"
  done
}

# table SCEN V A B GOAL: medians of A and B, the median per-round ratio A/B (elapsed, CPU).
table() {
  local scen=$1 v=$2 a=$3 b=$4 goal=$5 r ra="" rc="" ea="" eb="" ca="" cb=""
  for r in $(seq 1 "$ROUNDS"); do
    local x y cx cy
    x=$(val "jdk$v-$scen-r$r-$a" elapsed_ms); y=$(val "jdk$v-$scen-r$r-$b" elapsed_ms)
    cx=$(val "jdk$v-$scen-r$r-$a" cpu_ms); cy=$(val "jdk$v-$scen-r$r-$b" cpu_ms)
    ea="$ea $x"; eb="$eb $y"; ca="$ca $cx"; cb="$cb $cy"
    ra="$ra $(ratio "$x" "$y")"; rc="$rc $(ratio "$cx" "$cy")"
  done
  local m mc
  m=$(echo "$ra" | med); mc=$(echo "$rc" | med)
  local lo hi
  lo=$(echo "$ra" | tr ' ' '\n' | grep -v '^$' | sort -g | head -n 1)
  hi=$(echo "$ra" | tr ' ' '\n' | grep -v '^$' | sort -g | tail -n 1)
  local verdict="no goal"
  [ "$goal" != - ] && verdict="goal <= $goal: $(awk -v m="$m" -v g="$goal" 'BEGIN { print (m != "" && m + 0 <= g + 0) ? "met" : "missed" }')"
  printf '  %s: %s %s ms (cpu %s ms), %s %s ms (cpu %s ms); %s/%s = %s [%s..%s], cpu %s; %s\n' \
    "$scen" "$a" "$(echo "$ea" | med)" "$(echo "$ca" | med)" "$b" "$(echo "$eb" | med)" \
    "$(echo "$cb" | med)" "$a" "$b" "$m" "$lo" "$hi" "$mc" "$verdict"
}

for j in $JDKS; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release")
  for s in $SCEN; do
    echo
    case $s in
    micro)
      echo "--- JDK $v / micro: bcalls, $MROUNDS rounds inside one JVM (load $(cut -d' ' -f1 /proc/loadavg))"
      run "jdk$v-micro" "$j/bin/java" "-agentpath:$SHIM=legacy=$AG/libbcalls.so:rounds=$MROUNDS" \
        -cp "$CP" Idle 100000000
      o=$OUT/raw/jdk$v-micro.out
      grep -q '^bcalls: done failures=0$' "$o" || { echo "  !! bcalls did not finish cleanly"; FAILED=1; }
      grep '^bcalls: FAIL' "$o" | sed 's/^/  !! /'
      awk '/^BCALLS name=/ && !/name=enable_(idle|busy|pthread)_/ {
             sub(/^BCALLS /, ""); printf "  %s\n", $0 }' "$o"
      echo "  switches slower than 100 us (median of 3-5; heavy = needs a retransformation or a collection):"
      awk '/^BCALLS name=enable_(idle|busy|pthread)_/ {
             for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
             if (f["jvmpi_ns"] + 0 > 100000) printf "    %-48s %10.3f ms  (max %.3f ms)%s\n",
               f["name"], f["jvmpi_ns"] / 1e6, f["max_ns"] / 1e6, f["heavy"] == 1 ? "  heavy" : "" }' "$o"
      ;;
    tracer)
      echo "--- JDK $v / tracer: MethodCalls 1000000, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
      oldc=()
      [ -z "$OLD" ] || oldc=("old=-agentpath:$OLD=legacy=$AG/libbtracer.so")
      rounds tracer "$j" "$v" none=none "jvmpi=-agentpath:$SHIM=legacy=$AG/libbtracer.so" \
        "native=-agentpath:$SHIM=legacy=$AG/libbtracer.so:native" "${oldc[@]}" -- MethodCalls 1000000
      table tracer "$v" jvmpi native 2
      table tracer "$v" native none -
      [ -z "$OLD" ] || table tracer "$v" jvmpi old -
      grep -h '^btracer:' "$OUT/raw/jdk$v-tracer-r1-jvmpi.out" "$OUT/raw/jdk$v-tracer-r1-native.out" | sed 's/^/  /'
      ;;
    bytecode)
      echo "--- JDK $v / bytecode: MethodCalls 1000000, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
      rounds bytecode "$j" "$v" none=none "bytecode=-agentpath:$SHIM=legacy=$AG/libbbytecode.so" \
        "empty=-agentpath:$SHIM=legacy=$AG/libbdeliver.so:insn" -- MethodCalls 1000000
      table bytecode "$v" bytecode none 15
      table bytecode "$v" empty none -
      table bytecode "$v" bytecode empty -
      grep -h '^bbytecode:' "$OUT/raw/jdk$v-bytecode-r1-bytecode.out" | sed 's/^/  /'
      ;;
    hprofcpu)
      echo "--- JDK $v / hprofcpu: MethodCalls 1000000 with HPROF cpu=times, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
      oldc=()
      [ -z "$OLD" ] || oldc=("old=-agentpath:$OLD=legacy=$HPROF:cpu=times,file=$OUT/raw/jdk$v-$s-old.txt")
      rounds "$s" "$j" "$v" none=none \
        "hprof=-agentpath:$SHIM=legacy=$HPROF:cpu=times,file=$OUT/raw/jdk$v-$s.txt" \
        "${oldc[@]}" -- MethodCalls 1000000
      table "$s" "$v" hprof none -
      [ -z "$OLD" ] || { table "$s" "$v" old none -; table "$s" "$v" hprof old -; }
      run "jdk$v-$s-report" "$j/bin/java" \
        "-agentpath:$SHIM=report=$OUT/raw/jdk$v-$s-report.txt,legacy=$HPROF:cpu=times,file=$OUT/raw/jdk$v-$s.txt" \
        -cp "$CP" MethodCalls 1000000
      echo "  where the time goes (report=, one more run: $OUT/raw/jdk$v-$s-report.txt):"
      sed -n '/^Time (wall clock/,/^summary:/p' "$OUT/raw/jdk$v-$s-report.txt" | grep -v '^summary:' | sed 's/^/  /'
      ;;
    hprof|hprof4)
      wl=(Sites 40)
      [ "$s" = hprof4 ] && wl=(Sites 20 4)
      echo "--- JDK $v / $s: ${wl[*]} with HPROF heap=sites, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
      rounds "$s" "$j" "$v" none=none \
        "hprof=-agentpath:$SHIM=legacy=$HPROF:heap=sites,file=$OUT/raw/jdk$v-$s.txt" \
        "native=-agentpath:$AG/libnsites.so" -- "${wl[@]}"
      table "$s" "$v" hprof none 3
      table "$s" "$v" native none -
      table "$s" "$v" hprof native -
      run "jdk$v-$s-report" "$j/bin/java" \
        "-agentpath:$SHIM=report=$OUT/raw/jdk$v-$s-report.txt,legacy=$HPROF:heap=sites,file=$OUT/raw/jdk$v-$s.txt" \
        -cp "$CP" "${wl[@]}"
      echo "  where the time goes (report=, one more run: $OUT/raw/jdk$v-$s-report.txt):"
      sed -n '/^Time (wall clock/,/^summary:/p' "$OUT/raw/jdk$v-$s-report.txt" | grep -v '^summary:' | sed 's/^/  /'
      ;;
    *) echo "calls.sh: unknown scenario $s" >&2; exit 2 ;;
    esac
  done
done
echo
echo "raw output in $OUT"
exit $FAILED
