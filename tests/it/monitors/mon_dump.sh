#!/bin/bash
# mon_dump.sh — RequestEvent(MONITOR_DUMP) through the mon_dump agent (legacy-agents/mon_dump.c)
# against tests/java/MonDump.java. State at the dump: md-A owns L (a MonDumpLock) entered
# twice and sleeps, md-B blocks entering L, md-C (which entered L before A) is in L.wait();
# the agent's raw monitor "md_raw_lock" R is owned by md-raw-owner, md-raw-enterer blocks
# in RawMonitorEnter(R), md-raw-waiter is in RawMonitorWait(R, 0). The agent writes the
# dump buffer to monitor.dump; tests/tools/jvmpidump decodes it.
# Checked: the decoder consumes the dump exactly; exactly one JAVA record for L (class
# found by RequestEvent(OBJECT_ALLOC)) with owner = md-A's env, entry count 2 (HotSpot:
# contenders + waiters), waiting to enter = [md-B], waiting to be notified = [md-C];
# exactly one RAW record for R with a name pointer reading "md_raw_lock" (the VM's copy),
# owner = md-raw-owner, entry count 2, [md-raw-enterer], [md-raw-waiter]; num_traces =
# live threads, every traces[i].env_id named by THREAD_START, no duplicates;
# threads_status: md-A (sleeping) CONDVAR_WAIT, md-B MONITOR_WAIT, md-C CONDVAR_WAIT,
# md-raw-enterer MONITOR_WAIT, md-raw-waiter CONDVAR_WAIT, the requesting md-control RUNNABLE.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40

run_java "$(shim_arg mon_dump)" -cp "$CLASSES" MonDump 30000
o=$WORK/out
expect_rc 0
expect_grep "$o" '^MonDump: ready$' "workload set up its monitor state"
expect_grep "$o" '^MonDump: done=ok$' "agent signalled the workload after the dump"
expect_nogrep "$o" '^md: FAIL' "no FAIL from the agent"
expect_grep "$o" '^md: done fails=0$' "agent finished its checks"
expect_grep "$o" '^md: RequestEvent\(MONITOR_DUMP\) rc=0 events=1$' "RequestEvent(MONITOR_DUMP) -> JVMPI_SUCCESS, one event"
expect_grep "$o" '^md: MONITOR_DUMP requested=1 env=md-control ' "MONITOR_DUMP|REQUESTED on the requesting thread"
expect_grep "$o" '^md: raw threads ready: enterer status=2 waiter status=3$' "raw threads in place (GetThreadStatus MONITOR_WAIT / CONDVAR_WAIT)"

env_of() { sed -n "s/^md: thread name=$1 env=\\(0x[0-9a-f]*\\)\$/\\1/p" "$o" | head -n1; }
A=$(env_of md-A); B=$(env_of md-B); C=$(env_of md-C)
RO=$(env_of md-raw-owner); RE=$(env_of md-raw-enterer); RW=$(env_of md-raw-waiter)
echo "     envs: A=$A B=$B C=$C raw-owner=$RO raw-enterer=$RE raw-waiter=$RW"
[ -n "$A" ] && [ -n "$B" ] && [ -n "$C" ] && [ -n "$RO" ] && [ -n "$RE" ] && [ -n "$RW" ] &&
  ok "THREAD_START named all six threads" || bad "missing THREAD_START env"

