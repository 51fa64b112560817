# The optimizer programs on the Llama-style model (--model llama): train_transformer
# trains it and writes a Hugging Face folder the Hessian programs read; each
# experiment of ttexp.h runs on it and writes every statistic the claim table
# reads; a bad --model or Llama size is one line, exit 2, no output.
source tests/lib_cli.sh
T=$BIN/train_transformer
L="--model llama --llama-kv-heads 2 --quiet"

check "train_transformer --model llama, Adam-mini, saved" "$T" $L --steps 60 --optim adam-mini --lr 0.01 \
  --checkpoints 0.5,1 --save-safetensors "$TMPD/hf" --out "$TMPD/t"
awk -F, 'NR > 1 && NR <= 11 {a += $2} NR > 51 {b += $2} END {exit !(b < a)}' "$TMPD/t/loss.csv" && cli_ok ||
  cli_fail "train_transformer --model llama: the last 10 losses are not below the first 10"
[ -f "$TMPD/t/step000030_vhat.npy" ] && [ -f "$TMPD/hf/model.safetensors" ] && [ -f "$TMPD/hf/config.json" ] \
  && grep -q -- "--model llama" "$TMPD/t/run.txt" && cli_ok ||
  cli_fail "train_transformer --model llama: checkpoints, Hugging Face folder or run.txt's command missing"
grep -q '"num_key_value_heads":[[:space:]]*2,' "$TMPD/hf/config.json" && cli_ok ||
  cli_fail "the saved config.json has not the 2 key/value heads it was trained with"
# the trained model's parameters are what the Hugging Face reader gives back: the loss on a batch
check "llama_probe reads the trained folder" "$BIN/llama_probe" --model "$TMPD/hf" --batch 4 --out "$TMPD/p" --quiet
check "hessian_blocks reads the trained folder" "$BIN/hessian_blocks" --model "$TMPD/hf" --out "$TMPD/hb" --quiet
[ -s "$TMPD/hb/blocks.csv" ] && cli_ok || cli_fail "hessian_blocks on the trained Llama wrote no blocks.csv"
# the same steps as a tiny GPT are another model: other losses
"$T" --quiet --steps 60 --optim adam-mini --lr 0.01 --checkpoints 1 --out "$TMPD/g" >/dev/null 2>&1
cmp -s "$TMPD/t/loss.csv" "$TMPD/g/loss.csv" && cli_fail "--model llama trained the tiny GPT" || cli_ok

# every experiment of the harness on the Llama, and the statistics its claims read
run() { local name=$1; shift; check "$name --model llama" "$BIN/$name" $L --held-out 32 --out "$TMPD/$name" "$@"; }
run train_compare --steps 20 --lrs 2
run ablation_vstat --steps 20 --lrs 2
run trajectory --steps 20 --lrs 2
run coarse --steps 20 --lrs 2
run value_split --steps 40 --short 20 --lrs 2
run exp2_blockwise_gd --steps 20 --lrs 2
run leave_out --steps 20 --lrs 2 --layers 1
for e in train_compare ablation_vstat trajectory coarse value_split exp2_blockwise_gd leave_out; do
  expect_claim_stats "$e" "$TMPD/$e/stats.csv"
  grep -q -- "--model llama" "$TMPD/$e/run.txt" && cli_ok || cli_fail "$e: run.txt does not record --model llama"
done

expect_user_error "train_transformer --model gpt" "$T" --model gpt --out "$TMPD/bad1"
expect_no_files "train_transformer: no output after a bad --model" "$TMPD/bad1"
expect_user_error "train_compare --model gpt" "$BIN/train_compare" --model gpt --out "$TMPD/bad2"
expect_user_error "train_compare: kv heads that do not divide the heads" "$BIN/train_compare" --model llama \
  --llama-kv-heads 3 --out "$TMPD/bad3"
expect_no_files "train_compare: no output after a bad Llama size" "$TMPD/bad3"
expect_user_error "train_transformer: --llama-kv-heads without --model llama" "$T" --llama-kv-heads 2 --out "$TMPD/bad5"
expect_user_error "train_transformer --model llama --bias 1" "$T" --model llama --bias 1 --out "$TMPD/bad6"
expect_user_error "train_compare: --llama-eps without --model llama" "$BIN/train_compare" --llama-eps 1e-5 --out "$TMPD/bad7"
expect_no_files "train_compare: no output after a --llama-* flag for the GPT" "$TMPD/bad7"
expect_user_error "train_transformer: an odd Llama head size" "$T" --model llama --llama-head-dim 3 --out "$TMPD/bad4"
# make verdicts ARCH=llama: the experiments that take the Llama, with --model llama; partition_check
# (its claims read the GPT's statistics) and the experiments without a Transformer left out
plan=$(MAKEFLAGS= make --no-print-directory -n verdicts-only ARCH=llama SEEDS=1 RES="$TMPD/rv" 2>&1)
echo "$plan" | grep -q "bin/train_compare .*--model llama" && echo "$plan" | grep -q "bin/fig6 .*--model llama" \
  && echo "$plan" | grep -q "bin/table_kappa .*--model llama" && echo "$plan" | grep -q "bin/hetero .*--model llama" \
  && ! echo "$plan" | grep -q "bin/fig4 \|bin/partition_check " \
  && echo "$plan" | grep -q -- "--skip .*partition_check" && cli_ok ||
  cli_fail "make verdicts ARCH=llama: $(echo "$plan" | grep -o 'bin/[a-z0-9_]* ' | sort -u | tr '\n' ' ')"
cli_summary
