#!/bin/bash
# run.sh — the benchmark harness behind `make bench` (which runs `make all` first).
#
#   bench/run.sh                     every scenario on every JDK tools/find-jdk.sh lists
#   bench/run.sh --summarize DIR     print the report again from DIR/results.tsv
#
# The object-id scenarios (ensure, dumpask, badids at 100 k-4 M live objects) are in
# bench/ids.sh, run on their own (docs/performance.md, "Object ids").
#
# Environment:
#   BENCH_JDKS="DIR ..."     JDK homes to run on (default: tools/find-jdk.sh all)
#   BENCH_SCENARIOS="..."    subset of: idle methods allocs threads dump calltrace scaling
#                            methods2 (not in the default set)
#                            (default: all of them; scaling = threads1 threads2 threads4 threads8)
#   BENCH_QUICK=1            2-3 rounds per scenario instead of 5-15 (a smoke test)
#   BENCH_ROUNDS_<SCEN>=N    rounds of one scenario, e.g. BENCH_ROUNDS_IDLE=25
#                            (BENCH_ROUNDS_SCALING=N: each of threads1..threads8)
#   BENCH_JAVA_OPTS="..."    extra JVM options for every run (default: none)
#   BENCH_TIMEOUT=S          per-run timeout in seconds (default 300); a run that hits it is a hang
#
# Each scenario runs one workload (bench/java) under three configurations: no agent, the shim
# with a JVMPI agent (bench/agents/b*.c), and a native JVMTI agent doing the same job
# (bench/agents/n*.c). A round runs every configuration once, back to back; the order rotates
# from round to round (A B C, B C A, C A B, ...) so no configuration always runs first. The
# time used is the workload's own elapsed_ms, measured inside Java around its loop (JVM
# start-up and exit excluded); wall time is the fallback. Ratios are medians of per-round
# ratios, with IQR and min..max. The allocs scenario also prints the shim's memory per live
# tracked object (JVMPISHIM_MEMSTATS=1 in the shim's runs; see memstats_scenario).
#
# The dump scenario is different: HeapBig builds ~2 M live objects and waits. Configuration
# bdump is the shim with bench/agents/bdump.c, which takes a level-2 JVMPI HEAP_DUMP when the
# harness sends SIGQUIT (DATA_DUMP_REQUEST) and prints the time RequestEvent took; jcmd is the
# same workload without an agent, dumped with `jcmd PID GC.heap_dump -all=false FILE`, timed
# by the VM ("Heap dump file created [N bytes in X secs]") and from outside (wall time of
# the jcmd command); for all three, the CPU time the dumping JVM used over the dump (from
# /proc/PID/stat before and after: the load of other processes does not count); ndump is the floor: a native JVMTI agent (bench/agents/ndump.c) that on
# SIGQUIT runs only a FollowReferences walk tagging every untagged object and prints its time
# as bdump does. A round is one JVM of each, order rotating; the .hprof file is deleted right
# after each run. The goal compares the in-VM dump times (shim/jcmd); floor/jcmd and
# shim/floor are printed beside it.
#
# Output: build/bench/<date-time>/ (build/bench/latest points to the newest):
#   report.txt    everything printed here
#   results.tsv   one line per run: jdk scenario round config status elapsed_ms cpu_ms wall_ms
#                 process_cpu_s counts (dump: elapsed_ms = the in-VM dump time, wall_ms = the
#                 dump seen from outside: SIGQUIT to the DUMP_MS line, or the jcmd command;
#                 cpu_ms = the JVM's CPU time over that span, 10 ms resolution;
#                 counts = bytes=..., records=... from the shim's progress line)
#   summary.tsv   the final table
#   raw/jdkN/SCENARIO/rNN-CONFIG.{cmd,out,err,time}   each run's command line and output
#                 (dump: also rNN-jcmd.jcmd, the jcmd command line and its output)
#
# Exit status: 0 when every run completed (goals met or missed: a benchmark is not a test);
# 1 when a run crashed, hung (timeout) or printed no result (dump: a dump that failed); 3 when
# the shim's and the native agent's event counts disagree (more than 2x) or fall below what
# the workload does (dump: the shim's dump bytes against the .hprof size and the minimum for
# 2 M object records).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BENCH=$ROOT/build/bench

