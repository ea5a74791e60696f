#!/bin/bash
# client_early.sh — a library that asks for JVMPI while the VM is still starting
# (legacy-agents/earlyask.c, in its JNI_OnLoad; it enables THREAD_START and JVM_INIT_DONE).
# Runs:
#   helper  a legacy agent (legacy-agents/withhelper.c) calls its Java helper from JVM_OnLoad,
#           which loads the library: it asks before JVM_INIT_DONE, so the start-up replay
#           gives it the threads that exist (main among them) and then JVM_INIT_DONE, once
#   premain a -javaagent listed before the shim loads the library in its premain, from a
#           VMInit the JVM runs before the shim's: the shim starts there, on that thread
#           (the legacy agent's JVM_OnLoad, JVM_INIT_DONE), and its own VMInit finds it
#           started; the library gets its interface after JVM_INIT_DONE
#   nobody  report= and no library asks: the report file says so
# Checked: the library's GetEnv answered; JVM_INIT_DONE once to each agent that enabled it;
# the program ran; no JVMPI warning from the JVM, no shim error or warning.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
LIB="-Djava.library.path=$AGENTS"
common() { # LABEL
  expect_rc 0
  expect_grep "$o" '^hello$' "$1: the program ran"
  expect_nogrep "$o" 'FAIL' "$1: no violation"
  expect_grep "$o" '^earlyask: onload version=0x10000003$' "$1: GetEnv(JVMPI_VERSION_1) in JNI_OnLoad answered"
  expect_nogrep "$o" 'JVMPI.*no longer supported' "$1: the JVM printed no JVMPI warning"
  expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "$1: no shim error or warning"
}

run_java "$(shim_arg withhelper "" log=info)" $LIB -cp "$CLASSES" Hello
common helper
expect_grep "$WORK/err" 'libearlyask\.so asked for JVMPI from JNI_OnLoad on thread "main" before JVM_INIT_DONE' "helper: it asked before JVM_INIT_DONE"
expect_count "$o" '^earlyask: JVM_INIT_DONE ' 1 "helper: the library got JVM_INIT_DONE once"
expect_grep "$o" '^earlyask: JVM_INIT_DONE threads_before=[1-9][0-9]* main_before=1$' "helper: the replay told it the threads, main among them, before JVM_INIT_DONE"
expect_count "$o" '^withhelper: JVM_INIT_DONE$' 1 "helper: the legacy agent got JVM_INIT_DONE once"

# No library asks: report= given for them says so, and nothing else is printed.
run_java "-agentpath:$SHIM=report=$WORK/none.txt" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$o" '^hello$' "nobody: the program ran"
expect_nogrep "$WORK/err" 'jvmpishim' "nobody: the shim printed nothing"
expect_grep "$WORK/none.txt" '^agent: +none: no library of the program asked the JavaVM for JVMPI' "nobody: the report says no library asked"
expect_grep "$WORK/none.txt" '^end of report' "nobody: the report is final"

JAR=$(dirname "$JAVA")/jar
[ -x "$JAR" ] || skip "no jar tool beside $JAVA"
printf 'Premain-Class: EarlyAgent\n' >"$WORK/manifest"
"$JAR" cfm "$WORK/early.jar" "$WORK/manifest" -C "$CLASSES" EarlyAgent.class
run_java "-javaagent:$WORK/early.jar" "$(shim_arg lifecycle "" log=info)" $LIB -cp "$CLASSES" Hello
common premain
expect_grep "$WORK/err" 'libearlyask\.so asks for JVMPI before the shim.s VMInit: the shim starts now' "premain: the shim started when the library asked"
expect_count "$o" '^lifecycle: event JVM_INIT_DONE ' 1 "premain: the legacy agent got JVM_INIT_DONE once"
expect_count "$o" '^lifecycle: JVM_OnLoad returns JNI_OK$' 1 "premain: the legacy agent's JVM_OnLoad ran once"
expect_count "$o" '^earlyask: JVM_INIT_DONE ' 0 "premain: the library, which asked after it, got no JVM_INIT_DONE"
finish
