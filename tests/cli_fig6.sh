# Whole-program checks of fig6, table_kappa, partition_check and
# block_structure: bad input stops with one line and exit 2 leaving no files;
# tiny runs write every output with the expected headers and the claims'
# statistics; the plot scripts render; the same flags analyse the same H.
source tests/lib_cli.sh
F=$BIN/fig6
K=$BIN/table_kappa
C=$BIN/partition_check
B=$BIN/block_structure
TINY=(--V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --hess-batch 6 --quiet)

for P in "$F" "$K" "$C"; do
  n=${P##*/}
  check "$n --help" "$P" --help
  "$P" --help | grep -q -- "--checkpoint" && cli_ok || cli_fail "$n --help lists --checkpoint"
  expect_user_error "$n: unknown flag" "$P" --bogus
  expect_user_error "$n: unknown scale" "$P" --scale huge --out "$TMPD/a"
  expect_user_error "$n: checkpoint 0" "$P" --checkpoint 0 --out "$TMPD/a"
  expect_user_error "$n: checkpoint above 1" "$P" --checkpoint 1.5 --out "$TMPD/a"
  expect_user_error "$n: negative Hessian batch" "$P" --hess-batch -3 --out "$TMPD/a"
  expect_user_error "$n: heads not dividing C" "$P" --heads 3 --out "$TMPD/a"
  expect_user_error "$n: bad learning rate" "$P" --lr -1 --out "$TMPD/a"
  expect_user_error "$n: Markov order" "$P" --order 9 --out "$TMPD/a"
  expect_user_error "$n: missing text file" "$P" --text "$TMPD/none.txt" --out "$TMPD/a"
  expect_user_error "$n: not a number" "$P" --steps ten --out "$TMPD/a"
  expect_user_error "$n: unwritable output folder" "$P" "${TINY[@]}" --out /proc/nope
done
expect_user_error "fig6: layer out of range" "$F" --layer 1 --out "$TMPD/a"
expect_user_error "fig6: pixels" "$F" --pixels 5 --out "$TMPD/a"
expect_user_error "fig6: decades" "$F" --decades 0 --out "$TMPD/a"
expect_user_error "fig6: reps" "$F" --reps 1 --out "$TMPD/a"
expect_user_error "fig6: save-h" "$F" --save-h 2 --out "$TMPD/a"
expect_user_error "partition_check: save-h" "$C" --save-h -1 --out "$TMPD/a"
expect_user_error "partition_check: level 0" "$C" --level 0 --out "$TMPD/a"
expect_user_error "partition_check: level above 1" "$C" --level 1.5 --out "$TMPD/a"
check "block_structure --help" "$B" --help
"$B" --help | grep -q -- "--at-steps" && cli_ok || cli_fail "block_structure --help lists --at-steps"
expect_user_error "block_structure: unknown flag" "$B" --bogus
expect_user_error "block_structure: no --checkpoint (it takes --at-steps)" "$B" --checkpoint 0.5 --out "$TMPD/a"
expect_user_error "block_structure: steps not increasing" "$B" --at-steps 5,2 --out "$TMPD/a"
expect_user_error "block_structure: only initialisation" "$B" --at-steps 0 --out "$TMPD/a"
expect_user_error "block_structure: step beyond training" "$B" --steps 20 --at-steps 0,30 --out "$TMPD/a"
expect_user_error "block_structure: negative step" "$B" --at-steps -1,3 --out "$TMPD/a"
expect_user_error "block_structure: bad scale" "$B" --scale huge --out "$TMPD/a"
expect_user_error "block_structure: bands of a missing run" "$B" --bands-of "$TMPD/none" --out "$TMPD/a2"
expect_user_error "table_kappa: layer out of range" "$K" --layer 2 --out "$TMPD/a"
expect_user_error "partition_check: unknown model" "$C" --model cnn --out "$TMPD/a"
expect_user_error "partition_check: share 0" "$C" --share 0 --out "$TMPD/a"
expect_user_error "partition_check: share above 1" "$C" --share 1.5 --out "$TMPD/a"
expect_user_error "partition_check: unknown MLP data" "$C" --model mlp --mlp-data cifar --out "$TMPD/a"
expect_user_error "partition_check: unknown activation" "$C" --model mlp --mlp-act swish --out "$TMPD/a"
expect_no_files "no output after bad flags" "$TMPD/a"
expect_no_files "no bands after a missing run" "$TMPD/a2"
expect_user_error "partition_check: pool does not divide" "$C" --model mlp --mlp-data synthetic --mlp-pool 3 --out "$TMPD/b"
expect_user_error "partition_check: eval batch too large" "$C" --model mlp --mlp-data synthetic --mlp-eval-n 5000 --out "$TMPD/b"
expect_no_files "no output after bad MLP settings" "$TMPD/b"
# a text too short for a held-out window (its last 10%: 2 bytes)
printf 'abcdefghijklmnopqrstuvwxyz' >"$TMPD/rich.txt"
expect_user_error "fig6: text too short for its held-out part" "$F" "${TINY[@]}" --text "$TMPD/rich.txt" --out "$TMPD/c"
grep -q "held-out part" "$TMPD/err" && cli_ok || cli_fail "held-out part named: $(cat "$TMPD/err")"
expect_no_files "no output after a bad text file" "$TMPD/c"

# fig6: a tiny run
R=$TMPD/f6
check "fig6 tiny run" "$F" "${TINY[@]}" --reps 3 --out "$R"
for f in run.txt claims.txt H.npy tensors.csv model.csv summary.csv train/loss.csv train/step000001_params.npy \
         train/step000001_vhat.npy; do
  [ -s "$R/$f" ] && cli_ok || cli_fail "fig6 wrote $f"
done
for b in query key value attn_proj mlp_fc1 mlp_proj embed output; do
  for f in blocks_$b.csv heat_$b.csv bounds_${b}_major.csv bounds_${b}_minor.csv plotvars_$b.gp; do
    [ -s "$R/$f" ] && cli_ok || cli_fail "fig6 wrote $f"
  done
done
head -1 "$R/summary.csv" | grep -q "^block,tensor,n,rows,cols,mean_abs,rms,max_abs,fro2,mass_heads" && cli_ok || cli_fail "summary.csv header"
[ "$(wc -l <"$R/summary.csv")" -eq 9 ] && cli_ok || cli_fail "summary.csv: header + 8 blocks"
head -1 "$R/blocks_query.csv" | grep -q "^split,meaning,block,name,n,fro2,mass_share,row_mass_ratio,tau,lambda_min" && cli_ok || cli_fail "blocks header"
# query (C 8, 2 heads): 2 head rows + 8 output-neuron rows; mlp.fc_1 (M 8): 8 neuron rows
[ "$(grep -c '^heads,' "$R/blocks_query.csv")" -eq 2 ] && [ "$(grep -c '^rows,' "$R/blocks_query.csv")" -eq 8 ] && cli_ok || cli_fail "query sub-blocks"
[ "$(grep -c '^rows,' "$R/blocks_embed.csv")" -eq 4 ] && grep -q '^rows,token,' "$R/blocks_embed.csv" && cli_ok || cli_fail "embed: 4 token blocks"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 4 ] && cli_ok || cli_fail "fig6: 4 claim lines"
grep -q "^PASS\|^FAIL" "$R/claims.txt" && grep -q "^rule (split claims)" "$R/claims.txt" && cli_ok || cli_fail "fig6 rule line"
grep -q "^4,8,2,8,4,1,1," "$R/model.csv" && cli_ok || cli_fail "model.csv holds the tiny config"
grep -q "^# pixels 64 x 64" "$R/heat_query.csv" && cli_ok || cli_fail "query heatmap 64 x 64 (C 8 x C 8 weights)"
check "fig6 plot renders" gnuplot -e "res='$R'; blk='value'; out='$TMPD/value.png'" plots/fig6.gp
[ -s "$TMPD/value.png" ] && cli_ok || cli_fail "value PNG written"
[ -z "$(find "$R" -name '*.tmp.*')" ] && cli_ok || cli_fail "no temporaries left"
head -1 "$R/blocks_query.csv" | grep -q ",kappa_DH_svd,offdiag_excess$" && cli_ok || cli_fail "blocks: each block's own excess"
head -1 "$R/summary.csv" | grep -q ",heads_share,heads_chance,heads_excess,.*,rows_perm_excess,rows_perm_mass,claimed_excess$" && cli_ok || cli_fail "summary: off-diagonal columns"
for n in fig6.qk_heads.min_excess fig6.control.qk_heads.min_excess fig6.neurons.min_excess \
         fig6.control.neurons.min_excess fig6.tokens.min_excess fig6.control.tokens.min_excess \
         fig6.value.log10_ratio fig6.control.key_query.log10_ratio fig6.value.decades_from_paper \
         fig6.control.key_query.decades_from_paper fig6.value.heads_excess fig6.value.qk_minus_value_heads \
         fig6.control.key_query.heads_gap fig6.cols.qk.min_excess fig6.cols.neurons.min_excess fig6.cols.tokens.min_excess \
         fig6.value.cols_excess; do
  grep -qE "^$n,-?[0-9]" "$R/stats.csv" && cli_ok || cli_fail "fig6 stats.csv: $n"
