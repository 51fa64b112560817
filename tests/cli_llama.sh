# Whole-program checks of the Llama-style model in Hugging Face's layout
# (llama_probe): a fresh model written with --save-hf and read back (folder,
# and file + --model-config) gives the same loss, gradient and H v bytes and,
# written again, the same files; the same bytes on 1 and 2 threads; --hessian's
# splits; hostile configs and files, and bad batch flags of both probes, are
# one line, exit 2, no output.
source tests/lib_cli.sh
P=$BIN/llama_probe

check "llama_probe --help" "$P" --help
check "a fresh GQA model, saved" "$P" --C 16 --heads 4 --kv-heads 2 --layers 2 --M 24 --T 6 --init-std 0.3 \
  --data text --batch 3 --save-hf "$TMPD/hf" --out "$TMPD/a" --quiet
check "read back from the folder" "$P" --model "$TMPD/hf" --data text --batch 3 --out "$TMPD/b" --quiet
check "read back from the file with --model-config" "$P" --model "$TMPD/hf/model.safetensors" \
  --model-config "$TMPD/hf/config.json" --data text --batch 3 --out "$TMPD/c" --quiet
for f in loss.csv grad.safetensors hv.safetensors v.safetensors tokens.npy; do
  cmp -s "$TMPD/a/$f" "$TMPD/b/$f" && cmp -s "$TMPD/a/$f" "$TMPD/c/$f" && cli_ok ||
    cli_fail "$f differs after the round trip"
done
check "written again" "$P" --model "$TMPD/hf" --save-hf "$TMPD/hf2" --out "$TMPD/d" --quiet
cmp -s "$TMPD/hf/model.safetensors" "$TMPD/hf2/model.safetensors" &&
  cmp -s "$TMPD/hf/config.json" "$TMPD/hf2/config.json" && cli_ok ||
  cli_fail "a checkpoint read and written again is not the same bytes"
check "its own direction file" "$P" --model "$TMPD/hf" --direction "$TMPD/a/v.safetensors" --data text --batch 3 \
  --out "$TMPD/e" --quiet
cmp -s "$TMPD/a/hv.safetensors" "$TMPD/e/hv.safetensors" && cli_ok || cli_fail "--direction v.safetensors: another H v"
OPENBLAS_NUM_THREADS=1 "$P" --model "$TMPD/hf" --data text --batch 3 --out "$TMPD/t1" --quiet
OPENBLAS_NUM_THREADS=2 "$P" --model "$TMPD/hf" --data text --batch 3 --out "$TMPD/t2" --quiet
cmp -s "$TMPD/t1/hv.safetensors" "$TMPD/t2/hv.safetensors" && cli_ok || cli_fail "H v differs on 1 and 2 threads"

# ---- --hessian: Principle 1 on every tensor's block of H; one pick and one Algorithm 3 split per tensor
check "--hessian --save-h" "$P" --model "$TMPD/hf" --data text --batch 3 --hessian --save-h --out "$TMPD/h" --quiet
awk -F, 'NR > 1 {if (!n[$1]++) k++; p[$1] += $9; a[$1] += $8}
  END {for (t in n) if (p[t] != 1 || a[t] != 1) exit 1; exit k != 21}' "$TMPD/h/splits.csv" && cli_ok ||
  cli_fail "splits.csv: not one pick and one Algorithm 3 split for each of 21 tensors"
[ "$(stat -c %s "$TMPD/h/H.npy")" -eq $((128 + 4176 * 4176 * 8)) ] && cli_ok || cli_fail "H.npy is not 4176 x 4176"
expect_user_error "--level 0" "$P" --model "$TMPD/hf" --hessian --level 0 --out "$TMPD/x"

# ---- hostile checkpoints: one line, exit 2, no output
bad() { # bad DESCRIPTION SED-EXPRESSION EXPECTED-TEXT
  rm -rf "$TMPD/bad" "$TMPD/x"; cp -r "$TMPD/hf" "$TMPD/bad"
  sed -i "$2" "$TMPD/bad/config.json"
  expect_user_error "$1" "$P" --model "$TMPD/bad" --out "$TMPD/x"
  grep -q -- "$3" "$TMPD/err" && cli_ok || cli_fail "$1: the message does not say '$3': $(cat "$TMPD/err")"
  expect_no_files "$1: no output" "$TMPD/x"
}
bad "rope scaling" 's/"rope_scaling":\t*null/"rope_scaling": {"rope_type": "llama3", "factor": 8.0}/' "rope_scaling"
bad "attention bias" 's/"attention_bias":\t*false/"attention_bias": true/' "attention_bias = true"
bad "MLP bias" 's/"mlp_bias":\t*false/"mlp_bias": true/' "mlp_bias = true"
bad "sliding window" 's/"mlp_bias"/"sliding_window": 4096, "mlp_bias"/' "sliding_window"
bad "an unknown key" 's/"mlp_bias"/"qk_layernorm": true, "mlp_bias"/' "config key 'qk_layernorm'"
bad "config disagrees with the shapes" 's/"hidden_size":\t*16/"hidden_size": 32/' \
  "hidden_size = 32 but the tensors give 16"
