#!/bin/bash
# ident_status.sh — thread control through the ident_status agent
# (legacy-agents/ident_status.c), workload tests/java/IdentStatus.java.
#  - GetThreadStatus of threads in each state, expected from what Java reports for the same
#    thread (Thread.getState / isInterrupted): RUNNABLE -> 1, BLOCKED -> MONITOR_WAIT 2,
#    WAITING / TIMED_WAITING (Object.wait, park, sleep) -> CONDVAR_WAIT 3, interrupted ->
#    | 0x4000; main waiting in a raw monitor -> 3, an agent thread blocked entering a raw
#    monitor -> 2; NULL / garbage env -> RUNNABLE.
#  - SuspendThread: a spinning thread's counter stops, its status stays what it was (no
#    SUSPENDED bit), it runs again after ResumeThread; no nesting; self/NULL/garbage ignored.
#  - SuspendThreadList / ResumeThreadList result codes: 0 done, 10 invalid (NULL, self,
#    garbage), 14 already suspended (also a duplicate entry); not-suspended resume 0; n <= 0
#    or NULL arrays write nothing.
#  - ThreadHasRun after suspend/resume/200 ms/suspend: spinning TRUE, sleeping/waiting
#    FALSE; NULL/garbage FALSE; self TRUE.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60

run_java "$(shim_arg ident_status)" -cp "$CLASSES" IdentStatus
o=$WORK/out
expect_rc 0
expect_grep "$o" '^IdentStatus: done$' "workload finished"
expect_nogrep "$o" '^ident_status: FAIL' "no FAIL from the agent"
expect_grep "$o" '^ident_status: Go handler: tester done$' "tester system thread finished"

# Java's view -> the JVMPI status it implies.
want_status() {
  local st=$1 intr=$2 v
  case "$st" in
    RUNNABLE) v=1 ;; BLOCKED) v=2 ;; WAITING|TIMED_WAITING) v=3 ;; *) v=? ;;
  esac
  [ "$intr" = true ] && v=$((v | 0x4000))
  printf '0x%x' "$v"
}
for t in st-spin st-holder st-blocked st-waiting st-parked st-sleeping st-intr; do
  line=$(grep "^IdentStatus: java before $t " "$o")
  st=$(echo "$line" | sed -n 's/.* state=\([A-Z_]*\) .*/\1/p')
  in=$(echo "$line" | sed -n 's/.* interrupted=\([a-z]*\)$/\1/p')
  w=$(want_status "$st" "$in")
  got=$(sed -n "s/^ident_status: status $t=\\(0x[0-9a-f]*\\)\$/\\1/p" "$o")
  expect_eq "$got" "$w" "GetThreadStatus($t), Java says $st interrupted=$in"
  fin=$(sed -n "s/^ident_status: final status $t=\\(0x[0-9a-f]*\\)\$/\\1/p" "$o")
  expect_eq "$fin" "$w" "GetThreadStatus($t) after all suspend/resume calls"
done
expect_grep "$o" '^IdentStatus: java before st-sleeping state=TIMED_WAITING ' "sleeping thread is TIMED_WAITING in Java (JVMPI: CONDVAR_WAIT, HotSpot said RUNNABLE)"
expect_grep "$o" '^IdentStatus: java before st-intr state=RUNNABLE interrupted=true$' "Java: st-intr runs interrupted"
expect_grep "$o" '^ident_status: status main=0x3$' "main waiting in a raw monitor (RawMonitorWait in a handler): CONDVAR_WAIT"
expect_grep "$o" '^ident_status: status st-rawblocked=0x2 entered=0$' "agent thread blocked in RawMonitorEnter: MONITOR_WAIT"
expect_grep "$o" '^ident_status: st-rawblocked entered after release=yes$' "it enters once released"
expect_grep "$o" '^ident_status: status self=0x1 NULL=0x1 garbage=0x1$' "GetThreadStatus(self / NULL / garbage env) = RUNNABLE"

# SuspendThread / ResumeThread
expect_grep "$o" '^ident_status: suspend st-spin status=0x1 status_later=0x1 progress_while_suspended=0 progress_after_resume=yes$' \
  "suspended spinner: no progress, status stays RUNNABLE (no SUSPENDED bit), runs after resume"
expect_grep "$o" '^ident_status: suspend st-intr status=0x4001 status_later=0x4001 progress_while_suspended=0 progress_after_resume=yes$' \
  "suspended interrupted spinner: keeps RUNNABLE|INTERRUPTED, no progress"
expect_grep "$o" '^ident_status: suspend st-waiting status=0x3 after_resume=0x3$' "suspended waiting thread keeps CONDVAR_WAIT"
expect_grep "$o" '^ident_status: suspend st-blocked status=0x2 after_resume=0x2$' "suspended blocked thread keeps MONITOR_WAIT"
expect_grep "$o" '^ident_status: suspend st-sleeping status=0x3 after_resume=0x3$' "suspended sleeping thread keeps CONDVAR_WAIT"
expect_grep "$o" '^ident_status: double suspend, single resume: progress=yes$' "suspension does not nest"
expect_grep "$o" '^ident_status: self/NULL/garbage SuspendThread returned$' "SuspendThread(self / NULL / garbage) ignored"

# Lists
expect_grep "$o" '^ident_status: suspendlist results=0,10,10,10,0,0 spin_status=0x1 waiting_status=0x3 progress_while_suspended=0$' \
  "SuspendThreadList [spin, NULL, self, garbage, waiting, sleeping] -> 0,10,10,10,0,0; suspended, statuses kept"
expect_grep "$o" '^ident_status: suspendlist again results=14,14$' "SuspendThreadList of suspended threads -> 14"
expect_grep "$o" '^ident_status: resumelist results=0,0,0,10,10 progress_after=yes$' "ResumeThreadList [spin, waiting, sleeping, NULL, garbage] -> 0,0,0,10,10; spinner runs"
expect_grep "$o" '^ident_status: resumelist not suspended results=0$' "ResumeThreadList of a running thread -> 0"
expect_grep "$o" '^ident_status: duplicate list suspend=0,14 resume=0,0 progress_while_suspended=0 progress_after=yes$' \
  "same thread twice in a list: suspend 0,14; resume 0,0"
expect_grep "$o" '^ident_status: empty lists: results untouched=yes spin still runs=yes$' "n=0 / NULL list / NULL results: nothing written"

# ThreadHasRun
expect_grep "$o" '^ident_status: hasrun st-spin=1 st-sleeping=0 st-waiting=0 NULL=0 self=1 garbage=0$' \
  "ThreadHasRun: spinning TRUE, sleeping FALSE, waiting FALSE, NULL FALSE, self TRUE, garbage FALSE"
expect_grep "$o" '^ident_status: final progress st-spin=yes st-intr=yes$' "everything resumed at the end"
for t in st-spin st-blocked st-waiting st-sleeping st-intr; do
  expect_grep "$o" "^IdentStatus: java after $t state=$(sed -n "s/^IdentStatus: java before $t state=\\([A-Z_]*\\) .*/\\1/p" "$o") " "Java: $t in the same state afterwards"
done
finish
