#!/bin/bash
# ctor_recv.sh — METHOD_ENTRY2's receiver for constructors, without stopping every thread
# (legacy-agents/ctor_recv.c against tests/java/CtorWork.java).
#
# An "ensure defined" tracer with METHOD_ENTRY2 on asks RequestEvent(OBJECT_ALLOC) for every
# new receiver; every workload constructor calls the agent's native CtorWork.truth(this),
# which compares jobject2jobjectID(this) with the obj_id ENTRY2 gave that constructor. 8
# threads start at once. Modes: plain (this(...) and super(...) chains, only arithmetic
# before each call), args (a method called for super's argument), nested (an object built
# for super's argument), mix. Checked: every constructor checked (= the workload's count),
# no NULL or wrong receiver, exits nest, every request answered with its own id and a
# workload class.
# Cost: the JVM's safepoint log (-Xlog:safepoint) counts the VM operations that read a
# frame's local (GetOrSetLocal, what JVMTI GetLocalInstance runs). With only arithmetic
# before the super(...) calls (plain) the receivers come from the probe after super(...),
# so there are far fewer than the objects made; with a method called first (args) each
# receiver is read from its frame, which also proves the log counts them on this JVM (if
# it names no such operation there, the cost check is skipped, saying so).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
AG="$AGENTS/libctor_recv.so"
T=8
N=${CTOR_N:-1500}
declare -A ops

for mode in plain args nested mix; do
  echo "== $mode"
  run_java -Xlog:safepoint:file="$WORK/sp-$mode.log" "-agentpath:$SHIM=legacy=$AG" -cp "$CLASSES" \
    CtorWork $mode $T $N
  o=$WORK/out
  expect_rc 0
  expect_nogrep "$o" '^ctor: FAIL' "$mode: no FAIL from the agent"
  line=$(grep "^CtorWork: mode=$mode " "$o")
  truth=$(echo "$line" | sed -n 's/.* truth=\([0-9]*\)$/\1/p')
  expect_grep "$o" "^CtorWork: mode=$mode threads=$T n=$N objects=$((T * N)) truth=[0-9]+\$" "$mode: the workload made $((T * N)) objects"
  expect_grep "$o" "^ctor: summary checked=${truth:-x} ctor_entries=[0-9]+ requested=[0-9]+ fails=0\$" \
    "$mode: every one of the ${truth:-?} constructors checked against its object, no failure"
  ops[$mode]=$(grep -c 'Safepoint "GetOrSetLocal"' "$WORK/sp-$mode.log" 2>/dev/null)
  echo "     $mode: ${ops[$mode]} GetOrSetLocal safepoints for $((T * N)) objects"
done

objs=$((T * N))
if [ "${ops[args]:-0}" -ge "$objs" ]; then
  ok "args: each receiver read from its frame (${ops[args]} GetOrSetLocal safepoints >= $objs objects): the log counts them"
  if [ "${ops[plain]}" -lt $((objs / 10)) ]; then
    ok "plain: ${ops[plain]} GetOrSetLocal safepoints for $objs objects of 4 constructors each (< $((objs / 10)))"
  else
    bad "plain: ${ops[plain]} GetOrSetLocal safepoints for $objs objects: receivers read from frames"
  fi
else
  echo "     (this JVM's safepoint log names no GetOrSetLocal operation for frame reads: ${ops[args]:-0} in the args run; the cost check is skipped)"
fi
finish
