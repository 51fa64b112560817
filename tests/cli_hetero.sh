#!/usr/bin/env bash
# Whole-program checks of the extensions hetero and vspread: bad input stops
# with one line and exit 2 leaving no files; tiny runs write every output with
# the statistics the claim table names (build/bin/verdicts --list); the plot
# scripts render; the same seed gives the same data.
source tests/lib_cli.sh
H=$BIN/hetero
S=$BIN/vspread
TT=(--V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --quiet)
MLP=(--mlp-data synthetic --mlp-eval-n 50 --mlp-pool 2)

for P in "$H" "$S"; do
  n=${P##*/}
  check "$n --help" "$P" --help
  expect_user_error "$n: unknown flag" "$P" --bogus
  expect_user_error "$n: unknown scale" "$P" --scale huge --out "$TMPD/a"
  expect_user_error "$n: heads not dividing C" "$P" --heads 3 --out "$TMPD/a"
  expect_user_error "$n: bad learning rate" "$P" --lr -1 --out "$TMPD/a"
  expect_user_error "$n: steps 0" "$P" --steps 0 --out "$TMPD/a"
  expect_user_error "$n: negative seed" "$P" --seed -1 --out "$TMPD/a"
  expect_user_error "$n: missing text file" "$P" --text "$TMPD/none.txt" --out "$TMPD/a"
  expect_user_error "$n: unwritable output folder" "$P" "${TT[@]}" --out /proc/nope
done
"$H" --help | grep -q -- "--reps" && cli_ok || cli_fail "hetero --help lists --reps"
expect_user_error "hetero: checkpoint 1 (the end is taken anyway)" "$H" --checkpoint 1 --out "$TMPD/a"
expect_user_error "hetero: checkpoint 0" "$H" --checkpoint 0 --out "$TMPD/a"
expect_user_error "hetero: reps 1" "$H" --reps 1 --out "$TMPD/a"
expect_user_error "hetero: reps too many" "$H" --reps 20000 --out "$TMPD/a"
expect_user_error "hetero: MLP width" "$H" --mlp-width 0 --out "$TMPD/a"
expect_user_error "hetero: MLP pooling" "$H" --mlp-pool 9 --out "$TMPD/a"
expect_user_error "hetero: MLP data" "$H" --mlp-data cifar --out "$TMPD/a"
expect_user_error "hetero: MLP activation" "$H" --mlp-act swish --out "$TMPD/a"
expect_user_error "hetero: MLP test images" "$H" --mlp-eval-n 0 --out "$TMPD/a"
"$S" --help | grep -q -- "--checkpoints" && cli_ok || cli_fail "vspread --help lists --checkpoints"
expect_user_error "vspread: checkpoints decreasing" "$S" --checkpoints 0.5,0.1 --out "$TMPD/a"
expect_user_error "vspread: checkpoints on one step" "$S" --steps 20 --checkpoints 0.01,0.02 --out "$TMPD/a"
expect_user_error "vspread: checkpoint 0" "$S" --checkpoints 0,1 --out "$TMPD/a"
expect_user_error "vspread: checkpoint above 1" "$S" --checkpoints 0.5,1.5 --out "$TMPD/a"
expect_user_error "vspread: not a list" "$S" --checkpoints a,b --out "$TMPD/a"
expect_user_error "vspread: no Hessian batch flag" "$S" --hess-batch 8 --out "$TMPD/a"
expect_no_files "no output after bad flags" "$TMPD/a"
# a bad MLP setting found when its data is read: still before any file is committed
expect_user_error "hetero: MLP pool does not divide the images" "$H" "${TT[@]}" --mlp-data synthetic --mlp-pool 3 --out "$TMPD/b"
expect_user_error "hetero: more MLP test images than the data has" "$H" "${TT[@]}" --mlp-data synthetic --mlp-eval-n 9000 \
  --out "$TMPD/b"
expect_no_files "no output after a bad MLP setting" "$TMPD/b"

# tiny runs: every output, the claims' statistics, finite
check "hetero tiny run" "$H" "${TT[@]}" "${MLP[@]}" --hess-batch 6 --reps 3 --out "$TMPD/h"
check "vspread tiny run" "$S" "${TT[@]}" --checkpoints 0.1,0.5,1 --out "$TMPD/v"
expect_claim_stats hetero "$TMPD/h/stats.csv"
expect_claim_stats vspread "$TMPD/v/stats.csv"
for f in blocks.csv eigs.csv summary.csv density_tt_init.csv density_mlp_end.csv stats.csv claims.txt run.txt; do
  [ -s "$TMPD/h/$f" ] && cli_ok || cli_fail "hetero writes $f"
done
for f in spread.csv lr_ratio.csv checkpoints.csv stats.csv claims.txt run.txt; do
  [ -s "$TMPD/v/$f" ] && cli_ok || cli_fail "vspread writes $f"
done
# every statistic and control the claim table reads from these programs is in stats.csv and finite
while read -r id exp stat _ _ _ _ ctrl; do
  for name in "$stat" "$ctrl"; do
    v=$(awk -F, -v n="$name" '$1 == n {print $2}' "$TMPD/${exp:0:1}/stats.csv")
    [ -n "$v" ] && [ "$v" != nan ] && [ "$v" != inf ] && [ "$v" != -inf ] && cli_ok \
      || cli_fail "$id: $name in $exp's stats.csv is '$v'"
  done
done < <("$BIN/verdicts" --list | awk '$2 == "hetero" || $2 == "vspread"')
[ "$("$BIN/verdicts" --list | awk '$2 == "hetero" || $2 == "vspread"' | wc -l)" -eq 6 ] && cli_ok \
  || cli_fail "six claims of hetero and vspread in the table"
# every eigenvalue of every block is written: P of them per model and point
P=$(awk -F, '$1 == "tt" && $2 == "init"' "$TMPD/h/eigs.csv" | wc -l)
B=$(awk -F, '$1 == "tt" && $2 == "init" {s += $7} END {print s}' "$TMPD/h/blocks.csv")
[ "$P" -eq "$B" ] && [ "$P" -gt 0 ] && cli_ok || cli_fail "eigs.csv has the blocks' sizes in eigenvalues ($P vs $B)"
# the key bias has no curvature (softmax ignores it): left out, counted
awk -F, '$1 == "hetero.tt.init.zero_blocks" {exit !($2 >= 1)}' "$TMPD/h/stats.csv" && cli_ok \
  || cli_fail "hetero counts the Transformer's blocks without curvature"
# the same seed, the same data
check "hetero again" "$H" "${TT[@]}" "${MLP[@]}" --hess-batch 6 --reps 3 --out "$TMPD/h2"
cmp -s "$TMPD/h/stats.csv" "$TMPD/h2/stats.csv" && cmp -s "$TMPD/h/eigs.csv" "$TMPD/h2/eigs.csv" && cli_ok \
  || cli_fail "hetero is deterministic"
# the plot scripts render the tiny runs
if command -v gnuplot >/dev/null; then
  for g in hetero_spectra hetero_lmax; do
    gnuplot -e "out='$TMPD/$g.png'; res='$TMPD/h'" plots/$g.gp 2>"$TMPD/gp.err" && [ -s "$TMPD/$g.png" ] && cli_ok \
      || cli_fail "plots/$g.gp: $(head -3 "$TMPD/gp.err")"
  done
  for g in vspread_spread vspread_lr; do
    gnuplot -e "out='$TMPD/$g.png'; res='$TMPD/v'" plots/$g.gp 2>"$TMPD/gp.err" && [ -s "$TMPD/$g.png" ] && cli_ok \
      || cli_fail "plots/$g.gp: $(head -3 "$TMPD/gp.err")"
  done
  mkdir -p "$TMPD/runs/hetero" "$TMPD/runs/vspread"
  cp -r "$TMPD/h" "$TMPD/runs/hetero/seed1"; cp -r "$TMPD/h2" "$TMPD/runs/hetero/seed2"
  cp -r "$TMPD/v" "$TMPD/runs/vspread/seed1"; cp -r "$TMPD/v" "$TMPD/runs/vspread/seed2"
  for g in hetero vspread; do
    gnuplot -e "out='$TMPD/${g}_seeds.png'; runs='$TMPD/runs/$g'; seeds='1 2'" plots/${g}_seeds.gp 2>"$TMPD/gp.err" \
      && [ -s "$TMPD/${g}_seeds.png" ] && cli_ok || cli_fail "plots/${g}_seeds.gp: $(head -3 "$TMPD/gp.err")"
  done
fi
cli_summary
