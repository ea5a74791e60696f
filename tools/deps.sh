#!/bin/bash
# deps.sh — what building and testing jvmpishim needs from the system, found and installed.
#
#   tools/deps.sh [--print] GOAL...     GOAL: build or demo (make, make demo), check (make
#                                       check), deb (make deb), all or setup (check and deb)
#   tools/deps.sh --ci GOAL...          CI: every package of the GOALs at the archive's current
#                                       version (installed or upgraded), then verified
#
# This file is the one list of the project's system requirements (Debian 12 package names),
# each with a probe that says whether what the package brings is already there. make demo,
# make check and make deb run it first (the Makefile's setup hook): nothing missing, it says
# nothing; run as root, it installs the missing packages, and only those, with apt-get, after
# an apt-get update (so at the archive's current version); run as another user it prints the
# exact command to run and fails, before anything is compiled. --print says what is missing and
# what would be run, and changes nothing. --ci is .ci/run's mode: CI must test what a new user
# gets from apt-get today, so every package is installed or upgraded, not only missing ones
# (with sudo -n when not root).
#
# An offline machine must get a message, not a hang: apt-get runs with network timeouts, and
# apt-get update with --error-on=any (a failed fetch is an error, not a warning over stale or
# empty lists) under a bound of JVMPISHIM_APT_TIMEOUT seconds (default 300).
#
# A mirror caught between two syncs serves an index that does not match its signed Release
# file ("File has unexpected size", "Hash Sum mismatch"); apt rejects it, rightly, and nothing
# listed only there can be installed. Such an update is tried JVMPISHIM_APT_TRIES times
# (default 3), JVMPISHIM_APT_RETRY_WAIT seconds apart (30); if an index is still rejected, the
# indexes that verified are used and the rejected ones are named. Then, if the install fails
# and an i386 index was among the rejected (on bookworm the i386 security index: every
# Multi-Arch: same library of the i386 JDK must match the amd64 one's security version), the
# :i386 packages are left out, loudly, and the rest installed: the i386 side is not built and
# not tested. --ci writes what it left out to the file JVMPISHIM_DEPS_UNAVAILABLE_FILE names;
# .ci/run passes it on as JVMPISHIM_DEPS_UNAVAILABLE, packages make's setup then does not ask
# for (warned once), and says at its end what was not tested. Nothing is ever installed from
# an index that did not verify.
#
# Probes look for the capability, not the package, where that is what the build uses: a JDK
# found by tools/find-jdk.sh (any JDK >= 17, however installed), a compiler that links, a
# header that preprocesses. On amd64, check and deb also need the i386 side (the shim is built
# for 32-bit JVMs too): the i386 architecture in dpkg, multilib compilers, the i386 JDK.
set -u
cd "$(dirname "$0")/.." || exit 1

mode=make
goals=()
for a in "$@"; do
  case "$a" in
    --print) mode=print ;;
    --ci) mode=ci ;;
    build|demo|check|deb|all|setup) goals+=("$a") ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "deps: unknown argument '$a' (goals: build, demo, check, deb, all, setup; options: --print, --ci)" >&2; exit 2 ;;
  esac
