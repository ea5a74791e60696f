#!/bin/bash
# load_xrun.sh — the shim loaded the JDK 1.3 way, -Xrunjvmpishim:..., with libjvmpishim.so
# found on LD_LIBRARY_PATH; and a legacy agent named by a bare name (legacy=lifecycle) found
# as liblifecycle.so on LD_LIBRARY_PATH, with both -agentpath and -Xrun.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

expect_line() {
  if grep -Fxq -- "$2" "$1"; then ok "$(basename "$1") has line '$2'"
  else bad "$(basename "$1") lacks line '$2'"; show "$1"; fi
}
check_run() {
  expect_rc 0
  expect_line "$WORK/out" "$1"
  expect_line "$WORK/out" "hello"
  expect_line "$WORK/out" "lifecycle: jni_getenv=0"
  expect_grep "$WORK/out" '^lifecycle: getenv JVMPI_VERSION_1 rc=0 version=0x10000003( |$)' "GetEnv(JVMPI_VERSION_1) OK"
  expect_grep "$WORK/out" '^lifecycle: event JVM_INIT_DONE seq=1 env=0x[0-9a-f]+ current=yes$' "JVM_INIT_DONE first, current thread"
  expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=2 env=0x[0-9a-f]+ current=yes$' "JVM_SHUT_DOWN second, current thread"
  expect_count "$WORK/out" '^lifecycle: event ' 2 "exactly two events"
  expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"
  expect_nogrep "$WORK/err" 'no longer supported' "no 'JVMPI ... no longer supported'"
}

shimdir=$(dirname "$SHIM")

# 1. -Xrunjvmpishim with a path.
export LD_LIBRARY_PATH=$shimdir
run_java "-Xrunjvmpishim:legacy=$AGENTS/liblifecycle.so:x=1" -cp "$CLASSES" Hello
check_run "lifecycle: options=[x=1]"

# 2. -Xrunjvmpishim with shim options before legacy= and agent options with ',' '=' ':'.
run_java "-Xrunjvmpishim:log=warn,legacy=$AGENTS/liblifecycle.so:a=1,b=c:d" -cp "$CLASSES" Hello
check_run "lifecycle: options=[a=1,b=c:d]"

# 3. Bare agent name through -agentpath, found on LD_LIBRARY_PATH.
export LD_LIBRARY_PATH=$AGENTS
run_java "-agentpath:$SHIM=legacy=lifecycle:y=2" -cp "$CLASSES" Hello
check_run "lifecycle: options=[y=2]"

# 4. Bare agent name through -Xrun (both libraries on LD_LIBRARY_PATH), no agent options.
export LD_LIBRARY_PATH=$shimdir:$AGENTS
run_java "-Xrunjvmpishim:legacy=lifecycle" -cp "$CLASSES" Hello
check_run "lifecycle: options=NULL"
unset LD_LIBRARY_PATH

finish