done
# decades from the paper's 10^6 is |log10 ratio - 6|
awk -F, '{v[$1] = $2} END {d = v["fig6.value.log10_ratio"] - 6; if (d < 0) d = -d; exit !((d - v["fig6.value.decades_from_paper"])^2 < 1e-20)}' \
  "$R/stats.csv" && cli_ok || cli_fail "fig6: decades from the paper's 10^6"
expect_claim_stats fig6 "$R/stats.csv"
[ "$(grep -cE '^old rule (PASS|FAIL): ' "$R/claims.txt")" -eq 3 ] && cli_ok || cli_fail "fig6: the old rule's 3 lines kept"
check "fig6 without H" "$F" "${TINY[@]}" --reps 3 --save-h 0 --out "$TMPD/f6n"
[ ! -e "$TMPD/f6n/H.npy" ] && [ -s "$TMPD/f6n/stats.csv" ] && cli_ok || cli_fail "--save-h 0: no H.npy, stats written"
# the same flags give the same H (table_kappa and partition_check rely on it)
check "fig6 again" "$F" "${TINY[@]}" --reps 3 --out "$TMPD/f6b"
cmp -s "$R/H.npy" "$TMPD/f6b/H.npy" && cli_ok || cli_fail "same flags, same H.npy"

# table_kappa: checkpoints after 1, 2, 5 steps and at 1% (step 1 of 20), 5%, 10%, 100% -> steps 1, 2, 5, 20
R=$TMPD/tk
check "table_kappa tiny run" "$K" "${TINY[@]}" --draws 5 --out "$R"
for f in run.txt claims.txt stats.csv table.csv table.md blocks.csv sweep.csv H_query_head0.npy d_mlp_proj_row0.npy \
         train/step000001_vhat.npy train/step000002_params.npy train/step000005_vhat.npy train/step000020_params.npy; do
  [ -s "$R/$f" ] && cli_ok || cli_fail "table_kappa wrote $f"
