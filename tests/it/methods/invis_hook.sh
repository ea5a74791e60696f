#!/bin/bash
# invis_hook.sh — nothing of the shim reaches the agent: the probe class
# java.lang.JvmpiShimHook (methods=bci, the default) and the shim's worker thread. The
# invis_hook agent (legacy-agents/invis_hook.c) learns the probe class's id through JNI and
# looks for it, and for a thread named like the shim, in CLASS_LOAD, THREAD_START/END,
# METHOD_ENTRY, COMPILED_METHOD_LOAD, GetCallTrace (inside METHOD_ENTRY and from a sampler
# system thread that suspends and traces every thread), heap dumps of levels 0, 1 and 2
# (bytes, thread roots and traces: every thread must have had a THREAD_START) and
# OBJECT_DUMPs of the classes, while tests/java/InvisHook.java runs 8 threads calling small
# methods. Run in every VM mode (tests/it/modes.list): under -Xcomp the probe natives are
# compiled too.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
o=$WORK/out

run_java "$(shim_arg invis_hook)" -cp "$CLASSES" InvisHook 500
expect_rc 0
expect_grep "$o" '^InvisHook: calls=[1-9][0-9]*$' "workload ran"
expect_grep "$o" '^invis_hook: hook id=0x[0-9a-f]+$' "the agent found the probe class through JNI (methods=bci)"
expect_nogrep "$o" '^invis_hook: FAIL' "neither the probe class nor the shim's thread reached the agent"
l=$(grep '^invis_hook: done ' "$o"); echo "     $l"
expect_grep "$o" '^invis_hook: done entries=[1-9][0-9]* traced=[1-9][0-9]* samples=[1-9][0-9]* compiled=[0-9]+ dumps=3 objdumps=[1-9][0-9]* fails=0$' "method events, traces, samples, 3 heap dumps and object dumps were looked at"
finish
