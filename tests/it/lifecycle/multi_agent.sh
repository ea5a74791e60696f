#!/bin/bash
# multi_agent.sh — two legacy agents in one JVM, each through its own -agentpath entry of
# the shim, with the multi agent (legacy-agents/multi.c) on tests/java/MultiWork.java, which
# allocates 2 MultiTarget on main and 3 on "multi-worker" and calls mark() 3 times on each
# of main's and 2 times on each of the worker's (ground truth printed by the workload).
# Runs:
#   diff      A (OBJECT_ALLOC) = build/agents/libmulti.so, B (METHOD_ENTRY, METHOD_ENTRY2, no
#             OBJECT_ALLOC) = a copy of it under another path: two libraries
#   same      the same two roles from the same .so named twice: the second gets a private copy
#   lifecycle A (OBJECT_ALLOC, METHOD_ENTRY2) beside a different agent, lifecycle.c
#   bothalloc A and B both enable OBJECT_ALLOC (the capability behind it is exclusive to one
#             JVMTI environment; the shim's agents share one, docs/design.md "Several agents")
#   holder    a plain JVMTI agent takes that capability first; then A and B both ask for it
# Checked in diff and same: each agent sees exactly the events it enabled (A: every target
# allocation, no method event; B: every mark() entry with its receiver, no OBJECT_ALLOC);
# separate thread-local storage (each agent's slot is empty at THREAD_START, then holds its
# own record on every later event and at THREAD_END); ids agree: MultiTarget's class id,
# main's and multi-worker's env and thread ids, and the 5 objects A saw allocated are
# exactly the 5 receivers B saw, on the same threads; MultiWork.KNOWN has the same id in
# both (jobject2jobjectID), it is the first target main allocated, and each agent's own
# level-0 HEAP_DUMP holds KNOWN and all 5 targets. same: the two instances have different
# statics and interfaces. lifecycle: its agent sees only JVM_INIT_DONE and JVM_SHUT_DOWN.
# bothalloc: both get OBJECT_ALLOC (rc 0, no warning) with the same 5 target ids.
# holder: both get JVMPI_NOT_AVAILABLE (1) and no OBJECT_ALLOC, the shim warns exactly once,
# naming OBJECT_ALLOC and the capability, and B's method events still work.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
M=$AGENTS/libmulti.so

truth() { sed -n "s/^MultiWork: targets main=\([0-9]*\) worker=\([0-9]*\) marks main=\([0-9]*\) worker=\([0-9]*\)$/$1/p" "$o"; }
val() { sed -n "s/^multi\[$1\]: $2.*/\\1/p" "$o" | head -n 1; } # AGENT SED-RE-WITH-GROUP
sum() { sed -n "s/^multi\[$1\]: summary.* $2=\([0-9]*\).*/\\1/p" "$o"; }
ids() { sed -n "s/^multi\[$1\]: target $2 id=\([^ ]*\) thread=\(.*\)$/\\1 \\2/p" "$o"; } # AGENT alloc|receiver

check_base() { # AGENT...
  expect_rc 0
  expect_grep "$o" '^MultiWork: done known=42$' "workload finished"
  expect_nogrep "$o" '^multi\[[A-Z]\]: FAIL' "no violation seen by either agent"
  expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "no shim error or warning"
  local a
  for a in "$@"; do
    expect_count "$o" "^multi\\[$a\\]: onload " 1 "agent $a: JVM_OnLoad ran once"
    expect_nogrep "$o" "^multi\\[$a\\]: enable .* rc=[^0]" "agent $a: every EnableEvent returned JVMPI_SUCCESS"
    expect_eq "$(sum "$a" unexpected)" 0 "agent $a: events of types it did not enable"
    expect_eq "$(sum "$a" tls_wrong)/$(sum "$a" tls_unset)/$(sum "$a" tls_preset)" 0/0/0 \
      "agent $a: TLS reads of another record / an empty slot / slots not empty at THREAD_START"
    [ "$(sum "$a" tls_checks)" -gt 0 ] 2>/dev/null && ok "agent $a: $(sum "$a" tls_checks) TLS reads returned its own record" || bad "agent $a: no TLS read"
    expect_grep "$o" "^multi\\[$a\\]: tls end thread=multi-worker mine=1\$" "agent $a: multi-worker's slot holds its own record at THREAD_END"
    expect_grep "$o" "^multi\\[$a\\]: tls main mine=1\$" "agent $a: main's slot holds its own record at the end"
  done
}

