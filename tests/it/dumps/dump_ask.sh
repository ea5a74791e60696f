#!/bin/bash
# dump_ask.sh — a heap analyzer asks about every id of its dumps, and nothing crashes: every
# object a level-0, 1 or 2 dump lists, reachable or not (class objects of every kind among
# them: loaded in 40 loaders, hidden, lambdas, array classes, primitive types, and the Class
# object a failed definition left behind), gets its OBJECT_ALLOC and its OBJECT_DUMP, asked
# from inside the HEAP_DUMP handler and after it, with GC disabled and without. Agent
# legacy-agents/dump_ask.c, workload tests/java/DumpAsk.java (K kept, D dropped, L loaders).
# For each run:
#  - the JVM exits 0 (no crash), the agent reports no FAIL (each answer names the id asked
#    for, OBJECT_ALLOC agrees with the level-0 record and OBJECT_DUMP's record with
#    OBJECT_ALLOC, stamp = 3*serial+1 in every dumped object of the workload's classes);
#  - with no collection during the run (the workload counts them), no request fails but
#    OBJECT_DUMP of array classes' mirrors (no record, warned about once); the few int[]
#    fillers a JDK 17 dump lists, whose place and id the threads' next objects take, are
#    counted apart (at most 32);
#  - per level and phase, against the workload's counts: K DumpAskKept with serials summing
#    to K(K-1)/2, D DumpAskDropped likewise (unreachable, listed all the same), L
#    DumpAskLoadee in L classes (serials 0..L-1), the hidden class's one object (serial 4242),
#    the eight primitive arrays of length 777 with element i = 3i, the one DumpAskKept[] with
#    K elements, lambdas; sizes as OBJECT_ALLOC gave them (24 and 40 bytes with compressed
#    oops, the default; probed from the kept objects' size, not assumed);
#  - levels 1 and 2: every class object's OBJECT_DUMP is held against the class's record in
#    the heap dump: the same super, loader, signers, protection domain, size and
#    interfaces, all the heap dump's constant-pool entries, the workload's statics at level
#    2 (the DumpAskLoadee classes of the dropped loaders, which the dump's walk does not
#    reach, among them).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=240
K=3000 DR=5000 L=40
HEAPOPTS="-Xms384m -Xmn256m"
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9,-]*\).*/\1/p"; }

