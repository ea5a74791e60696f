#!/bin/bash
# hprof_heapdump.sh — hprof heap=dump (RequestEvent(HEAP_DUMP) at exit, the level-2 dump
# parsed by the agent) on tests/java/HprofApp.java, whose NODES HprofApp$Node objects are
# all live at exit, linked in a chain (each one's `next` is the one made before it, the
# first one's is null), and referenced from one HprofApp$Node[] of NODES elements.
# ASCII (format=a):
#  - HEAP DUMP BEGIN (<n> objects, <b> bytes) ... HEAP DUMP END, once; the object count is
#    the number of CLS/OBJ/ARR records; ROOT records of several kinds;
#  - exactly NODES "OBJ <id> (sz=<s>, trace=<t>, class=HprofApp$Node@<class id>)" records,
#    all of one size and one trace, whose TRACE block starts at HprofApp.makeNodes; NODES-1
#    of them have a `next` line naming another Node; the class id is the CLS record of
#    HprofApp$Node;
#  - the HprofApp$Node[] array: "ARR ... nelems=NODES, elem type=HprofApp$Node@<class id>"
#    with NODES element lines;
#  - no SITES table (heap=dump only).
# Binary (format=b, heap=all): build/hprofcheck parses the whole file and validates every
# record length and reference; it finds NODES instances of HprofApp$Node in the heap dump
# and one ALLOC SITES site of NODES live and allocated HprofApp$Node objects.
# The checker itself: a heap dump the JDK writes (jcmd GC.heap_dump) of the same program
# passes it too, with the same NODES instances.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
NODES=2500
CHECK=$ROOT/build/hprofcheck

frames() { awk -v id="$2" '$0 == "TRACE " id ":" || index($0, "TRACE " id ": (") == 1 {on=1; next} on && /^\t/ {sub(/^\t/, ""); print; next} on {exit}' "$1"; }

# 1. ASCII
R=$WORK/dump.txt
run_java "$(shim_arg hprof "heap=dump,file=$R")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
expect_rc 0
expect_grep "$WORK/out" "^HprofApp: nodes=$NODES " "HprofApp finished"
expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
[ -s "$R" ] || { bad "no $R"; finish; }
expect_count "$R" '^HEAP DUMP BEGIN \([0-9]+ objects, [0-9]+ bytes\) ' 1 "one HEAP DUMP"
expect_count "$R" '^HEAP DUMP END$' 1 "HEAP DUMP ends"
expect_nogrep "$R" '^SITES BEGIN' "heap=dump writes no SITES"
sed -n '/^HEAP DUMP BEGIN/,/^HEAP DUMP END$/p' "$R" >"$WORK/heap"
said=$(sed -n 's/^HEAP DUMP BEGIN (\([0-9]*\) objects.*/\1/p' "$WORK/heap")
expect_eq "$(grep -cE '^(CLS|OBJ|ARR) ' "$WORK/heap")" "$said" "CLS/OBJ/ARR records = the object count in HEAP DUMP BEGIN"
for k in '<Java stack>' '<system class>' '<thread>' '<JNI global ref>'; do
  expect_grep "$WORK/heap" "^ROOT [0-9a-f]+ \\(kind=$k, " "ROOT records of kind $k"
done
grep -E '^OBJ [0-9a-f]+ \(sz=[0-9]+, trace=[0-9]+, class=HprofApp\$Node@[0-9a-f]+\)$' "$WORK/heap" >"$WORK/nodes"
expect_eq "$(grep -c . "$WORK/nodes")" "$NODES" "OBJ records of HprofApp\$Node"
expect_eq "$(sed 's/^OBJ [0-9a-f]* (sz=\([0-9]*\), trace=\([0-9]*\), class=\(.*\))$/\1 \2 \3/' "$WORK/nodes" | sort -u | grep -c .)" 1 "all Nodes: one size, one trace, one class"
set -- $(sed -n '1s/^OBJ [0-9a-f]* (sz=\([0-9]*\), trace=\([0-9]*\), class=HprofApp\$Node@\([0-9a-f]*\))$/\1 \2 \3/p' "$WORK/nodes")
sz=${1:-0} tr=${2:-0} cid=${3:-x}
if [ "$sz" -gt 0 ]; then ok "Node size $sz bytes (from OBJECT_ALLOC)"; else bad "Node size '$sz'"; fi
f1=$(frames "$R" "$tr" | head -n 1)
[[ "$f1" == 'HprofApp.makeNodes(HprofApp.java:'[0-9]*')' ]] && ok "Node TRACE $tr starts at $f1" || bad "Node TRACE $tr starts at '$f1'"
expect_grep "$WORK/heap" "^CLS $cid \\(name=HprofApp\\\$Node, trace=[0-9]+\\)\$" "CLS record of HprofApp\$Node ($cid)"
# next fields: every Node but the first names a Node.
awk -v cls="class=HprofApp\$Node@$cid)" '
  /^(OBJ|ARR|CLS) / {node = index($0, cls) > 0; if (node) ids[$2] = 1; next}
  node && $1 == "next" {nexts[$2] = 1; n++}
  END {for (i in nexts) if (!(i in ids)) bad++; print n + 0, bad + 0}' "$WORK/heap" >"$WORK/next"
