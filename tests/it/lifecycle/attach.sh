#!/bin/bash
# attach.sh — loading a JVMPI agent into a running JVM: jcmd <pid> JVMTI.agent_load.
#
# AttachTarget holds 5000 AttachKept objects and runs a thread "attach-early" before the
# attach; after it, it starts "attach-late" and allocates 3000 AttachLate objects. The
# attach agent (legacy-agents/attach.c) must start in a consistent world: before
# JVM_INIT_DONE it hears of main, attach-early, the class AttachTarget and all 5000 kept
# objects (it enabled OBJECT_ALLOC in JVM_OnLoad); after it, the late thread and exactly
# 3000 AttachLate objects; no OBJECT_ALLOC names a class it was not told of. METHOD_ENTRY
# works late too (class rewriting needs no OnLoad-only capability); with methods=jvmti it
# cannot be had late and says so. An unquoted option string, which jcmd cuts at '=' (the shim
# receives "legacy"), is refused with a message that says so and shows the quoted form that
# works; the spelling with ':' for '=' (and %3D for '=' in the agent's options) passes an
# unquoted jcmd whole. Binding the probe natives late puts no JVM warning into the target's
# output. A second attach, an attach into a JVM that loaded the shim
# at start, a missing agent library and an agent whose JVM_OnLoad fails are refused with a
# message, and the program runs on to a normal exit.
source "$ROOT/tests/it/lib.sh"
JCMD=$JDK_HOME_T/bin/jcmd
[ -x "$JCMD" ] || skip "SKIP no jcmd in $JDK_HOME_T"

# start_target [JAVA_ARGS...] — start AttachTarget in the background; sets PID (or fails).
start_target() {
  rm -f "$WORK/go" "$WORK/out" "$WORK/err"
  timeout -k 5 120 "$JAVA" "$@" -cp "$CLASSES" AttachTarget "$WORK/go" >"$WORK/out" 2>"$WORK/err" &
  BG=$!
  PID=""
  for _ in $(seq 1 300); do
    PID=$(sed -n 's/^ready //p' "$WORK/out" 2>/dev/null)
    [ -n "$PID" ] && break
    sleep 0.1
  done
  [ -n "$PID" ] && ok "target started (pid $PID)" || { bad "target did not start"; show; }
}
# jload OPTIONS — jcmd JVMTI.agent_load the shim with OPTIONS; JC gets jcmd's output.
jload() {
  JC=$("$JCMD" "$PID" JVMTI.agent_load "$SHIM" "\"$1\"" 2>&1)
  echo "+ jcmd $PID JVMTI.agent_load $SHIM \"$1\""; echo "$JC" | sed 's/^/     > /'
}
# finish_target — let the target finish; RC gets its exit status.
finish_target() {
  touch "$WORK/go"
  wait "$BG"; RC=$?
  echo "+ target exited rc=$RC"
}

echo "--- attach with OBJECT_ALLOC, THREAD_START, CLASS_LOAD, and a report"
start_target
jload "report=$WORK/report.txt,legacy=$AGENTS/libattach.so:late"
expect_grep <(echo "$JC") 'return code: 0' "jcmd: the shim loaded"
jload "legacy=$AGENTS/libattach.so"
expect_grep <(echo "$JC") 'return code: -1' "second attach: refused"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^attach: JVM_OnLoad options=late$' "JVM_OnLoad ran with the agent's options"
expect_grep "$WORK/out" '^attach: enable THREAD_START=0 CLASS_LOAD=0 OBJECT_ALLOC=0 METHOD_ENTRY=0$' "late: THREAD_START, CLASS_LOAD, OBJECT_ALLOC and METHOD_ENTRY (class rewriting) granted"
expect_grep "$WORK/out" '^attach: init done: threads main=1 attach-early=1; AttachTarget loaded=1; objects replayed=[0-9]+ AttachKept=5000$' "replay before JVM_INIT_DONE: existing threads, classes, and all 5000 kept objects"
expect_grep "$WORK/out" '^attach: shut down: attach-late thread=1 AttachLate=3000 AttachKept after=0 allocs after=[0-9]+ unknown classes=0$' "after JVM_INIT_DONE: the new thread, exactly 3000 AttachLate, every class announced"
expect_grep "$WORK/out" '^done$' "the program ran to its end"
expect_nogrep "$WORK/out" 'attach: FAIL' "the agent saw no violation"
expect_grep "$WORK/err" 'attach: error: .*already active in this JVM' "second attach: the message says why"
expect_grep "$WORK/report.txt" 'the shim was attached to a running JVM' "report: says the shim was attached"
expect_grep "$WORK/report.txt" '^  1 METHOD_ENTRY +1 +0 +0 +0 +[1-9][0-9]* +differs' "report: METHOD_ENTRY granted and delivered late"
# The application's output is not the shim's: binding the probe natives late must not make
# the JVM warn there (RegisterNatives of a platform class does, once per native).
expect_nogrep "$WORK/out" '\[warning\]|Re-registering' "the target's stdout has no JVM warning line"
expect_nogrep "$WORK/err" '\[warning\]|Re-registering|restricted method' "the target's stderr has no JVM warning about the shim's natives"

