#!/bin/sh
# run-unit.sh BIN... — run unit test binaries, each with a timeout; last line "N passed, N failed".
pass=0; fail=0
for t in "$@"; do
  if out=$(timeout 60 "$t" 2>&1); then pass=$((pass+1)); echo "ok   unit $(basename "$(dirname "$t")")/$(basename "$t")"
  else fail=$((fail+1)); echo "FAIL unit $t"; echo "$out" | tail -20 | sed 's/^/     /'; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
