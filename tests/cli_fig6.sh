# Whole-program checks of fig6, table_kappa and partition_check: bad input
# stops with one line and exit 2 leaving no files; tiny runs write every
# output with the expected headers; the fig6 plot script renders.
source tests/lib_cli.sh
F=$BIN/fig6
K=$BIN/table_kappa
C=$BIN/partition_check
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
expect_user_error "table_kappa: layer out of range" "$K" --layer 2 --out "$TMPD/a"
expect_user_error "partition_check: unknown model" "$C" --model cnn --out "$TMPD/a"
expect_user_error "partition_check: share 0" "$C" --share 0 --out "$TMPD/a"
expect_user_error "partition_check: share above 1" "$C" --share 1.5 --out "$TMPD/a"
expect_user_error "partition_check: unknown MLP data" "$C" --model mlp --mlp-data cifar --out "$TMPD/a"
expect_user_error "partition_check: unknown activation" "$C" --model mlp --mlp-act swish --out "$TMPD/a"
expect_no_files "no output after bad flags" "$TMPD/a"
expect_user_error "partition_check: pool does not divide" "$C" --model mlp --mlp-data synthetic --mlp-pool 3 --out "$TMPD/b"
expect_user_error "partition_check: eval batch too large" "$C" --model mlp --mlp-data synthetic --mlp-eval-n 5000 --out "$TMPD/b"
expect_no_files "no output after bad MLP settings" "$TMPD/b"
# a text file with more distinct bytes than V
printf 'abcdefghijklmnopqrstuvwxyz' >"$TMPD/rich.txt"
expect_user_error "fig6: text richer than V" "$F" "${TINY[@]}" --text "$TMPD/rich.txt" --out "$TMPD/c"
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
          table_kappa.ref.diagonal.share_up.fig4.H.1pct table_kappa.n_measurable.fig4.H.1pct; do
  grep -q "^$st," "$R/stats.csv" && cli_ok || cli_fail "stats.csv has $st"
done
[ "$(grep -cE '^(primary|other) reading ' "$R/claims.txt")" -eq 8 ] && cli_ok || cli_fail "table_kappa: 8 reading lines"
[ "$(grep -c '^first version at step ' "$R/claims.txt")" -eq 2 ] && cli_ok || cli_fail "table_kappa: the first version's lines"
expect_user_error "table_kappa: draws" "$K" --draws -1 --out "$TMPD/d"
expect_user_error "table_kappa: too many draws" "$K" --draws 20000 --out "$TMPD/d"
expect_no_files "no output after bad draws" "$TMPD/d"
check "table_kappa again" "$K" "${TINY[@]}" --draws 5 --out "$TMPD/tk2"
cmp -s "$R/blocks.csv" "$TMPD/tk2/blocks.csv" && cmp -s "$R/stats.csv" "$TMPD/tk2/stats.csv" && cli_ok || cli_fail "same seed, same results"
check "table_kappa sweep plot renders" gnuplot -e "dirs='$R $TMPD/tk2'; label='test'; out='$TMPD/sweep.png'" plots/table_kappa_sweep.gp
[ -s "$TMPD/sweep.png" ] && cli_ok || cli_fail "sweep PNG written"

# partition_check on both models
R=$TMPD/pc
check "partition_check tt" "$C" "${TINY[@]}" --reps 3 --out "$R"
head -1 "$R/candidates.csv" | grep -q "^tensor,role,split,meaning,blocks,block_size,mass_ratio,random_mass_ratio" && cli_ok || cli_fail "candidates header"
head -1 "$R/summary.csv" | grep -q "^tensor,role,rows,cols,size,hessian_share,finest_split" && cli_ok || cli_fail "summary header"
grep -q "^h0.attn.query,query,heads,head,2,32," "$R/candidates.csv" && cli_ok || cli_fail "query by heads: 2 blocks of 32"
grep -q "^h0.attn.key.bias,.*zero-hessian$" "$R/summary.csv" && cli_ok || cli_fail "key bias has no curvature"
cmp -s "$R/H.npy" "$TMPD/f6/H.npy" && cli_ok || cli_fail "partition_check tt analyses fig6's H"
[ "$(grep -cE '^(PASS|FAIL): ' "$R/claims.txt")" -eq 2 ] && cli_ok || cli_fail "partition_check: 2 claim lines"
R=$TMPD/pcm
check "partition_check mlp" "$C" --model mlp --mlp-data synthetic --mlp-pool 2 --mlp-width 4 --mlp-eval-n 50 --steps 20 --reps 3 --quiet --out "$R"
grep -q "^fc1,mlp_fc,4,17,68," "$R/summary.csv" && cli_ok || cli_fail "MLP fc1: 4 neurons x (16 inputs + bias)"
grep -q "^fc1,mlp_fc,rows,output neuron,4,17," "$R/candidates.csv" && cli_ok || cli_fail "MLP fc1 by output neurons"
grep -q "^fc2,mlp_proj,cols,input neuron,4,10," "$R/candidates.csv" && cli_ok || cli_fail "MLP fc2 by input neurons"
cli_summary
