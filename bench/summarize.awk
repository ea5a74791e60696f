# summarize.awk — statistics for one scenario on one JDK, from bench/run.sh's results.tsv.
#
#   awk -F'\t' -v jdk=17 -v scen=methods -v none=none -v shim=bmethods -v native=nmethods \
#       -v goal=shim_native -v goalmax=0.5 -v countkey=entries -v expect=5000000 \
#       -v summary=FILE -v checks=FILE -f bench/summarize.awk results.tsv
#
# results.tsv columns:
#   1 jdk  2 scenario  3 round  4 config  5 status  6 elapsed_ms  7 cpu_ms  8 wall_ms
#   9 proc_cpu_s  10 counts
# elapsed_ms and cpu_ms are printed by the workload (in-Java elapsed time around its loop, and
# the CPU time of the thread(s) doing the work over the same span); counts ("key=value,...")
# by the agent at shutdown.
#
# Two-configuration scenarios (dump) pass none="" and shim, native = the shim configuration
# and its comparison (jcmd); dump also passes floor = the native walk-and-tag agent (ndump),
# shown beside them with floor/jcmd and shim/floor. Then elapsed_ms is each run's in-VM dump time, wall_ms the dump
# seen from outside (SIGQUIT to the agent's DUMP_MS line; the jcmd command), the goal
# (goal=shim_jcmd) is on shim/jcmd of elapsed_ms, and counts carry bytes=..., compared
# between the two (within 2x) and against expect, the minimum size of the workload's records.
#
# Ratios are per round (a round runs every configuration once, back to back), so slow drift
# of the shared machine's load cancels out; the ratio reported is the median of the
# per-round ratios, with their interquartile range and min..max. Prints a block for humans
# and appends one tab-separated row to `summary`; a failed count check goes to `checks`.
# Plain POSIX awk (mawk has no asort).

function sortnum(arr, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = arr[i]
        for (j = i - 1; j >= 1 && arr[j] > t; j--)
            arr[j + 1] = arr[j]
        arr[j + 1] = t
    }
}
# quantile of sorted arr[1..n], linear interpolation between order statistics
function q(arr, n, p,    h, lo) {
    if (n == 0) return ""
    h = (n - 1) * p + 1
    lo = int(h)
    if (lo >= n) return arr[n]
    return arr[lo] + (h - lo) * (arr[lo + 1] - arr[lo])
}
function kv(counts, key,    parts, m, i, s) {
    m = split(counts, parts, ",")
    for (i = 1; i <= m; i++) {
        split(parts[i], s, "=")
        if (s[1] == key) return s[2]
    }
    return ""
}
function fmt_ms(v) { return v == "" ? "-" : sprintf("%.0f", v) }
function fmt_r(v) {
    if (v == "") return "-"
    if (v >= 10) return sprintf("%.1fx", v)
    return sprintf("%.3f", v)
}
# distribution of column col of config c over its good runs, into S[]
function stats(c, col,    a, n, r) {
    n = 0
    for (r = 1; r <= maxr; r++)
        if (((c, r) in ok) && val[col, c, r] != "")
            a[++n] = val[col, c, r]
    sortnum(a, n)
    S["n"] = n; S["med"] = q(a, n, 0.5); S["min"] = (n ? a[1] : ""); S["max"] = (n ? a[n] : "")
}
# per-round ratios ca/cb of column col, into R[]
function ratio(ca, cb, col,    a, n, r, x, y) {
    n = 0
    for (r = 1; r <= maxr; r++) {
        if (!(((ca, r) in ok) && ((cb, r) in ok))) continue
        x = val[col, ca, r]; y = val[col, cb, r]
        if (x == "" || y == "" || y + 0 <= 0) continue
        a[++n] = x / y
    }
    sortnum(a, n)
    R["n"] = n; R["med"] = q(a, n, 0.5); R["q1"] = q(a, n, 0.25); R["q3"] = q(a, n, 0.75)
    R["min"] = (n ? a[1] : ""); R["max"] = (n ? a[n] : "")
}
function ratio_line(label, ca, cb, col, note) {
    ratio(ca, cb, col)
    if (R["n"] == 0) { printf "  %-26s -  (no complete round)\n", label; return }
    printf "  %-26s %-8s IQR %s..%s   min..max %s..%s%s\n", label, fmt_r(R["med"]),
           fmt_r(R["q1"]), fmt_r(R["q3"]), fmt_r(R["min"]), fmt_r(R["max"]), note
}
function count_median(c, key,    a, n, r, v) {
    n = 0
    for (r = 1; r <= maxr; r++)
        if ((c, r) in ok) {
            v = kv(val["counts", c, r], key)
            if (v != "") a[++n] = v + 0
        }
    sortnum(a, n)
    return n ? q(a, n, 0.5) : ""
}

