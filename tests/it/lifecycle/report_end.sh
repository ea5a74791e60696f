#!/bin/bash
# report_end.sh — the migration report records how the run ended, read after the event:
#   crash    legacy-agents/crasher.c dereferences NULL in its CLASS_LOAD handler (class=Hello):
#            the report, rewritten as it stood at the crash (one summary), names SIGSEGV, the
#            agent library, the symbol (crasher_class_load), the event being delivered
#            (42 CLASS_LOAD), one attribution in the summary and the record, that the JVM's
#            handler runs next, and ends with the crash trailer; the JVM still writes its
#            hs_err file naming the same frame, and the exit status is the JVM's own for a
#            native crash (134: it aborts after hs_err).
#   abort    crasher.c with "assert" passes an obj_id as a class_id, and its assert aborts:
#            the report carries the shim's warning and the rejected id as at the crash, the
#            agent's frame that called abort(), and says no hs_err file follows (none does).
#   SIGTERM  a run of Sleep is sent SIGTERM once the agent is live: the JVM shuts down
#            (exit status 143), the report says once and plainly that SIGTERM ended it and
#            the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN. SIGINT likewise.
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
expect_grep "$R" "^crash in: the code of agent 0's library \($LIB\), during its handler of event 42 CLASS_LOAD\$" "crash: the agent library and the event being delivered"
expect_grep "$R" "^crash symbol: crasher_class_load\+0x[0-9a-f]+ \(the nearest exported symbol\) in $LIB\$" "crash: the symbol (dladdr)"
# The JVM handles SIGSEGV: the report says its handler runs next, and it did (hs_err above).
expect_grep "$R" '^crash next: the JVM.s own handler for SIGSEGV runs next \(HotSpot then writes its hs_err_pid<pid>\.log' "crash: the JVM's handler next, as it did"
expect_grep "$R" '^  42 CLASS_LOAD +1 +0 +0 +0 +[1-9][0-9]* ' "crash: the counts as at the crash"
expect_grep "$R" '^  EnableEvent +4 ' "crash: the calls as at the crash"
expect_grep "$R" '^summary: PROBLEMS: 1 thing will change the agent.s output' "crash: the summary says so"
expect_grep "$R" "^  will change: the run crashed with SIGSEGV in the code of agent 0's library \($LIB\), during its handler of event 42 CLASS_LOAD" \
  "crash: the summary gives the same one attribution"
expect_eq "$(grep -c '^summary:' "$R")" 1 "crash: one summary (the crash rewrote the checkpoint)"
expect_eq "$(tail -n 1 "$R")" "end of report (the run ended by a crash: SIGSEGV)" "crash: the last line"

echo "== crash: an assert in the agent's first OBJECT_ALLOC handler (abort)"
# The agent passes the event's obj_id to RequestEvent(CLASS_LOAD): refused with a warning,
# then its assert aborts. The JVM has no handler for SIGABRT: no hs_err file.
rm -f "$WORK"/hs_err_*.log "$R"
run_sh "-XX:ErrorFile=$WORK/hs_err_%p.log" "$(shim_arg crasher assert "report=$R")" -cp "$CLASSES" Hello
expect_rc 134
expect_grep "$WORK/err" 'RequestEvent\(CLASS_LOAD, 0x[0-9a-f]+\): the object is not a class' "abort: the shim warned first"
expect_grep "$WORK/err" 'Assertion .rc == JVMPI_SUCCESS. failed' "abort: the agent's assert failed"
hs=$(ls "$WORK"/hs_err_*.log 2>/dev/null | head -n 1)
[ -z "$hs" ] && ok "abort: no hs_err file (the JVM has no SIGABRT handler)" || bad "abort: an hs_err file: the report's 'no hs_err' would be wrong"
expect_grep "$R" '^crash next: the JVM has no handler for SIGABRT: .*no hs_err file' "abort: the report promises no hs_err file"
expect_nogrep "$R" 'hs_err_pid<pid>' "abort: and mentions none"
expect_grep "$R" "^crash in: abort\(\), called by agent 0's code \(an assert or its own abort\), during its handler of event 4 OBJECT_ALLOC\$" "abort: one attribution: the agent's abort in its OBJECT_ALLOC handler"
expect_grep "$R" "^crash symbol: crasher_alloc\+0x[0-9a-f]+ \(the agent's frame that called it" "abort: the agent's frame that called abort()"
expect_grep "$R" "^  will change: the run crashed with SIGABRT in abort\(\), called by agent 0's code" "abort: the summary gives the same attribution"
expect_grep "$R" '^summary: PROBLEMS: 2 things will change' "abort: crash and rejected id: 2 things will change the output"
expect_grep "$R" '^  will change: ids rejected: wrong kind: 1 ' "abort: the rejected id, as at the crash"
expect_grep "$R" '^  - 1 time: RequestEvent\(CLASS_LOAD, 0x[0-9a-f]+\): the object is not a class: JVMPI_FAIL$' "abort: the warning, as at the crash"
expect_grep "$R" '^  - ids rejected: wrong kind: 1; first: RequestEvent\(CLASS_LOAD' "abort: What happened, as at the crash"
expect_eq "$(awk '/^Warnings/{getline; print; exit}' "$R")" "  - 1 time: $(grep -o 'RequestEvent(CLASS_LOAD, 0x[0-9a-f]*): the object is not a class: JVMPI_FAIL' "$R" | head -n 1)" "abort: Warnings lists the refusal, not a stale (none)"
expect_nogrep "$R" 'no problems' "abort: no stale 'no problems'"
expect_eq "$(grep -c '^summary:' "$R")" 1 "abort: one summary"
expect_eq "$(tail -n 1 "$R")" "end of report (the run ended by a crash: SIGABRT)" "abort: the last line"

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
    expect_grep "$R" "^run: .*, ended by SIG$sig: the JVM ran its shutdown hooks, so the agent got JVM_SHUT_DOWN\$" "SIG$sig: said once and plainly"
    expect_nogrep "$R" "normal exit" "SIG$sig: not called a normal exit"
    expect_grep "$R" "^end of report \(the run ended by SIG$sig: " "SIG$sig: the report has its trailer"
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
  expect_grep "$R" '^summary: PROBLEMS: 1 thing will change the agent.s output' "-Xrs: the summary says PROBLEMS"
  expect_grep "$R" '^  will change: the run was ended by SIGTERM, for which the JVM had no handler \(-Xrs\?\): no shutdown hooks ran and the agent got no JVM_SHUT_DOWN' "-Xrs: the report names the signal and what it means"
  expect_eq "$(grep -c '^summary:' "$R")" 1 "-Xrs: one summary (the checkpoint rewritten)"
  expect_eq "$(tail -n 1 "$R")" "end of report (the run ended by SIGTERM without a JVM shutdown)" "-Xrs: the last line"
fi
finish
