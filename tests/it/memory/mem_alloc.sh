#!/bin/bash
# mem_alloc.sh — OBJECT_ALLOC against the ground truth of a workload (tests/java/MemAlloc.java)
# through the mem_alloc agent (legacy-agents/mem_alloc.c). Four runs:
#   onload  OBJECT_ALLOC (+ ARENA_NEW) enabled in JVM_OnLoad: every MemMarker from the very
#           first one is reported; the start-up replay announces > 1000 existing objects
#           before JVM_INIT_DONE, not REQUESTED, with the same conventions as live events,
#           and none of the shim's own start-up arrays (byte[65536]) among them.
#   marker  enabled in a CLASS_LOAD handler on main, right before a burst of allocations;
#   thread  enabled from the agent's system thread while main waits (without allocating)
#           for the property the agent sets, then bursts: the burst must be seen in full.
#   none    no memory event enabled: not one OBJECT_ALLOC.
# In every run: N MemMarker, M int[L], K MemMarker[A] on main and N2 MemMarker on thread
# mem-worker give exactly those counts, on those threads, with HotSpot's conventions
# (instance: its class, NORMAL_OBJECT; object array: the ELEMENT class, JVMPI_CLASS;
# primitive array: class_id NULL, JVMPI_INT) and sizes of a 64-bit JVM with compressed class
# pointers (MemMarker 24, int[L] 16+4L, MemMarker[A] 16+4A, rounded up to 8; on i386 the
# array header is 12 bytes); arena_id 1
# announced first by ARENA_NEW {1, "Java heap"}; every class_id defined by CLASS_LOAD before
# use; no id twice; the kept objects' ids (jobject2jobjectID) are exactly the reported ones;
# RequestEvent(OBJECT_ALLOC) repeats the fields as a REQUESTED event on the caller's thread,
# and fails (JVMPI_FAIL, no event) for a garbage id and NULL; after DisableEvent nothing.
# The classes the start-up sweep announces (definition before use) must be announced
# completely: a class with 0 methods in its CLASS_LOAD must not show methods when requested
# later (it would if it was announced before it was linked).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
o=$WORK/out

truth() { sed -n "s/^MemAlloc: burst.* $1=\([0-9]*\).*/\1/p" "$o" | head -n1; }
round8() { echo $(( ($1 + 7) / 8 * 8 )); }

