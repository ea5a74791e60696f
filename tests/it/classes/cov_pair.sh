#!/bin/bash
# cov_pair.sh — CLASS_LOAD on the defining thread, paired with its CLASS_LOAD_HOOK, through
# the coverage agent legacy-agents/cov_pair.c (workload tests/java/CovPair.java).
#
# The agent keeps what each CLASS_LOAD_HOOK parsed in a table of the hook's thread (env_id),
# keyed by class name, and takes it out in the CLASS_LOAD that follows on the same thread, as
# coverage tools did; HotSpot posted CLASS_LOAD on the defining thread, inside the definition.
# The workload has 8 threads defining classes through loaders of their own at once (a
# subclass first, so its superclass and interface are defined during its parse, and the
# superclass names the subclass), all 8 loading one shared class at once, and a class defined
# on main with Class.forName(name, false, loader) and linked and used on another thread.
# Checks: the workload ran; no MISS (a CLASS_LOAD after JVM_INIT_DONE without the hook entry
# of its class on its own thread, or a workload class hooked and never paired on that thread);
# every method parsed in the hook is in the CLASS_LOAD; CovPairSub's CLASS_LOAD after those of
# its superclass and interface on the same thread; no METHOD_ENTRY or COMPILED_METHOD_LOAD
# of a method whose class's CLASS_LOAD had not come; and every workload class was paired:
# 8 threads x 3 rounds x 4 classes (CovPairSub, CovPairBase, CovPairIface, CovPairWork), plus
# CovPairShared and CovPairLate.
# A second run (workload tests/java/CovVerify.java) checks that linking at definition moves
# no verification error: a class that fails to verify, defined without being linked, still
# throws VerifyError at its first use, and again at the second, as without the shim; and a
# duplicate definition (LinkageError) leaves nothing that holds up a use of the class.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=${JAVA_TIMEOUT:-180}
o=$WORK/out

run_java "$(shim_arg cov_pair)" -cp "$CLASSES" CovPair
expect_rc 0
expect_grep "$o" '^CovPair: loaders=24 late=ok$' "the workload defined its classes in 24 loaders, and the late class worked"
expect_grep "$o" '^CovPair: done$' "workload finished"
expect_grep "$o" '^cov_pair: loaded$' "agent loaded"
expect_nogrep "$o" '^cov_pair: (MISS|FAIL)' "no class without its hook entry on its thread, no use before CLASS_LOAD"
s=$(grep '^cov_pair: summary ' "$o")
echo "     $s"
v() { echo "$s" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
expect_eq "$(v misses)" 0 "CLASS_LOADs without their hook entry on their own thread"
expect_eq "$(v method_unmatched)" 0 "methods parsed in the hook missing from the CLASS_LOAD"
expect_eq "$(v entry_unknown)" 0 "METHOD_ENTRY before the class's CLASS_LOAD"
expect_eq "$(v compiled_unknown)" 0 "COMPILED_METHOD_LOAD before the class's CLASS_LOAD"
expect_eq "$(v fails)" 0 "failures counted by the agent"
if [ "$(v entries)" -gt 0 ] 2>/dev/null; then ok "$(v entries) METHOD_ENTRYs checked"; else bad "no METHOD_ENTRY"; fi
expect_grep "$o" '^cov_pair: workload paired=98 leftover=0$' \
  "all 98 workload classes (8 x 3 x 4 + shared + late) paired with their hook on their defining thread"

run_java "$(shim_arg cov_pair)" -cp "$CLASSES" CovVerify
expect_rc 0
expect_grep "$o" '^CovVerify: first=java.lang.VerifyError second=java.lang.VerifyError$' \
  "a class that fails to verify throws VerifyError at its first use (and second), not at its definition"
expect_grep "$o" '^CovVerify: dup=java.lang.LinkageError used=ok$' \
  "a duplicate definition fails with LinkageError; the class it duplicated works on another thread"
expect_nogrep "$o" '^cov_pair: (MISS|FAIL)' "CovVerify run: no MISS, no FAIL"
finish
