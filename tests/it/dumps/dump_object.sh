#!/bin/bash
# dump_object.sh — RequestEvent(OBJECT_DUMP) through the dump_agent agent in "object" mode
# (legacy-agents/dump_agent.c) against tests/java/DumpMarkers.java. The agent takes a
# level-2 heap dump, walks it itself with its CLASS_LOAD facts to find marker 7, marker 0,
# the int[], the Object[] in main's locals, the MARKERS array and the class dumps of
# DumpMarker and DumpMarkers, then requests OBJECT_DUMP for each (GC disabled), writing
# obj_<name>.dump (data, data_len bytes) and heaprec_<name>.bin (the heap dump's record).
# Checked: rc 0 and one OBJECT_DUMP|REQUESTED event each; data_len = the heap record's
# length = the file size; the bytes equal the heap dump's record (also for int.class, a
# primitive mirror, whose record the walk cannot give: an instance of java.lang.Class with
# int.class's id through JNI); each decodes as one
# record with the workload's values (marker 7's fields, the int[] elements, the Object[]
# {marker 0, marker 1, null}, MARKERS = the 50 markers, DumpMarkers' statics); marker 7's
# id equals jobject2jobjectID(DumpMarkers.MARKERS[7]); OBJECT_DUMP with the garbage id
# 0x1234 and with NULL: JVMPI_FAIL, no event, no crash. Runs under the shim option
# checkdumps: no dump is malformed.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40; WAIT=30000
# The i386 JDK runs under qemu-i386 where the kernel cannot execute it, 10-30x slower: its
# dumps get more time (the workload waits for them up to WAIT ms); the checks are the same.
[ "${ID_BYTES:-8}" = 4 ] && { JAVA_TIMEOUT=150; WAIT=120000; }
# A DumpMarker's values: 3 references of ID_BYTES each (ref, s; bref of DumpMarkerBase) and
# z, d, l, i, base: 25 bytes, so 49 with the 8-byte ids of x86-64 and 37 on i386.
MB=$((25 + 3 * ${ID_BYTES:-8}))
D=$ROOT/build/jvmpidump
C=$WORK/classes.txt
N=50

run_java "$(shim_arg dump_agent object checkdumps,log=info)" -cp "$CLASSES" DumpMarkers $WAIT
o=$WORK/out
expect_rc 0
expect_grep "$o" '^DumpMarkers: done=ok ' "agent signalled the workload after its dumps"
expect_nogrep "$o" '^dump: FAIL' "no FAIL from the agent"
expect_grep "$o" '^dump: done fails=0$' "agent finished"
expect_grep "$o" '^dump: request HEAP_DUMP level=2 rc=0 events=1$' "level-2 heap dump taken"
expect_grep "$o" '^dump: walked heap2.dump: ' "agent walked the heap dump with its CLASS_LOAD facts"

cid() { awk -v n="$1" '$1 == "C" && $6 == n { print "0x" $2; exit }' "$C"; }
DM=$(cid DumpMarker); OBJ=$(cid java.lang.Object)
"$D" --ids="${ID_BYTES:-8}" heap 2 "$WORK/heap2.dump" "$C" >"$WORK/dec2" 2>&1
expect_grep "$WORK/dec2" '^OK ' "heap2.dump decodes"
mk() { awk -v k="I:$1" '$1 == "INSTANCE" && $5 == "name=DumpMarker" && $12 == k { print substr($2, 4); exit }' "$WORK/dec2"; }
M0=$(mk 0); M1=$(mk 1); M7=$(mk 7); M8=$(mk 8)
SS=$(awk '$1 == "CLASS" && $5 == "name=DumpMarkers" { print substr($10, 3) }' "$WORK/dec2")
oid() { sed -n "s/^dump: object name=$1 id=\\([^ ]*\\) .*/\\1/p" "$o"; }

for t in marker7 marker0 ints objs markers_array class_DumpMarker class_DumpMarkers int_class; do
  line=$(grep "^dump: object name=$t " "$o")
  dl=$(echo "$line" | sed -n 's/.* data_len=\([0-9]*\) .*/\1/p')
  hl=$(echo "$line" | sed -n 's/.* heap_record_len=\([0-9]*\) .*/\1/p')
  if echo "$line" | grep -q ' rc=0 events=1 ' && [ -n "$dl" ] && [ "$dl" = "$hl" ] && echo "$line" | grep -q ' equal=yes$'; then
    ok "$t: OBJECT_DUMP rc=0, one event, data_len $dl = heap record length, same bytes (agent)"
  else bad "$t: $line"; fi
  expect_grep "$o" "^dump: OBJECT_DUMP file=obj_$t.dump requested=1 on=dump-control data_len=$dl\$" "$t: OBJECT_DUMP|REQUESTED on the requester"
  f=$WORK/obj_$t.dump
  if [ -f "$f" ] && cmp -s "$f" "$WORK/heaprec_$t.bin"; then
    ok "$t: obj_$t.dump equals its record in heap2.dump byte for byte ($(stat -c %s "$f") bytes)"
  else bad "$t: obj_$t.dump differs from / lacks heaprec_$t.bin"; fi
  "$D" --ids="${ID_BYTES:-8}" object "$f" "$C" >"$WORK/dec_$t" 2>&1
  expect_grep "$WORK/dec_$t" "^OK 1 records, $dl bytes\$" "$t: decodes as exactly one record of data_len bytes"
