#!/bin/bash
# deb_install.sh — the Debian packages `make deb` builds (build/deb/; build/deb/i386/ for i386
# on amd64), installed with dpkg --root into a scratch root as a user's dpkg would install
# them, work from there: an agent (legacy-agents/lifecycle.c) compiled with the installed
# jvmpishim-dev's pkg-config flags, so against the installed jvmpi.h, runs through the installed
# shim (the path its pkg-config file gives), by -agentpath and the JDK 1.3 way (-Xrun, the shim
# found by name in its multiarch directory); the installed jvmpitrace (jvmpishim-tools) reads
# the run's recording and holds it to the JVMPI contract; `man jvmpishim`, `man jvmpitrace` and
# `man jvmpidump` find their pages, which render without warnings, and the shim's page
# describes every option its =help names. Where both architectures' packages were built,
# jvmpishim:amd64 and jvmpishim:i386 (with their -dev packages) install side by side
# (Multi-Arch: same). Runs on each JDK with the packages of that JDK's architecture.
# make check builds the packages first (the Makefile's deb stamp); after a plain `make`, run
# `make deb` before this test.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

"$JAVA" -version >/dev/null 2>&1 || skip "$JAVA does not run here (a 32-bit JDK on a kernel without 32-bit support?)"
JDK=$(dirname "$(dirname "$(readlink -f "$JAVA")")")
jarch=$(sed -n 's/^OS_ARCH="\(.*\)"/\1/p' "$JDK/release" 2>/dev/null)
case "$jarch" in
  x86_64|amd64) arch=amd64 triplet=x86_64-linux-gnu ;;
  x86|i?86)     arch=i386 triplet=i386-linux-gnu ;;
  *)            skip "no Debian packages are built for this JDK's architecture '$jarch'" ;;
esac
native=$(dpkg --print-architecture)
if [ "$arch" = "$native" ]; then debs=$ROOT/build/deb; else debs=$ROOT/build/deb/$arch; fi
cflags_arch=""
[ "$arch" = i386 ] && [ "$native" = amd64 ] && cflags_arch=-m32

pkgs=()
for p in jvmpishim jvmpishim-dev jvmpishim-tools; do
  f=$(ls "$debs/${p}_"*"_$arch.deb" 2>/dev/null | head -n 1)
  [ -n "$f" ] && pkgs+=("$f")
done
if [ ${#pkgs[@]} -ne 3 ]; then
  [ "$arch" = "$native" ] || skip "no $arch packages in ${debs#"$ROOT"/} (make deb builds them where the $arch build works)"
  bad "the jvmpishim, jvmpishim-dev and jvmpishim-tools packages are not in ${debs#"$ROOT"/}: run make deb"
  finish
fi

# dpkg_root ROOT DEB... — install into a scratch root: its own dpkg database; not as root
# (--force-not-root); the scratch root has no libc6 package to satisfy Depends. The manual
# pages and docs are kept where the host's dpkg.cfg.d leaves them out (container images).
dpkg_root() {
  local r=$1; shift
  mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" && touch "$r/var/lib/dpkg/status"
  PATH=/usr/sbin:/sbin:$PATH dpkg --root="$r" --force-not-root --force-depends --log=/dev/null \
    --path-include='/usr/share/man/*' --path-include='/usr/share/doc/*' -i "$@" \
    >"$WORK/dpkg.out" 2>&1
}
R=$WORK/root
mkdir -p "$R"
[ "$arch" = "$native" ] || PATH=/usr/sbin:/sbin:$PATH dpkg --root="$R" --force-not-root --add-architecture "$arch"
if dpkg_root "$R" "${pkgs[@]}"; then ok "dpkg --root installs $(basename -a "${pkgs[@]}" | tr '\n' ' ')"
else bad "dpkg --root -i failed"; show "$WORK/dpkg.out"; finish; fi
st=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Package}:${Status}:${Multi-Arch} ' jvmpishim jvmpishim-dev jvmpishim-tools)
expect_eq "$st" "jvmpishim:install ok installed:same jvmpishim-dev:install ok installed:same jvmpishim-tools:install ok installed:no " \
  "installed packages and their Multi-Arch"
# What they need: the C library (absent from the scratch root), and the -dev package the
# shim of its own version (of its architecture: both are Multi-Arch: same).
ver=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version}' jvmpishim)
dep=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Package}: ${Depends}; ' jvmpishim jvmpishim-dev jvmpishim-tools)
expect_grep <(echo "$dep") "^jvmpishim: libc6 \\(>= [0-9.]+\\); jvmpishim-dev: jvmpishim \\(= $ver\\); jvmpishim-tools: libc6 \\(>= [0-9.]+\\); \$" \
  "dependencies: $dep"

shim=$R/usr/lib/$triplet/libjvmpishim.so
elfclass=$(od -An -tu1 -j4 -N1 "$shim" 2>/dev/null | tr -d ' ')
expect_eq "$elfclass" "$([ "$arch" = i386 ] && echo 1 || echo 2)" "ELF class of usr/lib/$triplet/libjvmpishim.so"