# A allocates-watcher, B receiver-watcher: the masks are independent and the ids agree.
check_roles() { # A B
  local A=$1 B=$2 MT WT MM WM
  MT=$(truth '\1'); WT=$(truth '\2'); MM=$(truth '\3'); WM=$(truth '\4')
  [ -n "$MT" ] || { bad "no ground truth from the workload"; return; }
  [ "$(sum "$A" alloc)" -gt 0 ] 2>/dev/null && ok "A: $(sum "$A" alloc) OBJECT_ALLOC events" || bad "A: no OBJECT_ALLOC"
  expect_eq "$(sum "$A" entry)/$(sum "$A" entry2)" 0/0 "A: METHOD_ENTRY/METHOD_ENTRY2 events (A enabled neither)"
  expect_eq "$(sum "$B" alloc)" 0 "B: OBJECT_ALLOC events (B did not enable it, A did)"
  [ "$(sum "$B" entry)" -gt 0 ] 2>/dev/null && [ "$(sum "$B" entry)" = "$(sum "$B" entry2)" ] &&
    ok "B: $(sum "$B" entry) METHOD_ENTRY and as many METHOD_ENTRY2" || bad "B: entry=$(sum "$B" entry) entry2=$(sum "$B" entry2)"
  expect_eq "$(val "$A" 'class MultiTarget id=\([^ ]*\)')" "$(val "$B" 'class MultiTarget id=\([^ ]*\)')" "MultiTarget's class id in A = in B"
  local t
  for t in main multi-worker; do
    local x y
    x=$(val "$A" "thread name=$t \\(env=[^ ]* id=[^ ]*\\)"); y=$(val "$B" "thread name=$t \\(env=[^ ]* id=[^ ]*\\)")
    [ -n "$x" ] && [ "$x" = "$y" ] && ok "$t: THREAD_START env and thread id agree ($x)" || bad "$t: A '$x', B '$y'"
  done
  local ai bi
  ai=$(ids "$A" alloc); bi=$(ids "$B" receiver)
  expect_eq "$(echo "$ai" | grep -c ' main$')/$(echo "$ai" | grep -c ' multi-worker$')" "$MT/$WT" "A: MultiTarget allocations on main/multi-worker"
  expect_eq "$(echo "$bi" | grep -c ' main$')/$(echo "$bi" | grep -c ' multi-worker$')" "$MM/$WM" "B: mark() entries with a receiver on main/multi-worker"
  expect_eq "$(echo "$ai" | sort -u | grep -c .)" $((MT + WT)) "A: distinct MultiTarget ids"
  [ -n "$ai" ] && [ "$(echo "$ai" | sort -u)" = "$(echo "$bi" | sort -u)" ] &&
    ok "the $((MT + WT)) objects A saw allocated are exactly the receivers B saw, each on the same thread" ||
    { bad "A's allocated ids differ from B's receivers"; echo "$ai" | sed 's/^/     A /'; echo "$bi" | sort -u | sed 's/^/     B /'; }
  local ka kb first
  ka=$(val "$A" 'known id=\(.*\)'); kb=$(val "$B" 'known id=\(.*\)')
  first=$(echo "$ai" | head -n 1 | cut -d' ' -f1)
  [ -n "$ka" ] && [ "$ka" != "(nil)" ] && [ "$ka" = "$kb" ] && ok "KNOWN's id through JNI: A $ka = B $kb" || bad "KNOWN's id: A '$ka', B '$kb'"
  expect_eq "$ka" "$first" "KNOWN's id = the first MultiTarget A saw allocated on main"
  for a in "$A" "$B"; do
    expect_grep "$o" "^multi\\[$a\\]: dump level=0 rc=0 records=[0-9]+ known=1 found=$((MT + WT)) of $((MT + WT))\$" "agent $a: its level-0 HEAP_DUMP holds KNOWN and the $((MT + WT)) targets"
  done
}

roles_A="name=A,alloc"
roles_B="name=B,entry,entry2"

echo "== diff: two libraries"
cp "$M" "$WORK/libmulti-b.so"
run_java "-agentpath:$SHIM=legacy=$M:$roles_A" "-agentpath:$SHIM=legacy=$WORK/libmulti-b.so:$roles_B" -cp "$CLASSES" MultiWork
check_base A B
check_roles A B

echo "== same: one library named twice"
run_java "-agentpath:$SHIM=legacy=$M:$roles_A" "-agentpath:$SHIM=legacy=$M:$roles_B" -cp "$CLASSES" MultiWork
check_base A B
check_roles A B
sa=$(val A 'onload .* self=\([^ ]*\)'); sb=$(val B 'onload .* self=\([^ ]*\)')
[ -n "$sa" ] && [ -n "$sb" ] && [ "$sa" != "$sb" ] && ok "each instance has its own statics (private copy): $sa, $sb" || bad "statics shared: A $sa, B $sb"
ia=$(val A 'onload .* interface=\([^ ]*\)'); ib=$(val B 'onload .* interface=\([^ ]*\)')
[ -n "$ia" ] && [ "$ia" != "$ib" ] && ok "each instance has its own JVMPI_Interface" || bad "interfaces: A $ia, B $ib"

