#!/bin/bash
# vthreads.sh — what virtual threads as JVMPI threads cost (docs/performance.md, "Virtual
# threads"): time and memory of many short virtual threads under a counting agent.
#
#   bench/vthreads.sh            on every JDK tools/find-jdk.sh lists (those without virtual
#                                threads print a SKIPPED line for them)
#
# Environment: BENCH_JDKS (default: tools/find-jdk.sh all), BENCH_VT_TASKS (tasks per run,
# default 100000), BENCH_VT_LIVE (virtual threads alive at once for the memory runs, default
# 100000), BENCH_VT_ROUNDS (default 3), BENCH_TIMEOUT (per run, default 900 s).
#
# Time: bench/java/VtMany runs TASKS short tasks, each on a thread of its own that calls a few
# methods and yields once in the middle (a virtual thread unmounts there), in batches of 1000.
# Configurations, side by side, order rotating per round: virtual threads with no agent
# (vnone), with the shim and bench/agents/bvcount.c (a table per thread in JVMPI thread-local
# storage, METHOD_ENTRY/EXIT counted in it) as vthreads=threads (vshim) and vthreads=carriers
# (vcarr); the same agent with thread events only ("nomethods": THREAD_START/END and the
# thread-local storage) as vthreads=threads (vthr) and carriers (vthc); platform threads
# with no agent (pnone) and with the counting agent (pshim). Time is the
# workload's own elapsed_ms and cpu_ms (the process's CPU time, less disturbed by other load
# on the machine) around the timed pass; ratios are medians of per-round ratios.
# Memory: VtMany with LIVE virtual threads waiting at once, the agent with thread events only
# ("nomethods"), as vthreads=threads and vthreads=carriers; the agent prints the process's
# malloc in use at the collection the workload starts while they are alive and again once
# they ended. Per virtual thread: (threads - carriers) / LIVE at each point, medians over the
# rounds; beside it the shim's own record (JVMPISHIM_MEMSTATS: records_peak, record_bytes).
#
# Output: build/bench/vthreads-<date-time>/ (raw runs, results.tsv, report.txt).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
TASKS=${BENCH_VT_TASKS:-100000}
LIVE=${BENCH_VT_LIVE:-100000}
ROUNDS=${BENCH_VT_ROUNDS:-3}
TIMEOUT=${BENCH_TIMEOUT:-900}
make -s -f bench/Makefile JDK="${JDK:-$(tools/find-jdk.sh build)}" || { echo "vthreads.sh: building the benchmarks failed" >&2; exit 2; }
SHIM=$ROOT/build/libjvmpishim.so
AG=$ROOT/build/bench/agents/libbvcount.so
CP=$ROOT/build/bench/classes
[ -f "$SHIM" ] || { echo "vthreads.sh: run make first" >&2; exit 2; }
OUT=$ROOT/build/bench/vthreads-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
exec > >(tee "$OUT/report.txt") 2>&1
echo "vthreads.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(uptime | sed 's/.*load average: //'); $(nproc) CPUs"
echo "tasks=$TASKS live=$LIVE rounds=$ROUNDS"
: >"$OUT/results.tsv"
fail=0

