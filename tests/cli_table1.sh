# table1_memory: parameter counts against the published ones, and the claim.
source tests/lib_cli.sh
P=$BIN/table1_memory
check "--help" "$P" --help
expect_user_error "bad flag" "$P" --layers 3
check "run" "$P" --out "$TMPD/t" --quiet
expect_claim_stats table1_memory "$TMPD/t/stats.csv"
csv="$TMPD/t/table1.csv"
[ "$(wc -l <"$csv")" -eq 6 ] && cli_ok || cli_fail "5 model rows"
# Published parameter counts: Llama 2-7B 6,738,415,616; Llama 3-8B 8,030,261,248; Llama 2-13B 13,015,864,320.
grep -q "^Llama 2-7B,6738415616," "$csv" && cli_ok || cli_fail "Llama 2-7B P"
grep -q "^Llama 3-8B,8030261248," "$csv" && cli_ok || cli_fail "Llama 3-8B P"
grep -q "^Llama 2-13B,13015864320," "$csv" && cli_ok || cli_fail "Llama 2-13B P"
# GPT-2 XL (tied head): 1,557,611,200
grep -q "^GPT-2 1.5B,1557611200," "$csv" && cli_ok || cli_fail "GPT-2 1.5B P"
grep -q "^PASS: at least 99.9%" "$TMPD/t/claims.txt" && cli_ok || cli_fail "v-removed claim"
# the control: the paper's tiny Transformer (P 2,640). By hand: 108 blocks (8 tokens of wte, wpe, 3 LayerNorm
# gains, 4 + 4 heads, 16 + 16 + 32 + 16 neurons, 8 tokens of lm_head) and 160 bias entries (ln_1, q, k, v,
# attn.proj, ln_2 and mlp.proj 16 each, fc_1 32, ln_f 16) keep a v: 100 (1 - 268/2640) = 89.85% removed
awk -F, '$1 == "table1_memory.control.tiny_v_removed_pct" {v = $2} END {exit !(v != "" && (v - 100 * (1 - 268 / 2640))^2 < 1e-20)}' \
  "$TMPD/t/stats.csv" && cli_ok || cli_fail "control: the tiny Transformer's share, counted by hand"
grep -q "^table1_memory.oneperparam.min_v_removed_pct,0$" "$TMPD/t/stats.csv" && cli_ok || cli_fail "one block per parameter: 0%"
grep -q "^control (the paper's tiny Transformer.*below 99.9%)$" "$TMPD/t/claims.txt" && cli_ok || cli_fail "claims.txt: the control"
expect_user_error "unwritable folder" "$P" --out /proc/x --quiet
cli_summary
