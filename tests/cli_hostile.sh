# Whole-program checks against hostile input: empty paths, signals, file-size
# limits, lying headers, odd partition files, out-of-range flags. Every case is
# bounded in time (timeout or a watchdog): a hang is a failure, never a stall.
source tests/lib_cli.sh
ulimit -c 0   # SIGQUIT's default action dumps core: none here
TT=$BIN/train_transformer

# ---- 1. --out "" -----------------------------------------------------------------
for p in demo_spectrum fig3 fig4 table_kappa mlp_hessian; do
  expect_user_error "$p --out ''" timeout 20 "$BIN/$p" --quiet --out ""
done
grep -q "empty folder name" "$TMPD/err" && cli_ok || cli_fail "--out '' names the empty folder: $(cat "$TMPD/err")"

# ---- 2. signals and file-size limits ------------------------------------------------
# A file-size limit: SIGXFSZ is ignored, the write fails with EFBIG -> one line,
# exit 2, "File too large", no temporary left.
for p in demo_spectrum fig3; do
  d=$TMPD/fsize_$p
  expect_user_error "$p under ulimit -f 8" bash -c "ulimit -f 8; exec timeout 20 '$BIN/$p' --quiet --out '$d'"
  grep -q "File too large" "$TMPD/err" && cli_ok || cli_fail "$p under ulimit -f 8 says File too large: $(cat "$TMPD/err")"
  [ -z "$(find "$d" -name '*.tmp*')" ] && cli_ok || cli_fail "$p under ulimit -f 8 left $(find "$d" -name '*.tmp*')"
done

# run_then_signal (lib_cli.sh): each cleanup signal mid-run, and SIGHUP ignored by the parent
for s in HUP QUIT INT TERM; do run_then_signal $s; done
run_then_signal HUP ignore

# write_npy FILE DICT [DATA_BYTES]: a .npy 1.0 file with the given header dict and zero data.
write_npy() {
  local f=$1 dict=$2 n=${3:-0} len
  len=${#dict}
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
    printf '%s' "$dict"; head -c "$n" /dev/zero; } >"$f"
}

# ---- 6. mlp_hessian: model.csv's P, an empty X_eval, --merge in any order -------------
MH=$BIN/mlp_hessian
S=$TMPD/fig2
check "a small fig2 run" timeout 60 "$BIN/fig2" --data synthetic --steps 30 --batch 32 --eval-n 100 --reps 2 --out "$S" --quiet
NP=$(tail -1 "$S/model.csv" | cut -d, -f7)
check "columns 0..100" timeout 60 "$MH" --from "$S" --cols 0,100 --out "$TMPD/parts" --quiet
check "columns 100..P" timeout 60 "$MH" --from "$S" --cols 100,$NP --out "$TMPD/parts" --quiet
[ "$(cat "$TMPD/parts/H_cols_100_$NP.npy.range")" = "columns 100 $NP of $NP" ] && cli_ok || cli_fail "--cols writes a .range file"
A=$TMPD/parts/H_cols_0_100.npy B=$TMPD/parts/H_cols_100_$NP.npy
check "merge in order" timeout 60 "$MH" --merge "$A,$B" --out "$TMPD/m1" --quiet
check "merge out of order" timeout 60 "$MH" --merge "$B,$A" --out "$TMPD/m2" --quiet
cmp -s "$TMPD/m1/H.npy" "$TMPD/m2/H.npy" && cli_ok || cli_fail "out-of-order merge == in-order merge"
cp "$A" "$TMPD/parts/first.npy"
expect_user_error "merge of a part with no recorded range" "$MH" --merge "$TMPD/parts/first.npy,$B" --out "$TMPD/e6"
mkdir -p "$TMPD/lie" && cp "$A" "$TMPD/lie/H_cols_0_99.npy" && cp "$B" "$TMPD/lie/H_cols_99_$NP.npy"
expect_user_error "merge of a part whose name lies about its rows" "$MH" --merge "$TMPD/lie/H_cols_99_$NP.npy,$TMPD/lie/H_cols_0_99.npy" --out "$TMPD/e6"
grep -q "holds 100 rows but its range 0..99 needs 99" "$TMPD/err" && cli_ok || cli_fail "row count named: $(cat "$TMPD/err")"
expect_user_error "merge with the first part missing" "$MH" --merge "$B" --out "$TMPD/e6"
grep -q "columns 0..100 are in no file" "$TMPD/err" && cli_ok || cli_fail "gap named: $(cat "$TMPD/err")"
expect_user_error "merge with a part twice" "$MH" --merge "$B,$A,$A" --out "$TMPD/e6"
cp -r "$S" "$TMPD/badP"
printf "in,width,classes,act,bias,loss,P\n16,8,10,tanh,1,xent,227\n" >"$TMPD/badP/model.csv"
expect_user_error "model.csv P does not match its sizes" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
grep -q "P = 227 but .* give P = 226" "$TMPD/err" && cli_ok || cli_fail "both Ps named: $(cat "$TMPD/err")"
printf "in,width,classes,act,bias,loss,P\n16,8,10,tanh,1,xent,226 junk\n" >"$TMPD/badP/model.csv"
expect_user_error "model.csv row with junk after P" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
printf "in,width,classes,act,bias,loss,P\n16,8,10,tanh,1,xent,-226\n" >"$TMPD/badP/model.csv"
expect_user_error "model.csv negative P" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
cp "$S/model.csv" "$TMPD/badP/model.csv"
write_npy "$TMPD/badP/X_eval.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 16), }"
write_npy "$TMPD/badP/y_eval.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }"
expect_user_error "an empty X_eval" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
write_npy "$TMPD/badP/X_eval.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 16), }" 128
expect_user_error "X_eval whose header claims 10^12 rows" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
rm "$TMPD/badP/X_eval.npy" && mkdir "$TMPD/badP/X_eval.npy"
expect_user_error "X_eval.npy is a folder" "$MH" --from "$TMPD/badP" --out "$TMPD/e6"
grep -q "is a folder, expected a file" "$TMPD/err" && cli_ok || cli_fail "folder named: $(cat "$TMPD/err")"
expect_no_files "no output after bad mlp_hessian input" "$TMPD/e6"

