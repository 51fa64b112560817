#!/usr/bin/env bash
# Whole-program checks of mlp_steps: bad flags stop with one line and exit 2
# leaving no files; a small run (both class counts, 8x8-pooled images, 5
# checkpoints) writes every output and every claim's statistic.
source tests/lib_cli.sh
P=$BIN/mlp_steps
check "--help exits 0" "$P" --help
"$P" --help | grep -q -- "--at-steps" && cli_ok || cli_fail "--help lists --at-steps"
expect_user_error "unknown flag" "$P" --bogus
expect_user_error "unknown scale" "$P" --scale huge --out "$TMPD/a"
expect_user_error "unknown data" "$P" --data mnist --out "$TMPD/a"
expect_user_error "a class count other than 10, 100" "$P" --sets 7 --out "$TMPD/a"
expect_user_error "a class count twice" "$P" --sets 10,10 --out "$TMPD/a"
expect_user_error "steps not increasing" "$P" --steps 20 --at-steps 0,5,3 --out "$TMPD/a"
expect_user_error "a step beyond --steps" "$P" --steps 20 --at-steps 0,5,30 --out "$TMPD/a"
expect_user_error "fewer than 3 checkpoints" "$P" --steps 20 --at-steps 0,5 --out "$TMPD/a"
expect_user_error "steps 0" "$P" --steps 0 --out "$TMPD/a"
expect_user_error "negative lr" "$P" --lr -1 --out "$TMPD/a"
expect_user_error "unknown activation" "$P" --act swish --out "$TMPD/a"
expect_user_error "width 0" "$P" --width 0 --out "$TMPD/a"
expect_user_error "cifar without a folder" "$P" --data cifar --out "$TMPD/a"
expect_no_files "no output after bad flags" "$TMPD/a"
expect_user_error "pool does not divide 32" "$P" --pool 3 --sets 10 --steps 5 --out "$TMPD/b"
expect_user_error "eval batch above the test set" "$P" --eval-n 5000 --sets 10 --steps 5 --out "$TMPD/b"
expect_no_files "no output after bad values" "$TMPD/b"

R=$TMPD/run
check "a small run" "$P" --pool 8 --steps 12 --at-steps 0,1,2,10,12 --eval-n 60 --seed 3 --data-seed 3 --out "$R" --quiet
for f in run.txt claims.txt steps.csv init.csv train.csv model.csv stats.csv; do
  [ -s "$R/$f" ] && cli_ok || cli_fail "small run wrote $f"
done
# 2 sets x 2 losses x 5 checkpoints; 2 sets x 2 losses x 12 steps; 2 sets x (2 activations x 2 losses)
[ "$(wc -l <"$R/steps.csv")" -eq 21 ] && cli_ok || cli_fail "steps.csv: header + 20 rows"
[ "$(wc -l <"$R/train.csv")" -eq 49 ] && cli_ok || cli_fail "train.csv: header + 48 rows"
[ "$(wc -l <"$R/init.csv")" -eq 9 ] && cli_ok || cli_fail "init.csv: header + 8 rows"
for n in c100.step1.hidden_excess control.c100.step1.hidden_excess c100.appear_margin control.c100.appear_margin \
         c100.pq_ratio control.c100.squared.pq_ratio c10.rho_offblock_pq control.c10.squared.rho_offblock_pq \
         c100.softmax_factor_excess control.c100.relu.softmax_factor_excess c10.softmax_factor_excess; do
  grep -qE "^mlp_steps.$n,-?[0-9]" "$R/stats.csv" && cli_ok || cli_fail "stats.csv: mlp_steps.$n finite"
done
expect_claim_stats mlp_steps "$R/stats.csv"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 10 ] && cli_ok || cli_fail "claims.txt: 5 claims per class count"
# the statistics agree with steps.csv: e at step 1, 100 classes, cross-entropy (column 11)
e1=$(awk -F, '$1 == 100 && $2 == "xent" && $3 == 1 {print $11}' "$R/steps.csv")
got=$(grep "^mlp_steps.c100.step1.hidden_excess," "$R/stats.csv" | cut -d, -f2)
awk -v a="$e1" -v b="$got" 'BEGIN {exit !(a - b < 1e-9 && b - a < 1e-9)}' && cli_ok || cli_fail "step-1 excess ($e1 vs $got)"
# pq_rel is 1 at step 0 and the permuted control is near 0
awk -F, 'NR > 1 && $3 == 0 && ($7 < 1 - 1e-12 || $7 > 1 + 1e-12) {bad = 1} END {exit bad}' "$R/steps.csv" \
  && cli_ok || cli_fail "pq_rel = 1 at step 0"
awk -F, 'NR > 1 && ($13 > 0.2 || $13 < -0.2) {bad = 1} END {exit bad}' "$R/steps.csv" \
  && cli_ok || cli_fail "permuted excess near 0"
# the same seed gives the same data files
check "a second run, same seed" "$P" --pool 8 --steps 12 --at-steps 0,1,2,10,12 --eval-n 60 --seed 3 --data-seed 3 --out "$TMPD/again" --quiet
cmp -s "$R/steps.csv" "$TMPD/again/steps.csv" && cmp -s "$R/stats.csv" "$TMPD/again/stats.csv" \
  && cli_ok || cli_fail "deterministic outputs"
# without checkpoint 10 the appearance statistic is NaN (the verdict INVALID), not a number made up
check "a run without step 10" "$P" --sets 100 --pool 8 --steps 5 --at-steps 0,1,5 --eval-n 40 --out "$TMPD/no10" --quiet
grep -q "^mlp_steps.c100.appear_margin,nan$" "$TMPD/no10/stats.csv" && grep -q "^N/A: the structure appears" "$TMPD/no10/claims.txt" && cli_ok || cli_fail "no step 10: margin nan"
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "no temporaries left"
cli_summary
