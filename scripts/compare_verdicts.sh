#!/usr/bin/env bash
# compare_verdicts.sh A/verdicts.csv B/verdicts.csv [NAME_A NAME_B]: claim by
# claim, the verdicts of two studies (two blocks of seeds, two commits, or the
# Markov chain and English text) side by side, each with its own robustness
# under the alternatives it ran ("-": none run), and the PASS <-> FAIL flips
# among the claims A calls ROBUST. A claim B did not judge shows "-". The
# column heads are NAME_A and NAME_B (default: the file names). Exit 1 when
# such a flip exists, 0 otherwise; 2 on a missing file.
set -euo pipefail
a=$1 b=$2 name_a=${3:-$1} name_b=${4:-$2}
for f in "$a" "$b"; do [ -f "$f" ] || { echo "compare_verdicts: no $f" >&2; exit 2; }; done
awk -F, -v name_a="$name_a" -v name_b="$name_b" '
  FNR == 1 { file++; for (i = 1; i <= NF; i++) col[file, $i] = i; next }
  file == 1 { va[$1] = $col[file, "verdict"]; ra[$1] = $col[file, "robustness"]; order[++n] = $1; next }
  { vb[$1] = $col[file, "verdict"]; rb[$1] = $col[file, "robustness"] }
  END {
    flips = 0; same = 0; both = 0
    printf "| claim | %s | robustness | %s | robustness |\n|---|---|---|---|---|\n", name_a, name_b
    for (k = 1; k <= n; k++) {
      id = order[k]; b = (id in vb) ? vb[id] : "-"; r = (id in rb && rb[id] != "") ? rb[id] : "-"
      mark = ""
      if (ra[id] == "ROBUST" && ((va[id] == "PASS" && b == "FAIL") || (va[id] == "FAIL" && b == "PASS"))) { mark = " **flip**"; flips++ }
      if (b != "-") { both++; same += va[id] == b }
      printf "| `%s` | %s | %s | %s%s | %s |\n", id, va[id], ra[id], b, mark, r
    }
    printf "\n%d of the %d claims judged in both have the same verdict; %d PASS<->FAIL flips among robust verdicts.\n", same, both, flips
    exit flips > 0
  }' "$a" "$b"