done

expect_eq "$(sed -n 's/^dump: jni marker7=\([^ ]*\) .*/\1/p' "$o")" "$(oid marker7)" "marker 7's id through JNI (jobject2jobjectID)"
expect_eq "$(oid marker7)" "$M7" "marker 7's id in the agent's walk (= the decoder's)"
expect_grep "$WORK/dec_marker7" "^INSTANCE id=$M7 class=$DM bytes=$MB name=DumpMarker fields: L:$M8 L:$SS Z:0 D:7.5 J:7000 I:7\$" \
  "marker 7: ref = marker 8, s = SS, z, d, l, i as set (own fields; the super's follow in the $MB bytes)"
expect_grep "$WORK/dec_marker0" "^INSTANCE id=$M0 class=$DM bytes=$MB name=DumpMarker fields: L:$M1 L:0 Z:1 D:0.5 J:0 I:0\$" "marker 0's fields"
expect_grep "$WORK/dec_ints" "^PRIMARRAY id=$(oid ints) len=8 type=10 elems: I:3 I:1 I:4 I:1 I:5 I:9 I:2 I:6\$" "int[] elements"
expect_grep "$WORK/dec_objs" "^OBJARRAY id=$(oid objs) len=3 elemclass=$OBJ elems: L:$M0 L:$M1 L:0\$" "Object[]: length 3, marker 0, marker 1, null"
want="OBJARRAY id=$(oid markers_array) len=$N elemclass=$DM elems:$(for k in $(seq 0 $((N - 1))); do printf ' L:%s' "$(mk $k)"; done)"
got=$(grep '^OBJARRAY' "$WORK/dec_markers_array")
if [ "$got" = "$want" ]; then ok "MARKERS: length $N, the markers in order"; else bad "MARKERS: '$got' (want length $N, the markers)"; fi
expect_grep "$WORK/dec_class_DumpMarkers" "^CLASS id=$(cid DumpMarkers) super=$OBJ size=[0-9]+ name=DumpMarkers statics: I:$N L:$(oid markers_array) J:-7 L:$SS I:12345\$" "DumpMarkers class dump: statics N, MARKERS, SL, SS, SI"
expect_grep "$WORK/dec_class_DumpMarker" "^CLASS id=$DM super=$(cid DumpMarkerBase) size=[0-9]+ name=DumpMarker statics:\$" "DumpMarker class dump"
expect_eq "$(oid int_class)" "$(sed -n 's/^dump: jni marker7=.* int_class=\([^ ]*\)$/\1/p' "$o")" "int.class: the id OBJECT_DUMP was asked for is Integer.TYPE's through JNI"
expect_grep "$WORK/dec_int_class" "^INSTANCE id=$(oid int_class) class=$(cid java.lang.Class) bytes=[0-9]+ name=java.lang.Class fields:" "int.class: an instance dump of java.lang.Class"

# Bad ids
expect_grep "$o" '^dump: object name=garbage id=0x1234 rc=-1 events=0$' "OBJECT_DUMP(0x1234) -> JVMPI_FAIL, no event"
expect_grep "$o" '^dump: object name=null id=NULL rc=-1 events=0$' "OBJECT_DUMP(NULL) -> JVMPI_FAIL, no event"
[ ! -e "$WORK/obj_garbage.dump" ] && [ ! -e "$WORK/obj_null.dump" ] && ok "no dump written for bad ids" || bad "a dump was written for a bad id"
expect_grep "$o" '^dump: JVM_SHUT_DOWN fails=0$' "JVM ran on to a normal shutdown"

# checkdumps
expect_nogrep "$WORK/err" 'malformed|ERROR' "checkdumps: no dump malformed, no shim errors"
expect_count "$WORK/err" 'checkdumps: OBJECT_DUMP level 2: [0-9]+ bytes, well-formed' 8 "checkdumps: 8 object dumps checked, well-formed"

finish