check_common() { # MODE
  local mode=$1
  expect_rc 0
  expect_grep "$o" '^MemAlloc: done$' "workload finished"
  expect_nogrep "$o" '^mem_alloc: FAIL' "no live violation reported by the agent"
  expect_grep "$o" '^mem_alloc: totals .* fails=0$' "agent counted no violation"
  local f what
  while IFS='|' read -r f what; do
    expect_nogrep "$o" "^mem_alloc: fails $f=" "$what"
  done <<'EOF'
arena|every arena_id is 1
before_arena_new|no OBJECT_ALLOC before ARENA_NEW {1, "Java heap"}
is_array|every is_array is NORMAL_OBJECT, CLASS or BOOLEAN..LONG
prim_with_class|primitive arrays have class_id NULL
class_null|instances and object arrays have a class_id
class_undefined|every class_id was defined by CLASS_LOAD before its use
size|every size is > 0 and a multiple of 8
null_id|no obj_id NULL
reported_twice|no object reported twice
EOF
  N=$(truth markers); M=$(truth ints); L=$(truth int_length); K=$(truth arrays)
  A=$(truth array_length); N2=$(truth worker_markers); W=$(sed -n 's/^MemAlloc: pre markers=//p' "$o")
  [ -n "$N" ] && [ -n "$M" ] && [ -n "$L" ] && [ -n "$K" ] && [ -n "$A" ] && [ -n "$N2" ] ||
    { bad "no ground truth from the workload"; N=1 M=1 L=1 K=1 A=1 N2=1 W=1; }
  # An array's header: 16 bytes on a 64-bit JVM with compressed class pointers, 12 on i386.
  local AH=16; [ "${ID_BYTES:-8}" = 4 ] && AH=12
  SI=$(round8 $((AH + 4 * L))); SA=$(round8 $((AH + 4 * A)))
  # The requested events answer the same way in every mode (also when OBJECT_ALLOC is off).
  expect_grep "$o" "^mem_alloc: request marker rc=0 events=1 requested=1 same_thread=1 env_id_ok=1 id_ok=1 arena=1 class=MemMarker is_array=0 size=24 conventions=ok " \
    "RequestEvent(OBJECT_ALLOC, kept MemMarker): one REQUESTED event, this thread, MemMarker NORMAL_OBJECT 24 bytes"
  expect_grep "$o" "^mem_alloc: request int_array rc=0 events=1 requested=1 same_thread=1 env_id_ok=1 id_ok=1 arena=1 class=NULL is_array=10 size=$SI conventions=ok " \
    "RequestEvent(OBJECT_ALLOC, kept int[$L]): class NULL, JVMPI_INT, $SI bytes"
  expect_grep "$o" "^mem_alloc: request marker_array rc=0 events=1 requested=1 same_thread=1 env_id_ok=1 id_ok=1 arena=1 class=MemMarker is_array=2 size=$SA conventions=ok " \
    "RequestEvent(OBJECT_ALLOC, kept MemMarker[$A]): element class MemMarker, JVMPI_CLASS, $SA bytes"
  expect_grep "$o" '^mem_alloc: request string rc=0 events=1 requested=1 same_thread=1 env_id_ok=1 id_ok=1 arena=1 class=java.lang.String is_array=0 size=[1-9][0-9]* conventions=ok ' \
    "RequestEvent(OBJECT_ALLOC, a JNI-made String never reported): java.lang.String"
  expect_grep "$o" '^mem_alloc: request garbage id=0x1234 rc=-1 events=0$' "RequestEvent(OBJECT_ALLOC, 0x1234): JVMPI_FAIL, no event, no crash"
  expect_grep "$o" '^mem_alloc: request NULL rc=-1 events=0$' "RequestEvent(OBJECT_ALLOC, NULL): JVMPI_FAIL, no event"
  if grep -Eq '^mem_alloc: classes announced_without_methods=[0-9]+ incomplete=0$' "$o"; then
    ok "every CLASS_LOAD announcing a class is complete (no class later shows methods its CLASS_LOAD lacked)"
  else
    bad "CLASS_LOADs without the methods the class has: $(sed -n 's/^mem_alloc: classes //p' "$o")"
    grep '^mem_alloc: class ' "$o" | sed 's/^/     > /'
  fi
  if [ "$mode" = none ]; then
    expect_grep "$o" '^mem_alloc: totals unrequested=0 requested=[0-9]+ arena_events=0 ' "nothing enabled: no OBJECT_ALLOC, no ARENA_NEW at all"
    expect_grep "$o" '^mem_alloc: shutdown unrequested=0 ' "still none at JVM_SHUT_DOWN"
    return
  fi
  expect_count "$o" '^mem_alloc: arena_new ' 1 "one ARENA_NEW"
  expect_grep "$o" '^mem_alloc: arena_new id=1 name=Java heap n=1$' 'ARENA_NEW {1, "Java heap"} (before any OBJECT_ALLOC: checked live)'
  expect_grep "$o" "^mem_alloc: count phase=burst thread=main markers=$N marker_arrays=$K " "burst: exactly $N MemMarker and $K MemMarker[] on main"
  expect_grep "$o" "^mem_alloc: count phase=burst thread=worker markers=$N2 marker_arrays=0 " "burst: exactly $N2 MemMarker on mem-worker"
  expect_grep "$o" '^mem_alloc: count phase=burst thread=other markers=0 marker_arrays=0 ' "burst: no MemMarker reported on another thread"
  expect_grep "$o" "^mem_alloc: intsize phase=burst thread=main size=$SI count=$M\$" "burst: exactly $M int[$L] of $SI bytes on main"
  expect_grep "$o" "^mem_alloc: sizes phase=burst marker=24-24 marker_array=$SA-$SA\$" "sizes: MemMarker 24, MemMarker[$A] $SA (all equal)"
  expect_grep "$o" "^mem_alloc: kept keepM objects=$N reported=$N wrong_kind=0 not_reported=0 null_ids=0\$" "ids of the $N kept MemMarker = reported ids, kind MemMarker"
  expect_grep "$o" "^mem_alloc: kept keepI objects=$M reported=$M wrong_kind=0 not_reported=0 null_ids=0\$" "ids of the $M kept int[] = reported ids, kind int[]"
  expect_grep "$o" "^mem_alloc: kept keepA objects=$K reported=$K wrong_kind=0 not_reported=0 null_ids=0\$" "ids of the $K kept MemMarker[] = reported ids, kind MemMarker[]"
  expect_grep "$o" "^mem_alloc: kept keepW objects=$N2 reported=$N2 " "ids of the worker's $N2 MemMarker = reported ids"
  local k
  for k in marker int_array marker_array; do
    expect_grep "$o" "^mem_alloc: request $k rc=0 .* match_alloc=yes\$" "requested $k = the original OBJECT_ALLOC's fields"
  done
  expect_grep "$o" '^mem_alloc: disable OBJECT_ALLOC rc=0$' "DisableEvent(OBJECT_ALLOC): SUCCESS"
  expect_count "$o" '^mem_alloc: count phase=disabled thread=[a-z]* markers=0 marker_arrays=0 ints=0$' 3 "after DisableEvent: no OBJECT_ALLOC"
}

