#!/usr/bin/env bash
# Adding a claim, done once as docs/verdicts.md's "Adding a claim" says, for a toy program:
# its file of claims (one family, one reading, an alternative statistic), the file in the list
# of verdict/claims.c, and runs whose stats.csv write the names. The verdicts program linked
# with them (against the built library) lists the claim, names its statistics and judges it
# over five made-up seeds; the table's check still holds with the toy in it.
source "$(dirname "$0")/lib_cli.sh"
B=${BUILD:-build}
CC=${CC:-gcc}
FLAGS=(-std=c11 -D_GNU_SOURCE -I. -I"$B/gen" $(pkg-config --cflags openblas lapacke gsl zlib libcjson 2>/dev/null))
case "$B" in *san*) FLAGS+=(-fsanitize=address,undefined -fno-omit-frame-pointer);; esac
LIBS=$(pkg-config --libs openblas lapacke gsl zlib libcjson 2>/dev/null | sed 's/-lgslcblas//')

# step 1: the toy program's file of claims
cat >"$TMPD/toy.c" <<'EOF'
/* Claims on toy: a program of this test only. */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "toy",
     .paper = "the toy gains",
     .place = "Sec. 0",
     .control_what = "the toy with its labels shuffled: it cannot gain, so the rule must reject it",
     .depends = "five made-up seeds",
     .alt = {{.choice = "statistic",
              .name = "end",
              .stat = "toy.gain.end",
              .control = "toy.control.gain.end",
              .why = "'gains' read at the end of the run"}},
     .reading = {{.id = "toy.gains",
                  .claim = "the toy's gain is above 0.1",
                  .stat = "toy.gain",
                  .stat_what = "the toy's gain over the run",
                  .side = CLAIM_ABOVE,
                  .threshold = 0.1,
                  .kind = RULE_INTERVAL,
                  .control = "toy.control.gain"}}},
};
const claim_file claims_toy = CLAIM_FILE(FAMILIES);
EOF
# step 2: the file in the list of verdict/claims.c (its extern line and FILES)
sed 's/    claims_coarse, claims_value_split;/    claims_coarse, claims_value_split, claims_toy;/;
     s/&claims_coarse, &claims_value_split,/\&claims_coarse, \&claims_value_split, \&claims_toy,/' \
  verdict/claims.c >"$TMPD/claims.c"
[ "$(grep -c 'claims_toy' "$TMPD/claims.c")" -eq 2 ] && cli_ok || cli_fail "the toy file is in the list twice (extern, FILES)"
# the verdicts program with them
if "$CC" "${FLAGS[@]}" -c "$TMPD/toy.c" -o "$TMPD/toy.o" 2>"$TMPD/cc.err" &&
   "$CC" "${FLAGS[@]}" -c "$TMPD/claims.c" -o "$TMPD/claims.o" 2>>"$TMPD/cc.err" &&
   "$CC" "${FLAGS[@]}" "$B/tools/verdicts.o" "$TMPD/claims.o" "$TMPD/toy.o" "$B/libtoolkit.a" $LIBS -lm \
     -o "$TMPD/verdicts" 2>>"$TMPD/cc.err"; then
  cli_ok
else
  cli_fail "building verdicts with the toy claims: $(head -c 400 "$TMPD/cc.err")"
fi
V=$TMPD/verdicts
"$V" --list 2>&1 | grep -q "^toy.gains  *toy  *toy.gain above 0.1 (t-interval); control: toy.control.gain$" && cli_ok \
  || cli_fail "verdicts --list shows the toy's rule: $("$V" --list 2>&1 | grep toy)"
[ "$("$V" --names | awk '$1 == "toy" {print $2}' | tr '\n' ' ')" = "toy.gain toy.control.gain toy.gain.end toy.control.gain.end " ] \
  && cli_ok || cli_fail "verdicts --names: the toy's four statistics"
[ "$("$V" --list | wc -l)" -eq $(($("$BIN/verdicts" --list | wc -l) + 1)) ] && cli_ok || cli_fail "one claim more than the table"
# step 3: the toy program's runs write the names (here by hand), seeds 1-5
for s in 1 2 3 4 5; do
  d=$TMPD/runs/toy/seed$s
  mkdir -p "$d"
  printf 'name,value\ntoy.gain,0.%s\ntoy.control.gain,0.0%s\ntoy.gain.end,0.%s5\ntoy.control.gain.end,0.00%s\n' \
    $((s + 3)) "$s" $((s + 2)) "$s" >"$d/stats.csv"
  printf 'command: build/bin/toy --seed %s --data-seed %s --out %s --quiet\nseed: %s\ngit commit: abc123\nstarted: 2026-11-26T00:00:00+0000\nwall seconds: 1.000\nfile: stats.csv\n' \
    "$s" "$s" "$d" "$s" >"$d/run.txt"
done
BIN=$TMPD expect_claim_stats toy "$TMPD/runs/toy/seed1/stats.csv" # step 4's check, with the toy's verdicts
"$V" --runs "$TMPD/runs" --seeds 1,2,3,4,5 --out "$TMPD/out" --quiet >/dev/null 2>"$TMPD/err" && cli_ok \
  || cli_fail "verdicts judges the toy: $(cat "$TMPD/err")"
row=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $1 == "toy.gains" {
  print $h["verdict"], $h["control_verdict"], $h["robustness"] }' "$TMPD/out/verdicts.csv" 2>/dev/null)
[ "$row" = "PASS FAIL ROBUST" ] && cli_ok || cli_fail "toy.gains: PASS beside a FAILed control, ROBUST under 'end' (got '$row')"
grep -q '^> "the toy gains" (Sec. 0)$' "$TMPD/out/verdicts.md" && cli_ok || cli_fail "verdicts.md quotes the toy's sentence"
cli_summary
