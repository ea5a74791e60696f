#!/bin/bash
# run.sh — the test driver behind `make check`.
#
#   tests/run.sh [--unit "BIN ..."] [--fuzz "BIN ..."|SKIP] [--jdk DIR] [--only GLOB] [--xcheck-jni]
#                [--modes "int c1"] [--modes-list FILE] [--qemu-list FILE] [--list]
#
# Runs the unit-test binaries given with --unit (no JVM), a ~20 s smoke run of each libFuzzer
# target given with --fuzz (fuzz/run.sh --smoke; SKIP: clang cannot build them, said loudly),
# then every integration test tests/it/AREA/NAME.sh once per JDK that tools/find-jdk.sh lists
# (JDK 17 must be among them; any missing expected JDK is reported loudly as skipped). AREA is
# only where the test is kept (tests/it/README.md lists them): a test is known by its NAME,
# which must be unique, and the tests run in order of NAME (C collation), whatever their AREA.
# Each test runs in its own process, in its own work directory, under a timeout. The last
# line is "N passed, N failed[, N skipped]".
# --only GLOB runs the tests whose NAME matches the shell pattern GLOB (e.g. 'mem_*'); a GLOB
# with a slash matches AREA/NAME (e.g. 'memory/*' runs one area).
# --list prints the tests that would run (NAME, then the script's path), one a line, and exits.
# --xcheck-jni adds -Xcheck:jni to every java that tests start through run_java (lib.sh), and
# keeps logs and work directories apart (build/test-logs-xcheck-jni, build/test-work-xcheck-jni);
# each test's build/test-work-xcheck-jni/jdkN/NAME/java-runs.log then holds all its JVMs' output.
# --modes "int c1" runs the integration tests again under other VM modes, after the default
# run: int = -Xint (interpreter only), c1 = -Xcomp -XX:TieredStopAtLevel=1 (every method
# compiled by C1 before its first call). Races between class loading, compilation and the
# start-up announcement show only there. With --modes-list FILE only the tests named in FILE
# (one name per line, '#' comments) run in those modes; the default run still runs them all.
# The mode's options go before the test's own, so a test that asks for a mode keeps it.
# Each JDK runs on the build of its architecture (build/ or build/i386/, make i386). Where
# the kernel cannot execute i386 programs, the i386 unit tests run under qemu-i386 and the
# i386 integration tests are skipped unless JVMPI_TEST_QEMU=1, but for those named in the
# file given with --qemu-list (one name per line, '#' comments), which run under qemu-i386
# in the default mode: the i386 smoke run of make check (tests/it/qemu.list).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
unit=""; fuzz=""; only="*"; jdks=""; sfx=""; modes=""; modes_list=""; list=no; qemu_list=""
while [ $# -gt 0 ]; do
  case "$1" in
    --unit) unit=$2; shift 2 ;;
    --fuzz) fuzz=$2; shift 2 ;;
    --jdk) jdks="$jdks $2"; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --modes-list) modes_list=$2; shift 2 ;;
    --qemu-list) qemu_list=$2; shift 2 ;;
    --list) list=yes; shift ;;
    --xcheck-jni) export JVMPI_TEST_JAVA_OPTS="${JVMPI_TEST_JAVA_OPTS:+$JVMPI_TEST_JAVA_OPTS }-Xcheck:jni"
                  sfx=-xcheck-jni; shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

# The integration tests --only selects: "NAME PATH" lines in order of NAME. A script left
# directly in tests/it/ (lib.sh aside) or two scripts of one NAME would be run wrongly or not
# at all: refused before anything runs.
stray=$(ls tests/it/*.sh 2>/dev/null | grep -vx 'tests/it/lib\.sh')
if [ -n "$stray" ]; then
  echo "run.sh: integration tests belong in an area folder, tests/it/AREA/: $(echo $stray)" >&2
  exit 2
fi
case "$only" in */*) globs="tests/it/$only.sh" ;; *) globs="tests/it/*/$only.sh" ;; esac
tests=$(for t in $globs; do [ -f "$t" ] && echo "$(basename "$t" .sh) $t"; done | LC_ALL=C sort)
dups=$(echo "$tests" | awk 'NF {print $1}' | uniq -d)
if [ -n "$dups" ]; then
  echo "run.sh: two integration test scripts share a name: $(echo $dups)" >&2; exit 2
