#!/bin/bash
# stress.sh — 32 threads for STRESS_SECONDS (default 60) with every event on, checked live.
#
# The workload tests/java/Stress.java runs 32 worker threads that call (recursion,
# exceptions), allocate, contend on shared locks and wait, plus a thread that keeps starting
# short-lived threads and one that defines a class in a fresh class loader again and again
# and lets the collector unload it. The agent legacy-agents/checker.c enables every event the
# shim delivers except INSTRUCTION_START and checks each one as it arrives (ids defined
# before use, entries and exits balanced per thread and 0 at THREAD_END, OBJECT_FREE only
# for live ids and inside GC_START/GC_FINISH, brackets balanced and not nested, no event
# after JVM_SHUT_DOWN, none of a type it had disabled beyond the one delivery per thread
# that was already in flight; a system thread of the agent disables and re-enables ten types
# in turn, and takes call traces of live threads, whose every frame must name a method a
# CLASS_LOAD listed). The test sends SIGQUIT three times for DATA_DUMP_REQUEST/RESET_REQUEST.
#
# Checks: exit 0 under the timeout, no hs_err file, the workload ran to its end with all its
# threads, 0 violations, a nonzero count for every event type that can occur (OBJECT_MOVE
# and ARENA_DELETE never do: the checker counts any as a violation), and the resident set
# size bounded: with the Java heap fixed and pre-touched, the largest RSS of the last third
# of the run may exceed the largest of its second sixth by at most RSS_GROWTH_MB (64), while
# hundreds of classes load and unload and thousands of threads come and go.
# With JVMPI_TEST_RECORD=1 (lib.sh) the run is recorded and `jvmpitrace check` holds the
# recording to the contract as well; a second of this run records about 300 MB, so give a
# short STRESS_SECONDS (5 records some 1.5 GB, which check reads in a few minutes).
source "$ROOT/tests/it/lib.sh"
SECS=${STRESS_SECONDS:-60}
THREADS=32
RSS_GROWTH_MB=${RSS_GROWTH_MB:-64}
o=$WORK/out e=$WORK/err

rm -f "$WORK"/hs_err_pid*.log
# shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
timeout -k 5 $((SECS + 240)) "$JAVA" -Xshare:auto ${JVMPI_TEST_JAVA_OPTS:-} -Xms128m -Xmx128m \
  -XX:+AlwaysPreTouch "$(shim_arg checker)" -cp "$CLASSES" Stress "$SECS" $THREADS >"$o" 2>"$e" &
tpid=$!
jpid=""
for _ in $(seq 1 200); do
  jpid=$(pgrep -P $tpid java | head -n1)
  [ -n "$jpid" ] && break
  sleep 0.1
done
# SIGQUIT once the workload runs (its first sample), then twice more, spread over the run.
sent=0
for k in 1 2 3; do
  while ! grep -q "^stress: sample t=$(( k * SECS / 4 > 0 ? k * SECS / 4 : 1 )) " "$o" 2>/dev/null; do
    kill -0 $tpid 2>/dev/null || break 2
    sleep 0.5
  done
  [ -n "$jpid" ] && kill -QUIT "$jpid" 2>/dev/null && sent=$((sent + 1))
done
wait $tpid
RC=$?
echo "+ java ... Stress $SECS $THREADS (checker) -> rc=$RC, SIGQUIT sent $sent times"

expect_rc 0
if ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1; then bad "the VM crashed (hs_err file)"; else ok "no hs_err file"; fi
expect_grep "$o" "^stress: done threads=$THREADS seconds=$SECS " "the workload ran its $SECS s with $THREADS threads to the end"
expect_nogrep "$o" '^checker: FAIL' "the checker could enable every event and start its threads"
expect_grep "$o" '^checker: violations=0$' "0 violations"
expect_nogrep "$o" '^checker: VIOLATION' "no VIOLATION line"

count() { sed -n "s/^checker: count $1 checked=\\([0-9]*\\) .*/\\1/p" "$o"; }
for t in METHOD_ENTRY METHOD_ENTRY2 METHOD_EXIT OBJECT_ALLOC OBJECT_FREE COMPILED_METHOD_LOAD \
         COMPILED_METHOD_UNLOAD THREAD_START THREAD_END CLASS_LOAD_HOOK JNI_GLOBALREF_ALLOC \
         JNI_GLOBALREF_FREE JNI_WEAK_GLOBALREF_ALLOC JNI_WEAK_GLOBALREF_FREE CLASS_LOAD CLASS_UNLOAD \
         DATA_DUMP_REQUEST DATA_RESET_REQUEST RAW_MONITOR_CONTENDED_ENTER \
         RAW_MONITOR_CONTENDED_ENTERED RAW_MONITOR_CONTENDED_EXIT MONITOR_CONTENDED_ENTER \
         MONITOR_CONTENDED_ENTERED MONITOR_CONTENDED_EXIT MONITOR_WAIT MONITOR_WAITED GC_START \
         GC_FINISH; do
  n=$(count $t)
  if [ -n "$n" ] && [ "$n" -gt 0 ]; then ok "$t checked: $n"; else bad "$t checked: '${n}', expected > 0"; fi