done
[ ${#goals[@]} -gt 0 ] || goals=(build)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/jvmpishim-deps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# --- probes: 0 if what the package brings is there -----------------------------------------
links() {  # links COMPILER LANG [FLAGS...]: COMPILER compiles and links a program
  local c=$1 lang=$2; shift 2
  command -v "${c%% *}" >/dev/null 2>&1 || return 1
  if [ "$lang" = c++ ]; then
    printf '#include <string>\nint main() { std::string s("x"); return (int)s.size() - 1; }\n' >"$tmp/p.cc"
    $c "$@" -pthread -o "$tmp/p" "$tmp/p.cc" >/dev/null 2>&1
  else
    printf '#include <stdio.h>\n#include <dlfcn.h>\nint main(void) { return dlopen == 0; }\n' >"$tmp/p.c"
    $c "$@" -pthread -o "$tmp/p" "$tmp/p.c" -ldl >/dev/null 2>&1
  fi
}
dpkg_has() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'; }  # of any architecture
clang_major() { clang --version 2>/dev/null | sed -n '1s/.*clang version \([0-9]*\).*/\1/p'; }
fuzzer_links() {
  command -v clang >/dev/null 2>&1 || return 1
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$tmp/f.c"
  clang -fsanitize=fuzzer -o "$tmp/f" "$tmp/f.c" >/dev/null 2>&1
}

# runs_i386: this kernel executes i386 programs. The probe is the smallest ELF32 program
# (i386 _start: exit(0), 232 bytes), written here so that nothing needs to be compiled first.
runs_i386() {
  case " ${JVMPISHIM_DEPS_PRETEND_MISSING:-} " in *" exec:i386 "*) return 1 ;; esac  # tests/check-deps.sh
  # shellcheck disable=SC2059 # the format is the program's bytes, as \xHH escapes
  printf '\x7f\x45\x4c\x46\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00\x01\x00\x00\x00\x54\x80\x04\x08\x34\x00\x00\x00\x70\x00\x00\x00\x00\x00\x00\x00\x34\x00\x20\x00\x01\x00\x28\x00\x03\x00\x02\x00\x01\x00\x00\x00\x54\x00\x00\x00\x54\x80\x04\x08\x54\x80\x04\x08\x09\x00\x00\x00\x09\x00\x00\x00\x05\x00\x00\x00\x01\x00\x00\x00\xb8\x01\x00\x00\x00\x31\xdb\xcd\x80\x00\x2e\x73\x68\x73\x74\x72\x74\x61\x62\x00\x2e\x74\x65\x78\x74\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0b\x00\x00\x00\x01\x00\x00\x00\x06\x00\x00\x00\x54\x80\x04\x08\x54\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x5d\x00\x00\x00\x11\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00' >"$tmp/exit32" && chmod +x "$tmp/exit32" && "$tmp/exit32" 2>/dev/null
}

probe() {  # probe PACKAGE: installed as a package, or what it brings is there another way
  case " ${JVMPISHIM_DEPS_PRETEND_MISSING:-} " in *" $1 "*) return 1 ;; esac  # tests/check-deps.sh
  case " $installed_pkgs " in *" $1 "*) return 0 ;; esac
  case "$1" in
    make)                         command -v make >/dev/null 2>&1 ;;
    build-essential)              links cc c && links c++ c++ ;;
    openjdk-17-jdk-headless)      [ -n "$(tools/find-jdk.sh build)" ] ;;
    uthash-dev)                   [ -f /usr/include/uthash.h ] ;;
    pkg-config)                   command -v pkg-config >/dev/null 2>&1 ;;
    procps)                       command -v pgrep >/dev/null 2>&1 && command -v ps >/dev/null 2>&1 ;;
    clang)                        command -v clang >/dev/null 2>&1 ;;
    libclang-rt-*-dev)            fuzzer_links ;;
    gcc-multilib)                 links gcc c -m32 ;;
    g++-multilib)                 links g++ c++ -m32 ;;
    openjdk-17-jdk-headless:i386) [ -n "$(tools/find-jdk.sh build x86)" ] ;;
    dpkg-dev)                     command -v dpkg-buildpackage >/dev/null 2>&1 ;;
    debhelper)                    command -v dh >/dev/null 2>&1 ;;
    lintian)                      command -v lintian >/dev/null 2>&1 ;;
    man-db)                       command -v man >/dev/null 2>&1 ;;
    spin)                         command -v spin >/dev/null 2>&1 ;;
    binutils-i686-linux-gnu)      command -v i686-linux-gnu-strip >/dev/null 2>&1 ;;
    qemu-user)                    command -v qemu-i386 >/dev/null 2>&1 ;;
    *)                            dpkg_has "$1" ;;
  esac
}

