#!/usr/bin/env bash
# The verdict engine end to end on made-up per-seed runs of train_compare
# (claim train_compare.mini_on_par: the excess below 0.02, its control must
# fail): every verdict is reached, a control the rule cannot decide vouches for
# nothing, a diverged control run is no INVALID, and the provenance of every
# seed's run is checked (repeated seeds, other flags, another commit, a cut or
# duplicated stats.csv); the alternatives of make sensitivity give ROBUST or FRAGILE.
source "$(dirname "$0")/lib_cli.sh"
V="$BIN/verdicts"
CLAIM=train_compare.mini_on_par S=train_compare.mini_excess C=train_compare.control.one_block_excess

# seedrun DIR SEED STAT CTRL [EXTRA_FLAGS] [COMMIT]: one seed's run folder
seedrun() {
  local dir=$1 seed=$2 extra=${5:-} commit=${6:-abc123}
  mkdir -p "$dir"
  printf 'name,value\n%s,%s\n%s,%s\n' "$S" "$3" "$C" "$4" >"$dir/stats.csv"
  printf 'command: build/bin/train_compare --scale quick --seed %s --data-seed %s%s --out %s --quiet\nseed: %s\ngit commit: %s\nstarted: 2026-11-26T00:00:00+0000\nwall seconds: 1.000\nfile: stats.csv\n' \
    "$seed" "$seed" "${extra:+ $extra}" "$dir" "$seed" "$commit" >"$dir/run.txt"
}
# runs DIR "v1 v2 ..." "c1 c2 ...": seeds 1..n
runs() {
  local dir=$1 i=1; local -a v=($2) c=($3)
  for x in "${v[@]}"; do seedrun "$dir/train_compare/seed$i" $i "$x" "${c[$((i-1))]}"; i=$((i + 1)); done
}
# field ID COLUMN: a column of verdicts.csv for claim ID
field() { awk -F, -v id="$1" -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $1 == id { print $h[col] }' "$TMPD/vout/verdicts.csv" 2>/dev/null; }
# verdict_is DESCRIPTION WANT RUNS SEEDS [more verdicts flags]
verdict_is() {
  local d=$1 want=$2 r=$3 s=$4; shift 4
  rm -rf "$TMPD/vout"
  "$V" --runs "$r" --seeds "$s" --out "$TMPD/vout" --quiet "$@" >/dev/null 2>"$TMPD/err"
  local got; got=$(field "$CLAIM" verdict)
  [ "$got" = "$want" ] && cli_ok || cli_fail "$d: verdict '$got', expected '$want' ($(cat "$TMPD/err"))"
}
FIVE=1,2,3,4,5
runs "$TMPD/pass" "0.001 0.004 -0.002 0.003 0.0" "0.21 0.25 0.19 0.22 0.24"
verdict_is "excess below, control above" PASS "$TMPD/pass" $FIVE
runs "$TMPD/fail" "0.05 0.06 0.07 0.055 0.065" "0.21 0.25 0.19 0.22 0.24"
verdict_is "excess above" FAIL "$TMPD/fail" $FIVE
runs "$TMPD/inc" "0.001 0.03 -0.01 0.04 0.0" "0.21 0.25 0.19 0.22 0.24"
verdict_is "interval across the threshold" INCONCLUSIVE "$TMPD/inc" $FIVE
runs "$TMPD/nop" "0.001 0.004 -0.002 0.003 0.0" "0.001 0.004 -0.002 0.003 0.0"
verdict_is "control passes too" "NO POWER" "$TMPD/nop" $FIVE
# a control the rule cannot decide (its interval holds 0.02) vouches for nothing
runs "$TMPD/ctlinc" "0.001 0.004 -0.002 0.003 0.0" "0.018 -0.075 0.111 0.05 -0.01"
verdict_is "an INCONCLUSIVE control" "NO POWER" "$TMPD/ctlinc" $FIVE
grep -q "INCONCLUSIVE, not a decided FAIL" "$TMPD/vout/verdicts.md" && cli_ok || cli_fail "verdicts.md says why NO POWER"
runs "$TMPD/nan" "0.001 nan -0.002 0.003 0.0" "0.21 0.25 0.19 0.22 0.24"
verdict_is "a seed not a number" INVALID "$TMPD/nan" $FIVE
verdict_is "a seed missing" INVALID "$TMPD/pass" 1,2,3,4,6
# a diverged control run (+inf: the worst outcome for it) counts; the claim stays judged
runs "$TMPD/div" "0.001 0.004 -0.002 0.003 0.0" "0.21 inf 0.19 0.22 0.24"
verdict_is "a diverged control run" PASS "$TMPD/div" $FIVE
[ "$(field "$CLAIM" control_verdict)" = FAIL ] && cli_ok || cli_fail "the diverged control is a FAIL of the control"
# identical values on every seed: a zero-width interval is no evidence
runs "$TMPD/same" "0.001 0.001 0.001 0.001 0.001" "0.21 0.25 0.19 0.22 0.24"
verdict_is "the same value on every seed" INVALID "$TMPD/same" $FIVE

# provenance: each seed's run must be whole and made like the others
cp -r "$TMPD/pass" "$TMPD/flags"
seedrun "$TMPD/flags/train_compare/seed3" 3 -0.002 0.19 "--steps 600"
verdict_is "a seed run with other flags" INVALID "$TMPD/flags" $FIVE
grep -q "seed 3: run with other flags" "$TMPD/vout/verdicts.md" && cli_ok || cli_fail "the reason names seed 3's flags"
cp -r "$TMPD/pass" "$TMPD/commit"
seedrun "$TMPD/commit/train_compare/seed2" 2 0.004 0.25 "" def456
verdict_is "a seed from another commit" INVALID "$TMPD/commit" $FIVE
grep -q "from commit def456" "$TMPD/vout/verdicts.md" && cli_ok || cli_fail "the reason names the commit"
cp -r "$TMPD/pass" "$TMPD/cut"
printf 'name,value\n%s,0.001\n%s,0.2' "$S" "$C" >"$TMPD/cut/train_compare/seed4/stats.csv"
verdict_is "a stats.csv cut mid-line" INVALID "$TMPD/cut" $FIVE
cp -r "$TMPD/pass" "$TMPD/dup"
printf '%s,0.5\n' "$S" >>"$TMPD/dup/train_compare/seed5/stats.csv"
verdict_is "a stats.csv naming a statistic twice" INVALID "$TMPD/dup" $FIVE
cp -r "$TMPD/pass" "$TMPD/norun"
rm "$TMPD/norun/train_compare/seed1/run.txt"
verdict_is "a seed without run.txt" INVALID "$TMPD/norun" $FIVE
cp -r "$TMPD/pass" "$TMPD/scale"
verdict_is "runs of another scale" INVALID "$TMPD/scale" $FIVE --scale paper
expect_user_error "a repeated seed" "$V" --runs "$TMPD/pass" --seeds 1,1,2,2 --out "$TMPD/o5"
expect_no_files "no output on a repeated seed" "$TMPD/o5"
expect_user_error "no runs at all" "$V" --runs "$TMPD/nonexistent" --seeds 1,2 --out "$TMPD/o6"
expect_user_error "--out a seed's run folder" "$V" --runs "$TMPD/pass" --seeds $FIVE --out "$TMPD/pass/train_compare/seed1"
[ -f "$TMPD/pass/train_compare/seed1/stats.csv" ] && cli_ok || cli_fail "the seed's run survives --out pointed at it"

# the report: the verdict, the commit the runs came from, a smoke-run mark under 5 seeds
"$V" --runs "$TMPD/pass" --seeds $FIVE --out "$TMPD/o2" --quiet
grep -q "train_compare.mini_on_par — PASS" "$TMPD/o2/verdicts.md" && cli_ok || cli_fail "verdicts.md names the verdict"
grep -q "runs from commit abc123" "$TMPD/o2/summary.md" && cli_ok || cli_fail "summary.md names the commit"
! grep -q "SMOKE RUN" "$TMPD/o2/summary.md" && cli_ok || cli_fail "5 seeds are no smoke run"
"$V" --runs "$TMPD/pass" --seeds 1,2 --out "$TMPD/o7" --quiet
grep -q "SMOKE RUN" "$TMPD/o7/summary.md" && cli_ok || cli_fail "2 seeds are marked a smoke run"
[ "$(grep -c '^|' "$TMPD/o2/summary.md")" -ge 3 ] && cli_ok || cli_fail "summary.md is a table"
"$V" --list | grep -q "^train_compare.mini_on_par" && cli_ok || cli_fail "--list prints the claims"
"$V" --plan | grep -q "^train_compare steps600 --steps 600$" && cli_ok || cli_fail "--plan prints the alternatives' runs"

# alternatives: the same verdict under each run alternative -> ROBUST; another -> FRAGILE
for a in steps600 lrs9; do
  for i in 1 2 3 4 5; do
    f=${a#steps}; f=${f#lrs}; flag=$([ "${a#steps}" != "$a" ] && echo "--steps $f" || echo "--lrs $f")
    seedrun "$TMPD/sens/train_compare/$a/seed$i" $i "0.00$i" 0.2$i "$flag"
  done
done
verdict_is "alternatives agree" PASS "$TMPD/pass" $FIVE --sensitivity "$TMPD/sens"
[ "$(field "$CLAIM" robustness)" = ROBUST ] && [ "$(field "$CLAIM" alternatives_run)" = 2 ] && cli_ok \
  || cli_fail "ROBUST under 2 of 2: got $(field "$CLAIM" robustness) $(field "$CLAIM" alternatives_run)"
# compare_verdicts: a robust PASS that another block of seeds calls FAIL is a flip (exit 1)
cp -r "$TMPD/vout" "$TMPD/robust"
"$V" --runs "$TMPD/fail" --seeds $FIVE --out "$TMPD/failed" --quiet >/dev/null 2>&1
./scripts/compare_verdicts.sh "$TMPD/robust/verdicts.csv" "$TMPD/failed/verdicts.csv" >"$TMPD/cmp" 2>&1
[ $? -eq 1 ] && grep -q "mini_on_par\` | PASS | ROBUST | FAIL \*\*flip" "$TMPD/cmp" && cli_ok || cli_fail "compare_verdicts: $(tail -1 "$TMPD/cmp")"
./scripts/compare_verdicts.sh "$TMPD/robust/verdicts.csv" "$TMPD/robust/verdicts.csv" >"$TMPD/cmp2" 2>&1 && cli_ok \
  || cli_fail "compare_verdicts: a study against itself has no flip"
# each study's own robustness: "-" where it ran no alternative, its own where it did
grep -q "mini_on_par\` | PASS | ROBUST | FAIL \*\*flip\*\* | - |" "$TMPD/cmp" \
  && grep -q "mini_on_par\` | PASS | ROBUST | PASS | ROBUST |" "$TMPD/cmp2" && cli_ok \
  || cli_fail "compare_verdicts: the second study's robustness column: $(grep mini_on_par "$TMPD/cmp" "$TMPD/cmp2")"
for i in 1 2 3 4 5; do seedrun "$TMPD/sens/train_compare/steps600/seed$i" $i 0.06$i 0.2$i "--steps 600"; done
verdict_is "an alternative that fails" PASS "$TMPD/pass" $FIVE --sensitivity "$TMPD/sens"
[ "$(field "$CLAIM" robustness)" = FRAGILE ] && cli_ok || cli_fail "FRAGILE: got $(field "$CLAIM" robustness)"
grep -q "^train_compare.mini_on_par,horizon,steps600,--steps 600,.*,FAIL,PASS$" "$TMPD/vout/sensitivity.csv" && cli_ok \
  || cli_fail "sensitivity.csv: the alternative's verdict"
# an alternative's runs must be the main runs' flags plus its own, on every seed
for i in 1 2 3 4 5; do seedrun "$TMPD/sens/train_compare/lrs9/seed$i" $i "0.00$i" 0.2$i "--lrs 7"; done
verdict_is "an alternative run with the wrong flags" PASS "$TMPD/pass" $FIVE --sensitivity "$TMPD/sens"
grep -q "not the main run's flags plus the alternative's" "$TMPD/vout/verdicts.md" && cli_ok \
  || cli_fail "the wrong alternative flags are named"
[ "$(field "$CLAIM" alternatives_run)" = 1 ] && cli_ok || cli_fail "an INVALID alternative is no evidence either way"

# --skip: the claims of experiments not run are left out; a name outside the table is a user error
"$V" --runs "$TMPD/pass" --seeds 1,2 --skip fig4 --out "$TMPD/o4" --quiet >/dev/null 2>&1
! grep -q '^fig4\.' "$TMPD/o4/verdicts.csv" && grep -q '^fig4\.' <("$V" --list) \
  && grep -q 'Not judged (not run, `--skip`): fig4' "$TMPD/o4/verdicts.md" && cli_ok \
  || cli_fail "--skip fig4: its claims still judged, or not said"
expect_user_error "--skip of no experiment" "$V" --runs "$TMPD/pass" --seeds 1,2 --skip fig4,bogus --out "$TMPD/o3"
expect_user_error "one seed" "$V" --runs "$TMPD/pass" --seeds 1 --out "$TMPD/o3"
expect_user_error "bad alpha" "$V" --runs "$TMPD/pass" --alpha 0.7 --out "$TMPD/o3"
expect_no_files "no output on bad input" "$TMPD/o3"

# make sensitivity's plan: one run per alternative with flags and seed, the main run's flags plus its own
MAKEFLAGS= make --no-print-directory -n sensitivity-only SEEDS=2 SRUNS="$TMPD/sr" VRUNS="$TMPD/vr" VOUT="$TMPD/vo" \
  >"$TMPD/splan" 2>"$TMPD/splan.err"
# (stderr apart: a make warning, e.g. of clock skew on a fresh clone, would land mid-line in a shared file)
grep -q "bin/train_compare .*--seed 2 --data-seed 2 .*--steps 600 --out $TMPD/sr/train_compare/steps600/seed2 --quiet" \
  "$TMPD/splan" && cli_ok || cli_fail "make sensitivity plans train_compare steps600 seed 2: $(wc -l <"$TMPD/splan") lines; \
$({ grep "train_compare.*steps600" "$TMPD/splan"; head -c 300 "$TMPD/splan.err"; } | tr '\n' '|')"
[ "$(grep -c -- "--out $TMPD/sr/" "$TMPD/splan")" -eq $(( 2 * $("$V" --plan | wc -l) )) ] && cli_ok \
  || cli_fail "make sensitivity plans one run per alternative and seed"
grep -q -- "--sensitivity $TMPD/sr" "$TMPD/splan" && cli_ok || cli_fail "the judge reads the alternatives' runs"

# make results: the README's headline between the markers, the rest untouched; the doc holds the whole evidence
printf 'a\n<!-- verdicts:begin -->\nold\n<!-- verdicts:end -->\nb\n' >"$TMPD/README.md"
./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/results.md" >/dev/null
[ "$(head -1 "$TMPD/README.md")" = a ] && ! grep -q '^old$' "$TMPD/README.md" && grep -q "PASS" "$TMPD/README.md" \
  && ! grep -q '^| claim' "$TMPD/README.md" && grep -q "(docs/results.md)" "$TMPD/README.md" \
  && [ "$(tail -1 "$TMPD/README.md")" = b ] && cli_ok || cli_fail "readme_results splice"
grep -q "train_compare.mini_on_par — PASS" "$TMPD/results.md" && head -1 "$TMPD/results.md" | grep -q "generated" \
  && cli_ok || cli_fail "results.md holds the evidence under a generated note"
./scripts/readme_results.sh "$TMPD/nonexistent" "$TMPD/README.md" "$TMPD/r2.md" >/dev/null 2>&1
[ $? -eq 2 ] && [ ! -e "$TMPD/r2.md" ] && cli_ok || cli_fail "no verdicts folder: exit 2, nothing written"
# with a text study: its verdicts beside the Markov chain's, claims it did not judge left out
grep -v '^fig4\.' "$TMPD/o2/verdicts.csv" >"$TMPD/o2t.csv" && mkdir -p "$TMPD/o2t" && mv "$TMPD/o2t.csv" "$TMPD/o2t/verdicts.csv"
./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/r3.md" "$TMPD/o2t" >/dev/null
grep -q "^| claim | Markov chain | robustness | English text | robustness |$" "$TMPD/r3.md" \
  && grep -q "^| \`train_compare.mini_on_par\` | PASS | [A-Z-]* | PASS | [A-Z-]* |$" "$TMPD/r3.md" \
  && ! grep -q '^| `fig4\.[a-z_]*` |' "$TMPD/r3.md" \
  && cli_ok || cli_fail "results.md: the text column beside the Markov chain's"
# another study beside (the development seeds beside the confirmation): its name and title
BESIDE_NAME="development seeds 1-5" MAIN_NAME="confirmation seeds" BESIDE_TITLE="The development study beside the confirmation" \
  ./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/r5.md" "$TMPD/o2t" >/dev/null
grep -q "^## The development study beside the confirmation$" "$TMPD/r5.md" \
  && grep -q "^| claim | confirmation seeds | robustness | development seeds 1-5 | robustness |$" "$TMPD/r5.md" \
  && cli_ok || cli_fail "results.md: another study beside, named"
./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/r4.md" "$TMPD/nonexistent" >/dev/null 2>&1
[ $? -eq 2 ] && [ ! -e "$TMPD/r4.md" ] && cli_ok || cli_fail "no text verdicts: exit 2, nothing written"
# a Llama study (no text study): its section beside the study of its seeds, the claims it did not judge left out
LLAMA_AGAINST="$TMPD/o2t" LLAMA_AGAINST_NAME="tiny GPT" \
  ./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/r6.md" "" "$TMPD/o2t" >/dev/null
grep -q "^## On the Llama-style model beside the tiny GPT$" "$TMPD/r6.md" \
  && grep -q "^| claim | tiny GPT | robustness | Llama | robustness |$" "$TMPD/r6.md" \
  && grep -q "^| \`train_compare.mini_on_par\` | PASS | [A-Z-]* | PASS | [A-Z-]* |$" "$TMPD/r6.md" \
  && ! grep -q '^| `fig4\.[a-z_]*` |' "$TMPD/r6.md" && ! grep -q "English text" "$TMPD/r6.md" \
  && cli_ok || cli_fail "results.md: the Llama column beside the tiny GPT's"
./scripts/readme_results.sh "$TMPD/o2" "$TMPD/README.md" "$TMPD/r7.md" "" "$TMPD/nonexistent" >/dev/null 2>&1
[ $? -eq 2 ] && [ ! -e "$TMPD/r7.md" ] && cli_ok || cli_fail "no Llama verdicts: exit 2, nothing written"
# every experiment the claim table reads is checked against a tiny run of it by some test script
# (expect_claim_stats, tests/lib_cli.sh)
for e in $("$V" --names | awk '{print $1}' | sort -u); do
  grep -qE "^ *expect_claim_stats $e " "$(dirname "$0")"/cli_*.sh && cli_ok || cli_fail "no test checks the statistics of $e"
done
cli_summary