# ---- 3, 4, 7. data files: lying headers, trailing bytes, empty sets, folders -------------
F2=$BIN/fig2
D=$TMPD/fm
mkdir -p "$D"
idx_header() { printf "\\x00\\x00\\x08\\x$1"; printf "\\x$2\\x$3\\x$4\\x$5"; }
mk_images() { { idx_header 03 00 00 00 04; printf "\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x04"; for i in $(seq 0 63); do printf "\\x$(printf %02x $((i * 37 % 251)))"; done; } >"$1"; }
mk_labels() { { idx_header 01 00 00 00 04; printf "\\x01\\x02\\x03\\x04"; } >"$1"; }
reset_fm() { mk_images "$D/train-images-idx3-ubyte"; mk_images "$D/t10k-images-idx3-ubyte"
             mk_labels "$D/train-labels-idx1-ubyte"; mk_labels "$D/t10k-labels-idx1-ubyte"; }
FMARGS=(--data-dir "$D" --pool 1 --eval-n 4 --batch 2 --steps 2 --reps 2 --quiet)
reset_fm
check "the tiny IDX folder is readable" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/fmok"
{ idx_header 03 ff ff ff ff; printf "\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x04"; head -c 64 /dev/zero; } >"$D/train-images-idx3-ubyte"
expect_user_error "IDX count 0xFFFFFFFF" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/e3"
{ idx_header 03 7f ff ff ff; printf "\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x04"; head -c 64 /dev/zero; } | gzip >"$D/train-images-idx3-ubyte.gz"
rm "$D/train-images-idx3-ubyte"
expect_user_error "gzip IDX claiming 2^31-1 images over 64 bytes" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/e3"
grep -q "truncated: expected 34359738352 data bytes, found 64" "$TMPD/err" && cli_ok || cli_fail "both sizes named: $(cat "$TMPD/err")"
rm "$D/train-images-idx3-ubyte.gz"
reset_fm
printf "\\x05" >>"$D/t10k-labels-idx1-ubyte"
expect_user_error "IDX labels with a trailing byte" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/e3"
grep -q "trailing bytes" "$TMPD/err" && cli_ok || cli_fail "trailing bytes named: $(cat "$TMPD/err")"
reset_fm
{ idx_header 03 00 00 00 00; printf "\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x04"; } >"$D/t10k-images-idx3-ubyte"
{ idx_header 01 00 00 00 00; } >"$D/t10k-labels-idx1-ubyte"
expect_user_error "an IDX test set of 0 images" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/e3"
reset_fm
expect_user_error "fig2 --eval-n 0" timeout 20 "$F2" "${FMARGS[@]}" --eval-n 0 --out "$TMPD/e3"
rm "$D/train-labels-idx1-ubyte" && mkdir "$D/train-labels-idx1-ubyte"
expect_user_error "an IDX file that is a folder" timeout 20 "$F2" "${FMARGS[@]}" --out "$TMPD/e3"
grep -q "is a folder, expected a file" "$TMPD/err" && cli_ok || cli_fail "folder named: $(cat "$TMPD/err")"
mkdir -p "$TMPD/no_text/sub"
expect_user_error "train_transformer --text FOLDER without text files" timeout 20 "$TT" --text "$TMPD/no_text" --steps 2 --out "$TMPD/e3"
grep -q "no_text holds no text file" "$TMPD/err" && cli_ok || cli_fail "folder named: $(cat "$TMPD/err")"
expect_user_error "train_transformer --partition FOLDER" timeout 20 "$TT" --partition "$TMPD" --steps 2 --out "$TMPD/e3"
grep -q "is a folder, expected a file" "$TMPD/err" && cli_ok || cli_fail "folder named: $(cat "$TMPD/err")"
printf 'all 0 2640 1 junk\n' >"$TMPD/part.txt"
expect_user_error "partition file with an extra field" timeout 20 "$TT" --partition "$TMPD/part.txt" --steps 2 --out "$TMPD/e3"
grep -q "part.txt:1: extra field 'junk'" "$TMPD/err" && cli_ok || cli_fail "line and field named: $(cat "$TMPD/err")"
printf 'all 0 2640\n' >"$TMPD/part.txt"
check "a one-block partition file" timeout 20 "$TT" --partition "$TMPD/part.txt" --steps 2 --out "$TMPD/partok" --quiet
expect_no_files "no output after bad data files" "$TMPD/e3"

