#!/bin/bash
# delivery.sh — the shim's own share of delivering one event, against the floor of the same
# mechanism (docs/performance.md, "Delivering one event").
#
#   bench/delivery.sh [KIND ...]     KIND: entry entry2 exit insn alloc tls (default: all)
#
# Environment: BENCH_JDKS (default: the build JDK only), DELIVERY_CALLS (MethodCalls
# iterations, default 200000), DELIVERY_ALLOCS (Alloc objects, default 200000),
# DELIVERY_WALL_ROUNDS (CPU-time rounds, default 3; 0 skips them), DELIVERY_BEFORE (a
# shim build to compare with in those rounds), DELIVERY_SHIM (the shim measured, default
# build/libjvmpishim.so), DELIVERY_FLOOR (0: no floor runs), BENCH_TIMEOUT (per run,
# default 900 s). Needs `make all`; builds bench/ itself.
#
# Instruction counts (valgrind --tool=callgrind, repeatable on a shared machine): one JVM per
# kind with bench/agents/bdeliver.c (a handler that only counts its one event; tls: also
# GetThreadLocalStorage + SetThreadLocalStorage in it), and one JVM of the same workload
# without an agent. From the profile:
#   shim   = instructions inclusive of the shim's entry points (the probes' natives
#            Java_java_lang_JvmpiShimHook_*, the JVMTI callbacks cb_method_entry/exit and cb_sampled_alloc) minus those
#            inclusive of the agent's handler, per event delivered: the shim's own share
#   floor  = what the JVM spends outside the shim per event, i.e. the same mechanism with
#            an empty handler (the rewritten bytecode and the static native call for the
#            probes; the sampled-allocation machinery for OBJECT_ALLOC): from kinds entry and
#            alloc run again at twice the size, and the workload without an agent at both
#            sizes, [(all - shim entry points) at 2N - the same at N - (no agent at 2N - at
#            N)] / (events at 2N - at N), so that start-up and the one-off rewriting cancel.
#            JIT differences between the runs land here: the noisier of the figures
#            (DELIVERY_FLOOR=0 skips it)
#   tls    = for kind tls: instructions inclusive of the GetThreadLocalStorage and
#            SetThreadLocalStorage trampolines (slotN_...), per Get+Set pair
# Then DELIVERY_WALL_ROUNDS rounds, side by side in one run, of the workload thread's CPU time
# (MethodCalls 1000000, Alloc 2000000) under each agent through this shim against the shim
# in DELIVERY_BEFORE (another build), or against no agent (noisy on a shared machine).
#
# Output: build/bench/delivery-<date-time>/ (callgrind files, raw runs, report.txt).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
KINDS=${*:-entry entry2 exit insn alloc tls}
JDKS=${BENCH_JDKS:-$(tools/find-jdk.sh build)}
CALLS=${DELIVERY_CALLS:-200000}
ALLOCS=${DELIVERY_ALLOCS:-200000}
WROUNDS=${DELIVERY_WALL_ROUNDS:-3}
TIMEOUT=${BENCH_TIMEOUT:-900}
SHIM=${DELIVERY_SHIM:-$ROOT/build/libjvmpishim.so}
AG=$ROOT/build/bench/agents
CP=$ROOT/build/bench/classes
[ -f "$SHIM" ] || { echo "delivery.sh: run make all first" >&2; exit 2; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "delivery.sh: needs valgrind (callgrind)" >&2; exit 2; }
make -s -f bench/Makefile JDK="$(tools/find-jdk.sh build)" >/dev/null || { echo "delivery.sh: bench/ did not build" >&2; exit 2; }
OUT=$ROOT/build/bench/delivery-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
exec > >(tee "$OUT/report.txt") 2>&1
echo "delivery.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "shim: $SHIM, sha256 $(sha256sum "$SHIM" | cut -c1-16); git $(git rev-parse --short HEAD 2>/dev/null)"
FAILED=0

