# train_transformer: the optimizer flags' bad input, a short run of each
# optimizer, partition files, and divergence.
source tests/lib_cli.sh
P=$BIN/train_transformer
B="$TMPD/bad"
check "--help" "$P" --help
expect_user_error "unknown optimizer" "$P" --optim sgdd --out "$B"
expect_user_error "unknown statistic" "$P" --optim adam-mini --vstat median --out "$B"
expect_user_error "lr = 0" "$P" --lr 0 --out "$B"
expect_user_error "lr < 0" "$P" --lr -1e-3 --out "$B"
expect_user_error "beta1 = 1" "$P" --beta1 1 --out "$B"
expect_user_error "beta2 > 1" "$P" --beta2 1.5 --out "$B"
expect_user_error "beta1 < 0" "$P" --beta1 -0.1 --out "$B"
expect_user_error "negative weight decay" "$P" --wd -0.5 --out "$B"
expect_user_error "unknown schedule" "$P" --schedule step --out "$B"
expect_user_error "unreadable partition file" "$P" --partition "$TMPD/none.txt" --out "$B"
printf 'all 0 2000\n' >"$TMPD/short.txt"
expect_user_error "partition missing parameters" "$P" --partition "$TMPD/short.txt" --out "$B"
printf 'a 0 2000\nb 1999 641\n' >"$TMPD/repeat.txt"
expect_user_error "partition repeating a parameter" "$P" --partition "$TMPD/repeat.txt" --out "$B"
printf 'a 0 x\n' >"$TMPD/malformed.txt"
expect_user_error "malformed partition file" "$P" --partition "$TMPD/malformed.txt" --out "$B"
expect_user_error "checkpoint fraction 0" "$P" --checkpoints 0,1 --out "$B"
expect_user_error "heads not dividing C" "$P" --heads 3 --out "$B"
expect_user_error "blockgd needs rates" "$P" --optim blockgd --out "$B"
expect_no_files "no output after bad input" "$B"

for opt in gd adam adamw adam-mini; do
  check "$opt runs" "$P" --optim "$opt" --steps 10 --lr 0.01 --out "$TMPD/$opt" --quiet
  [ "$(wc -l <"$TMPD/$opt/loss.csv")" -eq 11 ] && cli_ok || cli_fail "$opt: loss.csv rows"
done
[ -s "$TMPD/adam-mini/step000010_vhat.npy" ] && [ ! -e "$TMPD/gd/step000010_vhat.npy" ] && cli_ok \
  || cli_fail "v-hat checkpoints for Adam-family optimizers only"
printf '# one block: the whole model\nall 0 2640\n' >"$TMPD/one.txt"
check "a partition file" "$P" --optim adam-mini --partition "$TMPD/one.txt" --steps 5 --out "$TMPD/pf" --quiet
check "alg2 and value-whole partitions" "$P" --optim adam-mini --partition alg2 --steps 5 --out "$TMPD/a2" --quiet
"$P" --optim gd --lr 1e9 --steps 100 --out "$TMPD/div" >/dev/null 2>"$TMPD/div.err"; rc=$?
rows=$(($(wc -l <"$TMPD/div/loss.csv") - 1))
[ "$rc" -eq 3 ] && grep -q "diverged at step $rows " "$TMPD/div.err" && cli_ok \
  || cli_fail "divergence: exit $rc, $(cat "$TMPD/div.err"), $rows rows"
# A re-run into a folder clears the previous run's files (its run.txt lists them)
# and keeps everything else; an interrupted re-run leaves only its own files.
R=$TMPD/rerun
check "first run" "$P" --steps 30 --checkpoints 0.5,1 --out "$R" --quiet
grep -q "^file: step000015_params.npy$" "$R/run.txt" && cli_ok || cli_fail "run.txt lists the run's files"
echo mine >"$R/mine.txt"
check "second run, another schedule" "$P" --steps 20 --checkpoints 1 --out "$R" --quiet
[ ! -e "$R/step000015_params.npy" ] && [ ! -e "$R/step000030_vhat.npy" ] && [ -s "$R/step000020_params.npy" ] \
  && [ -s "$R/mine.txt" ] && [ -s "$R/run.txt" ] && cli_ok || cli_fail "re-run: old files gone, other files kept: $(ls "$R" | tr '\n' ' ')"
"$P" --steps 1000000 --checkpoints 0.000002,1 --out "$R" --quiet & pid=$!
for _ in $(seq 600); do [ -e "$R/step000002_params.npy" ] && break; sleep 0.1; done
kill -TERM "$pid"; wait "$pid"
[ ! -e "$R/run.txt" ] && [ ! -e "$R/step000020_params.npy" ] && [ -s "$R/step000002_params.npy" ] \
  && [ -z "$(find "$R" -name '*.tmp.*')" ] && cli_ok \
  || cli_fail "interrupted re-run: only its own files, no run.txt: $(ls "$R" | tr '\n' ' ')"
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"
cli_summary
