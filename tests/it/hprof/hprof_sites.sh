#!/bin/bash
# hprof_sites.sh — the bundled hprof (legacy-agents/hprof/) with heap=sites profiles
# tests/java/HprofApp.java, whose ground truth is: NODES HprofApp$Node objects, all made in
# HprofApp.makeNodes (called from main) and all kept live, plus one HprofApp$Node[] of
# NODES elements. Checks, in the default output file java.hprof.txt:
#  - the header line and one SITES table with the spec's two column-header lines, rows
#    sorted by live bytes, none under the default cutoff (0.01 %), and no other table;
#  - the HprofApp$Node site: exactly NODES objects alloc'ed and NODES live, at one trace
#    whose TRACE block starts at HprofApp.makeNodes(HprofApp.java:N) then HprofApp.main;
#    the same bytes live and alloc'ed, NODES times one object's size;
#  - the HprofApp$Node[] site: one object;
#  - THREAD START/END records for main and the app's "holder" thread;
#  - no HPROF error, no shim error or warning, no crash.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
NODES=4000
R=$WORK/java.hprof.txt

# rows FILE TABLE — the numbered rows of the last TABLE section.
rows() { awk -v n="$2" 'index($0, n " BEGIN") == 1 {on=1; k=0; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/ {r[++k]=$0} END {for (i=1;i<=k;i++) print r[i]}' "$1"; }
# frames FILE ID — the frames of TRACE ID, one per line, without the tab.
frames() { awk -v id="$2" '$0 == "TRACE " id ":" || index($0, "TRACE " id ": (") == 1 {on=1; next} on && /^\t/ {sub(/^\t/, ""); print; next} on {exit}' "$1"; }

run_java "$(shim_arg hprof "heap=sites")" -cp "$CLASSES" HprofApp $NODES 10 1000000 1 1
expect_rc 0
expect_grep "$WORK/out" "^HprofApp: nodes=$NODES " "HprofApp finished"
expect_grep "$WORK/err" '^HPROF: dumping the profile \(at exit\) to java\.hprof\.txt \.\.\. done\.$' "dump at exit announced"
expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
if [ ! -s "$R" ]; then bad "no $R (the default file name)"; finish; fi
ok "profile written to the default file java.hprof.txt"

expect_grep "$R" '^JAVA PROFILE 1\.0\.1, created [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$' "header line"
expect_count "$R" '^SITES BEGIN \(ordered by live bytes\) [A-Z][a-z]{2} ' 1 "one SITES table"
expect_count "$R" '^SITES END$' 1 "SITES table ends"
expect_grep "$R" "^        percent        live       alloc'ed    stack class\$" "SITES column header 1 (as the spec)"
expect_grep "$R" '^rank  self  accum   bytes objs   bytes   objs trace name$' "SITES column header 2 (as the spec)"
expect_nogrep "$R" '^(CPU SAMPLES|CPU TIME \(ms\)|MONITOR TIME|MONITOR DUMP|HEAP DUMP) BEGIN' "heap=sites writes no other table"

rows "$R" SITES >"$WORK/sites"
n=$(grep -c . "$WORK/sites")
if [ "$n" -ge 10 ]; then ok "SITES has $n rows"; else bad "SITES has $n rows"; fi
awk 'NR > 1 && $4 > prev {print "unsorted at rank " $1} {prev = $4}' "$WORK/sites" >"$WORK/unsorted"
expect_count "$WORK/unsorted" . 0 "rows sorted by live bytes"
awk '{p = $2; sub("%", "", p); if (p + 0 < 0.01) print}' "$WORK/sites" >"$WORK/low"
expect_count "$WORK/low" . 0 "no row under the default cutoff 0.0001 (0.01 %)"
last=$(tail -n 1 "$WORK/sites" | awk '{print $3}')
awk -v a="$last" 'BEGIN {sub("%", "", a); exit !(a + 0 <= 100.005)}' && ok "accumulated share ends at $last" || bad "accumulated share $last > 100%"

node=$(awk '$9 == "HprofApp$Node"' "$WORK/sites")
expect_eq "$(printf '%s\n' "$node" | grep -c .)" 1 "HprofApp\$Node sites"
set -- $node
expect_eq "${7:-}" "$NODES" "HprofApp\$Node objects alloc'ed"
expect_eq "${5:-}" "$NODES" "HprofApp\$Node objects live"
expect_eq "${4:-}" "${6:-}" "HprofApp\$Node live bytes = alloc'ed bytes"
if [ -n "${4:-}" ] && [ $(( ${4} % NODES )) -eq 0 ] && [ "${4}" -gt 0 ]; then ok "HprofApp\$Node bytes: $NODES x $(( ${4} / NODES ))"
else bad "HprofApp\$Node bytes ${4:-?} not a multiple of $NODES"; fi
frames "$R" "${8:-0}" >"$WORK/node_trace"
f1=$(sed -n 1p "$WORK/node_trace"); f2=$(sed -n 2p "$WORK/node_trace")
[[ "$f1" == 'HprofApp.makeNodes(HprofApp.java:'[0-9]*')' ]] && ok "TRACE ${8:-?} starts at $f1" || bad "TRACE ${8:-?} starts at '$f1', expected HprofApp.makeNodes(HprofApp.java:N)"
[[ "$f2" == 'HprofApp.main(HprofApp.java:'[0-9]*')' ]] && ok "TRACE ${8:-?} goes on with $f2" || bad "TRACE ${8:-?} second frame '$f2', expected HprofApp.main(HprofApp.java:N)"
arr=$(awk '$9 == "HprofApp$Node[]" {print $7}' "$WORK/sites")
expect_eq "$arr" 1 "HprofApp\$Node[] objects alloc'ed"

expect_grep "$R" '^THREAD START \(obj=[0-9a-f]+, id = [0-9]+, name="main", group="main"\)$' "THREAD START of main"
hid=$(sed -n 's/^THREAD START (obj=[0-9a-f]*, id = \([0-9]*\), name="holder", group="main")$/\1/p' "$R")
if [ -n "$hid" ]; then ok "THREAD START of holder (id $hid)"; expect_count "$R" "^THREAD END \\(id = $hid\\)\$" 1 "THREAD END of holder"
else bad "no THREAD START of holder"; fi
finish
