# Whole-program checks of heatmap: a block cut from a saved H equals the same
# block cut from a streamed run's kept blocks and the rows of H itself; names
# (tensor, head, row, col, range, off-diagonal), lines, the PNG; bad input is
# one line, exit 2.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
B=$BIN/hessian_blocks
M=$BIN/heatmap
TT=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
"$B" "${TT[@]}" --partition alg2 --out "$TMPD/run" || cli_fail "streamed run"
"$B" "${TT[@]}" --full-spectrum --write-h --skip-blocks --out "$TMPD/h" || cli_fail "H.npy"
cp "$TMPD/run/tensors.csv" "$TMPD/h/"
check "heatmap --help" "$M" --help
expect_user_error "no block" "$M" --h "$TMPD/h/H.npy"
expect_user_error "no source" "$M" --block wte
expect_user_error "both sources" "$M" --block wte --h "$TMPD/h/H.npy" --run "$TMPD/run"
expect_user_error "unknown tensor" "$M" --block nope --h "$TMPD/h/H.npy" --out "$TMPD/bad"
expect_user_error "head of a tensor without heads" "$M" --block 'wte[head 1]' --h "$TMPD/h/H.npy" --out "$TMPD/bad"
expect_user_error "row out of range" "$M" --block 'wte[row 99]' --h "$TMPD/h/H.npy" --out "$TMPD/bad"
expect_user_error "empty range" "$M" --block 5:5 --h "$TMPD/h/H.npy" --out "$TMPD/bad"
expect_user_error "not kept by the run" "$M" --block 0:100 --run "$TMPD/run" --out "$TMPD/bad"
expect_user_error "not an H of this layout" "$M" --block wte --h "$TMPD/run/row_mass.npy" --tensors "$TMPD/run/tensors.csv" --out "$TMPD/bad"
expect_no_files "no output after bad input" "$TMPD/bad"
for spec in h0.attn.query 'h0.attn.key[head 1]' 'h0.mlp.fc_1[row 3]' 'h0.attn.proj[col 2]' wte; do
  a="$TMPD/a" b="$TMPD/b"
  rm -rf "$a" "$b"
  if "$M" --quiet --block "$spec" --h "$TMPD/h/H.npy" --out "$a" && "$M" --quiet --block "$spec" --run "$TMPD/run" --out "$b"; then
    cmp -s "$a/block.npy" "$b/block.npy" && cli_ok || cli_fail "$spec: saved H and streamed run differ"
  else
    cli_fail "$spec: runs"
  fi
done
# a range across tensors against H's rows, and an off-diagonal block's shape
"$M" --quiet --block 10:40 --h "$TMPD/h/H.npy" --out "$TMPD/r" || cli_fail "range"
P=$(awk -F, '$1 == "P" { print $2 }' "$TMPD/run/summary.csv")
exp=$(npy_text "$TMPD/h/H.npy" | awk -v P="$P" '{ i = int((NR - 1) / P); j = (NR - 1) % P; if (i >= 10 && i < 40 && j >= 10 && j < 40) print }')
[ "$exp" = "$(npy_text "$TMPD/r/block.npy")" ] && cli_ok || cli_fail "range 10:40 is not H[10:40, 10:40]"
[ "$(awk -F, 'NR > 1' "$TMPD/r/bounds_rows_major.csv" | wc -l)" -ge 1 ] && cli_ok || cli_fail "range: no tensor lines"
"$M" --quiet --block 'h0.attn.query[head 0]' --cols 'h0.attn.query[head 1]' --h "$TMPD/h/H.npy" --out "$TMPD/o" &&
  [ "$(npy_text "$TMPD/o/block.npy" | wc -l)" = 1024 ] && cli_ok || cli_fail "off-diagonal head block"
if command -v gnuplot >/dev/null; then
  "$M" --quiet --block h0.attn.query --run "$TMPD/run" --out "$TMPD/p" --png "$TMPD/q.png" && [ -s "$TMPD/q.png" ] &&
    cli_ok || cli_fail "PNG"
  "$M" --quiet --block h0.attn.query --run "$TMPD/run" --pixels 8 --out "$TMPD/p8" --png "$TMPD/q8.png" && [ -s "$TMPD/q8.png" ] &&
    cli_ok || cli_fail "pooled PNG"
fi
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"
cli_summary
