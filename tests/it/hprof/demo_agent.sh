#!/bin/bash
# demo_agent.sh — the `make demo` profiler (legacy-agents/jvmpitop.c, a JDK 1.3-style JVMPI
# agent: allocation sites from OBJECT_ALLOC/OBJECT_FREE + GetCallTrace, CPU samples from a
# CreateSystemThread sampler with Suspend/GetThreadStatus/ThreadHasRun/GetCallTrace/Resume)
# profiles tests/java/DemoApp.java. Ground truth is what DemoApp prints:
#  - the report exists and is whole (header, THREADS, TRACEs, SITES, CPU SAMPLES);
#  - SITES names DemoApp$Record with exactly as many alloc'ed objects as DemoApp made (every
#    Record escapes into a kept list, so each one is really allocated and OBJECT_ALLOC must
#    report each), all still live (no OBJECT_FREE for a reachable object), at sites whose
#    trace starts in DemoApp$Allocator.makeRecord;
#  - CPU SAMPLES has a trace whose top frame is DemoApp$Cruncher.mandelbrot (the CPU-bound
#    worker), and its TRACE block says so;
#  - THREADS lists the workers cruncher, allocator and churner in group demo-workers;
#  - no FAIL, no crash, no shim error, exit status 0.
# Then a bad agent option stops the VM with the agent's message (JVM_OnLoad returns JNI_ERR).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90

R=$WORK/jvmpitop.txt
run_java "$(shim_arg jvmpitop "file=$R,interval=5,depth=4,top=100000")" -cp "$CLASSES" DemoApp
o=$WORK/out e=$WORK/err
expect_rc 0
expect_grep "$o" '^DemoApp: done in .* allocator [0-9]+ DemoApp\$Record objects \(kept [0-9]+\)' "DemoApp finished"
expect_grep "$e" "^jvmpitop: profile written to $R " "agent says it wrote the report"
expect_nogrep "$o" 'FAIL' "no FAIL on stdout"
expect_nogrep "$e" 'FAIL|SIGSEGV|SIGBUS|fatal error|hs_err|Internal Error' "no FAIL or crash on stderr"
expect_nogrep "$e" 'jvmpishim: (error|warning)' "no shim error or warning"

if [ ! -s "$R" ]; then
  bad "no report at $R"
  finish
fi
ok "report written"
expect_grep "$R" '^JVMPITOP PROFILE 1\.0, created .* \(at JVM_SHUT_DOWN\)$' "report header (final, at JVM_SHUT_DOWN)"
for s in "THREADS" "SITES" "CPU SAMPLES"; do
  expect_count "$R" "^$s BEGIN " 1 "one $s table"
  expect_count "$R" "^$s END\$" 1 "$s table ends"
done
expect_grep "$R" '^TRACE [0-9]+:$' "TRACE blocks present"

# rows TABLE — the numbered rows of a table.
rows() { awk -v n="$1" 'index($0, n " BEGIN") == 1 {on=1; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/' "$R"; }
# trace_top ID — the first frame of TRACE ID.
trace_top() { awk -v id="$1" '$0 == "TRACE " id ":" {getline; sub(/^\t/, ""); print; exit}' "$R"; }

# Allocation sites: SITES columns are rank self accum live-bytes live-objs alloc-bytes alloc-objs trace name.
made=$(sed -n 's/^DemoApp: done in .* allocator \([0-9]*\) DemoApp\$Record objects.*/\1/p' "$o")
kept=$(sed -n 's/^DemoApp: done in .* (kept \([0-9]*\)).*/\1/p' "$o")
expect_eq "$kept" "$made" "DemoApp kept every Record it made"
rec_rows=$(rows SITES | awk '$9 == "DemoApp$Record"')
nrec=$(printf '%s' "$rec_rows" | grep -c .)
if [ "$nrec" -ge 1 ]; then ok "SITES names DemoApp\$Record ($nrec site(s))"; else bad "SITES does not name DemoApp\$Record"; rows SITES | head -20 | sed 's/^/     | /'; fi
alloc=$(printf '%s\n' "$rec_rows" | awk '{s += $7} END {print s + 0}')
live=$(printf '%s\n' "$rec_rows" | awk '{s += $5} END {print s + 0}')
expect_eq "$alloc" "$made" "SITES: alloc'ed DemoApp\$Record objects (DemoApp made $made)"
expect_eq "$live" "$made" "SITES: live DemoApp\$Record objects (all are kept)"
for t in $(printf '%s\n' "$rec_rows" | awk '{print $8}'); do
  top=$(trace_top "$t")
  if [[ "$top" == 'DemoApp$Allocator.makeRecord(DemoApp.java:'[0-9]*')' ]]; then
    ok "Record site trace $t starts at $top"
  else
    bad "Record site trace $t starts at '$top', expected DemoApp\$Allocator.makeRecord(DemoApp.java:N)"
  fi
done
expect_grep "$R" '^heap: [0-9]+ objects allocated' "heap summary line"

# CPU samples: columns are rank self accum count trace method.
cpu_rows=$(rows "CPU SAMPLES" | awk '$6 == "DemoApp$Cruncher.mandelbrot"')
ncpu=$(printf '%s' "$cpu_rows" | grep -c .)
if [ "$ncpu" -ge 1 ]; then
  ok "CPU SAMPLES: $ncpu trace(s) with top frame DemoApp\$Cruncher.mandelbrot, $(printf '%s\n' "$cpu_rows" | awk '{s += $4} END {print s}') samples"
  t=$(printf '%s\n' "$cpu_rows" | head -n 1 | awk '{print $5}')
  top=$(trace_top "$t")
  if [[ "$top" == 'DemoApp$Cruncher.mandelbrot(DemoApp.java:'[0-9]*')' ]]; then ok "TRACE $t starts at $top"
  else bad "TRACE $t starts at '$top', expected DemoApp\$Cruncher.mandelbrot(DemoApp.java:N)"; fi
else
  bad "CPU SAMPLES has no trace with top frame DemoApp\$Cruncher.mandelbrot"
  rows "CPU SAMPLES" | head -15 | sed 's/^/     | /'
fi

# Threads: columns are no name group state ...
for w in cruncher allocator churner; do
  expect_grep "$R" "^ +[0-9]+  $w +demo-workers +ended " "THREADS lists worker '$w' (group demo-workers, ended)"
done
expect_grep "$R" '^ +[0-9]+  main +main ' "THREADS lists main"

# A bad option: the agent refuses to load and the VM does not run the application.
run_java "$(shim_arg jvmpitop "top=0")" -cp "$CLASSES" Hello
if [ "$RC" -ne 0 ]; then ok "bad option: exit status $RC (non-zero)"; else bad "bad option: exit status 0"; fi
expect_grep "$WORK/err" "^jvmpitop: bad option 'top=0'$" "bad option named by the agent"
expect_nogrep "$WORK/out" '^hello$' "application did not run"
finish
