#!/bin/bash
# demo.sh — `make demo`: HPROF, the JDK 1.2-1.4 profiler, rebuilt as a JVMPI agent in
# legacy-agents/hprof/ (JVM_OnLoad, GetEnv(JVMPI_VERSION_1), NotifyEvent), profiles the
# sample application tests/java/DemoApp.java through the shim on the default JDK
# (tools/find-jdk.sh build), with heap=sites,cpu=samples,monitor=y. Builds nothing: `make
# all` already did.
#
# Prints the command line, the application's output, the top 10 rows of the profile's
# SITES and CPU SAMPLES tables and its MONITOR TIME rows, with the TRACE blocks they refer
# to, and, last, the path of the whole profile (build/demo/java.hprof.txt). Exits non-zero
# if the run failed or wrote no profile.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
ROWS=10

JDK=$(tools/find-jdk.sh build)
if [ -z "$JDK" ]; then
  echo "demo: no JDK >= 17 found (tools/find-jdk.sh build)" >&2
  exit 1
fi
SHIM=$ROOT/build/libjvmpishim.so
AGENT=$ROOT/build/agents/libhprof.so
for f in "$SHIM" "$AGENT" "$ROOT/build/classes/DemoApp.class"; do
  [ -f "$f" ] || { echo "demo: $f is missing: run 'make all' first" >&2; exit 1; }
done

OUT=$ROOT/build/demo
REPORT=$OUT/java.hprof.txt
mkdir -p "$OUT"
rm -f "$REPORT" "$OUT/app.out"

cmd=("$JDK/bin/java" "-agentpath:$SHIM=legacy=$AGENT:heap=sites,cpu=samples,monitor=y,file=$REPORT"
     -cp "$ROOT/build/classes" DemoApp)
version=$("$JDK/bin/java" -version 2>&1 | head -n 1)

echo "== jvmpishim demo: HPROF, the JDK 1.2-1.4 profiler as a JVMPI agent (legacy-agents/hprof/), profiles DemoApp"
echo "== JDK: $JDK ($version)"
echo "\$ ${cmd[*]}"
timeout -k 5 60 "${cmd[@]}" >"$OUT/app.out" 2>&1
rc=$?
echo "-- application output (stdout and stderr):"
sed 's/^/   /' "$OUT/app.out"
if [ $rc -ne 0 ]; then
  [ $rc -eq 124 ] && echo "demo: the run timed out after 60 s" >&2
  echo "demo: FAILED: java exited with status $rc" >&2
  exit 1
fi
if [ ! -s "$REPORT" ] || ! grep -q '^SITES END$' "$REPORT"; then
  echo "demo: FAILED: no whole profile at $REPORT" >&2
  exit 1
fi

# table NAME — the table's BEGIN line, its column headers and its first $ROWS rows.
table() {
  awk -v name="$1" -v rows="$ROWS" '
    index($0, name " BEGIN") == 1 { on = 1; print; next }
    on && index($0, name " END") == 1 { exit }
    on && $1 ~ /^[0-9]+$/ { if (++n <= rows) print; next }
    on { print }' "$REPORT" | sed 's/^/   /'
}
# trace_ids NAME COLUMN — the trace numbers in the first $ROWS rows of a table.
trace_ids() {
  awk -v name="$1" -v col="$2" -v rows="$ROWS" '
    index($0, name " BEGIN") == 1 { on = 1; next }
    on && index($0, name " END") == 1 { exit }
    on && $1 ~ /^[0-9]+$/ && ++n <= rows { print $col }' "$REPORT"
}

echo
echo "-- allocation sites, top $ROWS (live = not yet freed by a GC; trace = the TRACE below):"
table "SITES"
echo
echo "-- CPU samples, top $ROWS (the running thread's trace, sampled every 10 ms):"
table "CPU SAMPLES"
echo
echo "-- monitor contention (time threads spent blocked entering a monitor, by trace):"
table "MONITOR TIME"

ids=$( (trace_ids "SITES" 8; trace_ids "CPU SAMPLES" 5; trace_ids "MONITOR TIME" 5) | sort -n -u | tr '\n' ' ')
echo
echo "-- the traces those rows refer to (innermost frame first):"
awk -v ids=" $ids " '
  /^TRACE [0-9]+:/ { id = $2; sub(":", "", id); on = index(ids, " " id " ") > 0 }
  /^TRACE [0-9]+:/ || /^\t/ { if (on) print; next }
  { on = 0 }' "$REPORT" | sed 's/^/   /; s/\t/    /'

echo
echo "full profile: $REPORT"
