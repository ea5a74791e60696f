#!/bin/bash
# ident_classes.sh — CLASS_LOAD payloads and class/method ids.
#
# 1. Shapes: the ident_classes agent (legacy-agents/ident_classes.c) prints CLASS_LOAD of every
#    Ident* class the IdentClasses workload loads: IdentShapes (known fields and methods, two
#    direct interfaces, a native method, a switch), its base, its interface, an abstract
#    nested class, an inner class, and IdentNoDebug compiled here with javac -g:none. The
#    ground truth is IdentClassFacts, a class-file parser (no JVMTI): the payload must equal it
#    exactly (name, source or NULL, direct interfaces, methods in class-file order with the
#    line of bci 0 and of the last instruction, -1/-1 for native/abstract/no line table,
#    static and instance fields in reverse declaration order). The same for four JDK classes
#    (three replayed at start-up) against the runtime image. A few facts are also checked
#    by hand against the source, and the counts against Java reflection. RequestEvent of
#    each class id repeats the same payload; array classes, garbage ids and id round trips
#    are checked in the agent, and GetMethodClass(method) == class_id for every method of
#    every class: inside that class's own CLASS_LOAD handler (where an agent builds its
#    method table; must not block) and later for all of them.
# 2. Stress: the ident_sampler agent samples every thread's stack while IdentStress loads
#    ~1500 classes (320 definitions through fresh loaders, proxies, lambdas, JDK APIs) on 40
#    threads and unloads hundreds; it calls ProfilerExit(99) on any method / class / thread id
#    it was not told about first. The VM must exit 0, without FAIL.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=30
JAVAC=$(dirname "$JAVA")/javac
SRC=$ROOT/tests/java

# ---- 1. shapes ------------------------------------------------------------------------
mkdir -p "$WORK/nodebug"
"$JAVAC" -g:none -d "$WORK/nodebug" "$SRC/IdentNoDebug.java" || bad "javac -g:none IdentNoDebug"
run_java "$(shim_arg ident_classes)" -cp "$WORK/nodebug:$CLASSES" IdentClasses
o=$WORK/out
expect_rc 0
expect_grep "$o" '^IdentClasses: done$' "workload finished"
expect_nogrep "$o" '^ident_classes: FAIL' "no FAIL from the agent (GetMethodClass == class_id for every method of every class, ids unique)"
expect_grep "$o" '^ident_classes: summary .* fails=0$' "agent counted no failure"
expect_grep "$o" '^ident_classes: GetMethodClass outside handlers: checked=[0-9]{4,} wrong=0 ' "GetMethodClass(method) = its class id, for every method announced"
expect_grep "$o" '^ident_classes: GetMethodClass outside handlers: .* inside handlers: checked=[0-9]{4,} slow=0$' \
  "GetMethodClass inside the CLASS_LOAD handler of the method's own class answers at once (thousands of calls, none blocks > 1 s)"

# JDK classes too: three replayed at start-up (loaded before the agent, from the CDS
# archive), one (Adler32) loaded by the workload; their truth is the runtime image (jrt:/).
classes="IdentClasses IdentShapesBase IdentShapesIface IdentShapes IdentShapes\$Nested IdentShapes\$Inner IdentNoDebug IdentClasses\$Done java.lang.Object java.lang.Thread java.util.ArrayList java.util.zip.Adler32"
files=""
for c in $classes; do
  case "$c" in
    IdentNoDebug) files="$files $WORK/nodebug/$c.class" ;;
    java.*) files="$files jrt:/java.base/$(echo "$c" | tr . /).class" ;;
    *) files="$files $CLASSES/$c.class" ;;
  esac