$1 == jdk && $2 == scen {
    c = $4; r = $3 + 0
    if (r > maxr) maxr = r
    runs[c]++
    if ($5 == "ok") {
        ok[c, r] = 1
        val["ms", c, r] = $6 + 0
        val["cpu", c, r] = ($7 == "-" ? "" : $7 + 0)
        val["pcpu", c, r] = ($9 == "-" ? "" : $9 + 0)
        val["wall", c, r] = ($8 == "-" ? "" : $8 + 0)
        val["counts", c, r] = $10
    } else {
        bad[c]++
    }
}

function dump_end(    i, c, line, nr, r, verdict, note, check, why, cs, cn, f) {
    nconf = split(shim " " native " " floor, cf, " ")
    label[shim] = "(shim + JVMPI HEAP_DUMP)"; label[native] = "(jcmd GC.heap_dump)"
    label[floor] = "(floor: JVMTI walk + tags)"
    printf "  %-31s %5s %9s %13s %13s %8s %10s\n", "configuration", "runs", "dump ms", "min..max ms",
           "outside ms", "cpu ms", "process s"
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        stats(c, "ms"); med[c] = S["med"]; line = sprintf("  %-31s %5s %9s %13s", c " " label[c],
              S["n"] "/" runs[c] + 0, fmt_ms(S["med"]), fmt_ms(S["min"]) ".." fmt_ms(S["max"]))
        stats(c, "wall"); line = line sprintf(" %13s", fmt_ms(S["med"]))
        stats(c, "cpu"); line = line sprintf(" %8s", fmt_ms(S["med"]))
        stats(c, "pcpu"); line = line sprintf(" %10s", S["med"] == "" ? "-" : sprintf("%.2f", S["med"]))
        print line (bad[c] ? "   " bad[c] " FAILED" : "")
    }
    print "  (cpu ms: the dumping JVM's CPU time over the outside span, from /proc/PID/stat; the"
    print "   load of other processes does not count, so it is steadier than wall times here)"
    print "  (dump ms: shim = RequestEvent(HEAP_DUMP, level 2) timed in the agent; jcmd = the VM's"
    print "   \"Heap dump file created ... in X secs\" (full GC + writing the file). outside ms: SIGQUIT"
    print "   to the agent's DUMP_MS line (includes the VM's thread dump); the whole jcmd command;"
    print "   floor = FollowReferences tagging every untagged object, nothing else, timed in ndump)"
    nr = 0
    for (r = 1; r <= maxr; r++) if (((shim, r) in ok) && ((native, r) in ok)) nr++
    printf "  per-round ratios over %d complete rounds (median, IQR, min..max):\n", nr
    ratio_line("shim / jcmd (in-VM)", shim, native, "ms", "")
    rv_med = R["med"]; rv_q1 = R["q1"]; rv_q3 = R["q3"]
    ratio_line("shim / jcmd (outside)", shim, native, "wall", "")
    rf_med = ""; rf_q1 = ""; rf_q3 = ""
    ratio_line("cpu: shim / jcmd", shim, native, "cpu", "")
    cj_med = R["med"]; cf_med = ""
    if (floor != "") {
        ratio_line("floor / jcmd (in-VM)", floor, native, "ms", "")
        ratio_line("cpu: floor / jcmd", floor, native, "cpu", "")
        ratio_line("cpu: shim / floor", shim, floor, "cpu", "")
        cf_med = R["med"]
        ratio_line("shim / floor", shim, floor, "ms", "")
        rf_med = R["med"]; rf_q1 = R["q1"]; rf_q3 = R["q3"]
    }
    verdict = "NO DATA"; goaltxt = "shim/jcmd <= " goalmax
    if (rv_med != "") verdict = (rv_med <= goalmax + 0) ? "PASS" : "MISS"
    note = ""
    if (rv_med != "" && rv_q1 <= goalmax + 0 && goalmax + 0 <= rv_q3)
        note = "; the threshold lies inside the IQR: the verdict is within this machine's noise"
    printf "  goal %s (in-VM dump times): %s (median %s%s)\n", goaltxt, verdict, fmt_r(rv_med), note

    print "  dump sizes (first complete round of each):"
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        for (r = 1; r <= maxr; r++)
            if ((c, r) in ok) { printf "    %s: %s (round %d)\n", c, val["counts", c, r], r; break }
    }
    cs = count_median(shim, countkey)
    cn = count_median(native, countkey)
    if (cs == "" || cn == "") {
        check = "MISSING"; why = "no dump size"
    } else {
        f = cs / cn
        check = (f >= 0.5 && f <= 2) ? "ok" : "DIFFER"
        why = sprintf("median %s: shim %.0f, jcmd %.0f, ratio %.3f", countkey, cs, cn, f)
        if (expect != "" && cs < expect + 0) {
            check = "LOW"
            why = why sprintf("; below the %d the workload's own records need", expect)
        }
    }
    printf "  size check (shim dump bytes within 2x of the .hprof, >= %s): %s (%s)\n", expect,
           check, why
    if (check != "ok")
        print jdk "\t" scen "\t" check "\t" why > checks
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", jdk, scen,
           floor == "" ? "-" : fmt_ms(med[floor]), fmt_ms(med[shim]), fmt_ms(med[native]),
           fmt_r(rf_med), rf_med == "" ? "-" : fmt_r(rf_q1) ".." fmt_r(rf_q3), fmt_r(rv_med),
           fmt_r(rv_q1) ".." fmt_r(rv_q3), fmt_r(cf_med), fmt_r(cj_med), goaltxt, verdict, check >> summary
}