bad "not JSON" 's/{/[/' "not a JSON object"
expect_user_error "a file without its config" "$P" --model "$TMPD/hf/model.safetensors" --out "$TMPD/x"
grep -q "needs its config.json" "$TMPD/err" && cli_ok || cli_fail "no config: $(cat "$TMPD/err")"
expect_user_error "a nanoGPT file as a Llama" "$P" --model "$TMPD/a/tokens.npy" --model-config "$TMPD/hf/config.json" \
  --out "$TMPD/x"
expect_user_error "T beyond max_position_embeddings" "$P" --model "$TMPD/hf" --T 7 --out "$TMPD/x"
check "a fresh tied MHA model" "$P" --C 8 --heads 2 --tied 1 --save-hf "$TMPD/tied" --out "$TMPD/f" --quiet
expect_user_error "a direction of another layout" "$P" --model "$TMPD/tied" --direction "$TMPD/a/v.safetensors" \
  --out "$TMPD/x"
expect_no_files "no output after a bad direction" "$TMPD/x"
# ---- the registry's llama kind (harness/model_llama.c): every program that takes any model
source tests/lib_numcmp.sh
check "partition_check --model llama" "$BIN/partition_check" --model llama --steps 40 --out "$TMPD/pc" --quiet
grep -q "Llama-style" "$TMPD/pc/claims.txt" && grep -q "model.layers.0.self_attn.q_proj.weight" "$TMPD/pc/summary.csv" &&
  cli_ok || cli_fail "partition_check --model llama: no Llama tensors in its outputs"
check "hessian_blocks --model llama (streamed)" "$BIN/hessian_blocks" --model llama --steps 40 --out "$TMPD/hbs" --quiet
check "hessian_blocks --model llama --path full" "$BIN/hessian_blocks" --model llama --steps 40 --path full \
  --out "$TMPD/hbf" --quiet
numcmp "$TMPD/hbs/blocks.csv" "$TMPD/hbf/blocks.csv" && cli_ok || cli_fail "llama: streamed and full blocks.csv differ"
check "spectra --model llama" "$BIN/spectra" --model llama --steps 40 --out "$TMPD/sp" --quiet
check "partition_check on a Hugging Face folder" "$BIN/partition_check" --model "$TMPD/hf" --data text --T 6 \
  --hess-batch 8 --out "$TMPD/pcf" --quiet
grep -q "$TMPD/hf" "$TMPD/pcf/claims.txt" && cli_ok || cli_fail "partition_check: the file is not named in its claims"
# heatmap has no --T: a file model runs at T 8, which its max_position_embeddings must allow
check "a fresh model of T 8" "$P" --C 8 --heads 2 --kv-heads 1 --T 8 --save-hf "$TMPD/hf8" --out "$TMPD/p8" --quiet
check "heatmap of the kv head of a Hugging Face folder" "$BIN/heatmap" --model "$TMPD/hf8" --data text --hess-batch 4 \
  --block 'model.layers.0.self_attn.k_proj.weight' --out "$TMPD/hm" --quiet
[ "$(head -c 200 "$TMPD/hm/block.npy" | grep -ao "(32, 32)")" = "(32, 32)" ] && cli_ok ||
  cli_fail "heatmap: the one kv head's block is not 32 x 32 (4 rows of 8)"
expect_user_error "--model-config without a file" "$BIN/partition_check" --model llama --model-config x.json \
  --out "$TMPD/x"
expect_user_error "a bad --llama-kv-heads" "$BIN/partition_check" --model llama --llama-kv-heads 3 --out "$TMPD/x"
grep -q "kv heads must be >= 1 and divide heads = 4" "$TMPD/err" && cli_ok || cli_fail "kv heads: $(cat "$TMPD/err")"

