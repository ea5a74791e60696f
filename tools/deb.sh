#!/bin/bash
# deb.sh — `make deb`: the Debian packages (debian/), built by dpkg-buildpackage.
#
#   tools/deb.sh            build the packages
#   tools/deb.sh --lintian  check the packages built with lintian
#
# dpkg-buildpackage writes its results beside the source tree, and builds in it, so the tree
# is copied (without build/ and .git) to build/deb/src/ and built there: the packages for this
# machine's architecture land in build/deb/, and, on amd64 where the i386 port builds (the
# Makefile has `make i386`), the same source is built once more for i386 (dpkg-buildpackage
# -ai386: debian/rules builds it with the Makefile's i386 build, gcc -m32 against the i386
# JDK) into build/deb/i386/. --lintian holds the packages built to lintian (errors and
# warnings fail; debian/*.lintian-overrides say why each override is right).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
version=$(dpkg-parsechangelog -S Version) || exit 1
mkver=$(sed -n 's/^VERSION *:= *//p' Makefile)
if [ "$version" != "$mkver" ]; then
  echo "deb: debian/changelog's version $version is not the Makefile's VERSION $mkver: add a changelog entry" >&2
  exit 1
fi

OUT=$ROOT/build/deb

# leg NAME DIR [dpkg-buildpackage options]: build the packages from a fresh copy into DIR.
leg() {
  local name=$1 dest=$2; shift 2
  local src=$OUT/src-$name/jvmpishim-$version log=$OUT/build-$name.log
  rm -rf "$OUT/src-$name" && mkdir -p "$src" "$dest" || return 1
  tar -C "$ROOT" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf - || return 1
  echo "deb: dpkg-buildpackage $* ($name) in build/deb/src-$name (log: build/deb/build-$name.log)"
  if ! (cd "$src" && dpkg-buildpackage -b -us -uc -j2 "$@") >"$log" 2>&1; then
    tail -n 25 "$log" | sed 's/^/   /' >&2
    echo "deb: FAILED: the $name packages (whole log: $log)" >&2
    return 1
  fi
  mv "$OUT/src-$name"/*.deb "$OUT/src-$name"/*.ddeb "$OUT/src-$name"/*.buildinfo "$OUT/src-$name"/*.changes "$dest"/ 2>/dev/null
  rm -rf "$OUT/src-$name"
  ls "$dest"/*.deb | sed "s|^$ROOT/|   |"
}

lintian_check() {
  ls "$OUT"/*.changes >/dev/null 2>&1 || { echo "deb: no packages in build/deb/ to check: make deb" >&2; return 1; }
  if ! command -v lintian >/dev/null 2>&1; then
    echo "deb: lintian is not installed: the packages were not checked (tools/deps.sh deb)" >&2
    return 1
  fi
  local c
  for c in "$OUT"/*.changes "$OUT"/i386/*.changes; do
    [ -f "$c" ] || continue
    echo "deb: lintian ${c#"$ROOT"/}"
    lintian --fail-on error,warning --info "$c" || { echo "deb: lintian found problems in $c" >&2; return 1; }
  done
  echo "deb: lintian clean"
}

[ "${1:-}" = --lintian ] && { lintian_check; exit; }

rm -rf "$OUT"
mkdir -p "$OUT"
leg native "$OUT" || exit 1
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  if ! grep -q '^i386:' Makefile; then
    echo "deb: no i386 packages: this tree has no i386 build (make i386)"
  elif [ -z "$(tools/find-jdk.sh build x86)" ] || ! echo 'int main(void) { return 0; }' | gcc -m32 -x c - -o /dev/null 2>/dev/null; then
    echo "deb: no i386 packages: no i386 JDK or no gcc -m32 here (tools/deps.sh deb installs them)" >&2
    exit 1
  else
    # -d: a cross build's Build-Depends would ask for crossbuild-essential-i386; this one
    # uses gcc -m32 (gcc-multilib) and binutils-i686-linux-gnu (for dh_strip), which
    # tools/deps.sh deb installs with the i386 JDK.
    leg i386 "$OUT/i386" -ai386 -d || exit 1
  fi
fi
