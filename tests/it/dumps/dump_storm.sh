#!/bin/bash
# dump_storm.sh — a heap analyzer that dumps and asks about the ids of its dumps while 32
# threads load classes, allocate, contend and come and go never crashes the JVM. Agent
# legacy-agents/dump_ask.c with option storm (it starts one second after JVM_INIT_DONE, with
# no signal from the workload: DisableGC, a level-0 then a level-2 dump, and OBJECT_ALLOC and
# OBJECT_DUMP for 3 000 ids of each, spread over the dump, inside the HEAP_DUMP handler),
# workload tests/java/LoadStorm.java (32 threads for 10 s), which does not wait for the
# agent: on a loaded machine it may end before the agent is through with its level-2 dump,
# which must then have come in one run of the three at least. Three runs, since what
# this guards against came in most runs but not in all: with the default CDS archive, a
# dormant archived subgraph's head (listed by the dump, referenced by the id index) led the
# collector's marking into objects of a class never loaded, SIGSEGV in
# ClassLoaderData::oops_do (5 runs in 6 on JDK 17 before shim/dumps/archive.c). For each run:
#  - the JVM exits 0, no hs_err, no shim error, the workload's DONE line;
#  - the agent took both dumps and every request it made was answered: its event, or
#    JVMPI_FAIL for an object collected since (the collector keeps running under DisableGC),
#    never a FAIL of the agent's own checks (OBJECT_DUMP of an array class's mirror is
#    JVMPI_FAIL: no record, as dump_ask.sh says; a JDK 17 filler whose id a thread's next
#    object took is counted apart, at most 64); a request the agent's thread makes while
#    the JVM exits fails without a shim error;
#  - where the JVM maps a CDS archive, the shim said it loaded the classes anchoring the
#    archive's subgraphs.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=180
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9,-]*\).*/\1/p"; }

level2_runs=0
for run in 1 2 3; do
  t="run $run"
  run_java "-XX:ErrorFile=$WORK/hs_err_pid%p.log" "$(shim_arg dump_ask "storm,levels=02,max=3000,inside" log=info)" -cp "$CLASSES" LoadStorm 10 32
  cp "$WORK/out" "$WORK/out.$run"; cp "$WORK/err" "$WORK/err.$run"
  o=$WORK/out e=$WORK/err
  expect_rc 0
  expect_nogrep "$e" 'SIGSEGV|SIGBUS|hs_err|fatal error|Internal Error|jvmpishim: error' "[$t] no crash, no shim error"
  compgen -G "$WORK/hs_err_pid*.log" >/dev/null && bad "[$t] an hs_err file" || ok "[$t] no hs_err file"
  expect_grep "$o" '^LoadStorm: DONE$' "[$t] the workload's DONE line"
  expect_nogrep "$o" '^dump_ask: FAIL' "[$t] no FAIL from the agent"
  for lv in 0 2; do
    a=$(grep -m1 "^dump_ask: ask level=$lv phase=inside " "$o")
    if [ $lv = 2 ] && [ -z "$a" ]; then
      # The workload does not wait for the agent: on a loaded machine it may end first.
      echo "     [$t] the workload ended before the agent was through with its level-2 dump"
      continue
    fi
    expect_grep "$o" "^dump_ask: dump level=$lv ids=[1-9][0-9]* " "[$t] a level-$lv dump listing ids"
    if [ -z "$a" ]; then
      bad "[$t] no answers to the level-$lv requests inside the handler"
      continue
    fi
    [ $lv = 2 ] && level2_runs=$((level2_runs + 1))
    echo "     $a"
    ids=$(field "$a" ids) ao=$(field "$a" alloc_ok) af=$(field "$a" alloc_fail)
    do_=$(field "$a" dump_ok) df=$(field "$a" dump_fail) nr=$(field "$a" class_norecord)
    rp=$(field "$a" replaced)
    # OBJECT_DUMP of an array class's mirror: JVMPI_FAIL, no record (one warning; dump_ask.sh).
    # A JDK 17 filler whose place and id a thread's next object took (dump_ask.sh) is counted
    # as replaced, and the agent may then not ask its OBJECT_DUMP: at most that many unasked.
    expect_eq "$((ao + af))" "$ids" "[$t, level $lv] OBJECT_ALLOC answered for every id asked"
    unasked=$((ids - do_ - df - nr))
    [ "$unasked" -ge 0 ] && [ "$unasked" -le "$rp" ] && [ "$rp" -le 64 ] &&
      ok "[$t, level $lv] OBJECT_DUMP answered for every id asked ($nr array-class mirrors without a record, $rp replaced fillers)" ||
      bad "[$t, level $lv] OBJECT_DUMP: ids=$ids ok=$do_ fail=$df norecord=$nr replaced=$rp"
    [ "$ao" -gt 0 ] && [ "$do_" -gt 0 ] && ok "[$t, level $lv] objects answered: $ao OBJECT_ALLOC, $do_ OBJECT_DUMP" ||
      bad "[$t, level $lv] no object answered"
  done
  if grep -q 'dumps: no CDS archive mapped' "$e"; then
    ok "[$t] no CDS archive in this JVM: nothing to load"
  else
    expect_grep "$e" 'dumps: [1-9][0-9]* classes anchoring the CDS archive.s heap subgraphs loaded' "[$t] the CDS archive's subgraph classes loaded before the agent ran"
  fi
done
[ "$level2_runs" -ge 1 ] && ok "level-2 dumps asked about in $level2_runs of 3 runs" ||
  bad "no run got to its level-2 dump before the workload ended"
finish
