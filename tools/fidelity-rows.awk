# fidelity-rows.awk — docs/mapping.md's tables as the C rows of shim/core/fidelity.c.
#
# The migration report prints, for each JVMPI function and event an agent used, the status,
# weight and one-line text of that item's row in docs/mapping.md: this script is the only
# way that text reaches the shim, so the two cannot drift. A table row is
#   | `Name(args)` ... | status | weight | one line |     (a function)
#   | N `NAME` | status | weight | one line |              (event number N)
# status: exact, differs, planned or not available (both: unavailable); weight: may,
# harmless or - (exact and unavailable rows). JVM_OnLoad is the agent's, not a table
# function, and is left out. Any other cell value stops the build with a message.
BEGIN { FS = " \\| "; bad = 0 }
/^\| (`|[0-9])/ {
    line = $0
    sub(/^\| /, "", line); sub(/ \|[ \t]*$/, "", line)
    n = split(line, c, / \| /)
    if (n != 4) { printf "%s:%d: a table row needs 4 cells, has %d\n", FILENAME, FNR, n > "/dev/stderr"; bad = 1; next }
    item = c[1]; st = c[2]; w = c[3]; how = c[4]
    if (item ~ /^`JVM_OnLoad/) next
    if (st == "exact") s = "FID_EXACT"
    else if (st == "differs") s = "FID_DIFFERS"
    else if (st == "planned" || st == "not available") s = "FID_UNAVAILABLE"
    else { printf "%s:%d: unknown status '%s'\n", FILENAME, FNR, st > "/dev/stderr"; bad = 1; next }
    if (w == "may") wt = "FW_MAY"
    else if (w == "harmless") wt = "FW_HARMLESS"
    else if (w == "-") wt = "FW_NONE"
    else { printf "%s:%d: unknown weight '%s'\n", FILENAME, FNR, w > "/dev/stderr"; bad = 1; next }
    if ((s == "FID_DIFFERS") != (wt != "FW_NONE")) {
        printf "%s:%d: a row that differs needs the weight may or harmless, others '-'\n", FILENAME, FNR > "/dev/stderr"; bad = 1; next
    }
    gsub(/\\/, "\\\\", how); gsub(/"/, "\\\"", how); gsub(/`/, "", how)
    if (item ~ /^`/) {
        name = item; sub(/^`/, "", name); sub(/[(`].*$/, "", name)
        printf "    {\"%s\", -1, %s, %s, \"%s\"},\n", name, s, wt, how
    } else {
        num = item; sub(/ .*$/, "", num)
        name = item; sub(/^[0-9]+ `/, "", name); sub(/`.*$/, "", name)
        printf "    {\"%s\", %s, %s, %s, \"%s\"},\n", name, num, s, wt, how
    }
}
END { if (bad) exit 1 }
