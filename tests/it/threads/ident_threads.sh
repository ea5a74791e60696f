#!/bin/bash
# ident_threads.sh — thread identity through the ident_threads agent
# (legacy-agents/ident_threads.c) against ground truth printed by tests/java/IdentThreads.java:
# 20 workers in ThreadGroup "identGroup" (parent "main") each get exactly one THREAD_START,
# on their own thread, with the names Java reports, before their THREAD_END (which carries
# the same payload) and before any event of theirs (CLASS_LOAD of IdentThreads$WNN on that
# worker); the start-up replay (flag 0, before JVM_INIT_DONE, on main) names main, Reference
# Handler, Finalizer and Signal Dispatcher; GetThreadObject(env) == thread_id;
# RequestEvent(THREAD_START, main's id) gives a REQUESTED event named main; bad ids post
# nothing. The agent checks the per-event rules itself and prints FAIL lines.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
K=20

run_java "$(shim_arg ident_threads)" -cp "$CLASSES" IdentThreads $K
o=$WORK/out
expect_rc 0
expect_grep "$o" "^IdentThreads: done k=$K\$" "workload finished"
expect_nogrep "$o" '^ident_threads: FAIL' "no FAIL from the agent"
expect_grep "$o" '^ident_threads: summary .* fails=0$' "agent counted no failure"
expect_grep "$o" '^ident_threads: summary .* null_env_events=0 ' "no event with a NULL env_id"

# Start-up replay: before JVM_INIT_DONE, with the names Java itself uses.
init=$(grep -n '^ident_threads: JVM_INIT_DONE ' "$o" | head -n1 | cut -d: -f1)
expect_grep "$o" '^ident_threads: JVM_INIT_DONE on=main ' "JVM_INIT_DONE on main"
jm=$(sed -n 's/^IdentThreads: main name=\(.*\) group=\(.*\) parent=\(.*\)$/name=\1 group=\2 parent=\3/p' "$o")
expect_eq "$jm" "name=main group=main parent=system" "Java: main thread's names"
expect_grep "$o" "^ident_threads: THREAD_START replay $jm\$" "replayed THREAD_START for main matches Java ($jm)"
for t in "Reference Handler" "Finalizer" "Signal Dispatcher"; do
  expect_grep "$o" "^ident_threads: THREAD_START replay name=$t group=system parent=NULL\$" \
    "replayed THREAD_START: $t in group system, parent NULL"
done
last_replay=$(grep -n '^ident_threads: THREAD_START replay ' "$o" | tail -n1 | cut -d: -f1)
first_req=$(grep -n '^ident_threads: requested THREAD_START ' "$o" | head -n1 | cut -d: -f1)
if [ -n "$init" ] && [ -n "$last_replay" ] && [ "$last_replay" -lt "$init" ]; then
  ok "all replayed THREAD_STARTs before JVM_INIT_DONE"
else bad "replay line $last_replay, JVM_INIT_DONE line $init"; fi
if [ -n "$first_req" ] && [ "$first_req" -gt "$init" ]; then
  ok "no REQUESTED THREAD_START in the start-up replay"
else bad "a REQUESTED THREAD_START at line $first_req, JVM_INIT_DONE at $init"; fi
expect_grep "$o" '^ident_threads: GetThreadObject\(main\)==thread_id yes; GetThreadObject\(NULL\)=\(nil\)$' \
  "GetThreadObject(main env) == main's thread_id; NULL env -> NULL"

# Workers: Java's view == the agent's, one START, START before END, class load on the worker.
n=$(grep -c '^IdentThreads: worker ' "$o")
expect_eq "$n" "$K" "workers that reported from Java"
wrong=""
while read -r line; do
  desc=${line#IdentThreads: worker }
  name=$(echo "$desc" | sed 's/^name=\([^ ]*\) .*/\1/')
  num=${name#ident-worker-}
  c=$(grep -cxF "ident_threads: THREAD_START live $desc" "$o")
  s=$(grep -nxF "ident_threads: THREAD_START live $desc" "$o" | head -n1 | cut -d: -f1)
  e=$(grep -nxF "ident_threads: THREAD_END name=$name start_name=$name" "$o" | head -n1 | cut -d: -f1)
  ce=$(grep -cxF "ident_threads: THREAD_END name=$name start_name=$name" "$o")
  cl=$(grep -cxF "ident_threads: CLASS_LOAD IdentThreads\$W$num on=$name" "$o")
  [ "$c" = 1 ] || wrong="$wrong $name:starts=$c"
  [ "$ce" = 1 ] || wrong="$wrong $name:ends=$ce"
  [ -n "$s" ] && [ -n "$e" ] && [ "$s" -lt "$e" ] || wrong="$wrong $name:start@$s,end@$e"
  [ "$cl" = 1 ] || wrong="$wrong $name:classload-on-worker=$cl"
done < <(grep '^IdentThreads: worker ' "$o")
if [ -z "$wrong" ]; then
  ok "each worker: one live THREAD_START with Java's name/group/parent, one THREAD_END after it, its CLASS_LOAD on itself"
else bad "workers:$wrong"; fi
expect_count "$o" '^ident_threads: THREAD_START live name=ident-worker-[0-9]+ group=identGroup parent=main$' $K \
  "$K worker THREAD_STARTs in identGroup under main"
expect_grep "$o" "^ident_threads: workers started=$K ended=$K in_identGroup_under_main=$K\$" "agent table: all workers started and ended"

# RequestEvent(THREAD_START).
for w in initdone late; do
  expect_grep "$o" "^ident_threads: request main@$w rc=0 events=1 name=main env_ok=yes id_ok=yes on_caller=yes\$" \
    "RequestEvent(THREAD_START, main id) at $w: one REQUESTED event for main, on the caller"
done
expect_grep "$o" '^ident_threads: requested THREAD_START name=main group=main parent=system same_thread=yes$' \
  "the requested event has main's names"
for w in garbage NULL class-id 'dead:ident-worker-[0-9]+'; do
  expect_grep "$o" "^ident_threads: request $w rc=-1 events=0\$" "RequestEvent(THREAD_START, $w id): JVMPI_FAIL, nothing posted"
done
expect_grep "$o" '^ident_threads: GetThreadObject\(dead worker env\) = NULL' "GetThreadObject of an ended thread's env: NULL"
finish
