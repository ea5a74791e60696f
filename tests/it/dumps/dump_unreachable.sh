#!/bin/bash
# dump_unreachable.sh — a heap dump taken at JVM_SHUT_DOWN, after main returned, holds the
# objects the program dropped but no collection freed, as HotSpot's heap walk did (every
# object in the heap, at every level). Agent legacy-agents/exit_census.c (a memory profiler
# that counts the heap by class at exit: a level-0 dump, then RequestEvent(OBJECT_ALLOC) per
# record; or a level-1/2 dump it decodes itself), workload tests/java/ExitCensus.java: K
# ExitCensusKept kept reachable, D ExitCensusDropped dropped (unreachable) before main
# returns, with a young generation (-Xmn) far larger than what it allocates, so that
# normally no collection runs after the drop. The workload prints the collectors' counts
# right after the drop and in a shutdown hook; when they are equal, no collection freed the
# dropped objects. One run per level (0, 1, 2), and one more at level 2 with the agent's
# option track (OBJECT_ALLOC on: it remembers the first object of each class). For each:
#  - the JVM exits 0, the agent reports no FAIL (every request answered, every record one
#    the spec has);
#  - the census counts exactly K ExitCensusKept and, with no collection after the drop,
#    exactly D ExitCensusDropped (after a collection: the kept ones only, said so);
#  - levels 1 and 2: the dump decodes (build/jvmpidump, with the CLASS_LOAD facts the agent
#    wrote) and lists each object once with its fields: serials 0..N-1, next naming the
#    object of the serial before, level 2 also stamp = 3*serial+1 and weight = serial+0.25,
#    tag one String for all; level 1 the references only;
#  - OBJECT_DUMP of a dropped object (the first of the census; with track, the first one
#    allocated: serial 0, next null) is that object's instance record (jvmpidump object),
#    weight = serial + 0.25, and at level 2 the same record as in the heap dump; OBJECT_DUMP
#    of a kept one answers too.
# The no-collection case must have happened in at least one run (else nothing about
# unreachable objects was checked: FAIL).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
D=$ROOT/build/jvmpidump
K=3000 DR=7000
HEAPOPTS="-Xms384m -Xmn256m"
field() { echo "$1" | sed -n "s/.*[ ]$2=\([0-9-]*\).*/\1/p"; }
nogc_runs=0

# check_chain FILE CLASS N LEVEL — the decoded instance records of CLASS: N of them, serials
# 0..N-1 once each, next = the record of serial-1 (0 for serial 0), and their other fields.
check_chain() {
  local f=$1 cls=$2 n=$3 lvl=$4
  awk -v C="$cls" -v N="$n" -v L="$lvl" '
  function bad(m) { nbad++; if (nbad <= 6) print "     BAD " m }
  $1 == "INSTANCE" && $5 == "name=" C {
    cnt++; id = substr($2, 4); nx = $7
    if (L == 2 && C == "ExitCensusKept") {            # next stamp serial
      if (NF != 9) { bad("shape: " $0); next }
      s = substr($9, 3) + 0
      if ($8 != "J:" (3 * s + 1)) bad("serial " s " stamp " $8)
    } else if (L == 2) {                              # next tag weight serial
      if (NF != 10) { bad("shape: " $0); next }
      s = substr($10, 3) + 0
      if ($9 != "D:" sprintf("%g", s + 0.25)) bad("serial " s " weight " $9)
      tags[$8] = 1
    } else {                                          # level 1: references only
      s = -1
      if (C == "ExitCensusKept" && NF != 7) bad("level 1 shape: " $0)
      if (C == "ExitCensusDropped" && NF != 8) bad("level 1 shape: " $0)
      if (C == "ExitCensusDropped") tags[$8] = 1
    }
    NEXT[id] = nx; ID[cnt] = id
    if (s >= 0) { if (s in BYS) bad("serial " s " twice"); BYS[s] = id; SER[id] = s }
  }
  END {
    if (cnt != N) bad(cnt + 0 " records, want " N)
    if (C == "ExitCensusDropped" && length(tags) != 1) bad(length(tags) " different tags")
    if (L == 2) {
      for (s = 0; s < N; s++) {
        if (!(s in BYS)) { bad("no serial " s); continue }
        want = s == 0 ? "L:0" : "L:" BYS[s - 1]
        if (NEXT[BYS[s]] != want) bad("serial " s " next " NEXT[BYS[s]] ", want " want)
      }
    } else {
      # level 1: the next references form one chain over all N records
      for (i = 1; i <= cnt; i++) { t = substr(NEXT[ID[i]], 3); if (t != "0") { if (t in HAS) bad("two records name " t); HAS[t] = 1 } else nulls++ }
      for (i = 1; i <= cnt; i++) if (substr(NEXT[ID[i]], 3) != "0" && !(substr(NEXT[ID[i]], 3) in NEXT)) bad("next " NEXT[ID[i]] " is no record of " C)
      if (nulls != 1) bad(nulls + 0 " records with next null, want 1")
    }
    print "records=" cnt + 0 " bad=" nbad + 0
  }' "$f"
}

