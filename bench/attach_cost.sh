#!/bin/bash
# attach_cost.sh — what attaching the shim costs a running program, as its heap grows.
#
# tests/java/AttachCost keeps N small objects and a ticker thread that allocates every
# millisecond records the longest gap between two ticks (the pause the program sees). The
# shim is attached with legacy-agents/attach.c, which enables OBJECT_ALLOC in JVM_OnLoad,
# so the attach replays every object (the HPROF case); the total is jcmd's wall time. For
# comparison, the same program's longest gap over the same time with nothing attached.
# Usage: bench/attach_cost.sh [JDK] [N...]  (default: the build JDK; 0.25M 0.5M 1M 2M)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JDK=${1:-$("$ROOT/tools/find-jdk.sh" build)}; shift || true
SIZES=${*:-250000 500000 1000000 2000000}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
run() { # N ATTACH(0/1) -> "gap total"
  rm -f "$W/done" "$W/out"
  "$JDK/bin/java" -Xmx4g -cp "$ROOT/build/classes" AttachCost "$1" "$W/done" >"$W/out" 2>"$W/err" &
  local bg=$! pid="" t0 t1
  for _ in $(seq 1 600); do pid=$(sed -n 's/^ready //p' "$W/out"); [ -n "$pid" ] && break; sleep 0.1; done
  sleep 1
  t0=$(date +%s%N)
  if [ "$2" = 1 ]; then
    "$JDK/bin/jcmd" "$pid" JVMTI.agent_load "$ROOT/build/libjvmpishim.so" "legacy:$ROOT/build/agents/libattach.so" >/dev/null 2>&1
  else
    sleep 0.2
  fi
  t1=$(date +%s%N)
  touch "$W/done"; wait "$bg"
  echo "$(sed -n 's/^maxgap_ms \([0-9.]*\).*/\1/p' "$W/out") $(( (t1 - t0) / 1000000 ))"
}
echo "JDK: $("$JDK/bin/java" -version 2>&1 | head -n 1)"
printf '%10s %14s %16s %14s\n' objects "pause ms" "pause, no attach" "jcmd total ms"
for n in $SIZES; do
  read -r g0 _ <<<"$(run "$n" 0)"
  read -r g1 tot <<<"$(run "$n" 1)"
  printf '%10s %14s %16s %14s\n' "$n" "$g1" "$g0" "$tot"
done
