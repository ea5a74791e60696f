#!/bin/bash
# ids.sh — what resolving object ids costs (docs/performance.md, "Object ids").
#
#   bench/ids.sh [ensure] [dumpask] [dumpobj] [inside] [classes] [dumpall] [badids] [fresh]
#                                                         default: all of them
#
# Environment: BENCH_JDKS (default: tools/find-jdk.sh all), BENCH_IDS_HEAPS (live objects,
# default "100000 1000000 4000000"), BENCH_IDS_ROUNDS (ensure rounds, default 3),
# BENCH_IDS_OBJDUMPS (OBJECT_DUMP requests per dumpask run, default 1000), BENCH_TIMEOUT.
# Needs `make all` (the agent is legacy-agents/ids_tracer.c, the workload tests/java/IdsWork).
#
# ensure   IdsWork ensure 4 6000 HEAP: HEAP live objects, then 4 threads make 24000 objects and
#          call two methods on each, METHOD_ENTRY2 on. Configurations, side by side, order
#          rotating per round: the shim with the ensure-defined tracer (RequestEvent
#          (OBJECT_ALLOC) from the handler for every receiver not seen), the same tracer
#          without the requests ("norequest"), and no agent. Goal: ensure / norequest <= 1.3,
#          flat as HEAP grows. Time: the workload's own elapsed_ms around the threads; the
#          tracer also times its requests (us/request: inside RequestEvent, event included).
# dumpask  IdsWork dumpask HEAP 0 0 0: HEAP live objects; the tracer (option dumpbench) takes
#          a level-0 HEAP_DUMP under DisableGC, then RequestEvent(OBJECT_ALLOC) for 500 of its
#          ids spread over it, timing the dump and each request. Goal: <= 100 us a request,
#          everything it costs counted (the first request's share included), flat from 100 k
#          to 4 M. Also the memory the dump's kept facts take per object it listed (log=info).
# dumpobj  The same with RequestEvent(OBJECT_DUMP): the first request pays the one id-index
#          pass. Goals: dump + 500 requests <= 2x the dump; each request after the first
#          <= 100 us.
# inside   Both, asked from inside the HEAP_DUMP handler, for the dump being delivered.
# classes  The same dump, then RequestEvent(OBJECT_DUMP) for every class object in it (the
#          ids CLASS_LOAD named), as an analyzer that dumps each class it lists: what the
#          first costs, the mean of the others (goal: <= 100 us each after the first).
# dumpall  IdsWork dumpask HEAP 0 0 0: HEAP live objects; the tracer takes a level-0 HEAP_DUMP,
#          then RequestEvent(OBJECT_ALLOC) for every id in it, then OBJECT_DUMP for
#          BENCH_IDS_OBJDUMPS of them; it times each part. Goal: the whole <= 3x the dump,
#          OBJECT_DUMP for 100 k objects included; per-request cost flat as HEAP grows.
# fresh    IdsWork fresh HEAP 300: HEAP live objects, then 300 times a class defined in a new
#          loader, asked for in its CLASS_LOAD handler (RequestEvent(OBJECT_ALLOC, class_id)),
#          and an object of it converted with jobject2jobjectID and asked for at once. The
#          agent times each request (us/request). Goal: <= 100 us with 1 M live objects, flat
#          from 100 k to 4 M. Run on the shim alone (the requests are what is measured; no
#          native agent has JVMPI requests).
# badids   IdsWork badids HEAP HEAP/10 1000000: one million calls with garbage, freed and
#          wrong-kind ids, timed in the agent; the warning lines the shim printed are counted.
#
# Output: build/bench/ids-<date-time>/ (raw runs, results.tsv, report.txt); the tables go to
# stdout and report.txt.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SCEN=${*:-ensure dumpask dumpobj inside classes dumpall badids fresh}
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh all)}
HEAPS=${BENCH_IDS_HEAPS:-100000 1000000 4000000}
ROUNDS=${BENCH_IDS_ROUNDS:-3}
OBJDUMPS=${BENCH_IDS_OBJDUMPS:-1000}
TIMEOUT=${BENCH_TIMEOUT:-600}
SHIM=$ROOT/build/libjvmpishim.so
AG=$ROOT/build/agents/libids_tracer.so
CP=$ROOT/build/classes
[ -f "$SHIM" ] && [ -f "$AG" ] && [ -f "$CP/IdsWork.class" ] || { echo "ids.sh: run make all first" >&2; exit 2; }
OUT=$ROOT/build/bench/ids-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
exec > >(tee "$OUT/report.txt") 2>&1
echo "ids.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(uptime | sed 's/.*load average: //'); $(nproc) CPUs"
: >"$OUT/results.tsv"