# ---- 7. the command-line parser -----------------------------------------------------------
expect_user_error "fig4 --quiet -xy" "$BIN/fig4" --quiet -xy
grep -q "unknown option -x " "$TMPD/err" && cli_ok || cli_fail "names -x, not --quiet: $(cat "$TMPD/err")"
expect_user_error "fig4 --quiet=1" "$BIN/fig4" --quiet=1
grep -q "option --quiet takes no value" "$TMPD/err" && cli_ok || cli_fail "--quiet=1: $(cat "$TMPD/err")"
check "fig3 --eps 1e-320 (a subnormal number)" timeout 20 "$BIN/fig3" --eps 1e-320 --quiet --out "$TMPD/sub"
expect_user_error "fig3 --eps 1e400" "$BIN/fig3" --eps 1e400 --out "$TMPD/e7"
expect_user_error "fig3 --eps 1e-400 (underflows to 0)" "$BIN/fig3" --eps 1e-400 --out "$TMPD/e7"

# ---- 8. out-of-range flag values --------------------------------------------------------
for f in standardize bias save-h; do
  for v in -1 2; do
    expect_user_error "fig2 --$f $v" "$F2" --data synthetic --$f $v --out "$TMPD/e8"
    grep -q -- "--$f must be 0 or 1 (got $v)" "$TMPD/err" && cli_ok || cli_fail "fig2 --$f $v: $(cat "$TMPD/err")"
  done
done
expect_user_error "exp2 --per-block -2" "$BIN/exp2_blockwise_gd" --per-block -2 --out "$TMPD/e8"
grep -q -- "--per-block must be -1, 0 or 1 (got -2)" "$TMPD/err" && cli_ok || cli_fail "exp2 --per-block -2: $(cat "$TMPD/err")"
for k in "--kappa 1e300" "--kappa 1e13" "--kappas 10,1e15" "--kappa 0.5"; do
  expect_user_error "fig4 $k" "$BIN/fig4" $k --out "$TMPD/e8"
  grep -q -- "must be in \[1, 1e12\]" "$TMPD/err" && cli_ok || cli_fail "fig4 $k: $(cat "$TMPD/err")"
done
check "fig4 --kappa 1e12 is accepted" timeout 20 "$BIN/fig4" --kappa 1e12 --panels a --ds 2 --thetas 2 --points 3 --rs 5 --quiet --out "$TMPD/k12"
! grep -qi nan "$TMPD/k12/fig4a.csv" && cli_ok || cli_fail "fig4 --kappa 1e12 gives finite r"
expect_no_files "no output after out-of-range flags" "$TMPD/e8"

cli_summary
