# MPI checks of run_tasks: a sweep of runs (seeds, checkpoints) spread over 3
# ranks writes byte-identical files to the same list run by one process; a
# failing command stops the job with one line and its exit code, leaving no
# temporary; each command runs exactly once.
source tests/lib_cli.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun -q --oversubscribe)
R=$BIN/run_tasks
TT="--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet"

sweep() {  # sweep FOLDER: the list of a small sweep writing into FOLDER
  for s in 1 2 3; do
    for c in 0.05 0.5; do
      echo "OPENBLAS_NUM_THREADS=1 $BIN/hessian_blocks $TT --seed $s --checkpoint $c --out $1/s$s-c$c"
    done
  done
  echo "# a comment, then a blank line"
  echo ""
  echo "echo once >>$1/count.txt"
}
sweep "$TMPD/one" >"$TMPD/one.txt"
sweep "$TMPD/mpi" >"$TMPD/mpi.txt"
check "run_tasks, one process" "$R" --quiet "$TMPD/one.txt"
if "${MPIRUN[@]}" -np 3 "$R" --quiet --log "$TMPD/logs" "$TMPD/mpi.txt"; then
  cli_ok
  bad=0
  for f in $(cd "$TMPD/one" && find . -type f ! -name run.txt | sort); do
    cmp -s "$TMPD/one/$f" "$TMPD/mpi/$f" || { bad=1; echo "differs: $f"; }
  done
  [ $bad = 0 ] && [ "$(cd "$TMPD/one" && find . -type f | wc -l)" = "$(cd "$TMPD/mpi" && find . -type f | wc -l)" ] &&
    cli_ok || cli_fail "sweep over 3 ranks: files differ from one process"
  [ "$(cat "$TMPD/mpi/count.txt")" = once ] && cli_ok || cli_fail "a command ran more than once"
  [ "$(ls "$TMPD/logs" | wc -l)" = 7 ] && cli_ok || cli_fail "--log: $(ls "$TMPD/logs" | wc -l) logs, expected 7"
else
  cli_fail "run_tasks over 3 ranks"
fi

# a shorter list into the same log folder over 3 ranks (issue 27 item 10): the earlier logs go,
# whichever rank wrote them; each log is whole (renamed when its task ended): no temporary left
printf 'echo a\necho b\n' >"$TMPD/two.txt"
"${MPIRUN[@]}" -np 3 "$R" --quiet --log "$TMPD/logs" "$TMPD/two.txt" || cli_fail "run_tasks, a second list into the logs"
[ "$(cd "$TMPD/logs" && ls | tr '\n' ' ')" = "task1.log task2.log " ] && [ "$(cat "$TMPD/logs/task2.log")" = b ] &&
  [ -z "$(find "$TMPD/logs" -name '*.tmp.*')" ] && cli_ok || cli_fail "the logs after a shorter list: $(cd "$TMPD/logs" && ls -A | tr '\n' ' ')"

# a failing command (exit 2 with its own line) among long ones
{ echo "sleep 20; echo late >$TMPD/late.txt"; echo "$BIN/hessian_blocks --bogus"; echo "sleep 20"; } >"$TMPD/fail.txt"
mkdir -p "$TMPD/tmp"
TMPDIR="$TMPD/tmp" "${MPIRUN[@]}" -np 3 "$R" --quiet "$TMPD/fail.txt" >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/e")" = 1 ] && grep -q 'unknown option --bogus' "$TMPD/e" && cli_ok ||
  cli_fail "failing command: exit $rc, stderr: $(head -c 300 "$TMPD/e")"
[ ! -e "$TMPD/late.txt" ] && cli_ok || cli_fail "the job went on after a failure"
# the captured output has no name (O_TMPFILE, or unlinked at once): nothing to leave, even on SIGKILL
left=$(find "$TMPD/tmp" -name 'run_tasks.*')
[ -z "$left" ] && cli_ok || cli_fail "capture files left: $left"
cli_summary
