# Whole-program checks of fig4 and fig3: bad input -> one line,
# exit 2, no files; a small run writes every output.
source tests/lib_cli.sh
P=$BIN/fig4
check "fig4 --help exits 0" "$P" --help
"$P" --help | grep -q -- "--scale" && cli_ok || cli_fail "fig4 --help lists --scale"
for bad in "--ds 1,5" "--ds 0" "--d 1 --panels b" "--kappa 0.5" "--kappas 10,0.9" "--kappa nan" \
           "--thetas -3" "--points -1" "--thetas abc" "--points 1e3" "--rs 1" "--rs x" \
           "--scale huge" "--panels c" "--threads 0" "--seed -1" "--bogus" "--ds 2,x"; do
  expect_user_error "fig4 $bad" "$P" $bad --out "$TMPD/bad"
done
expect_no_files "fig4: no output after bad input" "$TMPD/bad"
[ ! -e "$TMPD/bad" ] && cli_ok || cli_fail "fig4: bad input creates no folder"
expect_user_error "fig4 unwritable output folder" "$P" --thetas 1 --points 1 --rs 2 --ds 2 --kappas 10 --out /proc/nope
mkdir -p "$TMPD/ro" && chmod 555 "$TMPD/ro"
if [ "$(id -u)" != 0 ]; then  # root writes anywhere: the /proc case above covers it
  expect_user_error "fig4 read-only output folder" "$P" --thetas 1 --points 1 --rs 2 --out "$TMPD/ro"
  expect_no_files "fig4: nothing in a read-only folder" "$TMPD/ro"
fi
check "fig4 small run" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --out "$TMPD/run" --quiet
for f in fig4a.csv fig4b.csv fig4a_phase.csv fig4b_phase.csv claims.txt run.txt; do
  [ -s "$TMPD/run/$f" ] && cli_ok || cli_fail "fig4 writes $f"
done
[ "$(head -1 "$TMPD/run/fig4a.csv" | cut -d, -f1-4)" = "d,kappa,R,tau_mean" ] && cli_ok || cli_fail "fig4a.csv header"
# 2 curves x 5 R values + header
[ "$(wc -l <"$TMPD/run/fig4a.csv")" -eq 11 ] && cli_ok || cli_fail "fig4a.csv has one row per (d, R)"
# R = 0 rows: tau = 1 exactly
awk -F, 'NR>1 && $3==0 && $4!=1 {bad=1} END{exit bad}' "$TMPD/run/fig4a.csv" && cli_ok || cli_fail "tau = 1 at R = 0"
grep -Eq "^E1 (PASS|FAIL): [0-9]+ of 4 curves" "$TMPD/run/claims.txt" && cli_ok || cli_fail "claims.txt verdict line"
[ -z "$(find "$TMPD/run" -name '*.tmp.*')" ] && cli_ok || cli_fail "fig4: no temporaries left"
# results do not depend on the thread count
check "fig4 one thread" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --threads 1 --out "$TMPD/run1" --quiet
cmp -s "$TMPD/run/fig4a.csv" "$TMPD/run1/fig4a.csv" && cmp -s "$TMPD/run/fig4b_phase.csv" "$TMPD/run1/fig4b_phase.csv" \
  && cli_ok || cli_fail "fig4 output independent of --threads"

P=$BIN/fig3
check "fig3 --help exits 0" "$P" --help
"$P" --help | grep -q -- "--lr-points" && cli_ok || cli_fail "fig3 --help lists --lr-points"
for bad in "--steps 0" "--steps -5" "--steps abc" "--block 1" "--block x" "--lr-lo 0" "--lr-lo 1 --lr-hi 0.1" \
           "--lr-points 0" "--lr-points -2" "--beta1 1" "--beta1 -0.1" "--eps -1" "--seed -1" "--bogus"; do
  expect_user_error "fig3 $bad" "$P" $bad --out "$TMPD/bad3"
done
[ ! -e "$TMPD/bad3" ] && cli_ok || cli_fail "fig3: bad input creates no folder"
expect_user_error "fig3 unwritable output folder" "$P" --steps 5 --block 3 --lr-points 2 --out /proc/nope
check "fig3 small run" "$P" --steps 60 --block 6 --lr-points 4 --out "$TMPD/run3" --quiet
for f in H.npy H1.npy eigenvalues.csv loss_full.csv loss_h1.csv lrs.csv grid.csv grid_full_adam.csv \
         grid_h1_adam.csv grid_full_adam_mini.csv grid_h1_adam_mini.csv claims.txt run.txt; do
  [ -s "$TMPD/run3/$f" ] && cli_ok || cli_fail "fig3 writes $f"
done
[ "$(head -1 "$TMPD/run3/loss_full.csv")" = "step,gd,blockgd,adam,adam_mini" ] && cli_ok || cli_fail "loss_full.csv header"
[ "$(wc -l <"$TMPD/run3/loss_full.csv")" -eq 62 ] && cli_ok || cli_fail "loss_full.csv: steps 0..60"
head -c 128 "$TMPD/run3/H.npy" | grep -aq "'shape': (18, 18)" && cli_ok || cli_fail "H.npy is 18x18"
head -c 128 "$TMPD/run3/H1.npy" | grep -aq "'shape': (6, 6)" && cli_ok || cli_fail "H1.npy is 6x6"
# the grid: 4 rows per (problem, method), exactly one best each
[ "$(awk -F, 'NR>1 && $5==1' "$TMPD/run3/grid.csv" | wc -l)" -eq 4 ] && cli_ok || cli_fail "one best lr per grid"
[ "$(grep -c '^([123])' "$TMPD/run3/claims.txt")" -eq 3 ] && grep -Eq '^E2 (PASS|FAIL)' "$TMPD/run3/claims.txt" \
  && cli_ok || cli_fail "claims.txt has three claims and a verdict"
cli_summary
