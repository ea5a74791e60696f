#!/bin/bash
# mon_events.sh — Java monitor events through the mon_events agent (legacy-agents/mon_events.c)
# against tests/java/MonEvents.java: mon-holder stays inside MonEvents.LOCK while
# mon-contender blocks entering it (until the agent's MONITOR_CONTENDED_ENTER handler has
# run — the agent tells the workload through JNI — and 20 ms more), N=20 rounds; then main waits on MonEvents.WLOCK with
# wait(50) (times out) and with wait() until mon-notifier notifies it after ~100 ms.
# The agent identifies each event's object by RequestEvent(OBJECT_ALLOC) -> class id ->
# CLASS_LOAD name, and each thread by THREAD_START.
# Checked: MONITOR_CONTENDED_ENTER count = ENTERED count >= N/2, all on mon-contender and
# naming one object of class MonLock whose id equals jobject2jobjectID(MonEvents.LOCK);
# MONITOR_CONTENDED_EXIT (shim semantics: on the contender's thread just before ENTERED,
# env_id = the previous owner) count = ENTERED count, env_id = mon-holder, each directly
# followed on the same thread by ENTERED; MONITOR_WAIT timeout 50 then WAITED 45..500 ms,
# MONITOR_WAIT timeout 0 then WAITED 90..1000 ms, all on main, naming WLOCK's id.
# Hand-off: three waiters block on HLOCK while mon-leaver owns it; mon-leaver leaves and
# ends; two of the waiters get HLOCK only after that. Each contention still gets its
# MONITOR_CONTENDED_EXIT naming mon-leaver, none after mon-leaver's THREAD_END (HotSpot
# posted it at the release, on mon-leaver's thread), and ENTER/ENTERED come in pairs.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40
N=20

run_java "$(shim_arg mon_events)" -cp "$CLASSES" MonEvents $N
o=$WORK/out
expect_rc 0
expect_grep "$o" "^MonEvents: done rounds=$N\$" "workload finished"
expect_grep "$o" "^MonEvents: contention rounds=$N entered=$N\$" "contender entered LOCK $N times"
expect_nogrep "$o" '^MonEvents: no handshake' "agent's ENTER handler ran in every round (handshake)"
expect_nogrep "$o" '^mon: FAIL' "no FAIL from the agent"
expect_grep "$o" '^mon: summary waitlock=.* fails=0$' "agent counted no failure"

# field NAME LINE — value of NAME=... in LINE
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1; }
s=$(grep '^mon: summary lock=' "$o" | head -n1)
sw=$(grep '^mon: summary waitlock=' "$o" | head -n1)
j=$(grep '^mon: jni LOCK=' "$o" | head -n1)
echo "     $s"
enter=$(field enter "$s"); entered=$(field entered "$s"); exit_=$(field exit "$s")
if [ -n "$enter" ] && [ "$enter" -ge $((N / 2)) ] && [ "$enter" = "$entered" ]; then
  ok "MONITOR_CONTENDED_ENTER = ENTERED = $enter >= $((N / 2)) for MonLock"
else bad "MonLock: enter=$enter entered=$entered (want equal, >= $((N / 2)))"; fi
expect_eq "$exit_" "$entered" "MONITOR_CONTENDED_EXIT count (= ENTERED)"
expect_eq "$(field other_ids "$s")" 0 "MonLock events naming another id than the first"
lock=$(field lock "$s")
expect_eq "$lock" "$(field LOCK "$j")" "MonLock id in the events (= jobject2jobjectID(MonEvents.LOCK))"
expect_eq "$(field enter_on_contender "$s")" "$enter" "ENTERs with env_id = mon-contender"
expect_eq "$(field entered_on_contender "$s")" "$entered" "ENTEREDs with env_id = mon-contender"
expect_eq "$(field exit_env_holder "$s")" "$exit_" "EXITs with env_id = mon-holder (the previous owner)"
expect_eq "$(field exit_on_contender "$s")" "$exit_" "EXITs delivered on mon-contender's thread"
expect_eq "$(field exit_before_entered "$s")" "$entered" "ENTEREDs directly preceded by EXIT of the object on the same thread"
expect_eq "$(field wait "$s") $(field waited "$s")" "0 0" "WAIT/WAITED on MonLock"
# Event order per contended entry in the event log: ENTER, EXIT, ENTERED.
seq=$(grep -E '^mon: ev MONITOR_CONTENDED_[A-Z]+ obj=[^ ]+ class=MonLock ' "$o" |
      sed 's/^mon: ev MONITOR_CONTENDED_\([A-Z]*\) .* env=\([^ ]*\)$/\1@\2/' | tr '\n' ' ')
