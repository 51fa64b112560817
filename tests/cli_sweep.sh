# make sweep's program: a grid of flag values x seeds of any program, every statistic
# in one table, one statistic over seeds per grid point (tools/sweep.c).
source "$(dirname "$0")/lib_cli.sh"
P=$BIN/sweep
check "sweep --help exits 0" "$P" --help
"$P" --help | grep -q -- "--vary" && cli_ok || cli_fail "sweep --help lists --vary"
F4="--panels a --ds 3 --thetas 2 --points 3 --rs 5"
for bad in "--prog fig4 --out $TMPD/b" "--prog fig4 --vary --kappa --out $TMPD/b" "--prog Fig4 --vary '--kappa 2' --out $TMPD/b" \
           "--prog nosuch --vary --kappa_2 --out $TMPD/b" "--prog fig4 --vary --kappa_2 --seeds 0 --out $TMPD/b"; do
  eval "set -- $bad"
  set -- "${@//_/ }"
  expect_user_error "sweep $bad" "$P" "$@"
done
expect_user_error "sweep: a quote in a value" "$P" --prog fig4 --vary "--kappa 2 'x'" --out "$TMPD/b"
expect_user_error "sweep: a shell character in --flags" "$P" --prog fig4 --vary "--kappa 2" --flags '--ds 3;rm' --out "$TMPD/b"
expect_user_error "sweep: --out in --flags" "$P" --prog fig4 --vary "--kappa 2" --flags "--out x" --out "$TMPD/b"
expect_user_error "sweep: a flag given twice" "$P" --prog fig4 --vary "--kappa 2; --kappa 3" --out "$TMPD/b"
# a 2 x 2 grid over 2 seeds
S=$TMPD/s
check "sweep: a 2 x 2 grid, 2 seeds" "$P" --prog fig4 --vary "--kappa 10 500; --d 4 6" --flags "$F4 --panels ab" \
  --base "--seed SEED --threads 1" --seeds 2 --seed0 3 --stat fig4.tau.share_level.a_median --out "$S" --quiet
[ "$(ls -d "$S"/runs/*/seed* | grep -c 'seed[34]$')" -eq 8 ] && cli_ok || cli_fail "one run folder per grid point and seed"
[ -s "$S/runs/kappa=500,d=6/seed4/run.txt" ] && cli_ok || cli_fail "runs named flag=value,.../seed<s>"
grep -q -- "--seed 4 .*--kappa 500 --d 6 --out" "$S/runs/kappa=500,d=6/seed4/run.txt" && cli_ok || cli_fail "the run's flags: base (seed), flags, grid point"
[ "$(head -1 "$S/sweep.csv" | cut -d, -f1-4)" = "kappa,d,seed,fig4.share_falling.a_median" ] && cli_ok || cli_fail "sweep.csv header"
[ "$(wc -l <"$S/sweep.csv")" -eq 9 ] && cli_ok || cli_fail "sweep.csv: one row per run"
# every value in sweep.csv is the run's own stats.csv value
col=$(head -1 "$S/sweep.csv" | tr , '\n' | grep -nx "fig4.tau.share_level.a_median" | cut -d: -f1)
want=$(awk -F, '$1 == "fig4.tau.share_level.a_median" {print $2}' "$S/runs/kappa=10,d=4/seed3/stats.csv")
got=$(awk -F, -v c="$col" '$1 == 10 && $2 == 4 && $3 == 3 {print $c}' "$S/sweep.csv")
[ -n "$want" ] && [ "$want" = "$got" ] && cli_ok || cli_fail "sweep.csv holds the run's value ($got, want $want)"
# band.csv: the mean over the two seeds of each grid point, series by the second flag
m=$(awk -F, -v c="$col" '$1 == 500 && $2 == 6 {s += $c; n++} END {printf "%.6f", s / n}' "$S/sweep.csv")
b=$(awk -F, '$1 == "d=6" && $2 == 500 {printf "%.6f", $4}' "$S/band.csv")
[ "$m" = "$b" ] && [ "$(awk -F, '$1 == "d=6" && $2 == 500 {print $3}' "$S/band.csv")" = 2 ] && cli_ok || cli_fail "band.csv mean over seeds ($b, want $m)"
grep -q "^# fig4.tau.share_level.a_median over seeds 3..4 against --kappa" "$S/band.csv" && cli_ok || cli_fail "band.csv names its statistic"
# a second call reuses the runs; more values add runs; another program's flags are refused
touch -d '2000-01-01' "$S/runs/kappa=10,d=4/seed3/run.txt"
check "sweep: again" "$P" --prog fig4 --vary "--kappa 10 500 1000; --d 4 6" --flags "$F4 --panels ab" \
  --base "--seed SEED --threads 1" --seeds 2 --seed0 3 --out "$S" --quiet
[ "$(stat -c %Y "$S/runs/kappa=10,d=4/seed3/run.txt")" -lt 1000000000 ] && cli_ok || cli_fail "a finished run is reused"
[ "$(wc -l <"$S/sweep.csv")" -eq 13 ] && cli_ok || cli_fail "more values: more rows"
expect_user_error "sweep: another sweep's folder" "$P" --prog fig4 --vary "--kappa 10" --flags "--panels b" --out "$S"
expect_user_error "sweep: --stat nobody wrote" "$P" --prog fig4 --vary "--kappa 10 500; --d 4 6" --flags "$F4 --panels ab" \
  --base "--seed SEED --threads 1" --seeds 2 --seed0 3 --stat no.such --out "$S" --collect-only
# a failing run: one line naming its folder and the program's own message
expect_user_error "sweep: a run fails" "$P" --prog fig4 --vary "--kappa 10 abc" --flags "$F4" --out "$TMPD/f" --quiet
grep -q "kappa=abc/seed1 failed: fig4: --kappa" "$TMPD/err" && cli_ok || cli_fail "the failed run named: $(cat "$TMPD/err")"
# --tasks: the missing runs as shell lines for run_tasks, nothing run
check "sweep --tasks" "$P" --prog fig4 --vary "--kappa 10 20" --flags "$F4" --seeds 2 --out "$TMPD/t" --tasks "$TMPD/t.txt" --quiet
[ "$(wc -l <"$TMPD/t.txt")" -eq 4 ] && [ ! -e "$TMPD/t/runs/kappa=10/seed1/run.txt" ] && cli_ok || cli_fail "--tasks lists 4 runs, runs none"
check "run_tasks on the list" "$BIN/run_tasks" --quiet "$TMPD/t.txt"
check "sweep --collect-only" "$P" --prog fig4 --vary "--kappa 10 20" --flags "$F4" --seeds 2 --out "$TMPD/t" --collect-only --quiet
[ "$(wc -l <"$TMPD/t/sweep.csv")" -eq 5 ] && cli_ok || cli_fail "collected after run_tasks"
cli_summary
