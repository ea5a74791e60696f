#!/bin/bash
# dump_heap.sh — RequestEvent(HEAP_DUMP) at levels 0, 1, 2 and with arg NULL through the
# dump_agent agent (legacy-agents/dump_agent.c) against tests/java/DumpMarkers.java, which
# holds 50 DumpMarker objects with known field values (static MARKERS and main's local),
# an int[] {3,1,4,1,5,9,2,6} and an Object[] {marker 0, marker 1, null} in main's locals,
# and the statics SI=12345, SS="dump", SL=-7. The agent writes each dump buffer and its
# CLASS_LOAD facts (classes.txt); tests/tools/jvmpidump decodes them.
# Checked: each dump decodes exactly (OK line); level 2: exactly 50 DumpMarker instance
# dumps with the workload's values in JVMPI order (own fields reversed, then the
# superclass's), references resolving to the right markers, SS and DumpMarkers.class;
# DumpMarkers' class dump statics; SS is a String whose value byte[] reads "dump"; the
# int[] elements; MARKERS (length 50, the markers in order) and the Object[] (length 3,
# marker 0, marker 1, null); the Class[] {int.class, boolean.class, void.class} in main's
# locals and, at levels 0, 1 and 2, one record for each of these primitive mirrors, an
# instance of java.lang.Class (level 2: its name field is the String "int", "boolean",
# "void"; level 1: the same references); JAVA_FRAME roots on main's env for the arrays; STICKY_CLASS
# roots; level 1: the same records with references only; NULL arg: same as level 2;
# level 0: no roots, the 50 markers as NORMAL_OBJECT, the arrays typed; traces of known
# threads; levels 7 and -1: JVMPI_FAIL and no event. A second run under the shim option
# checkdumps: no dump is malformed.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=40; WAIT=30000
# The i386 JDK runs under qemu-i386 where the kernel cannot execute it, 10-30x slower: its
# dumps get more time (the workload waits for them up to WAIT ms); the checks are the same.
[ "${ID_BYTES:-8}" = 4 ] && { JAVA_TIMEOUT=150; WAIT=120000; }
# A DumpMarker's values: 3 references of ID_BYTES each (ref, s; bref of DumpMarkerBase) and
# z, d, l, i, base (25 bytes): 49 bytes with the 8-byte ids of x86-64, 37 on i386; level 1
# keeps the references only.
MB=$((25 + 3 * ${ID_BYTES:-8})); MB1=$((3 * ${ID_BYTES:-8}))
D=$ROOT/build/jvmpidump
C=$WORK/classes.txt
N=50

run_java "$(shim_arg dump_agent heap)" -cp "$CLASSES" DumpMarkers $WAIT
o=$WORK/out
expect_rc 0
expect_grep "$o" '^DumpMarkers: done=ok ' "agent signalled the workload after its dumps"
expect_nogrep "$o" '^dump: FAIL' "no FAIL from the agent"
expect_grep "$o" '^dump: done fails=0$' "agent finished"
for l in 0 1 2; do
  expect_grep "$o" "^dump: request HEAP_DUMP level=$l rc=0 events=1\$" "HEAP_DUMP level $l -> JVMPI_SUCCESS, one event"
  expect_grep "$o" "^dump: HEAP_DUMP file=heap$l.dump requested=1 on=dump-control dump_level=$l " "level $l: HEAP_DUMP|REQUESTED on the requester, dump_level=$l"
done
expect_grep "$o" '^dump: request HEAP_DUMP arg=NULL rc=0 events=1$' "HEAP_DUMP arg NULL -> JVMPI_SUCCESS"
expect_grep "$o" '^dump: HEAP_DUMP file=heapnull.dump requested=1 on=dump-control dump_level=2 ' "arg NULL: dump_level=2"
expect_grep "$o" '^dump: request HEAP_DUMP level=7 rc=-1 events=0$' "level 7 -> JVMPI_FAIL, no event"
expect_grep "$o" '^dump: request HEAP_DUMP level=-1 rc=-1 events=0$' "level -1 -> JVMPI_FAIL, no event"
expect_grep "$o" '^dump: JVM_SHUT_DOWN ' "JVM shut down normally after the bad requests"

