#!/bin/bash
# hprof_dump.sh — the bundled HPROF with heap=dump through the shim, against the same program
# without an agent (docs/performance.md, "HPROF heap=dump"; goal <= 5x).
#
#   bench/hprof_dump.sh [ROUNDS]        (default 3)
#
# Needs `make all`; builds bench/ itself (make -f bench/Makefile), for Sites.
# Environment: BENCH_JDKS (default: tools/find-jdk.sh all); BENCH_SHIM_OLD, the path of
# another build of libjvmpishim.so, run as one more configuration ("old") for a before/after
# taken side by side.
#
# Programs: HprofApp 20000 1000 400000000 1 1 (tests/java: about a second, 20 000 live nodes,
# 55 000 allocations, a contention and a wait) and Sites (bench/java: about half a second,
# 2.4 M allocations, a million objects in the heap at exit, most of them garbage). heap=dump
# enables OBJECT_ALLOC with a 4-frame trace for every allocation and takes a level-2 dump at
# exit, from JVM_SHUT_DOWN. A round runs each configuration once, in an order rotating per
# round; the figure is the JVM's wall time (start to exit), the median of the rounds, and its
# ratio to the median without an agent. The shim's own line "heap dump level 2: N records in
# T s" gives the dump's time where it took over a second.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
ROUNDS=${1:-3}
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
SHIM=$ROOT/build/libjvmpishim.so
OLD=${BENCH_SHIM_OLD:-}
HPROF=$ROOT/build/agents/libhprof.so
[ -f "$SHIM" ] && [ -f "$HPROF" ] && [ -f build/classes/HprofApp.class ] ||
  { echo "hprof_dump.sh: run make all first" >&2; exit 2; }
make -s -f bench/Makefile JDK="$(tools/find-jdk.sh build)" >/dev/null || { echo "hprof_dump.sh: bench/ did not build" >&2; exit 2; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
echo "hprof_dump.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(uptime | sed 's/.*load average: //'); $(nproc) CPUs"

# run JDK CONFIG PROGRAM... -> wall ms (and the dump time, if the shim printed it, to $W/dump)
run() {
  local jdk=$1 cfg=$2; shift 2
  local -a a=()
  case $cfg in
    none) ;;
    new) a=("-agentpath:$SHIM=legacy=$HPROF:heap=dump,file=$W/h.txt") ;;
    old) a=("-agentpath:$OLD=legacy=$HPROF:heap=dump,file=$W/h.txt") ;;
  esac
  local t0 t1
  t0=$(date +%s%N)
  "$jdk/bin/java" "${a[@]}" "$@" >"$W/out" 2>"$W/err"
  local rc=$?
  t1=$(date +%s%N)
  rm -f "$W/h.txt"
  [ $rc -eq 0 ] || { echo "FAILED: $cfg $* (rc=$rc)" >&2; tail -3 "$W/err" >&2; }
  sed -n 's/.*heap dump level 2: \([0-9]*\) records in \([0-9.]*\) s.*/\2/p' "$W/err" | tail -1 >"$W/dump"
  echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : int((v[NR/2]+v[NR/2+1])/2)}'; }

cfgs="none new"
[ -n "$OLD" ] && cfgs="none old new"
for jdk in $JDKS; do
  v=$("$jdk/bin/java" -version 2>&1 | head -n 1)
  for prog in "HprofApp" "Sites"; do
    case $prog in
      HprofApp) args=(-cp build/classes HprofApp 20000 1000 400000000 1 1) ;;
      Sites) args=(-cp build/bench/classes Sites) ;;
    esac
    for c in $cfgs; do : >"$W/t.$c"; : >"$W/d.$c"; done
    for ((r = 0; r < ROUNDS; r++)); do
      # shellcheck disable=SC2086 # the configurations are words
      set -- $cfgs
      for ((k = 0; k < r % $#; k++)); do set -- "${@:2}" "$1"; done
      for c in "$@"; do
        run "$jdk" "$c" "${args[@]}" >>"$W/t.$c"
        cat "$W/dump" >>"$W/d.$c"
      done
    done
    base=$(median <"$W/t.none")
    echo "== $v: $prog, $ROUNDS rounds"
    printf '  %-8s %10s %8s   %s\n' config "median ms" ratio "dump s (each round, where over 1 s)"
    for c in $cfgs; do
      m=$(median <"$W/t.$c")
      printf '  %-8s %10s %8s   %s\n' "$c" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" \
        "$(tr '\n' ' ' <"$W/d.$c")"
    done
  done
done