want=$(for _ in $(seq "$enter"); do printf 'ENTER@mon-contender EXIT@mon-holder ENTERED@mon-contender '; done)
if [ "$seq" = "$want" ]; then ok "MonLock event sequence: (ENTER@mon-contender, EXIT@mon-holder, ENTERED@mon-contender) x $enter"
else bad "MonLock event sequence: $seq"; fi

# Waits on WLOCK, all on main.
wl=$(field waitlock "$sw")
expect_eq "$wl" "$(field WLOCK "$j")" "MonWaitLock id in the events (= jobject2jobjectID(MonEvents.WLOCK))"
expect_eq "$(field other_ids "$sw")" 0 "MonWaitLock events naming another id"
w=$(grep -E '^mon: ev MONITOR_WAIT(ED)? obj=[^ ]+ class=MonWaitLock ' "$o")
nw=$(echo "$w" | grep -c 'MONITOR_WAIT ')
nd=$(echo "$w" | grep -c 'MONITOR_WAITED ')
expect_eq "$nw" "$nd" "MONITOR_WAIT count = MONITOR_WAITED count on MonWaitLock"
expect_nogrep <(echo "$w" | grep -v " obj=$wl class=MonWaitLock env=main ") . "all MonWaitLock wait events on main, with WLOCK's id"
first=$(echo "$w" | head -n1); second=$(echo "$w" | sed -n 2p)
expect_grep <(echo "$first") 'MONITOR_WAIT .* timeout=50$' "first: MONITOR_WAIT timeout=50 (wait(50))"
t=$(echo "$second" | sed -n 's/.*MONITOR_WAITED .* timeout=\([0-9-]*\)$/\1/p')
if [ -n "$t" ] && [ "$t" -ge 45 ] && [ "$t" -le 500 ]; then ok "then MONITOR_WAITED timeout=$t (45..500 ms waited)"
else bad "after wait(50): '$second'"; fi
third=$(echo "$w" | sed -n 3p); last=$(echo "$w" | tail -n1)
expect_grep <(echo "$third") 'MONITOR_WAIT .* timeout=0$' "third: MONITOR_WAIT timeout=0 (wait())"
t=$(echo "$last" | sed -n 's/.*MONITOR_WAITED .* timeout=\([0-9-]*\)$/\1/p')
if [ -n "$t" ] && [ "$t" -ge 90 ] && [ "$t" -le 1000 ]; then ok "last: MONITOR_WAITED timeout=$t (notified after ~100 ms: 90..1000)"
else bad "after wait(): '$last'"; fi
expect_eq "$(echo "$w" | wc -l)" 4 "wait events on MonWaitLock (no spurious wakeup)"

# Hand-off to waiters that wake after the owner has ended.
expect_grep "$o" '^MonEvents: handoff waiters=3 entered=3$' "hand-off: three waiters entered HLOCK"
expect_nogrep "$o" '^MonEvents: no handshake from the agent in the hand-off' "hand-off: the agent's ENTER handler ran for each waiter while mon-leaver held HLOCK"
grep '^MonEvents: hand-off handshake after' "$o" | sed 's/^/     /'
h=$(grep -E '^mon: (ev MONITOR_CONTENDED_[A-Z]+ obj=[^ ]+ class=MonHandoffLock |thread end name=mon-(leaver|waiter))' "$o")
expect_eq "$(echo "$h" | grep -c 'CONTENDED_ENTER .*env=mon-waiter-')" 3 "hand-off: MONITOR_CONTENDED_ENTER on each waiter"
expect_eq "$(echo "$h" | grep -c 'CONTENDED_ENTERED .*env=mon-waiter-')" 3 "hand-off: MONITOR_CONTENDED_ENTERED on each waiter"
expect_eq "$(echo "$h" | grep -c 'CONTENDED_EXIT .*env=mon-leaver$')" 3 "hand-off: one MONITOR_CONTENDED_EXIT naming mon-leaver per contention"
expect_eq "$(echo "$h" | grep -c 'CONTENDED_EXIT .*env=[^m]')" 0 "hand-off: no EXIT naming an unknown thread"
late=$(echo "$h" | sed -n '/thread end name=mon-leaver$/,$p' | grep -c 'CONTENDED_EXIT .*env=mon-leaver$')
expect_eq "$late" 0 "hand-off: no EXIT naming mon-leaver after its THREAD_END"
after=$(echo "$h" | sed -n '/thread end name=mon-leaver$/,$p' | grep -c 'CONTENDED_ENTERED ')
if [ "$after" -ge 2 ]; then ok "hand-off: $after waiters got HLOCK after mon-leaver's THREAD_END"
else bad "hand-off: only $after ENTERED after mon-leaver's THREAD_END (the workload should make 2)"; fi
expect_nogrep "$WORK/err" 'ERROR|malformed' "no shim errors"

finish
