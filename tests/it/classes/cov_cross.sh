#!/bin/bash
# cov_cross.sh — a class's CLASS_LOAD after that of its interface when another thread defines
# the interface, through the coverage agent legacy-agents/cov_cross.c (workload
# tests/java/CovCross.java).
#
# One shared parallel-capable loader; thread cross-iface defines CovCrossIface, and thread
# cross-sub, as soon as the loader has it (the JVM's dictionary has a class before its
# definition is reported), defines CovCrossSub, which implements it: its parse finds the
# interface in the dictionary while the interface's CLASS_LOAD handler is still running on
# cross-iface (the agent's handler works on until the subclass's hook has come, and then a
# while). HotSpot announced a class's supertypes before it; the agent links each class to its
# interface's record, complete once the interface's CLASS_LOAD handler has returned.
# Checks: the workload ran; both classes got their CLASS_LOAD, once; the window was hit (the
# interface's handler was running when the subclass's hook came); no FAIL (the subclass's
# CLASS_LOAD came only after the interface's had returned).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=${JAVA_TIMEOUT:-180}
o=$WORK/out

run_java "$(shim_arg cov_cross)" -cp "$CLASSES" CovCross
expect_rc 0
expect_grep "$o" '^CovCross: iface=ok sub=42$' "the workload defined and used both classes"
expect_grep "$o" '^CovCross: done$' "workload finished"
expect_grep "$o" '^cov_cross: loaded$' "agent loaded"
expect_grep "$o" '^cov_cross: summary iface=1 sub=1 held=1 ' \
  "one CLASS_LOAD each; the subclass was hooked while the interface's CLASS_LOAD handler ran"
expect_nogrep "$o" '^cov_cross: FAIL' "the subclass's CLASS_LOAD after its interface's CLASS_LOAD returned"
expect_grep "$o" '^cov_cross: summary .* fails=0$' "failures counted by the agent = 0"
finish
