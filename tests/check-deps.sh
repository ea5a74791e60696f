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
#   - --ci: update, then install (or upgrade) every package of the list, and verify.
cd "$(dirname "$0")/.." || exit 1
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
has()   { if grep -Eq -- "$2" "$1"; then ok "$3"; else bad "$3: no /$2/ in:"; sed 's/^/     | /' "$1"; fi; }
hasnt() { if grep -Eq -- "$2" "$1"; then bad "$3: /$2/ in:"; sed 's/^/     | /' "$1"; else ok "$3"; fi; }

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
    esac ;;
  *" install "*) skip=no
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
run "$T/o1" tools/deps.sh --print check
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

# 6. --ci: everything, installed or upgraded, then verified.
run "$T/o7" tools/deps.sh --ci check
cp "$FAKE_LOG" "$T/log7"
[ $RC -eq 0 ] && ok "--ci check: exit 0 (everything installed here)" || { bad "--ci check exited $RC"; sed 's/^/     | /' "$T/o7"; }
has "$T/log7" '--error-on=any update$' "--ci: apt-get update"
has "$T/log7" ' install -y --no-install-recommends build-essential make openjdk-17-jdk-headless uthash-dev pkg-config procps clang libclang-rt-[0-9]+-dev dpkg-dev debhelper( |$)' \
  "--ci: every package of the list, installed or not"
has "$T/o7" '^ci: packages: .*uthash-dev:[a-z0-9]+=[^ ]+ ' "--ci: the versions installed"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
