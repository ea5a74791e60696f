#!/bin/bash
# report.sh — the migration report (report=PATH): it lists exactly what the agent used.
#
# legacy-agents/usage.c makes a fixed set of calls (7 GetCurrentThreadCpuTime, 3
# jobjectID2jobject of a garbage id, 2 RawMonitorEnter(NULL), 1 heap dump request, 6
# EnableEvent of which INSTRUCTION_START (with methods=jvmti) and 12 are refused) and prints the events it
# received; the report's counts must equal both. Also: every status printed agrees with
# docs/mapping.md, ProfilerExit names itself as the end, an unwritable report path is an
# error message while the program still runs, and a jvmpitop run lists the functions its
# sampler uses. The report's newer parts: the rejected ids by kind with the first example,
# the shim's own warnings counted apart, the time tables, the summary saying PROBLEMS, the
# trailer, the ranked summary (what will change the agent's output, what may, what is
# harmless: tidy.c's DisableEvent loops raise no alarm), the virtual threads of tests/java/VThreads.java where the JVM has them, and a Java
# native the agent binds to its own code (tests/java/AgentNatives.java).
source "$ROOT/tests/it/lib.sh"
R=$WORK/report.txt

# row FILE NAME — the report's table row for a function or event NAME ("33 THREAD_START").
row() { grep -E "^  $2 " "$1" | head -n 1; }
# field FILE NAME K — the K-th whitespace field after the name
fcol() { row "$1" "$2" | sed -E "s/^  $2 +//" | awk -v k="$3" '{print $k}'; }

# methods=jvmti: INSTRUCTION_START is then unavailable, which the report must say.
run_java "$(shim_arg usage "" "methods=jvmti,report=$R")" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$' "the program ran"
[ -s "$R" ] && ok "report written" || { bad "no report at $R"; show; finish; }
expect_grep "$R" '^jvmpishim migration report$' "report title"
expect_grep "$R" "^agent: +$AGENTS/libusage\.so" "report names the agent library"
expect_grep "$R" "^JVM: .*$JDK_MAJOR" "report names the JVM version"
expect_grep "$R" '^run: .*, ended by the JVM.s exit \(main returned or System\.exit\): the agent got JVM_SHUT_DOWN$' "report says how the run ended"

expect_eq "$(fcol "$R" GetCurrentThreadCpuTime 1)" 7 "GetCurrentThreadCpuTime calls"
expect_eq "$(fcol "$R" GetCurrentThreadCpuTime 2)" exact "GetCurrentThreadCpuTime status"
expect_eq "$(fcol "$R" jobjectID2jobject 1)" 3 "jobjectID2jobject calls"
expect_eq "$(fcol "$R" RawMonitorEnter 1)" 2 "RawMonitorEnter calls"
expect_eq "$(fcol "$R" RequestEvent 1)" 1 "RequestEvent calls"
expect_eq "$(fcol "$R" EnableEvent 1)" 6 "EnableEvent calls"
expect_nogrep "$R" '^  (GetCallTrace|SuspendThread|RawMonitorExit|ProfilerExit) ' "functions never called are not listed"

# Events: enable / refused / request / failed / delivered / status
expect_eq "$(fcol "$R" '9 INSTRUCTION_START' 2) $(fcol "$R" '9 INSTRUCTION_START' 6)" "1 unavailable" "INSTRUCTION_START refused, unavailable"
ts=$(sed -nE 's/^usage: shut down: thread_start=([0-9]+) class_load=([0-9]+) heap_dump=([0-9]+)$/\1 \2 \3/p' "$WORK/out")
read -r n_ts n_cl n_hd <<<"$ts"
expect_eq "$(fcol "$R" '33 THREAD_START' 5)" "${n_ts:-?}" "THREAD_START delivered = what the agent counted"
expect_eq "$(fcol "$R" '42 CLASS_LOAD' 5)" "${n_cl:-?}" "CLASS_LOAD delivered = what the agent counted"
expect_eq "$(fcol "$R" '37 HEAP_DUMP' 3) $(fcol "$R" '37 HEAP_DUMP' 5)" "1 ${n_hd:-?}" "HEAP_DUMP requested once, delivered as counted"
expect_eq "$(fcol "$R" '46 JVM_INIT_DONE' 5)" 1 "JVM_INIT_DONE delivered once"