# --- the list ---------------------------------------------------------------------------------
# build: make, make demo. check: make check (the fuzz smoke run needs clang and its libFuzzer
# runtime; tests/it/lifecycle/deb_install.sh builds the packages and reads their manual pages
# with man; tests/check-model.sh model-checks the raw monitors' lock with spin). deb: make
# deb (lintian).
i386_side=no
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] && i386_side=yes
rt=libclang-rt-$(m=$(clang_major); echo "${m:-14}")-dev
pkgs=()
add() { local p; for p in "$@"; do case " ${pkgs[*]} " in *" $p "*) ;; *) pkgs+=("$p") ;; esac; done; }
for g in "${goals[@]}"; do
  add build-essential make openjdk-17-jdk-headless uthash-dev
  case "$g" in
    check|all|setup) add pkg-config procps clang "$rt" dpkg-dev debhelper man-db spin ;;
  esac
  case "$g" in
    deb|all|setup) add dpkg-dev debhelper lintian ;;
  esac
  # The i386 shim (gcc -m32 against the i386 JDK) is built where check and deb run on amd64;
  # libstdc++5:i386 is the C++ runtime of the g++ 3.3 era that old 32-bit agents link.
  case "$g" in
    check|deb|all|setup) [ $i386_side = yes ] && add gcc-multilib g++-multilib openjdk-17-jdk-headless:i386 libstdc++5:i386 ;;
  esac
  # qemu-user: where this kernel cannot execute i386 programs (built without IA32 emulation,
  # or with it turned off: "Exec format error"), tests/run.sh runs the i386 unit tests under
  # qemu-i386 (user-mode emulation) instead of skipping them.
  case "$g" in
    check|all|setup) [ $i386_side = yes ] && ! runs_i386 && add qemu-user ;;
  esac
  # dh_strip of the i386 packages, a cross build on amd64, runs i686-linux-gnu-strip (make
  # check builds the packages too: tests/it/lifecycle/deb_install.sh installs them).
  case "$g" in
    check|deb|all|setup) [ $i386_side = yes ] && add binutils-i686-linux-gnu ;;
  esac
done

# The packages of the list dpkg has installed, in one query (the probes are slower).
installed_pkgs=$(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' "${pkgs[@]}" 2>/dev/null |
                 awk -v native=":$(dpkg --print-architecture 2>/dev/null)" '$1 == "ii" {
                   p = $2; if (substr(p, length(p) - length(native) + 1) == native) p = substr(p, 1, length(p) - length(native)); print p }' |
                 tr '\n' ' ')

need_i386_arch() {  # a package of pkgs is :i386 and dpkg does not have i386 yet
  case " $* " in *":i386 "*) ;; *) return 1 ;; esac
  case " ${JVMPISHIM_DEPS_PRETEND_MISSING:-} " in *" arch:i386 "*) return 0 ;; esac
  ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx i386
}

# --- apt-get ----------------------------------------------------------------------------------
apt_opts=(-q -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20 -o Acquire::ftp::Timeout=20
          -o Acquire::Retries=1 -o DPkg::Lock::Timeout=120)
bound=${JVMPISHIM_APT_TIMEOUT:-300}
as_root=()

offline_hint() {
  echo "deps: the package archive could not be reached (is this machine offline, or its apt sources wrong?)." >&2
  echo "deps: needed, Debian 12 package names: $*" >&2
  echo "deps: install them from a mirror or local media, then run make again." >&2
}

# Rejected index lines of an apt-get update log: a mirror between syncs, not a network failure.
mismatch_only() {
  local errs
  errs=$(grep -E '^(E|Err):' "$1" | grep -v 'Some index files failed to download')
  [ -n "$errs" ] || return 1
  ! grep -E '^E:' <<<"$errs" | grep -vqE 'unexpected size|Hash Sum mismatch|Mirror sync in progress'
}
rejected=""  # the indexes an update left out (URLs), after its last try

