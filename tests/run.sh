#!/bin/bash
# run.sh — the test driver behind `make check`.
#
#   tests/run.sh [--unit "BIN ..."] [--jdk DIR] [--only GLOB]
#
# Runs the unit-test binaries given with --unit (no JVM), then every integration test
# tests/it/*.sh once per JDK that tools/find-jdk.sh lists (JDK 17 must be among them; any
# missing expected JDK is reported loudly as skipped). Each test runs in its own process,
# in its own work directory, under a timeout. The last line is "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
unit=""; only="*"; jdks=""
while [ $# -gt 0 ]; do
  case "$1" in
    --unit) unit=$2; shift 2 ;;
    --jdk) jdks="$jdks $2"; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$jdks" ] || jdks=$(tools/find-jdk.sh all)
pass=0; fail=0; skip=0; failed_names=""
LOGS=$ROOT/build/test-logs
mkdir -p "$LOGS"   # per-test logs are overwritten; parallel runs of other tests are left alone

for t in $unit; do
  name="unit/$(basename "$(dirname "$t")")/$(basename "$t")"
  log=$LOGS/$(echo "$name" | tr / _).log
  if timeout 120 "$t" >"$log" 2>&1; then
    pass=$((pass+1)); echo "ok   $name ($(tail -n 1 "$log"))"
  else
    fail=$((fail+1)); failed_names="$failed_names $name"; echo "FAIL $name"; tail -n 15 "$log" | sed 's/^/     | /'
  fi
done

have17=no
for j in $jdks; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)
  [ "$v" = 17 ] && have17=yes
done
if [ "$have17" = no ]; then
  echo "SKIP all integration tests on JDK 17: no JDK 17 found (install openjdk-17-jdk-headless)"
  skip=$((skip+1)); fail=$((fail+1)); failed_names="$failed_names jdk17-missing"
fi
have25=no
for j in $jdks; do
  [ "$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)" = 25 ] && have25=yes
done
if [ "$have25" = no ]; then
  echo "SKIP: no JDK 25 found on this machine; integration tests ran on: $(echo $jdks)"
  skip=$((skip+1))
fi

for j in $jdks; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)
  for t in tests/it/$only.sh; do
    [ -f "$t" ] || continue
    case "$(basename "$t")" in lib.sh) continue ;; esac
    name="jdk$v/$(basename "$t" .sh)"
    work=$ROOT/build/test-work/jdk$v/$(basename "$t" .sh)
    rm -rf "$work"; mkdir -p "$work"
    log=$LOGS/jdk${v}_$(basename "$t" .sh).log
    start=$(date +%s)
    JDK_HOME_T=$j JDK_MAJOR=$v JAVA=$j/bin/java SHIM=$ROOT/build/libjvmpishim.so \
      AGENTS=$ROOT/build/agents CLASSES=$ROOT/build/classes WORK=$work ROOT=$ROOT \
      timeout -k 10 300 bash "$t" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
      pass=$((pass+1)); echo "ok   $name (${secs}s)"
    elif [ $rc -eq 77 ]; then
      skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$log")"
    else
      [ $rc -eq 124 ] && echo "timeout after 300s" >>"$log"
      fail=$((fail+1)); failed_names="$failed_names $name"
      echo "FAIL $name (rc=$rc, ${secs}s; log: $log)"; tail -n 25 "$log" | sed 's/^/     | /'
    fi
  done
done
[ $fail -eq 0 ] || echo "failed:$failed_names"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
