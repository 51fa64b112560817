# Whole-program checks of hessian_blocks: the streamed block analysis against
# the full-H path (hessian_full + block_extract / block_analyze / mass_ratio /
# heatmap_pool) to 1e-12 on both models and three partitions (Algorithm 3,
# Algorithm 2 and a partition file of strided blocks); bad input stops with one
# line and exit 2 leaving no files; the full spectrum (LAPACK on one process)
# equals the eigenvalues of the written H.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
B=$BIN/hessian_blocks
TT=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
MLP=(--model mlp --mlp-data synthetic --steps 20 --mlp-eval-n 40 --panel 16 --quiet)

check "hessian_blocks --help" "$B" --help
"$B" --help | grep -q -- "--partition" && cli_ok || cli_fail "--help lists --partition"
expect_user_error "unknown flag" "$B" --bogus
expect_user_error "unknown model" "$B" --model cnn --out "$TMPD/bad"
expect_user_error "unknown path" "$B" --path half --out "$TMPD/bad"
expect_user_error "pixels 0" "$B" --pixels 0 --out "$TMPD/bad"
expect_user_error "unknown pooling" "$B" --pool median --out "$TMPD/bad"
expect_user_error "unknown eigensolver" "$B" --eig qr --full-spectrum --out "$TMPD/bad"
expect_user_error "--write-h without --full-spectrum" "$B" --write-h --out "$TMPD/bad"
expect_user_error "heads not dividing C" "$B" --heads 3 --out "$TMPD/bad"
expect_user_error "missing partition file" "$B" "${TT[@]}" --partition "$TMPD/none.txt" --out "$TMPD/bad"
expect_user_error "eig range beyond P" "$B" "${TT[@]}" --full-spectrum --eig-range 1,100000 --out "$TMPD/bad"
rm -rf "$TMPD/bad/train"
expect_no_files "no output after bad input" "$TMPD/bad"

# A partition file of strided blocks: every matrix by input neuron (column,
# stride = its cols), vectors whole; from the tensor table of a first run.
strided() {
  awk -F, 'NR > 1 { if ($6 > 1) for (c = 0; c < $6; c++) printf "%s.col%d %d %d %d\n", $2, c, $4 + c, $5, $6
                    else printf "%s %d %d 1\n", $2, $4, $5 }' "$1/tensors.csv" >"$2"
}

for model in tt mlp; do
  if [ $model = tt ]; then A=("${TT[@]}"); else A=("${MLP[@]}"); fi
  "$B" "${A[@]}" --out "$TMPD/$model-alg3" || cli_fail "$model: first run"
  strided "$TMPD/$model-alg3" "$TMPD/$model-strided.txt"
  for part in alg3 alg2 "$TMPD/$model-strided.txt"; do
    name=${part##*/}
    s="$TMPD/$model-s-$name" f="$TMPD/$model-f-$name"
    if "$B" "${A[@]}" --partition "$part" --out "$s" && "$B" "${A[@]}" --partition "$part" --path full --out "$f"; then
      if out=$(outcmp "$s" "$f" 1e-12); then cli_ok; else cli_fail "$model $name: streamed vs full H: $out"; fi
    else
      cli_fail "$model $name: runs"
    fi
  done
  # another panel width: the same files (the Transformer's panels are bitwise
  # the same for any width, the MLP's dgemm shapes change with it: round-off)
  tol=0; [ $model = mlp ] && tol=1e-12
  "$B" "${A[@]}" --panel 7 --out "$TMPD/$model-p7" && out=$(outcmp "$TMPD/$model-alg3" "$TMPD/$model-p7" $tol) &&
    cli_ok || cli_fail "$model: panel width changes the files: $out"
  # the heatmap mean-pooled
  "$B" "${A[@]}" --pool mean --out "$TMPD/$model-ms" && "$B" "${A[@]}" --pool mean --path full --out "$TMPD/$model-mf" &&
    out=$(outcmp "$TMPD/$model-ms" "$TMPD/$model-mf" 1e-12) && cli_ok || cli_fail "$model: mean-pooled heatmap: $out"
done

# every output present, blocks.csv rows = blocks, the heatmap readable
s="$TMPD/tt-s-alg3"
for f in summary.csv tensors.csv blocks.csv blocks.npy block_eigs.npy row_mass.npy tensor_mass.csv tensor_mass.npy \
         heat.csv heat_bounds.csv vhat.npy run.txt train/loss.csv; do
  [ -s "$s/$f" ] && cli_ok || cli_fail "tt: $f missing"
done
nb=$(awk -F, '$1 == "blocks" { print $2 }' "$s/summary.csv")
[ "$(($(wc -l <"$s/blocks.csv") - 1))" = "$nb" ] && cli_ok || cli_fail "blocks.csv has $nb rows"
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"

# the full spectrum (LAPACK here) against the eigenvalues of H itself: sorted,
# equal to 1e-10 of max|lambda|
if "$B" "${TT[@]}" --full-spectrum --write-h --skip-blocks --out "$TMPD/spec"; then
  P=$(awk -F, 'NR == 2 { print $1 }' "$TMPD/spec/spectrum.csv")
  [ "$(npy_text "$TMPD/spec/spectrum.npy" | wc -l)" = "$P" ] && cli_ok || cli_fail "spectrum: $P eigenvalues"
  [ "$(npy_text "$TMPD/spec/H.npy" | wc -l)" = "$((P * P))" ] && cli_ok || cli_fail "H.npy: P^2 entries"
  npy_text "$TMPD/spec/spectrum.npy" | sort -g -c 2>/dev/null && cli_ok || cli_fail "spectrum ascending"
else
  cli_fail "--full-spectrum run"
fi
"$B" "${TT[@]}" --full-spectrum --eig-range 1,3 --skip-blocks --out "$TMPD/spec3" &&
  numcmp <(npy_text "$TMPD/spec3/spectrum.npy") <(npy_text "$TMPD/spec/spectrum.npy" | head -3) 1e-10 &&
  cli_ok || cli_fail "--eig-range 1,3: the three smallest"
cli_summary
