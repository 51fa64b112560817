# Whole-program checks of text data and nanoGPT checkpoints: --data/--text/
# --vocab-size (the default corpus, a file, nanoGPT's .bin files) and their
# errors; vocab.csv; a tied checkpoint written by train_transformer and read by
# fig6, table_kappa, partition_check, hetero, hessian_blocks, heatmap and
# tt_probe --model, where the same model and Hessian batch must give the same
# H (heatmap's block = the same block of fig6's H.npy; hessian_blocks' path
# full and stream agree); the checkpoint programs' --save-safetensors; bad
# checkpoints one line, exit 2.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
TT=$BIN/train_transformer
F=$BIN/fig6

# ---- the token source
expect_user_error "--data foo" "$TT" --data foo --steps 2 --out "$TMPD/e"
expect_user_error "--text with --data markov" "$TT" --data markov --text /etc/hostname --steps 2 --out "$TMPD/e"
expect_user_error "--text missing file" "$TT" --text "$TMPD/none.txt" --steps 2 --out "$TMPD/e"
expect_user_error "--vocab-size 1" "$TT" --data text --vocab-size 1 --steps 2 --out "$TMPD/e"
expect_no_files "no output after a bad token source" "$TMPD/e"
check "train_transformer on the default corpus" "$TT" --data text --steps 20 --checkpoints 1 --out "$TMPD/d" --quiet
[ "$(wc -l <"$TMPD/d/vocab.csv")" = 33 ] && cli_ok || cli_fail "default vocabulary: 32 symbols + header"
tail -1 "$TMPD/d/vocab.csv" | grep -q '^31,-1,other,' && cli_ok || cli_fail "the last symbol is 'other'"
grep -q '^2,32,space,' "$TMPD/d/vocab.csv" && cli_ok || cli_fail "space is symbol 2 (tab and newline before it)"
check "--vocab-size 256: every byte" "$TT" --data text --vocab-size 256 --steps 20 --checkpoints 1 --out "$TMPD/d256" --quiet
n=$(($(wc -l <"$TMPD/d256/vocab.csv") - 1))
[ "$n" -gt 90 ] && [ "$n" -le 256 ] && ! grep -q other "$TMPD/d256/vocab.csv" && cli_ok || cli_fail "every byte: $n symbols"
# a file of four symbols: the model's V is 4
for i in $(seq 1 40); do printf 'abcab\nc'; done >"$TMPD/small.txt"
check "a small text file" "$TT" --text "$TMPD/small.txt" --steps 20 --checkpoints 1 --out "$TMPD/s" --quiet
[ "$(wc -l <"$TMPD/s/vocab.csv")" = 5 ] && cli_ok || cli_fail "small text: 4 symbols"
# nanoGPT's token files
mkdir -p "$TMPD/bin"
for i in $(seq 0 99); do printf "\\x$(printf %02x $((i % 7)))\\x00"; done >"$TMPD/bin/train.bin"
for i in $(seq 0 19); do printf "\\x$(printf %02x $((i % 7)))\\x00"; done >"$TMPD/bin/val.bin"
check "nanoGPT token files" "$TT" --text "$TMPD/bin" --vocab-size 7 --steps 20 --checkpoints 1 --out "$TMPD/b" --quiet
expect_user_error "token files without --vocab-size" "$TT" --text "$TMPD/bin" --steps 2 --out "$TMPD/e"
expect_user_error "token files: a token beyond --vocab-size" "$TT" --text "$TMPD/bin" --vocab-size 6 --steps 2 --out "$TMPD/e"
grep -q "token 6 at position 6" "$TMPD/err" && cli_ok || cli_fail "the token named: $(cat "$TMPD/err")"

# ---- a tied checkpoint out of train_transformer, into every --model program
SMALL=(--data text --vocab-size 12 --T 6)
check "train_transformer --tied 1 --save-safetensors" "$TT" "${SMALL[@]}" --tied 1 --steps 30 --checkpoints 1 \
  --save-safetensors "$TMPD/m.safetensors" --out "$TMPD/t" --quiet
M=(--model "$TMPD/m.safetensors" --data text --hess-batch 8 --quiet)
check "fig6 --model" "$F" "${M[@]}" --out "$TMPD/f6"
grep -q '^12,16,4,32,6,1,1,' "$TMPD/f6/model.csv" && cli_ok || cli_fail "fig6 --model: V 12, T 6 from the file"
P=$(awk -F, 'NR == 2 { print $8 }' "$TMPD/f6/model.csv")
[ "$P" = $((12 * 16 + 6 * 16 + 2 * 16 + 2 * 16 + 4 * (16 * 16 + 16) + 32 * 16 + 32 + 16 * 32 + 16 + 2 * 16)) ] &&
  cli_ok || cli_fail "tied P = $P (no lm_head)"
