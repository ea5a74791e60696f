#!/bin/bash
# client_late.sh — libraries that ask for JVMPI after the JVM started, written the JDK 1.3 way
# (tests/java/LateApp.java): legacy-agents/lateuse.c asks in JNI_OnLoad, on the JavaVM it is
# handed, and enables THREAD_START/END, CLASS_LOAD, METHOD_ENTRY, OBJECT_ALLOC, MONITOR_*, GC_*
# and JVM_SHUT_DOWN late; legacy-agents/attachask.c asks on a thread it attached itself, with the
# JavaVM of JNI_GetCreatedJavaVMs, and from there suspends, traces and resumes main.
# Runs:
#   plain   -agentpath with no legacy=, report=: each library's report names it, how and when
#           it asked, and what it used (the second library's report at PATH.1)
#   xrun    -Xrunjvmpishim with no options
#   full    three legacy= agents take three of the four slots: lateuse gets the last, and
#           attachask is refused with JNI_EVERSION and one warning naming it; the program runs on
# Checked: lateuse's counts of late-worker's THREAD_START/END, LateTarget's CLASS_LOAD, work()
# entries, LateTarget allocations, late-worker's contended entry and wait (and their ENTERED,
# WAITED) equal the workload's; GC_START/GC_FINISH paired; the thread names kept in TLS at
# THREAD_START read back at THREAD_END; attachask's interface works on its attached thread (raw
# monitor, TLS, CPU time, its own THREAD_START by request) and its trace of main, taken while
# main was suspended, has LateApp's frames; no JVMPI warning from the JVM.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out
LIB="-Djava.library.path=$AGENTS"

check_late() { # LABEL
  local l=$1 k v got
  expect_rc 0
  expect_grep "$o" '^LateApp: done$' "$l: workload finished"
  expect_nogrep "$o" 'FAIL' "$l: no violation seen by the libraries or the workload"
  expect_nogrep "$o" 'JVMPI.*no longer supported' "$l: the JVM printed no JVMPI warning"
  expect_grep "$o" '^lateuse: onload version=0x10000003$' "$l: GetEnv(JVMPI_VERSION_1) in JNI_OnLoad gave an interface"
  for kv in $(sed -n 's/^LateApp: truth start=/start=/p' "$o"); do
    k=${kv%%=*}; v=${kv#*=}
    got=$(sed -n "s/^lateuse: summary.* $k=\\([0-9]*\\).*/\\1/p;s/^lateuse: summary $k=\\([0-9]*\\).*/\\1/p" "$o" | head -n 1)
    expect_eq "$got" "$v" "$l: lateuse's $k"
  done
  got=$(sed -n 's/^lateuse: summary.* gc_start=\([0-9]*\) gc_finish=\([0-9]*\) .*/\1 \2/p' "$o")
  [ -n "$got" ] && [ "${got% *}" = "${got#* }" ] && [ "${got% *}" -ge 1 ] && ok "$l: GC_START/GC_FINISH paired ($got)" || bad "$l: GC_START/GC_FINISH '$got'"
  expect_grep "$o" '^lateuse: summary .* tls_ok=[1-9][0-9]* tls_bad=0 ' "$l: TLS set at THREAD_START read back at THREAD_END"
}
check_attached() { # LABEL
  local l=$1
  expect_grep "$o" '^attachask: detached rc=-2 null=1$' "$l: GetEnv(JVMPI_VERSION_1) on a thread not attached yet: JNI_EDETACHED, as on HotSpot"
  expect_grep "$o" '^attachask: attached version=0x10000003 same_vm=1$' "$l: GetEnv(JVMPI_VERSION_1_2) on a thread the library attached itself; GetJavaVM then gives the same JavaVM"
  expect_grep "$o" '^attachask: main trace status=[0-9]+ frames=[1-9][0-9]* classes=(.*,)?LateApp,LateApp cpu=yes thread_start_self=1$' \
    "$l: main's trace, taken suspended, ends in LateApp.spin and LateApp.main; CPU time and its own THREAD_START"
}

run_java "-agentpath:$SHIM=report=$WORK/r.txt" $LIB -cp "$CLASSES" LateApp attach
check_late plain
check_attached plain
expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "plain: no shim error or warning"
expect_grep "$WORK/r.txt" '^agent: +.*/liblateuse\.so \(agent 0; 2 agents in this JVM\)$' "plain: lateuse's report names it"
expect_grep "$WORK/r.txt" '^asked: +GetEnv\(JVMPI_VERSION_\*\) from JNI_OnLoad on thread "main" at .*, after JVM_INIT_DONE' "plain: lateuse's report says how and when it asked"
expect_grep "$WORK/r.txt" '^  MONITOR_WAIT|^  [0-9]+ MONITOR_WAIT +1 ' "plain: lateuse's report lists the events it enabled"
expect_grep "$WORK/r.txt" '^end of report' "plain: lateuse's report is final"
expect_grep "$WORK/r.txt.1" '^agent: +.*/libattachask\.so \(agent 1; ' "plain: attachask's report at PATH.1 names it"
expect_grep "$WORK/r.txt.1" '^asked: .* on thread "attach-asker" ' "plain: attachask's report names the thread it asked on"
expect_grep "$WORK/r.txt.1" '^  SuspendThread +1 ' "plain: attachask's report lists SuspendThread"

LD_LIBRARY_PATH="$(dirname "$SHIM")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_java -Xrunjvmpishim $LIB -cp "$CLASSES" LateApp attach
check_late xrun
check_attached xrun

A=$(shim_arg lifecycle)
run_java "$A" "$A" "$A" $LIB -cp "$CLASSES" LateApp attach
check_late full
expect_grep "$o" '^attachask: GetEnv\(JVMPI_VERSION_1_2\) on an attached thread refused rc=-3$' "full: the fifth asker gets JNI_EVERSION"
expect_count "$WORK/err" 'jvmpishim: warning: .*/libattachask\.so asked for JVMPI .* all 4 JVMPI slots are taken' 1 "full: one warning naming the refused library"
finish