done
for t in JVM_INIT_DONE JVM_SHUT_DOWN ARENA_NEW; do expect_eq "$(count $t)" 1 "$t count"; done
fr=$(sed -n 's/^checker: GetCallTrace traces=[0-9]* frames checked=\([0-9]*\)$/\1/p' "$o")
if [ -n "$fr" ] && [ "$fr" -gt 0 ]; then ok "GetCallTrace frames checked: $fr"; else bad "GetCallTrace frames checked: '$fr'"; fi
for t in OBJECT_MOVE ARENA_DELETE INSTRUCTION_START; do expect_eq "$(count $t)" 0 "$t count"; done
# Entries minus exits is what the threads alive at JVM_SHUT_DOWN are inside of (plus what
# threads running before JVM_INIT_DONE ended with): no event was lost from a thread's tally.
ds=$(sed -n 's/^checker: depth of the live threads=\(-*[0-9]*\) entries-exits=\(-*[0-9]*\)$/\1 \2/p' "$o")
set -- $ds
if [ $# -eq 2 ] && [ "$1" = "$2" ]; then ok "METHOD_ENTRY - METHOD_EXIT = $2 = the depth of the threads alive at JVM_SHUT_DOWN"
else bad "depth of the live threads / entries-exits: '$ds'"; fi
gs=$(count GC_START) gf=$(count GC_FINISH)
expect_eq "$gf" "$gs" "GC_FINISH count (= GC_START)"
# Every thread that started ended, except those alive at the end (threads=N in the tables).
st=$(count THREAD_START) en=$(count THREAD_END)
alive=$(sed -n 's/^checker: tables .* threads=\([0-9]*\) .*/\1/p' "$o")
if [ -n "$alive" ] && [ "$st" -eq $((en + alive)) ]; then ok "THREAD_START $st = THREAD_END $en + $alive alive at JVM_SHUT_DOWN"
else bad "THREAD_START $st, THREAD_END $en, alive '$alive'"; fi

# Activity: classes loaded and unloaded, threads churned.
done_line=$(grep -m1 '^stress: done ' "$o")
val() { echo "$done_line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
loaders=$(val loaders) churned=$(val churned)
if [ -n "$loaders" ] && [ "$loaders" -ge 20 ]; then ok "class loaders defined and dropped: $loaders"; else bad "loaders=$loaders"; fi
if [ -n "$churned" ] && [ "$churned" -ge 20 ]; then ok "short-lived threads started: $churned"; else bad "churned=$churned"; fi
cu=$(count CLASS_UNLOAD)
if [ -n "$cu" ] && [ "$cu" -ge 10 ]; then ok "CLASS_UNLOAD: $cu classes unloaded"; else bad "CLASS_UNLOAD=$cu"; fi

# Memory: RSS samples (kB), one per second.
rss=$(sed -n 's/^stress: sample t=[0-9]* rss_kb=\([0-9]*\) .*/\1/p' "$o")
nr=$(echo "$rss" | grep -c .)
if [ "$nr" -ge 6 ]; then
  mid=$(echo "$rss" | sed -n "$((nr / 6 + 1)),$((nr / 3))p" | sort -n | tail -n1)
  last=$(echo "$rss" | sed -n "$((2 * nr / 3 + 1)),\$p" | sort -n | tail -n1)
  first=$(echo "$rss" | head -n1)
  growth=$(( (last - mid) / 1024 ))
  echo "     RSS: first ${first} kB, max of second sixth ${mid} kB, max of last third ${last} kB ($nr samples)"
  if [ "$growth" -le "$RSS_GROWTH_MB" ]; then ok "RSS growth over the last two thirds: ${growth} MB (<= ${RSS_GROWTH_MB} MB)"
  else bad "RSS grew ${growth} MB over the last two thirds (> ${RSS_GROWTH_MB} MB)"; fi
else
  bad "only $nr RSS samples"
fi

echo "     figures: $done_line"
grep -E '^checker: (tables|toggles|GetCallTrace|ids the agent|start-up ids|count .*(late=[1-9]|after_thread_end=[1-9]|unannounced_objects=[1-9]))' "$o" | sed 's/^/     /'
finish
