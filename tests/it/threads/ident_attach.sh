#!/bin/bash
# ident_attach.sh — a thread-centric agent with OBJECT_ALLOC on, and natives of its own,
# through the ident_attach agent (legacy-agents/ident_attach.c), workload
# tests/java/IdentAttach.java. Twice: without and with METHOD_ENTRY/EXIT (methods=bci then
# wraps natives under a prefix).
#  - IdentAttach's natives are bound to the agent library's Java_IdentAttach_* exports
#    (HotSpot searched -Xrun libraries): no UnsatisfiedLinkError, the agent's string comes back;
#  - 8 native threads that attach at once through JNI AttachCurrentThread with a name and
#    a group each get one THREAD_START with that name, group and parent group (as Java
#    reports them), none nameless, and a THREAD_END; no event of theirs (OBJECT_ALLOC while
#    the JVM builds their Thread object included) comes from an env without THREAD_START.
#  - with method events, GetCallTrace inside each METHOD_ENTRY of an attached thread has the
#    method entered on top, also for the entries made while the JVM built its Thread object
#    (delivered after its THREAD_START, with the trace of when they happened).
#  - A third run (frees) enables OBJECT_FREE too, and the workload, where this JVM still has
#    a security manager, makes garbage and collects it inside each attaching thread's Thread
#    constructor (its checkAccess), before that thread's THREAD_START: no OBJECT_FREE may
#    name an id that no OBJECT_ALLOC announced (the agent keeps an object table).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
N=8

for mode in plain methods frees; do
  opt=""; arg=""
  [ $mode = methods ] && opt=methods
  [ $mode = frees ] && opt=frees && arg=gc
  # shellcheck disable=SC2086 # arg is empty or one word
  run_java "$(shim_arg ident_attach "$opt")" -cp "$CLASSES" IdentAttach $arg
  o=$WORK/out
  cp "$o" "$WORK/out.$mode"; cp "$WORK/err" "$WORK/err.$mode"
  expect_rc 0
  expect_nogrep "$WORK/err" 'UnsatisfiedLinkError' "[$mode] no UnsatisfiedLinkError"
  expect_grep "$o" '^IdentAttach: hello=ident_attach greets IdentAttach$' "[$mode] IdentAttach.hello bound to the agent's Java_IdentAttach_hello"
  expect_grep "$o" "^IdentAttach: attached=$N\$" "[$mode] the agent's native attached $N threads"
  expect_grep "$o" '^IdentAttach: done$' "[$mode] workload finished"
  expect_nogrep "$o" '^ident_attach: FAIL' "[$mode] no FAIL from the agent"
  expect_grep "$o" '^ident_attach: summary events=[0-9]+ unknown_env=0 nameless=0 fails=0$' "[$mode] no event from an unknown env, no nameless THREAD_START"
  for k in $(seq 0 $((N - 1))); do
    truth=$(sed -n "s/^IdentAttach: native thread $k name=\([^ ]*\) group=\([^ ]*\) parent=\([^ ]*\)$/name=\1 group=\2 parent=\3/p" "$o")
    [ -n "$truth" ] || { bad "[$mode] Java printed no truth for native thread $k"; continue; }
    c=$(grep -c "^ident_attach: start $truth\$" "$o")
    if [ "$c" -eq 1 ]; then ok "[$mode] one THREAD_START $truth"; else bad "[$mode] $c THREAD_STARTs '$truth'"; grep "ident_attach: start name=ident-attach-$k " "$o" | sed 's/^/     > /'; fi
  done
  expect_count "$o" '^ident_attach: end name=ident-attach-[0-9]+ ' $N "[$mode] a THREAD_END for each attached thread"
  if [ $mode = frees ]; then
    expect_grep "$o" '^ident_attach: frees=[0-9]+ frees_unknown=0$' "[$mode] no OBJECT_FREE of an id never announced"
    if grep -q '^IdentAttach: gc in constructor installed$' "$o"; then
      expect_grep "$o" "^IdentAttach: garbage rounds=$N\$" "[$mode] each attaching thread collected garbage inside its Thread constructor"
      expect_grep "$o" '^ident_attach: frees=[1-9][0-9]* ' "[$mode] the collections' frees were delivered"
    else
      ok "[$mode] this JVM has no security manager: no code runs inside the attaching threads' constructors"
    fi
  fi
  if [ $mode = methods ]; then
    expect_grep "$o" '^ident_attach: end name=ident-attach-[0-9]+ allocs=[1-9][0-9]* entries=[1-9]' "[$mode] attached threads' allocations and method entries counted under their THREAD_START"
    expect_count "$o" '^ident_attach: end name=ident-attach-[0-9]+ allocs=[0-9]+ entries=[0-9]+ exits=[0-9]+ traced=[1-9]' $N "[$mode] every attached thread traced itself in its METHOD_ENTRYs (no FAIL: the entered method on top)"
  else
    expect_grep "$o" '^ident_attach: end name=ident-attach-[0-9]+ allocs=[1-9]' "[$mode] attached threads' allocations counted under their THREAD_START"
  fi
done
finish