apt_update() {
  local out=$tmp/update.log rc try tries=${JVMPISHIM_APT_TRIES:-3}
  for ((try = 1; ; try++)); do
    timeout -k 10 "$bound" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get "${apt_opts[@]}" --error-on=any update </dev/null >"$out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && return 0
    if [ $rc -eq 124 ] || ! mismatch_only "$out"; then
      [ $rc -eq 124 ] && echo "deps: apt-get update did not finish in $bound s (JVMPISHIM_APT_TIMEOUT); stopped it." >&2
      grep -E '^(E|W|Err):' "$out" | head -n 5 | sed 's/^/deps:   /' >&2
      return 1
    fi
    rejected=$(sed -n 's/^E: Failed to fetch \([^ ]*\) .*/\1/p' "$out" | tr '\n' ' ')
    [ "$try" -ge "$tries" ] && break
    echo "deps: the archive served an index that does not match its Release file (a mirror sync in progress?), try $try of $tries; again in ${JVMPISHIM_APT_RETRY_WAIT:-30} s: ${rejected% }" >&2
    sleep "${JVMPISHIM_APT_RETRY_WAIT:-30}"
  done
  echo "deps: after $tries tries the archive still serves indexes that do not match its Release file; going on with the indexes that verified, without: ${rejected% }" >&2
  grep -E '^E:' "$out" | grep -v 'Some index files' | head -n 3 | sed 's/^/deps:   /' >&2
  # The same update without --error-on=any: the verified indexes are kept, the rejected one
  # is left out (apt never uses an index that did not verify). It still exits 100 for the
  # rejected index; any other error is a failure.
  timeout -k 10 "$bound" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get "${apt_opts[@]}" update </dev/null >"$out" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && { [ $rc -eq 124 ] || ! mismatch_only "$out"; }; then
    grep -E '^(E|W|Err):' "$out" | head -n 5 | sed 's/^/deps:   /' >&2
    return 1
  fi
  return 0
}

# The install failed: may it go on without the :i386 packages? Only when an i386 index was
# rejected (what the install could not resolve is then most likely the i386 side's).
i386_index_rejected() { [ -n "$rejected" ] && grep -q 'binary-i386' <<<"$rejected"; }
without_i386() { local p; for p in "$@"; do case "$p" in *:i386) ;; *) echo "$p" ;; esac; done; }
only_i386() { local p; for p in "$@"; do case "$p" in *:i386) echo "$p" ;; esac; done; }
left_out=()

apt_install() {
  local out=$tmp/install.log rc
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get "${apt_opts[@]}" install -y --no-install-recommends "$@" </dev/null 2>&1 | tee "$out" | grep -E '^(Setting up|E:)' | sed 's/^/deps:   /'
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    if grep -qE 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Connection timed out' "$out"; then
      offline_hint "$@"
    else
      grep -E '^(E:| .*: (Pre)?Depends: )' "$out" | head -n 6 | sed 's/^/deps:   /' >&2
    fi
    return 1
  fi
}