echo "== lifecycle: beside a different agent"
run_java "-agentpath:$SHIM=legacy=$M:name=A,alloc,entry2" "$(shim_arg lifecycle)" -cp "$CLASSES" MultiWork
check_base A
[ "$(sum A alloc)" -gt 0 ] 2>/dev/null && [ "$(sum A entry2)" -gt 0 ] 2>/dev/null && ok "A: OBJECT_ALLOC and METHOD_ENTRY2 arrive" || bad "A: alloc=$(sum A alloc) entry2=$(sum A entry2)"
expect_nogrep "$o" '^lifecycle: FAIL' "lifecycle: no violation (it fails on any event it did not enable)"
expect_count "$o" '^lifecycle: event ' 2 "lifecycle: exactly two events"
expect_grep "$o" '^lifecycle: event JVM_INIT_DONE seq=1 ' "lifecycle: JVM_INIT_DONE first"
expect_grep "$o" '^lifecycle: event JVM_SHUT_DOWN seq=2 ' "lifecycle: JVM_SHUT_DOWN second"

echo "== bothalloc: both agents enable OBJECT_ALLOC"
run_java "-agentpath:$SHIM=legacy=$M:name=A,alloc" "-agentpath:$SHIM=legacy=$M:name=B,alloc,entry2" -cp "$CLASSES" MultiWork
check_base A B
for a in A B; do
  expect_grep "$o" "^multi\\[$a\\]: enable OBJECT_ALLOC rc=0\$" "agent $a: EnableEvent(OBJECT_ALLOC) = JVMPI_SUCCESS"
done
ai=$(ids A alloc); bi=$(ids B alloc)
expect_eq "$(echo "$bi" | grep -c .)" "$(( $(truth '\1') + $(truth '\2') ))" "B: MultiTarget allocations, through the one shared JVMTI environment"
[ -n "$ai" ] && [ "$ai" = "$bi" ] && ok "A and B saw the same allocations, same ids, same threads, same order" || bad "A and B allocations differ"
expect_eq "$(sum A alloc)" "$(sum B alloc)" "OBJECT_ALLOC count in A = in B"

echo "== holder: another JVMTI environment holds the sampled-allocation capability"
cat >"$WORK/holder.c" <<'EOF'
/* holder.c — a plain JVMTI agent that takes can_generate_sampled_object_alloc_events, which
 * only one JVMTI environment may hold, before the shim asks for it. */
#include <jvmti.h>
#include <stdio.h>
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps = {0};
    caps.can_generate_sampled_object_alloc_events = 1;
    printf("holder: AddCapabilities(can_generate_sampled_object_alloc_events) = %d\n",
           (int)(*jvmti)->AddCapabilities(jvmti, &caps));
    fflush(stdout);
    return JNI_OK;
}
EOF
if ! ${CC:-cc} -shared -fPIC -Wall -Wextra -Werror -I"$JDK_HOME_T/include" -I"$JDK_HOME_T/include/linux" \
     -o "$WORK/libholder.so" "$WORK/holder.c" 2>"$WORK/cc.err"; then
  bad "cannot build the JVMTI holder agent"; cat "$WORK/cc.err"
fi
run_java "-agentpath:$WORK/libholder.so" "-agentpath:$SHIM=legacy=$M:name=A,alloc" "-agentpath:$SHIM=legacy=$M:name=B,alloc,entry2" -cp "$CLASSES" MultiWork
expect_rc 0
expect_grep "$o" '^holder: AddCapabilities\(can_generate_sampled_object_alloc_events\) = 0$' "the holder got the capability first"
expect_grep "$o" '^MultiWork: done known=42$' "workload finished"
for a in A B; do
  expect_grep "$o" "^multi\\[$a\\]: enable OBJECT_ALLOC rc=1\$" "agent $a: EnableEvent(OBJECT_ALLOC) = JVMPI_NOT_AVAILABLE"
  expect_eq "$(sum "$a" alloc)" 0 "agent $a: OBJECT_ALLOC events"
  expect_eq "$(sum "$a" unexpected)" 0 "agent $a: events of types it did not enable"
done
expect_count "$WORK/err" 'jvmpishim: warning: .*OBJECT_ALLOC.*not available.*sampled-allocation capability' 1 \
  "one warning for both agents, naming OBJECT_ALLOC and the capability another agent holds"
expect_count "$WORK/err" 'jvmpishim: (error|warning)' 1 "no other shim error or warning"
expect_eq "$(ids B receiver | grep -c .)" "$(( $(truth '\3') + $(truth '\4') ))" "B: mark() entries with their receivers still arrive"
expect_nogrep "$o" '^multi\[[A-Z]\]: FAIL' "no violation seen by either agent"

# Only one of two agents enables THREAD_START (lifecycle does, usage does not): the threads
# are announced to that one alone, and the JVM exits. A thread counted as not yet announced
# to the other agent once held its events back, and flushed them again, for ever, at its
# THREAD_END (JDK 17 clears the thread's group before ThreadEnd): the JVM never exited.
export JAVA_TIMEOUT=60
run_java "$(shim_arg usage)" "$(shim_arg lifecycle)" -cp "$CLASSES" MultiWork
expect_rc 0
expect_grep "$o" '^MultiWork: done known=42$' "THREAD_START enabled by one agent of two: the workload finished and the JVM exited"

finish
