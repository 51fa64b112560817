#!/usr/bin/env bash
# readme_results.sh SUMMARY README: replace the lines between the markers
# "<!-- verdicts:begin -->" and "<!-- verdicts:end -->" of README with SUMMARY
# (the table make verdicts writes), so the README's results come from the
# verdicts file, never by hand.
set -euo pipefail
summary=$1 readme=$2
grep -q '^<!-- verdicts:begin -->$' "$readme" && grep -q '^<!-- verdicts:end -->$' "$readme" \
  || { echo "readme_results: $readme has no verdicts markers" >&2; exit 2; }
tmp="$readme.tmp.$$"
trap 'rm -f "$tmp"' EXIT
awk -v f="$summary" '
  /^<!-- verdicts:begin -->$/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
  /^<!-- verdicts:end -->$/   { skip = 0 }
  !skip' "$readme" >"$tmp"
mv "$tmp" "$readme"
echo "readme_results: $readme's results table now holds $summary"
