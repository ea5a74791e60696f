#!/bin/bash
# check-deps.sh — tools/deps.sh, the setup that make demo, make check and make deb run first,
# does what it says, without installing anything: apt-get and dpkg are stand-ins on PATH
# that log their arguments (dpkg passes the queries to the real one), and
# JVMPISHIM_DEPS_PRETEND_MISSING makes chosen packages look absent. Checked:
#   - on this machine (make check's own setup has run) nothing is missing for check;
#   - --print names exactly the missing packages and the one command that installs them
#     (with dpkg --add-architecture i386 when i386 is not yet a dpkg architecture);
#   - not root: it fails with that command and runs no apt-get (run as nobody when root);
#   - root: apt-get update (bounded, --error-on=any, network timeouts), then apt-get install
#     of the missing packages only, then the probes again;
#   - offline (apt-get update cannot fetch) and a hanging apt-get update (stopped after
#     JVMPISHIM_APT_TIMEOUT): a message that says so, no install, failure;
#   - a mirror between syncs (an index that does not match the Release file): the update
#     tried again, then the verified indexes used; where the rejected index is i386 and the
#     install fails, all but the :i386 packages installed, said, and (--ci) written down;
#     JVMPISHIM_DEPS_UNAVAILABLE keeps make's setup from asking for them again;
#   - --ci: update, then install (or upgrade) every package of the list, and verify.
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
has()   { if grep -Eq -- "$2" "$1"; then ok "$3"; else bad "$3: no /$2/ in:"; sed 's/^/     | /' "$1"; fi; }
hasnt() { if grep -Eq -- "$2" "$1"; then bad "$3: /$2/ in:"; sed 's/^/     | /' "$1"; else ok "$3"; fi; }

# Packages the archive could not give this machine (.ci/run sets this when an i386 index did
# not verify): the checks of this machine's own state (1 and 6) take them as the real setup
# does; every other check runs without it, on the inputs it sets.
unavail=${JVMPISHIM_DEPS_UNAVAILABLE:-}
unset JVMPISHIM_DEPS_UNAVAILABLE

T=$(mktemp -d "${TMPDIR:-/tmp}/check-deps.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir "$T/bin"
cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
case " $* " in
  *" update "*)
    case "${FAKE_APT:-}" in
      offline) echo "Err:1 http://deb.debian.org/debian bookworm InRelease"
               echo "  Temporary failure resolving 'deb.debian.org'"
               echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'" >&2
               exit 100 ;;
      hang) exec sleep 120 ;;
      mismatch-i386|mismatch-amd64)
        a=${FAKE_APT#mismatch-}
        # apt 2.6: a rejected index fails the update, with --error-on=any or without.
        echo "Err:4 http://deb.debian.org/debian-security bookworm-security/main $a Packages"
        echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-$a/Packages.xz  File has unexpected size (371952 != 372316). Mirror sync in progress? [IP: 192.0.2.1 80]"
        echo "E: Some index files failed to download. They have been ignored, or old ones used instead."
        exit 100 ;;
    esac ;;
  *" install "*) case "${FAKE_APT:-} $*" in
                   mismatch-*:i386*|mismatch-amd64*)
                     echo " openjdk-17-jdk-headless:i386 : Depends: zlib1g:i386 (>= 1:1.1.4) but it is not installable"
                     echo "E: Unable to correct problems, you have held broken packages."
                     exit 100 ;;
                 esac
                 skip=no
                 for p in "$@"; do
                   [ $skip = yes ] && { skip=no; continue; }
                   case "$p" in -o) skip=yes ;; -*|install) ;; *) echo "Setting up $p (1.0) ..." ;; esac
                 done ;;
esac
exit 0
EOF
cat >"$T/bin/dpkg" <<'EOF'
#!/bin/sh
case "$1" in
  --print-architecture|--print-foreign-architectures) exec /usr/bin/dpkg "$@" ;;
esac
echo "dpkg $*" >>"$FAKE_LOG"
EOF
chmod 755 "$T/bin/apt-get" "$T/bin/dpkg"
export FAKE_LOG=$T/log
touch "$FAKE_LOG"; chmod 666 "$FAKE_LOG"
PATH=$T/bin:$PATH
export PATH

# run OUT [env...] -- deps.sh ARGS: deps.sh's stdout+stderr to OUT, its status in RC.
run() {
  local out=$1; shift
  : >"$FAKE_LOG"
  env "$@" >"$out" 2>&1; RC=$?
}

# 1. Nothing missing here.
run "$T/o1" JVMPISHIM_DEPS_UNAVAILABLE="$unavail" tools/deps.sh --print check
[ $RC -eq 0 ] && ok "--print check exits 0" || bad "--print check exited $RC"
has "$T/o1" '^deps: nothing missing for: check$' "nothing missing for check on this machine"

