#!/bin/bash
# client_tdview.sh — a thread-dump viewer's JNI library gets JVMPI itself, as on JDK 1.2-1.4:
# legacy-agents/tdview.c, loaded with System.loadLibrary, GetJavaVM + GetEnv(JVMPI_VERSION_1)
# in an init() native, on tests/java/TdApp.java (nested synchronized blocks, a thread blocked
# on entry, a thread in wait(), a two-thread deadlock; ground truth printed by the workload).
# Runs: -agentpath with no legacy=; -agentpath with a legacy= agent beside it (the viewer gets
# a slot of its own); -Xrunjvmpishim with no options.
# Checked in each: RequestEvent(MONITOR_DUMP) delivered on the caller before it returned; the
# nested CLASS_LOAD and THREAD_START requests made inside that handler delivered inside it;
# each of the five monitors (class named by the requested CLASS_LOAD, owner, entry count,
# threads waiting to enter and to be notified, named by the requested THREAD_START) as the
# workload says; for each owner and waiter GetThreadStatus (blocked on entry: MONITOR_WAIT,
# in wait(): CONDVAR_WAIT) and a GetCallTrace, grown until it fit, whose methods
# (GetMethodClass + CLASS_LOAD) include the workload's own frames in order; the threads back
# in place after ResumeThread; jobjectID2jobject/jobject2jobjectID round trips; no JVMPI
# warning from the JVM and no shim warning.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
o=$WORK/out

check_run() { # LABEL
  local l=$1 name want got t frames
  expect_rc 0
  expect_grep "$o" '^TdApp: done$' "$l: workload finished"
  expect_nogrep "$o" 'FAIL' "$l: no violation seen by the library or the workload"
  expect_grep "$o" '^tdview: init version=0x10000003$' "$l: GetEnv(JVMPI_VERSION_1) on GetJavaVM's JavaVM gave an interface (version 1_2)"
  expect_nogrep "$o" 'JVMPI.*no longer supported' "$l: the JVM printed no JVMPI warning"
  expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "$l: no shim error or warning"
  expect_grep "$o" '^tdview: dump monitors=[0-9]+ nested=[1-9][0-9]* nested_outside=0$' \
    "$l: nested CLASS_LOAD/THREAD_START requests delivered inside the dump's handler"
  while read -r name want; do
    got=$(sed -n "s/^tdview: monitor $name //p" "$o")
    expect_eq "$got" "$want" "$l: monitor $name"
  done < <(sed -n 's/^TdApp: truth monitor \([A-Z0-9]*\) /\1 /p' "$o")
  while read -r t frames; do
    local st="" m line tr ok_order=1 rest
    [[ "$frames" == *" status="* ]] && st=${frames##* status=} && frames=${frames% status=*}
    line=$(grep "^tdview: thread $t " "$o" | head -n 1)
    [ -n "$line" ] || { bad "$l: no trace of thread $t"; continue; }
    tr=",${line##* trace=},"
    rest=$tr
    for m in $frames; do
      if [[ "$rest" == *",$m,"* ]]; then rest=${rest#*",$m,"}; rest=",$rest"; else ok_order=0; fi
    done
    [ $ok_order = 1 ] && ok "$l: $t's trace holds $frames in order" || bad "$l: $t's trace '$tr' lacks $frames in order"
    [ -n "$st" ] && expect_eq "$(sed -n 's/.* status=\([0-9]*\) .*/\1/p' <<<"$line")" "$st" "$l: GetThreadStatus($t)"
    [[ "$line" =~ tries=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 1 ] && ok "$l: $t's trace buffer grew (${BASH_REMATCH[1]} tries)" || bad "$l: $t's trace buffer never grew"
  done < <(sed -n 's/^TdApp: truth thread \([a-z0-9]*\) in /\1 /p' "$o")
}

LIB="-Djava.library.path=$AGENTS"
run_java "-agentpath:$SHIM" $LIB -cp "$CLASSES" TdApp
check_run "no legacy="
run_java "$(shim_arg lifecycle)" $LIB -cp "$CLASSES" TdApp
check_run "beside a legacy= agent"
expect_grep "$o" '^lifecycle: ' "beside a legacy= agent: the legacy agent ran too"
LD_LIBRARY_PATH="$(dirname "$SHIM")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_java -Xrunjvmpishim $LIB -cp "$CLASSES" TdApp
check_run "-Xrunjvmpishim"
finish