# ---- scenarios: workload, arguments, configurations (none shim native), rounds, goal ----
# goal: shim_none | shim_native | shim_jcmd | none ; countkey: the agent count compared (and
# the minimum the workload itself produces). A two-configuration scenario (dump) lists the
# shim configuration first and its comparison second.
scenario() {
  MEMSTATS=""   # 1: the shim prints its memory per tracked object (JVMPISHIM_MEMSTATS)
  case "$1" in
    idle)    WL=Idle;        WARGS="30000000";      CONFS="none bnothing nnothing"; ROUNDS=15
             GOAL=shim_none;   GOALMAX=1.02; COUNTKEY="";        EXPECT=""
             DESC="Idle 30000000: calls + allocation + synchronized, agent enables no event" ;;
    methods) WL=MethodCalls; WARGS="5000000";       CONFS="none bmethods nmethods"; ROUNDS=5
             GOAL=shim_native; GOALMAX=0.5;  COUNTKEY=entries; EXPECT=5000000
             DESC="MethodCalls 5000000: 5 M megamorphic calls, METHOD_ENTRY/EXIT counted" ;;
    allocs)  WL=Alloc;       WARGS="4000000";       CONFS="none ballocs nallocs";   ROUNDS=5
             GOAL=shim_native; GOALMAX=1.2;  COUNTKEY=allocs;  EXPECT=4000000
             DESC="Alloc 4000000: 4 M small objects, OBJECT_ALLOC/FREE + GC counted"
             MEMSTATS=1 ;;
    # methods2: METHOD_ENTRY2 (receiver ids) + EXIT against MethodEntry + GetLocalInstance +
    # tag (nmethods2.c); constructors included (MethodCalls allocates none in its loop).
    methods2) WL=MethodCalls; WARGS="1000000";      CONFS="none bmethods2 nmethods2"; ROUNDS=5
             GOAL=shim_native; GOALMAX=0.5;  COUNTKEY=entries; EXPECT=1000000
             DESC="MethodCalls 1000000: 1 M megamorphic calls, METHOD_ENTRY2 (receiver ids)/EXIT counted" ;;
    threads) WL=Threads;     WARGS="32 100000";     CONFS="none bmethods nmethods"; ROUNDS=5
             GOAL=none;        GOALMAX="";   COUNTKEY=entries; EXPECT=3200000
             DESC="Threads 32 100000: 32 threads x 100 k calls at once, METHOD_ENTRY/EXIT counted" ;;
    # EXPECT: the smallest level-2 dump of the workload's own objects: 1 M Node records
    # (u1 type, id, class id, u4 length, id + id + int = 41 bytes) + 1 M Leaf records (29).
    dump)    WL=HeapBig;     WARGS="1000000";       CONFS="bdump jcmd ndump";       ROUNDS=5
             GOAL=shim_jcmd;   GOALMAX=1.5;  COUNTKEY=bytes;   EXPECT=70000000
             DESC="HeapBig 1000000: 2 M live objects, level-2 JVMPI HEAP_DUMP vs jcmd GC.heap_dump" ;;
    # calltrace: a JVMPI CPU sampler (bct: SuspendThread + GetCallTrace depth 64 on 8
    # threads held 100 frames deep, from a CreateSystemThread thread) against its native
    # JVMTI port (nct: GetStackTrace + its own per-method line cache). Only the trace calls
    # are timed, by the agents; counts carry traces=, short= and unstable= (must be 0) and
    # sig=, a hash of the parked threads' frames that both agents must print alike.
    calltrace) WL=CallTrace; WARGS="6 2 100";     CONFS="bct nct";                ROUNDS=5
             GOAL=shim_native; GOALMAX=1.3;  COUNTKEY=traces;  EXPECT=32000
             DESC="CallTrace 6 2 100: 8 threads 100 frames deep, 4000 ticks of GetCallTrace(64) each" ;;
    # scaling: the threads workload at 1, 2, 4 and 8 threads with the same 3.2 M calls in
    # all (threads is the 32-thread point); print_scaling tabulates them.
    threads1|threads2|threads4|threads8)
             local nt=${1#threads}
             WL=Threads;     WARGS="$nt $((3200000 / nt))"; CONFS="none bmethods nmethods"
             ROUNDS=${BENCH_ROUNDS_SCALING:-3}
             GOAL=none;        GOALMAX="";   COUNTKEY=entries; EXPECT=3200000
             DESC="Threads $nt $((3200000 / nt)): $nt thread(s), 3.2 M calls in all, METHOD_ENTRY/EXIT counted" ;;
    *) echo "run.sh: unknown scenario $1" >&2; return 1 ;;
  esac
  local up; up=$(echo "$1" | tr "[:lower:]" "[:upper:]")
  local override; eval "override=\${BENCH_ROUNDS_$up:-}"
  if [ -n "$override" ]; then ROUNDS=$override
  elif [ "${BENCH_QUICK:-0}" = 1 ]; then [ "$1" = idle ] && ROUNDS=3 || ROUNDS=2
  fi
  return 0
}

jdk_major() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null; }
jdk_desc() { "$1/bin/java" -version 2>&1 | sed -n '2s/.*(build \(.*\))$/\1/p' | head -n 1; }