# The agent, built as a user of jvmpishim-dev would build it.
pc() { PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$R/usr/lib/$triplet/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$R" pkg-config "$@"; }
expect_eq "$(pc --variable=shimpath jvmpishim)" "$shim" "pkg-config --variable=shimpath jvmpishim"
cflags=$(echo $(pc --cflags jvmpishim))
expect_eq "$cflags" "-I$R/usr/include" "pkg-config --cflags jvmpishim"
# shellcheck disable=SC2086 # flags
if cc -std=gnu99 $cflags_arch -Wall -Werror -shared -fPIC $cflags -I"$JDK/include" -I"$JDK/include/linux" \
     -o "$WORK/liblifecycle.so" "$ROOT/legacy-agents/lifecycle.c" -lpthread >"$WORK/cc.out" 2>&1; then
  ok "legacy-agents/lifecycle.c compiles against the installed jvmpi.h"
else bad "the agent does not compile against the installed jvmpi.h"; show "$WORK/cc.out"; finish; fi

check_run() {
  expect_rc 0
  expect_grep "$WORK/out" "^lifecycle: options=\\[$1\\]\$" "the agent got its options [$1]"
  expect_grep "$WORK/out" '^hello$' "the application ran"
  expect_grep "$WORK/out" '^lifecycle: getenv JVMPI_VERSION_1 rc=0 version=0x10000003( |$)' "GetEnv(JVMPI_VERSION_1) OK"
  expect_grep "$WORK/out" '^lifecycle: event JVM_INIT_DONE seq=1 ' "JVM_INIT_DONE first"
  expect_grep "$WORK/out" '^lifecycle: event JVM_SHUT_DOWN seq=2 ' "JVM_SHUT_DOWN second"
  expect_nogrep "$WORK/out" '^lifecycle: FAIL' "no FAIL from the agent"
}
run_java "-agentpath:$shim=record=$WORK/run.jvmpirec,legacy=$WORK/liblifecycle.so:x=1" -cp "$CLASSES" Hello
check_run "x=1"
# -Xrun finds libjvmpishim.so by name, as the dynamic linker's search does in a real install
# (/usr/lib/TRIPLET); in the scratch root LD_LIBRARY_PATH stands for that directory.
LD_LIBRARY_PATH=$R/usr/lib/$triplet run_java "-Xrunjvmpishim:legacy=$WORK/liblifecycle.so:y=2" -cp "$CLASSES" Hello
check_run "y=2"

# jvmpishim-tools
if "$R/usr/bin/jvmpitrace" check "$WORK/run.jvmpirec" >"$WORK/check.out" 2>&1; then
  ok "the installed jvmpitrace check passes the run's recording"
else bad "jvmpitrace check of the recording failed"; show "$WORK/check.out"; fi
"$R/usr/bin/jvmpitrace" stats "$WORK/run.jvmpirec" >"$WORK/stats.out" 2>&1
expect_grep "$WORK/stats.out" 'JVM_INIT_DONE' "jvmpitrace stats counts the recorded JVM_INIT_DONE"
"$R/usr/bin/jvmpidump" >"$WORK/dump.out" 2>&1; rc=$?
expect_eq "$rc" 2 "exit status of the installed jvmpidump without arguments"
expect_grep "$WORK/dump.out" '^usage: jvmpidump .*heap LEVEL DUMP' "jvmpidump prints its usage"

# Manual pages: man finds them by name, they render without warnings, and the shim's
# describes every option =help prints (the OPTIONs of the help text, at two spaces' indent).
for page in jvmpishim jvmpitrace jvmpidump; do
  f=$(MANPATH=$R/usr/share/man man -w "$page" 2>/dev/null)
  case "$f" in
    "$R"/usr/share/man/man*/"$page".[17].gz) ok "man $page: ${f#"$R"}" ;;
    *) bad "man -w $page found '$f', not the installed page"; continue ;;
  esac
  MANWIDTH=80 man --warnings -l "$f" >"$WORK/man.$page" 2>"$WORK/man.$page.err"
  expect_grep "$WORK/man.$page" '^NAME' "man $page renders"
  expect_nogrep "$WORK/man.$page.err" '.' "man $page renders without warnings"
done
run_java "-agentpath:$shim=help" -version
cat "$WORK/out" "$WORK/err" >"$WORK/help.txt"
opts=$(awk '/^OPTIONs/ { on = 1; next } on && /^ *$/ { exit } on && /^  [a-z]/ { split($1, a, "="); print a[1] }' "$WORK/help.txt")
opts="legacy $opts"
expect_grep "$WORK/help.txt" '^  record=PATH' "=help lists its options"
missing=""
for o in $opts; do grep -Eq "^ {7}$o(=| |\$)" "$WORK/man.jvmpishim" || missing="$missing $o"; done
expect_eq "${missing:-none}" none "=help options the man page lacks (of: $(echo $opts))"

# Both architectures side by side, where both were built.
a64=$(ls "$ROOT"/build/deb/jvmpishim_*_amd64.deb "$ROOT"/build/deb/jvmpishim-dev_*_amd64.deb 2>/dev/null)
a32=$(ls "$ROOT"/build/deb/i386/jvmpishim_*_i386.deb "$ROOT"/build/deb/i386/jvmpishim-dev_*_i386.deb 2>/dev/null)
if [ "$native" = amd64 ] && [ "$(echo "$a64" | wc -w)" = 2 ] && [ "$(echo "$a32" | wc -w)" = 2 ]; then
  R2=$WORK/root2
  mkdir -p "$R2"
  PATH=/usr/sbin:/sbin:$PATH dpkg --root="$R2" --force-not-root --add-architecture i386
  # shellcheck disable=SC2086 # lists of files
  if dpkg_root "$R2" $a64 $a32; then ok "jvmpishim:amd64 and jvmpishim:i386 (and -dev) install side by side"
  else bad "amd64 and i386 packages do not install side by side"; show "$WORK/dpkg.out"; fi
  for t in x86_64-linux-gnu i386-linux-gnu; do
    [ -f "$R2/usr/lib/$t/libjvmpishim.so" ] && ok "usr/lib/$t/libjvmpishim.so installed" || bad "usr/lib/$t/libjvmpishim.so missing"
  done
else
  echo "note: the i386 packages were not built (make deb builds them where make i386 exists): side by side not checked"
fi

finish