# ---- 1. enabled in JVM_OnLoad ----------------------------------------------------------
run_java "$(shim_arg mem_alloc onload)" -cp "$CLASSES" MemAlloc
check_common onload
expect_grep "$o" "^mem_alloc: count phase=pre thread=main markers=$W marker_arrays=0 " "from the first allocation: all $W MemMarker of the first phase"
r=$(grep '^mem_alloc: replay ' "$o")
echo "     $r"
v() { echo "$r" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
if [ -n "$(v total)" ] && [ "$(v total)" -gt 1000 ]; then ok "start-up replay before JVM_INIT_DONE: $(v total) objects (> 1000)"; else bad "start-up replay: $(v total) objects before JVM_INIT_DONE"; fi
expect_eq "$(v requested)" 0 "replayed events with the REQUESTED bit"
expect_eq "$(v bytes64k)" 0 "replayed byte[65536]s (the shim's own start-up arrays must not be announced)"
expect_eq "$(v normal_noclass)" 0 "replayed NORMAL_OBJECTs with class_id NULL, other than java.lang.Class's own Class object"
expect_eq "$(v class_class)" 0 "java.lang.Class's own Class object not replayed (HotSpot announced it only when asked: reference-behavior.md §3.1)"
grep '^mem_alloc: replay_noclass_sample ' "$o" | head -3 | sed 's/^/     /'
if [ "$(v objarrays)" -gt 0 ] 2>/dev/null; then ok "replay: $(v objarrays) object arrays (is_array JVMPI_CLASS)"; else bad "replay: no object array reported as JVMPI_CLASS (objarrays=$(v objarrays))"; fi
if [ "$(v strings)" -gt 0 ] 2>/dev/null; then ok "replay: $(v strings) java.lang.String instances"; else bad "replay: no java.lang.String instance"; fi
if [ "$(v bytearrays)" -gt 0 ] 2>/dev/null; then ok "replay: $(v bytearrays) byte[] (class NULL, JVMPI_BYTE)"; else bad "replay: no byte[]"; fi
pa=$(v primarrays); ba=$(v bytearrays)
if [ -n "$pa" ] && [ "$pa" -gt "$ba" ]; then ok "replay: primitive arrays other than byte[] ($((pa - ba)))"; else bad "replay: primitive arrays $pa are all byte[] ($ba): int[], char[], long[] ... missing or misreported"; fi
cp "$o" "$WORK/out.onload"; cp "$WORK/err" "$WORK/err.onload"

# ---- 2. enabled later, in a CLASS_LOAD handler on main ---------------------------------
run_java "$(shim_arg mem_alloc marker)" -cp "$CLASSES" MemAlloc
check_common marker
expect_grep "$o" '^mem_alloc: enable OBJECT_ALLOC in the marker handler rc=0$' "EnableEvent(OBJECT_ALLOC) mid-run: SUCCESS"
expect_grep "$o" '^mem_alloc: replay total=0 ' "enabled after JVM_OnLoad: no start-up replay"
expect_grep "$o" '^mem_alloc: count phase=pre thread=main markers=0 ' "nothing reported before enabling"
cp "$o" "$WORK/out.marker"; cp "$WORK/err" "$WORK/err.marker"

# ---- 3. enabled later, from the agent's system thread ----------------------------------
run_java "$(shim_arg mem_alloc thread)" -cp "$CLASSES" MemAlloc thread
check_common thread
expect_grep "$o" '^mem_alloc: enable OBJECT_ALLOC from system thread rc=0$' "EnableEvent(OBJECT_ALLOC) from a system thread: SUCCESS"
expect_grep "$o" '^mem_alloc: count phase=pre thread=main markers=0 ' "nothing reported before enabling"
cp "$o" "$WORK/out.thread"; cp "$WORK/err" "$WORK/err.thread"

# ---- 4. nothing enabled ----------------------------------------------------------------
run_java "$(shim_arg mem_alloc none)" -cp "$CLASSES" MemAlloc
check_common none
cp "$o" "$WORK/out.none"; cp "$WORK/err" "$WORK/err.none"

finish
