#!/bin/bash
# hprof_options.sh — hprof's options change its output as the usage text and
# legacy-agents/hprof/hprof_io.c document, on tests/java/HprofApp.java (NODES
# HprofApp$Node objects made in HprofApp.makeNodes, called from HprofApp.main):
#  - depth=1: no TRACE has more than one frame; the Node site's trace is makeNodes alone.
#    depth=6: some trace has more than the default 4 frames, none more than 6, and the
#    Node trace goes on to HprofApp.main.
#  - thread=y: every TRACE but the <empty> one names its thread, and the Node trace names
#    main's thread id.
#  - lineno=n: no frame carries a line number ("Unknown line", or "Native method").
#  - cutoff=0.05: every SITES row has a share of at least 5 %; cutoff=0 prints the rows
#    below the default cutoff as well (rows of 0.00 %), so more rows than the default.
#  - doe=n: THREAD START records are written, but no table, and nothing is dumped at exit.
#  - help: the usage goes to stdout, the VM exits with status 0 (ProfilerExit(0)) and the
#    application does not run.
#  - a bad option (unknown name, bad value): the usage goes to stderr with HPROF's
#    message naming the option, JVM_OnLoad refuses the start, the application does not run.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
NODES=1000
R=$WORK/java.hprof.txt
rows() { awk -v n="$2" 'index($0, n " BEGIN") == 1 {on=1; k=0; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/ {r[++k]=$0} END {for (i=1;i<=k;i++) print r[i]}' "$1"; }
frames() { awk -v id="$2" '$0 == "TRACE " id ":" || index($0, "TRACE " id ": (") == 1 {on=1; next} on && /^\t/ {sub(/^\t/, ""); print; next} on {exit}' "$1"; }
# max_frames FILE — the largest number of frames of any TRACE.
max_frames() { awk '/^TRACE [0-9]+:/ {if (n > m) m = n; n = 0; next} /^\t/ {n++} END {if (n > m) m = n; print m + 0}' "$1"; }
node_trace() { rows "$R" SITES | awk '$9 == "HprofApp$Node" {print $8; exit}'; }
run() {
  rm -f "$R"
  run_java "$(shim_arg hprof "$1")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
  expect_rc 0
  expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "$1: no error, warning or crash"
}

# depth=
run "heap=sites,depth=1"
expect_eq "$(max_frames "$R")" 1 "depth=1: most frames in a TRACE"
expect_nogrep "$R" '^TRACE [0-9]+: \(thread=' "thread=n (the default): no TRACE names a thread"
t=$(node_trace)
expect_eq "$(frames "$R" "${t:-0}" | sed 's/(.*//' | tr '\n' ' ')" "HprofApp.makeNodes " "depth=1: the Node trace"
run "heap=sites,depth=6,thread=y"
m=$(max_frames "$R")
if [ "$m" -gt 4 ] && [ "$m" -le 6 ]; then ok "depth=6: most frames in a TRACE = $m"; else bad "depth=6: most frames in a TRACE = $m"; fi
t=$(node_trace)
expect_eq "$(frames "$R" "${t:-0}" | sed 's/(.*//' | tr '\n' ' ')" "HprofApp.makeNodes HprofApp.main " "depth=6: the Node trace"

