#!/bin/bash
# check-model.sh — the raw monitors' lock protocol (shim/monitors/rawmon.c), model-checked
# with spin: tests/model/rawmon_lock.pml, every interleaving of 3 threads taking the monitor
# twice each (the uncontended compare-and-swap, the contended path with and without the
# spin, sleeping on the futex). Checked: mutual exclusion and no lost wake-up (no thread
# left asleep when the others are done). Then the same model with the rule that prevents
# lost wake-ups taken out (a woken thread takes the word with 1, as if no one else slept,
# instead of the exchange to 2): spin must find a thread left asleep, or this check could
# not fail. Any change to the lock's protocol changes the model with it.
# Needs spin (tools/deps.sh installs it for make check); last line "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
pass=0; fail=0
if ! command -v spin >/dev/null 2>&1; then
  echo "check-model: spin is not installed (tools/deps.sh check installs it)"
  echo "0 passed, 1 failed"
  exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/check-model.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

# verify NAME MODEL: spin's verifier, exhaustive (safety: assertions and invalid end states).
verify() {
  local d=$T/$1
  mkdir -p "$d" && cp "$2" "$d/model.pml" || return 2
  (cd "$d" && spin -a model.pml >spin.log 2>&1 &&
     ${CC:-cc} -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1 &&
     ./pan -m200000 >pan.log 2>&1) || { echo "check-model: $1: spin or pan did not run:"; tail -5 "$d"/*.log; return 2; }
  grep -q 'errors: 0$' "$d/pan.log"
}

if verify lock tests/model/rawmon_lock.pml; then
  pass=$((pass + 1))
  echo "ok   model: rawmon lock word, $(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1 states/p' "$T/lock/pan.log"): mutual exclusion, no lost wake-up"
else
  fail=$((fail + 1))
  echo "FAIL model: rawmon lock word:"
  grep -E 'assertion violated|invalid end state|errors:' "$T/lock/pan.log" | head -5 | sed 's/^/     /'
fi

sed 's|atomic { c = word; word = 2 }       /\* TAKE|atomic { c = word; if :: word == 0 -> word = 1 :: else -> skip fi }  /* TAKE|' \
  tests/model/rawmon_lock.pml >"$T/mutant.pml"
if cmp -s tests/model/rawmon_lock.pml "$T/mutant.pml"; then
  fail=$((fail + 1)); echo "FAIL model: the mutant is the model (the rule it takes out was not found)"
elif verify mutant "$T/mutant.pml"; then
  fail=$((fail + 1)); echo "FAIL model: a woken thread that forgets the other sleepers was not found to leave one asleep"
elif grep -q 'invalid end state' "$T/mutant/pan.log"; then
  pass=$((pass + 1)); echo "ok   model: the mutant (a woken thread takes the word with 1) is caught: a lost wake-up"
else
  fail=$((fail + 1)); echo "FAIL model: the mutant failed otherwise:"; tail -5 "$T/mutant/pan.log" | sed 's/^/     /'
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