workload() { case $1 in alloc) echo "Alloc $2" ;; *) echo "MethodCalls $2" ;; esac; }

# cg NAME JAVA ARGS...: one JVM under callgrind -> $OUT/NAME.{cg,out,err}
cg() {
  local name=$1; shift
  (cd "$OUT" && timeout -k 10 "$TIMEOUT" valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.cg" \
     "$@" >"$OUT/$name.out" 2>"$OUT/$name.err") || { echo "  !! $name failed (see $OUT/$name.err)"; FAILED=1; }
}
# total instructions of a callgrind file
total() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }
# inclusive instructions of the functions matching the regex (exact symbol names), summed;
# only the functions' own lines (file:function [object]), not the parts of them inlined from
# other files, which callgrind_annotate lists apart as well
incl() {
  callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$1" 2>/dev/null |
    awk -v re="$2" '/\[[^]]*\]$/ { gsub(/,/, "", $1); n = $0; sub(/ \[[^]]*\]$/, "", n); sub(/.*:/, "", n)
                      if (n ~ ("^(" re ")$")) s += $1 } END { printf "%.0f", s }'
}
ENTRY='Java_java_lang_JvmpiShimHook_[A-Za-z0-9]*|cb_method_entry|cb_method_exit|cb_sampled_alloc'

