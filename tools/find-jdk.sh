#!/bin/sh
# find-jdk.sh — print JDK home directories, one per line.
#   find-jdk.sh build   the JDK to compile against (needs include/jvmti.h and javac);
#                       the oldest supported major wins, so the shim and agents use the
#                       oldest JVMTI/JNI headers and run on every newer JDK.
#   find-jdk.sh all     every JDK (>= 17) found, oldest first: what the tests run on.
#   find-jdk.sh MODE ARCH  the same, among JDKs of architecture ARCH (x86_64, x86: the
#                       OS_ARCH of the JDK's release file); default: this machine's (uname -m),
#                       so a 32-bit JDK installed beside a 64-bit one is not run with a
#                       64-bit shim.
# JAVA_HOME, JDK_HOME, javac on PATH and /usr/lib/jvm/* are looked at; nothing is hard-coded.
mode=${1:-all}
want_arch=${2:-$(uname -m)}
case "$want_arch" in i?86) want_arch=x86 ;; amd64) want_arch=x86_64 ;; esac
cands=""
for d in "$JDK_HOME" "$JAVA_HOME" \
         "$(dirname "$(dirname "$(readlink -f "$(command -v javac 2>/dev/null || echo /nonexistent)")")")" \
         /usr/lib/jvm/*; do
  [ -n "$d" ] && [ -x "$d/bin/java" ] || continue
  d=$(readlink -f "$d")
  case " $cands " in *" $d "*) continue ;; esac
  cands="$cands $d"
done
for d in $cands; do
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$d/release" 2>/dev/null)
  [ -n "$v" ] || v=$("$d/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p')
  [ -n "$v" ] && [ "$v" -ge 17 ] 2>/dev/null || continue
  a=$(sed -n 's/^OS_ARCH="\(.*\)"/\1/p' "$d/release" 2>/dev/null)
  case "$a" in i?86) a=x86 ;; amd64) a=x86_64 ;; esac
  [ -z "$a" ] || [ "$a" = "$want_arch" ] || continue
  if [ "$mode" = build ]; then
    [ -f "$d/include/jvmti.h" ] && [ -x "$d/bin/javac" ] || continue
  fi
  echo "$v $d"
done | sort -n -k1,1 | if [ "$mode" = build ]; then head -n 1 | cut -d' ' -f2; else cut -d' ' -f2; fi