done
head -1 "$R/table.csv" | grep -q "^checkpoint,step,block,label,name,n,null_derived,null_numerical,kappa_H_raw,.*,ratio_fig4_H,ratio_adam_H,kappa_G,.*paper_kappa_DH" && cli_ok || cli_fail "table.csv header"
[ "$(wc -l <"$R/table.csv")" -eq 13 ] && cli_ok || cli_fail "table.csv: header + 6 blocks at 1% and after 1 step"
grep -q "^1pct,1,query_head0,1st head in Query,h0.attn.query\[head 0\],32," "$R/table.csv" && cli_ok || cli_fail "query head 0: 4 rows x 8 = 32"
grep -q "^step1,1,mlp_fc1_row0,.*,h0.mlp.fc_1\[row 0\],8," "$R/table.csv" && cli_ok || cli_fail "fc_1 row 0: 8 entries"
grep -q "| 1st neuron in MLP_c_proj | 8 |.*| 63.85 | 236.71 | 3.71 |" "$R/table.md" && cli_ok || cli_fail "table.md beside the paper"
head -1 "$R/sweep.csv" | grep -q "^step,frac,loss,reading,blocks,share_up,median_log10_ratio,control_blocks,control_share_up" && cli_ok || cli_fail "sweep.csv header"
[ "$(cut -d, -f1 "$R/sweep.csv" | tail -n +2 | sort -un | tr '\n' ' ')" = "1 2 5 20 " ] && cli_ok || cli_fail "sweep: steps 1 2 5 20"
[ "$(wc -l <"$R/sweep.csv")" -eq 17 ] && cli_ok || cli_fail "sweep.csv: 4 checkpoints x 4 readings"
head -1 "$R/blocks.csv" | grep -q "^step,block,tensor,table_tensor,n,null_derived,null_residual,null_numerical_H,kappa_H," && cli_ok || cli_fail "blocks.csv header"
# every Algorithm 3 block at every checkpoint; the table's six tensors: 2 + 2 heads, 8 + 8 + 8 + 8 neurons
nb=$(awk -F, 'NR > 1 && $1 == 20' "$R/blocks.csv" | wc -l)
[ "$(wc -l <"$R/blocks.csv")" -eq $((4 * nb + 1)) ] && cli_ok || cli_fail "blocks.csv: 4 checkpoints x $nb blocks"
[ "$(awk -F, 'NR > 1 && $1 == 20 && $4 == 1' "$R/blocks.csv" | wc -l)" -eq 36 ] && cli_ok || cli_fail "36 blocks of the table's tensors"
# the key heads' derived null directions: 1/g on each of a head's 4 rows; each derived direction is null (not the key bias, all of whose block is round-off)
awk -F, 'NR > 1 && $2 ~ /attn.key\[head/ && $6 != 4 {bad = 1} END {exit bad}' "$R/blocks.csv" && cli_ok || cli_fail "key heads: 4 derived null directions"
awk -F, 'NR > 1 && $6 > 0 && $6 < $5 && $7 > 1e-10 {bad = 1} END {exit bad}' "$R/blocks.csv" && cli_ok || cli_fail "derived null directions are null"
for st in table_kappa.share_up.fig4.H.1pct table_kappa.control.share_up.fig4.H.1pct table_kappa.share_up.adam.G.step1 \
          table_kappa.ref.diagonal.share_up.fig4.H.1pct table_kappa.n_measurable.fig4.H.1pct \
          table_kappa.scaled.share_up.fig4.H.1pct table_kappa.scaled.median_log10_ratio.adam.G.step1; do
  grep -q "^$st," "$R/stats.csv" && cli_ok || cli_fail "stats.csv has $st"
