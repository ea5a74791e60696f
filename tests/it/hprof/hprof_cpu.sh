#!/bin/bash
# hprof_cpu.sh — hprof's three CPU profiles on tests/java/HprofApp.java, whose ground truth
# is: HprofApp.spin is the only hot code (a loop of SPIN iterations without calls), main
# calls HprofApp.counted exactly CALLS times, makeNodes once, and makeNodes runs the
# HprofApp$Node constructor exactly NODES times.
#  - cpu=samples (a CreateSystemThread sampler: GetThreadStatus, SuspendThread,
#    ThreadHasRun, GetCallTrace, ResumeThread): one CPU SAMPLES table in the spec's shape,
#    HprofApp.spin in its top 3 rows, counts that add up to no more than the total, the
#    spin row's TRACE starting at HprofApp.spin; no allocation or monitor tables (heap= is
#    off once cpu= is given).
#  - cpu=times (METHOD_ENTRY/EXIT, per-thread shadow stacks in thread-local storage,
#    GetCurrentThreadCpuTime): CPU TIME (ms) rows whose counts for HprofApp.counted,
#    HprofApp$Node.<init> and HprofApp.makeNodes add up to CALLS, NODES and 1 (cutoff=0 so
#    that no row is cut), and the counted row's TRACE is counted then main.
#  - cpu=old: the "count callee caller time" table has the row
#    "CALLS HprofApp.counted(I)I HprofApp.main([Ljava/lang/String;)V <ms>" and the row for
#    NODES constructor calls from makeNodes.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
NODES=3000 CALLS=1234
R=$WORK/java.hprof.txt

rows() { awk -v n="$2" 'index($0, n " BEGIN") == 1 {on=1; k=0; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/ {r[++k]=$0} END {for (i=1;i<=k;i++) print r[i]}' "$1"; }
frames() { awk -v id="$2" '$0 == "TRACE " id ":" || index($0, "TRACE " id ": (") == 1 {on=1; next} on && /^\t/ {sub(/^\t/, ""); print; next} on {exit}' "$1"; }
clean() {
  expect_rc 0
  expect_grep "$WORK/out" "^HprofApp: nodes=$NODES calls=$CALLS " "HprofApp finished"
  expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
}

# 1. cpu=samples
rm -f "$R"
run_java "$(shim_arg hprof "cpu=samples")" -cp "$CLASSES" HprofApp $NODES $CALLS 300000000 1 1
clean
expect_count "$R" '^CPU SAMPLES BEGIN \(total = [0-9]+\) ' 1 "one CPU SAMPLES table"
expect_count "$R" '^CPU SAMPLES END$' 1 "CPU SAMPLES table ends"
expect_grep "$R" '^rank   self  accum   count trace method$' "CPU SAMPLES column header (as the spec)"
expect_nogrep "$R" '^(SITES|HEAP DUMP|MONITOR TIME|CPU TIME \(ms\)) BEGIN' "cpu=samples writes no other table"
rows "$R" "CPU SAMPLES" >"$WORK/samples"
total=$(sed -n 's/^CPU SAMPLES BEGIN (total = \([0-9]*\)).*/\1/p' "$R")
sum=$(awk '{s += $4} END {print s + 0}' "$WORK/samples")
if [ "${total:-0}" -gt 0 ] && [ "$sum" -le "$total" ]; then ok "samples: $sum in the rows, total $total"; else bad "samples: rows $sum, total '$total'"; fi
top=$(head -n 3 "$WORK/samples" | awk '$6 == "HprofApp.spin"')
if [ -n "$top" ]; then
  ok "HprofApp.spin in the top 3 rows: $top"
  t=$(printf '%s\n' "$top" | head -n 1 | awk '{print $5}')
  f1=$(frames "$R" "$t" | head -n 1)
  [[ "$f1" == 'HprofApp.spin(HprofApp.java:'[0-9]*')' ]] && ok "TRACE $t starts at $f1" || bad "TRACE $t starts at '$f1'"
else
  bad "HprofApp.spin is not in the top 3 CPU SAMPLES rows"; head -n 5 "$WORK/samples" | sed 's/^/     | /'
fi

# 2. cpu=times
rm -f "$R"
run_java "$(shim_arg hprof "cpu=times,cutoff=0")" -cp "$CLASSES" HprofApp $NODES $CALLS 100000 1 1
clean
expect_count "$R" '^CPU TIME \(ms\) BEGIN \(total = [0-9]+\) ' 1 "one CPU TIME (ms) table"
expect_grep "$R" '^rank   self  accum   count trace method$' "CPU TIME column header"
rows "$R" "CPU TIME (ms)" >"$WORK/times"
for m in "HprofApp.counted:$CALLS" "HprofApp\$Node.<init>:$NODES" "HprofApp.makeNodes:1" "HprofApp.main:1"; do
  name=${m%:*} want=${m##*:}
  got=$(awk -v m="$name" '$6 == m {s += $4} END {print s + 0}' "$WORK/times")
  expect_eq "$got" "$want" "cpu=times: calls of $name"
done
t=$(awk '$6 == "HprofApp.counted" {print $5; exit}' "$WORK/times")
frames "$R" "${t:-0}" >"$WORK/ctrace"
expect_eq "$(head -n 2 "$WORK/ctrace" | tr '\n' ' ')" "HprofApp.counted(HprofApp.java:Unknown line) HprofApp.main(HprofApp.java:Unknown line) " "TRACE ${t:-?} of counted (from method events: no lines)"

# 3. cpu=old
rm -f "$R"
run_java "$(shim_arg hprof "cpu=old")" -cp "$CLASSES" HprofApp $NODES $CALLS 100000 1 1
clean
expect_count "$R" '^CPU TIME \(ms\) BEGIN \(total = [0-9]+\) ' 1 "one CPU TIME (ms) table"
expect_grep "$R" '^count callee caller time$' "old-style column header"
expect_grep "$R" "^$CALLS HprofApp\\.counted\\(I\\)I HprofApp\\.main\\(\\[Ljava/lang/String;\\)V [0-9]+\$" "counted called $CALLS times from main"
expect_grep "$R" "^$NODES HprofApp\\\$Node\\.<init>\\(ILHprofApp\\\$Node;\\)V HprofApp\\.makeNodes\\(I\\)\\[LHprofApp\\\$Node; [0-9]+\$" "Node.<init> called $NODES times from makeNodes"
expect_grep "$R" '^1 HprofApp\.makeNodes\(I\)\[LHprofApp\$Node; HprofApp\.main\(\[Ljava/lang/String;\)V [0-9]+$' "makeNodes called once from main"
finish