expect_eq "$(cat "$WORK/next")" "$((NODES - 1)) 0" "next fields (count, naming no Node)"
arr=$(grep -E "^ARR [0-9a-f]+ \\(sz=[0-9]+, trace=[0-9]+, nelems=$NODES, elem type=HprofApp\\\$Node@$cid\\)\$" "$WORK/heap")
if [ -n "$arr" ]; then
  ok "the Node[]: $arr"
  elems=$(awk -v a="$arr" '$0 == a {on=1; next} on && /^\t\[[0-9]+\]/ {n++; next} on {exit} END {print n + 0}' "$WORK/heap")
  expect_eq "$elems" "$NODES" "Node[] element lines"
else
  bad "no ARR record of $NODES HprofApp\$Node elements"
fi

# 2. Binary, heap=all
B=$WORK/dump.hprof
run_java "$(shim_arg hprof "heap=all,format=b,file=$B")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
expect_rc 0
expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
"$CHECK" "$B" --class 'HprofApp$Node' >"$WORK/check" 2>&1
crc=$?
sed 's/^/     | /' "$WORK/check" | grep -v '^     |   '
expect_eq "$crc" 0 "hprofcheck exit status (0: valid)"
expect_grep "$WORK/check" '^hprofcheck: .*: JAVA PROFILE 1\.0\.2, identifier size 8, [0-9]+ records, valid$' "hprofcheck: valid"
expect_grep "$WORK/check" '^records:.* LOAD_CLASS=[0-9]+ .*TRACE=[0-9]+ ALLOC_SITES=1 START_THREAD=[0-9]+ .*HEAP_DUMP_SEGMENT=[0-9]+ HEAP_DUMP_END=1' "binary record types present"
expect_grep "$WORK/check" '^heap:.* CLASS_DUMP=[0-9]+ INSTANCE_DUMP=[0-9]+ OBJ_ARRAY_DUMP=[0-9]+ PRIM_ARRAY_DUMP=[0-9]+' "heap dump sub-records present"
expect_grep "$WORK/check" "^instances of HprofApp\\\$Node: $NODES\$" "binary heap dump: $NODES HprofApp\$Node instances"
expect_grep "$WORK/check" "^sites of HprofApp\\\$Node: 1, live objects $NODES, allocated objects $NODES\$" "binary ALLOC SITES: HprofApp\$Node"

# 3. The JDK's own dump of the same program, no agent: the checker agrees with the JDK's writer.
J=$WORK/jdk.hprof
"$JAVA" -Xshare:auto -cp "$CLASSES" HprofApp $NODES 10 1000 1 1 4000 >"$WORK/out" 2>"$WORK/err" &
jpid=$!
for _ in $(seq 1 300); do grep -q '^ready$' "$WORK/out" 2>/dev/null && break; kill -0 "$jpid" 2>/dev/null || break; sleep 0.05; done
timeout 60 "$JDK_HOME_T/bin/jcmd" "$jpid" GC.heap_dump -all "$J" >"$WORK/jcmd.out" 2>&1
wait "$jpid"
expect_grep "$WORK/out" "^HprofApp: nodes=$NODES " "HprofApp finished (no agent)"
"$CHECK" "$J" --class 'HprofApp$Node' >"$WORK/check" 2>&1
crc=$?
sed 's/^/     | /' "$WORK/check" | grep -v '^     |   '
expect_eq "$crc" 0 "hprofcheck of the JDK's own heap dump"
expect_grep "$WORK/check" "^instances of HprofApp\\\$Node: $NODES\$" "JDK heap dump: $NODES HprofApp\$Node instances"
finish
