#!/bin/bash
# ids_resolve.sh — resolving object ids by the million, as tracers and heap profilers did
# (legacy-agents/ids_tracer.c against tests/java/IdsWork.java). Only correctness is checked
# here; what it costs is measured in bench/ (bench/ids.sh).
#
# 1. "ensure defined" (agent-idioms.md, Tracers): METHOD_ENTRY2 on; for every receiver id not
#    seen before, RequestEvent(OBJECT_ALLOC) at once from the handler, under the agent's lock.
#    8 threads start at once and make As, Bs and Cs, calling touch() twice on each. Checked:
#    each class's distinct touch() receivers = the workload's count, every one answered with
#    its own id and its own class, one size per class, A < B < C; no request failed.
# 2. "dump, then ask about each": a level-0 HEAP_DUMP, then RequestEvent(OBJECT_ALLOC) for every
#    id in it: the answers name exactly the workload's As, Bs and Cs (counts), one size per
#    class, and its K arrays A[2..2K] with sizes in steps of one constant; then
#    RequestEvent(OBJECT_DUMP) for 300 of the As: each one INSTANCE_DUMP record of that id and
#    class A holding a distinct serial below NA.
# 3. bad ids: garbage, freed (the As, dropped and collected) and wrong-kind (CLASS_LOAD with a
#    B's id) ids, 60000 calls: every one refused; one warning per kind, then the count of each
#    kind at shutdown, not a line per call.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
AG="$AGENTS/libids_tracer.so"
o=$WORK/out

# ---- 1. ensure defined ----
run_java "-agentpath:$SHIM=legacy=$AG:ensure" -cp "$CLASSES" IdsWork ensure 8 1500
expect_rc 0
expect_nogrep "$o" '^ids: FAIL' "ensure: no FAIL from the agent"
line=$(grep '^IdsWork: ensure ' "$o")
expect_grep "$o" '^IdsWork: ensure A=[0-9]+ B=[0-9]+ C=[0-9]+$' "ensure: the workload ran"
sizes=""
for c in A B C; do
  n=$(echo "$line" | sed -n "s/.* $c=\([0-9]*\).*/\1/p")
  expect_grep "$o" "^ids: ensure class=IdsWork\\\$$c receivers=$n answered=$n rightclass=$n minsize=[0-9]+ maxsize=[0-9]+\$" \
    "ensure: $n receivers of $c.touch(), each answered with its own id and class $c"
  mn=$(sed -n "s/^ids: ensure class=IdsWork\\\$$c .* minsize=\([0-9]*\) maxsize=\([0-9]*\)\$/\1 \2/p" "$o")
  set -- $mn
  if [ -n "${1:-}" ] && [ "$1" = "$2" ] && [ "$1" -gt 0 ]; then ok "ensure: every $c answered with one size ($1 bytes)"; else bad "ensure: $c sizes '$mn'"; fi
  sizes="$sizes ${1:-0}"
done
set -- $sizes
if [ "$1" -lt "$2" ] && [ "$2" -lt "$3" ]; then ok "ensure: sizes A < B < C ($sizes)"; else bad "ensure: sizes A B C =$sizes"; fi
expect_grep "$o" '^ids: ensure requests=[1-9][0-9]* failed=0 mismatched=0$' "ensure: every request answered, each with the id asked for"
expect_grep "$o" '^ids: shutdown fails=0$' "ensure: agent saw no violation"

# ---- 2. dump, then ask about each ----
NA=20000 NB=5000 NC=2000 K=40
run_java "-agentpath:$SHIM=legacy=$AG:dumpask,objdumps=300" -cp "$CLASSES" IdsWork dumpask $NA $NB $NC $K
expect_rc 0
expect_nogrep "$o" '^ids: FAIL' "dumpask: no FAIL from the agent"
expect_grep "$o" '^IdsWork: done=ok ' "dumpask: the agent finished and signalled the workload"
rec=$(sed -n 's/^ids: dumpask records=\([0-9]*\) answered=\([0-9]*\) failed=\([0-9]*\) mismatched=\([0-9]*\)$/\1 \2 \3 \4/p' "$o")
set -- $rec
if [ -n "${1:-}" ] && [ "$1" -gt $((NA + NB + NC)) ] && [ "$2" -eq $(($1 - $3)) ] && [ "$4" -eq 0 ]; then
  ok "dumpask: $1 ids in the level-0 dump, $2 answered, each with the id asked for ($3 gone before they were asked)"
