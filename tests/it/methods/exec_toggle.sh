#!/bin/bash
# exec_toggle.sh — METHOD_ENTRY / METHOD_EXIT switched on and off mid-run by the agent's system
# thread (legacy-agents/exec_toggle.c, workload tests/java/ExecToggle.java). Main calls
# ExecToggle.before only before the events are enabled, .during only while they are on
# (after it saw the system thread's property), .after only after they were disabled:
# before gets 0 events, during exactly D entries and D exits, all while the events are on,
# after 0; nothing at all before the enabling, nothing on main once it saw them off.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
o=$WORK/out

run_java "$(shim_arg exec_toggle)" -cp "$CLASSES" ExecToggle
expect_rc 0
expect_grep "$o" '^ExecToggle: done$' "workload finished"
expect_nogrep "$o" '^exec_toggle: FAIL' "no live violation reported by the agent"
expect_grep "$o" '^exec_toggle: totals fails=0$' "agent counted no violation"
t=$(sed -n 's/^ExecToggle: before=\([0-9]*\) during=\([0-9]*\) after=\([0-9]*\)$/\1 \2 \3/p' "$o")
read -r B D A <<<"$t"
[ -n "${D:-}" ] || { bad "no ground truth from the workload"; B=1 D=1 A=1; }
expect_grep "$o" '^exec_toggle: enable from system thread METHOD_ENTRY rc=0 METHOD_EXIT rc=0$' "EnableEvent(METHOD_ENTRY, METHOD_EXIT) from a system thread: SUCCESS"
expect_grep "$o" '^exec_toggle: disable from system thread METHOD_ENTRY rc=0 METHOD_EXIT rc=0$' "DisableEvent(METHOD_ENTRY, METHOD_EXIT) from a system thread: SUCCESS"
# The ground truth: which method ran in which phase.
c() { sed -n "s/^exec_toggle: count phase=$1 method=$2 //p" "$o"; }
expect_eq "$(c on during)" "entry=$D exit=$D" "during() while on: all $D calls"
for p in pre arming disarming off post; do
  expect_eq "$(c $p during)" "entry=0 exit=0" "during() in phase $p"
done
for p in pre arming on disarming off post; do
  expect_eq "$(c $p before)" "entry=0 exit=0" "before() ($B calls, all before enabling) in phase $p"
  expect_eq "$(c $p after)" "entry=0 exit=0" "after() ($A calls, all after disabling) in phase $p"
done
expect_grep "$o" '^exec_toggle: events phase=pre main_entry=0 main_exit=0 all_entry=0 all_exit=0$' "no method event at all before enabling"
expect_grep "$o" '^exec_toggle: events phase=on main_entry=[1-9][0-9]* main_exit=[1-9][0-9]* ' "method events on main while on"
expect_grep "$o" '^exec_toggle: events phase=post main_entry=0 main_exit=0 ' "no method event on main once it saw them off"
grep '^exec_toggle: events ' "$o" | sed 's/^/     /'

finish