# thread=y (same run). Traces name their thread; a thread whose java.lang.Thread is still
# being built when it allocates (the one that ends the VM) has no id yet: such traces name none.
n_all=$(grep -cE '^TRACE [0-9]+:' "$R")
n_thr=$(grep -cE '^TRACE [0-9]+: \(thread=[0-9]+\)$' "$R")
if [ "$n_thr" -gt 0 ] && [ "$n_thr" -lt "$n_all" ]; then ok "thread=y: $n_thr of $n_all TRACE headers name a thread"; else bad "thread=y: $n_thr of $n_all TRACE headers name a thread"; fi
sed -n 's/^TRACE [0-9]*: (thread=\([0-9]*\))$/\1/p' "$R" | sort -u >"$WORK/named"
sed -n 's/^THREAD START (obj=[0-9a-f]*, id = \([0-9]*\), .*/\1/p' "$R" | sort -u >"$WORK/started"
expect_eq "$(comm -23 "$WORK/named" "$WORK/started" | tr '\n' ' ')" "" "thread=y: threads named by traces without a THREAD START"
main_id=$(sed -n 's/^THREAD START (obj=[0-9a-f]*, id = \([0-9]*\), name="main", group="main")$/\1/p' "$R")
expect_grep "$R" "^TRACE ${t:-0}: \\(thread=${main_id:-x}\\)\$" "thread=y: the Node trace is main's (thread ${main_id:-?})"

# lineno=n
run "heap=sites,lineno=n"
expect_nogrep "$R" $'^\t.*:[0-9]+\\)$' "lineno=n: no frame with a line number"
t=$(node_trace)
expect_eq "$(frames "$R" "${t:-0}" | head -n 1)" "HprofApp.makeNodes(HprofApp.java:Unknown line)" "lineno=n: the Node trace's top frame"

# cutoff=
run "heap=sites,cutoff=0.05"
rows "$R" SITES >"$WORK/cut"
n_cut=$(grep -c . "$WORK/cut")
low=$(awk '{p = $2; sub("%", "", p); if (p + 0 < 5) n++} END {print n + 0}' "$WORK/cut")
if [ "$n_cut" -ge 1 ] && [ "$low" -eq 0 ]; then ok "cutoff=0.05: $n_cut rows, all at 5 % or more"; else bad "cutoff=0.05: $n_cut rows, $low under 5 %"; fi
run "heap=sites,cutoff=0"
rows "$R" SITES >"$WORK/all"
n_all=$(grep -c . "$WORK/all")
zero=$(awk '$2 == "0.00%"' "$WORK/all" | grep -c .)
if [ "$n_all" -gt "$n_cut" ] && [ "$zero" -gt 0 ]; then ok "cutoff=0: $n_all rows, $zero of them 0.00 %"; else bad "cutoff=0: $n_all rows, $zero at 0.00 %"; fi

# doe=n
run "heap=sites,cpu=samples,doe=n"
expect_grep "$R" '^THREAD START \(obj=[0-9a-f]+, id = [0-9]+, name="main", group="main"\)$' "doe=n: THREAD START written"
expect_nogrep "$R" '^(SITES|CPU SAMPLES|HEAP DUMP|MONITOR TIME) BEGIN' "doe=n: no table"
expect_nogrep "$WORK/err" 'dumping the profile' "doe=n: nothing dumped at exit"

# help
run_java "$(shim_arg hprof "help")" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^HPROF usage: -Xrunhprof\[:help\]\|\[option=value, \.\.\.\]$' "help: usage on stdout"
expect_grep "$WORK/out" '^cpu=samples\|times\|old   CPU usage               off$' "help: the option table"
expect_nogrep "$WORK/out" '^hello$' "help: the application did not run"

# bad options
for bad_opt in "heap=bogus:heap= takes dump, sites or all" "depth=x:depth= takes a number from 0 to 1024" "frobnicate=1:unknown option"; do
  o=${bad_opt%%:*} why=${bad_opt#*:}
  run_java "$(shim_arg hprof "cpu=samples,$o")" -cp "$CLASSES" Hello
  if [ "$RC" -ne 0 ]; then ok "$o: the VM refused to start (rc=$RC)"; else bad "$o: rc=0"; fi
  expect_grep "$WORK/err" "^HPROF ERROR: bad option '$o': $why\$" "$o: HPROF names it"
  expect_grep "$WORK/err" '^HPROF usage: ' "$o: usage on stderr"
  expect_nogrep "$WORK/out" '^hello$' "$o: the application did not run"
done
finish
