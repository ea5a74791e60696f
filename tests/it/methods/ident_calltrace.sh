#!/bin/bash
# ident_calltrace.sh — GetCallTrace through the ident_calltrace agent
# (legacy-agents/ident_calltrace.c), workload tests/java/IdentTrace.java. Ground truth: the
# LINE:<tag> markers in the source and the stacks Java prints itself (Thread.getStackTrace).
#  - a running (not suspended) thread spinning on one line: top frames spin@LINE:spin,
#    Spinner.run@LINE:spinner-run, exactly as Java sees them, 20 times out of 20;
#  - the same thread suspended with SuspendThread (its counter stops; two traces equal),
#    then resumed (counter moves);
#  - depth 1 / 2 honoured, depth 0 / -1 / NULL env / garbage env give 0 frames; frames past
#    num_frames untouched;
#  - a sleeping thread: top frame native with lineno -3, frames down to nap@LINE:nap equal
#    to Java's;
#  - the calling thread inside a CLASS_LOAD handler (IdentTrigger, loaded by `new` at
#    LINE:trigger): the handler runs inside the definition, as on HotSpot, so the top frame
#    is ClassLoader.defineClass1 (native), the last IdentTrace.main at that line; a system
#    thread: 0 frames; an ended thread: 0 frames; main blocked in a handler:
#    ClassLoader.defineClass1 ... Class.forName0 ... IdentTrace.main@LINE:go.
# Every method id in a trace must have been announced by CLASS_LOAD (checked by the agent).
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
SRC=$ROOT/tests/java/IdentTrace.java
L() { grep -n -- "// LINE:$1\$" "$SRC" | head -n1 | cut -d: -f1; }
LSPIN=$(L spin); LRUN=$(L spinner-run); LNAP=$(L nap); LTRIG=$(L trigger); LGO=$(L go)
echo "     source lines: spin=$LSPIN spinner-run=$LRUN nap=$LNAP trigger=$LTRIG go=$LGO"

run_java "$(shim_arg ident_calltrace)" -cp "$CLASSES" IdentTrace
o=$WORK/out
expect_rc 0
expect_grep "$o" '^IdentTrace: done counter>0=true$' "workload finished"
expect_nogrep "$o" '^ident_calltrace: FAIL' "no FAIL from the agent (every traced method id was announced)"
expect_grep "$o" '^ident_calltrace: summary fails=0$' "agent counted no failure"
expect_grep "$o" '^ident_calltrace: Go handler: tracer done$' "tracer system thread finished its checks"

spin="IdentTrace.spin:$LSPIN IdentTrace\$Spinner.run:$LRUN"
jspin=$(sed -n 's/^IdentTrace: java spinner //p' "$o")
expect_eq "$jspin" "$spin" "Java's own stack of the spinner"
field() { sed -n "s/^ident_calltrace: $1 .*trace=//p" "$o" | head -n1; }
expect_grep "$o" '^ident_calltrace: running spinner n=2 same=20/20 ' "running spinner: 2 frames, the same in 20 traces"
expect_eq "$(field 'running spinner')" "$spin" "trace of the RUNNING spinner (not suspended)"
expect_grep "$o" '^ident_calltrace: suspended spinner n=2 twice_equal=yes progress_while_suspended=0 ' \
  "suspended spinner: no progress, two equal traces"
expect_eq "$(field 'suspended spinner')" "$spin" "trace of the suspended spinner"
expect_grep "$o" '^ident_calltrace: resumed spinner progress=yes$' "spinner runs again after ResumeThread"

expect_grep "$o" "^ident_calltrace: depth spinner d=1 n=1 untouched=yes trace=IdentTrace.spin:$LSPIN\$" "depth 1: 1 frame (the top), rest untouched"
expect_grep "$o" "^ident_calltrace: depth spinner d=2 n=2 untouched=yes trace=$(printf '%s' "$spin" | sed 's/\$/\\$/g')\$" "depth 2: 2 frames"
for d in 0 -1; do
  expect_grep "$o" "^ident_calltrace: depth spinner d=$d n=0 untouched=yes\$" "depth $d: 0 frames, nothing written"
done
expect_grep "$o" '^ident_calltrace: depth NULL-env d=8 n=0 untouched=yes$' "NULL env_id: 0 frames"
expect_grep "$o" '^ident_calltrace: depth garbage-env d=8 n=0 untouched=yes$' "garbage env_id: 0 frames"

# The sleeper: top native (-3); down to nap the same frames as Java reports.
upto_nap() { awk -v stop="IdentTrace.nap:$LNAP" '{ s = ""; for (i = 1; i <= NF; i++) { s = s (i > 1 ? " " : "") $i; if ($i == stop) { print s; exit } } }'; }
jsl=$(sed -n 's/^IdentTrace: java sleeper //p' "$o" | upto_nap)
asl=$(field 'sleeper' | upto_nap)
echo "     java sleeper: $jsl"
expect_eq "$asl" "$jsl" "sleeper trace down to IdentTrace.nap:$LNAP = Java's"
expect_grep "$o" '^ident_calltrace: sleeper n=[0-9]+ top_lineno=-3 trace=java\.lang\.Thread\.sleep[A-Za-z0-9]*:-3 ' "sleeper: top frame is the native Thread.sleep*, lineno -3"

st=$(field 'selftrace n=[0-9]* on_event_thread=yes')
# CLASS_LOAD comes inside the definition, as on HotSpot: the class loader's native
# defineClass1 on top, main's `new IdentTrigger()` below it.
case "$st" in
  "java.lang.ClassLoader.defineClass1:-3 "*" IdentTrace.main:$LTRIG") ok "self trace in the CLASS_LOAD handler of IdentTrigger: ClassLoader.defineClass1 (native) on top ... IdentTrace.main:$LTRIG ($st)" ;;
  *) bad "self trace in the CLASS_LOAD handler: '$st', expected java.lang.ClassLoader.defineClass1:-3 ... IdentTrace.main:$LTRIG"; show ;;
esac
expect_grep "$o" '^ident_calltrace: selftrace depth=2 n=[12] ' "self trace with depth 2: at most 2 frames"
expect_grep "$o" '^ident_calltrace: self \(system thread\) n=0$' "a system thread's own trace: 0 frames"
expect_grep "$o" '^ident_calltrace: ended thread n=(0|[0-9]+ \(env reused by a live thread\))$' "an ended thread's env: 0 frames (unless reused)"
expect_grep "$o" "^ident_calltrace: main n=[0-9]+ trace=java\\.lang\\.ClassLoader\\.defineClass1:-3 .*java\\.lang\\.Class\\.forName0:-3 .*IdentTrace\\.main:$LGO\$" \
  "main blocked in a CLASS_LOAD handler: ClassLoader.defineClass1 (native) ... Class.forName0 (native) ... IdentTrace.main:$LGO"
finish
