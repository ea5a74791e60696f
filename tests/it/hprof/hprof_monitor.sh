#!/bin/bash
# hprof_monitor.sh — hprof monitor=y on tests/java/HprofApp.java, whose ground truth is:
# CONTENDS rounds, each with exactly one contended entry of an HprofApp$Lock's monitor by
# thread "contender" in HprofApp.contend while thread "holder" keeps it for 100 ms; and
# WAITS timed Object.wait calls on an HprofApp$Waiter by main. HPROF learns each monitor
# object's class by RequestEvent(OBJECT_ALLOC) (heap= is off, so it never saw them made).
# Checks:
#  - MONITOR TIME: the HprofApp$Lock (Java) rows count CONTENDS entries in all, with a
#    non-zero share and total, at traces that start at HprofApp.contend;
#  - MONITOR WAIT TIME: the HprofApp$Waiter (Java) rows count WAITS waits, at a trace
#    that starts at java.lang.Object.wait and reaches HprofApp.main;
#  - MONITOR DUMP (RequestEvent(MONITOR_DUMP) at exit): BEGIN/END, one THREAD line per
#    live thread with a trace and a status, and the HPROF dump lock as a raw monitor
#    owned by the exiting thread;
#  - thread=y: TRACE headers name their thread;
#  - no HPROF error, shim error or warning, or crash.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
CONTENDS=3 WAITS=4
R=$WORK/java.hprof.txt

rows() { awk -v n="$2" 'index($0, n " BEGIN") == 1 {on=1; k=0; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/ {r[++k]=$0} END {for (i=1;i<=k;i++) print r[i]}' "$1"; }
frames() { awk -v id="$2" '$0 == "TRACE " id ":" || index($0, "TRACE " id ": (") == 1 {on=1; next} on && /^\t/ {sub(/^\t/, ""); print; next} on {exit}' "$1"; }

run_java "$(shim_arg hprof "monitor=y,thread=y,depth=8")" -cp "$CLASSES" HprofApp 100 10 1000 $CONTENDS $WAITS
expect_rc 0
expect_grep "$WORK/out" "^HprofApp: nodes=100 calls=10 spin=1000 contends=$CONTENDS waits=$WAITS\$" "HprofApp finished"
expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
[ -s "$R" ] || { bad "no profile"; finish; }
expect_nogrep "$R" '^(SITES|HEAP DUMP|CPU SAMPLES) BEGIN' "monitor=y alone writes no heap or CPU table"

# Contention.
expect_count "$R" '^MONITOR TIME BEGIN \(total = [0-9]+ ms\) ' 1 "one MONITOR TIME table"
expect_grep "$R" '^rank   self  accum   count trace monitor$' "MONITOR TIME column header"
rows "$R" "MONITOR TIME" | awk '$6 == "HprofApp$Lock" && $7 == "(Java)"' >"$WORK/lock"
got=$(awk '{s += $4} END {print s + 0}' "$WORK/lock")
expect_eq "$got" "$CONTENDS" "contended entries of HprofApp\$Lock"
share=$(awk '{p = $2; sub("%", "", p); s += p} END {print s + 0}' "$WORK/lock")
awk -v s="$share" 'BEGIN {exit !(s > 0)}' && ok "HprofApp\$Lock rows have time ($share % of the contention)" || bad "HprofApp\$Lock rows have no time"
total=$(sed -n 's/^MONITOR TIME BEGIN (total = \([0-9]*\) ms).*/\1/p' "$R")
if [ "${total:-0}" -gt 0 ]; then ok "MONITOR TIME total $total ms"; else bad "MONITOR TIME total '${total:-}'"; fi
for t in $(awk '{print $5}' "$WORK/lock"); do
  f1=$(frames "$R" "$t" | head -n 1)
  [[ "$f1" == 'HprofApp.contend(HprofApp.java:'[0-9]*')' ]] && ok "contention TRACE $t starts at $f1" || bad "contention TRACE $t starts at '$f1'"
  hdr=$(grep -E "^TRACE $t: \\(thread=[0-9]+\\)\$" "$R")
  [ -n "$hdr" ] && ok "thread=y: $hdr" || bad "thread=y: TRACE $t names no thread"
done

# Waits.
expect_count "$R" '^MONITOR WAIT TIME BEGIN \(total = [0-9]+ ms\) ' 1 "one MONITOR WAIT TIME table"
rows "$R" "MONITOR WAIT TIME" | awk '$6 == "HprofApp$Waiter" && $7 == "(Java)"' >"$WORK/waiter"
expect_eq "$(awk '{s += $4} END {print s + 0}' "$WORK/waiter")" "$WAITS" "waits on HprofApp\$Waiter"
t=$(awk '{print $5; exit}' "$WORK/waiter")
frames "$R" "${t:-0}" >"$WORK/wtrace"
[[ "$(head -n 1 "$WORK/wtrace")" == java.lang.Object.wait* ]] && ok "wait TRACE ${t:-?} starts at $(head -n 1 "$WORK/wtrace")" || bad "wait TRACE ${t:-?} starts at '$(head -n 1 "$WORK/wtrace")'"
grep -q '^HprofApp\.main(HprofApp\.java:[0-9]*)$' "$WORK/wtrace" && ok "wait TRACE ${t:-?} reaches HprofApp.main" || bad "wait TRACE ${t:-?} does not reach HprofApp.main"

# The monitor dump.
expect_count "$R" '^MONITOR DUMP BEGIN$' 1 "one MONITOR DUMP"
expect_count "$R" '^MONITOR DUMP END$' 1 "MONITOR DUMP ends"
sed -n '/^MONITOR DUMP BEGIN$/,/^MONITOR DUMP END$/p' "$R" >"$WORK/mdump"
n=$(grep -cE '^    THREAD [0-9]+, trace [0-9]+, status: (R|MW|CW)(,S)?(,I)?$' "$WORK/mdump")
if [ "$n" -ge 2 ]; then ok "MONITOR DUMP lists $n threads with trace and status"; else bad "MONITOR DUMP lists $n threads"; fi
expect_grep "$WORK/mdump" '^    RAW MONITOR "_hprof_dump_lock"\(0x[0-9a-f]+\)$' "the dump lock, a raw monitor, is listed"
expect_grep "$WORK/mdump" '^	owner: thread [1-9][0-9]*, entry count: [0-9]+$' "a monitor owned by a known thread"
finish
