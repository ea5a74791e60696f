#!/bin/bash
# unload_race.sh — RequestEvent(CLASS_LOAD) for classes while they unload
# (legacy-agents/unload_race.c against tests/java/UnloadRace.java).
# 300 throw-away loaders each define IdentUnloadee, which the workload drops and collects;
# meanwhile the agent's own thread asks RequestEvent(CLASS_LOAD, id) for every id it was
# given, round and round. The shim's worker frees a class's record after its CLASS_UNLOAD;
# a request for that id at that moment must neither read freed memory nor crash. Checked:
# exit status 0; every answer SUCCESS with one REQUESTED CLASS_LOAD of that id named
# IdentUnloadee, or FAIL with none; most classes unloaded; requests answered and refused
# both seen (the race was run, not avoided). A read of a freed record shows here only if it
# crashes or garbles an answer; the reference count that prevents it (shim/classes/table.c) is
# what makes it impossible.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
R=300

run_java "$(shim_arg unload_race)" -cp "$CLASSES" UnloadRace $R
o=$WORK/out
expect_rc 0
expect_grep "$o" "^UnloadRace: rounds=$R " "workload finished"
expect_nogrep "$o" '^unload_race: FAIL' "no FAIL from the agent"
s=$(grep '^unload_race: summary ' "$o")
echo "     $s"
field() { echo "$s" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
expect_eq "$(field loads)" "$R" "CLASS_LOADs of IdentUnloadee"
expect_eq "$(field wrong)" 0 "answers that were neither SUCCESS with its CLASS_LOAD nor FAIL with none"
u=$(field unloads); a=$(field answered); f=$(field refused)
if [ -n "$u" ] && [ "$u" -ge $((R * 9 / 10)) ]; then ok "unloads: $u of $R classes"; else bad "unloads: '$u' of $R"; fi
if [ "${a:-0}" -gt 0 ] && [ "${f:-0}" -gt 0 ]; then ok "requests answered ($a) and refused ($f) while classes unloaded"
else bad "answered=$a refused=$f: the race was not run"; fi
expect_nogrep "$WORK/err" 'ERROR|fatal' "no shim errors"
finish
