#!/bin/bash
# record.sh — record=PATH writes what the agent got and did, and build/jvmpitrace reads it.
#   counts   legacy-agents/usage.c makes a fixed set of calls (6 EnableEvent of which 2 are
#            refused, 7 GetCurrentThreadCpuTime, 3 jobjectID2jobject of a garbage id, 2
#            RawMonitorEnter(NULL), 1 RequestEvent(HEAP_DUMP)) and prints the events it got:
#            `jvmpitrace stats` counts exactly those calls, their answers and those events;
#            print shows the calls with their arguments and results, the heap dump with its
#            bytes, and the classes by name; check finds the contract held; the end block
#            says JVM_SHUT_DOWN, or ProfilerExit(3) when the agent calls it.
#   names    two agents given the same record= path write PATH and PATH.1, each with its
#            agent named in the header (legacy-agents/lifecycle.c and jit_symbols.c).
#   killed   a run killed by SIGKILL while recording leaves a file that reads up to its last
#            whole chunk, says it has no end block (or where it is cut), and checks.
#   damaged  a byte changed in the middle of a recording: print, stats and check read up to
#            the damaged block and name its offset (exit status 2), never crash.
#   slow     the file is a pipe that nobody reads until the program is over, with a 1 MB
#            buffer budget (JVMPISHIM_RECORD_BUFFER_MB=1): the program runs to its end, the
#            records that did not fit are dropped and counted (LOST and DROPPED records, which
#            add up to the end block's total; a warning), and the file still reads and checks.
#   dumps    with a 1 MB budget, the level-1 and level-2 heap dumps of legacy-agents/dump_agent.c
#            (about 1 MB each) are recorded as length, digest and summary: the summary counts
#            the records of each type that build/jvmpidump decodes from the bytes the agent
#            wrote, and the small level-0 dump is recorded whole, as the agent wrote it.
#   errors   an unwritable record= path is an error message naming it; the program runs.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=180
T=$ROOT/build/jvmpitrace
R=$WORK/usage.jvmpirec

# count_of NAME FILE — the count on jvmpitrace stats' line for NAME.
count_of() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }
# field NAME KEY FILE — KEY=value on stats' line for NAME.
field() { awk -v n="$1" -v k="$2" '$1 == n { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' "$3"; }