done
# shellcheck disable=SC2086
"$JAVA" -cp "$CLASSES" IdentClassFacts $files >"$WORK/facts" 2>"$WORK/facts.err" || bad "IdentClassFacts failed: $(head -3 "$WORK/facts.err")"
block() { awk -v c="$2" '$2 == c' "$1"; }   # FILE CLASS -> that class's lines, in order
sed -n 's/^ident_classes: load //p' "$o" >"$WORK/load"
sed -n 's/^ident_classes: request //p' "$o" | grep -E '^(CLASS|M|S|I) ' >"$WORK/request"
for c in $classes; do
  block "$WORK/facts" "$c" >"$WORK/want"
  block "$WORK/load" "$c" >"$WORK/got"
  n=$(grep -c '^CLASS ' "$WORK/got")
  if [ "$n" = 1 ] && [ -s "$WORK/want" ] && cmp -s "$WORK/want" "$WORK/got"; then
    ok "CLASS_LOAD $c = class file ($(head -n1 "$WORK/want" | cut -d' ' -f3-))"
  else
    bad "CLASS_LOAD $c ($n events) differs from the class file:"
    diff "$WORK/want" "$WORK/got" | head -20 | sed 's/^/     /'
  fi
  [ "$c" = 'IdentClasses$Done' ] && continue
  block "$WORK/request" "$c" >"$WORK/rgot"
  if cmp -s "$WORK/got" "$WORK/rgot"; then ok "RequestEvent(CLASS_LOAD, id of $c): same payload"
  else bad "requested CLASS_LOAD of $c differs:"; diff "$WORK/got" "$WORK/rgot" | head -10 | sed 's/^/     /'; fi
  expect_grep "$o" "^ident_classes: request $(printf '%s' "$c" | sed 's/\$/\\$/g') rc=0 events=1 ok\$" "RequestEvent(CLASS_LOAD, $c): SUCCESS, one REQUESTED event before it returned"
done

# Hand-checked facts (in case the oracle and the shim share a misreading).
L() { grep -n -- "$2" "$SRC/$1" | head -n1 | cut -d: -f1; }
cs=$(L IdentShapes.java 'int y = x \* 2;'); ce=$(L IdentShapes.java 'return y;')
expect_grep "$WORK/load" "^M IdentShapes compute \(I\)I $cs $ce\$" "compute: lines $cs-$ce (first statement, return)"
ss=$(L IdentShapes.java 'switch (k) {'); se=$(L IdentShapes.java 'return -1;')
expect_grep "$WORK/load" "^M IdentShapes sw \(I\)I $ss $se\$" "sw: lines $ss-$se (tableswitch, last instruction is the default return)"
expect_grep "$WORK/load" '^M IdentShapes nat \(I\)V -1 -1$' "native method: -1 -1"
expect_grep "$WORK/load" '^M IdentShapes\$Nested ab \(I\)V -1 -1$' "abstract method of the nested class: -1 -1"
expect_grep "$WORK/load" '^M IdentShapesIface shape \(\)V -1 -1$' "interface method: -1 -1"
expect_grep "$WORK/load" '^CLASS IdentShapes src=IdentShapes.java ifaces=2 ' "IdentShapes: two direct interfaces (not the base's Cloneable)"
expect_grep "$WORK/load" '^CLASS IdentShapes\$Nested src=IdentShapes.java ' "nested class named IdentShapes\$Nested, with the outer source file"
expect_eq "$(block "$WORK/load" IdentShapes | awk '$1 == "S" {printf "%s ", $3}')" "sGamma sBeta sAlpha " "IdentShapes statics (reverse declaration order)"
expect_eq "$(block "$WORK/load" IdentShapes | awk '$1 == "I" {printf "%s ", $3}')" "iEpsilon iDelta iGamma iBeta iAlpha " "IdentShapes instance fields (reverse declaration order)"
expect_grep "$WORK/load" '^I IdentShapes\$Inner this\$0 LIdentShapes;$' "inner class: synthetic this\$0 field listed"
expect_grep "$WORK/load" '^CLASS IdentNoDebug src=NULL ifaces=0 methods=3 ' "javac -g:none: source_name NULL"
nd=$(block "$WORK/load" IdentNoDebug | awk '$1 == "M" && !($(NF-1) == -1 && $NF == -1)' | wc -l)
expect_eq "$nd" 0 "IdentNoDebug methods with a line number"

