#!/bin/bash
# load_basic.sh — a legacy agent loaded through -agentpath: its option string arrives verbatim
# (NULL without ':', "" with a bare ':'), JNI and JVMPI GetEnv work inside JVM_OnLoad, the
# interface reports version 0x10000003 for all three version requests, JVM_INIT_DONE and
# JVM_SHUT_DOWN arrive exactly once, in that order, on the current thread, and HotSpot's own
# "JVMPI ... no longer supported" message never appears.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

# expect_line FILE TEXT — FILE has a line that is exactly TEXT.
expect_line() {
  if grep -Fxq -- "$2" "$1"; then ok "$(basename "$1") has line '$2'"
  else bad "$(basename "$1") lacks line '$2'"; show "$1"; fi
}
# line_no FILE ERE — number of the first line matching ERE (0 if none).
line_no() { local n; n=$(grep -nE -- "$2" "$1" | head -n 1 | cut -d: -f1); echo "${n:-0}"; }

# check_run OPTIONS_LINE — everything a normal lifecycle run with Hello must show.
check_run() {
  expect_rc 0
  expect_line "$WORK/out" "$1"
  expect_line "$WORK/out" "hello"
  expect_line "$WORK/out" "lifecycle: jni_getenv=0"
  expect_line "$WORK/out" "lifecycle: findclass java/lang/String ok"
  local v
  for v in JVMPI_VERSION_1 JVMPI_VERSION_1_1 JVMPI_VERSION_1_2; do
    expect_grep "$WORK/out" "^lifecycle: getenv $v rc=0 version=0x10000003( |$)" "GetEnv($v) OK, version 0x10000003"
  done
  for v in JVM_INIT_DONE JVM_SHUT_DOWN DATA_DUMP_REQUEST DATA_RESET_REQUEST; do
    expect_line "$WORK/out" "lifecycle: enable $v rc=0"
  done
  expect_count "$WORK/out" '^lifecycle: event JVM_INIT_DONE ' 1 "JVM_INIT_DONE once"
  expect_count "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ' 1 "JVM_SHUT_DOWN once"
  expect_count "$WORK/out" '^lifecycle: event ' 2 "no other events"
  expect_grep "$WORK/out" '^lifecycle: event JVM_INIT_DONE seq=1 env=0x[0-9a-f]+ current=yes$' "JVM_INIT_DONE first, env is the current thread"
  expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=2 env=0x[0-9a-f]+ current=yes$' "JVM_SHUT_DOWN second, env is the current thread"
  local i h s o
  o=$(line_no "$WORK/out" '^lifecycle: JVM_OnLoad returns JNI_OK$')
  i=$(line_no "$WORK/out" '^lifecycle: event JVM_INIT_DONE ')
  h=$(line_no "$WORK/out" '^hello$')
  s=$(line_no "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN ')
  if [ "$o" -gt 0 ] && [ "$o" -lt "$i" ] && [ "$i" -lt "$h" ] && [ "$h" -lt "$s" ]; then
    ok "order: JVM_OnLoad < JVM_INIT_DONE < main < JVM_SHUT_DOWN"
  else
    bad "order: JVM_OnLoad@$o JVM_INIT_DONE@$i hello@$h JVM_SHUT_DOWN@$s"; show
  fi
  expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"
  expect_nogrep "$WORK/out" 'no longer supported' "no 'JVMPI ... no longer supported' on stdout"
  expect_nogrep "$WORK/err" 'no longer supported' "no 'JVMPI ... no longer supported' on stderr"
  expect_nogrep "$WORK/err" 'jvmpishim: (error|warning)' "no shim error or warning"
}

# 1. Option string with commas, '=', ':', an empty item, a second "legacy=", a space.
opts='a=1,b=x:y=z,,c,legacy=q:r, sp ace'
run_java "$(shim_arg lifecycle "$opts" log=warn)" -cp "$CLASSES" Hello
check_run "lifecycle: options=[$opts]"

# 2. legacy=PATH with no ':' — JVM_OnLoad gets NULL.
run_java "$(shim_arg lifecycle)" -cp "$CLASSES" Hello
check_run "lifecycle: options=NULL"

# 3. legacy=PATH: — JVM_OnLoad gets "".
run_java "-agentpath:$SHIM=legacy=$AGENTS/liblifecycle.so:" -cp "$CLASSES" Hello
check_run "lifecycle: options=[]"

# 4. Non-ASCII (UTF-8) bytes and shell/regex metacharacters, byte for byte.
opts='naïve=é,"q" $x;*[a]\\'
run_java "$(shim_arg lifecycle "$opts")" -cp "$CLASSES" Hello
check_run "lifecycle: options=[$opts]"

finish