# Warnings: the unavailable event, and each misuse with its count
expect_grep "$R" '^  - asked for INSTRUCTION_START \(1 EnableEvent call answered JVMPI_NOT_AVAILABLE\)' "warning: INSTRUCTION_START unavailable"
expect_grep "$R" '^  - 3 times: jobjectID2jobject\(0x5a5a5a58\): ' "warning: garbage id, 3 times"
expect_grep "$R" '^  - 2 times: RawMonitorEnter\(NULL\)' "warning: NULL raw monitor, 2 times"
expect_grep "$R" '^  - 1 time: EnableEvent\(12\): no such JVMPI event' "warning: unknown event number"
expect_grep "$R" '^summary: PROBLEMS: 2 things will change the agent.s output; ' "summary: the unavailable event and the rejected ids will change the output"
expect_grep "$R" '^  will change: the agent enabled INSTRUCTION_START, which this JVM cannot give' "summary: the unavailable event first"
expect_grep "$R" '^  will change: ids rejected: garbage \(never issued\): 3 ' "summary: the rejected ids"
expect_grep "$R" '^  may change:  the agent.s misuse, 2 times: RawMonitorEnter\(NULL\)' "summary: the NULL monitor may matter"
expect_grep "$R" '^  harmless:    1 call answered as HotSpot answered them' "summary: EnableEvent(12) is harmless (HotSpot said NOT_AVAILABLE too)"
expect_grep "$R" '^  - 1 time: EnableEvent\(12\): no such JVMPI event: JVMPI_NOT_AVAILABLE \[harmless' "warnings: EnableEvent(12) marked harmless"
# What happened: the garbage ids, counted by kind with the first example; the shim's own
# warning (INSTRUCTION_START unavailable) counted apart from the agent's misuse.
expect_grep "$R" '^  - ids rejected: garbage \(never issued\): 3; first: jobjectID2jobject\(0x5a5a5a58\): not an id the shim issued(: NULL)?$' "rejected ids: 3 garbage, the first example"
expect_grep "$R" '^  - warnings logged by the shim: 1; first: EnableEvent: JVMPI_EVENT_INSTRUCTION_START is not available' "the shim's warning counted once, misuse not"
# Time: the handlers of the delivered events and the shim's functions, with their counts.
expect_eq "$(sed -nE 's/^  33 THREAD_START +([0-9]+) +[0-9.]+ +[0-9.]+$/\1/p' "$R")" "${n_ts:-?}" "time table: THREAD_START handler row with its deliveries"
expect_grep "$R" '^  GetCurrentThreadCpuTime +7 +[0-9]+\.[0-9]{3} +[0-9.]+$' "time table: the shim's time serving GetCurrentThreadCpuTime (7 calls)"
expect_grep "$R" "^  in the agent's handlers: [0-9.]+ ms; in the shim serving its JVMPI calls: [0-9.]+ ms; process CPU time: [0-9.]+ s$" "time totals"
expect_grep "$R" '^end of report \(the run ended by the JVM.s exit' "the report ends with its trailer"

# Every status in the report agrees with docs/mapping.md's status column.
nchk=0; nbad=0
while read -r name status why; do
  if [[ "$name" =~ ^[0-9]+$ ]]; then
    doc=$(grep -E "^\| $name \`" "$ROOT/docs/mapping.md" | awk -F'|' '{gsub(/ /,"",$3); print $3}')
  else
    doc=$(grep -E "^\| \`$name\(" "$ROOT/docs/mapping.md" | awk -F'|' '{gsub(/ /,"",$3); print $3}')
  fi
  [ "$doc" = planned ] && doc=unavailable
  [ "$doc" = notavailable ] && doc=unavailable
  [ -z "$doc" ] && [[ "$name" =~ ^[0-9]+$ ]] && doc=unavailable   # an unused number
  nchk=$((nchk+1))
  # Unavailable on this run for a reason the report gives ("because ..."): a run-time fact.
  [ "$status" = unavailable ] && [ "$why" = because ] && continue
  [ "$doc" = "$status" ] || { nbad=$((nbad+1)); echo "     $name: report $status, mapping.md $doc"; }
