#!/bin/bash
# setup_errors.sh — every set-up mistake makes the VM refuse to start (non-zero exit, the
# application never runs, no crash) with a message naming the problem: missing or unknown
# options, a bad log level, an empty/missing/unloadable agent library, an agent without
# JVM_OnLoad, one whose JVM_OnLoad fails, one that never sets NotifyEvent, one with an
# undefined symbol, legacy= before another option (the message says it must come last).
# "help" prints the grammar and does not run the application.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

# refused WHAT ERE REASON AGENTARG — run Hello with AGENTARG; expect refusal and a message
# matching ERE (case-insensitive) on stdout or stderr, and also one matching REASON if given.
refused() {
  local what=$1 ere=$2 reason=$3; shift 3
  echo "--- $what"
  rm -f "$WORK"/hs_err_pid*.log
  run_java "$@" -cp "$CLASSES" Hello
  if [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ]; then ok "$what: VM refused to start (rc=$RC)"
  else bad "$what: rc=$RC, expected a normal failure exit (1..123)"; show; fi
  expect_nogrep "$WORK/out" '^hello$' "$what: application did not run"
  if cat "$WORK/out" "$WORK/err" | grep -Eiq -- "$ere"; then ok "$what: message matches /$ere/"
  else bad "$what: no message matching /$ere/"; show; fi
  if [ -n "$reason" ]; then
    if cat "$WORK/out" "$WORK/err" | grep -Eiq -- "$reason"; then ok "$what: reason matches /$reason/"
    else bad "$what: no reason matching /$reason/"; show; fi
  fi
  if ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1; then bad "$what: the VM crashed (hs_err file)"; else ok "$what: no VM crash"; fi
}

A=$AGENTS/liblifecycle.so

refused "unknown option" "bogus" 'unknown' "-agentpath:$SHIM=bogus=1,legacy=$A"
refused "bad log level" "loud" 'level' "-agentpath:$SHIM=log=loud,legacy=$A"
refused "empty legacy=" 'legacy=' 'no agent|empty|names no' "-agentpath:$SHIM=legacy="
refused "empty legacy= with options" 'legacy=' 'no agent|empty|names no' "-agentpath:$SHIM=legacy=:x=1"
refused "missing library" '/nonexistent/libx\.so' 'no such file|not found|does not exist' "-agentpath:$SHIM=legacy=/nonexistent/libx.so"
# legacy= before another option: the path runs on to the end; the message says why.
refused "legacy= before log=" "legacy=$A,log=info: cannot load" "$A exists: legacy= must come last" "-agentpath:$SHIM=legacy=$A,log=info"
refused "legacy: before report:" "$A,report:.*cannot load" "$A exists: legacy= must come last" "-agentpath:$SHIM=legacy:$A,report:$WORK/r.txt"
refused "bare name not found" 'jvmpishim_no_such_agent' 'libjvmpishim_no_such_agent\.so' "-agentpath:$SHIM=legacy=jvmpishim_no_such_agent"
refused "directory" "$WORK" 'directory' "-agentpath:$SHIM=legacy=$WORK"

printf 'this is not a shared library\n' >"$WORK/notalib.so"
refused "text file" 'notalib\.so' 'too short|invalid ELF|not an ELF|ELF header|not a shared' "-agentpath:$SHIM=legacy=$WORK/notalib.so"

# A 32-bit ELF header: a copy of a real agent with EI_CLASS patched to ELFCLASS32.
cp "$AGENTS/libonloaderr.so" "$WORK/libelf32.so"
printf '\001' | dd of="$WORK/libelf32.so" bs=1 seek=4 conv=notrunc status=none
refused "32-bit ELF" 'libelf32\.so' 'ELFCLASS32|wrong ELF class|32-bit' "-agentpath:$SHIM=legacy=$WORK/libelf32.so"

# An executable, not an agent library.
refused "executable" '/bin/sh' 'JVM_OnLoad|position-independent executable|not a shared' "-agentpath:$SHIM=legacy=/bin/sh"

refused "no JVM_OnLoad" 'libnoonload\.so' 'JVM_OnLoad' "-agentpath:$SHIM=legacy=$AGENTS/libnoonload.so"
expect_nogrep "$WORK/out" 'noonload: FAIL' "noonload: the look-alike function was not called"

refused "JVM_OnLoad returns JNI_ERR" 'libonloaderr\.so' 'JNI_ERR|returned' "-agentpath:$SHIM=legacy=$AGENTS/libonloaderr.so:zz"
expect_grep "$WORK/out" '^onloaderr: JVM_OnLoad called options=\[zz\], returning JNI_ERR$' "onloaderr: JVM_OnLoad ran first"

refused "NotifyEvent never set" 'libnonotify\.so' 'NotifyEvent' "-agentpath:$SHIM=legacy=$AGENTS/libnonotify.so"
expect_grep "$WORK/out" '^nonotify: enable JVM_INIT_DONE rc=0' "nonotify: its JVM_OnLoad ran"

refused "undefined symbol" 'libunresolved\.so' 'jvmpishim_test_no_such_symbol' "-agentpath:$SHIM=legacy=$AGENTS/libunresolved.so"
expect_nogrep "$WORK/out" 'unresolved: FAIL' "unresolved: JVM_OnLoad never ran"

# The same errors through -Xrun.
export LD_LIBRARY_PATH=$(dirname "$SHIM")
refused "-Xrun unknown option" "bogus" 'unknown' "-Xrunjvmpishim:bogus,legacy=$A"
refused "-Xrun no JVM_OnLoad" 'libnoonload\.so' 'JVM_OnLoad' "-Xrunjvmpishim:legacy=$AGENTS/libnoonload.so"
unset LD_LIBRARY_PATH

# help: prints the grammar, the application does not run.
echo "--- help"
run_java "-agentpath:$SHIM=help" -cp "$CLASSES" Hello
if cat "$WORK/out" "$WORK/err" | grep -q 'legacy='; then ok "help prints the grammar (legacy=)"; else bad "help printed no grammar"; show; fi
if cat "$WORK/out" "$WORK/err" | grep -q 'log='; then ok "help mentions log="; else bad "help does not mention log="; fi
expect_nogrep "$WORK/out" '^hello$' "help: application did not run"
if [ "$RC" -lt 124 ]; then ok "help: rc=$RC (no crash or timeout)"; else bad "help: rc=$RC"; fi

finish
