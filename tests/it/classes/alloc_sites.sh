#!/bin/bash
# alloc_sites.sh — an allocation-site profiler written with the assert idiom runs to the end
# and counts exactly, and java.lang.Class's own Class object is as HotSpot gave it. Agent
# legacy-agents/alloc_sites.c: OBJECT_ALLOC enabled in JVM_OnLoad (so the objects that exist
# at start are announced too); for each OBJECT_ALLOC of a NORMAL_OBJECT it looks class_id up
# and, when it is unknown, insists that RequestEvent(CLASS_LOAD, class_id) succeeds and
# defines it, else prints "unknown class" and exits 1. Workload tests/java/AllocSites.java:
# known numbers of objects of its own classes at known sites, on main and 4 threads, and 20
# classes defined at run time by fresh loaders. Three runs:
#  - OBJECT_ALLOC only; with CLASS_LOAD enabled too (classload); classload with the mirror
#    checks (mirrors), beside the HPROF-style agent of ident_ondemand.sh in the same JVM
#    (legacy-agents/ident_ondemand.c, which asks RequestEvent(OBJECT_ALLOC) for each class
#    object it meets and relies on its chain of requests ending at java.lang.Class);
#  - each: exit status 0, no "unknown class", the per-class counts equal the workload's, and
#    per top frame (the method that runs the new) the site counts equal the workload's;
#  - mirrors (reference-behavior.md, OBJ_ALLOC and the start-up sweep): java.lang.Class's own
#    Class object is never announced unrequested; every other Class object announced names
#    java.lang.Class as its class_id; requested, java.lang.Class's has class_id NULL and is a
#    NORMAL_OBJECT, and those of Object, String and AllocSites name java.lang.Class;
#  - beside it, ident_ondemand's chain ends (max_depth <= 6), no object twice, no class_id ==
#    obj_id, no FAIL.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120

for mode in plain classload mirrors; do
  case $mode in
    plain) opts="" ;;
    classload) opts="classload" ;;
    mirrors) opts="classload,mirrors" ;;
  esac
  if [ $mode = mirrors ]; then
    run_java "$(shim_arg alloc_sites "$opts")" "$(shim_arg ident_ondemand)" -cp "$CLASSES" AllocSites
  else
    run_java "$(shim_arg alloc_sites "$opts")" -cp "$CLASSES" AllocSites
  fi
  o=$WORK/out
  cp "$o" "$WORK/out.$mode"; cp "$WORK/err" "$WORK/err.$mode"
  expect_rc 0
  expect_nogrep "$o" '^alloc_sites: unknown class' "[$mode] the agent never met an unknown class (no abort)"
  expect_grep "$o" '^AllocSites: done$' "[$mode] workload finished"
  expect_nogrep "$o" '^alloc_sites: FAIL' "[$mode] no FAIL from the agent"
  expect_grep "$o" '^alloc_sites: summary allocs=[1-9][0-9]* .* fails=0$' "[$mode] the agent's summary"
  expect_count "$o" '^AllocSites: count ' 4 "[$mode] the workload's counts of its 4 classes"
  expect_count "$o" '^AllocSites: site ' 3 "[$mode] the workload's counts of its 3 sites"
  # per class
  while read -r name n; do
    got=$(sed -n "s/^alloc_sites: count $(printf '%s' "$name" | sed 's/\$/\\$/g') \([0-9]*\)\$/\1/p" "$o")
    expect_eq "${got:-none}" "$n" "[$mode] OBJECT_ALLOCs of $name"
  done < <(sed -n 's/^AllocSites: count \([^ ]*\) \([0-9]*\)$/\1 \2/p' "$o")
  # per site, by top frame
  while read -r name m n; do
    got=$(awk -v C="$name" -v M="$m" '$1 == "alloc_sites:" && $2 == "site" && $3 == C { split($4, f, "<"); if (f[1] == M) s += $NF } END { print s + 0 }' "$o")
    expect_eq "$got" "$n" "[$mode] OBJECT_ALLOCs of $name at sites whose top frame is $m"
  done < <(sed -n 's/^AllocSites: site \([^ ]*\) \([^ ]*\) \([0-9]*\)$/\1 \2 \3/p' "$o")
  if [ $mode = mirrors ]; then
    m=$(grep '^alloc_sites: mirrors announced=' "$o"); echo "     $m"
    expect_grep "$o" '^alloc_sites: mirrors announced=[1-9][0-9]* wrong_class=0 ' "[$mode] every Class object announced names java.lang.Class as its class_id"
    expect_grep "$o" '^alloc_sites: mirrors .* jlc_unrequested=0 ' "[$mode] java.lang.Class's own Class object never announced unrequested"
    expect_grep "$o" '^alloc_sites: mirrors .* self_class=0 ' "[$mode] no OBJECT_ALLOC with class_id == obj_id"
    expect_grep "$o" '^alloc_sites: mirrors jlc_requested class_id=NULL is_array=0$' "[$mode] requested, java.lang.Class's own Class object has class_id NULL, NORMAL_OBJECT"
    expect_grep "$o" '^alloc_sites: mirrors .* requested_others_ok=3$' "[$mode] requested, the Class objects of Object, String and AllocSites name java.lang.Class"
    expect_nogrep "$o" '^ident_ondemand: FAIL' "[$mode] beside it: no FAIL from ident_ondemand"
    expect_grep "$o" '^ident_ondemand: summary .* twice=0 self_class=0 max_depth=[0-6] fails=0$' \
      "[$mode] beside it: ident_ondemand's chain of requests ended, no object announced twice"
  fi
done
finish
