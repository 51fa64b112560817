# The claim table against its history (docs/verdicts.md, "Confirmation on unseen seeds"):
# verdict/rules_baseline.tsv holds every rule as the development round began (the README's
# study of commit 7684166), verdict/rules_frozen.tsv every rule at the freeze the confirmation
# seeds come from. A claim whose rule (statistic, test, control, alternatives) is not the
# baseline's must say what changed after seeing data (after_data: the table's D); one whose
# rule is not the frozen table's must carry after_confirmation (C): it went back to development.
source "$(dirname "$0")/lib_cli.sh"
V=$BIN/verdicts
./scripts/claim_rules.sh "$V" >"$TMPD/now.tsv" && cli_ok || cli_fail "claim_rules.sh runs"
"$V" --dump >"$TMPD/dump.tsv" 2>/dev/null
has_field() { awk -F'\t' -v id="$1" -v f="$2" '$1 == id && $2 == f && $3 != "" {found = 1} END {exit !found}' "$TMPD/dump.tsv"; }
check_against() { # FILE FIELD WHAT
  local file=$1 field=$2 what=$3 bad=0 id sig old
  while IFS=$'\t' read -r id sig; do
    old=$(awk -F'\t' -v id="$id" '$1 == id {print $2}' "$file")
    [ "$old" = "$sig" ] && continue
    has_field "$id" "$field" || { bad=1; cli_fail "$id: its rule is not the $what one's and it has no $field"; }
  done <"$TMPD/now.tsv"
  [ $bad = 0 ] && cli_ok
}
[ -s verdict/rules_baseline.tsv ] && cli_ok || cli_fail "verdict/rules_baseline.tsv"
check_against verdict/rules_baseline.tsv after_data baseline
if [ -s verdict/rules_frozen.tsv ]; then
  check_against verdict/rules_frozen.tsv after_confirmation frozen
fi
# the check bites: a claim with a changed rule and no note is found
printf 'fig3.adam_beats_gd\texperiment=fig3|stat=another\n' >"$TMPD/base.tsv"
out=$(awk -F'\t' '$1 == "fig3.adam_beats_gd"' "$TMPD/now.tsv")
[ -n "$out" ] && [ "$out" != "$(cat "$TMPD/base.tsv")" ] && ! has_field fig3.adam_beats_gd after_confirmation \
  && cli_ok || cli_fail "the test case: fig3.adam_beats_gd differs from a made-up rule and has no C mark"
cli_summary