echo "== counts: the usage agent, recorded"
run_java "$(shim_arg usage "" "methods=jvmti,record=$R")" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$' "the program ran"
[ -s "$R" ] && ok "recording written" || { bad "no recording at $R"; finish; }
"$T" stats "$R" >"$WORK/stats" 2>"$WORK/stats.err"
expect_eq "$?" 0 "jvmpitrace stats exit status"
ts=$(sed -nE 's/^usage: shut down: thread_start=([0-9]+) class_load=([0-9]+) heap_dump=([0-9]+)$/\1 \2 \3/p' "$WORK/out")
read -r n_ts n_cl n_hd <<<"$ts"
expect_eq "$(count_of EnableEvent "$WORK/stats")" 6 "EnableEvent calls"
expect_eq "$(field EnableEvent SUCCESS "$WORK/stats") $(field EnableEvent NOT_AVAILABLE "$WORK/stats")" "4 2" "EnableEvent answers: 4 SUCCESS, 2 NOT_AVAILABLE"
expect_eq "$(count_of GetCurrentThreadCpuTime "$WORK/stats")" 7 "GetCurrentThreadCpuTime calls"
expect_eq "$(count_of jobjectID2jobject "$WORK/stats")" 3 "jobjectID2jobject calls"
expect_eq "$(count_of RawMonitorEnter "$WORK/stats")" 2 "RawMonitorEnter calls"
expect_eq "$(count_of RequestEvent "$WORK/stats")" 1 "RequestEvent calls"
expect_eq "$(count_of THREAD_START "$WORK/stats")" "${n_ts:-?}" "THREAD_START = what the agent counted"
expect_eq "$(count_of CLASS_LOAD "$WORK/stats")" "${n_cl:-?}" "CLASS_LOAD = what the agent counted"
expect_eq "$(count_of HEAP_DUMP "$WORK/stats") $(field HEAP_DUMP requested "$WORK/stats")" "${n_hd:-?} 1" "HEAP_DUMP, requested"
expect_eq "$(count_of JVM_INIT_DONE "$WORK/stats") $(count_of JVM_SHUT_DOWN "$WORK/stats")" "1 1" "JVM_INIT_DONE and JVM_SHUT_DOWN once"
expect_nogrep "$WORK/stats" '^(GetCallTrace|METHOD_ENTRY|OBJECT_ALLOC) ' "nothing the agent did not get or call"
expect_grep "$WORK/stats" '^ended JVM_SHUT_DOWN \(normal: yes\)$' "the end block: JVM_SHUT_DOWN"
expect_grep "$WORK/stats" '^records [0-9]+ seq 1\.\.[0-9]+ threads [0-9]+ lost 0$' "no record lost"
"$T" print "$R" >"$WORK/print" 2>&1
expect_eq "$?" 0 "jvmpitrace print exit status"
expect_grep "$WORK/print" '^#[0-9]+ \[main\] CALL:EnableEvent event_type=INSTRUCTION_START arg=NULL$' "print: a call with its arguments"
expect_grep "$WORK/print" '^#[0-9]+ \[main\] RET:EnableEvent result=NOT_AVAILABLE\(1\)$' "print: its result"
expect_count "$WORK/print" '\] CALL:jobjectID2jobject object=obj@0x5a5a5a58$' 3 "print: the garbage id, 3 times"
expect_count "$WORK/print" '\] CALL:RawMonitorEnter monitor=NULL$' 2 "print: RawMonitorEnter(NULL), twice"
expect_grep "$WORK/print" '^#[0-9]+ \[main\] HEAP_DUMP\+REQUESTED level=0 length=[1-9][0-9]* digest=[0-9a-f]{16} data=<[1-9][0-9]* bytes>' "print: the heap dump with its bytes"
expect_grep "$WORK/print" '\] CLASS_LOAD class_name="Hello" source_name="Hello.java" .*methods=\[\{name="<init>" signature="\(\)V"' "print: Hello's CLASS_LOAD, its methods by name"
"$T" print "$R" --event=CLASS_LOAD --class='java.lang.Str*' >"$WORK/print2"
expect_grep "$WORK/print2" 'class_name="java.lang.String"' "print --class: java.lang.String"
expect_nogrep "$WORK/print2" 'class_name="Hello"|CALL:' "print --class and --event select"
"$T" check "$R" >"$WORK/check" 2>&1
expect_eq "$?" 0 "jvmpitrace check: the contract held"
expect_grep "$WORK/check" '^checked [0-9]+ records: the JVMPI contract held$' "check's last line"

echo "== the end: ProfilerExit(3)"
run_java "$(shim_arg usage exit=3 "record=$R")" -cp "$CLASSES" Hello
expect_rc 3
"$T" stats "$R" >"$WORK/stats" 2>&1
expect_grep "$WORK/stats" '^ProfilerExit 1 ' "the ProfilerExit call"
expect_grep "$WORK/stats" '^ended ProfilerExit\(3\) \(normal: yes\)$' "the end block: ProfilerExit(3)"

echo "== names: two agents, one path"
R2=$WORK/two.jvmpirec
run_java "$(shim_arg lifecycle "" "record=$R2")" "$(shim_arg jit_symbols "" "record=$R2")" -cp "$CLASSES" Hello
expect_rc 0
[ -s "$R2" ] && [ -s "$R2.1" ] && ok "PATH and PATH.1 written" || bad "files: $(ls "$WORK" | tr '\n' ' ')"
"$T" header "$R2" >"$WORK/h0" 2>&1
"$T" header "$R2.1" >"$WORK/h1" 2>&1
expect_grep "$WORK/h0" "^agent $AGENTS/liblifecycle\.so\$" "PATH: the first agent's"
expect_grep "$WORK/h1" "^agent $AGENTS/libjit_symbols\.so\$" "PATH.1: the second agent's"
expect_grep "$WORK/h1" '^agent_slot 1$' "PATH.1: agent slot 1"
expect_grep "$WORK/h0" '^rec 42 CLASS_LOAD$|^rec 42 CLASS_LOAD \(' "the header carries the schema"