run() { # NAME ARGS... -> $OUT/raw/NAME.{out,err}
  local name=$1; shift
  timeout -k 10 "$TIMEOUT" "$@" >"$OUT/raw/$name.out" 2>"$OUT/raw/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || { echo "  $name: rc=$rc (see $OUT/raw/$name.err)"; fail=1; }
}
val() { sed -n "s/.*[ ^]$2=\\([0-9.]*\\).*/\\1/p" "$OUT/raw/$1.out" | tail -n 1; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END { if (NR == 0) print "-"; else print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print ""; else printf "%.3f\n", a / b }'; }
# The malloc in use the agent printed at the first collection after MARKER (a line of VtMany).
mem_after() { awk -v m="$2" 'index($0, m) == 1 { on = 1; next } on && /^bvcount-mem:/ { sub(/.*malloc_in_use=/, ""); print; exit }' "$OUT/raw/$1.out"; }

for j in $JDKS; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release")
  J=$j/bin/java
  if "$J" -cp "$CP" VtMany virtual 1 | grep -q 'no virtual threads'; then
    echo "SKIPPED jdk$v: no virtual threads on this JVM"
    continue
  fi
  echo
  echo "==== jdk$v: $TASKS short tasks, one thread each ===="
  confs="vnone vshim vcarr vthr vthc pnone pshim"
  declare -A el cpu
  for r in $(seq 1 "$ROUNDS"); do
    set -- $confs
    for _ in $(seq 2 "$r"); do set -- "${@:2}" "$1"; done  # rotate the order per round
    for c in "$@"; do
      name=jdk$v-r$r-$c
      case $c in
      vnone) run "$name" "$J" -cp "$CP" VtMany virtual "$TASKS" ;;
      vshim) run "$name" "$J" "-agentpath:$SHIM=legacy=$AG" -cp "$CP" VtMany virtual "$TASKS" ;;
      vcarr) run "$name" "$J" "-agentpath:$SHIM=vthreads=carriers,legacy=$AG" -cp "$CP" VtMany virtual "$TASKS" ;;
      vthr) run "$name" "$J" "-agentpath:$SHIM=legacy=$AG:nomethods" -cp "$CP" VtMany virtual "$TASKS" ;;
      vthc) run "$name" "$J" "-agentpath:$SHIM=vthreads=carriers,legacy=$AG:nomethods" -cp "$CP" VtMany virtual "$TASKS" ;;
      pnone) run "$name" "$J" -cp "$CP" VtMany platform "$TASKS" ;;
      pshim) run "$name" "$J" "-agentpath:$SHIM=legacy=$AG" -cp "$CP" VtMany platform "$TASKS" ;;
      esac
      el[$r,$c]=$(val "$name" elapsed_ms); cpu[$r,$c]=$(val "$name" cpu_ms)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" time "$r" "$c" "${el[$r,$c]}" "${cpu[$r,$c]}" \
        "$(grep -h '^bvcount:' "$OUT/raw/$name.out" | sed 's/^bvcount: //')" >>"$OUT/results.tsv"
    done
  done
  printf '%-6s %10s %10s   %s\n' conf "elapsed_ms" "cpu_ms" "agent's counts (last round)"
  for c in $confs; do
    e=$(for r in $(seq 1 "$ROUNDS"); do echo "${el[$r,$c]}"; done | med)
    u=$(for r in $(seq 1 "$ROUNDS"); do echo "${cpu[$r,$c]}"; done | med)
    printf '%-6s %10s %10s   %s\n' "$c" "$e" "$u" "$(grep -h '^bvcount:' "$OUT/raw/jdk$v-r$ROUNDS-$c.out" 2>/dev/null | sed 's/^bvcount: //')"
  done
  echo "ratios (medians of per-round ratios; elapsed, then cpu):"
  for p in "vshim vnone" "vcarr vnone" "pshim pnone" "vshim vcarr" "vshim pshim" "vthr vnone" "vthc vnone" "vthr vthc"; do
    set -- $p
    re=$(for r in $(seq 1 "$ROUNDS"); do ratio "${el[$r,$1]}" "${el[$r,$2]}"; done | med)
    rc=$(for r in $(seq 1 "$ROUNDS"); do ratio "${cpu[$r,$1]}" "${cpu[$r,$2]}"; done | med)
    printf '  %-12s %8s %8s\n' "$1/$2" "$re" "$rc"
  done

  echo
  echo "==== jdk$v: $LIVE virtual threads alive at once: malloc in use ===="
  declare -A mem
  for r in $(seq 1 "$ROUNDS"); do
    for m in threads carriers; do
      name=jdk$v-r$r-mem-$m
      JVMPISHIM_MEMSTATS=1 run "$name" "$J" "-agentpath:$SHIM=vthreads=$m,legacy=$AG:nomethods" -cp "$CP" VtMany virtual 1000 "$LIVE"
      mem[$r,$m,live]=$(mem_after "$name" "VtMany: live=")
      mem[$r,$m,ended]=$(mem_after "$name" "VtMany: ended")
      printf '%s\tmem\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$m" "${mem[$r,$m,live]}" "${mem[$r,$m,ended]}" \
        "$(grep -h '^jvmpishim: memstats: vthreads' "$OUT/raw/$name.err" | sed 's/^jvmpishim: memstats: //')" >>"$OUT/results.tsv"
    done
  done
  for when in live ended; do
    per=$(for r in $(seq 1 "$ROUNDS"); do
            awk -v t="${mem[$r,threads,$when]}" -v c="${mem[$r,carriers,$when]}" -v n="$LIVE" \
                'BEGIN { if (t != "" && c != "") printf "%.0f\n", (t - c) / n }'
          done)
    echo "  $when: per virtual thread, threads - carriers: median $(echo "$per" | med) B (rounds: $(echo $per))"
  done
  echo "  the shim's own: $(grep -h '^jvmpishim: memstats: vthreads' "$OUT/raw/jdk$v-r$ROUNDS-mem-threads.err" | sed 's/^jvmpishim: memstats: //')"
done
echo
echo "raw output in $OUT"
exit $fail
