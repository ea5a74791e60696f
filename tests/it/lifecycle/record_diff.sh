#!/bin/bash
# record_diff.sh — one deterministic program, recorded on every JDK found and in the three
# VM modes, differs only where docs/mapping.md says runs differ.
#
# tests/java/RecordWork.java makes the same calls, allocations (all kept: no JIT can drop
# one), class loads and threads on any JVM. legacy-agents/rec_tracer.c records it: method,
# allocation, free, class, thread, GC and compiled-method events, GetCallTrace at every
# allocation, GetMethodClass of every compiled method, GetCurrentThreadCpuTime, thread-local
# storage and a raw monitor. The baseline is the first JDK tools/find-jdk.sh
# lists, in its default mode; this test's JDK is recorded in the default mode, under -Xint
# and under -Xcomp -XX:TieredStopAtLevel=1 (on the baseline JDK, its default run is a second
# run of the baseline's own configuration). For every run:
#  - jvmpitrace check finds the JVMPI contract held;
#  - jvmpitrace diff --ignore-jdk (the JDK's own classes, methods, objects and threads left
#    out) against the baseline shows differences only in events whose docs/mapping.md row
#    says why they vary from run to run (a collection, a compilation: the table below, each
#    with the words of its row), also in the calls made in those events' handlers and where
#    the threads' streams part;
#  - with those events left out as well (--ignore-events), the recordings are the same in
#    names and counts (exit 0);
#  - without --ignore-jdk, the recordings of two different JDKs differ (exit 1): the option
#    is what leaves the JDK's own differences out.
# The test covers the VM modes itself: under tests/run.sh --modes it is skipped.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=300
T=$ROOT/build/jvmpitrace
ROUNDS=50
case " ${JVMPI_TEST_JAVA_OPTS:-} " in
  *" -Xint "*|*" -Xcomp "*) skip "record_diff runs the VM modes itself" ;;
esac

# The events whose counts depend on the VM's own decisions, and the words of their
# docs/mapping.md row that say so.
declare -A EXPLAINED=(
  [GC_START]='One bracket per collection'
  [GC_FINISH]='Synthesized with GC_START'
  [OBJECT_FREE]='every tagged object that dies gets exactly one OBJECT_FREE'
  [COMPILED_METHOD_LOAD]='JVMTI `CompiledMethodLoad`'
  [COMPILED_METHOD_UNLOAD]='Posted whenever JVMTI reports compiled code unloaded'
)
for e in "${!EXPLAINED[@]}"; do
  # The row's one line and its section below the table ("### N `NAME`" up to the next one).
  if { grep -E "^\| [0-9]+ \`$e\` " "$ROOT/docs/mapping.md"
       awk -v h="\`$e\`" '/^### / { on = index($0, h) > 0 && $2 ~ /^[0-9]+$/; next } on' "$ROOT/docs/mapping.md"
     } | grep -qF -- "${EXPLAINED[$e]}"; then
    ok "docs/mapping.md, $e: \"${EXPLAINED[$e]}\""
  else
    bad "docs/mapping.md's $e row does not say \"${EXPLAINED[$e]}\""
  fi
done

BASE_JDK=$(cd "$ROOT" && tools/find-jdk.sh all | head -n 1)
[ -n "$BASE_JDK" ] || skip "no JDK found"

# record NAME JAVA [OPTIONS...] — RecordWork recorded into $WORK/NAME.jvmpirec.
record() {
  local name=$1 java=$2
  shift 2
  local rec=$WORK/$name.jvmpirec
  rm -f "$rec"
  timeout -k 5 "$JAVA_TIMEOUT" "$java" -Xshare:auto "$@" "-agentpath:$SHIM=record=$rec,legacy=$AGENTS/librec_tracer.so" \
    -cp "$CLASSES" RecordWork $ROUNDS >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  echo "+ $java $* (rec_tracer recording to $name.jvmpirec) RecordWork $ROUNDS -> rc=$rc"
  if [ $rc -eq 0 ] && grep -q "^RecordWork: done rounds=$ROUNDS " "$WORK/$name.out" &&
     grep -q '^rec_tracer: done .* fails=0$' "$WORK/$name.out" && [ -s "$rec" ]; then
    ok "$name: ran and recorded"
  else
    bad "$name: rc=$rc, or no recording, or the tracer failed"; show "$WORK/$name.out"
  fi
}

