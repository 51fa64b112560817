# The Transformer optimizer experiments: bad input, and tiny runs
# that write every file with its header, a claims file naming each claim, and a
# stats.csv holding every statistic and control the claim table reads from them.
source tests/lib_cli.sh
for p in train_compare ablation_vstat trajectory exp2_blockwise_gd leave_out; do
  P=$BIN/$p
  check "$p --help" "$P" --help
  expect_user_error "$p: unknown flag" "$P" --bogus
  expect_user_error "$p: bad scale" "$P" --scale huge --out "$TMPD/bad_$p"
  expect_user_error "$p: too few steps" "$P" --steps 5 --out "$TMPD/bad_$p"
  expect_user_error "$p: threads 0" "$P" --threads 0 --out "$TMPD/bad_$p"
  expect_user_error "$p: missing text file" "$P" --text "$TMPD/none.txt" --steps 20 --out "$TMPD/bad_$p"
  expect_user_error "$p: unwritable folder" "$P" --out /proc/nope --steps 20
  expect_no_files "$p: no output after bad input" "$TMPD/bad_$p"
done
expect_user_error "train_compare: --lrs -1" "$BIN/train_compare" --lrs -1
expect_user_error "train_compare: --lrs 1 (a grid needs two points)" "$BIN/train_compare" --lrs 1
expect_user_error "leave_out: --lrs 10" "$BIN/leave_out" --lrs 10
expect_user_error "exp2: --per-block 2" "$BIN/exp2_blockwise_gd" --per-block 2
expect_user_error "exp2: --passes 11" "$BIN/exp2_blockwise_gd" --passes 11
expect_user_error "exp2: --train-set -1" "$BIN/exp2_blockwise_gd" --train-set -1
expect_user_error "exp2: --train-set 4097" "$BIN/exp2_blockwise_gd" --train-set 4097
expect_user_error "train_compare: --held-out 8" "$BIN/train_compare" --held-out 8
expect_user_error "trajectory: --shared-lr 0" "$BIN/trajectory" --shared-lr 0 --out "$TMPD/bad_lr"
expect_user_error "trajectory: --shared-lr -1" "$BIN/trajectory" --shared-lr -1 --out "$TMPD/bad_lr"
expect_user_error "trajectory: --shared-lr 1e9" "$BIN/trajectory" --shared-lr 1e9 --out "$TMPD/bad_lr"
expect_no_files "trajectory: no output after a bad --shared-lr" "$TMPD/bad_lr"

run() { local d=$1; shift; "$@" --out "$TMPD/$d" --quiet >/dev/null 2>"$TMPD/$d.err" && cli_ok || cli_fail "$d: $(head -c 300 "$TMPD/$d.err")"; }
# 32 held-out sequences instead of 512: every step is evaluated at 20 steps, and that dominates
run tc "$BIN/train_compare" --steps 20 --lrs 2 --held-out 32
run av "$BIN/ablation_vstat" --steps 20 --lrs 2 --held-out 32
run tr "$BIN/trajectory" --steps 20 --lrs 2 --held-out 32
run e2 "$BIN/exp2_blockwise_gd" --steps 20 --lrs 2 --passes 1 --per-block 0 --train-set 8 --held-out 32
run lo "$BIN/leave_out" --steps 20 --lrs 2 --layers 1 --draws 2 --held-out 32
header() { [ "$(head -1 "$TMPD/$1")" = "$2" ] && cli_ok || cli_fail "$1 header: $(head -1 "$TMPD/$1")"; }
header tc/eval.csv "step,gd,blockgd,adamw,adam_mini,adam_mini_default,adam_mini_one_block"
for d in tc av tr e2 lo; do
  header $d/grid.csv "method,lr,score_last10pct_train_loss,final_eval_loss,steps_done,best,extended,status"
