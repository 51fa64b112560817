# MPI checks (make test MPI=1): hessian_blocks under mpirun -np 1, 2, 3
# (oversubscribed) writes the same files as one process — byte-identical with
# full panels, on both models and three partitions; --lower to 1e-12; the
# ScaLAPACK full spectrum equals one process's and H.npy (MPI-IO) is
# byte-identical; test_hdist under 1, 2, 3 ranks (packed streams, ScaLAPACK
# against LAPACK to 1e-10); a failing rank stops the job with one line, exit 2,
# and no temporary or half-written file.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun -q --oversubscribe)
B=$BIN/hessian_blocks
TT=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
MLP=(--model mlp --mlp-data synthetic --steps 20 --mlp-eval-n 40 --panel 16 --quiet)

# test_hdist on 1, 2 and 3 ranks: its checks run on rank 0
for np in 1 2 3; do
  out=$("${MPIRUN[@]}" -np $np "$BUILD/tests/test_hdist" 2>&1)
  if printf '%s\n' "$out" | grep -q '^# counts [0-9]* 0$'; then cli_ok
  else cli_fail "test_hdist on $np ranks: $(printf '%s\n' "$out" | grep -v '^# counts' | head -5)"; fi
done

strided() {
  awk -F, 'NR > 1 { if ($6 > 1) for (c = 0; c < $6; c++) printf "%s.col%d %d %d %d\n", $2, c, $4 + c, $5, $6
                    else printf "%s %d %d 1\n", $2, $4, $5 }' "$1/tensors.csv" >"$2"
}

# one process (no mpirun) against 1, 2, 3 ranks: every file, train/ too
for model in tt mlp; do
  if [ $model = tt ]; then A=("${TT[@]}"); else A=("${MLP[@]}"); fi
  "$B" "${A[@]}" --out "$TMPD/$model-1p" || cli_fail "$model: one process"
  strided "$TMPD/$model-1p" "$TMPD/$model-strided.txt"
  for np in 1 2 3; do
    d="$TMPD/$model-np$np"
    if "${MPIRUN[@]}" -np $np "$B" "${A[@]}" --out "$d"; then
      out=$(outcmp "$TMPD/$model-1p" "$d" 0) && cli_ok || cli_fail "$model: $np ranks vs one process: $out"
    else
      cli_fail "$model: mpirun -np $np"
    fi
  done
  [ $model = tt ] && { out=$(outcmp "$TMPD/tt-1p/train" "$TMPD/tt-np3/train" 0) && cli_ok || cli_fail "train/: $out"; }
  for part in alg2 "$TMPD/$model-strided.txt"; do
    name=${part##*/}
    "$B" "${A[@]}" --partition "$part" --out "$TMPD/$model-1p-$name" &&
      "${MPIRUN[@]}" -np 3 "$B" "${A[@]}" --partition "$part" --out "$TMPD/$model-np3-$name" &&
      out=$(outcmp "$TMPD/$model-1p-$name" "$TMPD/$model-np3-$name" 0) && cli_ok ||
      cli_fail "$model $name: 3 ranks vs one process: $out"
  done
  # the symmetric fast path: row masses are sums of the ranks' chains (round-off)
  "$B" "${A[@]}" --lower --out "$TMPD/$model-1p-lower" &&
    "${MPIRUN[@]}" -np 2 "$B" "${A[@]}" --lower --out "$TMPD/$model-np2-lower" &&
    out=$(outcmp "$TMPD/$model-1p-lower" "$TMPD/$model-np2-lower" 1e-12) && cli_ok ||
    cli_fail "$model --lower: 2 ranks vs one process: $out"
done
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"

# ScaLAPACK: the spectrum over 1, 2, 3 ranks; H.npy by MPI-IO byte for byte
"$B" "${TT[@]}" --full-spectrum --write-h --skip-blocks --out "$TMPD/spec-1p" || cli_fail "full spectrum, one process"
for np in 2 3; do
  d="$TMPD/spec-np$np"
  if "${MPIRUN[@]}" -np $np "$B" "${TT[@]}" --full-spectrum --write-h --skip-blocks --out "$d"; then
    cmp -s "$TMPD/spec-1p/H.npy" "$d/H.npy" && cli_ok || cli_fail "H.npy over $np ranks differs"
    e=$(paste <(npy_text "$TMPD/spec-1p/spectrum.npy") <(npy_text "$d/spectrum.npy") |
        awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; a = $1 < 0 ? -$1 : $1; if (a > s) s = a }
             END { print (m <= 1e-10 * s) ? "ok" : m / s }')
    [ "$e" = ok ] && cli_ok || cli_fail "spectrum over $np ranks: max diff $e of max|lambda|"
  else
    cli_fail "full spectrum over $np ranks"
  fi
done

# a failing rank: rank 1 runs out of memory (ulimit -v) while rank 0 is fine
BIG=(--V 5 --C 32 --heads 2 --M 256 --T 4 --steps 2 --batch 2 --hess-batch 2 --panel 16 --partition alg2 --quiet)
d="$TMPD/fail1"
"${MPIRUN[@]}" -np 1 "$B" "${BIG[@]}" --out "$d" : -np 1 bash -c "ulimit -v 1500000; exec $B ${BIG[*]} --out $d" \
  >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/e")" = 1 ] && grep -q 'rank 1' "$TMPD/e" && cli_ok ||
  cli_fail "rank 1 out of memory: exit $rc, stderr: $(head -c 300 "$TMPD/e")"
[ -z "$(find "$d" -type f ! -path '*/train/*')" ] && cli_ok || cli_fail "rank 1 failed: files left: $(find "$d" -type f | head -3)"
# rank 0 cannot commit an output (a folder in the way): one line, no temporary
d="$TMPD/fail0"
mkdir -p "$d/blocks.npy"
"${MPIRUN[@]}" -np 3 "$B" "${TT[@]}" --out "$d" >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/e")" = 1 ] && cli_ok || cli_fail "rank 0 fails: exit $rc, stderr: $(head -c 300 "$TMPD/e")"
[ -z "$(find "$d" -name '*.tmp.*')" ] && cli_ok || cli_fail "rank 0 failed: temporaries left"
# a bad flag: every rank meets it, one line only
"${MPIRUN[@]}" -np 3 "$B" --bogus >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/e")" = 1 ] && cli_ok || cli_fail "bad flag on 3 ranks: exit $rc, $(wc -l <"$TMPD/e") lines"
"${MPIRUN[@]}" -np 2 "$B" --help >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 0 ] && [ "$(grep -c -- '--partition' "$TMPD/o")" = 1 ] && [ ! -s "$TMPD/e" ] && cli_ok ||
  cli_fail "--help on 2 ranks: exit $rc, printed $(grep -c -- '--partition' "$TMPD/o") times"
cli_summary
