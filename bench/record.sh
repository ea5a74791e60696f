#!/bin/bash
# record.sh — what record=PATH costs: the same run with and without it, side by side.
#
#   bench/record.sh          (after make; builds the bench agents and workloads itself)
#
# The run: MethodCalls (bench/java) with bench/agents/bmethods.c, a JVMPI agent that
# enables METHOD_ENTRY and METHOD_EXIT and counts them, through the shim: "plain" without
# record=, "record" with record=FILE (FILE on the build directory's disk, deleted after
# each run). A round runs both, back to back, the order alternating from round to round.
# Three times per run: elapsed_ms, measured inside Java around the calls; wall, the whole
# JVM from start to exit (the recording's last writes at exit included); cpu, user + system
# CPU time of the whole process (the writer thread included). Ratios are record/plain per
# round; the medians, with min..max, are printed per JDK. Goal: record/plain <= 1.5 on
# wall time. The first record run of each JDK is read back with jvmpitrace stats (records,
# bytes per record) and checked with jvmpitrace check.
#
# Environment:
#   BENCH_JDKS="DIR ..."   JDK homes (default: tools/find-jdk.sh all)
#   BENCH_ROUNDS=N         rounds per JDK (default 7)
#   BENCH_CALLS=N          calls of the workload (default 5000000: 10 M method events)
# Output: build/bench/record-<date>/ (results.tsv: jdk round config elapsed_ms wall_ms
# cpu_ms bytes; raw/: each run's output), and the summary on stdout.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
make -s -f bench/Makefile >/dev/null || exit 2
[ -x build/jvmpitrace ] && [ -f build/libjvmpishim.so ] || { echo "record.sh: run make first" >&2; exit 2; }
OUT=$ROOT/build/bench/record-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ROUNDS=${BENCH_ROUNDS:-7}
CALLS=${BENCH_CALLS:-5000000}
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
SHIM=$ROOT/build/libjvmpishim.so
AGENT=$ROOT/build/bench/agents/libbmethods.so
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "record.sh: needs $TIME (Debian: time)" >&2; exit 2; }
rc=0

ms_now() { date +%s%3N; }

run_one() { # JDK LABEL ROUND CONFIG
  local j=$1 v=$2 r=$3 c=$4 base="$OUT/raw/$2-r$3-$4" rec="$OUT/run.jvmpirec" opt=""
  [ "$c" = record ] && opt="record=$rec,"
  rm -f "$rec"
  local t0 t1
  t0=$(ms_now)
  "$TIME" -f "%U %S" -o "$base.time" "$j/bin/java" "-agentpath:$SHIM=${opt}legacy=$AGENT" \
    -cp "$ROOT/build/bench/classes" MethodCalls "$CALLS" >"$base.out" 2>"$base.err"
  local st=$?
  t1=$(ms_now)
  local el cpu bytes=0
  el=$(sed -n 's/.* elapsed_ms=\([0-9]*\).*/\1/p' "$base.out")
  cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$base.time" 2>/dev/null)
  if [ $st -ne 0 ] || [ -z "$el" ] || ! grep -q '^bmethods: entries=' "$base.out"; then
    echo "  !! $v round $r $c failed (status $st): $base.err"
    rc=1
    return
  fi
  if [ "$c" = record ]; then
    bytes=$(stat -c %s "$rec")
    if [ ! -f "$OUT/$v.stats" ]; then
      build/jvmpitrace stats "$rec" >"$OUT/$v.stats" 2>&1
      build/jvmpitrace check "$rec" >"$OUT/$v.check" 2>&1 || { echo "  !! $v: jvmpitrace check failed: $OUT/$v.check"; rc=1; }
    fi
    rm -f "$rec"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$c" "$el" "$((t1 - t0))" "$cpu" "$bytes" >>"$OUT/results.tsv"
}

echo "record.sh: MethodCalls $CALLS with bmethods (METHOD_ENTRY/EXIT), shim without and with record=, $ROUNDS rounds"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
while IFS= read -r j; do
  [ -n "$j" ] || continue
  v=jdk$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release")
  echo "$v: $("$j/bin/java" -version 2>&1 | sed -n '2s/.*(build \(.*\))$/\1/p' | head -n 1)"
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then order="plain record"; else order="record plain"; fi
    for c in $order; do run_one "$j" "$v" "$r" "$c"; done
  done
done <<<"$JDKS"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "ratios record/plain, median [min..max] of per-round ratios; goal: wall <= 1.5"
awk -F'\t' '
  function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                 return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function rng(a, n,   i, lo, hi) { lo = a[1]; hi = a[1]; for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
                                  return sprintf("%.3f..%.3f", lo, hi) }
  { key = $1 SUBSEP $2; el[key, $3] = $4; wall[key, $3] = $5; cpu[key, $3] = $6; if ($3 == "record") bytes[$1] = $7; jdks[$1] = 1; rounds[key] = 1 }
  END {
    printf "%-6s %6s %22s %22s %22s %10s %10s %8s\n", "JDK", "rounds", "elapsed (in Java)", "wall (whole JVM)", "cpu (process)", "plain ms", "record ms", "file MB"
    for (v in jdks) {
      n = 0; delete re; delete rw; delete rc; delete pw; delete cw
      for (k in rounds) { split(k, p, SUBSEP); if (p[1] != v) continue
        if (!((k, "plain") in el) || !((k, "record") in el) || el[k, "plain"] <= 0) continue
        n++; re[n] = el[k, "record"] / el[k, "plain"]; rw[n] = wall[k, "record"] / wall[k, "plain"]
        rc[n] = cpu[k, "record"] / cpu[k, "plain"]; pw[n] = wall[k, "plain"]; cw[n] = wall[k, "record"] }
      if (n == 0) continue
      mw = med(rw, n)
      printf "%-6s %6d %8.3f [%s] %8.3f [%s] %8.3f [%s] %10.0f %10.0f %8.1f   %s\n", v, n, med(re, n), rng(re, n), mw, rng(rw, n),
             med(rc, n), rng(rc, n), med(pw, n), med(cw, n), bytes[v] / 1048576, (mw <= 1.5 ? "goal met" : "goal MISSED") } }' "$OUT/results.tsv" | tee "$OUT/summary.txt"
for s in "$OUT"/*.stats; do
  [ -f "$s" ] || continue
  v=$(basename "$s" .stats)
  echo "$v: $(grep '^records ' "$s"); $(tail -n 1 "$OUT/$v.check")"
done
echo "results: $OUT"
exit $rc
