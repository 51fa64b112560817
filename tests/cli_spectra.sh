# Whole-program checks of spectra and spectra_check: --help, bad input stops
# with one line and exit 2 leaving no files; SLQ with m >= every block size
# gives the exact extremes and the exact trace of the --method exact run
# (1e-10) on both models; the Lanczos extremes with the residual test match the
# exact ones; two runs with one seed are byte-identical, also with another
# thread count and panel width (the Transformer's hvp of a direction does not
# depend on its panel), another --probe-seed is not; --blocks and a partition
# file that covers part of the model analyse those blocks only; spectra_check
# prints its headline and its errors are those of its own exact spectra.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
S=$BIN/spectra
C=$BIN/spectra_check
TT=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
MLP=(--model mlp --mlp-data synthetic --steps 20 --mlp-eval-n 40 --panel 16 --quiet)

check "spectra --help" "$S" --help
"$S" --help | grep -q -- "--nv" && cli_ok || cli_fail "--help lists --nv"
check "spectra_check --help" "$C" --help
expect_user_error "unknown flag" "$S" --bogus
expect_user_error "unknown method" "$S" --method lanczos --out "$TMPD/bad"
expect_user_error "nv 0" "$S" --nv 0 --out "$TMPD/bad"
expect_user_error "m 0" "$S" --m 0 --out "$TMPD/bad"
expect_user_error "bad grid" "$S" --grid cubic --out "$TMPD/bad"
expect_user_error "ritz vectors without nev" "$S" --ritz-vectors --out "$TMPD/bad"
expect_user_error "exact with nev" "$S" --method exact --nev 1 --out "$TMPD/bad"
expect_user_error "grid-hi below grid-lo" "$S" --grid-lo 1 --grid-hi 0 --out "$TMPD/bad"
expect_user_error "unknown model" "$S" --model cnn --out "$TMPD/bad"
expect_user_error "missing partition file" "$S" "${TT[@]}" --partition "$TMPD/none.txt" --out "$TMPD/bad"
rm -rf "$TMPD/bad/train"
expect_no_files "no output after bad input" "$TMPD/bad"
expect_user_error "check: unknown flag" "$C" --bogus
expect_user_error "check: unknown model" "$C" --models tt,cnn --out "$TMPD/badc"
expect_user_error "check: unknown partition" "$C" --partitions alg3,rows --out "$TMPD/badc"
expect_user_error "check: default not in the grid" "$C" --m 5,10 --default-m 20 --out "$TMPD/badc"
expect_user_error "check: checkpoint beyond 1" "$C" --checkpoints 0,2 --out "$TMPD/badc"
expect_no_files "check: no output after bad input" "$TMPD/badc"

# column $2 of blocks.csv (header names), one value per line
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1/blocks.csv"; }
# near EXACT_DIR RUN_DIR EXACT_COL RUN_COL TOL: |a - b| <= TOL x the block's exact |lambda|max, every
# block (floored at 1e-10 lambda_ref: the Transformer's key bias has no curvature beyond round-off)
near() {
  local ref; ref=$(awk -F, '$1 == "lambda_ref" { print $2 }' "$1/summary.csv")
  paste -d, <(col "$1" "$3") <(col "$2" "$4") <(col "$1" abs_lambda_max) |
    awk -F, -v t="$5" -v r="$ref" '{ d = $1 - $2; if (d < 0) d = -d; s = $3 > 1e-10 * r ? $3 : 1e-10 * r
                                     if (!(d <= t * s)) { bad++; print "block " NR ": " $1 " vs " $2 } }
                                   END { exit bad > 0 }'
}

