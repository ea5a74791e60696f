#!/bin/bash
# bad_input.sh — the bad-input matrix: every JVMPI function misused at run time, one case
# per row of the table below, through the misuse agent (legacy-agents/misuse.c) and the
# application tests/java/Misuse.java; then set-up mistakes that setup_errors.sh does not
# cover.
#
# Run-time misuse must leave the VM running: for each case the test checks the documented
# answer the agent printed (JVMPI_NOT_AVAILABLE = 1, JVMPI_FAIL = -1, NULL, RUNNABLE, 0
# frames, untouched results, a safe no-op), and the shim's log line for it: between the
# agent's stderr markers "misuse: >>> NAME" and "misuse: <<< NAME" a jvmpishim line must name
# the call and the argument (the agent prints the addresses it passes, so that the line is
# matched against the real value). Rows whose log column is "-" are calls the documentation
# says work (from a thread the VM does not know, or RunGC inside a handler): only their
# result is checked. Then: the application ran to its end (exit 0, its last line printed),
# no hs_err file, JVM_SHUT_DOWN delivered once, and the agent ran every case.
#
# Set-up mistakes refuse VM start: status 1, the application never runs, a message that
# names the offending text.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=120

# name | result printed by the agent (ERE, after "misuse: case NAME ") | shim log line (ERE
# within the case's markers; @X@ is replaced by the address the agent printed; "-": none)
MATRIX=$(cat <<'EOF'
cst_onload|rc=-1|CreateSystemThread\("misuse-early"\) before JVM_INIT_DONE: JNI_ERR
rungc_in_init_done|returned collected=yes|-
enable_neg|rc=1|EnableEvent\(-1\): no such JVMPI event: JVMPI_NOT_AVAILABLE
enable_zero|rc=1|EnableEvent\(0\): no such JVMPI event
enable_1000|rc=1|EnableEvent\(1000\): no such JVMPI event
enable_unused|rc=1|EnableEvent\(20\): no such JVMPI event
enable_past_max|rc=1|EnableEvent\(62\): no such JVMPI event
enable_int_min|rc=1|EnableEvent\(-2147483648\): no such JVMPI event
enable_request_only|rc=1|EnableEvent\(HEAP_DUMP\): a request-only event
disable_neg|rc=1|DisableEvent\(-1\): no such JVMPI event
disable_zero|rc=1|DisableEvent\(0\): no such JVMPI event
disable_1000|rc=1|DisableEvent\(1000\): no such JVMPI event
disable_unused|rc=1|DisableEvent\(20\): no such JVMPI event
disable_request_only|rc=1|DisableEvent\(MONITOR_DUMP\): a request-only event
request_neg|rc=1|RequestEvent\(-1\): JVMPI defines no request
request_zero|rc=1|RequestEvent\(0\): JVMPI defines no request
request_1000|rc=1|RequestEvent\(1000\): JVMPI defines no request
request_unused|rc=1|RequestEvent\(20\): JVMPI defines no request
request_method_entry|rc=1|RequestEvent\(1\): JVMPI defines no request for METHOD_ENTRY
request_gc_start|rc=1|RequestEvent\(60\): JVMPI defines no request for GC_START
req_alloc_null|rc=-1|RequestEvent\(OBJECT_ALLOC, \(nil\)\): NULL id: JVMPI_FAIL
req_alloc_wild|rc=-1|RequestEvent\(OBJECT_ALLOC, 0x1234\): not an id the shim issued
req_alloc_freed|rc=-1|RequestEvent\(OBJECT_ALLOC, @freed@\): its object is no longer alive
req_alloc_env|rc=-1|RequestEvent\(OBJECT_ALLOC, @runner@\): not an id the shim issued
req_objdump_null|rc=-1|RequestEvent\(OBJECT_DUMP, \(nil\)\): NULL id
req_objdump_wild|rc=-1|RequestEvent\(OBJECT_DUMP, 0x1234\): not an id the shim issued
req_objdump_freed|rc=-1|RequestEvent\(OBJECT_DUMP, @freed@\): its object is no longer alive
req_thread_null|rc=-1|RequestEvent\(THREAD_START, \(nil\)\): NULL thread id
req_thread_wild|rc=-1|RequestEvent\(THREAD_START, 0x1234\): no live thread has this id
req_thread_classid|rc=-1|RequestEvent\(THREAD_START, @classid@\): no live thread has this id
req_thread_object|rc=-1|RequestEvent\(THREAD_START, @live@\): no live thread has this id
req_thread_dead|rc=-1|RequestEvent\(THREAD_START, @deadthread@\): no live thread has this id
req_class_null|rc=-1|RequestEvent\(CLASS_LOAD, \(nil\)\): not a class id
req_class_wild|rc=-1|RequestEvent\(CLASS_LOAD, 0x1234\): not a class id
req_class_threadid|rc=-1|RequestEvent\(CLASS_LOAD, @selfthread@\): the object is not a class
req_class_object|rc=-1|RequestEvent\(CLASS_LOAD, @live@\): the object is not a class
req_class_freed|rc=-1|RequestEvent\(CLASS_LOAD, @freed@\): its object is no longer alive
req_heapdump_level7|rc=-1|RequestEvent\(HEAP_DUMP\) with heap_dump_level 7
req_heapdump_level_neg|rc=-1|RequestEvent\(HEAP_DUMP\) with heap_dump_level -1
threadobj_null|ret=NULL|GetThreadObject\(\(nil\)\): NULL
threadobj_garbage|ret=NULL|GetThreadObject\(@garbage@\): no such thread
threadobj_dead|ret=NULL|GetThreadObject\(@dead@\): no such thread
suspend_null|returned|SuspendThread\(NULL\): ignored
suspend_garbage|returned|SuspendThread\(@garbage@\): no such live thread
suspend_dead|returned|SuspendThread\(@dead@\): no such live thread
resume_null|returned|ResumeThread\(NULL\): ignored
resume_garbage|returned|ResumeThread\(@garbage@\): no such live thread
resume_dead|returned|ResumeThread\(@dead@\): no such live thread
status_null|ret=1|GetThreadStatus\(NULL\): RUNNABLE
status_garbage|ret=1|GetThreadStatus\(@garbage@\): no such thread: RUNNABLE
status_dead|ret=1|GetThreadStatus\(@dead@\): no such thread: RUNNABLE
hasrun_null|ret=0|ThreadHasRun\(NULL\): JNI_FALSE
hasrun_garbage|ret=0|ThreadHasRun\(@garbage@\): no such thread: JNI_FALSE
hasrun_dead|ret=0|ThreadHasRun\(@dead@\): no such thread: JNI_FALSE
suspendlist_bad_entries|results=10,10,10|SuspendThreadList\(@dead@\): no such live thread
resumelist_bad_entries|results=10,10,10|ResumeThreadList\(@garbage@\): no such live thread
suspendlist_null_list|results=-7,-7|SuspendThreadList\(2, \(nil\), 0x[0-9a-f]+\): nothing to do
suspendlist_neg_count|results=-7 status_main=[0-9]+|SuspendThreadList\(-1, 0x[0-9a-f]+, 0x[0-9a-f]+\): nothing to do
resumelist_null_results|returned|ResumeThreadList\(1, 0x[0-9a-f]+, \(nil\)\): nothing to do
tls_set_null|get_null=NULL|SetThreadLocalStorage\(NULL env\): ignored
tls_set_garbage|returned|SetThreadLocalStorage\(@garbage@\): no such thread
tls_set_dead|returned|SetThreadLocalStorage\(@dead@\): no such thread
tls_get_null|ret=NULL|GetThreadLocalStorage\(NULL env\): NULL
tls_get_garbage|ret=NULL|GetThreadLocalStorage\(@garbage@\): no such thread
id2obj_null|ret=NULL|jobjectID2jobject\(NULL\): NULL
id2obj_wild|ret=NULL|jobjectID2jobject\(0x1234\): not an id the shim issued
id2obj_freed|ret=NULL|jobjectID2jobject\(@freed@\): its object is no longer alive
id2obj_far|ret=NULL|jobjectID2jobject\(@far@\): not an id the shim issued
obj2id_null|ret=NULL|jobject2jobjectID\(NULL\): NULL
methodclass_null|ret=NULL|GetMethodClass\(\(nil\)\): NULL
methodclass_zeroed|ret=NULL|GetMethodClass\(0x[0-9a-f]+\): not a method id of any class the JVM has loaded
methodclass_wild|ret=NULL|GetMethodClass\(0x1234\): not a method id of any class the JVM has loaded
methodclass_garbage|ret=NULL|GetMethodClass\(@garbage@\): not a method id of any class the JVM has loaded
methodclass_objid|ret=NULL|GetMethodClass\(0x[0-9a-f]+\): not a method id of any class the JVM has loaded
methodclass_jni|ret=class|-
trace_null_env|num_frames=0|GetCallTrace\(env_id NULL\): no frames
trace_garbage_env|num_frames=0|GetCallTrace\(env_id @garbage@\): no such thread
trace_dead_env|num_frames=0|GetCallTrace\(env_id @dead@\): no such thread
trace_null_trace|returned|GetCallTrace\(NULL trace\): ignored
trace_null_frames|num_frames=0|GetCallTrace with trace->frames NULL
trace_depth0|num_frames=0|GetCallTrace\(depth 0\): no frames
trace_depth_neg|num_frames=0|GetCallTrace\(depth -5\): no frames
rm_enter_null|returned|RawMonitorEnter\(NULL\): not a raw monitor
rm_exit_null|returned|RawMonitorExit\(NULL\): not a raw monitor
rm_wait_null|returned|RawMonitorWait\(NULL\): not a raw monitor
rm_notify_null|returned|RawMonitorNotifyAll\(NULL\): not a raw monitor
rm_destroy_null|returned|RawMonitorDestroy\(NULL\): not a raw monitor
rm_enter_destroyed|returned|RawMonitorEnter\(@destroyed@\): unknown or destroyed raw monitor
rm_exit_destroyed|returned|RawMonitorExit\(@destroyed@\): unknown or destroyed raw monitor
rm_wait_destroyed|returned|RawMonitorWait\(@destroyed@\): unknown or destroyed raw monitor
rm_notify_destroyed|returned|RawMonitorNotifyAll\(@destroyed@\): unknown or destroyed raw monitor
rm_destroy_destroyed|returned|RawMonitorDestroy\(@destroyed@\): unknown or destroyed raw monitor
rm_enter_garbage|returned|RawMonitorEnter\(@garbage@\): unknown or destroyed raw monitor
rm_exit_garbage|returned|RawMonitorExit\(@garbage@\): unknown or destroyed raw monitor
rm_wait_garbage|returned|RawMonitorWait\(@garbage@\): unknown or destroyed raw monitor
rm_notify_garbage|returned|RawMonitorNotifyAll\(@garbage@\): unknown or destroyed raw monitor
rm_destroy_garbage|returned|RawMonitorDestroy\(@garbage@\): unknown or destroyed raw monitor
rm_exit_not_owned|returned usable=yes|RawMonitorExit\("misuse_valid"\): the calling thread does not own it
rm_wait_not_owned|returned|RawMonitorWait\("misuse_valid"\): the calling thread does not own it; returns at once
rm_notify_not_owned|returned|RawMonitorNotifyAll\("misuse_valid"\): the calling thread does not own it
rm_exit_other_owner|returned usable=yes|RawMonitorExit\("misuse_other"\): the calling thread does not own it
rm_destroy_other_owner|returned usable=yes|RawMonitorDestroy\("misuse_other"\): owned by another thread; not destroyed
rm_create_null_name|ret=nonNULL|RawMonitorCreate\(NULL name\): created an unnamed monitor
cst_null_f|rc=-1|CreateSystemThread\("misuse-nullf"\) with a NULL function: JNI_ERR
cst_priority_7|rc=-1 ran=no|CreateSystemThread\("misuse-prio7", priority 7\): JVMPI accepts only 1, 5 or 10
enablegc_unbalanced|bracket_after=yes|EnableGC without a matching DisableGC: ignored
disablegc_rungc|held=yes held_nested=yes bracket_after=yes|-
rungc_in_gc_start|handler_ran=yes next_bracket=yes|-
rungc_in_class_load|enable=0 loaded=nonNULL handler_ran=yes|-
rungc_in_object_alloc|enable=0 array=nonNULL handler_ran=yes on_this_thread=yes|-
rungc_in_thread_start|handler_ran=yes|-
raw_tls_null|returned|SetThreadLocalStorage\(NULL env\): ignored
raw_tls_garbage|returned|SetThreadLocalStorage\(@garbage@\): no such thread
raw_tls_other|got=0x5a5a|-
raw_trace|num_frames=0|GetCallTrace from a thread the JVM does not know: no frames
raw_req_alloc|rc=-1|RequestEvent\(OBJECT_ALLOC\) from a thread the JVM does not know: JVMPI_FAIL
raw_req_thread|rc=-1|RequestEvent\(THREAD_START\) from a thread the JVM does not know: JVMPI_FAIL
raw_req_class|rc=-1|RequestEvent\(CLASS_LOAD\) from a thread the JVM does not know: JVMPI_FAIL
raw_req_objdump|rc=-1|RequestEvent\(OBJECT_DUMP\) from a thread the JVM does not know: JVMPI_FAIL
raw_req_heapdump|rc=-1|RequestEvent\(HEAP_DUMP\) from a thread the JVM does not know: JVMPI_FAIL
raw_id2obj|ret=NULL|jobjectID2jobject from a thread the JVM does not know: NULL
raw_obj2id|ret=NULL|jobject2jobjectID from a thread the JVM does not know: NULL
raw_threadobj|ret=NULL|GetThreadObject\(@main@\) from a thread the JVM does not know: NULL
raw_methodclass|ret=NULL|GetMethodClass\(0x[0-9a-f]+\) from a thread the JVM does not know: NULL
raw_status|ret=1|GetThreadStatus\(@main@\) from a thread the JVM does not know
raw_hasrun|ret=1|ThreadHasRun\(@main@\) from a thread the JVM does not know
raw_suspend|returned status=1|SuspendThread: JVMTI_ERROR_UNATTACHED_THREAD
raw_rungc|returned|RunGC: ForceGarbageCollection: JVMTI_ERROR_UNATTACHED_THREAD
raw_disable_enable_gc|returned|-
raw_cpu|cpu_ok=yes|-
raw_rawmon|returned|-
raw_enable|rc=0|-
raw_create_system_thread|rc=0 ran=yes|-
raw_enable_effect|loaded=nonNULL delivered=yes|-
after_shutdown_atexit|returned shut_down_seen=yes cpu=-1 enable=-1|GetCurrentThreadCpuTime called after JVM_SHUT_DOWN returned: refused
EOF
)

