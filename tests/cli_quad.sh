# Whole-program checks of fig4 (and fig3 once it is built): bad input -> one line,
# exit 2, no files; a small run writes every output.
source tests/lib_cli.sh
P=$BIN/fig4
check "fig4 --help exits 0" "$P" --help
"$P" --help | grep -q -- "--scale" && cli_ok || cli_fail "fig4 --help lists --scale"
for bad in "--ds 1,5" "--ds 0" "--d 1 --panels b" "--kappa 0.5" "--kappas 10,0.9" "--kappa nan" \
           "--thetas -3" "--points -1" "--thetas abc" "--points 1e3" "--rs 1" "--rs x" \
           "--scale huge" "--panels c" "--threads 0" "--seed -1" "--bogus" "--ds 2,x"; do
  expect_user_error "fig4 $bad" "$P" $bad --out "$TMPD/bad"
done
expect_no_files "fig4: no output after bad input" "$TMPD/bad"
[ ! -e "$TMPD/bad" ] && cli_ok || cli_fail "fig4: bad input creates no folder"
expect_user_error "fig4 unwritable output folder" "$P" --thetas 1 --points 1 --rs 2 --ds 2 --kappas 10 --out /proc/nope
mkdir -p "$TMPD/ro" && chmod 555 "$TMPD/ro"
if [ "$(id -u)" != 0 ]; then  # root writes anywhere: the /proc case above covers it
  expect_user_error "fig4 read-only output folder" "$P" --thetas 1 --points 1 --rs 2 --out "$TMPD/ro"
  expect_no_files "fig4: nothing in a read-only folder" "$TMPD/ro"
fi
check "fig4 small run" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --out "$TMPD/run" --quiet
for f in fig4a.csv fig4b.csv fig4a_phase.csv fig4b_phase.csv claims.txt run.txt; do
  [ -s "$TMPD/run/$f" ] && cli_ok || cli_fail "fig4 writes $f"
done
[ "$(head -1 "$TMPD/run/fig4a.csv" | cut -d, -f1-4)" = "d,kappa,R,tau_mean" ] && cli_ok || cli_fail "fig4a.csv header"
# 2 curves x 5 R values + header
[ "$(wc -l <"$TMPD/run/fig4a.csv")" -eq 11 ] && cli_ok || cli_fail "fig4a.csv has one row per (d, R)"
# R = 0 rows: tau = 1 exactly
awk -F, 'NR>1 && $3==0 && $4!=1 {bad=1} END{exit bad}' "$TMPD/run/fig4a.csv" && cli_ok || cli_fail "tau = 1 at R = 0"
grep -Eq "^E1 (PASS|FAIL): [0-9]+ of 4 curves" "$TMPD/run/claims.txt" && cli_ok || cli_fail "claims.txt verdict line"
[ -z "$(find "$TMPD/run" -name '*.tmp.*')" ] && cli_ok || cli_fail "fig4: no temporaries left"
# results do not depend on the thread count
check "fig4 one thread" "$P" --thetas 2 --points 3 --rs 5 --ds 2,7 --d 6 --kappas 3,40 --threads 1 --out "$TMPD/run1" --quiet
cmp -s "$TMPD/run/fig4a.csv" "$TMPD/run1/fig4a.csv" && cmp -s "$TMPD/run/fig4b_phase.csv" "$TMPD/run1/fig4b_phase.csv" \
  && cli_ok || cli_fail "fig4 output independent of --threads"
cli_summary