for f in 0 1 2 null; do
  l=$f; [ "$f" = null ] && l=2
  if [ -f "$WORK/heap$f.dump" ]; then
    "$D" --ids="${ID_BYTES:-8}" heap $l "$WORK/heap$f.dump" "$C" >"$WORK/dec$f" 2>&1
    expect_grep "$WORK/dec$f" "^OK [0-9]+ records, $(stat -c %s "$WORK/heap$f.dump") bytes\$" "heap$f.dump: decoder consumed all bytes"
  else
    bad "heap$f.dump not written"; : >"$WORK/dec$f"
  fi
done

cid() { awk -v n="$1" '$1 == "C" && $6 == n { print "0x" $2; exit }' "$C"; }
DM=$(cid DumpMarker); DMB=$(cid DumpMarkerBase); DMS=$(cid DumpMarkers); OBJ=$(cid java.lang.Object)
CLS=$(cid java.lang.Class)
MAIN=$(sed -n 's/^dump: thread name=main env=\(0x[0-9a-f]*\)$/\1/p' "$o" | head -n1)
echo "     DumpMarker=$DM DumpMarkerBase=$DMB DumpMarkers=$DMS Object=$OBJ main=$MAIN"
[ -n "$DM" ] && [ -n "$DMS" ] && [ -n "$OBJ" ] && [ -n "$MAIN" ] && ok "classes.txt and THREAD_START name the workload's classes and main" || bad "missing class ids or main env"