# Counts against Java reflection (getDeclaredMethods + constructors = methods minus <clinit>).
while read -r _ _ cn ifs sts ins ms cts; do
  want="ifaces=${ifs#interfaces=} statics=${sts#statics=} instances=${ins#instances=}"
  nm=$(( ${ms#methods=} + ${cts#ctors=} ))
  got=$(awk -v c="$cn" '$1 == "CLASS" && $2 == c { print $4, $6, $7 }' "$WORK/load")
  clinit=$(awk -v c="$cn" '$1 == "M" && $2 == c && $3 == "<clinit>"' "$WORK/load" | wc -l)
  gm=$(awk -v c="$cn" '$1 == "CLASS" && $2 == c { sub("methods=", "", $5); print $5 }' "$WORK/load")
  if [ "$got" = "$want" ] && [ "$gm" = $((nm + clinit)) ]; then ok "$cn: reflection agrees ($want, $nm methods+ctors)"
  else bad "$cn: reflection says $want methods+ctors=$nm, CLASS_LOAD says $got methods=$gm (clinit $clinit)"; fi
done < <(grep '^IdentClasses: java ' "$o")

# Arrays, garbage, round trips (asserted by the agent; the lines say what happened).
expect_grep "$o" '^ident_classes: array \[I rc=0 events=1 name=\[I src=NULL members=0/0/0/0 id_ok=yes$' "RequestEvent(CLASS_LOAD, int[]): [I, no source, no members"
expect_grep "$o" '^ident_classes: array \[Ljava/lang/String; rc=0 events=1 name=\[Ljava.lang.String; src=NULL members=0/0/0/0 id_ok=yes$' "String[]: [Ljava.lang.String;"
expect_grep "$o" '^ident_classes: array \[\[D rc=0 events=1 name=\[\[D ' "double[][]: [[D"
expect_grep "$o" '^ident_classes: array \[LIdentShapes; rc=0 events=1 name=\[LIdentShapes; ' "IdentShapes[]: [LIdentShapes;"
for w in garbage NULL thread-object; do
  expect_grep "$o" "^ident_classes: request $w rc=-1 events=0\$" "RequestEvent(CLASS_LOAD, $w id): JVMPI_FAIL, nothing posted"
done
expect_grep "$o" '^ident_classes: roundtrip class ids ok=([0-9]+) of \1$' "jobjectID2jobject(class id) is that class; jobject2jobjectID gives the id back"
expect_grep "$o" '^ident_classes: garbage ids: jobjectID2jobject\(0x1234\)=NULL \(NULL\)=NULL \(far\)=NULL GetMethodClass\(NULL\)=NULL$' "garbage ids resolve to NULL"

cp "$WORK/out" "$WORK/out.shapes"; cp "$WORK/err" "$WORK/err.shapes"

# ---- 2. stress: definition before use under load ---------------------------------------
for per in 8 16; do
  run_java "$(shim_arg ident_sampler "period=$((per == 8 ? 2 : 0))")" -cp "$CLASSES" IdentStress 40 $per
  expect_rc 0
  expect_grep "$o" "^IdentStress: threads=40 finished=40 leaves=$((40 * per)) proxies=$((40 * per))\$" "stress workload finished ($((40 * per)) leaf classes)"
  expect_nogrep "$o" '^ident_sampler: FAIL' "sampler: every frame's method, class and thread was announced (a method's class at the latest by JVM_SHUT_DOWN, from its defining thread)"
  s=$(grep '^ident_sampler: summary ' "$o")
  echo "     $s"
  frames=$(echo "$s" | sed -n 's/.* frames=\([0-9]*\) .*/\1/p')
  cls=$(echo "$s" | sed -n 's/.* classes=\([0-9]*\) .*/\1/p')
  thr=$(echo "$s" | sed -n 's/.* threads=\([0-9]*\) .*/\1/p')
  if [ -n "$frames" ] && [ "$frames" -gt 1000 ] && [ "$cls" -gt $((300 + 40 * per)) ] && [ "$thr" -ge 40 ]; then
    ok "sampled $frames frames over $cls classes and $thr threads"
  else bad "too little was sampled: $s"; fi
  expect_grep "$o" '^ident_sampler: summary .* unloads=[1-9][0-9]* ' "classes unloaded while sampling"
  cp "$o" "$WORK/out.stress$per"; cp "$WORK/err" "$WORK/err.stress$per"
done
finish