for j in $JDKS; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release")
  echo
  echo "--- JDK $v: instructions per event (callgrind; MethodCalls $CALLS, Alloc $ALLOCS)"
  printf '  %-7s %10s %10s %12s\n' kind events shim "tls get+set"
  for k in $KINDS; do
    base=methods; n=$CALLS; [ "$k" = alloc ] && { base=alloc; n=$ALLOCS; }
    cg "jdk$v-$k" "$j/bin/java" "-agentpath:$SHIM=legacy=$AG/libbdeliver.so:$k" -cp "$CP" $(workload "$k" "$n")
    f=$OUT/jdk$v-$k.cg
    ev=$(sed -n 's/^bdeliver: kind=[0-9]* events=\([0-9]*\)/\1/p' "$OUT/jdk$v-$k.out")
    [ -n "$ev" ] && [ "$ev" -gt 0 ] || { echo "  !! $k: no events counted"; FAILED=1; continue; }
    ent=$(incl "$f" "$ENTRY"); hnd=$(incl "$f" notify)
    echo "$k $ev $(total "$f") $ent" >>"$OUT/jdk$v-sizes"
    t=""
    if [ "$k" = tls ]; then
      t=$(awk -v g="$(incl "$f" 'slot[0-9]*_GetThreadLocalStorage')" \
              -v s="$(incl "$f" 'slot[0-9]*_SetThreadLocalStorage')" -v e="$ev" \
              'BEGIN { printf "%.1f", (g + s) / e }')
    fi
    awk -v k="$k" -v e="$ev" -v s="$ent" -v h="$hnd" -v t="$t" \
      'BEGIN { printf "  %-7s %10d %10.1f %12s\n", k, e, (s - h) / e, t }'
  done
  # The floor: the same mechanism's cost outside the shim, from two sizes of the workload
  # (start-up and the one-off rewriting cancel): [(all - shim entry points) at 2N minus at N,
  # minus the same difference without an agent] / the difference in events.
  if [ "${DELIVERY_FLOOR:-1}" = 1 ]; then
    echo "  floor (instructions per event outside the shim, sizes N and 2N):"
    for k in entry alloc; do
      case " $KINDS " in *" $k "*) ;; *) continue ;; esac
      base=methods; n=$CALLS; [ "$k" = alloc ] && { base=alloc; n=$ALLOCS; }
      cg "jdk$v-$k-2n" "$j/bin/java" "-agentpath:$SHIM=legacy=$AG/libbdeliver.so:$k" -cp "$CP" $(workload "$k" $((2 * n)))
      cg "jdk$v-none-$base-1n" "$j/bin/java" -cp "$CP" $(workload "$k" "$n")
      cg "jdk$v-none-$base-2n" "$j/bin/java" -cp "$CP" $(workload "$k" $((2 * n)))
      f=$OUT/jdk$v-$k-2n.cg
      ev2=$(sed -n 's/^bdeliver: kind=[0-9]* events=\([0-9]*\)/\1/p' "$OUT/jdk$v-$k-2n.out")
      read -r _ ev1 all1 ent1 < <(grep "^$k " "$OUT/jdk$v-sizes")
      awk -v k="$k" -v e1="$ev1" -v e2="$ev2" -v a1="$all1" -v s1="$ent1" -v a2="$(total "$f")" \
          -v s2="$(incl "$f" "$ENTRY")" -v z1="$(total "$OUT/jdk$v-none-$base-1n.cg")" \
          -v z2="$(total "$OUT/jdk$v-none-$base-2n.cg")" \
        'BEGIN { printf "  %-7s %10.1f   (events %d and %d; shim entry points %.1f per event at 2N, handler included)\n", k,
                 ((a2 - s2) - (a1 - s1) - (z2 - z1)) / (e2 - e1), e1, e2, (s2) / e2 }'
    done
  fi
  [ "$WROUNDS" -gt 0 ] || continue
  # Wall and CPU time side by side: each agent through this shim, and through the shim in
  # DELIVERY_BEFORE (another build, e.g. the previous commit's) if given, else with no agent.
  # The agents: bdeliver for each kind, and the project's agents in these idioms: btracer
  # (raw monitor, GetMethodClass, GetCurrentThreadCpuTime per METHOD_ENTRY/EXIT), bmethods2
  # (METHOD_ENTRY2 + EXIT), ballocs (OBJECT_ALLOC + FREE + GC).
  OTHER=${DELIVERY_BEFORE:-}
  echo "--- JDK $v: CPU time of the workload thread, $WROUNDS rounds side by side, $([ -n "$OTHER" ] && echo "this shim against $OTHER" || echo "against no agent") (load $(cut -d' ' -f1 /proc/loadavg))"
  for a in $KINDS btracer bmethods2 ballocs; do
    lib=$AG/libbdeliver.so:$a; wl="MethodCalls 1000000"
    case $a in btracer|bmethods2|ballocs) lib=$AG/lib$a.so ;; esac
    case $a in alloc|ballocs) wl="Alloc 2000000" ;; esac
    for r in $(seq 1 "$WROUNDS"); do
      for side in new old; do
        args=("-agentpath:$SHIM=legacy=$lib")
        if [ $side = old ]; then
          if [ -n "$OTHER" ]; then args=("-agentpath:$OTHER=legacy=$lib"); else args=(); fi
        fi
        (cd "$OUT" && timeout -k 10 "$TIMEOUT" "$j/bin/java" "${args[@]}" -cp "$CP" $wl \
           >"$OUT/jdk$v-wall-$a-r$r-$side.out" 2>&1)
      done
    done
    for r in $(seq 1 "$WROUNDS"); do cat "$OUT/jdk$v-wall-$a-r$r-old.out" "$OUT/jdk$v-wall-$a-r$r-new.out"; done |
      awk -v a="$a" '/^BENCH/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "cpu_ms") c[n++] = kv[2]; if (kv[1] == "elapsed_ms") e[m++] = kv[2] } }
        END { for (i = 0; i + 1 < n; i += 2) { line = line sprintf(" %d/%d", c[i + 1], c[i]); r[k++] = c[i] > 0 ? c[i + 1] / c[i] : 0 }
              for (i = 1; i < k; i++) for (x = i; x > 0 && r[x - 1] > r[x]; x--) { t = r[x]; r[x] = r[x - 1]; r[x - 1] = t }
              printf "  %-9s cpu ms new/old per round:%s; median ratio %.3f\n", a, line, r[int((k - 1) / 2)] }'
  done
done
echo
echo "raw output in $OUT"
exit $FAILED
