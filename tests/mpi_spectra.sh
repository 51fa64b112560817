# MPI checks of spectra (make test MPI=1): the batches of Lanczos runs (SLQ,
# the Lanczos extremes with their Ritz vectors) and the Hutchinson panels
# spread over 1, 2 and 3 ranks (oversubscribed) write byte-identical files to
# one process, on both models and two partitions; the exact method over 2
# ranks (the streamed analysis) too; bad input under mpirun is one line, exit 2.
source tests/lib_cli.sh
source tests/lib_numcmp.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun -q --oversubscribe)
S=$BIN/spectra
TT=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
MLP=(--model mlp --mlp-data synthetic --steps 20 --mlp-eval-n 40 --panel 16 --quiet)
X=(--nev 1 --ritz-vectors --trace-probes 5 --m 12 --nv 3)

for model in tt mlp; do
  if [ $model = tt ]; then A=("${TT[@]}"); else A=("${MLP[@]}"); fi
  for part in alg3 alg2; do
    one="$TMPD/$model-$part-1p"
    "$S" "${A[@]}" "${X[@]}" --partition $part --out "$one" || cli_fail "$model $part: one process"
    for np in 1 2 3; do
      d="$TMPD/$model-$part-np$np"
      if "${MPIRUN[@]}" -np $np "$S" "${A[@]}" "${X[@]}" --partition $part --out "$d"; then
        out=$(outcmp "$one" "$d" 0) && cli_ok || cli_fail "$model $part: $np ranks vs one process: $out"
      else
        cli_fail "$model $part: mpirun -np $np"
      fi
    done
  done
  "$S" "${A[@]}" --method exact --out "$TMPD/$model-exact-1p" &&
    "${MPIRUN[@]}" -np 2 "$S" "${A[@]}" --method exact --out "$TMPD/$model-exact-np2" &&
    out=$(outcmp "$TMPD/$model-exact-1p" "$TMPD/$model-exact-np2" 0) && cli_ok ||
    cli_fail "$model exact: 2 ranks vs one process: $out"
done
[ -z "$(find "$TMPD" -name '*.tmp.*')" ] && cli_ok || cli_fail "temporaries left"
expect_user_error "bad flag under mpirun" "${MPIRUN[@]}" -np 2 "$S" --nv 0 --out "$TMPD/bad"
expect_no_files "no output after bad input under mpirun" "$TMPD/bad"
cli_summary
