# The Transformer optimizer experiments: bad input, and tiny runs
# that write every file with its header and a claims file with verdicts.
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
expect_user_error "leave_out: --lrs 10" "$BIN/leave_out" --lrs 10
expect_user_error "exp2: --per-block 2" "$BIN/exp2_blockwise_gd" --per-block 2

run() { local d=$1; shift; "$@" --out "$TMPD/$d" --quiet >/dev/null 2>"$TMPD/$d.err" && cli_ok || cli_fail "$d: $(head -c 300 "$TMPD/$d.err")"; }
run tc "$BIN/train_compare" --steps 20 --lrs 1
run av "$BIN/ablation_vstat" --steps 20 --lrs 1
run tr "$BIN/trajectory" --steps 20 --lrs 1
run e2 "$BIN/exp2_blockwise_gd" --steps 20 --lrs 1 --passes 1
run lo "$BIN/leave_out" --steps 20 --lrs 1 --layers 1 --draws 1
header() { [ "$(head -1 "$TMPD/$1")" = "$2" ] && cli_ok || cli_fail "$1 header: $(head -1 "$TMPD/$1")"; }
header tc/eval.csv "step,gd,blockgd,adamw,adam_mini,adam_mini_default"
header tc/grid.csv "method,lr,score_last10pct_train_loss,final_eval_loss,steps_done,best"
header tc/reference.csv "quantity,value"
header av/eval.csv "step,mean,l2,l1,max,min"
header tr/distance.csv "step,adamw_from_init,adam_mini,adamw_other_batches,blockgd,gd,adam_mini_rel,adamw_other_batches_rel,blockgd_rel,gd_rel"
header e2/search.csv "pass,group,first_block,multiplier,score_last10pct_train_loss,accepted"
header lo/gap.csv "tensor,name,role,best_mult,best_score,gap_eval,gap_se,best_final_eval,adam_final_eval"
header lo/eval.csv "step,adam,leave_1_out,leave_2_out,leave_3_out"
for d in tc av tr e2 lo; do
  grep -qE "^(PASS|FAIL): " "$TMPD/$d/claims.txt" && cli_ok || cli_fail "$d: claims.txt has verdicts"
  [ -s "$TMPD/$d/run.txt" ] && cli_ok || cli_fail "$d: run.txt"
  [ -z "$(find "$TMPD/$d" -name '*.tmp.*')" ] && cli_ok || cli_fail "$d: temporaries left"
done
# 20 steps evaluated every step: 21 rows + header
[ "$(wc -l <"$TMPD/tc/eval.csv")" -eq 22 ] && cli_ok || cli_fail "train_compare eval.csv rows"
# the tensor count of a 1-layer model without biases: wte wpe ln_1 q k v proj ln_2 fc proj ln_f lm_head
[ "$(wc -l <"$TMPD/lo/gap.csv")" -eq 13 ] && cli_ok || cli_fail "leave_out gap.csv has one row per tensor"
cli_summary