# ---- fig6 on the registry: the eight blocks of the Llama, by role; make figures ARCH=llama
check "fig6 --model llama" "$BIN/fig6" --model llama --steps 40 --hess-batch 16 --save-h 0 --out "$TMPD/f6" --quiet
grep -q "^query,model.layers.0.self_attn.q_proj.weight," "$TMPD/f6/summary.csv" &&
  grep -q "^mlp_fc1,model.layers.0.mlp.gate_proj.weight," "$TMPD/f6/summary.csv" &&
  grep -q "^output,lm_head.weight," "$TMPD/f6/summary.csv" && cli_ok || cli_fail "fig6 --model llama: not the Llama's blocks"
grep -q 'title_text = "Hessian of self\\\\_attn.k\\\\_proj (2 heads)' "$TMPD/f6/plotvars_key.gp" && cli_ok ||
  cli_fail "fig6 --model llama: key's title: $(grep title_text "$TMPD/f6/plotvars_key.gp")"
check "fig6 on a tied Hugging Face folder" "$BIN/fig6" --model "$TMPD/hf8" --data text --hess-batch 8 --save-h 0 \
  --out "$TMPD/f6f" --quiet
grep -q "^output,model.embed_tokens.weight," "$TMPD/f6f/summary.csv" 2>/dev/null ||
  grep -q "^output,lm_head.weight," "$TMPD/f6f/summary.csv" && cli_ok || cli_fail "fig6 on a folder: no output block"
expect_user_error "fig6 --model mlp" "$BIN/fig6" --model mlp --mlp-data synthetic --out "$TMPD/x"

# ---- block_structure, vspread and hetero on the registry's Llama: its blocks by role, every statistic
# the claims read, and the same flags giving the same files
LT=(--model llama --llama-kv-heads 1 --V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --quiet)
check "block_structure --model llama" "$BIN/block_structure" "${LT[@]}" --hess-batch 6 --at-steps 0,1,5 \
  --out "$TMPD/bs"
expect_claim_stats block_structure "$TMPD/bs/stats.csv"
grep -q "^5,model.layers.0.mlp.up_proj.weight,mlp_fc,rows," "$TMPD/bs/structure.csv" &&
  grep -q "^attn_proj,5,2," "$TMPD/bs/claimed.csv" && cli_ok || cli_fail "block_structure --model llama: not the Llama's tensors"
grep -q "context: 1-layer Llama-style Transformer, P = " "$TMPD/bs/claims.txt" && cli_ok ||
  cli_fail "block_structure --model llama: context line: $(tail -1 "$TMPD/bs/claims.txt")"
check "vspread --model llama" "$BIN/vspread" "${LT[@]}" --checkpoints 0.1,0.5,1 --out "$TMPD/vs"
expect_claim_stats vspread "$TMPD/vs/stats.csv"
grep -q "^10,model.layers.0.self_attn.k_proj.weight,key,4,8,1," "$TMPD/vs/spread.csv" && cli_ok ||
  cli_fail "vspread --model llama: the GQA key tensor (1 kv head of 4 rows): $(grep k_proj "$TMPD/vs/spread.csv" | head -1)"
HT=(--mlp-data synthetic --mlp-eval-n 50 --mlp-pool 2 --reps 3 --hess-batch 6)
check "hetero --model llama" "$BIN/hetero" "${LT[@]}" "${HT[@]}" --save-safetensors "$TMPD/ht.hf" --out "$TMPD/ht"
expect_claim_stats hetero "$TMPD/ht/stats.csv"
[ -s "$TMPD/ht.hf/config.json" ] && grep -q "^tt,end,20,.*q_proj" "$TMPD/ht/blocks.csv" && cli_ok ||
  cli_fail "hetero --model llama: the Llama in the Transformer's place, its checkpoint saved"
check "hetero --model llama again" "$BIN/hetero" "${LT[@]}" "${HT[@]}" --out "$TMPD/ht2"
cmp -s "$TMPD/ht/stats.csv" "$TMPD/ht2/stats.csv" && cmp -s "$TMPD/ht/blocks.csv" "$TMPD/ht2/blocks.csv" && cli_ok ||
  cli_fail "hetero --model llama: the same flags gave other numbers"
# a Hugging Face folder: init is its architecture at the toolkit's initialisation, checkpoint and end
# the folder's weights (the same H: the same heterogeneity)
check "hetero on a Hugging Face folder" "$BIN/hetero" --model "$TMPD/ht.hf" --V 4 --T 4 --quiet "${HT[@]}" \
  --out "$TMPD/hf_ht"
awk -F, '$1 == "tt" { sd[$2] = $6 } END { exit !(sd["checkpoint"] == sd["end"] && sd["init"] != sd["end"]) }' \
  "$TMPD/hf_ht/summary.csv" && cli_ok || cli_fail "hetero on a folder: init, checkpoint and end S"
