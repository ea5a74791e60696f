#!/bin/bash
# ident_unload.sh — CLASS_UNLOAD and CLASS_LOAD_HOOK through the ident_unload agent
# (legacy-agents/ident_unload.c), workload tests/java/IdentUnload.java.
#  - IdentUnloadee is defined by 3 throw-away class loaders; Java drops them and collects
#    until its weak references are cleared. The agent must get one CLASS_UNLOAD per
#    definition, with exactly the class ids its CLASS_LOADs announced, and inside each
#    handler RequestEvent(CLASS_LOAD, id) must still name IdentUnloadee (REQUESTED). Classes
#    of the application loader must not unload; after the handlers, the ids are dead
#    (RequestEvent FAIL, jobjectID2jobject NULL).
#  - CLASS_LOAD_HOOK: new_class_data preset to the original on every hook; an equal-length
#    rewrite of a UTF-8 constant in IdentHooked (malloc_f buffer) is what Java then prints;
#    garbage bytes returned for IdentHookGarbage are rejected with a log line, and the class
#    loads and works unchanged.
source "$ROOT/tests/it/lib.sh"
export JAVA_TIMEOUT=60
N=3

run_java "$(shim_arg ident_unload)" -cp "$CLASSES" IdentUnload $N
o=$WORK/out
expect_rc 0
expect_grep "$o" '^IdentUnload: done$' "workload finished"
expect_nogrep "$o" '^ident_unload: FAIL' "no FAIL from the agent"
expect_grep "$o" '^ident_unload: summary .* fails=0$' "agent counted no failure"

# CLASS_LOAD_HOOK
expect_grep "$o" '^ident_unload: hook IdentHooked rewrote constant at [0-9]+ len=[0-9]+$' "hook: agent rewrote IdentHooked's constant"
expect_grep "$o" '^IdentUnload: hooked text=HOOK_REWRITTEN_TXT$' "Java runs the rewritten IdentHooked"
expect_nogrep "$o" 'HOOK_ORIGINAL_TEXT' "the original constant is never seen by Java"
expect_grep "$o" '^ident_unload: hook IdentHookGarbage returned 64 garbage bytes$' "hook: agent returned garbage for IdentHookGarbage"
expect_grep "$WORK/err" 'CLASS_LOAD_HOOK for IdentHookGarbage returned 64 bytes that are not a class file' "shim logged the rejected garbage"
expect_grep "$o" '^IdentUnload: garbage text=HOOK_GARBAGE_CASE sum=5$' "IdentHookGarbage loaded unchanged and works"
expect_grep "$o" '^ident_unload: summary hooks=[0-9]{3,} hook_preset_bad=0 ' "every hook event had new_class_data preset to class_data (>= 100 hooks)"
expect_grep "$o" '^ident_unload: hook IdentUnloadee unchanged len=[0-9]+ preset=yes$' "hooks for classes of custom loaders too"

# CLASS_UNLOAD
expect_grep "$o" "^IdentUnload: collected=$N of $N agent_unloads=$N " "Java: all $N IdentUnloadee classes collected; agent reported $N unloads"
loads=$(sed -n 's/^ident_unload: load IdentUnloadee id=\(0x[0-9a-f]*\)$/\1/p' "$o" | sort)
unloads=$(sed -n 's/^ident_unload: unload IdentUnloadee id=\(0x[0-9a-f]*\) .*/\1/p' "$o" | sort)
expect_eq "$(echo "$loads" | sort -u | grep -c .)" "$N" "distinct class ids of the $N IdentUnloadee definitions"
expect_eq "$unloads" "$loads" "CLASS_UNLOAD ids (one each) = the CLASS_LOAD ids of IdentUnloadee"
expect_count "$o" '^ident_unload: unload IdentUnloadee id=0x[0-9a-f]+ request rc=0 events=1 requested_name=IdentUnloadee ' $N \
  "RequestEvent(CLASS_LOAD) inside each CLASS_UNLOAD handler: SUCCESS, REQUESTED, named IdentUnloadee"
expect_nogrep "$o" '^ident_unload: unload Ident(Unload|Hooked|HookGarbage|Unload\$Loader) ' "no class of the application loader unloaded"
expect_grep "$o" '^ident_unload: stale unloaded ids=([0-9]+) request_failed=\1 events=0 resolved=0$' \
  "after the handlers: unloaded ids are dead (RequestEvent FAIL, no event, jobjectID2jobject NULL)"
finish