# ---- run-time misuse: one JVM for the whole matrix ----
rm -f "$WORK"/hs_err_pid*.log
run_java "-agentpath:$SHIM=log=info,legacy=$AGENTS/libmisuse.so:case=all" -cp "$CLASSES" Misuse 90000
O=$WORK/out E=$WORK/err
expect_rc 0
expect_grep "$O" '^misuse app: done sum=500500$' "the application ran to its end after every misuse"
if ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1; then bad "the VM crashed (hs_err file)"; else ok "no hs_err file"; fi
expect_nogrep "$O" '^misuse: FAIL' "the agent could set up every case"
expect_count "$O" '^misuse: JVM_SHUT_DOWN$' 1 "JVM_SHUT_DOWN delivered once"
expect_grep "$O" '^misuse: materials .* freed_collected=yes .* short_ended=yes short_forgotten=yes$' "freed object collected, short thread ended before use"

# The addresses the agent passed, for the log patterns.
addr_line=$(grep -m1 '^misuse: addresses ' "$O")
addr() { echo "$addr_line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

ncases=0; runner_cases=0
while IFS='|' read -r name want log; do
  [ -n "$name" ] || continue
  ncases=$((ncases+1))
  case "$name" in cst_onload|rungc_in_init_done|after_shutdown_atexit) ;; *) runner_cases=$((runner_cases+1)) ;; esac
  got=$(grep -m1 -E "^misuse: case $name " "$O" | sed "s/^misuse: case $name //")
  if echo "$got" | grep -Eq "^($want)\$"; then ok "$name: $got"
  else bad "$name: got '${got:-nothing}', expected /$want/"; fi
  [ "$log" = "-" ] && continue
  for k in garbage dead freed classid selfthread live deadthread destroyed main runner far; do
    case "$log" in *@$k@*) log=${log//@$k@/$(addr "$k")} ;; esac   # a pipeline only where used
  done
  section=$(awk -v n="$name" '$0 == "misuse: >>> " n {on=1; next} $0 == "misuse: <<< " n {on=0} on' "$E")
  if echo "$section" | grep -Eq "^jvmpishim: (error|warning|info): (agent [0-9]+: )?$log"; then
    ok "$name: shim logged /$log/"
  else
    bad "$name: no shim line /$log/ between its markers"
    echo "$section" | head -5 | sed 's/^/     > /'
  fi
done <<<"$MATRIX"
expect_grep "$O" "^misuse: runner done cases=$runner_cases\$" "the runner ran all $runner_cases of its cases"
echo "     run-time cases: $ncases"

# ---- set-up mistakes not covered by setup_errors.sh ----
A=$AGENTS/liblifecycle.so
setup_case() {
  local what=$1 ere=$2; shift 2
  rm -f "$WORK"/hs_err_pid*.log
  run_java "$@" -cp "$CLASSES" Hello
  if [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ]; then ok "$what: VM refused to start (rc=$RC)"
  else bad "$what: rc=$RC, expected a normal failure exit"; show; fi
  expect_nogrep "$WORK/out" '^hello$' "$what: application did not run"
  if grep -Eq -- "$ere" "$WORK/err"; then ok "$what: message /$ere/"; else bad "$what: no message /$ere/"; show; fi
  if ls "$WORK"/hs_err_pid*.log >/dev/null 2>&1; then bad "$what: hs_err file"; else ok "$what: no VM crash"; fi
  nsetup=$((nsetup+1))
}
nsetup=0
setup_case "logfile= cannot be opened" 'logfile=/nonexistent/dir/shim\.log: cannot open' "-agentpath:$SHIM=logfile=/nonexistent/dir/shim.log,legacy=$A"
setup_case "empty logfile=" "logfile= needs a path" "-agentpath:$SHIM=logfile=,legacy=$A"
setup_case "log without a level" "bad log level in 'log'" "-agentpath:$SHIM=log,legacy=$A"
setup_case "stray comma" "empty option in 'log=info,,legacy=.*' \\(stray ','\\)" "-agentpath:$SHIM=log=info,,legacy=$A"
setup_case "leading comma" "empty option in ',legacy=.*' \\(stray ','\\)" "-agentpath:$SHIM=,legacy=$A"
setup_case "no legacy= and a bad option" "unknown option 'bogus' in 'report=/tmp/r,bogus'" "-agentpath:$SHIM=report=/tmp/r,bogus"
setup_case "a fifth agent" "legacy=.*liblifecycle\.so: at most 4 legacy agents" \
  "-agentpath:$SHIM=legacy=$A" "-agentpath:$SHIM=legacy=$A" "-agentpath:$SHIM=legacy=$A" \
  "-agentpath:$SHIM=legacy=$A" "-agentpath:$SHIM=legacy=$A"
echo "     set-up cases: $nsetup; distinct cases in all: $((ncases + nsetup))"

finish
