#!/bin/bash
# mkseeds.sh — regenerate the seed corpus in fuzz/corpus/ (run from anywhere, after `make`).
#
# options:   option strings as users write them (README, docs/options.md, the tests), and
#            a few that the parser must refuse.
# record:    record= files: synthetic ones written with the shim's encoder by fuzz/mkrecseed.c
#            (every record type, two threads, a chunk split, no end block, a cut, a damaged
#            byte), and a real recording of the lifecycle agent on Hello.
# dumpcheck: real dumps, captured the way tests/it/dumps/dump_heap.sh, dump_object.sh and
#            tests/it/monitors/mon_dump.sh capture them (the dump_agent and mon_dump legacy
#            agents on the DumpMarkers and MonDump workloads, on the build JDK), cut down to a few
#            KB by fuzz/mkseed.c: a handful of records of each type, with the class table
#            their CLASS_DUMPs need. Dumps hold pointers, so seeds are for 64-bit builds.
# The corpus is committed; this script documents where it came from.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JDK=${JDK:-$(tools/find-jdk.sh build)}
JAVA=$JDK/bin/java
W=$ROOT/build/fuzz/seedwork
OC=$ROOT/fuzz/corpus/options
DC=$ROOT/fuzz/corpus/dumpcheck
mkdir -p "$W" "$OC" "$DC"

# ---- options ----
n=0
while IFS= read -r line; do
  n=$((n + 1))
  printf '%s' "$line" >"$OC/seed-$(printf %02d $n)"
done <<'EOF'
legacy=/opt/old/libprof.so
legacy=/opt/old/libprof.so:heap=sites,file=x.txt
log=info,legacy=/opt/old/libprof.so:heap=sites,file=x.txt
legacy=prof:heap=sites
legacy=hprof
help
log=debug,help
log=debug,logfile=/x,help,legacy=/a/libx.so:k=v
logfile=/first,log=info,logfile=/second path,log=error,legacy=x
logfile=/tmp/a=b:c,legacy=x
checkdumps,log=info,legacy=/abs/build/agents/libdump_agent.so:heap
log=quiet,legacy=x
log=warn,legacy=x:
legacy=/a/libx.so:a=1,b=x:y=z,,c,legacy=q:r, sp ace
legacy=/a,b/libx.so:o
legacy=/a=b/libx.so
legacy=a,legacy=b
bogus,legacy=x
log=loud,legacy=x
logfile=,legacy=x
legacy=:opts
log=info,,legacy=x
help,
log=debug
report=/tmp/r.txt,log=info,legacy=/opt/old/libprof.so:heap=all
methods=jvmti,legacy=/opt/old/libprof.so:cpu=times
EOF

# ---- dumpcheck ----
cc -std=c11 -Wall -Wextra -Werror -O1 -D_GNU_SOURCE -Iinclude -Isrc -I"$JDK/include" -I"$JDK/include/linux" \
  -o "$W/mkseed" fuzz/mkseed.c shim/core/dumpcheck.c
run() { # DIR AGENT_SPEC CLASS
  mkdir -p "$W/$1"
  (cd "$W/$1" && timeout -k 5 60 "$JAVA" -agentpath:"$ROOT/build/libjvmpishim.so=legacy=$ROOT/build/agents/$2" \
     -cp "$ROOT/build/classes" "$3" 30000 >out 2>err) || { echo "mkseeds: $1 run failed"; tail "$W/$1/err"; exit 1; }
}
run heap libdump_agent.so:heap DumpMarkers
run object libdump_agent.so:object DumpMarkers
run monitor libmon_dump.so MonDump
rm -f "$DC"/seed-*
S=$W/mkseed
for l in 0 1 2; do
  "$S" heap$l "$W/heap/heap$l.dump" "$W/heap/classes.txt" "$DC/seed-heap$l" 4 256
  "$S" heap$l "$W/heap/heap$l.dump" "$W/heap/classes.txt" "$DC/seed-heap$l-wide" 12 1024
done
for f in "$W"/object/obj_*.dump; do
  b=$(basename "$f" .dump)
  "$S" object "$f" "$W/object/classes.txt" "$DC/seed-object-${b#obj_}" 1 100000
done
"$S" monitor "$W/monitor/monitor.dump" - "$DC/seed-monitor" 100 100000
# ---- record ----
RC=$ROOT/fuzz/corpus/record
mkdir -p "$RC"
rm -f "$RC"/seed-*
cc -std=c11 -Wall -Wextra -Werror -O1 -D_GNU_SOURCE -Iinclude -Ishim -I"$JDK/include" -I"$JDK/include/linux" \
  -o "$W/mkrecseed" fuzz/mkrecseed.c shim/core/recfmt.c
"$W/mkrecseed" "$RC"
(cd "$W" && timeout -k 5 60 "$JAVA" -agentpath:"$ROOT/build/libjvmpishim.so=record=$RC/seed-real-lifecycle,legacy=$ROOT/build/agents/liblifecycle.so" \
   -cp "$ROOT/build/classes" Hello >/dev/null 2>&1) || { echo "mkseeds: the lifecycle recording failed"; exit 1; }
du -sh "$OC" "$DC" "$RC"
