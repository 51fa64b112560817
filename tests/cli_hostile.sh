# Whole-program checks against hostile input: empty paths, signals, file-size
# limits, lying headers, odd partition files, out-of-range flags. Every case is
# bounded in time (timeout or a watchdog): a hang is a failure, never a stall.
source tests/lib_cli.sh
ulimit -c 0   # SIGQUIT's default action dumps core: none here
TT=$BIN/train_transformer

# ---- 1. --out "" -----------------------------------------------------------------
for p in demo_spectrum fig3 fig4 table_kappa mlp_hessian; do
  expect_user_error "$p --out ''" timeout 20 "$BIN/$p" --quiet --out ""
done
grep -q "empty folder name" "$TMPD/err" && cli_ok || cli_fail "--out '' names the empty folder: $(cat "$TMPD/err")"

# ---- 2. signals and file-size limits ------------------------------------------------
# A file-size limit: SIGXFSZ is ignored, the write fails with EFBIG -> one line,
# exit 2, "File too large", no temporary left.
for p in demo_spectrum fig3; do
  d=$TMPD/fsize_$p
  expect_user_error "$p under ulimit -f 8" bash -c "ulimit -f 8; exec timeout 20 '$BIN/$p' --quiet --out '$d'"
  grep -q "File too large" "$TMPD/err" && cli_ok || cli_fail "$p under ulimit -f 8 says File too large: $(cat "$TMPD/err")"
  [ -z "$(find "$d" -name '*.tmp*')" ] && cli_ok || cli_fail "$p under ulimit -f 8 left $(find "$d" -name '*.tmp*')"
done

# run_then_signal SIG [ignore]: start a long train_transformer run (~20 s), wait
# until it has temporaries, send SIG; it must be gone within 5 s (a watchdog
# kills it otherwise: a failure), by that signal, with no temporary left. With
# "ignore" the signal is ignored by the parent (nohup): the run must go on.
run_then_signal() {
  local sig=$1 mode=${2:-} d=$TMPD/sig_$1$2
  set -m   # job control: a background job keeps SIGINT/SIGQUIT at their defaults
  if [ "$mode" = ignore ]; then
    (trap '' "$sig"; exec "$TT" --quiet --steps 20000 --out "$d" >/dev/null 2>&1) &
  else
    "$TT" --quiet --steps 20000 --out "$d" >/dev/null 2>&1 &
  fi
  local pid=$!
  set +m
  local i=0
  while [ -z "$(find "$d" -name '*.tmp.*' 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  if [ $i -ge 100 ]; then kill -KILL $pid; wait $pid 2>/dev/null; cli_fail "SIG$sig: no temporary within 5 s"; return; fi
  (sleep 5; kill -KILL $pid 2>/dev/null) &
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
for s in HUP QUIT INT TERM; do run_then_signal $s; done
run_then_signal HUP ignore

cli_summary
