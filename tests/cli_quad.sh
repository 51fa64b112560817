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
expect_claim_stats fig4 "$TMPD/run/stats.csv"
for f in fig4a.csv fig4b.csv fig4a_phase.csv fig4b_phase.csv fig4a_matrices.csv fig4b_matrices.csv stats.csv claims.txt run.txt; do
  [ -s "$TMPD/run/$f" ] && cli_ok || cli_fail "fig4 writes $f"
done
[ "$(head -1 "$TMPD/run/fig4a.csv" | cut -d, -f1-4)" = "d,kappa,R,tau_mean" ] && cli_ok || cli_fail "fig4a.csv header"
# 2 curves x 5 R values + header
[ "$(wc -l <"$TMPD/run/fig4a.csv")" -eq 11 ] && cli_ok || cli_fail "fig4a.csv has one row per (d, R)"
# R = 0 rows: tau = 1 exactly
awk -F, 'NR>1 && $3==0 && $4!=1 {bad=1} END{exit bad}' "$TMPD/run/fig4a.csv" && cli_ok || cli_fail "tau = 1 at R = 0"
[ "$(grep -Ec "^ref (a|b)_(median|mean) .*: [0-9]+ of 4 curves fall over all R" "$TMPD/run/claims.txt")" -eq 4 ] \
  && cli_ok || cli_fail "claims.txt: one reference line per reading"
# read against each matrix's own tau: every matrix in fig4<panel>_matrices.csv (2 curves x 2 theta x 5 R),
# the three shares per reading for D_Adam and the control, and their per-curve numbers
[ "$(wc -l <"$TMPD/run/fig4a_matrices.csv")" -eq 21 ] && cli_ok || cli_fail "fig4a_matrices.csv: one row per matrix"
awk -F, 'NR>1 && $5==0 && $6!=1 {bad=1} END{exit bad}' "$TMPD/run/fig4a_matrices.csv" && cli_ok || cli_fail "matrices: tau = 1 at R = 0"
for r in a_median b_median a_mean b_mean; do
  for w in share_falling share_falling_matrices share_level share_tau_only; do
    for pre in fig4.tau fig4.control.tau; do
      grep -Eq "^$pre.$w.$r,(0|0\.25|0\.5|0\.75|1)$" "$TMPD/run/stats.csv" && cli_ok || cli_fail "stats.csv: $pre.$w.$r is a share of 4 curves"
    done
  done
  for n in rho rho_matrices r_diag r_dense r2_R; do
    [ "$(grep -c "^fig4\.tau\.$n\.$r\." "$TMPD/run/stats.csv")" -eq 4 ] && cli_ok || cli_fail "stats.csv: tau.$n of each curve ($r)"
  done
done
# the level share is the count of curves with r_diag < 1 < r_dense
awk -F, '$1 ~ /^fig4\.tau\.r_diag\.a_median\./ {split($1, p, "."); c = p[5]; dg[c] = $2} $1 ~ /^fig4\.tau\.r_dense\.a_median\./ {split($1, p, "."); dn[p[5]] = $2}
         $1 == "fig4.tau.share_level.a_median" {s = $2} END {for (c in dg) {n++; k += (dg[c] + 0 < 1 && dn[c] + 0 > 1)}; exit !(n == 4 && s == k / n)}' \
  "$TMPD/run/stats.csv" && cli_ok || cli_fail "share_level = count of r_diag < 1 < r_dense"
