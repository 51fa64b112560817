#!/usr/bin/env bash
# Whole-program checks of the extensions coarse and value_split: --help; bad input
# stops with one line and exit 2 leaving no files; tiny runs write every output with
# the statistics the claim table names (build/bin/verdicts --list); the same seed gives
# the same data; the plot scripts render.
source tests/lib_cli.sh
C=$BIN/coarse
V=$BIN/value_split
TINY=(--lrs 2 --held-out 16 --threads 1 --quiet)

for P in "$C" "$V"; do
  n=${P##*/}
  check "$n --help" "$P" --help
  "$P" --help 2>&1 | grep -q -- "--seed" && "$P" --help 2>&1 | grep -q -- "--data-seed" && cli_ok \
    || cli_fail "$n --help lists --seed and --data-seed"
  expect_user_error "$n: unknown flag" "$P" --bogus
  expect_user_error "$n: unknown scale" "$P" --scale huge --out "$TMPD/a"
  expect_user_error "$n: steps too few" "$P" --steps 5 --out "$TMPD/a"
  expect_user_error "$n: one-point grid" "$P" --lrs 1 --out "$TMPD/a"
  expect_user_error "$n: negative seed" "$P" --seed -1 --out "$TMPD/a"
  expect_user_error "$n: negative data seed" "$P" --data-seed -3 --out "$TMPD/a"
  expect_user_error "$n: held-out too small" "$P" --held-out 8 --out "$TMPD/a"
  expect_user_error "$n: not a number" "$P" --steps ten --out "$TMPD/a"
  expect_user_error "$n: missing text file" "$P" --text "$TMPD/none.txt" --out "$TMPD/a"
  expect_user_error "$n: unwritable output folder" "$P" --steps 20 "${TINY[@]}" --out /proc/nope
done
"$C" --help 2>&1 | grep -q -- "--layers" && cli_ok || cli_fail "coarse --help lists --layers"
expect_user_error "coarse: layers 13" "$C" --layers 13 --out "$TMPD/a"
expect_user_error "coarse: layers -1" "$C" --layers -1 --out "$TMPD/a"
expect_user_error "value_split: short too few" "$V" --short 10 --out "$TMPD/a"
expect_user_error "value_split: short not below steps" "$V" --steps 40 --short 40 --out "$TMPD/a"
expect_no_files "no output after bad flags" "$TMPD/a"

# tiny runs: every output, the claims' statistics, finite
check "coarse tiny run" "$C" --steps 20 --layers 1 "${TINY[@]}" --out "$TMPD/c"
check "value_split tiny run" "$V" --steps 40 --short 20 "${TINY[@]}" --out "$TMPD/v"
for f in grid.csv runs.csv eval.csv train.csv reference.csv stats.csv claims.txt run.txt; do
  [ -s "$TMPD/c/$f" ] && cli_ok || cli_fail "coarse writes $f"
done
for f in grid.csv runs.csv eval_short.csv eval_long.csv reference.csv stats.csv claims.txt run.txt; do
  [ -s "$TMPD/v/$f" ] && cli_ok || cli_fail "value_split writes $f"
done
# runs.csv: 5 partitions x 3 multipliers and the control at 1x and 2x; the header first
[ "$(wc -l <"$TMPD/c/runs.csv")" -eq 18 ] && head -1 "$TMPD/c/runs.csv" | grep -q '^partition,mult,lr,final_eval,share,diverged,spikes' \
  && cli_ok || cli_fail "coarse runs.csv has 17 runs under its header"
awk -F, 'NR > 1 && ($6 != 0 && $6 != 1) {bad = 1} END {exit bad}' "$TMPD/c/runs.csv" && cli_ok \
  || cli_fail "coarse runs.csv: diverged is 0 or 1"
awk -F, '$1 == "whole" {print $9}' "$TMPD/c/runs.csv" | sort -u | grep -qx 1 && cli_ok || cli_fail "whole has one block"
# --lrs 2 (TINY): each partition's first grid has 2 planned points; --steps 20: 20 steps in train.csv
[ "$(awk -F, 'NR > 1 && $1 == "alg3" && $7 == 0' "$TMPD/c/grid.csv" | wc -l)" -eq 2 ] && cli_ok || cli_fail "coarse --lrs 2: 2 planned points"
[ "$(wc -l <"$TMPD/c/train.csv")" -eq 21 ] && cli_ok || cli_fail "coarse --steps 20: 20 rows in train.csv"
# coarse.diverged: the final runs of this seed that diverged, as runs.csv marks them (a diverged run is s = 1)
awk -F, 'NR == FNR {if (FNR > 1) k += $6; next} $1 == "coarse.diverged" {c = $2} END {exit !(c != "" && c == k)}' \
  "$TMPD/c/runs.csv" "$TMPD/c/stats.csv" && cli_ok || cli_fail "coarse.diverged counts runs.csv's diverged runs"
awk -F, 'NR > 1 && $6 == 1 && $5 != 1 {bad = 1} END {exit bad}' "$TMPD/c/runs.csv" && cli_ok || cli_fail "a diverged run loses all: s = 1"
[ "$(wc -l <"$TMPD/v/runs.csv")" -eq 7 ] && cli_ok || cli_fail "value_split runs.csv has 6 runs under its header"
# every statistic and control the claim table reads from these programs is in stats.csv and finite
while read -r id exp stat _ _ _ _ ctrl; do
  d=$TMPD/c; [ "$exp" = value_split ] && d=$TMPD/v
  for name in "$stat" "$ctrl"; do
    v=$(awk -F, -v n="$name" '$1 == n {print $2}' "$d/stats.csv")
    [ -n "$v" ] && [ "$v" != nan ] && [ "$v" != inf ] && [ "$v" != -inf ] && cli_ok \
      || cli_fail "$id: $name in $exp's stats.csv is '$v'"
  done
done < <("$BIN/verdicts" --list | awk '$2 == "coarse" || $2 == "value_split"')
expect_claim_stats coarse "$TMPD/c/stats.csv"
expect_claim_stats value_split "$TMPD/v/stats.csv"
[ "$("$BIN/verdicts" --list | awk '$2 == "coarse" || $2 == "value_split"' | wc -l)" -eq 5 ] && cli_ok \
  || cli_fail "five claims of coarse and value_split in the table"
# the same seed, the same data; another seed, another random layout
check "coarse again" "$C" --steps 20 --layers 1 "${TINY[@]}" --out "$TMPD/c2"
cmp -s "$TMPD/c/stats.csv" "$TMPD/c2/stats.csv" && cmp -s "$TMPD/c/train.csv" "$TMPD/c2/train.csv" && cli_ok \
  || cli_fail "coarse is deterministic"
check "value_split again" "$V" --steps 40 --short 20 "${TINY[@]}" --out "$TMPD/v2"
cmp -s "$TMPD/v/stats.csv" "$TMPD/v2/stats.csv" && cli_ok || cli_fail "value_split is deterministic"
# the plot scripts render the tiny runs
if command -v gnuplot >/dev/null; then
  gnuplot -e "out='$TMPD/coarse.png'; res='$TMPD/c'" plots/coarse.gp 2>"$TMPD/gp.err" && [ -s "$TMPD/coarse.png" ] \
    && cli_ok || cli_fail "plots/coarse.gp: $(head -3 "$TMPD/gp.err")"
  gnuplot -e "out='$TMPD/vs.png'; res='$TMPD/v'" plots/value_split.gp 2>"$TMPD/gp.err" && [ -s "$TMPD/vs.png" ] \
    && cli_ok || cli_fail "plots/value_split.gp: $(head -3 "$TMPD/gp.err")"
  mkdir -p "$TMPD/runs/coarse" "$TMPD/runs/value_split"
  cp -r "$TMPD/c" "$TMPD/runs/coarse/seed1"; cp -r "$TMPD/c2" "$TMPD/runs/coarse/seed2"
  cp -r "$TMPD/v" "$TMPD/runs/value_split/seed1"; cp -r "$TMPD/v2" "$TMPD/runs/value_split/seed2"
  for g in coarse value_split; do
    gnuplot -e "out='$TMPD/${g}_seeds.png'; runs='$TMPD/runs/$g'; seeds='1 2'" plots/${g}_seeds.gp 2>"$TMPD/gp.err" \
      && [ -s "$TMPD/${g}_seeds.png" ] && cli_ok || cli_fail "plots/${g}_seeds.gp: $(head -3 "$TMPD/gp.err")"
  done
fi
cli_summary
