#!/bin/bash
# hprof_sigquit.sh — SIGQUIT makes hprof dump mid-run. The VM posts DATA_DUMP_REQUEST
# (hprof writes a whole dump: heap dump, SITES, CPU SAMPLES) and then DATA_RESET_REQUEST
# (hprof starts its CPU samples again from zero); the program goes on and hprof dumps once
# more at exit. tests/java/HprofApp.java makes its NODES HprofApp$Node objects, prints
# "ready", sleeps PAUSE ms (the signal comes then), and only afterwards runs its hot
# method HprofApp.spin. Checks:
#  - the program ends normally after the VM's own thread dump;
#  - stderr announces a dump "on request" and then one "at exit";
#  - the file holds two of each table, the first mid-run one with the NODES Nodes in
#    SITES (alloc'ed and live) and in the HEAP DUMP;
#  - the first CPU SAMPLES table has no HprofApp.spin row (it had not run) and the second
#    has it in its top 3 rows.
source "$ROOT/tests/it/lib.sh"
NODES=2000 PAUSE=3000
R=$WORK/java.hprof.txt
OPTS="heap=all,cpu=samples"

# section N TABLE — the numbered rows of the N-th TABLE section.
section() { awk -v want="$1" -v n="$2" 'index($0, n " BEGIN") == 1 {k++; on = (k == want); next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/' "$R"; }

"$JAVA" -Xshare:auto "$(shim_arg hprof "$OPTS")" -cp "$CLASSES" HprofApp $NODES 10 300000000 1 1 $PAUSE >"$WORK/out" 2>"$WORK/err" &
jpid=$!
( sleep 90; kill -9 "$jpid" 2>/dev/null ) &
wd=$!
started=no
for _ in $(seq 1 300); do
  if grep -q '^ready$' "$WORK/out" 2>/dev/null; then started=yes; break; fi
  kill -0 "$jpid" 2>/dev/null || break
  sleep 0.05
done
if [ "$started" = yes ]; then ok "HprofApp made its nodes and is pausing"; else bad "HprofApp did not get ready"; fi
if kill -QUIT "$jpid" 2>/dev/null; then ok "SIGQUIT sent"; else bad "could not send SIGQUIT"; fi
wait "$jpid"
RC=$?
kill "$wd" 2>/dev/null
wait "$wd" 2>/dev/null
echo "+ java $(shim_arg hprof "$OPTS") HprofApp ... (SIGQUIT when ready) -> rc=$RC"
expect_rc 0
expect_grep "$WORK/out" "^HprofApp: nodes=$NODES " "HprofApp finished"
expect_grep "$WORK/out" 'Full thread dump' "the VM printed its thread dump"
expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
grep '^HPROF: dumping the profile' "$WORK/err" | sed 's/ (\(.*\)) to .*/ \1/' | tr '\n' '|' >"$WORK/dumps"
expect_eq "$(cat "$WORK/dumps")" "HPROF: dumping the profile on request|HPROF: dumping the profile at exit|" "dumps announced on stderr"
for t in "HEAP DUMP" "SITES" "CPU SAMPLES"; do
  expect_count "$R" "^$t BEGIN " 2 "two $t tables"
done

# The mid-run dump.
expect_eq "$(section 1 SITES | awk '$9 == "HprofApp$Node" {print $5 "/" $7}')" "$NODES/$NODES" "first SITES: Node objects live/alloc'ed"
nodes1=$(awk '/^HEAP DUMP BEGIN/ {k++} k == 1 && /^OBJ .*class=HprofApp\$Node@/ {n++} /^HEAP DUMP END/ && k == 1 {exit} END {print n + 0}' "$R")
expect_eq "$nodes1" "$NODES" "first HEAP DUMP: Node OBJ records"
expect_eq "$(section 1 "CPU SAMPLES" | awk '$6 == "HprofApp.spin"' | grep -c .)" 0 "first CPU SAMPLES: no HprofApp.spin row (not run yet)"
spin=$(section 2 "CPU SAMPLES" | head -n 3 | awk '$6 == "HprofApp.spin"')
if [ -n "$spin" ]; then ok "second CPU SAMPLES: HprofApp.spin in the top 3 rows: $spin"; else bad "second CPU SAMPLES: no HprofApp.spin in the top 3 rows"; section 2 "CPU SAMPLES" | head -n 5 | sed 's/^/     | /'; fi
finish
