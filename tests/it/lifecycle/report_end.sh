#!/bin/bash
# report_end.sh — the migration report records how the run ended, read after the event:
#   crash    legacy-agents/crasher.c dereferences NULL in its CLASS_LOAD handler (class=Hello):
#            the report names SIGSEGV, the agent library, the symbol (crasher_class_load),
#            the event being delivered (42 CLASS_LOAD) and ends with the crash trailer; the
#            JVM still writes its hs_err file naming the same frame, and the exit status is
#            the JVM's own for a native crash (134: it aborts after hs_err).
#   SIGTERM  a run of Sleep is sent SIGTERM once the agent is live: the JVM shuts down
#            (exit status 143), the report says the run was ended by SIGTERM and has its
#            trailer. SIGINT likewise (130).
#   SIGKILL  a run killed by SIGKILL leaves the last checkpoint: header and counts, the
#            words saying it is a checkpoint of a run still going, and no trailer.
#   -Xrs     no JVM handler for SIGTERM: the report is finished in the shim's handler and
#            says the run was ended by SIGTERM without a JVM shutdown (exit status 143).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
R=$WORK/report.txt
LIB=$AGENTS/libcrasher.so

# run_sh ARGS... — run_java for a JVM that dies by a signal: through sh, which takes its
# status without bash's "line N: ... Aborted" job message (tests/run.sh takes such lines
# for shell errors).
run_sh() {
  # shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
  timeout -k 5 "$JAVA_TIMEOUT" sh -c '"$@" >"$0.out" 2>"$0.err"; echo $? >"$0.rc"' "$WORK/sh" \
    "$JAVA" ${JVMPI_TEST_JAVA_OPTS:-} "$@" 2>/dev/null
  mv "$WORK/sh.out" "$WORK/out"; mv "$WORK/sh.err" "$WORK/err"
  RC=$(cat "$WORK/sh.rc" 2>/dev/null || echo none)
  echo "+ java ${JVMPI_TEST_JAVA_OPTS:+$JVMPI_TEST_JAVA_OPTS }$* -> rc=$RC"
}

echo "== crash: NULL dereference in the agent's CLASS_LOAD handler"
rm -f "$WORK"/hs_err_*.log
run_sh "-XX:ErrorFile=$WORK/hs_err_%p.log" "$(shim_arg crasher class=Hello "report=$R")" -cp "$CLASSES" Hello
# The JVM's status for a native crash: it writes hs_err, then aborts (128 + SIGABRT).
expect_rc 134
expect_grep "$WORK/out" '^crasher: CLASS_LOAD Hello: about to write through \(nil\)$' "the agent reached its bug"
expect_nogrep "$WORK/out" '^hello$' "the program did not run"
hs=$(ls "$WORK"/hs_err_*.log 2>/dev/null | head -n 1)
[ -n "$hs" ] && ok "the JVM wrote its hs_err file ($(basename "$hs"))" || bad "no hs_err file: the JVM's handler did not run"
[ -n "$hs" ] && expect_grep "$hs" '^C  \[libcrasher\.so\+0x[0-9a-f]+\]  crasher_class_load\+' "hs_err names the agent's frame"
[ -n "$hs" ] && expect_grep "$hs" 'SIGSEGV' "hs_err: SIGSEGV"
[ -s "$R" ] && ok "report written" || { bad "no report at $R"; finish; }
expect_grep "$R" '^jvmpishim migration report$' "report title (the header written at start)"
expect_grep "$R" '^\*\*\* crash: SIGSEGV \(signal 11, si_code [0-9]+, address 0x[0-9a-f]+\) at pc 0x[0-9a-f]+$' "crash: the signal"
expect_grep "$R" "^crash in: the legacy agent library of agent 0: $LIB\$" "crash: the agent library"
expect_grep "$R" "^crash symbol: crasher_class_load\+0x[0-9a-f]+ \(the nearest exported symbol\) in $LIB\$" "crash: the symbol (dladdr)"
expect_grep "$R" '^crash during: delivery of JVMPI event 42 CLASS_LOAD to agent 0$' "crash: the event being delivered"
expect_grep "$R" '^counts at the crash \(agent 0\): EnableEvent=4 .*CLASS_LOAD=[1-9][0-9]* .*JVM_INIT_DONE=1' "crash: the counts so far"
expect_grep "$R" '^summary: PROBLEMS: the run crashed with SIGSEGV' "crash: the summary says so"
expect_eq "$(tail -n 1 "$R")" "end of report (the run ended by a crash: SIGSEGV)" "crash: the last line"