# apt_install_or_skip_i386 PACKAGE...: install; if that fails while an i386 index was rejected,
# install the packages but the :i386 ones, and list those in left_out.
apt_install_or_skip_i386() {
  apt_install "$@" && return 0
  local rest i386
  mapfile -t i386 < <(only_i386 "$@")
  i386_index_rejected && [ ${#i386[@]} -gt 0 ] || return 1
  mapfile -t rest < <(without_i386 "$@")
  echo "deps: the install failed, and the archive's i386 index did not verify: installing all but the i386 packages (${i386[*]}); the i386 side will NOT be built or tested" >&2
  if [ ${#rest[@]} -gt 0 ]; then apt_install "${rest[@]}" || return 1; fi
  left_out=("${i386[@]}")
}

# --- CI: everything, at the archive's current version -----------------------------------------
if [ $mode = ci ]; then
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then as_root=(sudo -n); fi
  if need_i386_arch "${pkgs[@]}"; then
    echo "ci: dpkg --add-architecture i386 (the i386 shim is built and tested on amd64)"
    "${as_root[@]}" dpkg --add-architecture i386 || exit 1
  fi
  echo "ci: apt-get update, then install or upgrade to the archive's current version: ${pkgs[*]}"
  apt_update || { offline_hint "${pkgs[@]}"; exit 1; }
  apt_install_or_skip_i386 "${pkgs[@]}" || exit 1
  if [ ${#left_out[@]} -gt 0 ]; then
    echo "ci: NOT installed (the archive's i386 index did not verify): ${left_out[*]}"
    [ -n "${JVMPISHIM_DEPS_UNAVAILABLE_FILE:-}" ] && echo "${left_out[*]}" >"$JVMPISHIM_DEPS_UNAVAILABLE_FILE"
    mapfile -t pkgs < <(without_i386 "${pkgs[@]}")
  fi
  bad=0
  for p in "${pkgs[@]}"; do
    dpkg_has "$p" || { echo "ci: required package $p is not installed" >&2; bad=1; }
    probe "$p" || { echo "ci: $p is installed but what it brings is not usable (probe failed)" >&2; bad=1; }
  done
  [ $bad -eq 0 ] || exit 1
  echo "ci: packages: $(dpkg-query -W -f='${Package}:${Architecture}=${Version} ' "${pkgs[@]}" 2>/dev/null)"
  exit 0
fi

# --- make: only what is missing ---------------------------------------------------------------
# JVMPISHIM_DEPS_UNAVAILABLE: packages the archive could not give (.ci/run, from --ci above),
# not asked for again.
missing=()
for p in "${pkgs[@]}"; do
  probe "$p" && continue
  case " ${JVMPISHIM_DEPS_UNAVAILABLE:-} " in
    *" $p "*) echo "deps: $p is missing and not installable from this archive now (JVMPISHIM_DEPS_UNAVAILABLE): going on without it" >&2 ;;
    *) missing+=("$p") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && { [ $mode = print ] && echo "deps: nothing missing for: ${goals[*]}"; exit 0; }

steps=()
need_i386_arch "${missing[@]}" && steps+=("dpkg --add-architecture i386")
steps+=("apt-get update" "apt-get install -y --no-install-recommends ${missing[*]}")
joined=$(printf '%s && ' "${steps[@]}"); joined=${joined% && }
if [ $mode = print ]; then echo "deps: missing for make ${goals[*]}: ${missing[*]}"; else echo "deps: missing for make ${goals[*]}: ${missing[*]}" >&2; fi
if [ $mode = print ] || [ "$(id -u)" -ne 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then cmd="sh -c '$joined'"
  elif command -v sudo >/dev/null 2>&1; then cmd="sudo sh -c '$joined'"
  else cmd="su -c '$joined'"; fi
  if [ $mode = print ]; then
    echo "deps: would run: $cmd"
    exit 0
  fi
  echo "deps: installing them needs root. Run:" >&2
  echo "    $cmd" >&2
  echo "deps: then run make ${goals[*]} again." >&2
  exit 1
fi
command -v apt-get >/dev/null 2>&1 || {
  echo "deps: no apt-get here: install the equivalent of these Debian 12 packages, then run make again: ${missing[*]}" >&2
  exit 1; }
echo "deps: installing them: $joined" >&2
if need_i386_arch "${missing[@]}"; then dpkg --add-architecture i386 || exit 1; fi
apt_update || { offline_hint "${missing[@]}"; exit 1; }
apt_install_or_skip_i386 "${missing[@]}" >&2 || exit 1
still=()
for p in "${missing[@]}"; do
  case " ${left_out[*]} " in *" $p "*) continue ;; esac
  probe "$p" || still+=("$p")
done
if [ ${#still[@]} -gt 0 ]; then
  echo "deps: installed, but still not usable: ${still[*]}" >&2
  exit 1
fi
echo "deps: installed: ${missing[*]}" >&2