done
expect_claim_stats table_kappa "$R/stats.csv"
# the control is the diagonal parts' share (its first name kept), the rescaled coordinates are 'scaled'
awk -F, '{v[$1] = $2} END {for (k in v) if (k ~ /^table_kappa\.control\.share_up\./) {n++; r = k; sub("control", "ref.diagonal", r); if (v[r] != v[k]) bad = 1}
         exit !(n == 24 && !bad)}' "$R/stats.csv" && cli_ok || cli_fail "table_kappa: the control is the diagonal parts' share"
awk -F, 'NR == FNR {if ($1 == 1 && $4 == "fig4.H") c = $9; next} $1 == "table_kappa.control.share_up.fig4.H.1pct" {s = $2}
         END {exit !(c != "" && (c - s)^2 < 1e-18)}' "$R/sweep.csv" "$R/stats.csv" \
  && cli_ok || cli_fail "sweep.csv's control column is the diagonal parts' share"
head -1 "$R/sweep.csv" | grep -q ",scaled_blocks,scaled_share_up,scaled_median_log10_ratio$" && cli_ok || cli_fail "sweep.csv: the rescaled reference"
head -1 "$R/blocks.csv" | grep -q ",scaled_kappa_H,scaled_ratio_fig4_H,.*,diagonal_kappa_H,diagonal_ratio_fig4_H," && cli_ok || cli_fail "blocks.csv: scaled and diagonal columns"
[ "$(grep -cE '^(primary|other) reading ' "$R/claims.txt")" -eq 8 ] && cli_ok || cli_fail "table_kappa: 8 reading lines"
expect_pooled_shares "table_kappa: shares with count and total" "$R/stats.csv" 'share_up'
awk -F, '$1 == "table_kappa.share_up.fig4.H.1pct.total" {t = $2} $1 == "table_kappa.n_measurable.fig4.H.1pct" {n = $2}
         END {exit !(t != "" && t == n)}' "$R/stats.csv" && cli_ok || cli_fail "table_kappa: total = measurable blocks"
