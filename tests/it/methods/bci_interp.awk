# bci_interp.awk — interpret one int method from `javap -c -p` output, for
# tests/it/methods/bci_rewrite.sh.
#
#   javap -c -p BciBranch.class | awk -v method='classify(int)' -v inputs=-5,0,1 -f bci_interp.awk
#
# For each input, runs the method's bytecode and prints the instruction probes the bcitest agent
# must have recorded, in its format: "bcitest: t BCI KIND V1 V2[ OUTCOME]" (KIND insn, int,
# int2, obj, obj2; OUTCOME as cf_branch_outcome() gives it), then "sum S" of the results.
# Supports the int, reference-constant and branch instructions BciBranch.classify uses; any
# other instruction stops it with "unsupported". References are symbols: null, str, static.
function emit(b, k, v1, v2, o) { printf "bcitest: t %d %s %d %d%s\n", b, k, v1, v2, o }
function push(v) { st[sp++] = v }
function pop() { if (sp <= 0) { print "stack underflow"; exit 1 } return st[--sp] }
function cmp(c, a, b) {
  if (c == "eq") return a == b
  if (c == "ne") return a != b
  if (c == "lt") return a < b
  if (c == "ge") return a >= b
  if (c == "gt") return a > b
  return a <= b
}
function branch(pc, kind, v1, v2, t) {
  emit(pc, kind, v1, v2, sprintf(" taken=%d next=%d", t ? 1 : 0, t ? a1[pc] : pc + 3))
  return t ? a1[pc] + 0 : at[idx[pc] + 1]
}
function run(x,   pc, o, v, w, t, j, tg, pr, steps) {
  split("", loc); sp = 0; loc[0] = x; pc = at[1]
  for (steps = 0; steps < 100000; steps++) {
    o = op[pc]
    if (o ~ /^if(eq|ne|lt|ge|gt|le)$/) { v = pop(); pc = branch(pc, "int", v, 0, cmp(substr(o, 3), v, 0)); continue }
    if (o ~ /^if_icmp/) { w = pop(); v = pop(); pc = branch(pc, "int2", v, w, cmp(substr(o, 8), v, w)); continue }
    if (o ~ /^if_acmp/) { w = pop(); v = pop(); t = (v == w); pc = branch(pc, "obj2", t, 0, substr(o, 8) == "eq" ? t : !t); continue }
    if (o == "ifnull" || o == "ifnonnull") { v = pop(); t = (v == "null"); pc = branch(pc, "obj", t, 0, o == "ifnull" ? t : !t); continue }
    if (o == "tableswitch") {
      v = pop(); tg = df[pc]
      if (v >= lo[pc] && v <= hi[pc]) tg = pt[pc, v - lo[pc]]
      emit(pc, "int", v, 0, sprintf(" key=%d low=%d high=%d next=%d", v, lo[pc], hi[pc], tg)); pc = tg; continue
    }
    if (o == "lookupswitch") {
      v = pop(); tg = df[pc]; pr = np[pc]
      for (j = 0; j < np[pc]; j++) if (pk[pc, j] == v) { pr = j; tg = pt[pc, j]; break }
      emit(pc, "int", v, 0, sprintf(" pair=%d of=%d next=%d", pr, np[pc], tg)); pc = tg; continue
    }
    emit(pc, "insn", 0, 0, "")
    if (o == "iconst_m1") push(-1)
    else if (o ~ /^iconst_[0-5]$/) push(substr(o, 8) + 0)
    else if (o == "bipush" || o == "sipush") push(a1[pc] + 0)
    else if (o ~ /^[ia]load_[0-3]$/) push(loc[substr(o, 7) + 0])
    else if (o == "iload" || o == "aload") push(loc[a1[pc] + 0])
    else if (o ~ /^[ia]store_[0-3]$/) loc[substr(o, 8) + 0] = pop()
    else if (o == "istore" || o == "astore") loc[a1[pc] + 0] = pop()
    else if (o == "iinc") loc[a1[pc] + 0] += a2[pc]
    else if (o == "iadd") { w = pop(); v = pop(); push(v + w) }
    else if (o == "isub") { w = pop(); v = pop(); push(v - w) }
    else if (o == "imul") { w = pop(); v = pop(); push(v * w) }
    else if (o == "aconst_null") push("null")
    else if (o == "ldc" && rest[pc] ~ /\/\/ String/) push("str")
    else if (o == "getstatic" && rest[pc] ~ /:L/) push("static")
    else if (o == "goto") { pc = a1[pc] + 0; continue }
    else if (o == "ireturn") { total += pop(); return }
    else { print "unsupported " o " at " pc; exit 1 }
    pc = at[idx[pc] + 1]
  }
  print "too many steps"; exit 1
}
index($0, method ";") && $0 ~ /^  [a-z]/ { inm = 1; next }
inm && /^  [^ ]/ { inm = 0 }
inm && /^ *[0-9]+: [a-z]/ {
  b = $1 + 0; nb++; at[nb] = b; idx[b] = nb; op[b] = $2; a1[b] = $3 + 0; a2[b] = $4 + 0; rest[b] = $0
  if ($2 == "tableswitch") { sw = b; np[b] = 0; lo[b] = $5 + 0; hi[b] = $7 + 0 }
  if ($2 == "lookupswitch") { sw = b; np[b] = 0 }
  next
}
inm && /^ *-?[0-9]+: [0-9]+ *$/ { pk[sw, np[sw]] = $1 + 0; pt[sw, np[sw]] = $2 + 0; np[sw]++; next }
inm && /^ *default: [0-9]+/ { df[sw] = $2 + 0; next }
END {
  if (nb == 0) { print "method " method " not found"; exit 1 }
  n = split(inputs, X, ",")
  for (i = 1; i <= n; i++) run(X[i] + 0)
  print "sum " total
}
