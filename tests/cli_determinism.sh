#!/usr/bin/env bash
# Two runs with one seed write the same bytes (outside run.txt), with
# OPENBLAS_NUM_THREADS 1 and 2: BLAS runs on one thread inside the programs and
# the toolkit's own workers split work in a fixed layout. Every program of
# make figures, at tiny settings.
source "$(dirname "$0")/lib_cli.sh"
TT=(--V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --hess-batch 6)
OPT=(--steps 20 --lrs 2 --held-out 32)
declare -A RUNS=(
  [fig2]="--data synthetic --steps 40 --batch 32 --eval-n 100 --reps 2"
  [fig3]="--steps 200"
  [fig4]="--thetas 2 --points 4 --ds 2,5 --d 5 --kappas 10,100"
  [fig6]="${TT[*]} --reps 3"
  [table_kappa]="${TT[*]} --draws 3"
  [partition_check]="${TT[*]} --model both --mlp-data synthetic --reps 2"
  [block_structure]="${TT[*]} --at-steps 0,2,5"
  [train_compare]="${OPT[*]}"
  [ablation_vstat]="${OPT[*]}"
  [trajectory]="${OPT[*]}"
  [exp2_blockwise_gd]="${OPT[*]} --passes 1 --per-block 0 --train-set 8"
  [leave_out]="${OPT[*]} --layers 1 --draws 2"
  [table1_memory]=""
  [hetero]="${TT[*]} --mlp-data synthetic --mlp-eval-n 50 --mlp-pool 2 --reps 3"
  [vspread]="--V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8 --checkpoints 0.1,0.5,1"
  [mlp_steps]="--pool 8 --steps 12 --at-steps 0,1,2,10,12 --eval-n 60"
  [coarse]="${OPT[*]} --layers 1"
  [value_split]="--steps 40 --short 20 --lrs 2 --held-out 32"
)
for prog in "${!RUNS[@]}"; do
  for t in 1 2; do
    OPENBLAS_NUM_THREADS=$t timeout -k 5 300 "$BIN/$prog" ${RUNS[$prog]} --out "$TMPD/$prog.$t" --quiet >/dev/null 2>"$TMPD/$prog.$t.err" \
      || cli_fail "$prog with $t thread(s) failed: $(head -c 200 "$TMPD/$prog.$t.err")"
  done
  if diff -rq -x run.txt "$TMPD/$prog.1" "$TMPD/$prog.2" >"$TMPD/diff" 2>&1; then cli_ok
  else cli_fail "$prog: 1 and 2 threads differ: $(head -3 "$TMPD/diff" | tr '\n' ' ')"; fi
done
cli_summary
