#!/bin/bash
# run.sh — run libFuzzer targets for a while; behind `make fuzz` and `make fuzz-smoke`.
#
#   fuzz/run.sh [--smoke] SECONDS build/fuzz/fuzz_NAME...
#
# Each target runs for SECONDS under nice -n 10 (the machine is shared), one process, on
# its seed corpus fuzz/corpus/NAME (read only) with fuzz/NAME.dict if there is one. New
# inputs go to build/fuzz/corpus-NAME, which persists between runs and so keeps what
# earlier runs found; --smoke starts from an empty build/fuzz/smoke-NAME instead, so a
# smoke run sees the committed corpus plus ~SECONDS of mutation and nothing else. A crash,
# leak, sanitizer report, 10-second input or 2 GB of memory stops the target; the input is
# saved as build/fuzz/NAME-crash-* (or -leak-, -timeout-, -oom-), and the run fails.
# One line per target: "ok   fuzz/NAME: ..." with the figures, or "FAIL fuzz/NAME: ...".
# The whole libFuzzer output is in build/fuzz/NAME.log (smoke-NAME.log for --smoke).
set -u
cd "$(dirname "$0")/.."
smoke=no
[ "${1:-}" = --smoke ] && { smoke=yes; shift; }
secs=${1:?usage: fuzz/run.sh [--smoke] SECONDS BIN...}
shift
out=build/fuzz
mkdir -p "$out"
rc=0
for bin in "$@"; do
  name=$(basename "$bin"); name=${name#fuzz_}
  if [ $smoke = yes ]; then
    work=$out/smoke-$name; log=$out/smoke-$name.log
    rm -rf "$work"
  else
    work=$out/corpus-$name; log=$out/$name.log
  fi
  mkdir -p "$work"
  args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$out/$name-")
  [ -f "fuzz/$name.dict" ] && args+=(-dict="fuzz/$name.dict")
  case $name in
    options) args+=(-max_len=1024) ;;
    dumpcheck) args+=(-max_len=8192) ;;
    record) args+=(-max_len=65536) ;;
  esac
  before=$(ls "$out" | grep -c -- "^$name-\(crash\|leak\|timeout\|oom\)-")
  # The time limit bounds the fuzzing; the outer timeout only guards a hung process.
  nice -n 10 timeout -k 10 $((secs + 120)) "$bin" "${args[@]}" "$work" "fuzz/corpus/$name" >"$log" 2>&1
  st=$?
  after=$(ls "$out" | grep -c -- "^$name-\(crash\|leak\|timeout\|oom\)-")
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  done_line=$(grep -E '^#[0-9]+[[:space:]].* cov: ' "$log" | tail -n 1)
  cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$done_line" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
  edges=$(sed -n 's/^INFO: Loaded 1 modules *(\([0-9]*\) inline 8-bit counters).*/\1/p' "$log" | head -n 1)
  figures="$(stat number_of_executed_units) execs in ${secs}s ($(stat average_exec_per_sec)/s), cov $cov of $edges edges, ft $ft, corpus $corp, new units $(stat new_units_added), peak rss $(stat peak_rss_mb) MB"
  if [ $st -eq 0 ] && [ "$after" -eq "$before" ] && [ -n "$done_line" ]; then
    echo "ok   fuzz/$name: $figures"
  else
    rc=1
    echo "FAIL fuzz/$name (exit $st; log: $log)"
    grep -E 'ERROR: |SUMMARY: |fuzz_[a-z]+: |Test unit written to' "$log" | head -n 8 | sed 's/^/     | /'
  fi
done
exit $rc