done
header tc/reference.csv "quantity,value"
header av/eval.csv "step,mean,l2,l1,max,min"
header tr/distance.csv "step,adam_mini,adafactor,sm3,gd,adamw_other_batches,tuned_adam_mini_rel,tuned_adamw_other_batches_rel,tuned_blockgd_rel,tuned_gd_rel,tuned_adam_mini_normalised,tuned_adamw_other_batches_normalised,tuned_blockgd_normalised,tuned_gd_normalised"
header e2/search.csv "search,pass,group,first_block,factor,score_last10pct_train_loss,accepted,status"
header e2/eval.csv "step,adamw,adam_beta1_0,gd,heavy_ball,blockgd_hessian_init,blockgd_searched,blockhb_searched"
header e2/full_batch_train.csv "step,adamw,gd,blockgd_searched"
header lo/gap.csv "tensor,name,role,best_mult,status,excess,excess_se,frozen_excess,frozen_se,best_final_eval,frozen_final_eval,adam_final_eval"
header lo/eval.csv "step,adam,leave_1_out,leave_2_out,leave_3_out"
header lo/leave_x.csv "x,draw,tensors,mults,excess,excess_se,frozen_excess,frozen_se,final_eval,frozen_final_eval,adam_final_eval"
expect_claim_stats train_compare "$TMPD/tc/stats.csv"
expect_claim_stats ablation_vstat "$TMPD/av/stats.csv"
expect_claim_stats trajectory "$TMPD/tr/stats.csv"
expect_claim_stats exp2_blockwise_gd "$TMPD/e2/stats.csv"
expect_claim_stats leave_out "$TMPD/lo/stats.csv"
# every statistic and control of the claim table is in its program's stats.csv, with a value
"$BIN/verdicts" --list >"$TMPD/rules.txt" 2>&1 || cli_fail "verdicts --list"
declare -A DIR=([train_compare]=tc [ablation_vstat]=av [trajectory]=tr [exp2_blockwise_gd]=e2 [leave_out]=lo)
for p in train_compare ablation_vstat trajectory exp2_blockwise_gd leave_out; do
  d=${DIR[$p]}
  names=$(awk -v p="$p" '$2 == p {print $3; print $NF}' "$TMPD/rules.txt")
  [ -n "$names" ] && cli_ok || cli_fail "$p: no claims in verdicts --list"
  for n in $names; do
    grep -qE "^$n,[-0-9.eEinfa]+$" "$TMPD/$d/stats.csv" && cli_ok || cli_fail "$p: $n not in stats.csv"
  done
  ids=$(awk -v p="$p" '$2 == p {print $1}' "$TMPD/rules.txt")
  for i in $ids; do grep -q "^$i: " "$TMPD/$d/claims.txt" && cli_ok || cli_fail "$p: claims.txt lacks $i"; done
  grep -q "grids_at_bound," "$TMPD/$d/stats.csv" && cli_ok || cli_fail "$p: grids_at_bound in stats.csv"
done
# a diverged run inside a study: at a shared lr of 10, GD (the trajectory claims' control) diverges within 20
# steps while the adaptive methods do not; the program exits 0, every control statistic is its method's worst
# outcome (+inf distances and gaps, shares 0), never NaN, and the divergence is counted
R=$TMPD/trdiv
run trdiv "$BIN/trajectory" --steps 20 --lrs 2 --held-out 32 --shared-lr 10
grep -q "^trajectory.diverged,[1-9]" "$R/stats.csv" && cli_ok || cli_fail "trajectory: the diverged GD run is counted"
for n in mini_below_half.end mini_closest.area mini_closest.end gd_max_distance gd_log_ratio_to_memory_efficient; do
  grep -q "^trajectory.control.$n,inf$" "$R/stats.csv" && cli_ok || cli_fail "trajectory: control $n is +inf ($(grep "^trajectory.control.$n," "$R/stats.csv"))"
done
grep -q "^trajectory.control.mini_below_half.share,0$" "$R/stats.csv" && grep -q "^trajectory.control.mini_closest.share,0$" "$R/stats.csv" \
  && cli_ok || cli_fail "trajectory: a diverged control is never within reach"
