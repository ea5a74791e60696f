#!/bin/bash
# bci_rewrite.sh — the class-file rewriter (shim/classfile/) on a real JVM, with bytecode
# verification of every class (-XX:+BytecodeVerificationLocal/Remote, and -Xverify:all on 17).
# The native JVMTI agent build/tools/libbcitest.so (tests/tools/bcitest.c) rewrites EVERY class
# it is given: JDK classes in ClassFileLoadHook from VMStart on, every class loaded before that
# retransformed at VMInit, the workload's classes (tests/java/Bci*.java, driver BciMain) when
# they load, one of them under a custom class loader and one a generated version-49 class with
# jsr/ret. Two runs:
#   insn    method probes + instruction probes + native wrappers (flags 7)
#   method  method probes + native wrappers (flags 5), the shim's usual mode
# Each run checks:
#  - the workload finished; no VerifyError, ClassFormatError or other exception; the agent
#    rewrote hundreds of JDK classes with no rewrite error, retransformed every class loaded
#    before VMStart without error, and skipped no method except for the known reasons (a JDK
#    method too large after rewriting, natives that must not be wrapped);
#  - for every "BciMain: expect METHOD E X" (ground truth counted by the workload itself) the
#    agent counted exactly E entries and X exits of METHOD: branches, switches, the goto_w
#    method, an exception unwinding three frames with try/catch/finally (main and a second
#    thread), constructors computing super(...) arguments, this(...), lambdas, synchronized
#    methods and blocks, wrapped natives (bound by automatic lookup and by RegisterNatives,
#    one throwing), interface default/static methods, an enum, a record, the custom loader's
#    class, the jsr/ret class; constructors left by an exception before `this` is
#    initialized (in super(...)'s or this(...)'s arguments, or thrown by the superclass
#    constructor inside super(...)) have their exits too;
#  - per thread (agent's shadow stack): every exit was of the innermost open frame (no orphan,
#    no mismatch, no constructor left open) on every thread, all ending at depth 0; on
#    bci-gap exactly 75 constructor frames were ended by exitThrow's unwinding (their own
#    super(...)/this(...) call threw: 25 directly, 25 x 2 through this(...));
#  - the workload's own results (switches at 16 offsets, big == reference, natives, jsr);
#  - the rewritten BciSwitch (dumped by the agent) has a tableswitch and a lookupswitch at each
#    of the 4 offsets mod 4, and javap reads it.
# The insn run also checks:
#  - the instruction trace of BciBranch.classify on the 9 inputs is exactly what interpreting
#    its bytecode (javap -c) gives (tests/it/methods/bci_interp.awk): every bci, the tested values,
#    and the branch/switch outcome cf_branch_outcome() computes from the original bytecode;
#  - the rewritten BciBig.big has goto_w (widened branches) and gives the right result.
# Where this JDK's javac compiles a class with statements before super(...) (a throw, a loop,
# a try/catch; JDK 22+, probed by compiling it), it is rewritten too: exact counts, the 5 constructor calls that threw
# before super() are the only frames without exit.
# The agent's figures (classes and methods rewritten, time spent rewriting) are printed.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
AGENT=${ARCH_BUILD:-$ROOT/build}/tools/libbcitest.so
JAVAP=$JDK_HOME_T/bin/javap
[ -f "$AGENT" ] || { bad "no $AGENT (run make all)"; finish; }

VERIFY="-XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationLocal -XX:+BytecodeVerificationRemote"
# -Xverify:all too where this JVM takes it without a word (probed: a JVM that deprecated
# or dropped the option says so on -version).
if "$JAVA" -Xverify:all -version >"$WORK/xverify.txt" 2>&1 && ! grep -qiE 'warning|deprecat|unrecognized' "$WORK/xverify.txt"; then
  VERIFY="-Xverify:all $VERIFY"
else
  echo "(probed: this JVM does not take -Xverify:all silently; verifying with the diagnostic flags only)"; sed 's/^/     > /' "$WORK/xverify.txt" | head -3
