#!/bin/bash
# exec_insn.sh — INSTRUCTION_START: the exact instruction and branch sequence of a method.
#
# ExecInsn.branchy(x) (an if_icmple, a tableswitch 1..3, a lookupswitch {-7,10,1000}, an
# ifnonnull) runs once per input the workload prints. The agent (legacy-agents/exec_insn.c)
# prints every INSTRUCTION_START of branchy in order. From `javap -c` the test knows each
# instruction's length and branch targets, and checks, for every event: the offset is an
# instruction of branchy; the next event is at the instruction that must run next (the
# fall-through, or the target the reported is_true / key / chosen_pair_index selects);
# each call starts at 0 and ends at the ireturn; and against the inputs: the if's is_true is
# x <= 5, the tableswitch key is x with low 1 and hi 3, the lookupswitch chose the pair of
# x (or pairs_total = 3 for the default). With methods=jvmti the event is unavailable.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=240
JAVAP=$JDK_HOME_T/bin/javap
[ -x "$JAVAP" ] || skip "SKIP no javap in $JDK_HOME_T"

run_java "$(shim_arg exec_insn)" -cp "$CLASSES" ExecInsn
expect_rc 0
expect_grep "$WORK/out" '^exec_insn: enable INSTRUCTION_START rc=0$' "EnableEvent(INSTRUCTION_START) = JVMPI_SUCCESS"
inputs=$(sed -n 's/^ExecInsn: inputs //p' "$WORK/out")
[ -n "$inputs" ] && ok "workload ran (inputs: $inputs)" || bad "no inputs line from the workload"
"$JAVAP" -c -cp "$CLASSES" ExecInsn | sed -n '/static int branchy(int);/,/^$/p' >"$WORK/listing"
grep '^exec_insn: i ' "$WORK/out" | sed 's/^exec_insn: i //' >"$WORK/events"
n=$(wc -l <"$WORK/events")
[ "$n" -gt 0 ] && ok "$n INSTRUCTION_START events for branchy" || bad "no INSTRUCTION_START for branchy"

awk -v inputs="$inputs" '
  # Pass 1: the listing. op[off], next[off] (fall-through), tgt[off] (branch target),
  # switch tables: lo/hi/case targets/default; lookup keys.
  FNR == NR {
    if (match($0, /^ *[0-9]+: [a-z][a-z_0-9]*/)) {
      split($0, f, /[: ]+/); o = f[2] + 0; code = f[3]
      if (prev != "") nxt[prev] = o
      op[o] = code; prev = o; order[++ni] = o
      if (code ~ /^(if|goto)/) tgt[o] = f[4] + 0
      if (code == "tableswitch") { sw = o; match($0, /[-0-9]+ to [-0-9]+/); split(substr($0, RSTART, RLENGTH), lh, " to "); lo[o] = lh[1]; hi[o] = lh[2] }
      if (code == "lookupswitch") { sw = o; np[o] = 0 }
      next
    }
    if (sw != "" && match($0, /^ *(-?[0-9]+|default): [0-9]+/)) {
      split($0, f, /[: ]+/); k = f[2]; t = f[3] + 0
      if (k == "default") def[sw] = t
      else if (op[sw] == "tableswitch") cas[sw, k + 0] = t
      else { key[sw, np[sw]] = k + 0; pt[sw, np[sw]] = t; np[sw]++ }
      next
    }
    if ($0 ~ /^ *}/) sw = ""
    next
  }
  # Pass 2: the events: OFF if T tswitch KEY LO HI lswitch CHOSEN TOTAL
  {
    off = $1 + 0; ist = $3 + 0; tkey = $5 + 0; tlo = $6 + 0; thi = $7 + 0; lch = $9 + 0; ltot = $10 + 0
    nev++
    if (!(off in op)) { print "FAIL event " nev ": offset " off " is not an instruction of branchy"; bad++; next }
    if (expect != "" && off != expect) { print "FAIL event " nev ": offset " off ", expected " expect " after " last; bad++ }
    if (off == 0) { call++; split(inputs, xs, " "); x = xs[call] + 0; ifs = 0 }
    c = op[off]; expect = nxt[off]
    if (c ~ /^if/) {
      if (ist) expect = tgt[off]
      ifs++
      if (ifs == 1) { want = (x <= 5); if (ist != want) { print "FAIL call " call " (x=" x "): " c " at " off " is_true " ist ", expected " want; bad++ } else good++ }
    } else if (c ~ /^goto/) {
      expect = tgt[off]
    } else if (c == "tableswitch") {
      expect = ((tkey >= lo[off] && tkey <= hi[off]) ? cas[off, tkey] : def[off])
      if (tkey != x || tlo != lo[off] || thi != hi[off]) { print "FAIL call " call ": tableswitch key/low/hi " tkey "/" tlo "/" thi ", expected " x "/" lo[off] "/" hi[off]; bad++ } else good++
    } else if (c == "lookupswitch") {
      w = np[off]; for (i = 0; i < np[off]; i++) if (key[off, i] == x) w = i
      if (lch != w || ltot != np[off]) { print "FAIL call " call ": lookupswitch chosen " lch "/" ltot ", expected " w "/" np[off]; bad++ } else good++
      expect = (lch < np[off]) ? pt[off, lch] : def[off]
    } else if (c ~ /return$/) {
      expect = 0; returns++
    }
    last = off
  }
  END {
    split(inputs, xs, " "); ncalls = 0; for (i in xs) ncalls++
    if (call != ncalls) { print "FAIL " call " calls seen (offset 0), expected " ncalls; bad++ }
    if (returns != ncalls) { print "FAIL " returns " returns seen, expected " ncalls; bad++ }
    printf "CHECKED events=%d outcomes_ok=%d failures=%d\n", nev, good, bad + 0
  }' "$WORK/listing" "$WORK/events" >"$WORK/check"
cat "$WORK/check" | head -20 | sed 's/^/     /'
expect_grep "$WORK/check" '^CHECKED events=[0-9]+ outcomes_ok=18 failures=0$' "every event at the right instruction; all 18 branch outcomes match the inputs (6 ifs, 6 tableswitch, 6 lookupswitch)"
expect_nogrep "$WORK/check" '^FAIL' "no sequence violation"
expect_grep "$WORK/out" '^exec_insn: totals branchy=[0-9]+ others=[1-9][0-9]*$' "other methods post INSTRUCTION_START too"

# The JVMTI mechanism cannot give branch outcomes: the event is refused there.
run_java "$(shim_arg exec_insn "" methods=jvmti)" -cp "$CLASSES" ExecInsn
expect_rc 0
expect_grep "$WORK/out" '^exec_insn: enable INSTRUCTION_START rc=1$' "methods=jvmti: JVMPI_NOT_AVAILABLE"
expect_grep "$WORK/err" 'INSTRUCTION_START is not available' "methods=jvmti: one warning says why"
finish