# ---- level 2 ----
d2=$WORK/dec2
cl=$(grep "^CLASS id=$DMS " "$d2")
echo "     $cl"
expect_eq "$(echo "$cl" | grep -c .)" 1 "class dumps of DumpMarkers"
set -- $cl
expect_eq "${3:-} ${7:-} ${9:-} ${11:-} ${12:-}" "super=$OBJ I:$N J:-7 I:12345 " "DumpMarkers: super, statics N, SL, SI (reverse declaration order)"
MARKERS=${8#L:}; SS=${10#L:}
expect_grep "$d2" "^CLASS id=$DM super=$DMB size=[0-9]+ name=DumpMarker statics:\$" "class dump of DumpMarker (super DumpMarkerBase, no statics)"
expect_grep "$d2" "^CLASS id=$DMB super=$OBJ size=[0-9]+ name=DumpMarkerBase statics:\$" "class dump of DumpMarkerBase (super Object)"

# The 50 markers: fields ref s z d l i | bref base
awk -v DM="$DM" -v MB="$MB" -v SS="$SS" -v DMS="$DMS" -v N=$N -v MAP="$WORK/markers.map" '
function bad(m) { nbad++; if (nbad <= 8) print "     BAD " m }
$1 == "INSTANCE" && $5 == "name=DumpMarker" {
  n++; id = substr($2, 4)
  if (substr($3, 7) != DM) bad("class " $3 " of " id)
  if ($4 != "bytes=" MB || NF != 14) { bad("shape: " $0); next }
  k = substr($12, 3) + 0
  if (k in ID) bad("two markers with i=" k)
  ID[k] = id; REF[k] = $7
  if ($8 != (k % 2 == 1 ? "L:" SS : "L:0")) bad("marker " k " s=" $8)
  if ($9 != ("Z:" (k % 2 == 0))) bad("marker " k " z=" $9)
  if ($10 != ("D:" sprintf("%g", k + 0.5))) bad("marker " k " d=" $10)
  if ($11 != ("J:" (k * 1000))) bad("marker " k " l=" $11)
  if ($13 != (k == 0 ? "L:" DMS : "L:0")) bad("marker " k " bref=" $13)
  if ($14 != ("I:" (1000 + k))) bad("marker " k " base=" $14)
}
END {
  for (k = 0; k < N; k++) {
    if (!(k in ID)) { bad("no marker with i=" k); continue }
    if (REF[k] != (k < N - 1 ? "L:" ID[k + 1] : "L:0")) bad("marker " k " ref=" REF[k] ", want marker " k + 1)
    print k, ID[k] > MAP
  }
  print "markers=" n + 0 " bad=" nbad + 0
}' "$d2" >"$WORK/markers.check"
cat "$WORK/markers.check"
expect_grep "$WORK/markers.check" "^markers=$N bad=0\$" "level 2: $N DumpMarker instance dumps, every field value as the workload set it"
mid() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/markers.map"; }
M0=$(mid 0); M1=$(mid 1)

# SS: a String whose value is the byte[] "dump"
sl=$(grep "^INSTANCE id=$SS " "$d2")
expect_grep <(echo "$sl") " name=java.lang.String fields:" "SS ($SS) is a java.lang.String instance"
val=$(echo "$sl" | tr ' ' '\n' | sed -n 's/^L:\(0x[0-9a-f]*\)$/\1/p' | head -n1)
expect_grep "$d2" "^PRIMARRAY id=$val len=4 type=8 elems: B:100 B:117 B:109 B:112\$" "SS's value array reads \"dump\""

# int[]
ints=$(sed -n 's/^PRIMARRAY id=\(0x[0-9a-f]*\) len=8 type=10 elems: I:3 I:1 I:4 I:1 I:5 I:9 I:2 I:6$/\1/p' "$d2")
expect_eq "$(echo "$ints" | grep -c .)" 1 "int[] {3,1,4,1,5,9,2,6} dumps"

# MARKERS: Object array of the 50 markers
want="OBJARRAY id=$MARKERS len=$N elemclass=$DM elems:$(awk '{ printf " L:%s", $2 }' "$WORK/markers.map")"
got=$(grep "^OBJARRAY id=$MARKERS " "$d2")
if [ "$got" = "$want" ]; then ok "MARKERS: object array dump of length $N, element class DumpMarker, markers 0..49"
else bad "MARKERS array dump: '$got' (want length $N, element class $DM, the markers)"; fi

# Object[] in main's locals: the main JAVA_FRAME root that is an Object[]
roots=$(sed -n "s/^ROOT JAVA_FRAME id=\\(0x[0-9a-f]*\\) env=$MAIN frame=[0-9]*\$/\\1/p" "$d2" | sort -u)
objs=""
for r in $roots; do grep -q "^OBJARRAY id=$r len=[0-9]* elemclass=$OBJ " "$d2" && objs="$objs$r"; done
got=$(grep "^OBJARRAY id=$objs " "$d2")
expect_eq "$got" "OBJARRAY id=$objs len=3 elemclass=$OBJ elems: L:$M0 L:$M1 L:0" "Object[] in main's locals"

# Primitive mirrors: the Class[] in main's locals holds int.class, boolean.class, void.class.
# JVMTI's walk never reports them as referrers; each must still have one record per level.
prims=""
for r in $roots; do grep -q "^OBJARRAY id=$r len=3 elemclass=$CLS " "$d2" && prims="$prims$r"; done
pa=$(grep "^OBJARRAY id=$prims " "$d2")
echo "     Class=$CLS prims: $pa"
set -- $(echo "$pa" | tr ' ' '\n' | sed -n 's/^L:\(0x[0-9a-f]*\)$/\1/p')
[ $# = 3 ] && ok "Class[] of primitive mirrors in main's locals ($pa)" || bad "no Class[] {int, boolean, void}.class among main's roots ($pa)"
# bytes of a String's value (compact strings: Latin-1 byte[])
str_bytes() { awk '{ for (i = 1; i <= length($0); i++) printf " B:%d", index("abcdefghijklmnopqrstuvwxyz", substr($0, i, 1)) + 96 }' <<<"$1"; }
for x in "int:${1:-none}" "boolean:${2:-none}" "void:${3:-none}"; do
  n=${x%%:*}; p=${x#*:}
  expect_eq "$(grep -c "^OBJ type=0 id=$p\$" "$WORK/dec0")" 1 "level 0: $n.class ($p) has one NORMAL_OBJECT record"
  r1=$(grep "^INSTANCE id=$p " "$WORK/dec1"); r2=$(grep "^INSTANCE id=$p " "$d2")
  expect_eq "$(echo "$r2" | grep -c "^INSTANCE id=$p class=$CLS .* name=java.lang.Class fields:")" 1 "level 2: $n.class ($p) has one instance dump of java.lang.Class"
  expect_eq "$(echo "$r1" | grep -c "^INSTANCE id=$p class=$CLS .* name=java.lang.Class fields:")" 1 "level 1: $n.class ($p) has one instance dump of java.lang.Class"
  refs1=$(echo "$r1" | tr ' ' '\n' | grep '^L:'); refs2=$(echo "$r2" | tr ' ' '\n' | grep '^L:')
  [ -n "$refs2" ] && [ "$refs1" = "$refs2" ] && ok "level 1: $n.class has level 2's references" || bad "level 1 references of $n.class differ from level 2's"
  named=""
  for s in $(echo "$refs2" | sed 's/^L://'); do
    [ "$s" = 0 ] && continue
    v=$(grep "^INSTANCE id=$s .* name=java.lang.String fields:" "$d2" | tr ' ' '\n' | sed -n 's/^L:\(0x[0-9a-f]*\)$/\1/p' | head -n1)
    [ -n "$v" ] && grep -q "^PRIMARRAY id=$v len=${#n} type=8 elems:$(str_bytes "$n")\$" "$d2" && named=$s
  done
  [ -n "$named" ] && ok "level 2: $n.class's record names the String \"$n\" ($named)" || bad "level 2: no field of $n.class's record is the String \"$n\": $r2"
done

# Roots
for x in "ints:$ints" "MARKERS:$MARKERS" "objs:$objs"; do
  n=${x%%:*}; v=${x#*:}
  if [ -n "$v" ] && echo "$roots" | grep -qx "$v"; then ok "JAVA_FRAME root on main's env for $n ($v)"; else bad "no JAVA_FRAME root on main ($MAIN) for $n ($v)"; fi
done
sc=$(grep -c '^ROOT STICKY_CLASS ' "$d2")
[ "$sc" -gt 0 ] && ok "level 2 has STICKY_CLASS roots ($sc)" || bad "no STICKY_CLASS roots"
expect_grep "$d2" "^ROOT STICKY_CLASS id=$OBJ\$" "java.lang.Object is a STICKY_CLASS root"
first_obj=$(grep -nEv '^ROOT ' "$d2" | head -n1 | cut -d: -f1)
last_root=$(grep -n '^ROOT ' "$d2" | tail -n1 | cut -d: -f1)
[ -n "$first_obj" ] && [ -n "$last_root" ] && [ "$last_root" -lt "$first_obj" ] && ok "roots come before objects" || bad "last root at line $last_root, first object at $first_obj"

# ---- level 1: the same records, references only ----
d1=$WORK/dec1
proj() { awk '$1 == "INSTANCE" && $5 == "name=DumpMarker" { s = $2 " " $3; for (i = 7; i <= NF; i++) if ($i ~ /^L:/) s = s " " $i; print s }' "$1" | sort; }
p1=$(proj "$d1"); p2=$(proj "$d2")
expect_eq "$(echo "$p1" | grep -c .)" $N "level 1: DumpMarker instance dumps"
[ "$p1" = "$p2" ] && ok "level 1: the markers' ids and references equal level 2's" || bad "level 1 marker references differ from level 2"
expect_count "$d1" '^INSTANCE id=[^ ]* class=[^ ]* bytes='"$MB1"' name=DumpMarker fields: L:[^ ]* L:[^ ]* L:[^ ]*$' $N "level 1: markers carry 3 references, $MB1 bytes, no primitives"
expect_grep "$d1" "^CLASS id=$DMS super=$OBJ size=[0-9]+ name=DumpMarkers statics: L:$MARKERS L:$SS\$" "level 1: DumpMarkers statics are the references only"
expect_grep "$d1" "^PRIMARRAY id=$ints len=8 type=10 elems:\$" "level 1: int[] without elements"
expect_grep "$d1" "^ROOT JAVA_FRAME id=$ints env=$MAIN " "level 1: JAVA_FRAME root for the int[]"

# ---- NULL arg = level 2 ----
dn=$WORK/decnull
a=$(grep -E "name=DumpMarkers? |^PRIMARRAY id=$ints |^OBJARRAY id=($MARKERS|$objs) " "$d2" | sort)
b=$(grep -E "name=DumpMarkers? |^PRIMARRAY id=$ints |^OBJARRAY id=($MARKERS|$objs) " "$dn" | sort)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "arg NULL: the workload's records equal level 2's" || bad "arg NULL dump differs from level 2 for the workload's records"

# ---- level 0 ----
d0=$WORK/dec0
expect_nogrep "$d0" '^(ROOT|CLASS|INSTANCE)' "level 0: no roots, only (type, id) records"
awk -v MAP="$WORK/markers.map" 'BEGIN { while ((getline l < MAP) > 0) { split(l, f, " "); M[f[2]] = 1 } }
  $1 == "OBJ" && (substr($3, 4) in M) { n++; if ($2 != "type=0") t++ } END { print "markers=" n + 0 " nonzero_type=" t + 0 }' "$d0" >"$WORK/l0.check"
expect_grep "$WORK/l0.check" "^markers=$N nonzero_type=0\$" "level 0: the $N markers' ids, as NORMAL_OBJECT ($(cat "$WORK/l0.check"))"
expect_grep "$d0" "^OBJ type=10 id=$ints\$" "level 0: the int[] as JVMPI_INT"
expect_grep "$d0" "^OBJ type=2 id=$MARKERS\$" "level 0: MARKERS as JVMPI_CLASS (object array)"
expect_grep "$d0" "^OBJ type=2 id=$objs\$" "level 0: the Object[] as JVMPI_CLASS"

# ---- traces ----
for f in 0 1 2 null; do
  nt=$(sed -n "s/^dump: HEAP_DUMP file=heap$f.dump .* num_traces=\\([0-9]*\\)\$/\\1/p" "$o")
  c=$(grep -c "^dump: trace file=heap$f.dump " "$o")
  unk=$(grep -c "^dump: trace file=heap$f.dump env=[^ ]* name=? " "$o")
  if [ -n "$nt" ] && [ "$nt" -gt 0 ] && [ "$c" = "$nt" ] && [ "$unk" = 0 ] &&
     grep -q "^dump: trace file=heap$f.dump env=$MAIN name=main " "$o"; then
    ok "heap$f.dump: num_traces=$nt, every env known from THREAD_START, main among them"
  else bad "heap$f.dump: num_traces=$nt traces=$c unknown=$unk"; fi
done
expect_nogrep "$WORK/err" 'ERROR|malformed' "no shim errors"
for f in 0 1 2 null; do cp "$WORK/dec$f" "$WORK/run1.dec$f"; done

# ---- again under checkdumps ----
rm -f "$WORK"/heap*.dump
run_java "$(shim_arg dump_agent heap checkdumps,log=info)" -cp "$CLASSES" DumpMarkers $WAIT
expect_rc 0
expect_grep "$o" '^dump: done fails=0$' "checkdumps run: agent finished"
expect_nogrep "$WORK/err" 'malformed' "checkdumps: no dump malformed"
for l in 0 1 2; do
  expect_grep "$WORK/err" "checkdumps: HEAP_DUMP level $l: [0-9]+ bytes, well-formed" "checkdumps: level $l dump checked, well-formed"
done

# ---- with OBJECT_ALLOC on from JVM_OnLoad: every id a dump names was announced first ----
# (objects JVMTI never reports, such as the mirrors of array classes, get their OBJECT_ALLOC
# from the dump itself, before HEAP_DUMP is delivered)
rm -f "$WORK"/heap*.dump
run_java "$(shim_arg dump_agent heap,alloc)" -cp "$CLASSES" DumpMarkers $WAIT
expect_rc 0
expect_grep "$o" '^dump: done fails=0$' "alloc run: agent finished"
expect_grep "$o" '^dump: level0 records=[1-9][0-9]* unannounced=0$' \
  "alloc run: every id of the level-0 dump was announced by OBJECT_ALLOC or CLASS_LOAD first"

finish
