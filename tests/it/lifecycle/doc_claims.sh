#!/bin/bash
# doc_claims.sh — what the docs claim about availability holds for the built shim.
#
# EnableEvent answers: docs/mapping.md says which events answer JVMPI_SUCCESS (every row
# whose status is exact or differs, but the request-only dumps its "EnableEvent answers"
# paragraph names) and which JVMPI_NOT_AVAILABLE (the rest, and every number with no row);
# docs/porting.md's at-a-glance table says, where a row claims an answer ("answers
# `SUCCESS`" / "answers `NOT_AVAILABLE`"), the first answer for that event. The eventcodes
# agent asks EnableEvent for every number from -3 to 70 in JVM_OnLoad; each answer must be
# the one claimed.
# Options: the =help text in README.md is what the shim prints, and every option the help
# names has its row in docs/options.md's table, and the other way round.
# Messages: every message the docs quote as the shim's (`jvmpishim: LEVEL: TEXT`) is in
# the built library: each ": "-separated piece of TEXT, less run-time numbers in
# parentheses and <placeholders>, is one of its strings.
source "$ROOT/tests/it/lib.sh"
MAP=$ROOT/docs/mapping.md

echo "--- EnableEvent answers"
run_java "$(shim_arg eventcodes)" -cp "$CLASSES" Hello
expect_rc 0
declare -A got
while read -r t rc; do got[$t]=$rc; done < <(sed -nE 's/^eventcodes: onload enable t=(-?[0-9]+) rc=([0-9]+)$/\1 \2/p' "$WORK/out")
[ "${#got[@]}" -eq 74 ] && ok "the agent asked for all 74 numbers" || bad "the agent printed ${#got[@]} answers, not 74"
# The request-only dumps, as the paragraph names them.
para=$(awk '/^\*\*EnableEvent answers\*\*/{p=1} p&&/^$/{exit} p' "$MAP" | tr '\n' ' ')
reqonly=" $(echo "$para" | sed -nE 's/.*except the request-only dumps (.*), which answer.*/\1/p' | grep -oE '[0-9]+ `' | tr -d ' `' | tr '\n' ' ')"
[ "$reqonly" != " " ] && ok "mapping.md names the request-only dumps:$reqonly" || bad "mapping.md's EnableEvent paragraph names no request-only dump"
declare -A claim
while IFS='|' read -r _ item status _; do
  n=$(echo "$item" | sed -nE 's/^ *([0-9]+) `.*/\1/p'); [ -n "$n" ] || continue
  status=$(echo "$status" | xargs)
  case "$status" in
    exact|differs) [[ "$reqonly " == *" $n "* ]] && claim[$n]=1 || claim[$n]=0 ;;
    *) claim[$n]=1 ;;
  esac
done < <(grep -E '^\| [0-9]+ `' "$MAP")
nbad=0
for t in $(seq -3 70); do
  want=${claim[$t]:-1}   # no row: no such event
  [ "${got[$t]:-?}" = "$want" ] || { nbad=$((nbad+1)); echo "     EnableEvent($t): the shim answers ${got[$t]:-?}, mapping.md claims $want"; }
done
[ "$nbad" -eq 0 ] && ok "mapping.md's claims hold for all 74 numbers (${#claim[@]} rows)" || bad "$nbad EnableEvent answers differ from mapping.md"
# porting.md: the at-a-glance rows that claim an answer.
nchk=0; nbad=0
while IFS= read -r line; do
  name=$(echo "$line" | sed -nE 's/^\| ([A-Z_0-9]+) \|.*/\1/p'); [ -n "$name" ] || continue
  ans=$(echo "$line" | grep -oE 'answers `(JVMPI_)?(SUCCESS|NOT_AVAILABLE)`' | head -n 1 | grep -oE 'SUCCESS|NOT_AVAILABLE')
  [ -n "$ans" ] || continue
  n=$(grep -E "^\| [0-9]+ \`$name\` " "$MAP" | sed -nE 's/^\| ([0-9]+) .*/\1/p')
  [ -n "$n" ] || { bad "porting.md: $name is no event of mapping.md"; continue; }
  [ "$ans" = SUCCESS ] && want=0 || want=1
  nchk=$((nchk+1))
  [ "${got[$n]:-?}" = "$want" ] || { nbad=$((nbad+1)); echo "     porting.md: $name answers $ans, the shim answers ${got[$n]:-?}"; }
done < "$ROOT/docs/porting.md"
[ "$nchk" -ge 1 ] && [ "$nbad" -eq 0 ] && ok "porting.md's $nchk claimed EnableEvent answers hold" || bad "porting.md: $nbad of $nchk claimed answers differ"

echo "--- options"
run_java "-agentpath:$SHIM=help" -version
expect_rc 0
awk '/^The option grammar, as `=help` prints it:/{p=1; next} p && /^A command line/{exit} p' "$ROOT/README.md" |
  sed -e 's/^    //' | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' >"$WORK/help.readme"
sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' "$WORK/out" >"$WORK/help.shim"
if diff "$WORK/help.readme" "$WORK/help.shim" >"$WORK/help.diff"; then ok "README's =help text is what the shim prints"
else bad "README's =help text differs from the shim's"; sed 's/^/     /' "$WORK/help.diff" | head -20; fi
helpopts=$(sed -nE 's/^  ([a-z]+)(=[^ ]*)? {2,}.*/\1/p' "$WORK/help.shim" | sort -u)
docopts=$(awk '/^\| `legacy=AGENT/{p=1} p&&!/^\|/{exit} p' "$ROOT/docs/options.md" |
  sed -nE 's/^\| `([a-z]+)(=[^`]*)?` \| .*/\1/p' | sort -u)
[ -n "$helpopts" ] && [ "$helpopts" = "$docopts" ] && ok "docs/options.md's table has exactly the options =help names: $(echo $helpopts)" ||
  bad "options: =help names '$(echo $helpopts)', docs/options.md's table '$(echo $docopts)'"

echo "--- messages the docs quote"
strings -n 4 "$SHIM" >"$WORK/strings"
nchk=0; nbad=0
while IFS= read -r msg; do
  text=$(echo "$msg" | sed -E 's/^`jvmpishim: (error|warning|info|debug): //; s/`$//')
  while IFS= read -r piece; do
    piece=$(echo "$piece" | sed -E 's/ *\([0-9]+\)//g; s/<[^>]*>//g; s/\.\.\.//g; s/^ *//; s/ *$//')
    [ "${#piece}" -ge 8 ] || continue
    nchk=$((nchk+1))
    grep -qF -- "$piece" "$WORK/strings" || { nbad=$((nbad+1)); echo "     not in the library: '$piece' (from $msg)"; }
  done < <(echo "$text" | sed 's/: /\n/g')
done < <(cat "$ROOT"/docs/*.md "$ROOT/README.md" | grep -oE '`jvmpishim: (error|warning|info|debug): [^`]*`')
[ "$nchk" -ge 2 ] && [ "$nbad" -eq 0 ] && ok "the $nchk quoted message pieces are in the library" || bad "$nbad of $nchk quoted message pieces are not in the library"
finish