fi
tests_sel=()
[ -z "$tests" ] || mapfile -t tests_sel <<<"$tests"
if [ $list = yes ]; then
  [ ${#tests_sel[@]} -eq 0 ] || printf '%s\n' "${tests_sel[@]}"
  exit 0
fi

pass=0; fail=0; skip=0; failed_names=""
# Every JDK of this machine's architecture, then the i386 ones when the i386 shim is built
# (make i386); an i386 JDK without it is reported as skipped.
if [ -z "$jdks" ]; then
  jdks=$(tools/find-jdk.sh all)
  j32=$(tools/find-jdk.sh all x86)
  if [ -n "$j32" ] && [ "$(uname -m)" = x86_64 ]; then
    if [ -f build/i386/libjvmpishim.so ]; then
      jdks="$jdks $j32"
    else
      echo "SKIP integration tests on the i386 JDK ($(echo $j32)): build/i386/libjvmpishim.so not built (make i386)"
      skip=$((skip+1))
    fi
  fi
fi
# i386 binaries on a kernel that cannot execute them (no IA32 emulation: "Exec format
# error") run under qemu-i386 (user mode, package qemu-user) when it is installed, said
# once; without it their tests are skipped, loudly. i386_run BIN: the command that runs BIN.
i386_native=yes
if [ "$(uname -m)" = x86_64 ] && [ -x build/i386/hprofcheck ] &&
   { build/i386/hprofcheck >/dev/null 2>&1; [ $? -eq 126 ]; }; then
  i386_native=no
  if command -v qemu-i386 >/dev/null; then
    echo "NOTE this kernel does not execute i386 binaries: the i386 unit tests run under qemu-i386"
  fi
fi
i386_run() {
  if [ $i386_native = yes ]; then echo "$1"
  elif command -v qemu-i386 >/dev/null; then echo "qemu-i386 -L / $1"
  else return 1; fi
}
# i386_jdk DIR: a JDK directory whose bin/ programs run here: DIR itself, or, only when
# JVMPI_TEST_QEMU=1, a shadow of it in build/i386/ whose bin/ wrappers start DIR's programs
# under qemu-i386: a JVM there is 10-30x slower and its JIT-compiled code at times trips
# HotSpot's own checks (a crash in jcmd, without the shim), so it is for looking at one
# test, not for make check.
i386_jdk() {
  if [ $i386_native = yes ]; then echo "$1"; return 0; fi
  { [ "${JVMPI_TEST_QEMU:-0}" = 1 ] || [ -n "$qemu_list" ]; } && command -v qemu-i386 >/dev/null || return 1
  local sh=$ROOT/build/i386/jdk-qemu-$(basename "$1") e
  if [ ! -x "$sh/bin/java" ]; then
    rm -rf "$sh"; mkdir -p "$sh/bin"
    for e in "$1"/*; do [ "$(basename "$e")" = bin ] || ln -s "$e" "$sh/$(basename "$e")"; done
    for e in "$1"/bin/*; do
      printf '#!/bin/sh\nexec qemu-i386 -L / %s "$@"\n' "$(readlink -f "$e")" >"$sh/bin/$(basename "$e")"
      chmod +x "$sh/bin/$(basename "$e")"
    done
  fi
  echo "$sh"
}

LOGS=$ROOT/build/test-logs$sfx
mkdir -p "$LOGS"   # per-test logs are overwritten; parallel runs of other tests are left alone

for t in $unit; do
  a32=""; case "$t" in */i386/*) a32=-i386 ;; esac   # build/i386/unit/...: the i386 build's
  name="unit/$(basename "$(dirname "$t")")$a32/$(basename "$t")"
  log=$LOGS/$(echo "$name" | tr / _).log
  run=$t
  if [ -n "$a32" ] && [ $i386_native = no ] && case "$t" in */unit-san/*) true ;; *) false ;; esac; then
    skip=$((skip+1)); echo "SKIP $name: AddressSanitizer does not run under qemu-i386"; continue
  fi
  if [ -n "$a32" ] && ! run=$(i386_run "$t"); then
    skip=$((skip+1)); echo "SKIP $name: this kernel does not execute i386 binaries (install qemu-user)"; continue
  fi
  # shellcheck disable=SC2086 # run is a command and its program
  if timeout 120 $run >"$log" 2>&1; then
    pass=$((pass+1)); echo "ok   $name ($(tail -n 1 "$log"))"
  else
    fail=$((fail+1)); failed_names="$failed_names $name"; echo "FAIL $name"; tail -n 15 "$log" | sed 's/^/     | /'
  fi
done

if [ "$fuzz" = SKIP ]; then
  echo "SKIP fuzz smoke run: clang cannot build libFuzzer targets (install clang libclang-rt-14-dev)"
  skip=$((skip+1))
else
  for t in $fuzz; do
    name="fuzz/$(basename "$t" | sed 's/^fuzz_//')"
    log=$LOGS/$(echo "$name" | tr / _).log
    if fuzz/run.sh --smoke 20 "$t" >"$log" 2>&1; then
      pass=$((pass+1)); echo "$(tail -n 1 "$log")"
    else
      fail=$((fail+1)); failed_names="$failed_names $name"; sed 's/^/     | /' "$log"
    fi
  done
fi

have17=no
for j in $jdks; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)
  [ "$v" = 17 ] && have17=yes
done
if [ "$have17" = no ]; then
  echo "SKIP all integration tests on JDK 17: no JDK 17 found (install openjdk-17-jdk-headless)"
  skip=$((skip+1)); fail=$((fail+1)); failed_names="$failed_names jdk17-missing"
fi
have25=no
for j in $jdks; do
  [ "$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)" = 25 ] && have25=yes
done
if [ "$have25" = no ]; then
  echo "SKIP: no JDK 25 found on this machine; integration tests ran on: $(echo $jdks)"
  skip=$((skip+1))
fi

# mode_opts MODE — the java options of a VM mode.
mode_opts() {
  case "$1" in
    default) echo "" ;;
    int) echo "-Xint" ;;
    c1) echo "-Xcomp -XX:TieredStopAtLevel=1" ;;
    *) echo "run.sh: unknown VM mode '$1' (int, c1)" >&2; exit 2 ;;
  esac
}
in_modes_list() {
  [ -z "$modes_list" ] && return 0
  grep -v '^[[:space:]]*#' "$modes_list" | grep -qx -- "$1"
}
base_opts=${JVMPI_TEST_JAVA_OPTS:-}
for mode in default $modes; do
  mopts=$(mode_opts "$mode") || exit 2
  msfx=$sfx; mname=""
  if [ "$mode" != default ]; then msfx=$sfx-$mode; mname=-$mode; fi
  export JVMPI_TEST_JAVA_OPTS="$base_opts${mopts:+${base_opts:+ }$mopts}"
  [ -n "$JVMPI_TEST_JAVA_OPTS" ] || unset JVMPI_TEST_JAVA_OPTS
  seen_labels=" "
  for j in $jdks; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$j/release" 2>/dev/null)
  # Each JDK found runs the tests: two builds of one major (Debian's and another vendor's
  # 17) get labels of their own (jdk17, jdk17-<directory>), so neither's logs hide the other's.
  # Each JDK runs on the shim and agents of its architecture (OS_ARCH in its release file):
  # an i386 JDK on build/i386/ (make i386), labelled jdkN-i386.
  ab=$ROOT/build; idb=8
  case "$(sed -n 's/^OS_ARCH="\(.*\)"/\1/p' "$j/release" 2>/dev/null)" in
    i?86|x86) ab=$ROOT/build/i386; idb=4; v32=-i386 ;;
    *) v32="" ;;
  esac
  jrun=$j
  if [ -n "$v32" ] && ! jrun=$(i386_jdk "$j"); then
    echo "SKIP all integration tests on $j: this kernel does not execute i386 binaries (JVMPI_TEST_QEMU=1 runs them under qemu-i386, package qemu-user, slowly)"
    skip=$((skip+1)); continue
  fi
  # Under qemu without JVMPI_TEST_QEMU=1: only the tests --qemu-list names, default mode only.
  qemu_only=no
  if [ -n "$v32" ] && [ "$jrun" != "$j" ] && [ "${JVMPI_TEST_QEMU:-0}" != 1 ]; then
    qemu_only=yes
    [ "$mode" = default ] || continue
    echo "NOTE the i386 integration tests run under qemu-i386: only those $qemu_list names, with -Xint (JVMPI_TEST_QEMU=1 runs them all, slowly)"
  fi
  # -Xint under qemu: HotSpot's compiled code there at times fails its own check
  # guarantee(nm != NULL) in RelocIterator (a JVM abort with no shim frame on the stack,
  # seen in 1 of 28 smoke runs, and in jcmd, which loads no shim); the interpreter does not.
  jopts=${JVMPI_TEST_JAVA_OPTS:-}
  [ $qemu_only = yes ] && jopts="-Xint${jopts:+ $jopts}"
  lab=jdk$v$v32
  case "$seen_labels" in *" $lab "*) lab=jdk$v$v32-$(basename "$j") ;; esac
  seen_labels="$seen_labels$lab "
  for entry in ${tests_sel[@]+"${tests_sel[@]}"}; do
    tname=${entry%% *}; t=${entry#* }
    if [ "$mode" != default ] && ! in_modes_list "$tname"; then continue; fi
    if [ $qemu_only = yes ] && ! grep -v '^[[:space:]]*#' "$qemu_list" | grep -qx -- "$tname"; then continue; fi
    name="$lab$mname/$tname"
    work=$ROOT/build/test-work$msfx/$lab/$tname
    rm -rf "$work"; mkdir -p "$work"
    log=$LOGS/${lab}${mname}_$tname.log
    start=$(date +%s)
    JVMPI_TEST_JAVA_OPTS=$jopts JDK_HOME_T=$jrun JDK_MAJOR=$v JAVA=$jrun/bin/java SHIM=$ab/libjvmpishim.so ARCH_BUILD=$ab ID_BYTES=$idb \
      AGENTS=$ab/agents CLASSES=$ROOT/build/classes WORK=$work ROOT=$ROOT VM_MODE=$mode \
      timeout -k 10 300 bash "$t" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    # A shell error (a bad expansion, an unset variable) aborts the command it is in, which
    # may be a whole loop of checks, and bash goes on: such a test must not pass.
    if grep -Eq '\.sh: line [0-9]+: ' "$log"; then
      [ $rc -eq 0 ] && rc=1
      echo "shell error in the test script:" >>"$log"
      grep -E '\.sh: line [0-9]+: ' "$log" | head -n 3 >>"$log"
    fi
    if [ $rc -eq 0 ]; then
      pass=$((pass+1)); echo "ok   $name (${secs}s)"
    elif [ $rc -eq 77 ]; then
      skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$log")"
    else
      [ $rc -eq 124 ] && echo "timeout after 300s" >>"$log"
      fail=$((fail+1)); failed_names="$failed_names $name"
      # The failed checks first (a CI log keeps only so much), then how the test ended.
      echo "FAIL $name (rc=$rc, ${secs}s; log: $log)"
      { grep -A8 '^FAIL ' "$log" | head -n 40; echo "..."; tail -n 12 "$log"; } | sed 's/^/     | /'
    fi
  done
  done
done
[ $fail -eq 0 ] || echo "failed:$failed_names"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