# stats.csv: the share, its random-D control, the R <= R* reading and its control, the shuffled-tau and
# R <= R* references per reading, and every curve's rho in each
for r in a_median b_median a_mean b_mean; do
  for n in fig4.share_falling.$r fig4.control.share_falling.$r fig4.shuffled.share_falling.$r \
           fig4.share_falling_rstar.$r fig4.control.share_falling_rstar.$r fig4.ref.branch.share_falling.$r; do
    grep -Eq "^$n,(0|0\.25|0\.5|0\.75|1)$" "$TMPD/run/stats.csv" && cli_ok || cli_fail "stats.csv: $n is a share of 4 curves"
  done
  for n in rho control.rho shuffled.rho ref.branch.rho control.rho_rstar; do
    [ "$(grep -c "^fig4\.$n\.$r\." "$TMPD/run/stats.csv")" -eq 4 ] && cli_ok || cli_fail "stats.csv: $n of each curve ($r)"
  done
  a=$(grep "^fig4.share_falling_rstar.$r," "$TMPD/run/stats.csv" | cut -d, -f2); b=$(grep "^fig4.ref.branch.share_falling.$r," "$TMPD/run/stats.csv" | cut -d, -f2)
  [ -n "$a" ] && [ "$a" = "$b" ] && cli_ok || cli_fail "the R <= R* reading is the first version's rule ($r)"
done
head -1 "$TMPD/run/fig4a.csv" | grep -q ",samples,skipped,control_ra_mean,control_ra_median,control_rb_mean,control_rb_median$" \
  && cli_ok || cli_fail "fig4a.csv: the random-D control's r per R"
# the control's rho is the Spearman rho of its own median r (a) against the mean tau, from fig4a.csv
awk -F, 'NR > 1 && $1 == 2 {n++; t[n] = $4; c[n] = $18} END {for (i = 1; i <= n; i++) {a = b = 1; for (j = 1; j <= n; j++) {a += (t[j] < t[i]) + 0.5 * (t[j] == t[i] && j != i); b += (c[j] < c[i]) + 0.5 * (c[j] == c[i] && j != i)}; ra[i] = a; rb[i] = b; ma += a / n; mb += b / n}
  for (i = 1; i <= n; i++) {sxy += (ra[i] - ma) * (rb[i] - mb); sxx += (ra[i] - ma)^2; syy += (rb[i] - mb)^2}; print sxy / sqrt(sxx * syy)}' \
  "$TMPD/run/fig4a.csv" >"$TMPD/rho_ctrl"
awk -F, -v want="$(cat "$TMPD/rho_ctrl")" '$1 == "fig4.control.rho.a_median.a_d2_k500" {exit !(($2 - want)^2 < 1e-12)}' \
  "$TMPD/run/stats.csv" && cli_ok || cli_fail "fig4: the control's rho from its own r (want $(cat "$TMPD/rho_ctrl"))"
grep -q "^fig4.rho.a_median.b_d6_k40," "$TMPD/run/stats.csv" && cli_ok || cli_fail "stats.csv names curves panel_d_k"
# the shares are the counts of rho <= -0.5 among the curves' rho
awk -F, '$1 ~ /^fig4\.rho\.a_median\./ {n++; f += ($2 <= -0.5)} $1 == "fig4.share_falling.a_median" {s = $2}
         END {exit !(n == 4 && s == f / n)}' "$TMPD/run/stats.csv" && cli_ok || cli_fail "share = count of rho <= -0.5"
grep -q "^Counts: 2 theta x 3 x x 5 R per (d, kappa), seed 1.$" "$TMPD/run/claims.txt" && cli_ok || cli_fail "fig4: --thetas, --points, --rs"
# every share comes with its counts, pooled over seeds by the verdicts
expect_pooled_shares "fig4: shares with count and total" "$TMPD/run/stats.csv" 'share_falling'
grep -q "^fig4.share_falling.a_median.total,4$" "$TMPD/run/stats.csv" && cli_ok || cli_fail "fig4: total = 4 curves"
# --seed: another seed, other draws; the same seed, the same numbers
check "fig4 seed 2" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --seed 2 --out "$TMPD/run_s2" --quiet
check "fig4 seed 1 again" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --seed 1 --out "$TMPD/run_s1" --quiet
cmp -s "$TMPD/run/stats.csv" "$TMPD/run_s1/stats.csv" && cli_ok || cli_fail "fig4: the same seed gives the same stats"
! cmp -s "$TMPD/run/fig4a.csv" "$TMPD/run_s2/fig4a.csv" && cli_ok || cli_fail "fig4: another seed gives other draws"
[ -z "$(find "$TMPD/run" -name '*.tmp.*')" ] && cli_ok || cli_fail "fig4: no temporaries left"
# results do not depend on the thread count
check "fig4 one thread" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --threads 1 --out "$TMPD/run1" --quiet
cmp -s "$TMPD/run/fig4a.csv" "$TMPD/run1/fig4a.csv" && cmp -s "$TMPD/run/fig4b_phase.csv" "$TMPD/run1/fig4b_phase.csv" \
  && cli_ok || cli_fail "fig4 output independent of --threads"