[ "$(grep -c '^first version at step ' "$R/claims.txt")" -eq 2 ] && cli_ok || cli_fail "table_kappa: the first version's lines"
# the paper's regime: the spectrum within two decades of |lambda|max, so every kappa there is <= 100
[ "$(grep -c "^paper's regime " "$R/claims.txt")" -eq 4 ] && cli_ok || cli_fail "table_kappa: the paper's regime lines"
awk -F, '$1 ~ /^table_kappa\.top\.median_kappa_paper_blocks\./ {n++; if (!($2 >= 1 && $2 <= 100 * (1 + 1e-12))) bad = 1}
         $1 ~ /^table_kappa\.top\.share_up\.(fig4|adam)\.H\.(1pct|step1)$/ {m++}
         END {exit !(n == 2 && m == 4 && !bad)}' "$R/stats.csv" && cli_ok || cli_fail "table_kappa: kappa <= 100 in the paper's regime"
expect_user_error "table_kappa: draws" "$K" --draws -1 --out "$TMPD/d"
expect_user_error "table_kappa: too many draws" "$K" --draws 20000 --out "$TMPD/d"
expect_no_files "no output after bad draws" "$TMPD/d"
check "table_kappa again" "$K" "${TINY[@]}" --draws 5 --out "$TMPD/tk2"
cmp -s "$R/blocks.csv" "$TMPD/tk2/blocks.csv" && cmp -s "$R/stats.csv" "$TMPD/tk2/stats.csv" && cli_ok || cli_fail "same seed, same results"
check "table_kappa sweep plot renders" gnuplot -e "dirs='$R $TMPD/tk2'; label='test'; out='$TMPD/sweep.png'" plots/table_kappa_sweep.gp
[ -s "$TMPD/sweep.png" ] && cli_ok || cli_fail "sweep PNG written"

# --lr is the AdamW lr of the training to the checkpoint (a sensitivity choice: the paper does not give it)
check "table_kappa --lr 0.01" "$K" "${TINY[@]}" --draws 5 --lr 0.01 --out "$TMPD/tklr"
grep -q "AdamW lr 0.01 cosine" "$TMPD/tklr/claims.txt" && cli_ok || cli_fail "table_kappa: --lr is the training's"
! cmp -s "$R/train/step000020_params.npy" "$TMPD/tklr/train/step000020_params.npy" && cli_ok || cli_fail "table_kappa: --lr changes the training"
check "partition_check --lr 0.01" "$C" "${TINY[@]}" --reps 3 --lr 0.01 --out "$TMPD/pclr"
grep -q "(AdamW, as fig6, peak lr 0.01: --lr)" "$TMPD/pclr/claims.txt" && cli_ok || cli_fail "partition_check: claims.txt names --lr"
# partition_check on both models
R=$TMPD/pc
check "partition_check tt" "$C" "${TINY[@]}" --reps 3 --out "$R"
head -1 "$R/candidates.csv" | grep -q "^tensor,role,split,meaning,blocks,block_size,mass_ratio,random_mass_ratio" && cli_ok || cli_fail "candidates header"
head -1 "$R/candidates.csv" | grep -q ",offdiag_share,chance,excess,score,holds,perm_mass_ratio,perm_random_mass_ratio,perm_excess,perm_score$" && cli_ok || cli_fail "candidates: off-diagonal and control columns"
head -1 "$R/summary.csv" | grep -q "^tensor,role,rows,cols,size,hessian_share,diag_share,old_split,.*,criterion_split,.*,perm_criterion_split,alg3_split" && cli_ok || cli_fail "summary header"
[ "$(grep -c '^excess,' "$R/sweep.csv")" -eq 38 ] && [ "$(grep -c '^old_share,' "$R/sweep.csv")" -eq 38 ] && cli_ok || cli_fail "sweep: 19 levels x (H, permuted) per rule"
for n in partition_check.tt.alg3_agree partition_check.control.tt.permuted.alg3_agree partition_check.tt.alg2_agree \
         partition_check.tt.old_share_rule.alg3_agree_all; do
  grep -qE "^$n,[0-9]" "$R/stats.csv" && cli_ok || cli_fail "partition_check stats.csv: $n"
done
grep -q "^h0.attn.query,query,heads,head,2,32," "$R/candidates.csv" && cli_ok || cli_fail "query by heads: 2 blocks of 32"
expect_pooled_shares "partition_check: shares with count and total" "$R/stats.csv" '_agree(_all)?$'
grep -q "^partition_check.tt.alg3_agree.total,8$" "$R/stats.csv" && cli_ok || cli_fail "partition_check: Algorithm 3 splits 8 tensors"
# the columns control: over the same 8 tensors, the picks by input columns (summary.csv's criterion column)
k=$(awk -F, 'NR > 1 && $19 != "zero-hessian" && $16 > 1 && $11 ~ /input neuron/' "$R/summary.csv" | wc -l)
grep -q "^partition_check.control.tt.columns_agree.total,8$" "$R/stats.csv" && grep -q "^partition_check.control.tt.columns_agree.count,$k$" "$R/stats.csv" \
  && cli_ok || cli_fail "partition_check: columns control counts the $k picks by input columns of the 8 split tensors"
grep -q "split by input columns instead: $k of 8" "$R/claims.txt" && cli_ok || cli_fail "partition_check: claims.txt names the columns control"
grep -q "^h0.attn.key.bias,.*zero-hessian$" "$R/summary.csv" && cli_ok || cli_fail "key bias has no curvature"
cmp -s "$R/H.npy" "$TMPD/f6/H.npy" && cli_ok || cli_fail "partition_check tt analyses fig6's H"
! cmp -s "$R/H.npy" "$TMPD/pclr/H.npy" && cli_ok || cli_fail "partition_check: another --lr, another H"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 2 ] && cli_ok || cli_fail "partition_check: 2 claim lines"
R=$TMPD/pcm
check "partition_check mlp" "$C" --model mlp --mlp-data synthetic --mlp-pool 2 --mlp-width 4 --mlp-eval-n 50 --steps 20 --reps 3 --quiet --out "$R"
grep -q "^fc1,mlp_fc,4,17,68," "$R/summary.csv" && cli_ok || cli_fail "MLP fc1: 4 neurons x (16 inputs + bias)"
grep -q "^fc1,mlp_fc,rows,output neuron,4,17," "$R/candidates.csv" && cli_ok || cli_fail "MLP fc1 by output neurons"
grep -q "^fc2,mlp_proj,cols,input neuron,4,10," "$R/candidates.csv" && cli_ok || cli_fail "MLP fc2 by input neurons"
# both models in one run: subfolders, one stats.csv with both (the MLP claim's control is the Transformer)
R=$TMPD/pcb
check "partition_check both" "$C" --model both "${TINY[@]}" --mlp-data synthetic --mlp-pool 2 --mlp-width 4 --mlp-eval-n 50 --reps 3 --save-h 0 --out "$R"
[ -s "$R/tt/summary.csv" ] && [ -s "$R/mlp/summary.csv" ] && [ ! -e "$R/tt/H.npy" ] && cli_ok || cli_fail "both: tt/ and mlp/, no H with --save-h 0"
grep -qE "^partition_check.mlp.alg2_agree,[0-9]" "$R/stats.csv" && grep -qE "^partition_check.tt.alg2_agree,[0-9]" "$R/stats.csv" && cli_ok || cli_fail "both: the MLP claim and its control in one stats.csv"
expect_claim_stats partition_check "$R/stats.csv"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 4 ] && cli_ok || cli_fail "both: 2 claim lines per model"
cmp -s "$R/tt/candidates.csv" "$TMPD/pc/candidates.csv" && cli_ok || cli_fail "both: the Transformer part is the tt run"