echo "== killed: SIGKILL while recording"
K=$WORK/killed.jvmpirec
rm -f "$K" "$WORK/k.pid"
# Through sh, whose wait reports no job killed (tests/run.sh takes such lines for errors).
# shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
sh -c '"$@" >"$0.out" 2>"$0.err" & echo $! >"$0.pid"; wait $!' "$WORK/k" \
  "$JAVA" ${JVMPI_TEST_JAVA_OPTS:-} "$(shim_arg hprof cpu=times,file=$WORK/hprof.txt "record=$K")" -cp "$CLASSES" \
  RecordWork 1000000 2>/dev/null &
SHPID=$!
for _ in $(seq 1 100); do [ -s "$WORK/k.pid" ] && break; sleep 0.05; done
JPID=$(cat "$WORK/k.pid")
for _ in $(seq 1 600); do
  [ "$(stat -c %s "$K" 2>/dev/null || echo 0)" -gt 2000000 ] && break
  kill -0 "$JPID" 2>/dev/null || break
  sleep 0.1
done
kill -KILL "$JPID" 2>/dev/null
wait $SHPID
echo "+ killed the JVM with a $(stat -c %s "$K" 2>/dev/null) byte recording"
"$T" stats "$K" >"$WORK/stats" 2>"$WORK/stats.err"
st=$?
if [ $st -eq 0 ] || [ $st -eq 2 ]; then ok "stats on the killed run's file: exit status $st"; else bad "stats: exit status $st"; cat "$WORK/stats.err"; fi
expect_grep "$WORK/stats" '^ended: no end block: the run did not end normally' "stats: no end block"
n=$(sed -nE 's/^METHOD_ENTRY ([0-9]+) .*/\1/p' "$WORK/stats")
[ "${n:-0}" -gt 1000 ] && ok "the records before the kill read: $n METHOD_ENTRY" || bad "METHOD_ENTRY read: '$n'"
[ $st -eq 2 ] && expect_grep "$WORK/stats.err" 'truncated: .* at offset [0-9]+' "a cut block is named by its offset"
"$T" check "$K" >"$WORK/check" 2>&1
st=$?
if [ $st -eq 0 ] || [ $st -eq 2 ]; then ok "check on the killed run's file: exit status $st"; else bad "check: exit status $st"; tail -n 5 "$WORK/check"; fi
expect_grep "$WORK/check" '^note: no end block: the run did not end normally' "check: says it did not end normally"

echo "== damaged: a byte changed"
D=$WORK/damaged.jvmpirec
run_java "$(shim_arg usage "" "record=$D")" -cp "$CLASSES" Hello
size=$(stat -c %s "$D")
at=$((size / 2))
printf '\x55' | dd of="$D" bs=1 seek=$at conv=notrunc status=none
for cmd in print stats check; do
  "$T" $cmd "$D" >"$WORK/$cmd.out" 2>"$WORK/$cmd.err"
  st=$?
  expect_eq "$st" 2 "$cmd on a damaged file: exit status"
  expect_grep "$WORK/$cmd.err" "damaged: .*offset [0-9]+.*records before it were read" "$cmd names the damage"
done
off=$(sed -nE 's/.*damaged: the block at offset ([0-9]+) .*/\1/p' "$WORK/stats.err")
if [ -n "$off" ] && [ "$off" -le "$at" ]; then ok "the damaged block ($off) holds the changed byte ($at)"; else bad "damage named at '$off', byte $at"; fi
expect_grep "$WORK/stats.out" '^CLASS_LOAD [1-9]' "stats still counts what comes before"

echo "== slow: a pipe read only after the program is done, 1 MB of buffers"
P=$WORK/slow.fifo
rm -f "$P" "$WORK/slow.jvmpirec"
mkfifo "$P"
# The reader starts once the program has printed its last line: until then the writer
# waits to open the pipe and the program runs on, dropping what the buffers cannot hold.
( for _ in $(seq 1 1200); do grep -q '^RecordWork: done' "$WORK/slow.out" 2>/dev/null && break; sleep 0.1; done
  cat "$P" >"$WORK/slow.jvmpirec" ) &