if [ -f "$WORK/monitor.dump" ]; then
  "$ROOT/build/jvmpidump" --ids="${ID_BYTES:-8}" monitor "$WORK/monitor.dump" >"$WORK/decoded" 2>&1
  d=$WORK/decoded
  expect_grep "$d" '^OK [0-9]+ records, [0-9]+ bytes$' "decoder consumed the whole dump"
  nrec=$(sed -n 's/^OK \([0-9]*\) records.*/\1/p' "$d")
  expect_eq "$nrec" "$(grep -c '^md: rec ' "$o")" "records decoded (= records the agent walked)"

  # Java monitor L
  L=$(sed -n 's/^md: java monitor object=\(0x[0-9a-f]*\) class=MonDumpLock$/\1/p' "$o")
  expect_eq "$(echo "$L" | grep -c .)" 1 "JAVA records whose object is a MonDumpLock"
  expect_count "$d" "^MONITOR JAVA object=$L " 1 "exactly one JAVA record for L ($L)"
  expect_grep "$d" "^MONITOR JAVA object=$L owner=$A entry=2 enter=1: $B notify=1: $C\$" \
    "L: owner md-A, entry count 2, waiting to enter [md-B], waiting to be notified [md-C]"

  # Raw monitor R
  R=$(sed -n 's/^md: raw created id=\(0x[0-9a-f]*\) .*/\1/p' "$o")
  buf=$(sed -n 's/^md: raw created id=.* agent_name_buf=\(0x[0-9a-f]*\)$/\1/p' "$o")
  expect_count "$d" "^MONITOR RAW name=[^ ]* id=$R " 1 "exactly one RAW record for R ($R)"
  np=$(sed -n "s/^MONITOR RAW name=\\([^ ]*\\) id=$R .*/\\1/p" "$d")
  expect_grep "$o" "^md: rec RAW name_ptr=$np name=md_raw_lock id=$R " "R's name pointer ($np) reads \"md_raw_lock\" in the handler"
  [ -n "$np" ] && [ "$np" != "$buf" ] && ok "R's name pointer is the VM's copy, not the agent's buffer" || bad "name pointer $np, agent buffer $buf"
  expect_grep "$d" "^MONITOR RAW name=$np id=$R owner=$RO entry=2 enter=1: $RE notify=1: $RW\$" \
    "R: owner md-raw-owner, entry count 2, [md-raw-enterer], [md-raw-waiter]"
else
  bad "no monitor.dump written"
fi

# Traces and thread status
tl=$(grep '^md: num_traces=' "$o")
nt=$(echo "$tl" | sed -n 's/.*num_traces=\([0-9]*\) .*/\1/p'); live=$(echo "$tl" | sed -n 's/.*live_threads=\([0-9]*\) .*/\1/p')
expect_eq "$nt" "$live" "num_traces (= live threads from THREAD_START/END)"
expect_grep "$o" '^md: num_traces=.* traces=set status=set$' "traces and threads_status set"
expect_count "$o" '^md: trace i=' "${nt:-0}" "trace lines"
expect_nogrep "$o" '^md: trace i=[0-9]+ env=[^ ]+ name=\? ' "every traces[i].env_id known from THREAD_START"
dups=$(sed -n 's/^md: trace i=[0-9]* env=\([^ ]*\) .*/\1/p' "$o" | sort | uniq -d)
[ -z "$dups" ] && ok "no env id twice in traces" || bad "env ids twice in traces: $dups"
status_of() { sed -n "s/^md: trace i=[0-9]* env=[^ ]* name=$1 frames=[-0-9]* status=\\([-0-9]*\\)\$/\\1/p" "$o" | head -n1; }
expect_eq "$(status_of md-A)" 3 "threads_status of md-A (sleeping in L: CONDVAR_WAIT)"
expect_eq "$(status_of md-B)" 2 "threads_status of md-B (blocked entering L: MONITOR_WAIT)"
expect_eq "$(status_of md-C)" 3 "threads_status of md-C (in L.wait(): CONDVAR_WAIT)"
expect_eq "$(status_of md-raw-enterer)" 2 "threads_status of md-raw-enterer (RawMonitorEnter: MONITOR_WAIT)"
expect_eq "$(status_of md-raw-waiter)" 3 "threads_status of md-raw-waiter (RawMonitorWait: CONDVAR_WAIT)"
expect_eq "$(status_of md-control)" 1 "threads_status of the requesting thread md-control (RUNNABLE)"
fr=$(sed -n 's/^md: trace i=[0-9]* env=[^ ]* name=md-A frames=\([0-9]*\) .*/\1/p' "$o")
[ -n "$fr" ] && [ "$fr" -ge 2 ] && ok "md-A's trace has $fr frames (sleep inside A.run)" || bad "md-A trace frames=$fr"
expect_nogrep "$WORK/err" 'ERROR|malformed' "no shim errors"

finish
