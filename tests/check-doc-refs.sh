#!/bin/bash
# check-doc-refs.sh — the docs' pointers into the sources still point somewhere.
# Users port code from docs/ by following "`shim/folder/file.c: name`" to the code; a file
# split or a function moved must not leave them at a name that is not there. Every such
# reference in docs/*.md and README.md must name a file that exists and, when a name
# follows, a function, type, macro or variable that file defines (or declares, for a
# header). A bare "`shim/folder/file.c`" must name a file that exists.
cd "$(dirname "$0")/.."
pass=0; fail=0
bad() { echo "check-doc-refs: $*"; fail=$((fail + 1)); }
while IFS=: read -r doc line ref; do
  path=${ref%%: *}
  [ -e "$path" ] || { bad "$doc:$line names $path, which does not exist"; continue; }
  if [ "$path" = "$ref" ]; then pass=$((pass + 1)); continue; fi
  # "file: a, b and c" names several; each must be there.
  names=$(echo "${ref#*: }" | tr ',' '\n' | sed 's/ and /\n/g' | tr -d ' `()' | grep -v '^$')
  for n in $names; do
    n=${n%%[^A-Za-z0-9_]*}
    [ -n "$n" ] || continue
    if grep -Eq "(^|[^A-Za-z0-9_])$n[[:space:]]*(\\(|\\[|=|;|\\{|,)|^#define $n\\b|^(struct|enum|union) $n\\b|\\} $n;" "$path"; then
      pass=$((pass + 1))
    else
      bad "$doc:$line names $n in $path, which has no such name"
    fi
  done
done < <(grep -noE '`shim/[a-z_/]+\.[ch](: [A-Za-z0-9_, ()]+)?`' docs/*.md README.md | tr -d '`')
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