# events FILE — the JVMPI event behind each difference jvmpitrace diff printed: the event of
# a count line or a record, or the event in whose handler a call was made. Where one thread's
# records part ways (an A record against a B record), the two as one item "X|Y": an event
# that came in one run only (a collection's bracket) puts whatever follows in the other
# against it.
events() {
  awk '
    function ev(k) { if (k ~ /^(CALL|RET) /) { if (match(k, /\(in [A-Z_0-9]+\)/)) return substr(k, RSTART + 4, RLENGTH - 5); return "(a call before any event)" }
                     sub(/\+REQUESTED.*/, "", k); sub(/[ :].*/, "", k); return k }
    function flush() { if (a != "") print a; a = "" }
    /^(---|\+\+\+) / || /^[a-zA-Z].*:$/ || /differences$/ || /^the same/ { flush(); next }
    /^  thread ".*": only in [AB] \([0-9]+ records of / { flush(); sub(/.* records of /, ""); sub(/\)$/, "")
                                                      n = split($0, l, /, /); for (i = 1; i <= n; i++) print l[i]; next }
    /^  thread / { flush(); next }
    /^    A #[0-9]+: / { flush(); sub(/^    A #[0-9]+: /, ""); a = ev($0); next }
    /^    B #[0-9]+: / { sub(/^    B #[0-9]+: /, ""); if (a != "") print a "|" ev($0); else print ev($0); a = ""; next }
    /^    [AB]: \(ends/ { flush(); next }
    /^      / { next }
    /^  \.\.\. and / { flush(); next }
    /^  only in [AB]: / { flush(); sub(/^  only in [AB]: /, ""); print ev($0); next }
    /^  / { flush(); sub(/^  /, ""); sub(/: [0-9]+ -> [0-9]+.*$/, ""); print ev($0); next }
    END { flush() }' "$1" | sort -u
}

record base "$BASE_JDK/bin/java"
for mode in default int c1; do
  case $mode in
    default) opts=() ;;
    int) opts=(-Xint) ;;
    c1) opts=(-Xcomp -XX:TieredStopAtLevel=1) ;;
  esac
  record "$mode" "$JAVA" "${opts[@]}"
done

for rec in base default int c1; do
  f=$WORK/$rec.jvmpirec
  [ -s "$f" ] || continue
  if "$T" check "$f" >"$WORK/$rec.check" 2>&1; then ok "check $rec.jvmpirec: the contract held"
  else bad "check $rec.jvmpirec: exit $?"; grep -E '^VIOLATION|^checked' "$WORK/$rec.check" | head -n 6 | sed 's/^/     > /'; fi
done

for mode in default int c1; do
  a=$WORK/base.jvmpirec b=$WORK/$mode.jvmpirec
  [ -s "$a" ] && [ -s "$b" ] || continue
  label="$mode against the baseline"
  "$T" diff --ignore-jdk --max=1000 "$a" "$b" >"$WORK/diff-$mode" 2>&1
  st=$?
  if [ $st -ne 0 ] && [ $st -ne 1 ]; then bad "$label: diff exit $st"; tail -n 3 "$WORK/diff-$mode"; continue; fi
  seen=$(events "$WORK/diff-$mode")
  # A parting "X|Y" is explained when either side is: the diff without the explained events
  # below then holds the rest to be the same. Only explained events are left out there.
  unexplained="" ign=""
  for e in $seen; do
    x=${e%%|*} y=${e#*|} hit=""
    for n in "$x" "$y"; do
      if [ -n "${EXPLAINED[$n]:-}" ]; then hit=1; case ",$ign," in *",$n,"*) ;; *) ign=${ign:+$ign,}$n ;; esac; fi
    done
    [ -n "$hit" ] || unexplained="$unexplained $e"
  done
  if [ -z "$unexplained" ]; then
    ok "$label: $( [ $st -eq 0 ] && echo "the same" || echo "differs only in: $(echo $seen | tr '\n' ' ')")"
  else
    bad "$label: differences mapping.md does not explain:$unexplained"
    grep -v '^ *only in\|^---\|^+++' "$WORK/diff-$mode" | head -n 20 | sed 's/^/     > /'
  fi
  "$T" diff --ignore-jdk ${ign:+--ignore-events=$ign} "$a" "$b" >"$WORK/diff2-$mode" 2>&1
  st=$?
  expect_eq "$st" 0 "$label, without${ign:+ $ign and} the JDK's own: diff exit status"
  [ $st -eq 0 ] || head -n 20 "$WORK/diff2-$mode" | sed 's/^/     > /'
done

if [ "$(readlink -f "$JAVA")" != "$(readlink -f "$BASE_JDK/bin/java")" ]; then
  "$T" diff "$WORK/base.jvmpirec" "$WORK/default.jvmpirec" >"$WORK/diff-jdk" 2>&1
  expect_eq "$?" 1 "two JDKs without --ignore-jdk: they differ"
  expect_grep "$WORK/diff-jdk" '^  only in [AB]: CLASS_LOAD (java|jdk|sun)\.' "and the JDKs' own classes are among the differences"
fi
finish