# block_structure: H at steps 0, 1 (fig6's checkpoint with these flags) and 5
R=$TMPD/bs
check "block_structure tiny run" "$B" "${TINY[@]}" --at-steps 0,1,5 --out "$R"
expect_claim_stats block_structure "$R/stats.csv"
for f in run.txt claims.txt stats.csv structure.csv claimed.csv steps.csv train/step000005_params.npy; do
  [ -s "$R/$f" ] && cli_ok || cli_fail "block_structure wrote $f"
done
[ "$(wc -l <"$R/claimed.csv")" -eq 25 ] && cli_ok || cli_fail "claimed.csv: header + 8 blocks x 3 steps"
[ "$(wc -l <"$R/steps.csv")" -eq 4 ] && cli_ok || cli_fail "steps.csv: header + 3 steps"
head -1 "$R/structure.csv" | grep -q "^step,tensor,role,split,meaning,blocks,mass_ratio,random_mass_ratio,offdiag_share,chance,excess" && cli_ok || cli_fail "structure.csv header"
[ "$(awk -F, '$1 == 1 && $NF == 1' "$R/structure.csv" | wc -l)" -eq "$(awk -F, 'NR > 1 {print $2}' "$R/structure.csv" | sort -u | wc -l)" ] && cli_ok || cli_fail "one Principle-1 pick per tensor and step"
grep -qE "^block_structure.neurons_together.max_min_excess,-?[0-9]" "$R/stats.csv" && grep -qE "^block_structure.control.neurons_together.max_min_excess,-?[0-9]" "$R/stats.csv" && cli_ok || cli_fail "block_structure: the claim and its control"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 1 ] && cli_ok || cli_fail "block_structure: 1 claim line"
# step 1 is fig6's checkpoint: the same H, so the same excess of every block
for b in query key value attn_proj mlp_fc1 mlp_proj embed output; do
  a=$(awk -F, -v b=$b '$1 == b {print $NF}' "$TMPD/f6/summary.csv")
  c=$(awk -F, -v b=$b '$1 == b && $2 == 1 {print $4}' "$R/claimed.csv")
  [ -n "$a" ] && [ "$a" = "$c" ] && cli_ok || cli_fail "block_structure step 1 = fig6 for $b ($a vs $c)"