for model in tt mlp; do
  if [ $model = tt ]; then A=("${TT[@]}"); else A=("${MLP[@]}"); fi
  ex="$TMPD/$model-exact" sl="$TMPD/$model-slq"
  # m = 200 >= every Algorithm 3 block: Lanczos spans each block, the extremes are exact (to
  # TOL of the block's exact |lambda|max); Hutchinson's trace (200 probes of its own) is not
  # exact: within 5 of its standard errors of the exact trace in every block
  if "$S" "${A[@]}" --method exact --out "$ex" &&
     "$S" "${A[@]}" --m 200 --nv 3 --nev 1 --ritz-vectors --trace-probes 200 --out "$sl"; then
    for c in lambda_max lambda_min; do
      near "$ex" "$sl" $c $c 1e-10 && cli_ok || cli_fail "$model: SLQ $c at m >= n vs exact"
      near "$ex" "$sl" $c lanczos_${c#lambda_} 1e-8 && cli_ok || cli_fail "$model: Lanczos ${c#lambda_} vs exact"
    done
    ref=$(awk -F, '$1 == "lambda_ref" { print $2 }' "$ex/summary.csv")
    paste -d, <(col "$ex" trace) <(col "$sl" trace) <(col "$sl" trace_se) |
      awk -F, -v r="$ref" '{ d = $1 - $2; if (d < 0) d = -d; if (d > 5 * $3 + 1e-10 * r) { bad++; print NR ": " $0 } }
                           END { exit bad > 0 }' && cli_ok ||
      cli_fail "$model: Hutchinson trace vs exact beyond 5 se"
    for f in blocks.csv types.csv summary.csv density.npy grid.npy density_types.csv nodes.npy weights.npy slq_alpha.npy \
             slq_beta.npy slq_count.npy lanczos.csv ritz_vectors.npy run.txt; do
      [ -s "$sl/$f" ] && cli_ok || cli_fail "$model: $f missing"
    done
  else
    cli_fail "$model: runs"
  fi
done

# determinism: the same seed twice, with another thread count and panel width: byte-identical (both models);
# another probe seed: other probes
"$S" "${TT[@]}" --out "$TMPD/d1" && OPENBLAS_NUM_THREADS=1 "$S" "${TT[@]}" --panel 5 --out "$TMPD/d2" &&
  out=$(outcmp "$TMPD/d1" "$TMPD/d2" 0) && cli_ok || cli_fail "one seed, two runs differ: $out"
# (a Hessian batch of 40 sequences: the chunks of the R-pass once depended on the panel and differed here)
"$S" "${TT[@]}" --hess-batch 40 --out "$TMPD/h1" && OPENBLAS_NUM_THREADS=1 "$S" "${TT[@]}" --hess-batch 40 --panel 5 \
  --out "$TMPD/h2" && out=$(outcmp "$TMPD/h1" "$TMPD/h2" 0) && cli_ok || cli_fail "40 sequences: two runs differ: $out"
"$S" "${MLP[@]}" --out "$TMPD/m1" && OPENBLAS_NUM_THREADS=1 "$S" "${MLP[@]}" --panel 5 --out "$TMPD/m2" &&
  out=$(outcmp "$TMPD/m1" "$TMPD/m2" 0) && cli_ok || cli_fail "MLP: one seed, two runs differ: $out"
"$S" "${TT[@]}" --probe-seed 2 --out "$TMPD/d3" && ! cmp -s "$TMPD/d1/slq_alpha.npy" "$TMPD/d3/slq_alpha.npy" &&
  cli_ok || cli_fail "--probe-seed 2 gives the same probes"
# the same blocks sampled per type: every type keeps at most 2 blocks, the first and the last
"$S" "${TT[@]}" --max-per-type 2 --out "$TMPD/s2" &&
  awk -F, 'NR > 1 { n[$4]++ } END { for (t in n) if (n[t] > 2) bad++; exit bad > 0 }' "$TMPD/s2/blocks.csv" &&
  grep -q '^blocks,' "$TMPD/s2/summary.csv" && cli_ok || cli_fail "--max-per-type 2"
# --blocks: only the blocks it names, in the partition's order; a partition file of the same blocks (the rest
# of the model in no block) gives the same spectra, byte for byte; a pattern that names no block, and --method
# exact on a file that leaves parameters out, stop with one line (the training run's train/ aside, no output)
"$S" "${TT[@]}" --blocks 'h*.attn.query[head *],wte[row 1]' --out "$TMPD/sel" &&
  [ "$(col "$TMPD/sel" name | tr '\n' ' ')" = "wte[row 1] h0.attn.query[head 0] h0.attn.query[head 1] " ] &&
  cli_ok || cli_fail "--blocks selects: $(col "$TMPD/sel" name | tr '\n' ' ')"
awk -F, 'NR > 1 { n = $2; gsub(/ /, "_", n); print n, $6, $7, $8 }' "$TMPD/sel/blocks.csv" >"$TMPD/sel.txt"
"$S" "${TT[@]}" --partition "$TMPD/sel.txt" --out "$TMPD/self" &&
  cmp -s "$TMPD/sel/slq_alpha.npy" "$TMPD/self/slq_alpha.npy" && cmp -s "$TMPD/sel/slq_beta.npy" "$TMPD/self/slq_beta.npy" &&
  [ "$(awk -F, '$1 == "blocks" { print $2 }' "$TMPD/self/summary.csv")" = 3 ] &&
  cli_ok || cli_fail "a partition file of the selected blocks: other spectra"
expect_user_error "a pattern that names no block" "$S" "${TT[@]}" --blocks 'h9.*' --out "$TMPD/bad2"
grep -q "block pattern 'h9.\*' matches no block" "$TMPD/err" && cli_ok || cli_fail "no block named: $(cat "$TMPD/err")"
expect_user_error "exact on a partition file that leaves parameters out" "$S" "${TT[@]}" --method exact \
  --partition "$TMPD/sel.txt" --out "$TMPD/bad3"
rm -rf "$TMPD/bad2/train" "$TMPD/bad3/train"
expect_no_files "no output after a bad --blocks or partition" "$TMPD/bad2"
expect_no_files "no output after a bad --blocks or partition" "$TMPD/bad3"
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"

# spectra_check on the tiny models: the headline; at m >= n SLQ's lambda max and the Lanczos extremes
# are exact for Algorithm 3 (not SLQ's lambda min: at initialisation a Rademacher probe of an output
# row is orthogonal to its null vector (1, ..., 1) with probability 27% at n = 8; docs/spectra.md)
if out=$("$C" "${TT[@]}" --mlp-data synthetic --mlp-width 4 --mlp-eval-n 40 --checkpoints 0,1 --m 5,200 --nv 1,2 \
           --default-m 200 --default-nv 2 --out "$TMPD/chk"); then
  printf '%s\n' "$out" | grep -q '^tt  *alg3' && printf '%s\n' "$out" | grep -q '^mlp  *whole' && cli_ok ||
    cli_fail "check: headline rows missing: $(printf '%s\n' "$out" | head -5)"
  awk -F, '$3 == "alg3" && (($7 == "slq" && $8 == 200 && $14 > 1e-10) || ($7 == "lanczos" && ($14 > 1e-8 || $15 > 1e-8))) {
             bad++ } END { exit bad > 0 }' "$TMPD/chk/errors.csv" && cli_ok || cli_fail "check: alg3 extremes at m >= n not exact"
  for f in errors.csv table.csv headline.csv misleads.csv curves_alg3.csv curves_alg2.csv curves_whole.csv run.txt; do
    [ -s "$TMPD/chk/$f" ] && cli_ok || cli_fail "check: $f missing"
  done
else
  cli_fail "spectra_check runs"
fi
cli_summary