! grep -q ",nan$" "$R/stats.csv" && cli_ok || cli_fail "trajectory: no NaN after a divergence: $(grep ',nan$' "$R/stats.csv" | head -2)"
grep -qE "^trajectory.mini_closest.area,-?[0-9]" "$R/stats.csv" && cli_ok || cli_fail "trajectory: the claim's statistics stay finite"
for d in tc tr; do grep -q "diverged,0$" "$TMPD/$d/stats.csv" && cli_ok || cli_fail "$d: no diverged final run"; done
# the sensitivity flags: --lrs sets the first grid's points, --steps the horizon
run tc3 "$BIN/train_compare" --steps 24 --lrs 3 --held-out 32
[ "$(awk -F, 'NR > 1 && $1 == "adamw" && $7 == 0' "$TMPD/tc3/grid.csv" | wc -l)" -eq 3 ] && cli_ok || cli_fail "train_compare --lrs 3: 3 planned points"
grep -q "24 steps" "$TMPD/tc3/claims.txt" && [ "$(wc -l <"$TMPD/tc3/train.csv")" -eq 25 ] && cli_ok || cli_fail "train_compare --steps 24"
# grid.csv: every status is a final one, and each method has exactly one best point
awk -F, 'NR > 1 && $8 != "INTERIOR" && $8 != "EDGE AT BOUND" && $8 != "NONE FINITE" {bad = 1} END {exit bad}' \
  "$TMPD/tc/grid.csv" && cli_ok || cli_fail "train_compare grid.csv: unfinished status"
[ "$(awk -F, 'NR > 1 && $6 == 1 {n[$1]++} END {for (m in n) if (n[m] != 1) print m}' "$TMPD/tc/grid.csv")" = "" ] \
  && cli_ok || cli_fail "train_compare grid.csv: one best per method"
grep -q "coordinate search over 12 layers" "$TMPD/e2/claims.txt" && cli_ok || cli_fail "exp2: 12 layers (a tensor with its bias)"
# trajectory: the claims over every snapshot (20 steps evaluated every step: 20 snapshots after step 0)
expect_pooled_shares "trajectory: snapshot shares with count and total" "$TMPD/tr/stats.csv" '\.share$'
for p in trajectory trajectory.control trajectory.ref.adamw_other_batches; do
  grep -q "^$p.mini_below_half.share.total,20$" "$TMPD/tr/stats.csv" && cli_ok || cli_fail "$p: 20 snapshots"
  for n in mini_below_half.end mini_closest.area mini_closest.end; do
    grep -qE "^$p.$n,-?[0-9]" "$TMPD/tr/stats.csv" && cli_ok || cli_fail "$p.$n in stats.csv"
  done
done
grep -q "^trajectory.shared_lr,0.001$" "$TMPD/tr/stats.csv" && cli_ok || cli_fail "trajectory: the default shared lr"
# the snapshot share is the count of distance.csv's Adam-mini column below 0.5 (rows after step 0)
awk -F, 'NR == FNR {if (FNR > 2) {n++; k += ($2 < 0.5)}; next} $1 == "trajectory.mini_below_half.share.count" {c = $2}
         END {exit !(n == 20 && c == k)}' "$TMPD/tr/distance.csv" "$TMPD/tr/stats.csv" \
  && cli_ok || cli_fail "trajectory: the below-half count is distance.csv's"
# 20 steps evaluated every step: 21 rows + header
[ "$(wc -l <"$TMPD/tc/eval.csv")" -eq 22 ] && cli_ok || cli_fail "train_compare eval.csv rows"
# the tensor count of a 1-layer model without biases: wte wpe ln_1 q k v proj ln_2 fc proj ln_f lm_head
[ "$(wc -l <"$TMPD/lo/gap.csv")" -eq 13 ] && cli_ok || cli_fail "leave_out gap.csv has one row per tensor"
cli_summary
