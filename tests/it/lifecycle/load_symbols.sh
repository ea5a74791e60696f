#!/bin/bash
# load_symbols.sh — a legacy agent's exported globals bind to its own definitions, never to
# the JVM's. The symclash agent (legacy-agents/symclash.c) exports globals and functions with
# common short names (threads, classes, methods, heap, events, lock, table, count, verbose,
# options, init, debug, verify, find, help, flush, ...), several of which JDK 25's libjvm
# also exports (the launcher loads libjvm RTLD_GLOBAL). The agent writes a value into each
# global in JVM_OnLoad and reads them back (and calls its functions) at JVM_INIT_DONE, every
# THREAD_START and JVM_SHUT_DOWN. Checked: the JVM runs Hello to the end, every value held,
# and the shim said which names collided (info) and why it loaded the agent RTLD_DEEPBIND
# (one warning) exactly when the process defines one of them (nm -D of libjvm is the
# ground truth). Also by bare name (legacy=symclash, found on LD_LIBRARY_PATH), and
# an agent without collisions (lifecycle) is loaded without RTLD_DEEPBIND.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
o=$WORK/out; e=$WORK/err

libjvm=$(find "$(dirname "$(dirname "$(readlink -f "$JAVA")")")" -name libjvm.so -path '*server*' | head -n1)
clash=$(nm -D --defined-only "$libjvm" 2>/dev/null | awk '{print $3}' | sed 's/@.*//' |
        grep -xE 'threads|classes|methods|heap|events|lock|table|count|verbose|options|debug_level|flush_pending|universe|init|debug|verify|find|help|flush' | sort | tr '\n' ' ')
echo "     libjvm exports of the agent's names: ${clash:-none}"

check_agent() {
  expect_grep "$o" '^hello$' "the workload ran"
  expect_nogrep "$o" '^symclash: FAIL' "every global kept the value the agent wrote, every function was the agent's"
  expect_grep "$o" '^symclash: shutdown checked=[0-9]+ fails=0$' "agent reached JVM_SHUT_DOWN with no failure"
  expect_grep "$o" '^symclash: ok threads$' "the agent's 'threads' is its own"
  if [ -n "$clash" ]; then
    expect_count "$e" 'jvmpishim: warning: a legacy agent exports global names that the JVM process already defines' 1 "one warning saying why RTLD_DEEPBIND"
    for n in $clash; do
      expect_grep "$e" "jvmpishim: info: agent 0: .*exported names? already defined in the process: .*\\b$n\\b" "info line names '$n'"
    done
  else
    expect_nogrep "$e" 'RTLD_DEEPBIND' "no collision on this JDK: no RTLD_DEEPBIND"
  fi
}

run_java "$(shim_arg symclash "" log=info)" -cp "$CLASSES" Hello
expect_rc 0
check_agent

LD_LIBRARY_PATH=$AGENTS run_java "-agentpath:$SHIM=log=info,legacy=symclash" -cp "$CLASSES" Hello
expect_rc 0
check_agent

run_java "$(shim_arg lifecycle "" log=info)" -cp "$CLASSES" Hello
expect_rc 0
expect_nogrep "$e" 'DEEPBIND|already defined in the process' "an agent without collisions is loaded as before"
finish
