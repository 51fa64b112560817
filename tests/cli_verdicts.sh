#!/usr/bin/env bash
# The verdict engine end to end on made-up per-seed statistics: every verdict
# is reached for the table1.v_removed claim (above 99.9, control must fail).
source "$(dirname "$0")/lib_cli.sh"
V="$BIN/verdicts"
S=table1_memory.min_v_removed_pct C=table1_memory.control.min_v_removed_pct

# runs DIR "v1 v2 ..." "c1 c2 ...": one stats.csv per seed 1..n
runs() {
  local dir=$1 i=1; local -a v=($2) c=($3)
  for x in "${v[@]}"; do
    mkdir -p "$dir/table1_memory/seed$i"
    printf 'name,value\n%s,%s\n%s,%s\n' "$S" "$x" "$C" "${c[$((i-1))]}" >"$dir/table1_memory/seed$i/stats.csv"
    i=$((i + 1))
  done
}
# verdict_is DESCRIPTION WANT RUNS SEEDS
verdict_is() {
  rm -rf "$TMPD/vout"
  "$V" --runs "$3" --seeds "$4" --out "$TMPD/vout" --quiet >/dev/null 2>"$TMPD/err"
  local got; got=$(awk -F, '$1 == "table1.v_removed" {print $NF}' "$TMPD/vout/verdicts.csv" 2>/dev/null)
  [ "$got" = "$2" ] && cli_ok || cli_fail "$1: verdict '$got', expected '$2' ($(cat "$TMPD/err"))"
}

runs "$TMPD/pass" "99.95 99.96 99.97" "0 0 0"
verdict_is "interval above, control below" PASS "$TMPD/pass" 1,2,3
runs "$TMPD/fail" "99.5 99.6 99.7" "0 0 0"
verdict_is "interval below" FAIL "$TMPD/fail" 1,2,3
runs "$TMPD/inc" "99.8 99.95 100.0" "0 0 0"
verdict_is "interval across the threshold" INCONCLUSIVE "$TMPD/inc" 1,2,3
runs "$TMPD/nop" "99.95 99.96 99.97" "99.95 99.96 99.97"
verdict_is "control passes too" "NO POWER" "$TMPD/nop" 1,2,3
runs "$TMPD/nan" "99.95 nan 99.97" "0 0 0"
verdict_is "a seed not finite" INVALID "$TMPD/nan" 1,2,3
verdict_is "a seed missing" INVALID "$TMPD/pass" 1,2,4
grep -q "table1.v_removed — PASS" <("$V" --runs "$TMPD/pass" --seeds 1,2,3 --out "$TMPD/o2" --quiet; cat "$TMPD/o2/verdicts.md") \
  && cli_ok || cli_fail "verdicts.md names the verdict"
[ "$(grep -c '^|' "$TMPD/o2/summary.md")" -ge 3 ] && cli_ok || cli_fail "summary.md is a table"
"$V" --list | grep -q "^table1.v_removed" && cli_ok || cli_fail "--list prints the claims"

# --skip: the claims of experiments not run are left out, not INVALID; a name
# outside the claim table is a user error
mkdir -p "$TMPD/none"
"$V" --runs "$TMPD/none" --seeds 1,2 --skip table1_memory --out "$TMPD/o4" --quiet >/dev/null 2>&1
! grep -q '^table1\.' "$TMPD/o4/verdicts.csv" && grep -q '^table1\.' <("$V" --list) \
  && grep -q 'Not judged (not run, `--skip`): table1_memory, 1 claim\.' "$TMPD/o4/verdicts.md" && cli_ok \
  || cli_fail "--skip table1_memory: its claims still judged, or not said"
expect_user_error "--skip of no experiment" "$V" --runs "$TMPD/pass" --seeds 1,2 --skip table1_memory,bogus --out "$TMPD/o3"
expect_user_error "one seed" "$V" --runs "$TMPD/pass" --seeds 1 --out "$TMPD/o3"
expect_user_error "bad level" "$V" --runs "$TMPD/pass" --level 1.5 --out "$TMPD/o3"
expect_no_files "no output on bad input" "$TMPD/o3"

# the README splice: the table lands between the markers, the rest untouched
printf 'a\n<!-- verdicts:begin -->\nold\n<!-- verdicts:end -->\nb\n' >"$TMPD/README.md"
./scripts/readme_results.sh "$TMPD/o2/summary.md" "$TMPD/README.md" >/dev/null
[ "$(head -1 "$TMPD/README.md")" = a ] && ! grep -q '^old$' "$TMPD/README.md" && grep -q "table1.v_removed\|Table 1" "$TMPD/README.md" \
  && [ "$(tail -1 "$TMPD/README.md")" = b ] && cli_ok || cli_fail "readme_results splice"
cli_summary