for run in "levels=012" "levels=02,nodisable,after"; do
  t=$run
  # shellcheck disable=SC2086 # HEAPOPTS is a list of options
  run_java $HEAPOPTS "$(shim_arg dump_ask "$run")" -cp "$CLASSES" DumpAsk $K $DR $L
  o=$WORK/out e=$WORK/err
  cp "$o" "$WORK/out.${run//[,=]/_}"; cp "$e" "$WORK/err.${run//[,=]/_}"
  expect_rc 0
  expect_nogrep "$e" 'SIGSEGV|SIGBUS|hs_err|fatal error|Internal Error|jvmpishim: error' "[$t] no crash, no shim error"
  expect_grep "$o" '^DumpAsk: gcs_before=[0-9]+ gcs_after=[0-9]+ done=ok ' "[$t] the workload saw the agent finish"
  expect_grep "$o" '^DumpAsk: linkage_error=yes$' "[$t] the failed definition failed (its Class object is in the heap)"
  expect_nogrep "$o" '^dump_ask: FAIL' "[$t] no FAIL from the agent"
  expect_grep "$o" '^dump_ask: done fails=0$' "[$t] the agent ended with no failure"
  w=$(grep '^DumpAsk: gcs_before=' "$o")
  nogc=no; [ -n "$w" ] && [ "$(field "$w" gcs_before)" = "$(field "$w" gcs_after)" ] && nogc=yes
  echo "     no collection while the agent asked: $nogc"
  expect_count "$e" 'no dump record \(an array class' 1 "[$t] OBJECT_DUMP of array classes' mirrors warned about once"
  levels=${run#levels=}; levels=${levels%%,*}
  phases="inside after"; [[ "$run" == *after* ]] && phases=after
  for ((i = 0; i < ${#levels}; i++)); do
    lv=${levels:$i:1}
    expect_grep "$o" "^dump_ask: dump level=$lv ids=[1-9][0-9]* " "[$t] level-$lv dump listed ids"
    for ph in $phases; do
      p="[$t, level $lv, $ph]"
      a=$(grep "^dump_ask: ask level=$lv phase=$ph " "$o")
      echo "     $a"
      [ -n "$a" ] || { bad "$p no answers"; continue; }
      expect_eq "$(field "$a" alloc_ok)" "$(field "$a" ids)" "$p OBJECT_ALLOC answered for every id"
      if [ $nogc = yes ]; then
        expect_eq "$(field "$a" dump_fail)" 0 "$p no OBJECT_DUMP failed but for array classes"
      fi
      # Where the JVM makes each thread's allocation buffer walkable with an int[] filler for
      # a heap walk (JDK 17), the dump lists it and the thread's next object takes its place
      # and its id (as its address on HotSpot): one per thread at most.
      rp=$(field "$a" replaced)
      [ "${rp:-x}" -le 32 ] 2>/dev/null && ok "$p ids of fillers another object took since: $rp (at most 32)" || bad "$p replaced fillers: ${rp:-?}"
      [ "$(field "$a" class_dumps)" -gt 0 ] && ok "$p class dumps: $(field "$a" class_dumps), Class instances: $(field "$a" class_instances)" || bad "$p no class dump"
      # Levels 1 and 2: each class's OBJECT_DUMP held against its record in the dump (the
      # agent FAILs a mismatch), every one: the dump writes the constant pool, signers and
      # protection domain of the classes its walk did not reach too (none unreached here).
      if [ "$lv" != 0 ]; then
        expect_eq "$(field "$a" class_compared)/$(field "$a" class_unreached)" "$(field "$a" class_dumps)/0" "$p class dumps compared with the heap dump's records (compared/without constant pool, signers nor protection domain)"
      fi
      c=$(grep "^dump_ask: class level=$lv phase=$ph name=DumpAskKept " "$o")
      expect_eq "$(field "$c" objects)/$(field "$c" dumped)/$(field "$c" serial_sum)" "$K/$K/$((K * (K - 1) / 2))" "$p DumpAskKept objects/dumped/serial sum"
      ks=$(field "$c" minsize)
      expect_eq "$(field "$c" maxsize)" "$ks" "$p every DumpAskKept the same size ($ks)"
      c=$(grep "^dump_ask: class level=$lv phase=$ph name=DumpAskDropped " "$o")
      if [ $nogc = yes ]; then
        expect_eq "$(field "$c" objects)/$(field "$c" dumped)/$(field "$c" serial_sum)" "$DR/$DR/$((DR * (DR - 1) / 2))" "$p DumpAskDropped (unreachable) objects/dumped/serial sum"
        [ "$(field "$c" minsize)" -gt "$ks" ] && ok "$p a DumpAskDropped (two more fields) is larger than a DumpAskKept" || bad "$p DumpAskDropped size $(field "$c" minsize), DumpAskKept $ks"
      fi
      c=$(grep "^dump_ask: class level=$lv phase=$ph name=DumpAskLoadee " "$o")
      if [ $nogc = yes ]; then
        expect_eq "$(field "$c" objects)/$(field "$c" classes)/$(field "$c" serial_sum)" "$L/$L/$((L * (L - 1) / 2))" "$p DumpAskLoadee objects/classes (one per loader)/serial sum"
      else
        [ "$(field "$c" objects)" -ge $((L / 2)) ] && ok "$p DumpAskLoadee: at least the $((L / 2)) kept" || bad "$p DumpAskLoadee: $c"
      fi
      c=$(grep "^dump_ask: class level=$lv phase=$ph name=DumpAskHidden " "$o")
      expect_eq "$(field "$c" objects)/$(field "$c" dumped)/$(field "$c" serial_sum)" "1/1/4242" "$p the hidden class's object"
      c=$(grep "^dump_ask: markers level=$lv phase=$ph " "$o")
      expect_eq "$(field "$c" types)/$(field "$c" bad)" "4,5,6,7,8,9,10,11/0" "$p the eight primitive arrays of length 777, element by element"
      c=$(grep "^dump_ask: keep level=$lv phase=$ph " "$o")
      expect_eq "$(field "$c" arrays)/$(field "$c" elements)" "1/$K" "$p the DumpAskKept[] and its elements"
      c=$(grep "^dump_ask: lambdas level=$lv phase=$ph " "$o")
      [ "$(field "$c" objects)" -ge 2 ] && ok "$p lambdas (hidden classes): $(field "$c" objects) objects" || bad "$p lambdas: $c"
    done
  done
done
finish
