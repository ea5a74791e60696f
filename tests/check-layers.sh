#!/bin/bash
# check-layers.sh — the shim's folders only include (and call) downward.
# The layers, lowest first (shim/README.md):
#   core/  classfile/  ->  events/  ->  classes/ memory/ threads/ methods/ monitors/ dumps/
#   ->  report/  ->  face/  ->  the entry point (shim/agent.c, shim/modules.c)
# A file may use its own folder and any folder of a lower rank; the areas are ranked in the
# order above, so no circle can span two folders. core/ and classfile/ use nothing but
# themselves (classfile/ is pure C: no JVM, no shim state). Three checks: every
# #include "folder/x.h" in shim/, and, when the objects are built, every symbol an object
# takes from another folder's object, and every header declaration of a symbol the objects
# define (a prototype in the wrong folder's header fails here even if nothing calls it).
cd "$(dirname "$0")/.."
rank() {
  case $1 in
    core|classfile) echo 0 ;; events) echo 1 ;; classes) echo 2 ;; memory) echo 3 ;;
    threads) echo 4 ;; methods) echo 5 ;; monitors) echo 6 ;; dumps) echo 7 ;;
    report) echo 8 ;; face) echo 9 ;; .) echo 10 ;; *) echo -1 ;;
  esac
}
allowed() { # allowed FROM TO
  [ "$1" = "$2" ] && return 0
  case $1 in core|classfile) return 1 ;; esac
  local a b; a=$(rank "$1"); b=$(rank "$2")
  [ "$a" -ge 0 ] && [ "$b" -ge 0 ] && [ "$b" -lt "$a" ]
}
pass=0; fail=0
bad() { echo "check-layers: $*"; fail=$((fail + 1)); }
for f in shim/*.[ch] shim/*/*.[ch]; do
  from=$(dirname "${f#shim/}")
  [ "$(rank "$from")" -ge 0 ] || { bad "$f: folder '$from' has no layer (add it to tests/check-layers.sh and shim/README.md)"; continue; }
  while IFS= read -r inc; do
    to=${inc%%/*}
    [ "$to" = "$inc" ] && to=.
    if allowed "$from" "$to"; then pass=$((pass + 1)); else bad "$f includes \"$inc\": $from/ may not use $to/"; fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | grep -v '^jvmpi\.h$')
done
# Symbols: which folder defines each global symbol of the shim's objects.
# Only objects whose source is still there: a stale one (of a file that moved) would name a
# symbol's folder wrongly.
objs=$(for o in build/obj/*.o build/obj/*/*.o; do
         s=shim/${o#build/obj/}; [ -f "${s%.o}.c" ] && echo "$o"; done)
if [ -n "$objs" ]; then
  defs=$(for o in $objs; do d=$(dirname "${o#build/obj/}"); nm -g --defined-only "$o" | awk -v d="$d" -v o="$o" '{print $3, d, o}'; done | sort -k1,1)
  for o in $objs; do
    from=$(dirname "${o#build/obj/}")
    src=shim/${o#build/obj/}; src=${src%.o}.c
    while read -r sym to def; do
      if allowed "$from" "$to"; then pass=$((pass + 1)); else bad "$src uses $sym from $to/ (${def#build/obj/}): $from/ may not use $to/"; fi
    done < <(nm -u "$o" | awk '{print $2}' | sort -u | join - <(echo "$defs"))
  done
  # Declarations: a global symbol of folder Y is declared in Y's headers only. A header of a
  # lower folder that declares what a higher one defines is a circle the linked-symbol check
  # above sees only once some object of the lower folder calls it (a call from an inline
  # helper in the header counts only where the helper is used). A header's declarations
  # are its top-level lines (column 0, not static, typedef or a directive): the name before
  # the first "(", or, for an extern variable, the last name before ";", "[" or "=".
  while read -r sym hdr to; do
    from=$(dirname "${hdr#shim/}")
    if [ "$from" = "$to" ]; then pass=$((pass + 1)); else bad "$hdr declares $sym, which $to/ defines: declare it in a header of $to/"; fi
  done < <(for h in shim/*.h shim/*/*.h; do
             awk -v h="$h" '
               /^(static|typedef|#)/ { next }
               /^extern[ \t]/ { s = $0; sub(/[;=].*$/, "", s); sub(/\[.*$/, "", s); n = split(s, a, /[^A-Za-z0-9_]+/)
                                 if (n > 0 && a[n] == "") n--
                                 if (n > 0) print a[n], h; next }
               /^[A-Za-z_]/ { if (match($0, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
                                s = substr($0, RSTART, RLENGTH); sub(/[ \t]*\($/, "", s); print s, h } }' "$h"
           done | sort -u -k1,1 -k2,2 | join - <(echo "$defs" | awk '{print $1, $2}'))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