# start_bg ARGS... — start java in the background (pid in $JPID), wait until the agent is
# live and the report's JVM_INIT_DONE checkpoint is written.
# Through sh (see run_sh), with SIGINT back at its default: a background job inherits it
# ignored, and the JVM leaves an ignored SIGINT alone.
start_bg() {
  rm -f "$WORK/bg.pid" "$WORK/bg.rc"
  # shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
  sh -c 'env --default-signal=INT "$@" >"$0.out" 2>"$0.err" & echo $! >"$0.pid"; wait $!; echo $? >"$0.rc"' "$WORK/bg" \
    "$JAVA" ${JVMPI_TEST_JAVA_OPTS:-} "$@" 2>/dev/null &
  SHPID=$!
  local i
  for i in $(seq 1 100); do [ -s "$WORK/bg.pid" ] && break; sleep 0.05; done
  JPID=$(cat "$WORK/bg.pid")
  ln -sf "$WORK/bg.out" "$WORK/out"; ln -sf "$WORK/bg.err" "$WORK/err"
  echo "+ java ${JVMPI_TEST_JAVA_OPTS:+$JVMPI_TEST_JAVA_OPTS }$* & (pid $JPID)"
  local i
  for i in $(seq 1 600); do
    grep -q '^crasher: live$' "$WORK/out" 2>/dev/null && grep -q 'JVM_INIT_DONE delivered' "$R" 2>/dev/null && return 0
    kill -0 "$JPID" 2>/dev/null || break
    sleep 0.1
  done
  bad "the JVM did not get live (or its report has no JVM_INIT_DONE checkpoint)"; show
  kill -KILL "$JPID" 2>/dev/null
  return 1
}
# stop SIG — send SIG, wait for the JVM (at most 60 s), RC = its status.
stop() {
  kill "-$1" "$JPID"
  local i
  for i in $(seq 1 600); do kill -0 "$JPID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$JPID" 2>/dev/null && { bad "the JVM did not end within 60 s of SIG$1"; kill -KILL "$JPID"; }
  wait "$SHPID"; RC=$(cat "$WORK/bg.rc" 2>/dev/null || echo none)
  echo "+ kill -$1 -> rc=$RC"
}

for sig in TERM INT; do
  echo "== SIG$sig"
  rm -f "$R"
  if start_bg "$(shim_arg crasher "" "report=$R")" -cp "$CLASSES" Sleep 100000; then
    stop $sig
    [ "$sig" = TERM ] && want=143 || want=130
    expect_rc $want
    expect_grep "$WORK/out" '^crasher: shut down ' "SIG$sig: the agent got JVM_SHUT_DOWN"
    expect_grep "$R" "^run: .*, ended by SIG$sig \(the JVM ran its shutdown on it: JVM_SHUT_DOWN" "SIG$sig: the report names the signal"
    expect_grep "$R" "^end of report \(the run ended by SIG$sig " "SIG$sig: the report has its trailer"
    expect_nogrep "$R" 'This is a checkpoint' "SIG$sig: the final report replaced the checkpoint"
  fi
done

echo "== SIGKILL"
rm -f "$R"
if start_bg "$(shim_arg crasher "" "report=$R")" -cp "$CLASSES" Sleep 100000; then
  stop KILL
  expect_rc 137
  [ -s "$R" ] && ok "SIGKILL: the report is there" || bad "SIGKILL: no report"
  expect_grep "$R" '^jvmpishim migration report$' "SIGKILL: the header"
  expect_grep "$R" "^agent: +$LIB " "SIGKILL: the agent"
  expect_grep "$R" '^run: +started .* This is a checkpoint: the final report ends with an "end of report" line; without one, the run did not end normally' \
    "SIGKILL: the checkpoint says a missing trailer means the run did not end normally"
  expect_grep "$R" '^  42 CLASS_LOAD +1 +0 +0 +0 +[1-9][0-9]* ' "SIGKILL: the counts of the last checkpoint"
  expect_nogrep "$R" '^end of report' "SIGKILL: no trailer"
fi

echo "== SIGTERM under -Xrs (no JVM handler)"
rm -f "$R"
if start_bg -Xrs "$(shim_arg crasher "" "report=$R")" -cp "$CLASSES" Sleep 100000; then
  stop TERM
  expect_rc 143
  expect_nogrep "$WORK/out" '^crasher: shut down ' "-Xrs: no JVM shutdown, no JVM_SHUT_DOWN"
  expect_grep "$R" '^summary: PROBLEMS: the run was ended by SIGTERM, for which the JVM had no handler' "-Xrs: the report names the signal"
  expect_eq "$(tail -n 1 "$R")" "end of report (the run ended by SIGTERM without a JVM shutdown)" "-Xrs: the last line"
fi
finish