P=$BIN/fig3
check "fig3 --help exits 0" "$P" --help
"$P" --help | grep -q -- "--lr-points" && cli_ok || cli_fail "fig3 --help lists --lr-points"
for bad in "--steps 0" "--steps -5" "--steps abc" "--block 2" "--block x" "--lr-lo 0" "--lr-lo 1 --lr-hi 0.1" \
           "--lr-lo 0.1 --lr-hi 0.1" "--lr-hi inf" "--lr-lo 1e-13" "--lr-hi 1e7" "--lr-points 1" "--lr-points 33" "--lr-points -2" "--beta1 1" \
           "--beta1 -0.1" "--eps -1" "--seed -1" "--bogus"; do
  expect_user_error "fig3 $bad" "$P" $bad --out "$TMPD/bad3"
done
[ ! -e "$TMPD/bad3" ] && cli_ok || cli_fail "fig3: bad input creates no folder"
expect_user_error "fig3 unwritable output folder" "$P" --steps 5 --block 3 --lr-points 2 --out /proc/nope
check "fig3 small run" "$P" --steps 60 --block 6 --lr-points 4 --out "$TMPD/run3" --quiet
expect_claim_stats fig3 "$TMPD/run3/stats.csv"
for f in H.npy H1.npy eigenvalues.csv loss_full.csv loss_h1.csv loss_homogeneous.csv loss_diag_spread.csv \
         loss_diag_h1.csv lrs.csv grid.csv grid_full_adam.csv grid_h1_adam.csv grid_full_adam_mini.csv \
         grid_h1_adam_mini.csv grid_homogeneous_adam.csv grid_diag_spread_adam.csv grid_diag_h1_adam.csv stats.csv \
         claims.txt run.txt; do
  [ -s "$TMPD/run3/$f" ] && cli_ok || cli_fail "fig3 writes $f"
done
[ "$(head -1 "$TMPD/run3/loss_full.csv")" = "step,gd,blockgd,adam,adam_mini,blockgd_random" ] && cli_ok \
  || cli_fail "loss_full.csv header"
[ "$(wc -l <"$TMPD/run3/loss_full.csv")" -eq 62 ] && cli_ok || cli_fail "loss_full.csv: steps 0..60"
head -c 128 "$TMPD/run3/H.npy" | grep -aq "'shape': (18, 18)" && cli_ok || cli_fail "H.npy is 18x18"
head -c 128 "$TMPD/run3/H1.npy" | grep -aq "'shape': (6, 6)" && cli_ok || cli_fail "H1.npy is 6x6"
# the grids: nine (problem, method), at least the 4 planned points each, exactly one best each, a status
[ "$(head -1 "$TMPD/run3/grid.csv")" = "problem,method,lr,score,final_loss,best,status" ] && cli_ok || cli_fail "grid.csv header"
[ "$(awk -F, 'NR>1 && $6==1' "$TMPD/run3/grid.csv" | wc -l)" -eq 9 ] && cli_ok || cli_fail "one best lr per grid"
[ "$(awk -F, 'NR>1 {print $1 "," $2}' "$TMPD/run3/grid.csv" | sort | uniq -c | awk '$1 >= 4' | wc -l)" -eq 9 ] \
  && cli_ok || cli_fail "every grid has at least its planned points"
awk -F, 'NR>1 && $7 != "INTERIOR" && $7 != "EDGE AT BOUND" && $7 != "NONE FINITE" {bad=1} END{exit bad}' \
  "$TMPD/run3/grid.csv" && cli_ok || cli_fail "grid.csv: a status per row"