done < <(awk '/^JVMPI functions called/{m=1;next} /^JVMPI events/{m=2;next} /^Warnings/{m=0}
             m==1 && $1!="function" && NF>=3 {print $1, $3, $4}
             m==2 && $1!="event" && NF>=8 {print $1, $8, $10}' "$R")
[ "$nbad" -eq 0 ] && [ "$nchk" -ge 10 ] && ok "all $nchk statuses agree with docs/mapping.md" || bad "$nbad of $nchk statuses disagree with docs/mapping.md"

# Harmless calls raise no alarm: legacy-agents/tidy.c switches every number 0..61 off in
# JVM_OnLoad and at JVM_SHUT_DOWN (unused numbers and request-only dumps answer
# NOT_AVAILABLE, as on HotSpot), and runs correctly: the summary must not say PROBLEMS.
run_java "$(shim_arg tidy "" "report=$R")" -cp "$CLASSES" Hello
expect_rc 0
na=$(sed -nE 's/^tidy: shut down .* not_available=([0-9]+)$/\1/p' "$WORK/out")
[ -n "$na" ] && [ "$na" -gt 0 ] && ok "tidy: $na DisableEvent calls answered NOT_AVAILABLE" || bad "tidy: no NOT_AVAILABLE counted ('$na')"
expect_grep "$R" '^summary: no problems: nothing will change the agent.s output; ' "tidy: the summary says no problems"
expect_nogrep "$R" 'PROBLEMS' "tidy: no PROBLEMS anywhere"
expect_grep "$R" "^  harmless:    ${na:-?} calls answered as HotSpot answered them" "tidy: each harmless call counted"
expect_nogrep "$WORK/err" 'warning' "tidy: no warning logged"

# ProfilerExit ends the run: the report says so, and the exit code is the agent's.
run_java "$(shim_arg usage exit=3 "report=$R")" -cp "$CLASSES" Hello
expect_rc 3
expect_grep "$R" 'ended by ProfilerExit\(3\) from agent 0: the JVM halted at once \(no shutdown hooks, no JVM_SHUT_DOWN\)$' "ProfilerExit run: report written and says so, plainly"
expect_eq "$(fcol "$R" ProfilerExit 1)" 1 "ProfilerExit calls"

# An unwritable path: an error naming it; the program runs to the end.
run_java "$(shim_arg usage "" "report=$WORK/no/such/dir/r.txt")" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$' "unwritable report: the program ran"
expect_grep "$WORK/err" "report=$WORK/no/such/dir/r\.txt: cannot write the migration report: No such file" "unwritable report: error names the path and reason"

# Virtual threads (where the JVM has them: probed by the workload through Thread.ofVirtual,
# not by a version number): the 8 that VThreads starts are counted, the first named, with
# the mode that ran (vthreads=threads by default; threads/vthreads_modes.sh has the other).
run_java "$(shim_arg crasher "" "report=$R")" -cp "$CLASSES" VThreads
expect_rc 0
if grep -q '^VThreads: no Thread.ofVirtual on this JVM$' "$WORK/out"; then
  echo "SKIPPED: virtual threads: this JVM has no Thread.ofVirtual (probed); their report line is not checked here"
  expect_nogrep "$R" '^  - virtual threads seen' "no virtual threads reported where there are none"
else
  expect_grep "$WORK/out" '^VThreads: started=8 done$' "the workload started 8 virtual threads"
  expect_grep "$R" '^  - virtual threads seen: 8; first: virtual thread "vt-[0-7]" was a JVMPI thread of its own \(vthreads=threads\)' \
    "virtual threads: 8 counted, the first named, each a JVMPI thread"
fi

# A Java native bound to the agent's code (RegisterNatives at JVM_INIT_DONE): counted, named.
run_java "$(shim_arg crasher natives "report=$R")" -cp "$CLASSES" AgentNatives
expect_rc 0
expect_grep "$WORK/out" '^crasher: RegisterNatives rc=0$' "the agent bound AgentNatives.answer"
expect_grep "$WORK/out" '^AgentNatives: answer=42$' "the native ran"
expect_grep "$R" '^  - Java natives bound to the agent library: 1; first: LAgentNatives;\.answer\(\)I bound to crasher_answer in the library of agent 0$' \
  "natives bound to the agent library: 1, named with its symbol"

# A real profiler: jvmpitop's sampler calls show up with their counts.
run_java "$(shim_arg jvmpitop "file=$WORK/top.txt,interval=5" "report=$R")" -cp "$CLASSES" DemoApp
expect_rc 0
for fn in GetCallTrace SuspendThread ResumeThread CreateSystemThread RawMonitorEnter; do
  c=$(fcol "$R" $fn 1)
  [ -n "$c" ] && [ "$c" -gt 0 ] 2>/dev/null && ok "jvmpitop: $fn used ($c calls)" || bad "jvmpitop: $fn missing from the report"
done
expect_eq "$(fcol "$R" SuspendThread 1)" "$(fcol "$R" ResumeThread 1)" "jvmpitop: SuspendThread calls = ResumeThread calls"
a=$(fcol "$R" '4 OBJECT_ALLOC' 5)
[ -n "$a" ] && [ "$a" -gt 1000 ] 2>/dev/null && ok "jvmpitop: OBJECT_ALLOC delivered ($a)" || bad "jvmpitop: OBJECT_ALLOC deliveries '$a'"
finish