echo "--- methods=jvmti: method events cannot be had late"
start_target
jload "methods=jvmti,legacy=$AGENTS/libattach.so"
expect_grep <(echo "$JC") 'return code: 0' "methods=jvmti: the shim loaded"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^attach: enable THREAD_START=0 CLASS_LOAD=0 OBJECT_ALLOC=0 METHOD_ENTRY=1$' "methods=jvmti: METHOD_ENTRY not available late"
expect_grep "$WORK/err" 'METHOD_ENTRY is not available because JVMTI grants its capability only at JVM start' "methods=jvmti: the unavailable event is named with its reason"

echo "--- a missing agent library"
start_target
jload "legacy=$WORK/no-such-agent.so"
expect_grep <(echo "$JC") 'return code: -1' "missing library: attach refused"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^done$' "missing library: the program ran on"
expect_grep "$WORK/err" 'no-such-agent\.so' "missing library: the message names it"

echo "--- an agent whose JVM_OnLoad fails"
start_target
jload "legacy=$AGENTS/libonloaderr.so:x"
expect_grep <(echo "$JC") 'return code: -1' "failing JVM_OnLoad: attach refused"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^done$' "failing JVM_OnLoad: the program ran on (no halt)"
expect_grep "$WORK/err" 'attach: the legacy agent failed to start; the shim stays inactive' "failing JVM_OnLoad: the message says so"

echo "--- malformed options"
start_target
jload "bogus=1,legacy=$AGENTS/libattach.so"
expect_grep <(echo "$JC") 'return code: -1' "bad option: attach refused"
finish_target
expect_rc 0
expect_grep "$WORK/err" "attach: error: unknown option 'bogus=1'" "bad option: the message names it"

echo "--- the option string unquoted: jcmd cuts it at '='"
start_target
JC=$("$JCMD" "$PID" JVMTI.agent_load "$SHIM" "legacy=$AGENTS/libattach.so:late" 2>&1)
echo "+ jcmd $PID JVMTI.agent_load $SHIM legacy=$AGENTS/libattach.so:late"; echo "$JC" | sed 's/^/     > /'
expect_grep <(echo "$JC") 'return code: -1' "unquoted: attach refused"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^done$' "unquoted: the program ran on"
expect_nogrep "$WORK/err" "unknown option 'legacy'" "unquoted: no misleading 'unknown option'"
expect_grep "$WORK/err" "attach: error: the options are just 'legacy', without its value: was the option string cut at '='\\? jcmd does that to an unquoted argument" \
  "unquoted: the message says the value was lost, and why"
expect_grep "$WORK/err" 'jcmd PID JVMTI.agent_load /abs/libjvmpishim.so "\\"legacy=\.\.\.\\""' "unquoted: the message shows the quoted form that works"
# The quoted form the message shows works (jload quotes the same way).
start_target
jload "legacy=$AGENTS/libattach.so:late"
expect_grep <(echo "$JC") 'return code: 0' "quoted as the message shows: the shim loaded"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^attach: JVM_OnLoad options=late$' "quoted: JVM_OnLoad got the agent's options"

echo "--- the jcmd-safe spelling, unquoted: ':' for '=', %3D for '=' in the agent's options"
start_target
JC=$("$JCMD" "$PID" JVMTI.agent_load "$SHIM" "report:$WORK/r2.txt,legacy:$AGENTS/libattach.so:late,k%3Dv" 2>&1)
echo "+ jcmd $PID JVMTI.agent_load $SHIM report:$WORK/r2.txt,legacy:$AGENTS/libattach.so:late,k%3Dv"; echo "$JC" | sed 's/^/     > /'
expect_grep <(echo "$JC") 'return code: 0' "colon spelling, unquoted: the shim loaded"
finish_target
expect_rc 0
expect_grep "$WORK/out" '^attach: JVM_OnLoad options=late,k=v$' "colon spelling: JVM_OnLoad got the agent's options, %3D as '='"
expect_grep "$WORK/r2.txt" '^end of report' "colon spelling: report: took its path"

echo "--- an agent that switches every event number off (tidy.c), attached: no alarm"
start_target
jload "report=$WORK/r3.txt,legacy=$AGENTS/libtidy.so"
expect_grep <(echo "$JC") 'return code: 0' "tidy: the shim loaded"
finish_target
expect_rc 0
expect_nogrep "$WORK/err" 'jvmpishim: warning' "tidy attached: no warning (DisableEvent of MONITOR_DUMP, never enabled, included)"
expect_grep "$WORK/r3.txt" '^summary: no problems: ' "tidy attached: the summary says no problems"

echo "--- the shim already loaded at start"
start_target "$(shim_arg lifecycle)"
jload "legacy=$AGENTS/libattach.so"
expect_grep <(echo "$JC") 'return code: -1' "loaded at start: attach refused"
finish_target
expect_rc 0
expect_grep "$WORK/err" 'already active in this JVM' "loaded at start: the message says why"
ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1 && bad "a JVM crashed (hs_err file)" || ok "no JVM crashed"
finish
