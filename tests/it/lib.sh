# lib.sh — helpers for integration tests (sourced by the tests, tests/it/AREA/NAME.sh).
#
# The driver (tests/run.sh) exports: JAVA (java of the JDK under test), JDK_MAJOR, SHIM
# (build/libjvmpishim.so), AGENTS (build/agents, the legacy agents lib*.so), CLASSES
# (build/classes, the Java workloads), WORK (an empty directory for this test), ROOT,
# ARCH_BUILD (build/ or build/i386/: the JDK's architecture's build, for its native JVMTI
# tools/) and ID_BYTES (8, or 4 on i386: the width of the ids in the agents' dumps).
# A test calls run_java, then checks with expect_* ; it ends with `finish`. Every check
# prints "ok ..." or "FAIL ..."; finish exits 1 if any check failed.
set -u
nfail=0; nok=0
cd "$WORK" || exit 1

# run_java ARGS... — run $JAVA with ARGS (stdout -> $WORK/out, stderr -> $WORK/err, status -> RC),
# under a timeout of ${JAVA_TIMEOUT:-120}s. JVMPI_TEST_JAVA_OPTS (e.g. -Xcheck:jni, set by
# tests/run.sh --xcheck-jni) goes before ARGS; then out and err of every run are also
# appended to $WORK/java-runs.log, because a test's later run overwrites them.
run_java() {
  # shellcheck disable=SC2086 # JVMPI_TEST_JAVA_OPTS is a list of options
  timeout -k 5 "${JAVA_TIMEOUT:-120}" "$JAVA" -Xshare:auto ${JVMPI_TEST_JAVA_OPTS:-} "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  echo "+ java ${JVMPI_TEST_JAVA_OPTS:+$JVMPI_TEST_JAVA_OPTS }$* -> rc=$RC"
  if [ -n "${JVMPI_TEST_JAVA_OPTS:-}" ]; then
    { echo "=== java $* -> rc=$RC"; echo "--- stdout"; cat "$WORK/out"; echo "--- stderr"; cat "$WORK/err"; } >>"$WORK/java-runs.log"
  fi
}
# shim_arg AGENT [AGENT_OPTIONS] [SHIM_OPTIONS] — the -agentpath argument for a bundled agent.
# With JVMPI_TEST_RECORD=1 in the environment, the run also records (record=) into
# $WORK/run-*.jvmpirec, and finish holds each recording to the JVMPI contract.
shim_arg() {
  local a="$AGENTS/lib$1.so" o="${3:-}"
  if [ "${JVMPI_TEST_RECORD:-0}" = 1 ] && [[ "$o" != *record=* ]]; then
    o="record=$(mktemp "$WORK/run-XXXXXX.jvmpirec")${o:+,$o}"
  fi
  [ -n "$o" ] && o="$o,"
  if [ $# -ge 2 ] && [ -n "$2" ]; then echo "-agentpath:$SHIM=${o}legacy=$a:$2"; else echo "-agentpath:$SHIM=${o}legacy=$a"; fi
}
ok()   { nok=$((nok+1)); echo "ok   $*"; }
bad()  { nfail=$((nfail+1)); echo "FAIL $*"; }
# expect_rc N — the last run_java exited with N.
expect_rc() { if [ "$RC" -eq "$1" ]; then ok "exit status $1"; else bad "exit status $RC, expected $1"; show; fi; }
# expect_grep FILE ERE [what] — FILE ($WORK/out|err or any) has a line matching ERE.
expect_grep() { if grep -Eq -- "$2" "$1"; then ok "${3:-$(basename "$1") has /$2/}"; else bad "${3:-$(basename "$1") lacks /$2/}"; show "$1"; fi; }
# expect_nogrep FILE ERE [what] — no line matches.
expect_nogrep() { if grep -Eq -- "$2" "$1"; then bad "${3:-$(basename "$1") has unexpected /$2/}"; grep -E -- "$2" "$1" | head -5 | sed 's/^/     > /'; else ok "${3:-$(basename "$1") has no /$2/}"; fi; }
# expect_count FILE ERE N [what] — exactly N lines match.
expect_count() { local c; c=$(grep -Ec -- "$2" "$1"); if [ "$c" -eq "$3" ]; then ok "${4:-$3 lines /$2/}"; else bad "${4:-/$2/}: $c lines, expected $3"; show "$1"; fi; }
# expect_eq GOT WANT what
expect_eq() { if [ "$1" = "$2" ]; then ok "$3 = $2"; else bad "$3 = '$1', expected '$2'"; fi; }
show() { local f; for f in "${1:-$WORK/out}" "$WORK/err"; do [ -f "$f" ] && { echo "     --- $(basename "$f") (last 15 lines)"; tail -n 15 "$f" | sed 's/^/     | /'; }; done; }
skip() { echo "$*"; exit 77; }
# check_recordings — JVMPI_TEST_RECORD=1: build/jvmpitrace check on each run's recording (a
# run killed on purpose leaves one without its end, which may be cut: that is said, not judged).
check_recordings() {
  local r st
  for r in "$WORK"/run-*.jvmpirec; do
    [ -s "$r" ] || continue
    "$ROOT/build/jvmpitrace" check --max=5 "$r" >"$r.check" 2>&1
    st=$?
    if [ $st -eq 0 ]; then ok "recording $(basename "$r"): $(tail -n 1 "$r.check")"
    elif [ $st -eq 2 ] && grep -q 'truncated:' "$r.check"; then echo "     recording $(basename "$r"): cut (a killed run): $(grep 'truncated:' "$r.check")"
    else bad "recording $(basename "$r"): jvmpitrace check exit $st"; grep -E '^VIOLATION|^    #|^checked|damaged' "$r.check" | head -n 12 | sed 's/^/     > /'; fi
  done
}
finish() { [ "${JVMPI_TEST_RECORD:-0}" = 1 ] && check_recordings; echo "$nok checks ok, $nfail failed"; [ "$nfail" -eq 0 ]; exit $?; }