fi
# The hook class is defined in java/lang (java.base), so its natives, bound by the agent,
# draw HotSpot's "Re-registering of platform native method" warning: silenced.
QUIET="-Xlog:jni+resolve=off"

check_run() { # MODE FLAGS
  local mode=$1 flags=$2 d=$WORK/$1
  mkdir -p "$d"
  run_java $VERIFY $QUIET \
    "-agentpath:$AGENT=out=$d/agent.txt,flags=$flags,watch=Bci,trace=BciBranch.classify(I)I,dump=BciSwitch+BciBig,dumpdir=$d" \
    -cp "$CLASSES" BciMain
  cp "$WORK/out" "$d/out"; cp "$WORK/err" "$d/err"
  local o=$d/out a=$d/agent.txt
  echo "--- $mode (flags $flags)"
  expect_rc 0
  expect_grep "$o" '^BciMain: done$' "$mode: workload finished"
  expect_nogrep "$d/err" 'VerifyError|ClassFormatError|LinkageError|Exception|hs_err' "$mode: no VerifyError/ClassFormatError/exception"
  expect_nogrep "$o" 'VerifyError|ClassFormatError|Exception in' "$mode: stdout has no VerifyError"
  expect_grep "$a" '^bcitest: end$' "$mode: agent report complete"
  expect_nogrep "$a" '^bcitest: (FAIL|error|retransform .* failed)' "$mode: no rewrite error, no probe failure"
  expect_grep "$a" '^bcitest: vminit retransformed=[1-9][0-9][0-9]+ failed=0$' "$mode: classes loaded before VMStart retransformed"
  local t
  t=$(sed -n 's/^bcitest: totals .* errors=\([0-9]*\) .* retransform_errors=\([0-9]*\) .*/\1 \2/p' "$a")
  expect_eq "$t" "0 0" "$mode: rewrite errors, retransform errors"
  local jdk
  jdk=$(sed -n 's/^bcitest: jdk classes=\([0-9]*\) methods=\([0-9]*\);.*/\1/p' "$a")
  if [ "${jdk:-0}" -ge 500 ]; then ok "$mode: $jdk JDK classes rewritten"; else bad "$mode: only ${jdk:-0} JDK classes rewritten"; fi
  # skips: only JDK methods, only for the known reasons
  expect_nogrep "$a" '^bcitest: skip Bci' "$mode: no workload method skipped"
  if grep '^bcitest: skip ' "$a" | grep -Ev ': (code too large after rewriting \([0-9]+ bytes\)|intrinsic native|caller-sensitive native|signature-polymorphic method)$' | head -3 | grep -q .; then
    bad "$mode: a skip for an unexpected reason"; grep '^bcitest: skip ' "$a" | head -5 | sed 's/^/     > /'
  else
    ok "$mode: every skip is for a known reason ($(grep -c '^bcitest: skip ' "$a") skips)"
  fi
  [ "$mode" = method ] && expect_nogrep "$a" '^bcitest: skip .*too large' "$mode: no method too large with method probes only"

  # exact entry/exit counts against the workload's ground truth
  local n=0 m e x got
  while read -r _ _ m e x; do
    n=$((n + 1))
    got=$(grep -F "bcitest: method $m " "$a" | sed -n 's/^bcitest: method [^ ]* \([0-9]*\) \([0-9]*\) ids=1$/\1 \2/p')
    expect_eq "$got" "$e $x" "$mode: $m entries exits"
  done < <(grep '^BciMain: expect ' "$o")
  expect_eq "$n" 29 "$mode: methods with ground truth"
  expect_grep "$o" '^BciMain: expect BciCtor.<init>\(I\)V 195 195$' "$mode: 75 of 195 constructor entries left by a throw before \`this\` was initialized"

  # per-thread balance
  expect_nogrep "$a" '^bcitest: thread .* (orphans=[1-9]|mismatches=[1-9])' "$mode: every exit matched the innermost open frame, on every thread"
  local th
  for th in main bci-worker DestroyJavaVM; do
    expect_grep "$a" "^bcitest: thread $th depth=0 open_ctors=0 gaps=0 orphans=0 mismatches=0 unwound=0 " "$mode: thread $th balanced, no gap"
  done
  expect_grep "$a" '^bcitest: thread bci-gap depth=0 open_ctors=0 gaps=0 orphans=0 mismatches=0 unwound=75 ' "$mode: thread bci-gap balanced, 75 constructor frames ended by unwinding"

  # the workload's own results
  expect_grep "$o" '^BciMain: switch bad=0$' "$mode: 16 switch methods give the right results"
  local big
  big=$(sed -n 's/^BciMain: big=\(-*[0-9]*\) reference=\(-*[0-9]*\)$/\1 \2/p' "$o")
  read -r b1 b2 <<<"$big"
  if [ -n "${b1:-}" ] && [ "$b1" = "$b2" ]; then ok "$mode: big() = reference() = $b1"; else bad "$mode: big/reference: '$big'"; fi
  expect_grep "$o" '^BciMain: natives sum=114850 boom=100$' "$mode: wrapped natives return their values and throw"
  expect_grep "$o" '^BciMain: throw sum=.* caught=500$' "$mode: exceptions through three frames caught"
  expect_grep "$o" 'jsr_ok=true$' "$mode: the jsr/ret class computes right"
  expect_grep "$o" '^BciMain: record BciPoint\[x=3, y=6\]$' "$mode: record toString"

  # the rewritten switches: every alignment, readable by javap
  local al
  if [ -f "$d/BciSwitch.class" ] && "$JAVAP" -c -p "$d/BciSwitch.class" >"$d/BciSwitch.javap" 2>&1; then
    ok "$mode: javap reads the rewritten BciSwitch"
    al=$(awk '/ (table|lookup)switch/ { split($1, a, ":"); print $2, a[1] % 4 }' "$d/BciSwitch.javap" | sort -u | tr '\n' ' ')
    expect_eq "$al" "lookupswitch 0 lookupswitch 1 lookupswitch 2 lookupswitch 3 tableswitch 0 tableswitch 1 tableswitch 2 tableswitch 3 " "$mode: switch offsets mod 4"
  else
    bad "$mode: no readable rewritten BciSwitch"
  fi

  if [ "$mode" = insn ]; then
    local want=$d/trace.want got=$d/trace.got inputs
    inputs=$(sed -n 's/^BciMain: classify inputs=\([-0-9,]*\) sum=.*/\1/p' "$o")
    "$JAVAP" -c -p "$CLASSES/BciBranch.class" |
      awk -v method='classify(int)' -v inputs="$inputs" \
        -f "$ROOT/tests/it/methods/bci_interp.awk" >"$want"
    grep '^bcitest: t ' "$a" >"$got"
    local wn gn
    wn=$(grep -c '^bcitest: t ' "$want"); gn=$(wc -l <"$got")
    if [ "$wn" -gt 300 ] && diff <(grep '^bcitest: t ' "$want") "$got" >"$d/trace.diff"; then
      ok "$mode: instruction trace of classify = its bytecode interpreted ($gn probes, 9 inputs)"
    else
      bad "$mode: instruction trace differs from the interpreted bytecode ($gn recorded, $wn expected)"
      head -10 "$d/trace.diff" | sed 's/^/     > /'
    fi
    expect_grep "$o" "^BciMain: classify inputs=$inputs sum=$(sed -n 's/^sum //p' "$want")\$" "$mode: classify results = interpreted results"
    expect_grep "$a" "^bcitest: trace BciBranch.classify\\(I\\)I records=$wn\$" "$mode: agent recorded exactly the expected number of probes"
    if "$JAVAP" -c -p "$d/BciBig.class" 2>/dev/null | sed -n '/static int big(int)/,/static int reference/p' | grep -q goto_w; then
      ok "$mode: BciBig.big was widened (goto_w)"
    else
      bad "$mode: no goto_w in the rewritten BciBig.big"
    fi
  fi
  # figures
  grep -E '^bcitest: (totals|jdk classes)' "$a" | sed "s/^/     [$mode] /"
}