# Two agents doing one job, timed by themselves (calltrace): elapsed_ms and cpu_ms are the
# agent's own timings of the job; counts carry traces=, short=, unstable= and sig=. The check
# wants every run of both agents to print the same sig (the same frames: depth, methods,
# lines), no short or unstable trace, and the expected number of traces.
function pair_end(    i, c, line, nr, r, verdict, note, check, why, sig0, s, n, t) {
    nconf = split(shim " " native, cf, " ")
    label[shim] = "(shim + JVMPI agent)"; label[native] = "(native JVMTI agent)"
    printf "  %-31s %5s %9s %13s %9s %10s %11s\n", "configuration", "runs", "median ms", "min..max ms",
           "cpu ms", "process s", "ns/trace"
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        stats(c, "ms"); med[c] = S["med"]; line = sprintf("  %-31s %5s %9s %13s", c " " label[c],
              S["n"] "/" runs[c] + 0, fmt_ms(S["med"]), fmt_ms(S["min"]) ".." fmt_ms(S["max"]))
        stats(c, "cpu"); line = line sprintf(" %9s", fmt_ms(S["med"]))
        stats(c, "pcpu"); line = line sprintf(" %10s", S["med"] == "" ? "-" : sprintf("%.2f", S["med"]))
        t = count_median(c, countkey)
        line = line sprintf(" %11s", (t == "" || med[c] == "") ? "-" : sprintf("%.0f", med[c] * 1e6 / t))
        print line (bad[c] ? "   " bad[c] " FAILED" : "")
    }
    nr = 0
    for (r = 1; r <= maxr; r++) if (((shim, r) in ok) && ((native, r) in ok)) nr++
    printf "  per-round ratios over %d complete rounds (median, IQR, min..max):\n", nr
    ratio_line("shim / native", shim, native, "ms", ""); rv_med = R["med"]; rv_q1 = R["q1"]; rv_q3 = R["q3"]
    ratio_line("cpu: shim / native", shim, native, "cpu", "   (the sampler thread's CPU time)")
    cv_med = R["med"]
    goaltxt = "shim/native <= " goalmax; verdict = "NO DATA"
    if (rv_med != "") verdict = (rv_med <= goalmax + 0) ? "PASS" : "MISS"
    note = ""
    if (rv_med != "" && rv_q1 <= goalmax + 0 && goalmax + 0 <= rv_q3)
        note = "; the threshold lies inside the IQR: the verdict is within this machine's noise"
    printf "  goal %s: %s (median %s%s)\n", goaltxt, verdict, fmt_r(rv_med), note
    print "  counts (first complete round of each agent):"
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        for (r = 1; r <= maxr; r++)
            if ((c, r) in ok) { printf "    %s: %s (round %d)\n", c, val["counts", c, r], r; break }
    }
    check = "ok"; why = ""; sig0 = ""; n = 0
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        for (r = 1; r <= maxr; r++) {
            if (!((c, r) in ok)) continue
            n++
            s = kv(val["counts", c, r], "sig")
            if (s == "") { check = "MISSING"; why = why " " c " r" r ": no sig;" ; continue }
            if (sig0 == "") sig0 = s
            else if (s != sig0) { check = "DIFFER"; why = why " " c " r" r ": sig " s " != " sig0 ";" }
            if (kv(val["counts", c, r], "short") != "0" || kv(val["counts", c, r], "unstable") != "0") {
                check = "DIFFER"; why = why " " c " r" r ": short/unstable traces;"
            }
            if (expect != "" && kv(val["counts", c, r], countkey) + 0 != expect + 0) {
                check = "LOW"; why = why " " c " r" r ": " countkey " != " expect ";"
            }
        }
    }
    if (n == 0) { check = "MISSING"; why = " no run completed" }
    if (why == "") why = sprintf(" %d runs, one sig %s, no short or unstable trace, %s=%s each", n, sig0, countkey, expect)
    printf "  frames check (same frames in every run of both agents): %s (%s)\n", check, substr(why, 2)
    if (check != "ok")
        print jdk "\t" scen "\t" check "\t" substr(why, 2) > checks
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", jdk, scen, "-",
           fmt_ms(med[shim]), fmt_ms(med[native]), "-", "-", fmt_r(rv_med),
           fmt_r(rv_q1) ".." fmt_r(rv_q3), "-", fmt_r(cv_med), goaltxt, verdict, check >> summary
}