summarize_scenario() { # DIR JDKMAJOR SCEN
  local dir=$1 v=$2 s=$3
  scenario "$s" || return 1
  # shellcheck disable=SC2086
  set -- $CONFS
  local floor=""
  [ "$s" = dump ] && [ $# = 3 ] && { floor=$3; set -- "$1" "$2"; }  # dump: the floor is third
  [ $# = 2 ] && set -- "" "$1" "$2"   # shim, comparison: no no-agent configuration
  awk -F'\t' -v jdk="$v" -v scen="$s" -v none="$1" -v shim="$2" -v native="$3" -v floor="$floor" \
      -v goal="$GOAL" -v goalmax="$GOALMAX" -v countkey="$COUNTKEY" -v expect="$EXPECT" \
      -v summary="$dir/summary.tsv" -v checks="$dir/checks.txt" \
      -f "$ROOT/bench/summarize.awk" "$dir/results.tsv"
}

# allocs: the shim's memory per live tracked object, per round. "own" is what the shim
# itself holds in proportion to objects (its JVMPISHIM_MEMSTATS line at VMDeath: the free
# queue at its peak and oversized sizes); "malloc diff" is the process's malloc in use at
# VMDeath under the shim minus under the native agent of the same round (both tag every
# object; the JVM's tag storage is in both), divided by the shim's live tracked objects.
memstats_scenario() { # DIR JDKMAJOR
  local dir=$1 v=$2 d=$1/raw/jdk$2/allocs f r
  for f in "$d"/r*-ballocs.err; do
    [ -f "$f" ] || continue
    r=${f##*/}; r=${r%%-*}
    echo "$(grep -a '^jvmpishim: memstats:' "$f" | head -n 1) $(grep -a '^nallocs-mem:' "$d/$r-nallocs.out" 2>/dev/null | head -n 1 | sed 's/malloc_in_use/native_malloc/')"
  done | awk -v jdk="$v" -v out="$dir/memstats.tsv" '
    function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                   return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { delete kv; for (i = 1; i <= NF; i++) if (split($i, p, "=") == 2) kv[p[1]] = p[2]
      if (!("live_objects" in kv) || kv["live_objects"] <= 0) next
      n++; own[n] = kv["own_peak_per_object"]; live[n] = kv["live_objects"]
      if ("native_malloc" in kv) { m++; diff[m] = (kv["malloc_in_use"] - kv["native_malloc"]) / kv["live_objects"] } }
    END { if (n == 0) { print "  memory: no JVMPISHIM_MEMSTATS line"; exit }
          lo = own[1]; hi = own[1]; for (i = 1; i <= n; i++) { if (own[i] < lo) lo = own[i]; if (own[i] > hi) hi = own[i] }
          om = med(own, n); lm = med(live, n)
          line = sprintf("%s\tallocs\t%d\t%.0f\t%.3f\t%.3f..%.3f", jdk, n, lm, om, lo, hi)
          if (m > 0) { dlo = diff[1]; dhi = diff[1]; for (i = 1; i <= m; i++) { if (diff[i] < dlo) dlo = diff[i]; if (diff[i] > dhi) dhi = diff[i] }
                       dm = med(diff, m); line = line sprintf("\t%.2f\t%.2f..%.2f", dm, dlo, dhi) }
          else line = line "\t-\t-"
          print line >> out
          printf "  memory per live tracked object (%d rounds, %.0f live): shim own %.3f B [%.3f..%.3f]; malloc shim-native %s B [%s]\n", n, lm, om, lo, hi, (m ? sprintf("%.2f", dm) : "-"), (m ? sprintf("%.2f..%.2f", dlo, dhi) : "-") }'
}

# dump: the second level-2 dump of the same heap (bdump takes two per SIGQUIT; every object
# has its id by then) against jcmd GC.heap_dump, as a median of per-round ratios.
second_dump_scenario() { # DIR JDKMAJOR
  awk -F'\t' -v jdk="$2" -v out="$1/second.tsv" '
    function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                   return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    $1 == jdk && $2 == "dump" && $5 == "ok" {
      if ($4 == "jcmd") jc[$3] = $6
      if ($4 == "bdump" && match($10, /second_ms=[0-9]+/)) { sec[$3] = substr($10, RSTART + 10, RLENGTH - 10); first[$3] = $6 } }
    END { n = 0; for (r in sec) if ((r in jc) && jc[r] > 0) { n++; q[n] = sec[r] / jc[r]; s1[n] = sec[r]; f1[n] = first[r] / jc[r] }
          if (n == 0) { print "  second dump: no round with both a second dump and jcmd"; exit }
          ms = med(s1, n); qm = med(q, n); fm = med(f1, n)
          printf "%s\tdump2\t%d\t%.0f\t%.3f\t%.3f\n", jdk, n, ms, qm, fm >> out
          printf "  second dump of the same heap (%d rounds): %.0f ms, second/jcmd %.3f (first/jcmd %.3f; goal second/jcmd <= 1.5)\n", n, ms, qm, fm }' "$1/results.tsv"
}

print_summary() { # DIR
  local dir=$1
  echo
  echo "==== summary ===="
  echo "ms: median in-Java elapsed ms; ratios: median of per-round ratios of elapsed ms [IQR];"
  echo "cpu: the same ratio of the workload threads' CPU time (less disturbed by other load)"
  echo "dump: shim ms = level-2 JVMPI HEAP_DUMP (RequestEvent, timed in the agent); native ms ="
  echo "      jcmd GC.heap_dump (the VM's own dump time); shim/native = shim/jcmd; counts = dump size check;"
  echo "      no-agent ms = the floor (ndump: FollowReferences + tagging only), shim/no-agent = shim/floor;
      cpu columns: the dumping JVM's CPU time, shim/floor and shim/jcmd"
  { printf 'JDK\tscenario\tno-agent ms\tshim ms\tnative ms\tshim/no-agent\t[IQR]\tshim/native\t[IQR]\tcpu shim/no-agent\tcpu shim/native\tgoal (on elapsed)\tresult\tcounts\n'
    cat "$dir/summary.tsv"; } | column -t -s "$(printf '\t')" 2>/dev/null || cat "$dir/summary.tsv"
  if [ -s "$dir/second.tsv" ]; then
    echo
    echo "second dump: bdump's second level-2 HEAP_DUMP of the same heap (objects already tagged);"
    echo "             ratios are medians of per-round ratios against jcmd GC.heap_dump (goal <= 1.5)"
    { printf 'JDK\tscenario\trounds\tsecond dump ms\tsecond/jcmd\tfirst/jcmd\n'
      cat "$dir/second.tsv"; } | column -t -s "$(printf '\t')" 2>/dev/null || cat "$dir/second.tsv"
  fi
  if [ -s "$dir/memstats.tsv" ]; then
    echo
    echo "memory: bytes per live tracked object; own = what the shim holds per object (goal <= 24),"
    echo "        malloc diff = process malloc in use at VMDeath, shim minus native agent, per object"
    { printf 'JDK\tscenario\trounds\tlive objects\town B/object\t[min..max]\tmalloc diff B/object\t[min..max]\n'
      cat "$dir/memstats.tsv"; } | column -t -s "$(printf '\t')" 2>/dev/null || cat "$dir/memstats.tsv"
  fi
  print_scaling "$dir"
}

# The thread-scaling table: threads1..threads8 and threads (32 threads), all 3.2 M calls.
# Per event = 2 events per call (METHOD_ENTRY + EXIT); wall ns is elapsed time per event,
# cpu ns the workload threads' CPU time per event (summed over threads). With no lock or
# counter shared by the threads, cpu ns per event stays flat as threads are added.
print_scaling() { # DIR
  local dir=$1
  grep -Eq $'\tthreads[1248]\t' "$dir/results.tsv" || return 0
  echo
  echo "==== thread scaling (Threads workload, 3.2 M calls in all; medians over rounds) ===="
  awk -F'\t' '
    function med(k,    a, n, i, j, t) {
      n = split(v[k], a, " ")
      for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      if (n == 0) return ""
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $5 == "ok" && ($2 ~ /^threads[1248]$/ || $2 == "threads") {
      nt = $2 == "threads" ? 32 : substr($2, 8) + 0
      k = $1 SUBSEP nt
      seen[k] = 1; jdks[$1] = 1; nts[nt] = 1
      v[k SUBSEP $4 SUBSEP "ms"] = v[k SUBSEP $4 SUBSEP "ms"] " " $6
      if ($7 != "-") v[k SUBSEP $4 SUBSEP "cpu"] = v[k SUBSEP $4 SUBSEP "cpu"] " " $7
      ms[$1, nt, $3, $4] = $6; cpu[$1, nt, $3, $4] = $7; rounds[k] = $3 > rounds[k] ? $3 : rounds[k]
    }
    END {
      printf "%-4s %-7s %9s %9s %9s %10s %10s %10s %10s %12s %12s\n", "JDK", "threads", "none ms",
             "shim ms", "native ms", "shim/nat", "cpu s/n", "shim ns/ev", "nat ns/ev", "shim cpu/ev", "nat cpu/ev"
      for (j = 1; j <= 99; j++) if (j in jdks)
        for (nt = 1; nt <= 32; nt++) if ((j SUBSEP nt) in seen) {
          k = j SUBSEP nt
          r = ""; rc = ""
          for (x = 1; x <= rounds[k]; x++) {
            if (((j, nt, x, "bmethods") in ms) && ((j, nt, x, "nmethods") in ms) && ms[j, nt, x, "nmethods"] > 0)
              r = r " " ms[j, nt, x, "bmethods"] / ms[j, nt, x, "nmethods"]
            if (((j, nt, x, "bmethods") in cpu) && ((j, nt, x, "nmethods") in cpu) && cpu[j, nt, x, "nmethods"] > 0 && cpu[j, nt, x, "bmethods"] != "-")
              rc = rc " " cpu[j, nt, x, "bmethods"] / cpu[j, nt, x, "nmethods"]
          }
          v["r"] = r; v["rc"] = rc
          sm = med(k SUBSEP "bmethods" SUBSEP "ms"); nm = med(k SUBSEP "nmethods" SUBSEP "ms")
          sc = med(k SUBSEP "bmethods" SUBSEP "cpu"); nc = med(k SUBSEP "nmethods" SUBSEP "cpu")
          printf "%-4s %-7s %9s %9s %9s %10s %10s %10s %10s %12s %12s\n", j, nt, med(k SUBSEP "none" SUBSEP "ms"),
                 sm, nm, med("r") == "" ? "-" : sprintf("%.3f", med("r")), med("rc") == "" ? "-" : sprintf("%.3f", med("rc")),
                 sm == "" ? "-" : sprintf("%.0f", sm * 1e6 / 6.4e6), nm == "" ? "-" : sprintf("%.0f", nm * 1e6 / 6.4e6),
                 sc == "" ? "-" : sprintf("%.0f", sc * 1e6 / 6.4e6), nc == "" ? "-" : sprintf("%.0f", nc * 1e6 / 6.4e6)
        }
      print "(shim/nat, cpu s/n: medians of per-round ratios of elapsed and of CPU ms; ns/ev: median ms over"
      print " 6.4 M events (3.2 M calls x entry + exit); cpu/ev: the workload threads CPU time, summed, per event)"
    }' "$dir/results.tsv"
}

if [ "${1:-}" = --summarize ]; then
  dir=$(readlink -f "${2:-$BENCH/latest}")
  [ -f "$dir/results.tsv" ] || { echo "run.sh: no $dir/results.tsv" >&2; exit 2; }
  : >"$dir/summary.tsv"; : >"$dir/checks.txt"; : >"$dir/memstats.tsv"; : >"$dir/second.tsv"
  for v in $(cut -f1 "$dir/results.tsv" | sort -un); do
    for s in $(awk -F'\t' -v v="$v" '$1==v{print $2}' "$dir/results.tsv" | awk '!seen[$0]++'); do
      echo "--- JDK $v / $s"
      summarize_scenario "$dir" "$v" "$s"
      [ "$s" = dump ] && second_dump_scenario "$dir" "$v"
      [ -n "$MEMSTATS" ] && memstats_scenario "$dir" "$v"
    done
  done
  print_summary "$dir"
  exit 0
fi

# ---- build ----
BUILD_JDK=${JDK:-$(tools/find-jdk.sh build)}
[ -n "$BUILD_JDK" ] || { echo "run.sh: no JDK to build with (tools/find-jdk.sh build)" >&2; exit 2; }
[ -f build/libjvmpishim.so ] || { echo "run.sh: build/libjvmpishim.so missing: run make all" >&2; exit 2; }
make -s -f bench/Makefile JDK="$BUILD_JDK" || { echo "run.sh: building the benchmarks failed" >&2; exit 2; }

JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
SCENARIOS=${BENCH_SCENARIOS:-idle methods allocs threads dump calltrace scaling}
SCENARIOS=$(echo "$SCENARIOS" | sed 's/\bscaling\b/threads1 threads2 threads4 threads8/')
TIMEOUT=${BENCH_TIMEOUT:-300}
JOPTS=${BENCH_JAVA_OPTS:-}
SHIM=$ROOT/build/libjvmpishim.so
AG=$BENCH/agents
CLASSES=$BENCH/classes
TIME=/usr/bin/time; [ -x "$TIME" ] || TIME=""

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$BENCH/$STAMP
mkdir -p "$OUT/raw"
ln -sfn "$STAMP" "$BENCH/latest"

config_args() { # CONFIG -> JVM agent arguments
  case "$1" in
    none|jcmd) ;;
    b*) echo "-agentpath:$SHIM=legacy=$AG/lib$1.so" ;;
    n*) echo "-agentpath:$AG/lib$1.so" ;;
  esac
}

CRASHES=0
# run_one JDKHOME MAJOR SCEN ROUND CONFIG -> prints the elapsed ms (or FAIL), appends to results.tsv
run_one() {
  local j=$1 v=$2 s=$3 r=$4 c=$5
  local d=$OUT/raw/jdk$v/$s
  mkdir -p "$d"
  local base; base=$d/r$(printf %02d "$r")-$c
  local -a cmd=("$j/bin/java")
  # shellcheck disable=SC2206
  [ -n "$JOPTS" ] && cmd+=($JOPTS)
  local a; a=$(config_args "$c"); [ -n "$a" ] && cmd+=("$a")
  # shellcheck disable=SC2206
  cmd+=(-cp "$CLASSES" "$WL" $WARGS)
  printf '%q ' "${cmd[@]}" >"$base.cmd"; echo >>"$base.cmd"
  local t0 t1 rc
  t0=$(date +%s%N)
  if [ -n "$TIME" ]; then
    (export JVMPISHIM_MEMSTATS="$MEMSTATS"; cd "$d" && "$TIME" -f "%U %S" -o "$base.time" timeout -k 10 "$TIMEOUT" "${cmd[@]}" >"$base.out" 2>"$base.err")
  else
    (export JVMPISHIM_MEMSTATS="$MEMSTATS"; cd "$d" && timeout -k 10 "$TIMEOUT" "${cmd[@]}" >"$base.out" 2>"$base.err")
  fi
  rc=$?
  t1=$(date +%s%N)
  local wall=$(( (t1 - t0) / 1000000 ))
  local ms; ms=$(sed -n 's/^BENCH .*elapsed_ms=\([0-9]*\).*/\1/p' "$base.out" | head -n 1)
  local tcpu; tcpu=$(sed -n 's/^BENCH .*cpu_ms=\([0-9]*\).*/\1/p' "$base.out" | head -n 1)
  [ -n "$tcpu" ] || tcpu="-"
  local cpu="-"
  if [ -n "$TIME" ] && [ -f "$base.time" ]; then
    cpu=$(awk 'NF==2 && $1 ~ /^[0-9.]+$/ {printf "%.2f", $1+$2}' "$base.time"); [ -n "$cpu" ] || cpu="-"
  fi
  local counts
  counts=$(sed -n 's/^\(bmethods2\|nmethods2\|bmethods\|nmethods\|ballocs\|nallocs\|bct\|nct\): //p' "$base.out" | head -n 1 | tr ' ' ',')
  [ -n "$counts" ] || counts="-"
  local status=ok
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status="hang(timeout ${TIMEOUT}s)"
  elif [ $rc -ne 0 ]; then status="crash(rc=$rc)"
  elif grep -q 'A fatal error has been detected' "$base.out" "$base.err" 2>/dev/null; then status="crash(hs_err)"
  elif [ -z "$ms" ]; then status="noresult"
  fi
  # An agent that counts must have printed its counts at shutdown (JVM_SHUT_DOWN / VMDeath).
  if [ "$status" = ok ] && [ -n "$COUNTKEY" ] && [ "$c" != none ] && [ "$counts" = - ]; then
    status="nocounts"
  fi
  [ -n "$ms" ] || ms=$wall
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$s" "$r" "$c" "$status" "$ms" "$tcpu" "$wall" \
    "$cpu" "$counts" >>"$OUT/results.tsv"
  if [ "$status" != ok ]; then
    CRASHES=$((CRASHES + 1))
    {
      echo "  !! $status: JDK $v $s round $r $c (exit status $rc, wall ${wall} ms)"
      echo "  !! command: $(cat "$base.cmd")"
      echo "  !! stdout (last 10 lines):"; tail -n 10 "$base.out" | sed 's/^/  !!   /'
      echo "  !! stderr (last 20 lines):"; tail -n 20 "$base.err" | sed 's/^/  !!   /'
      ls "$d"/hs_err_pid*.log 2>/dev/null | sed 's/^/  !! hs_err: /'
    } >&2
    RUNRES="FAIL:$status"
  else
    RUNRES=$ms
  fi
}

# run_dump_one JDKHOME MAJOR SCEN ROUND CONFIG -> like run_one, for the dump scenario: starts
# HeapBig in the background, waits for READY, dumps (bdump: SIGQUIT, then the agent's DUMP_MS
# line; jcmd: jcmd GC.heap_dump), then releases the workload and waits for it to exit.
now_ns() { date +%s%N; }
# proc_ticks PID -> user + system CPU time of the JVM so far, in clock ticks (/proc/PID/stat)
TICKS=$(getconf CLK_TCK 2>/dev/null || echo 100)
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
run_dump_one() {
  local j=$1 v=$2 s=$3 r=$4 c=$5
  local d=$OUT/raw/jdk$v/$s
  mkdir -p "$d"
  local base; base=$d/r$(printf %02d "$r")-$c
  local trigger=$base.release hprof=$base.hprof
  rm -f "$trigger" "$hprof"
  local -a cmd=("$j/bin/java")
  # shellcheck disable=SC2206
  [ -n "$JOPTS" ] && cmd+=($JOPTS)
  local a; a=$(config_args "$c"); [ -n "$a" ] && cmd+=("$a")
  # shellcheck disable=SC2206
  cmd+=(-cp "$CLASSES" "$WL" $WARGS "$trigger")
  printf '%q ' "${cmd[@]}" >"$base.cmd"; echo >>"$base.cmd"
  : >"$base.out"; : >"$base.err"
  local t0 t1 rc bg
  t0=$(now_ns)
  if [ -n "$TIME" ]; then
    (cd "$d" && exec "$TIME" -f "%U %S" -o "$base.time" timeout -k 10 "$TIMEOUT" "${cmd[@]}" \
       >"$base.out" 2>"$base.err" </dev/null) &
  else
    (cd "$d" && exec timeout -k 10 "$TIMEOUT" "${cmd[@]}" >"$base.out" 2>"$base.err" </dev/null) &
  fi
  bg=$!
  local deadline=$(( $(now_ns) + TIMEOUT * 1000000000 ))
  local jpid="" status=ok why=""
  while :; do
    jpid=$(sed -n 's/^READY \([0-9][0-9]*\)$/\1/p' "$base.out" | head -n 1)
    [ -n "$jpid" ] && break
    kill -0 "$bg" 2>/dev/null || { why="exited before READY"; break; }
    [ "$(now_ns)" -lt "$deadline" ] || { status="hang(timeout ${TIMEOUT}s)"; why="no READY"; break; }
    sleep 0.05
  done
  local ms="" dwall="" counts="-" line k0="" k1="" dcpu="-"
  if [ -n "$jpid" ]; then
    if [ "$c" = jcmd ]; then
      local -a jc=("$j/bin/jcmd" "$jpid" GC.heap_dump -all=false "$hprof")
      { printf '%q ' "${jc[@]}"; echo; } >"$base.jcmd"
      local d0 d1 jrc
      d0=$(now_ns); k0=$(proc_ticks "$jpid")
      timeout -k 10 "$TIMEOUT" "${jc[@]}" >>"$base.jcmd" 2>&1
      jrc=$?
      d1=$(now_ns); k1=$(proc_ticks "$jpid")
      dwall=$(( (d1 - d0) / 1000000 ))
      echo "(exit status $jrc, wall ${dwall} ms)" >>"$base.jcmd"
      # "Heap dump file created [81466120 bytes in 0.304 secs]"
      line=$(grep -a 'Heap dump file created' "$base.jcmd" | head -n 1)
      local hb hs
      hb=$(echo "$line" | sed -n 's/.*\[\([0-9]*\) bytes in \([0-9.]*\) secs\].*/\1/p')
      hs=$(echo "$line" | sed -n 's/.*\[\([0-9]*\) bytes in \([0-9.]*\) secs\].*/\2/p')
      if [ $jrc -eq 124 ] || [ $jrc -eq 137 ]; then status="hang(jcmd timeout ${TIMEOUT}s)"
      elif [ $jrc -ne 0 ] || [ -z "$hb" ]; then status="dumpfail(jcmd rc=$jrc)"
      fi
      [ -n "$hs" ] && ms=$(awk -v x="$hs" 'BEGIN{printf "%.0f", x * 1000}')
      [ -n "$hb" ] && counts="bytes=$hb"
      [ -f "$hprof" ] && counts="$counts,file=$(stat -c %s "$hprof")"
      rm -f "$hprof"
    else
      local d0 d1
      d0=$(now_ns); k0=$(proc_ticks "$jpid")
      kill -QUIT "$jpid"
      while :; do
        line=$(grep -a '^DUMP_MS ' "$base.out" | head -n 1)
        [ -n "$line" ] && break
        kill -0 "$bg" 2>/dev/null || { why="exited during the dump"; break; }
        [ "$(now_ns)" -lt "$deadline" ] || { status="hang(timeout ${TIMEOUT}s)"; why="no DUMP_MS"; break; }
        sleep 0.01
      done
      d1=$(now_ns); k1=$(proc_ticks "$jpid")
      dwall=$(( (d1 - d0) / 1000000 ))
      # bdump then takes a second dump of the same heap: wait for it before the release.
      while [ -n "$line" ] && [ "$c" = bdump ] && ! grep -aq '^DUMP2_MS ' "$base.out"; do
        kill -0 "$bg" 2>/dev/null || break
        [ "$(now_ns)" -lt "$deadline" ] || { status="hang(timeout ${TIMEOUT}s)"; why="no DUMP2_MS"; break; }
        sleep 0.01
      done
      if [ -n "$line" ] && [ "$c" = ndump ]; then
        # DUMP_MS <ms> OBJECTS <newly tagged> REFS <callbacks> RC <JVMTI error>
        # shellcheck disable=SC2086
        set -- $line
        ms=$(awk -v x="$2" 'BEGIN{printf "%.0f", x}')
        counts="objects=$4,refs=$6"
        if ! { [ "$8" = 0 ] && [ "$4" -gt 0 ] 2>/dev/null; }; then
          status="dumpfail(RC $8, objects $4)"
        fi
      elif [ -n "$line" ]; then
        # DUMP_MS <ms> BYTES <n> TRACES <t> LEVEL <l> RC <rc>
        # shellcheck disable=SC2086
        set -- $line
        ms=$(awk -v x="$2" 'BEGIN{printf "%.0f", x}')
        counts="bytes=$4,traces=$6"
        if ! { [ "${10}" = 0 ] && [ "$8" = 2 ] && [ "$4" -gt 0 ] 2>/dev/null; }; then
          status="dumpfail(RC ${10}, level $8, bytes $4)"
        fi
        local rec
        rec=$(sed -n 's/^jvmpishim: heap dump level [0-9]*: \([0-9]*\) records in .*/\1/p' "$base.err" | head -n 1)
        [ -n "$rec" ] && counts="$counts,records=$rec"
        # DUMP2_MS <ms> BYTES <n> RC <rc>: the second dump of the same heap (bdump)
        local l2
        l2=$(grep -a '^DUMP2_MS ' "$base.out" | head -n 1)
        # shellcheck disable=SC2086
        [ -n "$l2" ] && set -- $l2 && [ "$6" = 0 ] && counts="$counts,second_ms=$(awk -v x="$2" 'BEGIN{printf "%.0f", x}')"
      fi
    fi
  fi
  # Release the workload (it checks the trigger file every 20 ms) and wait for it to exit.
  touch "$trigger"
  if [ "$status" != ok ] && [ -n "$jpid" ]; then kill -KILL "$jpid" 2>/dev/null; fi
  wait "$bg"; rc=$?
  t1=$(now_ns)
  rm -f "$trigger" "$hprof"
  local wall=$(( (t1 - t0) / 1000000 ))
  local cpu="-"
  if [ -n "$TIME" ] && [ -f "$base.time" ]; then
    cpu=$(awk 'NF==2 && $1 ~ /^[0-9.]+$/ {printf "%.2f", $1+$2}' "$base.time"); [ -n "$cpu" ] || cpu="-"
  fi
  if [ "$status" = ok ]; then
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status="hang(timeout ${TIMEOUT}s)"
    elif [ $rc -ne 0 ]; then status="crash(rc=$rc)"
    elif grep -q 'A fatal error has been detected' "$base.out" "$base.err" 2>/dev/null; then status="crash(hs_err)"
    elif [ -z "$ms" ] || ! grep -q '^DONE ' "$base.out"; then status="noresult${why:+($why)}"
    fi
  fi
  [ -n "$ms" ] || ms=${dwall:-$wall}
  [ -n "$dwall" ] || dwall=$wall
  [ -n "$k0" ] && [ -n "$k1" ] && dcpu=$(( (k1 - k0) * 1000 / TICKS ))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$s" "$r" "$c" "$status" "$ms" "$dcpu" "$dwall" \
    "$cpu" "$counts" >>"$OUT/results.tsv"
  if [ "$status" != ok ]; then
    CRASHES=$((CRASHES + 1))
    {
      echo "  !! $status: JDK $v $s round $r $c (exit status $rc, wall ${wall} ms${why:+, $why})"
      echo "  !! command: $(cat "$base.cmd")"
      [ -f "$base.jcmd" ] && { echo "  !! jcmd:"; sed 's/^/  !!   /' "$base.jcmd"; }
      echo "  !! stdout (last 10 lines):"; tail -n 10 "$base.out" | sed 's/^/  !!   /'
      echo "  !! stderr (last 20 lines):"; tail -n 20 "$base.err" | sed 's/^/  !!   /'
      ls "$d"/hs_err_pid*.log 2>/dev/null | sed 's/^/  !! hs_err: /'
    } >&2
    RUNRES="FAIL:$status"
  else
    RUNRES="$ms ms (outside $dwall)"
  fi
}

main() {
  local start; start=$(date +%s)
  echo "==== jvmpishim benchmarks ===="
  echo "date:     $(date '+%Y-%m-%d %H:%M:%S %Z')"
  echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(awk '/MemTotal/{printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15-min load average at start; the machine is shared)"
  echo "compiler: $(cc --version | head -n 1)"
  echo "shim:     build/libjvmpishim.so $(stat -c '%s bytes, built %y' "$SHIM" | cut -d. -f1), sha256 $(sha256sum "$SHIM" | cut -c1-16)"
  local j
  for j in $JDKS; do echo "JDK:      $(jdk_major "$j") = $j ($(jdk_desc "$j"))"; done
  echo "built with: $BUILD_JDK (agents: cc -std=gnu99 -Wall -Wextra -Werror -O2 -fPIC -shared)"
  echo "JVM options: ${JOPTS:-(none: JDK defaults)}; per-run timeout ${TIMEOUT}s"
  echo "raw output: $OUT"
  : >"$OUT/results.tsv"; : >"$OUT/summary.tsv"; : >"$OUT/checks.txt"; : >"$OUT/memstats.tsv"; : >"$OUT/second.tsv"
  for j in $JDKS; do
    local v; v=$(jdk_major "$j")
    # One throw-away run so the first measured run does not pay for a cold page cache.
    "$j/bin/java" -cp "$CLASSES" MethodCalls 1000000 >/dev/null 2>&1
    local s
    for s in $SCENARIOS; do
      scenario "$s" || continue
      local -a confs; read -r -a confs <<<"$CONFS"
      local n=${#confs[@]}
      echo
      echo "--- JDK $v / $s: $DESC; $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))"
      local sstart; sstart=$(date +%s)
      local r
      for r in $(seq 1 "$ROUNDS"); do
        local line k
        line="  round $(printf %2d "$r"):"
        for k in $(seq 0 $((n - 1))); do
          local c=${confs[$(( (k + r - 1) % n ))]}
          if [ "$s" = dump ]; then run_dump_one "$j" "$v" "$s" "$r" "$c"
          else run_one "$j" "$v" "$s" "$r" "$c"; fi
          line="$line $c $RUNRES |"
        done
        echo "${line% |}"
      done
      echo "  ($(( $(date +%s) - sstart )) s; load now $(cut -d' ' -f1 /proc/loadavg))"
      summarize_scenario "$OUT" "$v" "$s"
      [ "$s" = dump ] && second_dump_scenario "$OUT" "$v"
      [ -n "$MEMSTATS" ] && memstats_scenario "$OUT" "$v"
    done
  done
  print_summary "$OUT"
  echo
  echo "total runtime: $(( $(date +%s) - start )) s; raw output in $OUT"
  local nchk; nchk=$(grep -c . "$OUT/checks.txt")
  if [ "$CRASHES" -gt 0 ]; then
    echo "RESULT: $CRASHES run(s) crashed, hung or printed no result (see the !! lines and $OUT/raw)"
    return 1
  fi
  if [ "$nchk" -gt 0 ]; then
    echo "RESULT: event counts of the shim and the native agent disagree:"; sed 's/^/  /' "$OUT/checks.txt"
    return 3
  fi
  echo "RESULT: all runs completed (goal MISSes are results, not failures)"
  return 0
}

main 2>&1 | tee "$OUT/report.txt"
exit "${PIPESTATUS[0]}"