# 2. --print: the missing ones, one command.
run "$T/o2" JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev clang" tools/deps.sh --print check
has "$T/o2" '^deps: missing for make check: uthash-dev clang$' "--print names exactly the missing packages"
has "$T/o2" "(sh|su) -c 'apt-get update && apt-get install -y --no-install-recommends uthash-dev clang'\$" "--print gives the command"
[ -s "$FAKE_LOG" ] && bad "--print ran: $(cat "$FAKE_LOG")" || ok "--print runs nothing"
run "$T/o2b" JVMPISHIM_DEPS_PRETEND_MISSING="arch:i386 openjdk-17-jdk-headless:i386" tools/deps.sh --print check
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  has "$T/o2b" "'dpkg --add-architecture i386 && apt-get update && apt-get install -y --no-install-recommends openjdk-17-jdk-headless:i386'\$" \
    "an :i386 package on a machine without i386 adds the architecture first"
fi
run "$T/o2c" JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev clang gcc-multilib" tools/deps.sh --print demo
has "$T/o2c" '^deps: missing for make demo: uthash-dev$' "make demo's setup asks only what building needs"

# 3. Not root: the command, a failure, no apt-get.
asuser=(); [ "$(id -u)" -eq 0 ] && asuser=(setpriv --reuid=65534 --regid=65534 --clear-groups)
run "$T/o3" JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev" "${asuser[@]}" tools/deps.sh build
[ $RC -eq 1 ] && ok "not root, something missing: exit 1" || bad "not root: exit $RC, expected 1"
has "$T/o3" "^    (sudo sh -c|su -c) 'apt-get update && apt-get install -y --no-install-recommends uthash-dev'\$" "not root: the exact command to run"
[ -s "$FAKE_LOG" ] && bad "not root, yet ran: $(cat "$FAKE_LOG")" || ok "not root: no apt-get run"

# 4. Root: bounded update, then the missing packages only; then the probes again.
asroot=(); [ "$(id -u)" -ne 0 ] && asroot=(unshare -r)
if [ "$(id -u)" -eq 0 ] || unshare -r true 2>/dev/null; then
  run "$T/o4" JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev procps" "${asroot[@]}" tools/deps.sh check
  cp "$FAKE_LOG" "$T/log4"
  has "$T/log4" '^apt-get -q -o Acquire::http::Timeout=[0-9]+ .*--error-on=any update$' "root: apt-get update with network timeouts and --error-on=any"
  has "$T/log4" '^apt-get .* install -y --no-install-recommends uthash-dev procps$' "root: installs the missing packages, only those"
  [ "$(wc -l <"$T/log4")" -eq 2 ] && ok "root: two apt-get runs, nothing else" || bad "root: ran $(cat "$T/log4")"
  # The stand-in installs nothing, so the probes still find them missing: said, and a failure.
  [ $RC -eq 1 ] && ok "root: what is still missing after the install fails the setup" || bad "root: exit $RC"
  has "$T/o4" '^deps: installed, but still not usable: uthash-dev procps$' "root: the probes run again after the install"
else
  echo "note: not root and no user namespaces (unshare -r): the root path is not checked"
fi

# 5. Offline, and a hanging apt-get update.
if [ "$(id -u)" -eq 0 ] || unshare -r true 2>/dev/null; then
  run "$T/o5" FAKE_APT=offline JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev" "${asroot[@]}" tools/deps.sh build
  [ $RC -eq 1 ] && ok "offline: exit 1" || bad "offline: exit $RC"
  has "$T/o5" 'the package archive could not be reached \(is this machine offline' "offline: says the archive cannot be reached"
  has "$T/o5" "Temporary failure resolving" "offline: shows apt-get's error"
  hasnt "$FAKE_LOG" ' install ' "offline: no install attempted"
  run "$T/o6" FAKE_APT=hang JVMPISHIM_APT_TIMEOUT=2 JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev" "${asroot[@]}" tools/deps.sh build
  [ $RC -eq 1 ] && ok "apt-get update that hangs: exit 1" || bad "hang: exit $RC"
  has "$T/o6" 'apt-get update did not finish in 2 s' "apt-get update that hangs: stopped at the bound, and said so"
fi

