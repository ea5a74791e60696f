#!/bin/bash
# eventcodes.sh — EnableEvent/DisableEvent for every number -3..70, in JVM_OnLoad and in the
# JVM_INIT_DONE handler: JVMPI_NOT_AVAILABLE (1) for numbers that are no Sun event
# (negative, 0, 10-32, 36, 62+) and for the request-only dumps (37, 50, 59); JVMPI_SUCCESS
# (0) for 44-47 and 51-53. RequestEvent on a non-requestable number is NOT_AVAILABLE. The
# agent gets no event it did not enable. (Other numbers are printed, not asserted.)
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90

run_java "$(shim_arg eventcodes)" -cp "$CLASSES" Hello
expect_rc 0
expect_grep "$WORK/out" '^hello$'
expect_grep "$WORK/out" '^eventcodes: onload probe finished$'
expect_grep "$WORK/out" '^eventcodes: event JVM_INIT_DONE$'
expect_grep "$WORK/out" '^eventcodes: initdone probe finished$'
expect_count "$WORK/out" '^eventcodes: event JVM_SHUT_DOWN$' 1 "JVM_SHUT_DOWN once"
expect_nogrep "$WORK/out" '^eventcodes: FAIL' "no FAIL (no event the agent did not enable)"

na=""; for t in -3 -2 -1 0 $(seq 10 32) 36 37 50 59 $(seq 62 70); do na="$na $t"; done
succ="44 45 46 47 51 52 53"

# check PHASE OP "NUMBERS" WANT
check() {
  local phase=$1 op=$2 want=$4 t got wrong=""
  for t in $3; do
    got=$(sed -n "s/^eventcodes: $phase $op t=$t rc=\\(-\\{0,1\\}[0-9]*\\)\$/\\1/p" "$WORK/out" | head -n1)
    [ "$got" = "$want" ] || wrong="$wrong $t(rc=${got:-missing})"
  done
  if [ -z "$wrong" ]; then ok "$phase: $op -> $want for all of:$3"
  else bad "$phase: $op should give $want for:$wrong"; fi
}
for phase in onload initdone; do
  for op in enable disable; do
    check $phase $op "$na" 1
    check $phase $op "$succ" 0
  done
  check $phase request "-1 0 10 12 32 36 46 47 62 70" 1
  expect_grep "$WORK/out" "^eventcodes: $phase reenable JVM_INIT_DONE rc=0 JVM_SHUT_DOWN rc=0\$"
done
echo "     (not asserted) enable/disable results for the other numbers:"
for phase in onload initdone; do
  awk -v p="$phase" '$2 == p && ($3 == "enable" || $3 == "disable") {
      split($4, a, "="); t = a[2]; split($5, b, "="); r[t, $3] = b[2]; seen[t] = 1 }
    END { line = ""; for (t = 1; t <= 61; t++) if ((t, "enable") in r &&
            !(t >= 10 && t <= 32) && t != 36 && t != 37 && t != 50 && t != 59 &&
            !(t >= 44 && t <= 47) && !(t >= 51 && t <= 53))
            line = line " " t "=" r[t, "enable"] "/" r[t, "disable"]
          print "       " p ":" line }' "$WORK/out"
done
finish
