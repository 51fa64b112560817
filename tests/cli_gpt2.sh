#!/usr/bin/env bash
# Whole-program checks of Hugging Face GPT-2 checkpoints (tinytransformer/tt_gpt2hf.c):
# tt_probe writes a toolkit model as a GPT-2 folder and reads it back (folder, or file
# with --model-config: the same loss and gradient bytes; written again: the same bytes);
# the config's activation_function selects the GELU; the registry's programs (fig6,
# partition_check, hessian_blocks, heatmap, spectra) take the folder as --model; a
# checkpoint written by --save-safetensors keeps the tanh GELU; hostile configs are
# one line, exit 2, no output.
set -u
source tests/lib_cli.sh
source tests/lib_numcmp.sh
P="$BIN/tt_probe"
SMALL=(--data text --vocab-size 12 --T 6)
check "a nanoGPT checkpoint to start from" "$BIN/train_transformer" "${SMALL[@]}" --steps 30 --checkpoints 1 \
  --save-safetensors "$TMPD/m.safetensors" --out "$TMPD/t" --quiet
check "tt_probe --save-hf" "$P" --model "$TMPD/m.safetensors" --data text --batch 3 --save-hf "$TMPD/erf" \
  --out "$TMPD/a" --quiet
grep -q '"activation_function":	"gelu"' "$TMPD/erf/config.json" && cli_ok || cli_fail "a nanoGPT model is gelu (erf)"
check "read back from the folder" "$P" --model "$TMPD/erf" --data text --batch 3 --out "$TMPD/b" --quiet
check "read back from the file with --model-config" "$P" --model "$TMPD/erf/model.safetensors" \
  --model-config "$TMPD/erf/config.json" --data text --batch 3 --out "$TMPD/c" --quiet
cmp -s "$TMPD/b/loss.csv" "$TMPD/c/loss.csv" && cmp -s "$TMPD/b/grad.safetensors" "$TMPD/c/grad.safetensors" &&
  cli_ok || cli_fail "folder and file + --model-config differ"
numcmp "$TMPD/a/loss.csv" "$TMPD/b/loss.csv" 1e-13 && cli_ok || cli_fail "the GPT-2 folder's loss is not the nanoGPT file's"
check "written again" "$P" --model "$TMPD/erf" --save-hf "$TMPD/erf2" --out "$TMPD/d" --quiet
cmp -s "$TMPD/erf/model.safetensors" "$TMPD/erf2/model.safetensors" && cmp -s "$TMPD/erf/config.json" \
  "$TMPD/erf2/config.json" && cli_ok || cli_fail "a GPT-2 folder read and written again is not the same bytes"
check "its own direction file" "$P" --model "$TMPD/erf" --direction "$TMPD/b/v.safetensors" --data text --batch 3 \
  --out "$TMPD/e" --quiet
cmp -s "$TMPD/b/hv.safetensors" "$TMPD/e/hv.safetensors" && cli_ok || cli_fail "H v of the written direction differs"

# gelu_new: the same weights, the tanh GELU: another loss
mkdir -p "$TMPD/new"
cp "$TMPD/erf/model.safetensors" "$TMPD/new/"
sed 's/"gelu"/"gelu_new"/' "$TMPD/erf/config.json" >"$TMPD/new/config.json"
check "the gelu_new folder" "$P" --model "$TMPD/new" --data text --batch 3 --out "$TMPD/n" --quiet
cmp -s "$TMPD/b/loss.csv" "$TMPD/n/loss.csv" && cli_fail "activation_function gelu_new did not change the loss" ||
  cli_ok

# ---- the registry: a GPT-2 folder as --model
M=(--model "$TMPD/new" --data text --hess-batch 8 --quiet)
check "fig6 on a GPT-2 folder" "$BIN/fig6" "${M[@]}" --save-h 0 --save-safetensors "$TMPD/ck.safetensors" \
  --out "$TMPD/f6"
grep -q '^12,16,4,32,6,1,1,' "$TMPD/f6/model.csv" && grep -q '^output,lm_head,' "$TMPD/f6/summary.csv" && cli_ok ||
  cli_fail "fig6 on a GPT-2 folder: $(sed -n 2p "$TMPD/f6/model.csv")"
check "its checkpoint, nanoGPT's layout, read by tt_probe" "$P" --model "$TMPD/ck.safetensors" --data text --batch 3 \
  --out "$TMPD/ckp" --quiet
cmp -s "$TMPD/n/loss.csv" "$TMPD/ckp/loss.csv" && cli_ok ||
  cli_fail "--save-safetensors of a gelu_new model: another loss (the GELU lost?)"
check "partition_check on a GPT-2 folder" "$BIN/partition_check" "${M[@]}" --out "$TMPD/pc"
grep -q "$TMPD/new" "$TMPD/pc/claims.txt" && cli_ok || cli_fail "partition_check: the folder is not named in its claims"
check "hessian_blocks on a GPT-2 folder" "$BIN/hessian_blocks" "${M[@]}" --out "$TMPD/hb"
check "heatmap on a GPT-2 folder" "$BIN/heatmap" "${M[@]}" --block 'h0.attn.query[head 1]' --out "$TMPD/hm"
check "spectra on a GPT-2 folder" "$BIN/spectra" "${M[@]}" --out "$TMPD/sp"
expect_user_error "a size flag against the folder" "$BIN/partition_check" "${M[@]}" --C 8 --out "$TMPD/x"

# ---- hostile configs: one line, exit 2, nothing written
bad() { # bad DESCRIPTION SED-EXPRESSION EXPECTED-TEXT
  rm -rf "$TMPD/bad" "$TMPD/x"
  mkdir -p "$TMPD/bad"
  cp "$TMPD/new/model.safetensors" "$TMPD/bad/"
  sed "$2" "$TMPD/new/config.json" >"$TMPD/bad/config.json"
  expect_user_error "$1" "$P" --model "$TMPD/bad" --out "$TMPD/x"
  grep -q "$3" "$TMPD/err" && cli_ok || cli_fail "$1: $(cat "$TMPD/err")"
  expect_no_files "$1: no output" "$TMPD/x"
}
bad "scale_attn_by_inverse_layer_idx" 's/"scale_attn_by_inverse_layer_idx":	false/"scale_attn_by_inverse_layer_idx": true/' \
  "scale_attn_by_inverse_layer_idx must be false"
bad "reorder_and_upcast_attn" 's/"reorder_and_upcast_attn":	false/"reorder_and_upcast_attn": true/' \
  "reorder_and_upcast_attn must be false"
bad "add_cross_attention" 's/"model_type"/"add_cross_attention": true, "model_type"/' "add_cross_attention must be false"
bad "an unknown activation" 's/"gelu_new"/"swish"/' "activation_function = swish is not modelled"
bad "an unknown key" 's/"model_type"/"rotary_dim": 4, "model_type"/' "config key 'rotary_dim'"
bad "n_embd against the shapes" 's/"n_embd":	16/"n_embd": 32/' "n_embd = 32 but the tensors give 16"
bad "layer_norm_epsilon" 's/"layer_norm_epsilon":	1e-05/"layer_norm_epsilon": 1e-06/' "layer_norm_epsilon must be 1e-05"
rm -f "$TMPD/bad/config.json"
expect_user_error "a folder without its config" "$P" --model "$TMPD/bad" --out "$TMPD/x"
cli_summary