grep -q '^output,wte,' "$TMPD/f6/summary.csv" && cli_ok || cli_fail "tied: the output block is wte"
check "heatmap --model" "$BIN/heatmap" "${M[@]}" --block h0.attn.value --out "$TMPD/hm"
# heatmap's block = rows and columns of the value tensor in fig6's H.npy (same model, same Hessian batch)
off=$(awk -F, '$2 == "h0.attn.value" { print $4 }' "$TMPD/f6/tensors.csv")
npy_text "$TMPD/f6/H.npy" | awk -v P="$P" -v o="$off" '{ i = int((NR - 1) / P); j = (NR - 1) % P;
  if (i >= o && i < o + 256 && j >= o && j < o + 256) print }' >"$TMPD/exp.txt"
npy_text "$TMPD/hm/block.npy" >"$TMPD/got.txt"
# (hess_cols against the engine's symmetric path: round-off, so max|a - b| <= 1e-12 max|H_block|)
paste -d ' ' "$TMPD/got.txt" "$TMPD/exp.txt" | awk 'NF != 2 { bad = 1 } { d = $1 - $2; d = d < 0 ? -d : d;
  m = $2 < 0 ? -$2 : $2; if (d > dm) dm = d; if (m > mm) mm = m; n++ }
  END { exit !(n == 256 * 256 && !bad && dm <= 1e-12 * mm) }' &&
  cli_ok || cli_fail "heatmap --model's block is not fig6 --model's H block"
check "hessian_blocks --model FILE" "$BIN/hessian_blocks" "${M[@]}" --out "$TMPD/hb"
check "hessian_blocks --model FILE --path full" "$BIN/hessian_blocks" "${M[@]}" --path full --out "$TMPD/hbf"
numcmp "$TMPD/hb/blocks.csv" "$TMPD/hbf/blocks.csv" 1e-10 && cli_ok || cli_fail "streamed and full paths differ on the file's model"
check "partition_check --model FILE" "$BIN/partition_check" "${M[@]}" --out "$TMPD/pc"
grep -q "m.safetensors, P = $P" "$TMPD/pc/claims.txt" && cli_ok || cli_fail "partition_check names the model file"
check "table_kappa --model" "$BIN/table_kappa" "${M[@]}" --draws 3 --out "$TMPD/tk"
[ "$(awk -F, 'NR > 1' "$TMPD/tk/sweep.csv" | wc -l)" -ge 1 ] && cli_ok || cli_fail "table_kappa --model: a sweep row"
check "hetero --model" "$BIN/hetero" "${M[@]}" --mlp-data synthetic --mlp-eval-n 20 --steps 20 --reps 2 --out "$TMPD/he"
check "tt_probe --model" "$BIN/tt_probe" --model "$TMPD/m.safetensors" --data text --batch 3 --out "$TMPD/pr" --quiet
for f in grad hv v; do [ -s "$TMPD/pr/$f.safetensors" ] && cli_ok || cli_fail "tt_probe: $f.safetensors"; done
# the checkpoint programs write what they analyse, and reading it back gives the same H
check "fig6 --save-safetensors" "$F" --V 5 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --hess-batch 6 --quiet \
  --save-safetensors "$TMPD/ck.safetensors" --out "$TMPD/f6a"
check "fig6 --model of that checkpoint" "$F" --model "$TMPD/ck.safetensors" --hess-batch 6 --quiet --out "$TMPD/f6b"
cmp -s "$TMPD/f6a/H.npy" "$TMPD/f6b/H.npy" && cli_ok || cli_fail "the written checkpoint's H is not the trained model's"

# ---- bad checkpoints and flags: one line, exit 2, nothing written
expect_user_error "--model-config without --model" "$F" --model-config "$TMPD/x.json" --out "$TMPD/e"
expect_user_error "--model: not a safetensors file" "$F" --model "$TMPD/small.txt" --out "$TMPD/e"
echo '{"n_head": 4, "dropout": 0.2}' >"$TMPD/drop.json"
expect_user_error "--model with dropout > 0" "$F" "${M[@]}" --model-config "$TMPD/drop.json" --out "$TMPD/e"
grep -q "dropout 0.2" "$TMPD/err" && cli_ok || cli_fail "dropout named: $(cat "$TMPD/err")"
expect_user_error "--model with a vocabulary the data does not have" "$F" "${M[@]}" --vocab-size 20 --out "$TMPD/e"
expect_user_error "partition_check --model missing file" "$BIN/partition_check" --model "$TMPD/none.safetensors" --out "$TMPD/e"
expect_user_error "heatmap --model and --h" "$BIN/heatmap" --model "$TMPD/m.safetensors" --h "$TMPD/f6/H.npy" --block wte --out "$TMPD/e"
expect_no_files "no output after bad checkpoints" "$TMPD/e"
cli_summary
