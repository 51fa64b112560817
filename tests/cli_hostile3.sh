# Hostile inputs, concurrent runs and faults, round three (issue 19): two runs
# into one folder, symbolic links out of a folder, commit provenance, gnuplot
# without a shell, run_tasks' signals and lists, the BLAS guard's threads,
# CSV-unsafe block names, messages. Every case is bounded in time.
source tests/lib_cli.sh
ulimit -c 0
TT=$BIN/train_transformer
DS=$BIN/demo_spectrum

# ---- 7. one run per folder: a lock, and the holder's pid in the message ----------------
# A long run holds the folder; a second run into it stops at once, exit 2, one
# line naming the holder's pid, and writes nothing there.
d=$TMPD/locked
"$TT" --quiet --steps 20000 --out "$d" >/dev/null 2>&1 &
holder=$!
i=0
while [ ! -e "$d/.lock" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
expect_user_error "a second run into a held folder" timeout 60 "$BIN/fig3" --quiet --out "$d"
grep -q "folder $d is in use by process $holder" "$TMPD/err" && cli_ok || cli_fail "holder's pid $holder named: $(cat "$TMPD/err")"
[ ! -e "$d/claims.txt" ] && [ ! -e "$d/H.npy" ] && cli_ok || cli_fail "the refused run wrote into the held folder"
kill -TERM $holder; wait $holder 2>/dev/null
# the holder gone (even by a signal), the folder is free again
check "the folder is free after its holder died" timeout 60 "$DS" --quiet --out "$d"
[ ! -e "$d/.lock" ] && cli_ok || cli_fail "the lock file stays after a finished run"

# Two runs started together (fig3, seeds 1 and 2): at most one writes; the
# folder then holds exactly that run (its files equal a run of its seed alone).
"$BIN/fig3" --quiet --seed 1 --out "$TMPD/ref1" && "$BIN/fig3" --quiet --seed 2 --out "$TMPD/ref2" || cli_fail "fig3 reference runs"
for trial in 1 2 3; do
  d=$TMPD/together$trial
  "$BIN/fig3" --quiet --seed 1 --out "$d" 2>"$TMPD/e1" & p1=$!
  "$BIN/fig3" --quiet --seed 2 --out "$d" 2>"$TMPD/e2" & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?
  seed=$(awk '/^seed: / { print $2 }' "$d/run.txt")
  bad=0
  for f in $(cd "$TMPD/ref$seed" && ls); do
    [ "$f" = run.txt ] && continue
    cmp -s "$TMPD/ref$seed/$f" "$d/$f" || bad=1
  done
  if { [ $r1 = 0 ] && [ $r2 = 0 ]; } || { [ $((r1 + r2)) = 2 ] && [ "$(cat "$TMPD/e1" "$TMPD/e2" | wc -l)" = 1 ]; }; then
    [ $bad = 0 ] && cli_ok || cli_fail "trial $trial: run.txt says seed $seed but the files are not that run's"
  else
    cli_fail "trial $trial: exits $r1 and $r2: $(cat "$TMPD/e1" "$TMPD/e2" | head -c 300)"
  fi
done

# ---- 8. clearing a previous run never follows a symbolic link out of the folder --------
d=$TMPD/sym
mkdir -p "$d/out" "$d/elsewhere/sub"
echo precious >"$d/elsewhere/victim.txt"
echo precious >"$d/elsewhere/sub/victim.txt"
ln -s "$d/elsewhere" "$d/out/lnk"
ln -s "$d/elsewhere/victim.txt" "$d/out/alias.txt"
printf 'command: x\nfile: lnk/victim.txt\nfile: lnk/sub/victim.txt\nfile: alias.txt\nfile: old.csv\n' >"$d/out/run.txt"
echo old >"$d/out/old.csv"
check "a run into a folder with links" timeout 120 "$BIN/table1_memory" --quiet --out "$d/out"
[ -e "$d/elsewhere/victim.txt" ] && [ -e "$d/elsewhere/sub/victim.txt" ] && cli_ok ||
  cli_fail "a file behind a symbolic link was deleted"
[ -L "$d/out/alias.txt" ] && cli_ok || cli_fail "a symbolic link listed in run.txt was removed"
[ ! -e "$d/out/old.csv" ] && cli_ok || cli_fail "the previous run's own regular file stays"

# ---- 14. a dangling symbolic link or a loop as --out: named as such --------------------
ln -s "$TMPD/nowhere" "$TMPD/dangling"
expect_user_error "--out a dangling link" "$DS" --out "$TMPD/dangling"
grep -q "symbolic link to something that does not exist" "$TMPD/err" && cli_ok || cli_fail "dangling link: $(cat "$TMPD/err")"
ln -s "$TMPD/loop2" "$TMPD/loop1" && ln -s "$TMPD/loop1" "$TMPD/loop2"
expect_user_error "--out a loop of links" "$DS" --out "$TMPD/loop1"
grep -q "symbolic links" "$TMPD/err" && cli_ok || cli_fail "loop of links: $(cat "$TMPD/err")"

# ---- 1, 2, 13, 14. heatmap: gnuplot without a shell, its errors, signals, its inputs ------
M=$BIN/heatmap
HB=(--V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 --panel 16 --quiet)
"$BIN/hessian_blocks" "${HB[@]}" --partition alg2 --out "$TMPD/run" || cli_fail "streamed run"
"$BIN/hessian_blocks" "${HB[@]}" --full-spectrum --write-h --skip-blocks --out "$TMPD/h" || cli_fail "H.npy"
cp "$TMPD/run/tensors.csv" "$TMPD/h/"
absrun=$(cd "$TMPD/run" && pwd)
if command -v gnuplot >/dev/null; then
  # the injection strings of the issue, in --out and --png: nothing runs
  absM=$(cd "$BIN" && pwd)/heatmap
  (cd "$TMPD" && "$absM" --quiet --block 0:2 --run "$absrun" --out 'x$(touch PWNED1)' --png 'x$(touch PWNED2).png' \
     && "$absM" --quiet --block 0:2 --run "$absrun" --out "y'; system('touch PWNED3'); z='" --png 'y`touch PWNED4`.png') \
    2>"$TMPD/err" || cli_fail "heatmap with odd --out and --png: $(cat "$TMPD/err")"
  [ -z "$(find "$TMPD" -name 'PWNED*')" ] && cli_ok || cli_fail "an injection string ran: $(find "$TMPD" -name 'PWNED*')"
  [ -s "$TMPD/x\$(touch PWNED2).png" ] && cli_ok || cli_fail "the PNG with an odd name was not written"
  # outside the repository: the script is found from the program's location
  mkdir -p "$TMPD/elsewhere"
  (cd "$TMPD/elsewhere" && "$absM" --quiet --block h0.attn.query --run "$absrun" --out p --png q.png) 2>"$TMPD/err" &&
    [ -s "$TMPD/elsewhere/q.png" ] && cli_ok || cli_fail "--png outside the repository: $(cat "$TMPD/err")"
  # gnuplot's error: one line, exit 2, no PNG and no temporary
  echo 'plot nonsense_fn(x)' >"$TMPD/bad.gp"
  expect_user_error "a failing gnuplot script" "$M" --quiet --block h0.attn.query --run "$TMPD/run" --out "$TMPD/gp" \
    --png "$TMPD/gp.png" --script "$TMPD/bad.gp"
  grep -q "nonsense_fn" "$TMPD/err" && cli_ok || cli_fail "gnuplot's error named: $(cat "$TMPD/err")"
  [ ! -e "$TMPD/gp.png" ] && [ -z "$(find "$TMPD" -name 'gp.png.tmp*')" ] && cli_ok || cli_fail "a failed render left a file"
  # SIGTERM while gnuplot renders: gnuplot goes too, no temporary is written afterwards
  cat >"$TMPD/slow.gp" <<'GP'
if (ARGC >= 2) out = ARG2
set terminal pngcairo size 100,100
set output out
plot x
pause 2
set output out
plot x
GP
  "$M" --quiet --block h0.attn.query --run "$TMPD/run" --out "$TMPD/sl" --png "$TMPD/sl.png" --script "$TMPD/slow.gp" &
  hp=$!
  i=0
  while [ -z "$(find "$TMPD" -maxdepth 1 -name 'sl.png.tmp*')" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  sleep 0.5
  kill -TERM $hp; wait $hp; rc=$?
  sleep 3
  [ $rc = 143 ] && cli_ok || cli_fail "SIGTERM during rendering: exit $rc, expected 143"
  [ -z "$(find "$TMPD" -maxdepth 1 -name 'sl.png*')" ] && cli_ok || cli_fail "SIGTERM during rendering left $(find "$TMPD" -maxdepth 1 -name 'sl.png*')"
else
  echo "# skipped: heatmap --png cases (no gnuplot)"
fi
# a non-finite H, an H of three dimensions, a negative --max-lines
P=$(awk -F, '$1 == "P" { print $2 }' "$TMPD/run/summary.csv")
cp "$TMPD/h/H.npy" "$TMPD/h/Hnan.npy"
off=$(( $(stat -c %s "$TMPD/h/H.npy") - 8 * P * P ))
printf '\x00\x00\x00\x00\x00\x00\xf8\x7f' | dd of="$TMPD/h/Hnan.npy" bs=1 seek=$((off + 8 * (3 * P + 5))) conv=notrunc 2>/dev/null
expect_user_error "heatmap of an H with a NaN" "$M" --block 0:10 --h "$TMPD/h/Hnan.npy" --tensors "$TMPD/h/tensors.csv" --out "$TMPD/bad13"
grep -q "non-finite" "$TMPD/err" && cli_ok || cli_fail "NaN named: $(cat "$TMPD/err")"
dict="{'descr': '<f8', 'fortran_order': False, 'shape': ($P, $P, 1), }"
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((${#dict} & 255)))\\x$(printf %02x $((${#dict} >> 8)))"; printf '%s' "$dict"
  tail -c $((8 * P * P)) "$TMPD/h/H.npy"; } >"$TMPD/h/H3.npy"
expect_user_error "heatmap of a (P, P, 1) array" "$M" --block 0:10 --h "$TMPD/h/H3.npy" --tensors "$TMPD/h/tensors.csv" --out "$TMPD/bad13"
expect_user_error "heatmap --max-lines -1" "$M" --block 0:10 --h "$TMPD/h/H.npy" --max-lines -1 --out "$TMPD/bad13"
expect_no_files "no output after bad heatmap input" "$TMPD/bad13"

# ---- 10. run_tasks: NUL lines, signals, several lists, task numbers, a full disk -----------
R=$BIN/run_tasks
printf '\0echo hidden >%s/nul.txt\necho ok\n' "$TMPD" >"$TMPD/nul.txt"
expect_user_error "a line starting with a NUL byte" "$R" --quiet "$TMPD/nul.txt"
grep -q "nul.txt:1: a NUL byte" "$TMPD/err" && cli_ok || cli_fail "NUL line named: $(cat "$TMPD/err")"
echo 'kill -9 $$' >"$TMPD/killed.txt"
"$R" --quiet "$TMPD/killed.txt" 2>"$TMPD/err"; rc=$?
[ $rc = 4 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q "task 1 (line 1) killed by signal 9" "$TMPD/err" && cli_ok ||
  cli_fail "a task killed by SIGKILL: exit $rc: $(cat "$TMPD/err")"
"$R" --help | grep -q "4 a task killed by a signal" && cli_ok || cli_fail "--help documents exit code 4"
# --list A B and A B: both lists, in order; numbering from 1 as the log names
echo "echo A >>$TMPD/ab.txt" >"$TMPD/la.txt"
printf 'echo B >>%s/ab.txt\nexit 3\n' "$TMPD" >"$TMPD/lb.txt"
"$R" --quiet --log "$TMPD/ablogs" --list "$TMPD/la.txt" "$TMPD/lb.txt" 2>"$TMPD/err"; rc=$?
[ "$(tr -d '\n' <"$TMPD/ab.txt")" = AB ] && cli_ok || cli_fail "--list A B ran $(tr -d '\n' <"$TMPD/ab.txt" 2>/dev/null)"
[ $rc = 3 ] && grep -q "task 3 (line 2 of $TMPD/lb.txt) failed with exit 3" "$TMPD/err" && cli_ok ||
  cli_fail "the third task's failure: exit $rc: $(cat "$TMPD/err")"
[ -e "$TMPD/ablogs/task1.log" ] && [ -e "$TMPD/ablogs/task3.log" ] && [ ! -e "$TMPD/ablogs/task0.log" ] && cli_ok ||
  cli_fail "logs numbered as the messages: $(ls "$TMPD/ablogs")"
# SIGINT to run_tasks: the command itself (behind sh, which need not exec it) stops too
echo "$TT --quiet --steps 20000 --out $TMPD/sigint" >"$TMPD/long.txt"
# (started with SIGINT at its default: a shell without job control, nohup make test &, starts
# its background commands with SIGINT ignored, and a program keeps what it inherits)
env --default-signal=INT "$R" --quiet "$TMPD/long.txt" & rp=$!
i=0
while [ -z "$(find "$TMPD/sigint" -name '*.npy' 2>/dev/null)" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT $rp; wait $rp; rc=$?
sleep 2
[ $rc = 130 ] && cli_ok || cli_fail "run_tasks after SIGINT: exit $rc"
[ ! -e "$TMPD/sigint/run.txt" ] && [ -z "$(find "$TMPD/sigint" -name '*.tmp.*')" ] && cli_ok ||
  cli_fail "the task ran on after SIGINT (or left temporaries)"
pkill -f -- "--steps 20000 --out $TMPD/sigint" 2>/dev/null
# a full disk under the log: named as such, exit 2 (root and mount needed: skipped otherwise)
mkdir -p "$TMPD/small"
if mount -t tmpfs -o size=1m tmpfs "$TMPD/small" 2>/dev/null; then
  echo "head -c 3000000 /dev/zero | tr '\\0' x" >"$TMPD/big.txt"
  "$R" --quiet --log "$TMPD/small" "$TMPD/big.txt" 2>"$TMPD/err"; rc=$?
  [ $rc = 2 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q "writing $TMPD/small/task1.log failed: No space left on device" "$TMPD/err" &&
    cli_ok || cli_fail "a full log disk: exit $rc: $(cat "$TMPD/err")"
  umount "$TMPD/small"
else
  echo "# skipped: run_tasks on a full disk (mount not permitted)"
fi

# ---- 11, 14. the BLAS guard counts every thread that calls BLAS (--threads too) ------------
# (AddressSanitizer reserves terabytes of address space: plain build only)
case "${BUILD:-build}" in *san*) guard=0;; *) guard=1;; esac
# The limit is what the guard asks for --threads W (W buffers of BLAS_BUFFER_BYTES):
# whatever the process already maps, the room left is short of it, on any machine;
# run_start's own guard (OPENBLAS_NUM_THREADS=N < W buffers) still fits.
buf_mb=$(sed -n 's/^#define BLAS_BUFFER_BYTES (\([0-9]*\)\.0 \* 1024 \* 1024)$/\1/p' core/memory.c)
[ -n "$buf_mb" ] && cli_ok || cli_fail "BLAS_BUFFER_BYTES not found in core/memory.c"
if [ $guard = 1 ] && [ -n "$buf_mb" ]; then
  for p in coarse value_split; do
    extra="--steps 20"; [ $p = value_split ] && extra="--steps 40 --short 20"
    for case in "1 2" "2 4"; do
      set -- $case
      n=$1 w=$2 kb=$(($2 * buf_mb * 1024))
      expect_user_error "$p --threads $w under ulimit -v $kb with OPENBLAS_NUM_THREADS=$n" env OPENBLAS_NUM_THREADS=$n bash -c \
        "ulimit -v $kb; exec timeout 60 '$BIN/$p' $extra --lrs 2 --held-out 32 --out '$TMPD/g11' --quiet --threads $w"
      grep -q "threads that call it at once" "$TMPD/err" && cli_ok || cli_fail "$p: the threads named: $(cat "$TMPD/err")"
    done
  done
  expect_user_error "the guard with OPENBLAS_NUM_THREADS=1" env OPENBLAS_NUM_THREADS=1 bash -c \
    "ulimit -v 150000; exec '$BIN/fig3' --out '$TMPD/g11' --quiet"
  ! grep -q "OPENBLAS_NUM_THREADS=1" "$TMPD/err" && cli_ok || cli_fail "advises OPENBLAS_NUM_THREADS=1 when it is 1: $(cat "$TMPD/err")"
else
  echo "# skipped: ulimit -v cases (sanitized build)"
fi

# ---- 12, 14. partition files: names that would break a CSV, an endless line ---------------
printf 'a,b 0 2640\n' >"$TMPD/comma.txt"
expect_user_error "a block name with a comma" timeout 60 "$TT" --partition "$TMPD/comma.txt" --steps 2 --out "$TMPD/e12"
grep -q "comma.txt:1: block name 'a,b' holds a comma" "$TMPD/err" && cli_ok || cli_fail "comma named: $(cat "$TMPD/err")"
printf 'x 0 100\n"q 100 2540\n' >"$TMPD/quote.txt"
expect_user_error "a block name with a quote" timeout 60 "$TT" --partition "$TMPD/quote.txt" --steps 2 --out "$TMPD/e12"
lim=""; [ $guard = 1 ] && lim="ulimit -v 3000000;"
expect_user_error "/dev/zero as a partition file" bash -c "$lim exec timeout 60 '$TT' --partition /dev/zero --steps 2 --out '$TMPD/e12'"
grep -q "longer than" "$TMPD/err" && cli_ok || cli_fail "/dev/zero: $(cat "$TMPD/err")"
expect_no_files "no output after bad partition files" "$TMPD/e12"

# ---- 14. messages: no doubled name, no flag a program does not have, verdicts' folders --------
expect_user_error "hessian_blocks --path full, H too large" timeout 60 "$BIN/hessian_blocks" --path full --C 128 --M 512 \
  --layers 2 --T 8 --steps 2 --batch 2 --hess-batch 2 --quiet --out "$TMPD/e14hb"
! grep -q "hessian_blocks: hessian_blocks" "$TMPD/err" && grep -q "GB" "$TMPD/err" && cli_ok || cli_fail "doubled name: $(cat "$TMPD/err")"
mkdir -p "$TMPD/nocifar"
expect_user_error "mlp_steps --data cifar, an empty folder" "$BIN/mlp_steps" --data cifar --cifar100-dir "$TMPD/nocifar" \
  --cifar10-dir "$TMPD/nocifar" --out "$TMPD/e14"
! grep -q -- "--data-dir" "$TMPD/err" && grep -q "train.bin" "$TMPD/err" && cli_ok || cli_fail "mlp_steps names a flag it has not: $(cat "$TMPD/err")"
expect_user_error "verdicts --runs /nonexistent" "$BIN/verdicts" --runs "$TMPD/nonexistent" --out "$TMPD/e14"
"$DS" --quiet --out "$TMPD/vr/fig3/seed1" || cli_fail "a seed's run"
expect_user_error "verdicts --out a seed's folder" "$BIN/verdicts" --runs "$TMPD/vr" --out "$TMPD/vr/fig3/seed1"
[ -e "$TMPD/vr/fig3/seed1/eigs.csv" ] && [ -e "$TMPD/vr/fig3/seed1/run.txt" ] && cli_ok || cli_fail "verdicts cleared a seed's run"
expect_no_files "no output after bad verdicts flags" "$TMPD/e14"

# the Makefile: SEEDS and SEED0 reach a shell (seq) and the render commands: numbers only
make -n verdicts SEEDS="1; touch $TMPD/PWNED_MAKE" >/dev/null 2>"$TMPD/err"; rc=$?
[ $rc != 0 ] && [ ! -e "$TMPD/PWNED_MAKE" ] && grep -q "whole numbers" "$TMPD/err" && cli_ok ||
  cli_fail "make SEEDS='1; touch ...': exit $rc: $(head -c 200 "$TMPD/err")"
[ -z "$(grep -rn 'system(\|popen(' --include=*.c --include=*.h core hessian optim quad mlp tinytransformer verdict harness experiments tools tests bench)" ] &&
  cli_ok || cli_fail "system() or popen() in the sources: $(grep -rln 'system(\|popen(' --include=*.c --include=*.h .)"

# ---- 9. run.txt: the toolkit's commit (not the current folder's), one quoted command line --
if want=$(git rev-parse --short=12 HEAD 2>/dev/null); then
  mkdir -p "$TMPD/other" && git -C "$TMPD/other" init -q &&
    git -C "$TMPD/other" -c user.email=t@t -c user.name=t commit -q --allow-empty -m other
  absbin=$(cd "$BIN" && pwd)
  (cd "$TMPD/other" && "$absbin/demo_spectrum" --quiet --out run) || cli_fail "a run from inside another repository"
  got=$(sed -n 's/^git commit: //p' "$TMPD/other/run/run.txt")
  [ "${got%-dirty}" = "$want" ] && cli_ok || cli_fail "run.txt records commit '$got', the toolkit is at $want"
else
  echo "# skipped: the commit check (not a git checkout)"
fi
odd=$(printf "$TMPD/odd dir\nwith 'quote'")
check "--out with a space, a newline and a quote" "$DS" --quiet --out "$odd"
cmd=$(sed -n 's/^command: //p' "$odd/run.txt")
[ "$(grep -c '' "$odd/run.txt")" = "$(grep -c '^[a-z ]*: ' "$odd/run.txt")" ] && cli_ok || cli_fail "run.txt has a line that is not 'key: value'"
eval "set -- $cmd"
[ $# = 4 ] && [ "$4" = "$odd" ] && cli_ok || cli_fail "the recorded command line does not split back into its 4 arguments: $cmd"

cli_summary