RPID=$!
# shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
JVMPISHIM_RECORD_BUFFER_MB=1 timeout -k 5 "$JAVA_TIMEOUT" "$JAVA" ${JVMPI_TEST_JAVA_OPTS:-} \
  "$(shim_arg hprof cpu=times,file=$WORK/hprof2.txt "record=$P")" -cp "$CLASSES" RecordWork 200 >"$WORK/slow.out" 2>"$WORK/slow.err"
RC=$?
wait $RPID
echo "+ java ... RecordWork 200 (recording into a pipe) -> rc=$RC"
expect_rc 0
expect_grep "$WORK/slow.out" '^RecordWork: done rounds=200 ' "the program ran to its end"
expect_grep "$WORK/slow.err" 'records were dropped because the writer fell behind' "a warning says records were dropped"
"$T" stats "$WORK/slow.jvmpirec" >"$WORK/stats" 2>&1
expect_eq "$?" 0 "stats on the slow recording"
lost=$(sed -nE 's/^records [0-9]+ seq .* lost ([0-9]+)( .*)?$/\1/p' "$WORK/stats")
[ "${lost:-0}" -gt 0 ] && ok "LOST records count $lost dropped records" || bad "lost: '$lost'"
"$T" header "$WORK/slow.jvmpirec" >"$WORK/h" 2>&1
el=$(sed -nE 's/^end lost ([0-9]+)$/\1/p' "$WORK/h")
# The LOST records (a thread's own, when it records again) and the DROPPED ones (written at
# the end for threads that ended, or were still dropping) add up to the end block's total.
expect_eq "$el" "${lost:-?}" "the end block's total of dropped records (= LOST + DROPPED)"
expect_grep "$WORK/stats" "dropped in all: $el" "stats gives the end block's total"
"$T" check "$WORK/slow.jvmpirec" >"$WORK/check" 2>&1
expect_eq "$?" 0 "check on a recording with losses"
expect_grep "$WORK/check" '^note: [0-9]+ records of thread .* were lost after #[0-9]+' "check says where records were lost"

echo "== dumps: recorded whole, or as their summary"
mkdir -p "$WORK/dumps"
cd "$WORK/dumps" || exit 1 # the agent writes its dumps in the current directory
JVMPISHIM_RECORD_BUFFER_MB=1 run_java "$(shim_arg dump_agent heap "record=$WORK/dumps.jvmpirec")" -cp "$CLASSES" DumpMarkers 30000
cd "$WORK" || exit 1
expect_rc 0
"$T" print "$WORK/dumps.jvmpirec" --event=HEAP_DUMP --full >"$WORK/dumps.print" 2>&1
expect_grep "$WORK/dumps.print" "level=0 length=$(stat -c %s "$WORK/dumps/heap0.dump") digest=[0-9a-f]+ data=<[0-9]+ bytes> summary=\[\]" "level 0: recorded whole"
for l in 1 2; do
  line=$(grep -m1 " level=$l length=" "$WORK/dumps.print")
  [[ "$line" == *"data=NULL summary=[{"* ]] && ok "level $l: recorded as its summary" || bad "level $l: '$line'"
  "$ROOT/build/jvmpidump" heap $l "$WORK/dumps/heap$l.dump" "$WORK/dumps/classes.txt" >"$WORK/dumps/d$l" 2>&1
  for kv in INSTANCE:0x21 OBJARRAY:0x22 PRIMARRAY:0x23 CLASS:0x20; do
    want=$(grep -c "^${kv%%:*} " "$WORK/dumps/d$l")
    got=$(echo "$line" | grep -o "record_type=${kv#*:} count=[0-9]*" | sed 's/.*count=//')
    expect_eq "${got:-0}" "$want" "level $l: ${kv%%:*} records in the summary, as jvmpidump decodes them"
  done
done
"$T" check "$WORK/dumps.jvmpirec" >"$WORK/check" 2>&1
expect_eq "$?" 0 "check on the dumps' recording"

echo "== errors: an unwritable path"
run_java "$(shim_arg usage "" "record=$WORK/no/such/dir/x.jvmpirec")" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$' "the program ran"
expect_grep "$WORK/err" "record=$WORK/no/such/dir/x\.jvmpirec: cannot open it for writing \(No such file or directory\)" "the error names the path"
finish
