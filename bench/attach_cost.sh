#!/bin/bash
# attach_cost.sh — what attaching the shim costs a running program, as its heap grows.
#
# tests/java/AttachCost keeps N small objects and a ticker thread that allocates every
# millisecond records the longest gap between two ticks (the pause the program sees). The
# shim is attached with the bundled HPROF (heap=sites: OBJECT_ALLOC enabled in JVM_OnLoad,
# so the attach replays every object), and with legacy-agents/tidy.c (threads and classes
# only); the total is jcmd's wall time. For comparison, the same program's longest gap
# over the same time with nothing attached.
# Usage: bench/attach_cost.sh [JDK] [N...]  (default: the build JDK; 0.25M 0.5M 1M 2M)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JDK=${1:-$("$ROOT/tools/find-jdk.sh" build)}; shift || true
SIZES=${*:-250000 500000 1000000 2000000}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
run() { # N AGENT-OPTIONS|none -> "gap total"
  rm -f "$W/done" "$W/out"
  "$JDK/bin/java" -Xmx4g -cp "$ROOT/build/classes" AttachCost "$1" "$W/done" >"$W/out" 2>"$W/err" &
  local bg=$! pid="" t0 t1
  for _ in $(seq 1 600); do pid=$(sed -n 's/^ready //p' "$W/out" 2>/dev/null); [ -n "$pid" ] && break; sleep 0.1; done
  sleep 1
  t0=$(date +%s%N)
  if [ "$2" != none ]; then
    "$JDK/bin/jcmd" "$pid" JVMTI.agent_load "$ROOT/build/libjvmpishim.so" "$2" >/dev/null 2>&1
  else
    sleep 0.2
  fi
  t1=$(date +%s%N)
  touch "$W/done"; wait "$bg"
  echo "$(sed -n 's/^maxgap_ms \([0-9.]*\).*/\1/p' "$W/out") $(( (t1 - t0) / 1000000 ))"
}
echo "JDK: $("$JDK/bin/java" -version 2>&1 | head -n 1)"
HPROF="legacy:$ROOT/build/agents/libhprof.so:heap%3Dsites,file%3D$W/hprof.txt"
TIDY="legacy:$ROOT/build/agents/libtidy.so"
printf '%10s %12s %12s %12s %12s %12s\n' objects "no attach" "hprof pause" "hprof total" "tidy pause" "tidy total"
for n in $SIZES; do
  read -r g0 _ <<<"$(run "$n" none)"
  read -r g1 t1 <<<"$(run "$n" "$HPROF")"
  read -r g2 t2 <<<"$(run "$n" "$TIDY")"
  printf '%10s %12s %12s %12s %12s %12s\n' "$n" "$g0" "$g1" "$t1" "$g2" "$t2"
done
echo "(pauses: the ticker's longest gap in ms; totals: jcmd's wall time in ms)"
