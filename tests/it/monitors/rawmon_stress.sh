#!/bin/bash
# rawmon_stress.sh — one raw monitor hammered from 8 threads (4 Java system threads, 4
# pthreads of the agent's own) with RAW_MONITOR_CONTENDED_* on, Wait(0)/NotifyAll under
# load, and a destroyed monitor used from other threads (legacy-agents/rawmon_stress.c).
# Checked: mutual exclusion (no thread finds the monitor occupied; the shared counter ends
# at threads x rounds, reentrant enters included); per thread as many CONTENDED_ENTERED as
# CONTENDED_ENTER, some of each and some CONTENDED_EXITs, all with the monitor's id and the
# VM's copy of its name, none for a "_" name; no lost wake-up in 200 generations of
# NotifyAll to 4 waiters; calls on a destroyed monitor and on a pointer that is not a
# monitor return at once, one warning each, and do not hold a monitor created after it.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=180

run_java "$(shim_arg rawmon_stress)" -cp "$CLASSES" Hello
o=$WORK/out
expect_rc 0
expect_grep "$o" '^rawmon_stress: done fails=0$' "agent finished its checks without a failure"
expect_nogrep "$o" '^rawmon_stress: FAIL' "no FAIL from the agent"
expect_grep "$o" '^rawmon_stress: hammer threads=8 rounds=20000 counter=160000 expected=160000 collisions=0$' \
  "mutual exclusion: 160000 increments, no collision"
line=$(grep '^rawmon_stress: events ' "$o" | head -n 1)
echo "     $line"
field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
e=$(field enter); ed=$(field entered); x=$(field exit)
if [ -n "$e" ] && [ "$e" -ge 1 ] && [ "$e" = "$ed" ]; then ok "CONTENDED_ENTER = CONTENDED_ENTERED = $e >= 1"
else bad "enter=$e entered=$ed"; fi
if [ -n "$x" ] && [ "$x" -ge 1 ]; then ok "CONTENDED_EXIT = $x >= 1"; else bad "exit=$x"; fi
expect_eq "$(field unbalanced_threads)" 0 "threads whose ENTER and ENTERED counts differ"
expect_eq "$(field wrong)" 0 "events with another id or name"
expect_eq "$(field silent)" 0 "events of the monitor named _..."
expect_grep "$o" '^rawmon_stress: wait waiters=4 generations=200 caught=800 done=4 ' "every waiter caught every generation"
expect_grep "$o" '^rawmon_stress: destroyed calls_done=2 ms=[0-9]+ fresh_free=yes$' \
  "calls on a destroyed monitor returned and held nothing"
# The handle of a destroyed monitor: on x86-64 it carries the raw-monitor tag 0x4a50 in its
# top 16 bits; on i386 (4-byte handles) generation, slot and tag share 32 bits.
handle='0x4a50[0-9a-f]+'
[ "${ID_BYTES:-8}" = 4 ] && handle='0x[0-9a-f]+'
for f in Enter Exit Wait NotifyAll Destroy; do
  expect_count "$WORK/err" "RawMonitor$f\\($handle\\): unknown or destroyed raw monitor \\(destroyed\\)" 2 \
    "one warning per RawMonitor$f on the destroyed monitor (2 threads)"
done
for f in Enter Exit Wait; do
  expect_count "$WORK/err" "RawMonitor$f\\(0x[0-9a-f]+\\): unknown or destroyed raw monitor \\(not one RawMonitorCreate returned\\)" 2 \
    "one warning per RawMonitor$f on a pointer that is no monitor (2 threads)"
done
expect_grep "$o" '^hello$' "application ran after the checks"
finish
