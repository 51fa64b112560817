# Whole-program checks of mlp_hessian: column ranges computed by separate runs
# and merged equal the whole H; bad input exits 2 with one line and no files.
source tests/lib_cli.sh
F=$BIN/fig2
P=$BIN/mlp_hessian
S=$TMPD/fig2
check "--help exits 0" "$P" --help
check "a small fig2 run to start from" "$F" --data synthetic --steps 30 --batch 32 --eval-n 100 --reps 2 --out "$S" --quiet
NP=$(tail -1 "$S/model.csv" | cut -d, -f7)
check "whole H" "$P" --from "$S" --tag end --out "$TMPD/whole" --quiet
check "columns 0..100" "$P" --from "$S" --tag end --cols 0,100 --panel 64 --out "$TMPD/parts" --quiet
check "columns 100..P" "$P" --from "$S" --tag end --cols 100,$NP --panel 7 --out "$TMPD/parts" --quiet
check "merge" "$P" --merge "$TMPD/parts/H_cols_0_100.npy,$TMPD/parts/H_cols_100_$NP.npy" --out "$TMPD/merged" --quiet
check "symmetric path" "$P" --from "$S" --tag end --symmetric --out "$TMPD/sym" --quiet
# the merged H and the symmetric-path H equal the whole H (same engine, other panels: ~1e-16)
cmp_npy() { # max relative difference of two .npy files of equal shape, from their raw bytes
  local a=$1 b=$2
  [ "$(stat -c %s "$a")" = "$(stat -c %s "$b")" ] || { echo "size differs"; return 1; }
  local ha hb
  ha=$(( $(od -An -tu2 -j8 -N2 "$a") + 10 )); hb=$(( $(od -An -tu2 -j8 -N2 "$b") + 10 ))
  paste <(od -An -v -tf8 -w8 -j"$ha" "$a") <(od -An -v -tf8 -w8 -j"$hb" "$b") |
    awk '{d=$1-$2; if (d<0) d=-d; if (d>m) m=d; a=$1<0?-$1:$1; if (a>x) x=a} END {if (m <= 1e-12*x) exit 0; print "max diff", m, "of", x; exit 1}'
}
cmp_npy "$TMPD/whole/H.npy" "$TMPD/merged/H.npy" && cli_ok || cli_fail "merged column ranges == whole H"
cmp_npy "$TMPD/whole/H.npy" "$TMPD/sym/H.npy" && cli_ok || cli_fail "symmetric path == whole H"
[ -s "$TMPD/merged/run.txt" ] && cli_ok || cli_fail "run.txt written"

expect_user_error "no fig2 folder" "$P" --from "$TMPD/none" --out "$TMPD/e"
expect_user_error "range past P" "$P" --from "$S" --cols 10,999999 --out "$TMPD/e"
expect_user_error "empty range" "$P" --from "$S" --cols 10,10 --out "$TMPD/e"
expect_user_error "one number for --cols" "$P" --from "$S" --cols 10 --out "$TMPD/e"
expect_user_error "missing tag" "$P" --from "$S" --tag p042 --out "$TMPD/e"
expect_user_error "merge with a gap" "$P" --merge "$TMPD/parts/H_cols_0_100.npy" --out "$TMPD/e"
expect_user_error "merge overlapping" "$P" --merge "$TMPD/parts/H_cols_0_100.npy,$TMPD/parts/H_cols_0_100.npy,$TMPD/parts/H_cols_100_$NP.npy" --out "$TMPD/e"
cp -r "$S" "$TMPD/bad"
printf "in,width,classes,act,bias,loss,P\n16,8,10,swish,1,xent,226\n" >"$TMPD/bad/model.csv"
expect_user_error "unknown activation in model.csv" "$P" --from "$TMPD/bad" --out "$TMPD/e"
printf "in,width,classes,act,bias,loss,P\n15,8,10,tanh,1,xent,218\n" >"$TMPD/bad/model.csv"
expect_user_error "X_eval does not match model.csv" "$P" --from "$TMPD/bad" --out "$TMPD/e"
expect_no_files "no output after bad input" "$TMPD/e"
cli_summary