# 5b. A mirror between syncs: the i386 index does not match the Release file. Tried again,
# then the verified indexes are used; the install without the :i386 packages goes on, loudly.
if [ "$(id -u)" -eq 0 ] || unshare -r true 2>/dev/null; then
  run "$T/o8" FAKE_APT=mismatch-i386 JVMPISHIM_APT_TRIES=2 JVMPISHIM_APT_RETRY_WAIT=0 \
      JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev openjdk-17-jdk-headless:i386" "${asroot[@]}" tools/deps.sh check
  cp "$FAKE_LOG" "$T/log8"
  [ "$(grep -c -- '--error-on=any update$' "$T/log8")" -eq 2 ] && ok "mismatch: update tried JVMPISHIM_APT_TRIES times" ||
    { bad "mismatch: update tries:"; sed 's/^/     | /' "$T/log8"; }
  has "$T/log8" '^apt-get -q [^ ].* update$' "mismatch: then once without --error-on=any"
  has "$T/o8" 'does not match its Release file .*try 1 of 2' "mismatch: the retry is said"
  has "$T/o8" 'going on with the indexes that verified, without: http://.*binary-i386/Packages.xz' "mismatch: the rejected index is named"
  has "$T/log8" ' install -y --no-install-recommends uthash-dev openjdk-17-jdk-headless:i386$' "mismatch: the full install is tried first"
  has "$T/log8" ' install -y --no-install-recommends uthash-dev$' "mismatch: then all but the :i386 packages"
  has "$T/o8" 'i386 side will NOT be built or tested' "mismatch: the i386 side left out, loudly"
  # The stand-in installs nothing: uthash-dev still missing (a failure), the i386 JDK not asked.
  has "$T/o8" '^deps: installed, but still not usable: uthash-dev$' "mismatch: the left-out package is not probed again"
  run "$T/o9" FAKE_APT=mismatch-amd64 JVMPISHIM_APT_TRIES=1 JVMPISHIM_APT_RETRY_WAIT=0 \
      JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev openjdk-17-jdk-headless:i386" "${asroot[@]}" tools/deps.sh check
  [ $RC -eq 1 ] && ok "mismatch of the amd64 index, install fails: exit 1" || bad "mismatch amd64: exit $RC"
  hasnt "$FAKE_LOG" ' install -y --no-install-recommends uthash-dev$' "mismatch of the amd64 index: no install without the i386 side"
  has "$T/o9" 'Depends: zlib1g:i386' "a failed install shows what apt could not resolve"
  run "$T/o10" FAKE_APT=mismatch-i386 JVMPISHIM_APT_TRIES=1 JVMPISHIM_APT_RETRY_WAIT=0 \
      JVMPISHIM_DEPS_UNAVAILABLE_FILE="$T/unavail" "${asroot[@]}" tools/deps.sh --ci check
  [ $RC -eq 0 ] && ok "--ci, i386 index rejected: exit 0, the rest installed here" || { bad "--ci mismatch: exit $RC"; sed 's/^/     | /' "$T/o10"; }
  if [ "$(dpkg --print-architecture)" = amd64 ]; then
    has "$T/o10" '^ci: NOT installed .*openjdk-17-jdk-headless:i386' "--ci: what was left out is said"
    has "$T/unavail" 'openjdk-17-jdk-headless:i386' "--ci: and written to JVMPISHIM_DEPS_UNAVAILABLE_FILE"
  fi
  run "$T/o11" JVMPISHIM_DEPS_UNAVAILABLE="uthash-dev" JVMPISHIM_DEPS_PRETEND_MISSING="uthash-dev" "${asroot[@]}" tools/deps.sh build
  [ $RC -eq 0 ] && ok "JVMPISHIM_DEPS_UNAVAILABLE: not asked for again" || bad "UNAVAILABLE: exit $RC"
  has "$T/o11" 'uthash-dev is missing and not installable from this archive now' "JVMPISHIM_DEPS_UNAVAILABLE: said"
  [ -s "$FAKE_LOG" ] && bad "UNAVAILABLE: ran $(cat "$FAKE_LOG")" || ok "JVMPISHIM_DEPS_UNAVAILABLE: no apt-get"
fi

# 6. --ci: everything, installed or upgraded, then verified.
# Where the i386 packages were unavailable, the stand-in archive rejects the i386 index
# too, so that --ci leaves out what this machine lacks, as it did for real.
mirror=(); [ -n "$unavail" ] && mirror=(FAKE_APT=mismatch-i386 JVMPISHIM_APT_TRIES=1 JVMPISHIM_APT_RETRY_WAIT=0)
run "$T/o7" "${mirror[@]}" tools/deps.sh --ci check
cp "$FAKE_LOG" "$T/log7"
[ $RC -eq 0 ] && ok "--ci check: exit 0 (everything installed here)" || { bad "--ci check exited $RC"; sed 's/^/     | /' "$T/o7"; }
has "$T/log7" '--error-on=any update$' "--ci: apt-get update"
has "$T/log7" ' install -y --no-install-recommends build-essential make openjdk-17-jdk-headless uthash-dev pkg-config procps clang libclang-rt-[0-9]+-dev dpkg-dev debhelper( |$)' \
  "--ci: every package of the list, installed or not"
has "$T/o7" '^ci: packages: .*uthash-dev:[a-z0-9]+=[^ ]+ ' "--ci: the versions installed"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
