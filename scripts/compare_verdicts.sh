#!/usr/bin/env bash
# compare_verdicts.sh A/verdicts.csv B/verdicts.csv: claim by claim, the
# verdicts of two studies (two blocks of seeds, or two commits) side by side,
# and the PASS <-> FAIL flips among the claims A calls ROBUST. Exit 1 when
# such a flip exists, 0 otherwise; 2 on a missing file.
set -euo pipefail
a=$1 b=$2
for f in "$a" "$b"; do [ -f "$f" ] || { echo "compare_verdicts: no $f" >&2; exit 2; }; done
awk -F, '
  FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
  FILENAME == ARGV[1] { va[$1] = $col[FILENAME, "verdict"]; ra[$1] = $col[FILENAME, "robustness"]; order[++n] = $1; next }
  { vb[$1] = $col[FILENAME, "verdict"] }
  END {
    flips = 0; same = 0
    printf "| claim | %s | robustness | %s |\n|---|---|---|---|\n", ARGV[1], ARGV[2]
    for (k = 1; k <= n; k++) {
      id = order[k]; b = (id in vb) ? vb[id] : "-"
      mark = ""
      if (ra[id] == "ROBUST" && ((va[id] == "PASS" && b == "FAIL") || (va[id] == "FAIL" && b == "PASS"))) { mark = " **flip**"; flips++ }
      same += va[id] == b
      printf "| `%s` | %s | %s | %s%s |\n", id, va[id], ra[id], b, mark
    }
    printf "\n%d of %d claims with the same verdict; %d PASS<->FAIL flips among robust verdicts.\n", same, n, flips
    exit flips > 0
  }' "$a" "$b"
