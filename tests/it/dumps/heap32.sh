#!/bin/bash
# heap32.sh — a heap-dump analyzer written for 32 bits (legacy-agents/heap32.c: ids in jint
# tables, dumps walked with 4-byte ids, RequestEvent(OBJECT_ALLOC, (jobjectID)(int)id))
# against tests/java/DumpMarkers.java (50 DumpMarkers, marker k with i = k and ref = marker
# k+1, in the static array MARKERS). The agent saves the dumps it walks (heap32-0.dump,
# heap32-2.dump); build/jvmpidump decodes them with ids of ID_BYTES.
# On i386 (ID_BYTES=4): the level-2 walk reads through the whole dump; exactly 50 markers,
# i = 0..49 each once, marker k's ref = marker k+1's id (49: null); the DumpMarker array is
# 50 long and holds the markers in order; the level-0 walk counts the records and objects
# the decoder finds; each NORMAL_OBJECT id handed back as (jobjectID)(int)id gets its
# OBJECT_ALLOC, and exactly the 50 level-2 markers are DumpMarkers; no bad id warned of.
# On x86-64 (ID_BYTES=8), as docs/porting.md's appendix says: the walks desynchronise at
# the first id (level 2 stops at a record it cannot read, finding no marker; level 0 reads
# other records than the decoder's), most of the ids handed back are refused by the shim
# with a warning counted, not one a call, and the JVM runs on to a normal exit.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
D=$ROOT/build/jvmpidump
N=50

run_java "$(shim_arg heap32)" -cp "$CLASSES" DumpMarkers 60000
o=$WORK/out
expect_rc 0
expect_grep "$o" '^DumpMarkers: done=ok ' "the agent's walks ended and it signalled the workload"
expect_grep "$o" '^h32: done$' "agent finished"
"$D" --ids="${ID_BYTES:-8}" heap 0 "$WORK/heap32-0.dump" >"$WORK/dec0" 2>&1
expect_grep "$WORK/dec0" "^OK [0-9]+ records, $(stat -c %s "$WORK/heap32-0.dump" 2>/dev/null) bytes\$" "heap32-0.dump decodes with ids of ${ID_BYTES:-8} bytes"
drec=$(sed -n 's/^OK \([0-9]*\) records.*/\1/p' "$WORK/dec0"); dobj=$(grep -c '^OBJ type=0 ' "$WORK/dec0")
l0=$(grep '^h32: level0 ' "$o"); l2=$(grep '^h32: level2 bytes=' "$o"); al=$(grep '^h32: alloc ' "$o")
echo "     $l2"; echo "     $l0"; echo "     $al"; echo "     decoder: level 0 records=$drec objects=$dobj"

if [ "${ID_BYTES:-8}" = 4 ]; then
  expect_nogrep "$o" '^h32: level[02] corrupt' "both walks read their dumps to the end"
  expect_grep <(echo "$l2") " markers=$N\$" "level 2: $N DumpMarker instances"
  # marker k: i = k, ref = marker k+1's id
  awk -v N=$N '$1 == "h32:" && $2 == "marker" { i = substr($3, 3); id[i] = substr($4, 4); ref[i] = substr($5, 5); n++ }
    END { bad = 0
          for (k = 0; k < N; k++) { if (!(k in id)) { bad++; continue }
                                    want = (k < N - 1) ? id[k + 1] : "0"; if (ref[k] != want) bad++ }
          print "markers=" n + 0 " bad=" bad
          s = ""; for (k = 0; k < N; k++) s = s (k ? "," : "") id[k]; print s > "'"$WORK"'/order" }' "$o" >"$WORK/markers.check"
  expect_grep "$WORK/markers.check" "^markers=$N bad=0\$" "level 2: i = 0..$((N - 1)) each once, marker k's ref is marker k+1 ($(cat "$WORK/markers.check"))"
  expect_grep "$o" "^h32: markers_array id=[0-9a-f]+ len=$N elems=$(cat "$WORK/order")\$" "level 2: the DumpMarker[] MARKERS holds the $N markers in order"
  expect_eq "$(echo "$l0" | sed -n 's/.* records=\([0-9]*\) .*/\1/p')" "$drec" "level 0: records walked (= the decoder's)"
  expect_eq "$(echo "$l0" | sed -n 's/.* objects=\([0-9]*\)$/\1/p')" "$dobj" "level 0: NORMAL_OBJECT ids collected (= the decoder's)"
  expect_grep <(echo "$al") "^h32: alloc requests=$dobj ok=$dobj failed=0 markers=$N markers_seen_at_level2=$N\$" \
    "every (jobjectID)(int) id answered by OBJECT_ALLOC; the DumpMarkers among them are the $N level-2 markers"
  expect_nogrep "$WORK/err" 'not an id the shim issued|ERROR' "no bad id handed to the shim, no shim errors"
else
  expect_grep "$o" '^h32: level2 corrupt at [0-9]+: ' "level 2: the walk stops at a record it cannot read"
  expect_grep <(echo "$l2") ' markers=0$' "level 2: no marker found"
  expect_grep "$o" '^h32: level0 corrupt at [0-9]+: ' "level 0: the walk stops at a record it cannot read"
  r0=$(echo "$l0" | sed -n 's/.* records=\([0-9]*\) .*/\1/p')
  [ -n "$r0" ] && [ "$r0" -lt "$drec" ] && ok "level 0: $r0 records walked, the decoder reads $drec" || bad "level 0: walked '$r0' records, decoder $drec"
  f=$(echo "$al" | sed -n 's/.* failed=\([0-9]*\) .*/\1/p')
  [ -n "$f" ] && [ "$f" -ge 1 ] && ok "ids read at the wrong offsets refused ($f)" || bad "no id refused: $al"
  expect_grep <(echo "$al") ' markers=0 ' "no DumpMarker among the answers"
  expect_grep "$WORK/err" "^jvmpishim: warning: agent [0-9]+: the next line is the first call with an id the shim never issued \\(garbage or truncated\\)" "the shim warns of the first bad id"
  expect_grep "$WORK/err" "^jvmpishim: warning: agent [0-9]+: RequestEvent\\(OBJECT_ALLOC, 0x[0-9a-f]+\\): not an id the shim issued: JVMPI_FAIL" "the refused id is named"
  c=$(grep -c 'not an id the shim issued' "$WORK/err")
  [ "$c" -le 1 ] && ok "the refusal warned of once, not once a call ($c line)" || bad "$c warning lines of refused ids"
  # The ids themselves fit in 32 bits on a run this small: truncation loses nothing here.
  big=$(awk '$1 == "OBJ" { id = substr($3, 4); if (length(id) > 10) n++ } END { print n + 0 }' "$WORK/dec0")
  expect_eq "$big" 0 "level-0 ids above 2^32 (x86-64 ids of a small program fit in 32 bits)"
fi
finish
