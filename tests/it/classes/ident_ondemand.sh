#!/bin/bash
# ident_ondemand.sh — definitions on demand (the HPROF family) through the ident_ondemand
# agent (legacy-agents/ident_ondemand.c), workload tests/java/IdentOnDemand.java (8 threads
# defining and allocating classes at once). Run under MALLOC_PERTURB_ so freed memory is
# visibly garbage. Twice: with CLASS_LOAD enabled, and with classes learned only through
# RequestEvent(CLASS_LOAD).
#  - the chain of requests ends: java.lang.Class's own Class object has class_id NULL, so the
#    agent's recursion guard never trips (no OBJECT_ALLOC has class_id == obj_id);
#  - no object is announced twice: the class objects the agent requests in CLASS_LOAD (the
#    start-up replay included) get no second, unrequested OBJECT_ALLOC;
#  - the char* of CLASS_LOAD that the agent kept (requested or not) still read, at
#    JVM_SHUT_DOWN, the class and method names Java reports.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120
export MALLOC_PERTURB_=165

for mode in enabled requested; do
  opt=""; [ $mode = requested ] && opt=requested
  run_java "$(shim_arg ident_ondemand "$opt")" -cp "$CLASSES" IdentOnDemand
  o=$WORK/out
  cp "$o" "$WORK/out.$mode"; cp "$WORK/err" "$WORK/err.$mode"
  expect_rc 0
  expect_grep "$o" '^IdentOnDemand: done$' "[$mode] workload finished"
  expect_nogrep "$o" '^ident_ondemand: FAIL' "[$mode] no FAIL from the agent"
  expect_grep "$o" '^ident_ondemand: summary .* twice=0 self_class=0 max_depth=[0-6] fails=0$' \
    "[$mode] no object allocated twice, no class_id == obj_id, the chain ended"
  expect_grep "$o" '^ident_ondemand: summary allocs=[0-9]{4,} requested_allocs=[1-9][0-9]* ' "[$mode] allocations seen, class objects requested"
  if [ $mode = requested ]; then
    expect_grep "$o" '^ident_ondemand: summary .* requested_classes=[1-9][0-9]* ' "[$mode] classes learned by RequestEvent(CLASS_LOAD)"
  fi
  # Kept strings against Java's truth.
  sed -n 's/^IdentOnDemand: truth //p' "$o" | sort >"$WORK/truth.$mode"
  sed -n 's/^ident_ondemand: kept \(IdentOnDemand[^ ]*\)\( (requested)\)\{0,1\} methods=/\1 methods=/p' "$o" | sort >"$WORK/kept.$mode"
  # Every kept class reads exactly as Java says; every class that has instances was kept
  # (the main class has none: with CLASS_LOAD off, nothing makes the agent ask for it).
  wrong=$(comm -13 "$WORK/truth.$mode" "$WORK/kept.$mode")
  missing=$(comm -23 "$WORK/truth.$mode" "$WORK/kept.$mode" | grep -v '^IdentOnDemand methods=')
  if [ -s "$WORK/truth.$mode" ] && [ -z "$wrong" ] && [ -z "$missing" ]; then
    ok "[$mode] kept workload class and method names = Java's ($(wc -l <"$WORK/kept.$mode") classes)"
  else
    bad "[$mode] kept workload class and method names differ from Java's"
    echo "$wrong" | head -10 | sed 's/^/     kept, not Java: /'; echo "$missing" | head -10 | sed 's/^/     Java, not kept: /'
  fi
  for b in java.lang.Object java.util.zip.CRC32; do
    line=$(grep -E "^ident_ondemand: kept $b( \(requested\))? methods=" "$o" | head -1)
    if [ -z "$line" ]; then bad "[$mode] agent kept no $b"; continue; fi
    kept=$(echo "$line" | sed 's/.* methods=//' | tr ',' '\n' | sort -u)
    truth=$(sed -n "s/^IdentOnDemand: truth-boot $b methods=//p" "$o" | tr ',' '\n' | sort -u)
    missing=$(comm -23 <(echo "$truth") <(echo "$kept") | tr '\n' ' ')
    if [ -n "$truth" ] && [ -z "$missing" ] && ! echo "$line" | grep -q '?'; then
      ok "[$mode] kept $b: name and every declared method name still readable"
    else
      bad "[$mode] kept $b: missing [$missing] in: $line"
    fi
  done
  [ $mode = requested ] && expect_grep "$o" '^ident_ondemand: kept java.lang.Object \(requested\) ' "[$mode] java.lang.Object came from a request"
done
finish