run() { # NAME JAVA ARGS... -> $OUT/raw/NAME.{out,err}
  local name=$1; shift
  timeout -k 10 "$TIMEOUT" "$@" >"$OUT/raw/$name.out" 2>"$OUT/raw/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || echo "  $name: rc=$rc (see $OUT/raw/$name.err)"
}
val() { sed -n "s/.*[ ^]$2=\\([0-9.]*\\).*/\\1/p" "$OUT/raw/$1.out" | tail -n 1; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END { if (NR == 0) print "-"; else print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }

for j in $JDKS; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release")
  J=$j/bin/java
  for s in $SCEN; do
    case $s in
    ensure)
      echo; echo "== JDK $v ensure: 4 threads x 6000 new receivers, METHOD_ENTRY2; ratio = with requests / without (median of $ROUNDS rounds)"
      printf '%-9s %10s %10s %10s %8s %8s %12s\n' heap none_ms norequest ensure_ms ratio requests us/request
      for h in $HEAPS; do
        rs=""; e=""; nr=""; no=""; req=""; us=""
        for r in $(seq 1 "$ROUNDS"); do
          order="ensure norequest none"
          case $((r % 3)) in 2) order="norequest none ensure" ;; 0) order="none ensure norequest" ;; esac
          for c in $order; do
            n=jdk$v-ensure-$h-r$r-$c
            case $c in
              none) run "$n" "$J" -cp "$CP" IdsWork ensure 4 6000 "$h" ;;
              ensure) run "$n" "$J" "-agentpath:$SHIM=legacy=$AG:ensure" -cp "$CP" IdsWork ensure 4 6000 "$h" ;;
              norequest) run "$n" "$J" "-agentpath:$SHIM=legacy=$AG:ensure,norequest" -cp "$CP" IdsWork ensure 4 6000 "$h" ;;
            esac
          done
          a=$(val "jdk$v-ensure-$h-r$r-ensure" elapsed_ms); b=$(val "jdk$v-ensure-$h-r$r-norequest" elapsed_ms)
          c=$(val "jdk$v-ensure-$h-r$r-none" elapsed_ms)
          q=$(sed -n 's/^ids: ensure requests=\([0-9]*\).*/\1/p' "$OUT/raw/jdk$v-ensure-$h-r$r-ensure.out")
          u=$(sed -n 's/^ids: ensure timing .*us_per_request=\([0-9.]*\).*/\1/p' "$OUT/raw/jdk$v-ensure-$h-r$r-ensure.out")
          e="$e $a"; nr="$nr $b"; no="$no $c"; req="$req $q"; us="$us $u"
          [ -n "$a" ] && [ -n "$b" ] && rs="$rs $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
          printf '%s\tensure\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$h" "$r" "$c" "$b" "$a" "$q" >>"$OUT/results.tsv"
        done
        printf '%-9s %10s %10s %10s %8s %8s %12s\n' "$h" "$(echo "$no" | med)" "$(echo "$nr" | med)" "$(echo "$e" | med)" "$(echo "$rs" | med)" "$(echo "$req" | med)" "$(echo "$us" | med)"
      done ;;
    dumpask|dumpobj|inside|classes)
      kinds=alloc; [ "$s" = dumpobj ] || [ "$s" = classes ] && kinds=obj; [ "$s" = inside ] && kinds="alloc obj"
      for k in $kinds; do
        ins=""; [ "$s" = inside ] && ins=",inside"; [ "$s" = classes ] && ins=",classes"
        echo; echo "== JDK $v $s: DisableGC, level-0 dump, then RequestEvent($([ $k = obj ] && echo OBJECT_DUMP || echo OBJECT_ALLOC)) for $([ "$s" = classes ] && echo 'every class object in it' || echo '500 ids spread over it')$([ "$s" = inside ] && echo ', from the HEAP_DUMP handler')"
        printf '%-9s %9s %9s %10s %9s %12s %10s %9s\n' heap records dump_ms first_ms rest_us us/request "(d+r)/d" "B/object"
        for h in $HEAPS; do
          n=jdk$v-$s-$k-$h
          run "$n" "$J" "-agentpath:$SHIM=log=info,legacy=$AG:dumpbench,kind=$k$ins" -cp "$CP" IdsWork dumpask "$h" 0 0 0
          l=$(grep '^ids: dumpbench ' "$OUT/raw/$n.out")
          f() { echo "$l" | sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
          kept=$(grep -a 'kept the class and size of' "$OUT/raw/$n.err" | tail -n 1)
          bpo=$(echo "$kept" | awk '{ for (i = 1; i < NF; i++) { if ($i == "of" && $(i+2) == "objects") n = $(i+1); if ($(i+1) ~ /^bytes/) b = $i } } END { if (n > 0) printf "%.1f", b / n; else print "-" }')
          awk -v h="$h" -v rec="$(f records)" -v d="$(f dump_ms)" -v fu="$(f first_us)" -v r="$(f rest_us)" -v a="$(f asks_ms)" -v bpo="$bpo" -v fl="$(f failed)" -v asked="$(f asked)" 'BEGIN {
            if (rec == "" || d == "") { printf "%-9s (no result)\n", h; exit }
            n = asked != "" ? asked : (rec < 500 ? rec : 500)
            printf "%-9s %9d %9.0f %10.2f %9.2f %12.2f %10.2f %9s%s%s\n", h, rec, d, fu / 1000, r, a * 1000 / n, (d + a) / d, bpo, (fl > 0 ? "  FAILED " fl : ""), (n != 500 ? "  (" n " asked)" : "") }'
          printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$s" "$k" "$h" "$l" "$bpo" >>"$OUT/results.tsv"
        done
      done ;;
    dumpall)
      echo; echo "== JDK $v dumpall: level-0 dump, OBJECT_ALLOC for every id, OBJECT_DUMP for $OBJDUMPS"
      printf '%-9s %9s %9s %9s %10s %11s %9s %13s\n' heap records dump_ms alloc_ms us/request objdump_ms ms/objdump "(d+a)/d"
      for h in $HEAPS; do
        n=jdk$v-dumpall-$h
        run "$n" "$J" "-agentpath:$SHIM=log=info,legacy=$AG:dumpask,objdumps=$OBJDUMPS" -cp "$CP" IdsWork dumpask "$h" 0 0 0
        l=$(grep '^ids: dumpask times' "$OUT/raw/$n.out")
        rec=$(echo "$l" | sed -n 's/.*records=\([0-9]*\).*/\1/p'); d=$(echo "$l" | sed -n 's/.* dump_ms=\([0-9.]*\).*/\1/p')
        a=$(echo "$l" | sed -n 's/.*alloc_ms=\([0-9.]*\).*/\1/p'); od=$(echo "$l" | sed -n 's/.*objdump_ms=\([0-9.]*\).*/\1/p')
        nod=$(echo "$l" | sed -n 's/.*objdumps=\([0-9]*\).*/\1/p')
        grep -a 'ids: index pass' "$OUT/raw/$n.err" | sed 's/^/    /'
        awk -v h="$h" -v rec="$rec" -v d="$d" -v a="$a" -v od="$od" -v nod="$nod" 'BEGIN {
          if (rec == "" || d == "") { printf "%-9s (no result)\n", h; exit }
          printf "%-9s %9d %9.0f %9.0f %10.2f %11.0f %9.2f %13.2f\n", h, rec, d, a, a * 1000 / rec, od, nod ? od / nod : 0, (d + a) / d }'
        printf '%s\tdumpall\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$h" "$rec" "$d" "$a" "$nod" "$od" >>"$OUT/results.tsv"
      done ;;
    badids)
      echo; echo "== JDK $v badids: 1 M calls with garbage, freed and wrong-kind ids"
      printf '%-9s %8s %8s %9s %12s %14s\n' heap calls refused accepted ns/call warning_lines
      for h in $HEAPS; do
        n=jdk$v-badids-$h
        run "$n" "$J" "-agentpath:$SHIM=legacy=$AG:badids" -cp "$CP" IdsWork badids "$h" $((h / 10)) 1000000
        l=$(grep '^ids: badids calls' "$OUT/raw/$n.out")
        w=$(grep -c 'warning' "$OUT/raw/$n.err")
        printf '%-9s %8s %8s %9s %12s %14s\n' "$h" "$(echo "$l" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')" \
          "$(echo "$l" | sed -n 's/.*refused=\([0-9]*\).*/\1/p')" "$(echo "$l" | sed -n 's/.*accepted=\([0-9]*\).*/\1/p')" \
          "$(echo "$l" | sed -n 's/.*ns_per_call=\([0-9]*\).*/\1/p')" "$w"
        printf '%s\tbadids\t%s\t%s\t%s\n' "$v" "$h" "$l" "$w" >>"$OUT/results.tsv"
      done ;;
    fresh)
      echo; echo "== JDK $v fresh: 300 classes asked for in their CLASS_LOAD, 300 objects asked for right after jobject2jobjectID"
      printf '%-9s %10s %14s %10s %18s %8s
' heap classes class_us/req converted converted_us/req failed
      for h in $HEAPS; do
        n=jdk$v-fresh-$h
        run "$n" "$J" "-agentpath:$SHIM=legacy=$AG:fresh" -cp "$CP" IdsWork fresh "$h" 300
        l=$(grep '^ids: fresh ' "$OUT/raw/$n.out")
        f() { echo "$l" | sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
        printf '%-9s %10s %14s %10s %18s %8s
' "$h" "$(f class_requests)" "$(f class_us)" \
          "$(f converted_requests)" "$(f converted_us)" "$(f failed)"
        printf '%s\tfresh\t%s\t%s\n' "$v" "$h" "$l" >>"$OUT/results.tsv"
      done ;;
    *) echo "ids.sh: unknown scenario $s" >&2; exit 2 ;;
    esac
  done
done
echo; echo "raw output: $OUT"
