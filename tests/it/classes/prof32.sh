#!/bin/bash
# prof32.sh — an allocation profiler written for 32 bits (legacy-agents/prof32.c: ids in
# jint/int tables hashed as unsigned int, (jobjectID)(int) casts, assert(sizeof(void *) == 4)
# in JVM_OnLoad) against tests/java/AllocSites.java, whose output is the ground truth.
# On i386 (ID_BYTES=4): rc 0; for each workload class the agent counts exactly the objects
# the workload made (classes of one name summed), and for each known site (Class.method that
# executes the new) exactly the workload's count; every class and method id it kept as an
# int found its name, every GetCallTrace gave a frame; the shim warned of no bad id.
# On x86-64 (ID_BYTES=8), as docs/porting.md's appendix says: the assertion stops the JVM in
# JVM_OnLoad (SIGABRT, exit status 134), naming the assertion, before the agent did anything.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120

# The shell's own note of a child killed by a signal ("... Aborted") goes to shell-note, not
# to the log, where the runner would take it for an error in this script.
{ run_java "$(shim_arg prof32)" -cp "$CLASSES" AllocSites; } 2>"$WORK/shell-note"
o=$WORK/out
if [ "${ID_BYTES:-8}" = 4 ]; then
  expect_rc 0
  expect_grep "$o" '^AllocSites: done$' "workload ran to its end"
  expect_grep "$o" '^p32: loaded$' "JVM_OnLoad passed its assertion (pointers of 4 bytes)"
  n=0
  while read -r _ _ name want; do
    n=$((n + 1))
    expect_eq "$(sed -n "s/^p32: count $(printf '%s' "$name" | sed 's/\$/\\$/g') \\([0-9]*\\)\$/\\1/p" "$o")" "$want" "objects of $name counted (workload: $want)"
  done < <(grep '^AllocSites: count ' "$o")
  expect_eq "$n" 4 "workload count lines"
  n=0
  while read -r _ _ name method want; do
    n=$((n + 1))
    expect_grep "$o" "^p32: site $(printf '%s' "$name" | sed 's/\$/\\$/g') $method $want\$" "site $name in $method: $want objects (workload's count)"
  done < <(grep '^AllocSites: site ' "$o")
  expect_eq "$n" 3 "workload site lines"
  expect_grep "$o" '^p32: summary sites=[0-9]+ objects=[0-9]+ unknown_classes=0 unknown_methods=0 traces_failed=0$' \
    "every int-kept class and method id named, every trace had a frame"
  expect_nogrep "$WORK/err" 'not an id the shim issued|not a class id|ERROR' "no bad id handed to the shim, no shim errors"
else
  expect_rc 134
  expect_grep "$WORK/err" "Assertion .sizeof\\(void \\*\\) == 4. failed" "the assertion in JVM_OnLoad stopped the JVM"
  expect_nogrep "$o" '^p32: |^AllocSites: done' "the agent did nothing and the workload never ran"
  expect_grep "$WORK/shell-note" 'Aborted' "the JVM ended by SIGABRT"
  expect_nogrep "$WORK/err" '^jvmpishim: ' "the shim said nothing: the agent stopped the JVM inside its JVM_OnLoad"
fi
finish
