#!/usr/bin/env bash
# The first confirmation seed of a frozen claim table (docs/verdicts.md, "Confirmation on
# unseen seeds"): 1,000,000 + (the first eight hex digits of the freeze commit's hash mod
# 9,000,000), a range no run of the project has used (development: seeds 1-10). Nobody picks it.
#   scripts/confirm_seeds.sh <commit>        -> SEED0 (the study takes SEED0 .. SEED0+4)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/confirm_seeds.sh <freeze commit>" >&2; exit 2; }
hash=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "confirm_seeds: '$1' is not a commit" >&2; exit 2; }
echo $((1000000 + 16#${hash:0:8} % 9000000))
