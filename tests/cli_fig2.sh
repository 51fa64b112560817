# Whole-program checks of fig2: bad flags and bad data files stop with one line
# and exit 2 leaving no files; a small synthetic run writes every output.
source tests/lib_cli.sh
P=$BIN/fig2
check "--help exits 0" "$P" --help
"$P" --help | grep -q -- "--checkpoints" && cli_ok || cli_fail "--help lists --checkpoints"
expect_user_error "unknown flag" "$P" --bogus
expect_user_error "width 0" "$P" --width 0 --out "$TMPD/a"
expect_user_error "checkpoints not increasing" "$P" --checkpoints 0.5,0.2 --out "$TMPD/a"
expect_user_error "checkpoint above 1" "$P" --checkpoints 0,1.5 --out "$TMPD/a"
expect_user_error "unknown activation" "$P" --act swish --out "$TMPD/a"
expect_user_error "unknown scale" "$P" --scale huge --out "$TMPD/a"
expect_user_error "unknown pooling" "$P" --pool-kind median --out "$TMPD/a"
expect_user_error "unknown data set" "$P" --data mnist --out "$TMPD/a"
expect_user_error "pool does not divide" "$P" --data synthetic --pool 3 --out "$TMPD/b"
expect_user_error "eval batch too large" "$P" --data synthetic --eval-n 5000 --out "$TMPD/b"
expect_user_error "cifar without a folder" "$P" --data cifar100 --out "$TMPD/b"
expect_user_error "unwritable output folder" "$P" --data synthetic --out /proc/nope
expect_no_files "no output after bad flags" "$TMPD/a"
expect_no_files "no output after bad values" "$TMPD/b"

# bad Fashion-MNIST folders: missing files, wrong magic, truncated, label out of range
D=$TMPD/fm
mkdir -p "$D"
expect_user_error "missing IDX files" "$P" --data-dir "$D" --out "$TMPD/c"
idx_header() { printf "\\x00\\x00\\x08\\x$1"; printf "\\x00\\x00\\x00\\x$2"; }
# 4 images of 4x4 (magic 0x803, n 4, 4, 4) then 64 pixel bytes; labels (0x801, n 4) then 4 bytes
{ idx_header 03 04; printf "\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x04"; head -c 64 /dev/urandom; } >"$D/train-images-idx3-ubyte"
cp "$D/train-images-idx3-ubyte" "$D/t10k-images-idx3-ubyte"
{ idx_header 01 04; printf "\\x01\\x02\\x03\\x04"; } >"$D/train-labels-idx1-ubyte"
cp "$D/train-labels-idx1-ubyte" "$D/t10k-labels-idx1-ubyte"
check "the tiny folder is readable" "$P" --data-dir "$D" --pool 1 --eval-n 4 --batch 2 --steps 2 --reps 2 --out "$TMPD/ok"
{ idx_header 01 04; printf "\\x01\\x02\\x0c\\x04"; } >"$D/train-labels-idx1-ubyte"
expect_user_error "label out of range" "$P" --data-dir "$D" --pool 1 --out "$TMPD/c"
{ idx_header 01 04; printf "\\x01\\x02\\x03"; } >"$D/train-labels-idx1-ubyte"
expect_user_error "truncated labels" "$P" --data-dir "$D" --pool 1 --out "$TMPD/c"
cp "$D/t10k-labels-idx1-ubyte" "$D/train-labels-idx1-ubyte"
head -c 50 "$D/t10k-images-idx3-ubyte" >"$D/train-images-idx3-ubyte"
expect_user_error "truncated images" "$P" --data-dir "$D" --pool 1 --out "$TMPD/c"
cp "$D/t10k-labels-idx1-ubyte" "$D/train-images-idx3-ubyte"
expect_user_error "wrong magic" "$P" --data-dir "$D" --pool 1 --out "$TMPD/c"
expect_no_files "no output after bad data" "$TMPD/c"

# a small run on the synthetic set
R=$TMPD/run
check "a synthetic run" "$P" --data synthetic --steps 60 --batch 32 --eval-n 200 --reps 4 --out "$R" --quiet
for f in run.txt claims.txt model.csv checkpoints.csv blocks.csv train.csv bounds.csv H_init.npy H_mid.npy H_end.npy \
         heat_init.csv heat_end.csv plotvars_mid.gp weights_end.npy X_eval.npy y_eval.npy; do
  [ -s "$R/$f" ] && cli_ok || cli_fail "synthetic run wrote $f"
done
[ "$(wc -l <"$R/checkpoints.csv")" -eq 4 ] && cli_ok || cli_fail "checkpoints.csv: header + 3 rows"
[ "$(wc -l <"$R/train.csv")" -eq 61 ] && cli_ok || cli_fail "train.csv: header + 60 steps"
grep -qE "^(PASS|FAIL): the Hessian is near-block-diagonal" "$R/claims.txt" && cli_ok || cli_fail "claims line"
head -1 "$R/blocks.csv" | grep -q "^tag,step,block,name,n,fro2,row_mass_ratio,tau" && cli_ok || cli_fail "blocks.csv header"
# 8 hidden + 10 output neurons + bias = 19 blocks per checkpoint
[ "$(grep -c '^mid,' "$R/blocks.csv")" -eq 19 ] && cli_ok || cli_fail "19 neuron blocks per checkpoint"
[ -z "$(find "$R" -name '*.tmp.*')" ] && cli_ok || cli_fail "no temporaries left"
head -1 "$R/checkpoints.csv" | grep -q ",fc1_share,hidden_offdiag_share,hidden_chance,hidden_excess,hidden_block_excess_min,hidden_perm_excess,hidden_diag_share,whole_offdiag_share,whole_chance,whole_excess,whole_perm_excess,whole_diag_share$" && cli_ok || cli_fail "checkpoints.csv: off-diagonal columns"
head -1 "$R/blocks.csv" | grep -q ",kappa_DH_svd,offdiag_excess$" && cli_ok || cli_fail "blocks.csv: each block's own excess"
for n in fig2.hidden.min_excess fig2.control.hidden.min_excess fig2.whole.min_excess fig2.control.whole.min_excess \
         fig2.init.old_hidden_mass fig2.end.hidden_excess; do
  grep -qE "^$n,-?[0-9]" "$R/stats.csv" && cli_ok || cli_fail "fig2 stats.csv: $n"
done
expect_claim_stats fig2 "$R/stats.csv"
# the statistic is the smallest excess over the checkpoints
min=$(awk -F, 'NR > 1 {print $19}' "$R/checkpoints.csv" | sort -g | head -1)
got=$(grep "^fig2.hidden.min_excess," "$R/stats.csv" | cut -d, -f2)
awk -v a="$min" -v b="$got" 'BEGIN {exit !(a - b < 1e-9 && b - a < 1e-9)}' && cli_ok || cli_fail "min over checkpoints ($min vs $got)"
[ "$(grep -cE '^old rule (PASS|FAIL) ' "$R/claims.txt")" -eq 2 ] && cli_ok || cli_fail "the old rule's lines kept"
check "a run without H files" "$P" --data synthetic --steps 20 --batch 32 --eval-n 100 --reps 2 --save-h 0 --out "$TMPD/noh" --quiet
[ -z "$(find "$TMPD/noh" -name 'H_*.npy')" ] && [ -s "$TMPD/noh/stats.csv" ] && cli_ok || cli_fail "--save-h 0: no H files"
cli_summary
