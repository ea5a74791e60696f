#!/bin/bash
# check-tls.sh — the shim's thread-local storage fits the static TLS glibc keeps for
# libraries loaded by dlopen (rtld.optional_static_tls, 512 bytes by default). The x86-64
# shim uses the initial-exec model (Makefile, TLS_DIALECT): beyond that room dlopen fails
# with "cannot allocate memory in static TLS block" (the i386 one, general-dynamic, falls
# back to dynamic TLS, every access a __tls_get_addr call: 6 % of all cycles of the
# allocs bench). Larger per-thread arrays belong in a block made by shim_thread_block
# (shim/core/shim.h). The limit keeps a margin below 512 for the agent's own libraries.
cd "$(dirname "$0")/.."
LIB=build/libjvmpishim.so
LIMIT=448
[ -f "$LIB" ] || { echo "check-tls: $LIB not built"; echo "0 passed, 1 failed"; exit 1; }
hex=$(readelf -lW "$LIB" | awk '$1 == "TLS" { print $6 }')
size=$((${hex:-0}))
if [ -z "$hex" ]; then
  echo "check-tls: no TLS segment in $LIB"
  echo "1 passed, 0 failed"
elif [ "$size" -le "$LIMIT" ]; then
  echo "check-tls: $size bytes of thread-local storage (limit $LIMIT)"
  echo "1 passed, 0 failed"
else
  echo "check-tls: $size bytes of thread-local storage, over the limit of $LIMIT:"
  readelf -sW "$LIB" | awk '$4 == "TLS" && $3 >= 32 { print "  " $3 " bytes  " $8 }' | sort -rn
  echo "0 passed, 1 failed"
  exit 1
fi