END {
    if (none == "") { if (scen == "dump") dump_end(); else pair_end(); exit }
    nconf = split(none " " shim " " native, cf, " ")
    label[none] = "(no agent)"; label[shim] = "(shim + JVMPI agent)"; label[native] = "(native JVMTI agent)"
    printf "  %-31s %5s %9s %13s %9s %10s\n", "configuration", "runs", "median ms", "min..max ms",
           "cpu ms", "process s"
    for (i = 1; i <= nconf; i++) {
        c = cf[i]
        stats(c, "ms"); med[c] = S["med"]; line = sprintf("  %-31s %5s %9s %13s", c " " label[c],
              S["n"] "/" runs[c] + 0, fmt_ms(S["med"]), fmt_ms(S["min"]) ".." fmt_ms(S["max"]))
        stats(c, "cpu"); line = line sprintf(" %9s", fmt_ms(S["med"]))
        stats(c, "pcpu"); line = line sprintf(" %10s", S["med"] == "" ? "-" : sprintf("%.2f", S["med"]))
        print line (bad[c] ? "   " bad[c] " FAILED" : "")
    }
    nr = 0
    for (r = 1; r <= maxr; r++) if (((none, r) in ok) && ((shim, r) in ok) && ((native, r) in ok)) nr++
    printf "  per-round ratios over %d complete rounds (median, IQR, min..max):\n", nr
    ratio_line("shim / no-agent", shim, none, "ms", ""); rn_med = R["med"]; rn_q1 = R["q1"]; rn_q3 = R["q3"]
    ratio_line("shim / native", shim, native, "ms", ""); rv_med = R["med"]; rv_q1 = R["q1"]; rv_q3 = R["q3"]
    ratio_line("native / no-agent", native, none, "ms", "")
    ratio_line("cpu: shim / no-agent", shim, none, "cpu", "   (workload threads' CPU time)")
    cn_med = R["med"]
    ratio_line("cpu: shim / native", shim, native, "cpu", "")
    cv_med = R["med"]

    verdict = "-"; goaltxt = "none (informational)"; gv = ""; gq1 = ""; gq3 = ""
    if (goal == "shim_none") { gv = rn_med; gq1 = rn_q1; gq3 = rn_q3; goaltxt = "shim/no-agent <= " goalmax }
    else if (goal == "shim_native") { gv = rv_med; gq1 = rv_q1; gq3 = rv_q3; goaltxt = "shim/native <= " goalmax }
    if (goal != "none") {
        if (gv == "") verdict = "NO DATA"
        else verdict = (gv <= goalmax + 0) ? "PASS" : "MISS"
        note = ""
        if (gv != "" && gq1 <= goalmax + 0 && goalmax + 0 <= gq3)
            note = "; the threshold lies inside the IQR: the verdict is within this machine's noise"
        printf "  goal %s: %s (median %s%s)\n", goaltxt, verdict, fmt_r(gv), note
    }

    # Light correctness check: the shim's JVMPI agent and the native agent count the same kind
    # of event on the same workload; their counts must agree within 2x and be at least what
    # the workload itself does.
    check = "-"
    if (countkey != "") {
        print "  counts printed at shutdown (first complete round of each agent):"
        for (i = 2; i <= nconf; i++) {
            c = cf[i]
            for (r = 1; r <= maxr; r++)
                if ((c, r) in ok) { printf "    %s: %s (round %d)\n", c, val["counts", c, r], r; break }
        }
        cs = count_median(shim, countkey)
        cn = count_median(native, countkey)
        if (cs == "" || cn == "") {
            check = "MISSING"
            why = "an agent printed no " countkey " count"
        } else {
            f = cs / cn
            check = (f >= 0.5 && f <= 2) ? "ok" : "DIFFER"
            why = sprintf("median %s: shim %.0f, native %.0f, ratio %.3f", countkey, cs, cn, f)
            if (expect != "" && (cs < expect + 0 || cn < expect + 0)) {
                check = "LOW"
                why = why sprintf("; below the %d the workload does", expect)
            }
        }
        printf "  count check (%s within 2x, >= %s done by the workload): %s (%s)\n", countkey,
               expect, check, why
        if (check != "ok")
            print jdk "\t" scen "\t" check "\t" why > checks
    }
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", jdk, scen, fmt_ms(med[none]),
           fmt_ms(med[shim]), fmt_ms(med[native]), fmt_r(rn_med), fmt_r(rn_q1) ".." fmt_r(rn_q3),
           fmt_r(rv_med), fmt_r(rv_q1) ".." fmt_r(rv_q3), fmt_r(cn_med), fmt_r(cv_med), goaltxt,
           verdict, check >> summary
}