for run in 0 1 2 2,track; do
  lvl=${run%%,*}; opt=""; t="level $lvl"
  if [ "$run" != "$lvl" ]; then opt=",${run#*,}"; t="level $lvl, ${run#*,}"; fi
  rm -f "$WORK"/*.dump "$WORK/classes.txt"
  # shellcheck disable=SC2086 # HEAPOPTS is a list of options
  run_java $HEAPOPTS "$(shim_arg exit_census "level=$lvl,dir=$WORK$opt")" -cp "$CLASSES" ExitCensus $K $DR
  o=$WORK/out
  cp "$o" "$WORK/out.$run"; cp "$WORK/err" "$WORK/err.$run"
  expect_rc 0
  expect_grep "$o" '^ExitCensus: done$' "[$t] workload finished"
  expect_nogrep "$o" '^exit_census: FAIL' "[$t] no FAIL from the agent"
  expect_grep "$o" '^exit_census: done fails=0$' "[$t] the agent's census ran at JVM_SHUT_DOWN"
  w=$(grep '^ExitCensus: kept=' "$o"); g1=$(field "$w" gcs_after_drop)
  g2=$(sed -n 's/^ExitCensus: gcs_at_exit=\([0-9]*\)$/\1/p' "$o")
  nogc=no
  if [ -n "$g1" ] && [ "$g1" = "$g2" ]; then nogc=yes; nogc_runs=$((nogc_runs + 1)); fi
  echo "     collections: $(field "$w" gcs_start) at start, $g1 after the drop, ${g2:-?} at exit: no collection after the drop: $nogc"
  kc=$(sed -n 's/^exit_census: census ExitCensusKept count=\([0-9]*\) .*/\1/p' "$o")
  dc=$(sed -n 's/^exit_census: census ExitCensusDropped count=\([0-9]*\) .*/\1/p' "$o")
  expect_eq "${kc:-none}" "$K" "[$t] census: ExitCensusKept objects (reachable)"
  if [ $nogc = yes ]; then
    expect_eq "${dc:-none}" "$DR" "[$t] census: ExitCensusDropped objects (unreachable, not collected)"
  else
    echo "     [$t] a collection ran after the drop: the dropped objects may be gone; only the kept ones checked (census of dropped: ${dc:-none})"
  fi
  if [ "$lvl" != 0 ]; then
    dec=$WORK/dec.$run
    if [ -s "$WORK/heap$lvl.dump" ]; then
      "$D" --ids="${ID_BYTES:-8}" heap "$lvl" "$WORK/heap$lvl.dump" "$WORK/classes.txt" >"$dec" 2>&1
      expect_grep "$dec" "^OK [0-9]+ records, $(stat -c %s "$WORK/heap$lvl.dump") bytes\$" "[$t] the dump decodes whole"
    else
      bad "[$t] heap$lvl.dump not written"; : >"$dec"
    fi
    r=$(check_chain "$dec" ExitCensusKept $K "$lvl"); echo "$r" | grep BAD
    expect_eq "$(echo "$r" | tail -n 1)" "records=$K bad=0" "[$t] ExitCensusKept records with their fields"
    if [ $nogc = yes ]; then
      r=$(check_chain "$dec" ExitCensusDropped $DR "$lvl"); echo "$r" | grep BAD
      expect_eq "$(echo "$r" | tail -n 1)" "records=$DR bad=0" "[$t] ExitCensusDropped records (unreachable) with their fields"
    fi
  fi
  expect_grep "$o" '^exit_census: object_dump ExitCensusKept id=0x[0-9a-f]+ rc=0 bytes=[1-9]' "[$t] OBJECT_DUMP of a kept object answered"
  [ $nogc = yes ] || continue
  od=$(grep '^exit_census: object_dump ExitCensusDropped ' "$o")
  if [ -z "$od" ]; then
    bad "[$t] no dropped object known to ask OBJECT_DUMP for (none in the dump${opt:+ nor tracked})"
    continue
  fi
  echo "     $od"
  expect_grep <(echo "$od") ' rc=0 bytes=[1-9][0-9]* ' "[$t] OBJECT_DUMP of a dropped object answered"
  id=$(echo "$od" | sed -n 's/.* id=\(0x[0-9a-f]*\) .*/\1/p')
  if [ -s "$WORK/obj_ExitCensusDropped.dump" ]; then
    "$D" --ids="${ID_BYTES:-8}" object "$WORK/obj_ExitCensusDropped.dump" "$WORK/classes.txt" >"$WORK/odec.$run" 2>&1
    rec=$(grep '^INSTANCE ' "$WORK/odec.$run")
    echo "     $rec"
    expect_grep "$WORK/odec.$run" "^INSTANCE id=${id:-none} class=0x[0-9a-f]+ bytes=[0-9]+ name=ExitCensusDropped fields: L:(0|0x[0-9a-f]+) L:0x[0-9a-f]+ D:[0-9.]+ I:[0-9]+\$" \
      "[$t] OBJECT_DUMP: the dropped object's instance record, level 2"
    s=$(echo "$rec" | awk '{print substr($NF, 3)}'); wgt=$(echo "$rec" | awk '{print $(NF-1)}')
    expect_eq "$wgt" "D:$(awk -v s="${s:-0}" 'BEGIN { printf "%g", s + 0.25 }')" "[$t] OBJECT_DUMP: weight = serial + 0.25 (serial ${s:-?})"
    if [ -n "$opt" ]; then
      expect_eq "$(echo "$rec" | awk '{print $7, $NF}')" "L:0 I:0" "[$t] OBJECT_DUMP of the first dropped object allocated: serial 0, next null"
    fi
    if [ "$lvl" = 2 ]; then
      expect_eq "$(grep "^INSTANCE id=${id:-none} " "$WORK/dec.$run")" "$rec" "[$t] OBJECT_DUMP's record = the heap dump's record of that object"
    fi
  else
    bad "[$t] no OBJECT_DUMP of a dropped object written"
  fi
done
if [ $nogc_runs -gt 0 ]; then
  ok "$nogc_runs of 4 runs had no collection after the drop (the dropped objects were checked)"
else
  bad "every run had a collection after the drop: nothing about unreachable objects was checked"
fi
finish
