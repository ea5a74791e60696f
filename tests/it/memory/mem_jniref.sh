#!/bin/bash
# mem_jniref.sh — JNI_GLOBALREF_ALLOC/FREE, JNI_WEAK_GLOBALREF_ALLOC/FREE and JNI GetJavaVM
# through the mem_jniref agent (legacy-agents/mem_jniref.c; workload tests/java/MemRefs.java,
# which makes the JDK's libnet cache classes in global references).
#  - In its JVM_INIT_DONE handler the agent makes 10 global and 10 weak global references
#    to 10 Strings and deletes them, through the JNIEnv of event->env_id: each call posts
#    exactly one event of its type on that thread before returning, ref_id = the reference,
#    obj_id = jobject2jobjectID of the String.
#  - With the four events disabled, references post nothing.
#  - The shim's own references (its class and thread tables: hundreds, made while the events
#    are enabled) are not reported: JDK libraries make a few, so only a small bound is
#    asserted for the events the agent did not cause; libnet's references are reported.
#  - JNI GetJavaVM from the agent returns a JavaVM whose GetEnv(JVMPI_VERSION_1) succeeds
#    with the agent's own interface pointer (and GetEnv(JNI_VERSION_1_2) the caller's env).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40
o=$WORK/out

run_java "$(shim_arg mem_jniref)" -cp "$CLASSES" MemRefs
expect_rc 0
expect_grep "$o" '^MemRefs: done$' "workload finished"
expect_nogrep "$o" '^mem_jniref: FAIL' "no violation reported by the agent"
expect_grep "$o" '^mem_jniref: shutdown .* fails=0$' "agent counted no violation"
for t in GLOBALREF_ALLOC GLOBALREF_FREE WEAK_GLOBALREF_ALLOC WEAK_GLOBALREF_FREE; do
  expect_grep "$o" "^mem_jniref: ours $t made=10 events=10 matched=10\$" "$t: 10 of 10 agent calls posted one event each, fields matched, on the calling thread"
done
expect_grep "$o" '^mem_jniref: disabled events=0$' "events disabled: references post nothing"
expect_grep "$o" '^mem_jniref: getjavavm rc=0 getenv_jvmpi_rc=0 same_interface=1 getenv_jni_rc=0 same_env=1 ' \
  "GetJavaVM: GetEnv(JVMPI_VERSION_1) succeeds with the same interface; GetEnv(JNI) gives the caller's env"
l=$(grep '^mem_jniref: shutdown ' "$o"); echo "     $l"
classes=$(echo "$l" | sed -n 's/.* classes=\([0-9]*\).*/\1/p')
grep '^mem_jniref: foreign ' "$o" | sed 's/^/     /'
ga=$(sed -n 's/^mem_jniref: foreign GLOBALREF_ALLOC=//p' "$o")
wa=$(sed -n 's/^mem_jniref: foreign WEAK_GLOBALREF_ALLOC=//p' "$o")
if [ -n "$classes" ] && [ "$classes" -gt 200 ] && [ -n "$wa" ] && [ "$wa" -lt 20 ] && [ "$ga" -lt 20 ]; then
  ok "shim-internal references not reported: $ga global / $wa weak allocs not made by the agent, while the shim tracked $classes classes"
else bad "references not made by the agent: global $ga, weak $wa (classes $classes): the shim's own references leak into the events?"; fi
if [ -n "$ga" ] && [ "$ga" -ge 1 ]; then ok "JDK library references (libnet) reported: $ga"; else bad "no JNI_GLOBALREF_ALLOC from JDK libraries (libnet)"; fi
expect_grep "$o" '^mem_jniref: init_done foreign_before GLOBALREF_ALLOC=0 WEAK_GLOBALREF_ALLOC=0 ' "no reference event before JVM_INIT_DONE (the shim's start-up references are its own)"
finish
