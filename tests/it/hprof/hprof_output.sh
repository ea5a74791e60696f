#!/bin/bash
# hprof_output.sh — where and how hprof writes, on tests/java/HprofApp.java (NODES
# HprofApp$Node objects, all live):
#  - file=NAME: the profile goes to NAME, and no default file is made;
#  - format=b without file=: the default binary file java.hprof, valid for build/hprofcheck,
#    with the NODES HprofApp$Node objects in its ALLOC SITES;
#  - net=127.0.0.1:PORT: the ASCII profile goes over TCP to tests/java/HprofListener.java
#    (a listener that writes what it receives to a file); what arrives is the whole profile:
#    header, THREAD START, SITES with the Node site, and the agent closed the connection at
#    exit (the listener saw EOF); no file is written;
#  - net= with format=b: what arrives is valid for hprofcheck, NODES Nodes in the heap dump;
#  - net= to a port where nothing listens: the VM refuses to start, with HPROF's message.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=90
NODES=1500
CHECK=$ROOT/build/hprofcheck
rows() { awk -v n="$2" 'index($0, n " BEGIN") == 1 {on=1; k=0; next} index($0, n " END") == 1 {on=0} on && $1 ~ /^[0-9]+$/ {r[++k]=$0} END {for (i=1;i<=k;i++) print r[i]}' "$1"; }
clean() {
  expect_rc 0
  expect_grep "$WORK/out" "^HprofApp: nodes=$NODES " "HprofApp finished"
  expect_nogrep "$WORK/err" 'HPROF ERROR|jvmpishim: (error|warning)|SIGSEGV|hs_err|fatal error' "no error, warning or crash"
}

# 1. file=
rm -f java.hprof.txt java.hprof
run_java "$(shim_arg hprof "heap=sites,file=custom.txt")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
clean
expect_grep "$WORK/custom.txt" '^JAVA PROFILE 1\.0\.1, created ' "file=custom.txt holds the profile"
expect_eq "$(rows "$WORK/custom.txt" SITES | awk '$9 == "HprofApp$Node" {print $7}')" "$NODES" "custom.txt: Node objects alloc'ed"
[ ! -e "$WORK/java.hprof.txt" ] && ok "no default java.hprof.txt" || bad "java.hprof.txt was made too"
expect_grep "$WORK/err" '^HPROF: dumping the profile \(at exit\) to custom\.txt \.\.\. done\.$' "stderr names custom.txt"

# 2. format=b, default name
run_java "$(shim_arg hprof "heap=sites,format=b")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
clean
if [ -s "$WORK/java.hprof" ]; then ok "format=b writes java.hprof"; else bad "no java.hprof"; fi
"$CHECK" "$WORK/java.hprof" --class 'HprofApp$Node' --class java.lang.Thread >"$WORK/check" 2>&1
expect_eq "$?" 0 "hprofcheck java.hprof"
expect_grep "$WORK/check" "^sites of HprofApp\\\$Node: 1, live objects $NODES, allocated objects $NODES\$" "java.hprof: the Node site"
expect_grep "$WORK/check" '^sites of java\.lang\.Thread: [1-9][0-9]*, ' "java.hprof: java.lang.Thread sites (a dotted name finds java/lang/Thread)"
expect_grep "$WORK/check" '^records:.* CONTROL_SETTINGS=1' "CONTROL SETTINGS record"

# listen FILE — start the listener for FILE in the background; sets LPID and PORT.
listen() {
  rm -f "$WORK/port" "$1"
  timeout -k 5 90 "$JAVA" -cp "$CLASSES" HprofListener "$1" "$WORK/port" >"$WORK/listener.out" 2>&1 &
  LPID=$!
  PORT=
  for _ in $(seq 1 200); do
    [ -s "$WORK/port" ] && { PORT=$(cat "$WORK/port"); break; }
    sleep 0.05
  done
  if [ -n "$PORT" ]; then ok "listener on port $PORT"; else bad "the listener did not start"; fi
}

# 3. net=, ASCII
listen "$WORK/net.txt"
run_java "$(shim_arg hprof "heap=sites,net=127.0.0.1:${PORT:-1}")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
clean
wait "$LPID"
expect_eq "$?" 0 "listener exit status (it saw the connection close)"
expect_grep "$WORK/listener.out" '^HprofListener: [0-9]+ bytes$' "listener got bytes"
expect_grep "$WORK/net.txt" '^JAVA PROFILE 1\.0\.1, created ' "header over the socket"
expect_grep "$WORK/net.txt" '^THREAD START \(obj=[0-9a-f]+, id = [0-9]+, name="main", group="main"\)$' "THREAD START over the socket"
expect_count "$WORK/net.txt" '^SITES END$' 1 "SITES over the socket, whole"
expect_eq "$(rows "$WORK/net.txt" SITES | awk '$9 == "HprofApp$Node" {print $7}')" "$NODES" "net: Node objects alloc'ed"
[ ! -e "$WORK/java.hprof.txt" ] && ok "net= writes no file" || bad "net= also wrote java.hprof.txt"
expect_grep "$WORK/err" "^HPROF: dumping the profile \\(at exit\\) to 127\\.0\\.0\\.1:${PORT:-1} \\.\\.\\. done\\.\$" "stderr names host:port"

# 4. net=, binary
listen "$WORK/net.hprof"
run_java "$(shim_arg hprof "heap=all,format=b,net=localhost:${PORT:-1}")" -cp "$CLASSES" HprofApp $NODES 10 1000 1 1
clean
wait "$LPID"
"$CHECK" "$WORK/net.hprof" --class 'HprofApp$Node' >"$WORK/check" 2>&1
expect_eq "$?" 0 "hprofcheck of what came over the socket"
expect_grep "$WORK/check" "^instances of HprofApp\\\$Node: $NODES\$" "net binary: Node instances in the heap dump"

# 5. net= and nobody listens: a port that was just free.
listen "$WORK/unused"
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null
run_java "$(shim_arg hprof "net=127.0.0.1:${PORT:-1}")" -cp "$CLASSES" Hello
if [ "$RC" -ne 0 ]; then ok "no listener: the VM refused to start (rc=$RC)"; else bad "no listener: rc=0"; fi
expect_grep "$WORK/err" "^HPROF ERROR: net=127\\.0\\.0\\.1:${PORT:-1}: cannot connect: " "HPROF says it cannot connect"
expect_nogrep "$WORK/out" '^hello' "the application did not run"
finish
