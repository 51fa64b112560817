#!/usr/bin/env bash
# Resource exhaustion: memory limits, sizes asked for by flags, and diverged
# training. Every case must end promptly (a timeout is a failure) with exit 0
# or the expected code, one stderr line on failure, and no temporary left.
source "$(dirname "$0")/lib_cli.sh"

# bounded COMMAND...: run with a 60 s watchdog; sets rc, err, tmps
bounded() {
  local out="$TMPD/r"
  rm -rf "$out"
  timeout -k 5 60 "$@" --out "$out" --quiet >/dev/null 2>"$TMPD/err"; rc=$?
  err=$(wc -l <"$TMPD/err")
  tmps=$(find "$out" -name '*.tmp*' 2>/dev/null | wc -l)
}

TT=(--V 4 --C 8 --heads 2 --M 8 --T 4 --steps 20 --batch 8)

# 1. address-space limits (ulimit -v): a clean error or a finished run, never a hang.
# (AddressSanitizer reserves terabytes of address space, so a sanitized build
# cannot run under ulimit -v at all: these cases run on the plain build only.)
SANITIZED=0
case "${BUILD:-build}" in *san*) SANITIZED=1;; esac
LIMITS="150000 500000 900000"
[ "$SANITIZED" -eq 1 ] && LIMITS=""
for kb in $LIMITS; do
  for cmd in "fig6 ${TT[*]} --hess-batch 6 --reps 3" "train_transformer ${TT[*]}" \
             "fig2 --data synthetic --steps 20 --eval-n 50" "fig4 --panels b --d 4 --kappas 10 --thetas 2 --points 3"; do
    set -- $cmd
    prog=$1; shift
    (ulimit -v "$kb"; bounded "$BIN/$prog" "$@"; echo "$rc $err $tmps" >"$TMPD/res")
    read -r rc err tmps <"$TMPD/res"
    if { [ "$rc" -eq 0 ] || { [ "$rc" -eq 2 ] && [ "$err" -eq 1 ]; }; } && [ "$tmps" -eq 0 ]; then cli_ok
    else cli_fail "ulimit -v $kb, $prog: exit $rc, $err stderr lines, $tmps temporaries"; fi
  done
done
# the BLAS guard names the limit
[ "$SANITIZED" -eq 0 ] && (ulimit -v 150000; "$BIN/fig3" --out "$TMPD/g" --quiet 2>"$TMPD/g.err"; echo $? >"$TMPD/g.rc")
if [ "$SANITIZED" -eq 0 ]; then
  [ "$(cat "$TMPD/g.rc")" -eq 2 ] && grep -q "ulimit -v" "$TMPD/g.err" && cli_ok \
    || cli_fail "ulimit -v 150000: $(cat "$TMPD/g.err")"
fi

# 2. sizes from flags: exit 2, one line naming the memory (or the range), promptly
for cmd in "train_transformer --C 4096 --layers 64 --steps 1" "train_transformer --batch 2000000000 --steps 1" \
           "fig6 --hess-batch 65536 --T 1024" "fig6 --panel 2147483647" \
           "fig2 --data synthetic --batch 2147483647 --steps 1" "fig2 --data synthetic --eval-n 2147483647"; do
  set -- $cmd
  prog=$1; shift
  bounded "$BIN/$prog" "$@"
  if [ "$rc" -eq 2 ] && [ "$err" -eq 1 ] && [ "$tmps" -eq 0 ] && grep -q "GB\|must be in\|more than\|asked" "$TMPD/err"; then cli_ok
  else cli_fail "$cmd: exit $rc, $err lines: $(head -c 200 "$TMPD/err")"; fi
done

# 3. divergence: exit 3, one line, written files complete and free of NaN
for cmd in "fig6 ${TT[*]} --hess-batch 6 --lr 1e3" "table_kappa ${TT[*]} --hess-batch 6 --lr 1e3" \
           "partition_check ${TT[*]} --hess-batch 6 --lr 1e3" "fig2 --data synthetic --steps 50 --lr 1e10" \
           "train_transformer ${TT[*]} --optim gd --lr 1e9"; do
  set -- $cmd
  prog=$1; shift
  bounded "$BIN/$prog" "$@"
  nan=$(grep -rli 'nan' "$TMPD/r" --include='*.csv' 2>/dev/null | wc -l)
  if [ "$rc" -eq 3 ] && [ "$err" -eq 1 ] && [ "$tmps" -eq 0 ] && [ "$nan" -eq 0 ] && grep -q "diverged" "$TMPD/err"; then cli_ok
  else cli_fail "$cmd: exit $rc, $err lines, $tmps temporaries, $nan files with nan: $(head -c 200 "$TMPD/err")"; fi
done
# eps 0 (a zero second moment divides by zero): finished or diverged, but never a NaN written
bounded "$BIN/train_transformer" "${TT[@]}" --eps 0
nan=$(grep -rli 'nan' "$TMPD/r" --include='*.csv' 2>/dev/null | wc -l)
{ [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; } && [ "$nan" -eq 0 ] && cli_ok || cli_fail "--eps 0: exit $rc, $nan files with nan"
# 4. a cgroup memory limit (root, a writable v1 memory hierarchy or v2 with the
# memory controller; skipped otherwise): a model too large for it is refused
# before allocation (exit 2, one line), not killed by the OOM killer.
cg=""
if [ "$(id -u)" -eq 0 ]; then
  if [ -w /sys/fs/cgroup/memory ] && mkdir -p /sys/fs/cgroup/memory/toolkit-test.$$ 2>/dev/null; then
    cg=/sys/fs/cgroup/memory/toolkit-test.$$
    echo 200M >"$cg/memory.limit_in_bytes" 2>/dev/null || { rmdir "$cg"; cg=""; }
  elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir /sys/fs/cgroup/toolkit-test.$$ 2>/dev/null; then
    cg=/sys/fs/cgroup/toolkit-test.$$
    echo 200M >"$cg/memory.max" 2>/dev/null || { rmdir "$cg"; cg=""; }
  fi
fi
if [ -n "$cg" ]; then
  (echo $BASHPID >"$cg/cgroup.procs" && bounded "$BIN/train_transformer" --C 512 --heads 4 --M 1024 --layers 8 --steps 2 \
    && echo "$rc $err $tmps" >"$TMPD/res")
  read -r rc err tmps <"$TMPD/res"
  if [ "$rc" -eq 2 ] && [ "$err" -eq 1 ] && [ "$tmps" -eq 0 ] && grep -q "GB of memory is available" "$TMPD/err"; then cli_ok
  else cli_fail "cgroup limit 200M: exit $rc, $err lines, $tmps temporaries: $(head -c 200 "$TMPD/err")"; fi
  rmdir "$cg" 2>/dev/null
else
  echo "# skipped: the cgroup memory-limit case (needs root and a writable memory cgroup)"
fi
cli_summary
