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
