# Whole-program checks of the shared command-line behaviour, on demo_spectrum.
source tests/lib_cli.sh
P=$BIN/demo_spectrum
check "--help exits 0" "$P" --help
"$P" --help | grep -q -- "--seed" && cli_ok || cli_fail "--help lists --seed"
expect_user_error "unknown flag" "$P" --bogus
expect_user_error "non-numeric value" "$P" --n abc
expect_user_error "missing value" "$P" --n
expect_user_error "out-of-range value" "$P" --m 0
expect_user_error "stray argument" "$P" extra
expect_user_error "unwritable output folder" "$P" --out /proc/nope
expect_no_files "no output after a bad flag" "$TMPD/none"
check "a normal run" "$P" --n 200 --m 50 --out "$TMPD/run" --quiet
[ -s "$TMPD/run/eigs.csv" ] && [ -s "$TMPD/run/run.txt" ] && cli_ok || cli_fail "eigs.csv and run.txt written"
[ "$(head -1 "$TMPD/run/eigs.csv")" = "index,eigenvalue" ] && cli_ok || cli_fail "csv header row"
[ -z "$(find "$TMPD/run" -name '*.tmp.*')" ] && cli_ok || cli_fail "no temporaries left"
grep -q "^seed: 1$" "$TMPD/run/run.txt" && cli_ok || cli_fail "run.txt records the seed"
# every program starts its run (run_start: BLAS pinned to one thread, the memory guard) before
# parsing its options: a main without it computes with BLAS threads and loses its determinism
for f in experiments/*.c tools/*.c bench/*.c; do
  grep -q "cli_parse(" "$f" || continue
  rs=$(grep -n "run_start(argc, argv);" "$f" | head -1 | cut -d: -f1); cp=$(grep -n "cli_parse(argc, argv," "$f" | head -1 | cut -d: -f1)
  [ -n "$rs" ] && [ -n "$cp" ] && [ "$rs" -lt "$cp" ] && cli_ok || cli_fail "$f: no run_start before cli_parse"
done
cli_summary