done
check "block_structure, another seed" "$B" "${TINY[@]}" --at-steps 0,1,5 --seed 2 --out "$TMPD/bs2"
check "bands of two runs" "$B" --bands-of "$R,$TMPD/bs2" --out "$TMPD/bands" --quiet
[ "$(wc -l <"$TMPD/bands/bands.csv")" -eq 25 ] && grep -q "^query,5,2,2," "$TMPD/bands/bands.csv" && cli_ok || cli_fail "bands.csv: 8 blocks x 3 steps over 2 runs"
awk -F, 'NR > 1 && !($6 <= $5 && $5 <= $7) {bad = 1} END {exit bad}' "$TMPD/bands/bands.csv" && cli_ok || cli_fail "bands: min <= mean <= max"
# as make figures does: the bands of one run into that run's own folder, which it keeps
check "bands of a run into its folder" "$B" --bands-of "$TMPD/bs2" --out "$TMPD/bs2" --quiet
[ -s "$TMPD/bs2/bands.csv" ] && [ -s "$TMPD/bs2/claimed.csv" ] && [ -s "$TMPD/bs2/run.txt" ] && cli_ok \
  || cli_fail "bands into the run's folder keep the run: $(ls "$TMPD/bs2" | tr '\n' ' ')"
check "block_structure plot renders" gnuplot -e "bands='$TMPD/bands/bands.csv'; runs_text='2 runs'; out='$TMPD/bs.png'" plots/block_structure.gp
[ -s "$TMPD/bs.png" ] && cli_ok || cli_fail "block_structure PNG written"
check "block_structure, other steps" "$B" "${TINY[@]}" --at-steps 1,5 --out "$TMPD/bs3"
expect_user_error "bands of runs with other steps" "$B" --bands-of "$R,$TMPD/bs3" --out "$TMPD/bands2"
expect_no_files "no bands of mismatched runs" "$TMPD/bands2"
cli_summary
