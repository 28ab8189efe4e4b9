# Used by conformance/run.sh: awk -f conformance/summary.awk server-REV.txt
# Splits the suite's summary into scored and unscored counts. The
# "Not scored" section names the unscored scenarios and their kind
# (extension, pending); every other scenario of the summary is scored.
/^=== SUMMARY ===/ { in_sum = 1; next }
in_sum && /^(✓|✗) [^ ]+: [0-9]+ passed, [0-9]+ failed/ {
  name = $2; sub(/:$/, "", name)
  order[++n] = name; line[name] = $0; pass[name] = $3; fail[name] = $5
  next
}
/^Not scored/ { in_uns = 1; next }
in_uns && /^  (✓|✗) [^ ]+ \([a-z-]+\)/ { k = $3; gsub(/[()]/, "", k); kind[$2] = k }
END {
  for (i = 1; i <= n; i++) {
    s = order[i]; k = (s in kind) ? kind[s] : "scored"
    if (k == "scored") print line[s]
    p[k] += pass[s]; f[k] += fail[s]; c[k]++
    if (fail[s] > 0) bad[k]++
  }
  printf "Scored: %d scenarios, %d checks passed, %d failed\n", c["scored"], p["scored"], f["scored"]
  for (k in c) if (k != "scored")
    printf "Unscored (%s): %d scenarios (%d failing), %d checks passed, %d failed\n", k, c[k], bad[k], p[k], f[k]
}