check_run insn 7
check_run method 5

# Statements before super(...) (flexible constructor bodies, final in JDK 25): a
# throw, a loop and a try/catch run while `this` is uninitialized. The source is compiled
# here by the JDK under test (the Makefile compiles with the oldest JDK).
flex() {
  local d=$WORK/flex
  mkdir -p "$d"
  cat >"$d/BciFlex.java" <<'JAVA'
public class BciFlex extends BciFlexBase {
    static int made, rejected;
    BciFlex(int x) {
        if (x < 0)
            throw new IllegalArgumentException("negative");
        int y = 0;
        for (int i = 0; i < x; i++)
            y += i;
        try {
            y = Integer.parseInt(x % 3 == 0 ? "" + y : "z");
        } catch (NumberFormatException e) {
            y = -y;
        }
        super(y);
        made++;
    }
    public static void main(String[] a) {
        long s = 0;
        for (int i = -5; i < 20; i++) {
            try { s += new BciFlex(i).v; } catch (IllegalArgumentException e) { rejected++; }
        }
        System.out.println("BciFlex: sum=" + s + " made=" + made + " rejected=" + rejected);
        System.out.println("BciMain: expect BciFlex.<init>(I)V " + (made + rejected) + " " + (made + rejected));
        System.out.println("BciMain: expect BciFlexBase.<init>(I)V " + made + " " + made);
    }
}
class BciFlexBase {
    final int v;
    BciFlexBase(int y) { v = y * 2; }
}
JAVA
  # Probed, not keyed on a version: this JDK's javac compiles the class, or compiles it as
  # a preview feature (JDK 22-24: then the JVM runs it with --enable-preview), or refuses
  # statements before super(...) (before JDK 22: then this part is skipped, loudly).
  local preview=""
  if ! "$JDK_HOME_T/bin/javac" -d "$d" "$d/BciFlex.java" >"$d/javac.txt" 2>&1; then
    if grep -q 'preview feature' "$d/javac.txt" &&
       "$JDK_HOME_T/bin/javac" --enable-preview --release "$JDK_MAJOR" -d "$d" "$d/BciFlex.java" >"$d/javac.txt" 2>&1; then
      preview=--enable-preview
      echo "(probed: this javac compiles statements before super(...) as a preview feature)"
    elif grep -qE 'call to (super|this) must be first statement' "$d/javac.txt"; then
      echo "SKIPPED: flex: this JDK's javac does not compile statements before super(...) (flexible constructor bodies):"
      sed 's/^/     > /' "$d/javac.txt" | head -3
      return
    else
      bad "flex: javac of BciFlex.java"; sed 's/^/     > /' "$d/javac.txt" | head -5; return
    fi
  fi
  run_java $preview $VERIFY $QUIET "-agentpath:$AGENT=out=$d/agent.txt,flags=7,watch=BciFlex" -cp "$d" BciFlex
  cp "$WORK/out" "$d/out"; cp "$WORK/err" "$d/err"
  echo "--- flex (flags 7)"
  expect_rc 0
  expect_grep "$d/out" '^BciFlex: sum=-768 made=20 rejected=5$' "flex: constructors compute right"
  expect_nogrep "$d/err" 'VerifyError|ClassFormatError|Exception|hs_err' "flex: no VerifyError"
  expect_nogrep "$d/agent.txt" '^bcitest: (FAIL|error|skip Bci)' "flex: no rewrite error"
  local m e x got
  while read -r _ _ m e x; do
    got=$(grep -F "bcitest: method $m " "$d/agent.txt" | sed -n 's/^bcitest: method [^ ]* \([0-9]*\) \([0-9]*\) ids=1$/\1 \2/p')
    expect_eq "$got" "$e $x" "flex: $m entries exits"
  done < <(grep '^BciMain: expect ' "$d/out")
  expect_grep "$d/agent.txt" '^bcitest: thread main depth=0 open_ctors=0 gaps=0 orphans=0 mismatches=0 unwound=0 ' \
    "flex: main balanced: the 5 constructors that threw before super() got their exits"
}
flex
finish