awk -F, -v want="$(awk -F, '$1 == "tt" && $2 == "checkpoint" { print $6 }' "$TMPD/ht/summary.csv")" \
  '$1 == "tt" && $2 == "end" { exit !($6 == want) }' "$TMPD/hf_ht/summary.csv" && cli_ok ||
  cli_fail "hetero on the saved folder: its S is not that of the run's --checkpoint"
check "table_kappa --model llama" "$BIN/table_kappa" "${LT[@]}" --hess-batch 6 --draws 3 \
  --save-safetensors "$TMPD/tk.hf" --out "$TMPD/tk"
expect_claim_stats table_kappa "$TMPD/tk/stats.csv"
grep -q "^| 1st head in Key | 32 | 0 + " "$TMPD/tk/table.md" && [ -s "$TMPD/tk/H_mlp_fc1_row0.npy" ] && cli_ok ||
  cli_fail "table_kappa --model llama: the one kv head (4 x 8: all of k_proj) as the key block: $(grep Key "$TMPD/tk/table.md")"
check "table_kappa on its Hugging Face folder" "$BIN/table_kappa" --model "$TMPD/tk.hf" --V 4 --T 4 --hess-batch 6 \
  --draws 3 --quiet --out "$TMPD/tkf"
grep -q "^\*\*Step 0\*\* (the model of --model" "$TMPD/tkf/table.md" && cli_ok || cli_fail "table_kappa on a folder: one step"
for prog in block_structure vspread hetero table_kappa; do
  expect_user_error "$prog --model mlp" "$BIN/$prog" --model mlp --out "$TMPD/x"
  expect_user_error "$prog: --llama-tied without --model llama" "$BIN/$prog" --llama-tied 1 --out "$TMPD/x"
  expect_user_error "$prog: --bias with --model llama" "$BIN/$prog" --model llama --bias 1 --out "$TMPD/x"
done
expect_user_error "block_structure on a file (it trains)" "$BIN/block_structure" --model "$TMPD/hf" --out "$TMPD/x"
expect_no_files "no output after a bad model" "$TMPD/x"
plan=$(MAKEFLAGS= make --no-print-directory -n figures-only ARCH=llama RES="$TMPD/rl" FIG="$TMPD/fl" 2>&1)
echo "$plan" | grep -q "bin/fig6 .*--model llama" && echo "$plan" | grep -q "bin/partition_check --model llama" &&
  echo "$plan" | grep -q "bin/train_compare .*--model llama" &&
  echo "$plan" | grep -q "bin/block_structure .*--model llama" && echo "$plan" | grep -q "bin/hetero .*--model llama" &&
  echo "$plan" | grep -q "bin/vspread .*--model llama" &&
  echo "$plan" | grep -q "bin/table_kappa .*--model llama" && ! echo "$plan" | grep -q "bin/fig4" &&
  echo "$plan" | grep -q "llama=1.*plots/block_structure.gp" && cli_ok ||
  cli_fail "make figures ARCH=llama: $(echo "$plan" | grep -o 'build/bin/[a-z0-9_]*' | sort -u | tr '\n' ' ')"
MAKEFLAGS= make --no-print-directory -n figures-only ARCH=gpt >"$TMPD/arch" 2>&1
grep -q "ARCH must be tt or llama" "$TMPD/arch" && cli_ok || cli_fail "ARCH=gpt: $(head -c 200 "$TMPD/arch")"

# ---- the probes' shared batch flags (harness probe_batch)
for prog in llama_probe tt_probe; do
  expect_user_error "$prog --batch 0" "$BIN/$prog" --model "$TMPD/hf" --batch 0 --out "$TMPD/x"
  grep -q -- "--batch must be in 1..65536" "$TMPD/err" && cli_ok || cli_fail "$prog --batch 0: $(cat "$TMPD/err")"
  expect_user_error "$prog --held-out 2" "$BIN/$prog" --model "$TMPD/hf" --held-out 2 --out "$TMPD/x"
  expect_user_error "$prog --data-seed -1" "$BIN/$prog" --model "$TMPD/hf" --data-seed -1 --out "$TMPD/x"
done
expect_user_error "--tokens of another length" "$P" --model "$TMPD/hf" --tokens "$TMPD/a/tokens.npy" --T 5 \
  --out "$TMPD/x"
grep -q "expected a (B, 6) array of token ids" "$TMPD/err" && cli_ok || cli_fail "--tokens T: $(cat "$TMPD/err")"
expect_no_files "no output after bad batch flags" "$TMPD/x"
cli_summary
