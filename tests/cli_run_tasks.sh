# run_tasks without MPI: the commands of a list in order, once each; a failing
# command stops it with one line and its exit code; bad lists are user errors.
source tests/lib_cli.sh
R=$BIN/run_tasks
check "run_tasks --help" "$R" --help
expect_user_error "no list" "$R"
expect_user_error "missing list" "$R" "$TMPD/none.txt"
expect_user_error "a folder" "$R" "$TMPD"
printf '# only comments\n\n' >"$TMPD/empty.txt"
expect_user_error "empty list" "$R" "$TMPD/empty.txt"
{ for i in 1 2 3; do echo "echo $i >>$TMPD/order.txt"; done; } >"$TMPD/list.txt"
check "three commands" "$R" --quiet "$TMPD/list.txt"
[ "$(tr -d '\n' <"$TMPD/order.txt")" = 123 ] && cli_ok || cli_fail "order: $(tr -d '\n' <"$TMPD/order.txt")"
check "--list and --log" "$R" --quiet --list "$TMPD/list.txt" --log "$TMPD/logs"
[ -e "$TMPD/logs/task2.log" ] && cli_ok || cli_fail "--log: no task2.log"
{ echo "true"; echo "echo 'prog: something wrong' >&2; exit 3"; echo "echo never >$TMPD/never.txt"; } >"$TMPD/bad.txt"
"$R" --quiet "$TMPD/bad.txt" >"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$TMPD/e")" = 1 ] && grep -q 'task 2 (line 2) failed with exit 3: prog: something wrong' "$TMPD/e" &&
  cli_ok || cli_fail "failing command: exit $rc, $(head -c 300 "$TMPD/e")"
[ ! -e "$TMPD/never.txt" ] && cli_ok || cli_fail "ran on after a failure"
# SIGKILL (what mpirun sends a rank that outlives its SIGTERM) while a command
# runs: output without --log is discarded (its last line kept in memory), so
# nothing is left in TMPDIR
mkdir -p "$TMPD/tmp"
echo "sleep 5" >"$TMPD/long.txt"
TMPDIR="$TMPD/tmp" "$R" --quiet "$TMPD/long.txt" & rpid=$!
sleep 0.5
kill -9 $rpid; wait $rpid 2>/dev/null
pkill -f "^sh -c sleep 5$" 2>/dev/null
expect_no_files "run_tasks killed by SIGKILL" "$TMPD/tmp"
check "TMPDIR that does not exist (nothing is kept there)" env TMPDIR="$TMPD/nowhere" "$R" --quiet "$TMPD/list.txt"
cli_summary
