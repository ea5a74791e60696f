#!/bin/bash
# dump_storm.sh — a heap analyzer that dumps and asks about the ids of its dumps while 32
# threads load classes, allocate, contend and come and go never crashes the JVM. Agent
# legacy-agents/dump_ask.c with option storm (it starts one second after JVM_INIT_DONE, with
# no signal from the workload: DisableGC, a level-0 then a level-2 dump, and OBJECT_ALLOC and
# OBJECT_DUMP for 4 000 ids of each, spread over the dump, inside the HEAP_DUMP handler and
# after it), workload tests/java/LoadStorm.java (32 threads for 8 s). Three runs, since what
# this guards against came in most runs but not in all: with the default CDS archive, a
# dormant archived subgraph's head (listed by the dump, referenced by the id index) led the
# collector's marking into objects of a class never loaded, SIGSEGV in
# ClassLoaderData::oops_do (5 runs in 6 on JDK 17 before shim/dumps/archive.c). For each run:
#  - the JVM exits 0, no hs_err, no shim error, the workload's DONE line;
#  - the agent took both dumps and every request it made was answered: its event, or
#    JVMPI_FAIL for an object collected since (the collector keeps running under DisableGC),
#    never a FAIL of the agent's own checks (OBJECT_DUMP of an array class's mirror is
#    JVMPI_FAIL: no record, as dump_ask.sh says); a request the agent's thread makes while
#    the JVM exits fails without a shim error;
#  - where the JVM maps a CDS archive, the shim said it loaded the classes anchoring the
#    archive's subgraphs.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=180
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9,-]*\).*/\1/p"; }

for run in 1 2 3; do
  t="run $run"
  run_java "-XX:ErrorFile=$WORK/hs_err_pid%p.log" "$(shim_arg dump_ask "storm,levels=02,max=4000" log=info)" -cp "$CLASSES" LoadStorm 8 32
  cp "$WORK/out" "$WORK/out.$run"; cp "$WORK/err" "$WORK/err.$run"
  o=$WORK/out e=$WORK/err
  expect_rc 0
  expect_nogrep "$e" 'SIGSEGV|SIGBUS|hs_err|fatal error|Internal Error|jvmpishim: error' "[$t] no crash, no shim error"
  compgen -G "$WORK/hs_err_pid*.log" >/dev/null && bad "[$t] an hs_err file" || ok "[$t] no hs_err file"
  expect_grep "$o" '^LoadStorm: DONE$' "[$t] the workload's DONE line"
  expect_nogrep "$o" '^dump_ask: FAIL' "[$t] no FAIL from the agent"
  for lv in 0 2; do
    expect_grep "$o" "^dump_ask: dump level=$lv ids=[1-9][0-9]* " "[$t] a level-$lv dump listing ids"
    a=$(grep -m1 "^dump_ask: ask level=$lv phase=inside " "$o")
    if [ -z "$a" ]; then
      bad "[$t] no answers to the level-$lv requests inside the handler"
      continue
    fi
    echo "     $a"
    ids=$(field "$a" ids) ao=$(field "$a" alloc_ok) af=$(field "$a" alloc_fail)
    do_=$(field "$a" dump_ok) df=$(field "$a" dump_fail) nr=$(field "$a" class_norecord)
    # OBJECT_DUMP of an array class's mirror: JVMPI_FAIL, no record (one warning; dump_ask.sh)
    expect_eq "$((ao + af))/$((do_ + df + nr))" "$ids/$ids" "[$t, level $lv] OBJECT_ALLOC and OBJECT_DUMP answered for every id asked"
    [ "$ao" -gt 0 ] && [ "$do_" -gt 0 ] && ok "[$t, level $lv] objects answered: $ao OBJECT_ALLOC, $do_ OBJECT_DUMP" ||
      bad "[$t, level $lv] no object answered"
  done
  if grep -q 'dumps: no CDS archive mapped' "$e"; then
    ok "[$t] no CDS archive in this JVM: nothing to load"
  else
    expect_grep "$e" 'dumps: [1-9][0-9]* classes anchoring the CDS archive.s heap subgraphs loaded' "[$t] the CDS archive's subgraph classes loaded before the agent ran"
  fi
done
finish
