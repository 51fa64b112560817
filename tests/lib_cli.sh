# lib_cli.sh — sourced by tests/cli_*.sh: checks on whole programs.
# Each check prints FAIL lines on failure; cli_summary prints "# counts P F".
BIN=${BUILD:-build}/bin
cli_passed=0
cli_failed=0
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

cli_ok()   { cli_passed=$((cli_passed + 1)); }
cli_fail() { cli_failed=$((cli_failed + 1)); echo "FAIL ${BASH_SOURCE[1]##*/}: $*"; }

# check DESCRIPTION COMMAND...: the command must succeed.
check() { local d=$1; shift; if "$@" >/dev/null 2>&1; then cli_ok; else cli_fail "$d"; fi; }

# expect_user_error DESCRIPTION COMMAND...: exit status 2, exactly one line on stderr.
expect_user_error() {
  local d=$1; shift
  "$@" >"$TMPD/out" 2>"$TMPD/err"; local rc=$?
  local lines; lines=$(wc -l <"$TMPD/err")
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ]; then cli_ok
  else cli_fail "$d: exit $rc, $lines stderr lines: $(head -c 300 "$TMPD/err")"; fi
}

# expect_no_files DESCRIPTION DIR: DIR holds no files at all (no partial output).
expect_no_files() {
  if [ -z "$(find "$2" -type f 2>/dev/null)" ]; then cli_ok; else cli_fail "$1: found $(find "$2" -type f | head -3)"; fi
}

cli_summary() { echo "# counts $cli_passed $cli_failed"; [ "$cli_failed" -eq 0 ]; }

# expect_pooled_shares DESCRIPTION STATS PATTERN: every statistic of STATS whose name matches the
# awk regex PATTERN (at least one) comes with integer "<name>.count" and "<name>.total",
# 0 <= count <= total, and its value is count/total (nan when total is 0).
expect_pooled_shares() {
  local msg
  msg=$(awk -F, -v pat="$3" 'NR > 1 {v[$1] = $2}
    END {
      for (k in v) {
        if (k ~ /\.(count|total)$/ || k !~ pat) continue
        n++
        c = k ".count"; t = k ".total"
        if (!(c in v) || !(t in v)) { print k ": no count/total"; continue }
        if (v[c] !~ /^[0-9]+$/ || v[t] !~ /^[0-9]+$/ || v[c] + 0 > v[t] + 0) { print k ": counts " v[c] "/" v[t]; continue }
        if (v[t] == 0) { if (v[k] != "nan") print k ": total 0 but " v[k]; continue }
        if (v[k] == "nan" || (v[k] - v[c] / v[t])^2 > 1e-24) print k ": " v[k] " is not " v[c] "/" v[t]
      }
      if (!n) print "no statistic matches " pat
    }' "$2")
  if [ -z "$msg" ]; then cli_ok; else cli_fail "$1: $(echo "$msg" | head -3 | tr '\n' ';')"; fi
}

# run_then_signal SIG [ignore]: start a long train_transformer run (~20 s; $TT), wait
# until it has temporaries, send SIG; it must be gone within 5 s (a watchdog
# kills it otherwise: a failure), by that signal, with no temporary left. With
# "ignore" the signal is ignored by the parent (nohup): the run must go on.
# The run is started with the dispositions each case tests (env --default-signal,
# --ignore-signal): a shell without job control (nohup make test &) starts its
# background commands with SIGINT and SIGQUIT ignored, nohup with SIGHUP ignored.
run_then_signal() {
  local sig=$1 mode=${2:-} d=$TMPD/sig_$1$2
  local dfl
  dfl=$(echo HUP INT QUIT TERM PIPE | tr ' ' '\n' | grep -vx "$sig" | paste -sd, -)
  if [ "$mode" = ignore ]; then
    env --default-signal="$dfl" --ignore-signal="$sig" "$TT" --quiet --steps 20000 --out "$d" >/dev/null 2>&1 &
  else
    env --default-signal="$dfl,$sig" "$TT" --quiet --steps 20000 --out "$d" >/dev/null 2>&1 &
  fi
  local pid=$!
  local i=0
  while [ -z "$(find "$d" -name '*.tmp.*' 2>/dev/null)" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
  if [ $i -ge 600 ]; then kill -KILL $pid; wait $pid 2>/dev/null; cli_fail "SIG$sig: no temporary within 30 s"; return; fi
  (sleep 20; kill -KILL $pid 2>/dev/null) &
  local dog=$!
  kill -s "$sig" $pid
  if [ "$mode" = ignore ]; then
    sleep 0.3
    kill -0 $pid 2>/dev/null && cli_ok || cli_fail "SIG$sig ignored by the parent (nohup) still killed the run"
    kill -TERM $pid
  fi
  wait $pid 2>/dev/null
  local rc=$? want=$((128 + $(kill -l "$sig")))
  [ "$mode" = ignore ] && want=$((128 + $(kill -l TERM)))
  kill $dog 2>/dev/null; wait $dog 2>/dev/null
  [ $rc -eq $want ] && cli_ok || cli_fail "SIG$sig $mode: exit status $rc, expected $want (137: still running after 5 s)"
  [ -z "$(find "$d" -name '*.tmp*')" ] && cli_ok || cli_fail "SIG$sig $mode left $(find "$d" -name '*.tmp*')"
}

# expect_claim_stats EXPERIMENT STATS: every name the claim table reads from EXPERIMENT's runs
# (verdicts --names: each reading's and alternative's statistic and control, a share's .count and
# .total) is a row of the stats.csv STATS of a tiny run, so a typo in a claim or in a program's
# stats_put fails make test in seconds, not as INVALID after a study. cli_verdicts.sh checks that
# every experiment of the table is checked by some script.
expect_claim_stats() {
  local missing
  missing=$("$BIN/verdicts" --names | awk -v e="$1" '
    NR == FNR { if (FNR > 1) have[substr($0, 1, index($0, ",") - 1)] = 1; next }
    $1 == e { n++; if (!($2 in have)) printf " %s", $2 }
    END { if (!n) printf " (the table reads nothing of %s)", e }' "$2" -)
  [ -z "$missing" ] && cli_ok || cli_fail "$1: the claim table reads what $2 lacks:$missing"
}