# a first grid below Adam's best lr extends upward until the best is interior (the bound, 2 decades above
# --lr-hi, is not reached); a first grid far below stops at the bound and says so
check "fig3 grid that must extend" "$P" --steps 60 --block 6 --lr-lo 1e-3 --lr-hi 1e-2 --lr-points 2 --out "$TMPD/run3x" --quiet
awk -F, '$1 == "full" && $2 == "adam" {n++; if ($3 > 1.1e-2) up=1; if ($6 == 1) st=$7} END{exit !(n > 2 && up && st == "INTERIOR")}' \
  "$TMPD/run3x/grid.csv" && cli_ok || cli_fail "fig3: Adam's grid extends past its upper edge to an interior best"
check "fig3 grid stopped by its bound" "$P" --steps 60 --block 6 --lr-lo 1e-6 --lr-hi 1e-5 --lr-points 2 --out "$TMPD/run3b" --quiet
grep -q "^fig3.grid_interior.full_adam,0$" "$TMPD/run3b/stats.csv" && grep -q "full  *adam .*EDGE AT BOUND" "$TMPD/run3b/claims.txt" \
  && cli_ok || cli_fail "fig3: a best at the bound is reported (stats.csv, claims.txt)"
[ "$(grep -c '^([123])' "$TMPD/run3/claims.txt")" -eq 3 ] && [ "$(grep -c '^    control' "$TMPD/run3/claims.txt")" -eq 3 ] \
  && cli_ok || cli_fail "claims.txt has three claims, each with its control"
for n in fig3.gap.adam_gd.full fig3.control.gap.adam_gd.homogeneous fig3.gap.gd_adam.h1 \
         fig3.control.gap.gd_adam.diag_spread fig3.gap.blockgd_adam.full fig3.control.gap.blockgd_random_adam.full \
         fig3.ref.gap.gd_adam.diag_h1 fig3.gap.gd_adam.h2 fig3.gap.gd_adam.h3 fig3.r.full fig3.r.h1 fig3.r.h2 fig3.r.h3 \
         fig3.control.r.full fig3.control.r.h3; do
  grep -Eq "^$n,-?[0-9]" "$TMPD/run3/stats.csv" && cli_ok || cli_fail "fig3 stats.csv: $n is a number"
done
[ "$(grep -c '^fig3.grid_interior\.' "$TMPD/run3/stats.csv")" -eq 9 ] && cli_ok || cli_fail "fig3 stats.csv: grid status per grid"
# the alignment of r with the winner: a 0/1 share of one seed, yes exactly when on each of H, H1, H2, H3
# Adam beats GD (gap < 0 on H; gd_adam > 0 on a block) where r < 1
awk -F, '{v[$1] = $2} END {a = (v["fig3.gap.adam_gd.full"] < 0) == (v["fig3.r.full"] < 1);
  a = a && ((v["fig3.gap.gd_adam.h1"] > 0) == (v["fig3.r.h1"] < 1)) && ((v["fig3.gap.gd_adam.h2"] > 0) == (v["fig3.r.h2"] < 1));
  a = a && ((v["fig3.gap.gd_adam.h3"] > 0) == (v["fig3.r.h3"] < 1));
  exit !(v["fig3.aligned.total"] == 1 && v["fig3.aligned.count"] == a)}' "$TMPD/run3/stats.csv" \
  && cli_ok || cli_fail "fig3.aligned: Adam beats GD exactly where r < 1"
[ -s "$TMPD/run3/loss_h2.csv" ] && [ -s "$TMPD/run3/loss_h3.csv" ] && cli_ok || cli_fail "fig3: loss curves on H2 and H3"
check "fig3 seed 2" "$P" --steps 60 --block 6 --lr-points 4 --seed 2 --out "$TMPD/run3s2" --quiet
! cmp -s "$TMPD/run3/H.npy" "$TMPD/run3s2/H.npy" && cli_ok || cli_fail "fig3: another seed, another H"
cli_summary
