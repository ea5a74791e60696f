#!/bin/bash
# load_cxx.sh — a C++ legacy agent (JVM_OnLoad inside its own extern "C", jvmpi.h included
# normally) loads and gets JVM_INIT_DONE and JVM_SHUT_DOWN.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

if [ ! -f "$AGENTS/libcxx_onload.so" ]; then
  bad "$AGENTS/libcxx_onload.so was not built"
  finish
fi
run_java "-agentpath:$SHIM=legacy=$AGENTS/libcxx_onload.so" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$'
expect_count "$WORK/out" '^cxx_onload: init done$' 1 "init done once"
expect_count "$WORK/out" '^cxx_onload: shut down$' 1 "shut down once"
i=$(grep -n '^cxx_onload: init done$' "$WORK/out" | head -n1 | cut -d: -f1)
s=$(grep -n '^cxx_onload: shut down$' "$WORK/out" | head -n1 | cut -d: -f1)
if [ -n "$i" ] && [ -n "$s" ] && [ "$i" -lt "$s" ]; then ok "init done before shut down"; else bad "order init@$i shut@$s"; fi
expect_nogrep "$WORK/err" 'cxx_onload: .*failed' "no agent error"
finish