else bad "dumpask: records/answered/failed/mismatched = '$rec'"; fi
if [ -n "${3:-}" ] && [ "$3" -le $(($1 / 100)) ]; then ok "dumpask: at most 1% of the dump's ids gone before asked ($3)"; else bad "dumpask: $3 requests failed"; fi
sizes=""
for c in A:$NA B:$NB C:$NC; do
  n=${c#*:}; c=${c%%:*}
  expect_grep "$o" "^ids: dumpask class=IdsWork\\\$$c objects=$n minsize=[0-9]+ maxsize=[0-9]+\$" "dumpask: exactly the workload's $n ${c}s answered as $c"
  mn=$(sed -n "s/^ids: dumpask class=IdsWork\\\$$c .* minsize=\([0-9]*\) maxsize=\([0-9]*\)\$/\1 \2/p" "$o")
  set -- $mn
  if [ -n "${1:-}" ] && [ "$1" = "$2" ]; then ok "dumpask: one size for every $c ($1)"; else bad "dumpask: $c sizes '$mn'"; fi
  sizes="$sizes ${1:-0}"
done
set -- $sizes
if [ "$1" -lt "$2" ] && [ "$2" -lt "$3" ]; then ok "dumpask: sizes A < B < C ($sizes), as in ensure"; else bad "dumpask: sizes A B C =$sizes"; fi
arr=$(sed -n 's/^ids: dumpask arrays of=IdsWork\$A count=\([0-9]*\) sizes=\(.*\)$/\1 \2/p' "$o")
echo "$arr" | awk -v k=$K '{ n = split($2, s, ","); d = s[2] - s[1]; okk = ($1 == k && n == k && d > 0)
  for (i = 2; i <= n; i++) if (s[i] - s[i-1] != d) okk = 0; exit okk ? 0 : 1 }' \
  && ok "dumpask: the $K arrays A[2]..A[2K] answered as arrays of A, sizes in equal steps" \
  || bad "dumpask: arrays of A: '$arr'"
expect_grep "$o" "^ids: dumpask objdump asked=300 ok=300 serials_distinct=300 serial_max=[0-9]+\$" \
  "dumpask: 300 OBJECT_DUMPs, each one record of the A asked for, 300 distinct serials"
smax=$(sed -n 's/^ids: dumpask objdump .* serial_max=\([0-9]*\)$/\1/p' "$o")
if [ -n "$smax" ] && [ "$smax" -lt $NA ]; then ok "dumpask: serials below $NA"; else bad "dumpask: serial_max '$smax'"; fi

# ---- 3. bad ids ----
CALLS=60000
run_java "-agentpath:$SHIM=legacy=$AG:badids" -cp "$CLASSES" IdsWork badids 20000 2000 $CALLS
expect_rc 0
expect_nogrep "$o" '^ids: FAIL' "badids: no FAIL from the agent"
expect_grep "$o" "^ids: badids calls=$CALLS refused=$CALLS accepted=0 " "badids: all $CALLS calls with bad ids refused"
expect_count "$WORK/err" 'JVMPI_FAIL$|: NULL$' 3 "badids: one warning line per kind (garbage, wrong kind, dead), not one per call"
expect_grep "$WORK/err" "agent 0: $((CALLS / 2)) calls in all with an id the shim never issued \\(garbage or truncated\\) were refused" "badids: garbage and truncated ids counted ($((CALLS / 2)))"
expect_grep "$WORK/err" "agent 0: $((CALLS / 6)) calls in all with an id of the wrong kind of object were refused" "badids: wrong-kind ids counted ($((CALLS / 6)))"
dead=$(sed -n 's/.*agent 0: \([0-9]*\) calls in all with the id of a dead object were refused/\1/p' "$WORK/err")
if [ -n "$dead" ] && [ "$dead" -ge $((CALLS / 3)) ]; then ok "badids: freed ids counted ($dead >= $((CALLS / 3)))"; else bad "badids: dead count '$dead'"; fi
expect_nogrep "$WORK/err" 'error|ERROR' "badids: no shim error"

finish
