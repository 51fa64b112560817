#!/usr/bin/env bash
# The rule of every claim, one line each: "<id><TAB><signature>", the signature being the
# fields that decide its verdict (experiment, statistic, rule, control, and every
# alternative's flags, statistic, control and rule), from `verdicts --dump`. Sorted by id.
#   scripts/claim_rules.sh build/bin/verdicts > verdict/rules_frozen.tsv   (at the freeze)
# tests/cli_claims_history.sh compares today's table with the stored ones: a rule that
# differs from the development baseline must say so (after_data), one that differs from
# the frozen table must carry its after-confirmation mark (docs/verdicts.md).
set -euo pipefail
verdicts=${1:-build/bin/verdicts}
"$verdicts" --dump | awk -F'\t' '
  $2 ~ /^(experiment|stat|rule|control)$/ || $2 ~ /^alt[0-9]+\.(name|flags|stat|control|rule)$/ {
    if (!($1 in sig)) order[n++] = $1
    sig[$1] = sig[$1] "|" $2 "=" $3
  }
  END { for (i = 0; i < n; i++) print order[i] "\t" substr(sig[order[i]], 2) }' | LC_ALL=C sort
