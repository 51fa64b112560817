#!/usr/bin/env bash
# Runs every test program given on the command line and every tests/cli_*.sh
# script, sums their counts, and ends with one line "N passed, N failed".
# Exits non-zero on any failure (a crash counts as one failure).
set -u
BUILD=${BUILD:-build}
export BUILD
# allocator_may_return_null: a huge allocation returns NULL (the program's own
# out-of-memory message) instead of ASan's abort, as without sanitizers.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
passed=0
failed=0
run_one() {
  local name=$1; shift
  local out rc counts
  out=$("$@" 2>&1); rc=$?
  counts=$(printf '%s\n' "$out" | awk '/^# counts /{p+=$3; f+=$4} END{print p+0, f+0}')
  local p=${counts% *} f=${counts#* }
  printf '%s\n' "$out" | grep -v '^# counts ' | grep -E '^(FAIL|ERROR)|runtime error|Sanitizer' || true
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $name: exited with status $rc and reported no failed check"
    printf '%s\n' "$out" | tail -n 20
    f=1
  fi
  printf '%-40s %4d passed, %d failed\n' "$name" "$p" "$f"
  passed=$((passed + p)); failed=$((failed + f))
}
for t in "$@"; do run_one "$(basename "$t")" "$t"; done
# CLI_SCRIPTS: the scripts to run instead (make test MPI=1: tests/mpi_*.sh)
for s in ${CLI_SCRIPTS-tests/cli_*.sh}; do
  [ -e "$s" ] && run_one "$(basename "$s")" bash "$s"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
