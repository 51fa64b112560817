# Hostile inputs, round four (issue 27): the judge on copied or mislabelled runs,
# leftovers of killed runs, writes through planted links, foreign checkpoints,
# strict readers, run_tasks' output, signals however the tests are started.
# Every case is bounded in time. Numbers in the headings are the issue's items.
source tests/lib_cli.sh
ulimit -c 0
TT=$BIN/train_transformer
V=$BIN/verdicts
P=("$TT" --V 5 --C 8 --heads 2 --M 12 --T 4 --batch 8 --quiet)   # the issue's tiny Transformer
# the claims of one experiment only: every other experiment of the claim table skipped
only() { "$V" --list | awk -v e="$1" '$2 != e { print $2 }' | sort -u | paste -sd, -; }

# ---- 1. the judge: each seed folder holds that seed's run ---------------------------------------
# A by-hand loop without --seed: five folders with the same run (run.txt says seed 1).
J=$TMPD/judge
"$BIN/fig3" --quiet --out "$J/one" || cli_fail "fig3 run"
for s in 1 2 3 4 5; do mkdir -p "$J/copies/fig3/seed$s" && cp "$J/one/stats.csv" "$J/one/run.txt" "$J/copies/fig3/seed$s/"; done
check "verdicts on five copies of one run" "$V" --quiet --runs "$J/copies" --skip "$(only fig3)" --out "$J/v1"
grep -q '^fig3.adam_beats_gd,.*,INVALID,' "$J/v1/verdicts.csv" && cli_ok || cli_fail "copies of seed 1 judged: $(grep adam_beats_gd "$J/v1/verdicts.csv" | cut -c1-200)"
grep -q "seed 2: run.txt says seed 1, not the folder's seed 2" "$J/v1/verdicts.md" && cli_ok || cli_fail "the seed line named"
# the same copies with run.txt relabelled (seed line and --seed): the statistics give them away
for s in 2 3 4 5; do
  sed -i "s/^seed: 1\$/seed: $s/; s/^command: \\(.*\\)\$/command: \\1 --seed $s/" "$J/copies/fig3/seed$s/run.txt"
done
sed -i "s/^command: \\(.*\\)\$/command: \\1 --seed 1/" "$J/copies/fig3/seed1/run.txt"
check "verdicts on relabelled copies" "$V" --quiet --runs "$J/copies" --skip "$(only fig3)" --out "$J/v2"
grep -q '^fig3.adam_beats_gd,.*,INVALID,' "$J/v2/verdicts.csv" && grep -q "equals seed 1's in every value" "$J/v2/verdicts.md" &&
  cli_ok || cli_fail "relabelled copies judged: $(grep adam_beats_gd "$J/v2/verdicts.csv" | cut -c1-200)"
# real runs of fig3 (one scale: 'scale: none') are judged at either scale
for s in 1 2 3 4 5; do "$BIN/fig3" --quiet --seed $s --out "$J/real/fig3/seed$s" || cli_fail "fig3 seed $s"; done
grep -q '^scale: none$' "$J/real/fig3/seed1/run.txt" && cli_ok || cli_fail "fig3's run.txt: no 'scale: none'"
check "verdicts --scale paper on fig3's runs" "$V" --quiet --runs "$J/real" --scale paper --skip "$(only fig3)" --out "$J/v3"
grep -q '^fig3.adam_beats_gd,.*,PASS,' "$J/v3/verdicts.csv" && cli_ok || cli_fail "fig3's own runs: $(grep adam_beats_gd "$J/v3/verdicts.csv" | cut -c1-200)"
# a program with a scale run without --scale ran at its default, quick: a paper study refuses it
for s in 1 2 3; do "$BIN/fig4" --quiet --seed $s --threads 1 --out "$J/f4/fig4/seed$s" || cli_fail "fig4 seed $s"; done
grep -q '^scale: quick$' "$J/f4/fig4/seed1/run.txt" && cli_ok || cli_fail "fig4's run.txt records no scale"
check "verdicts --scale paper on quick fig4 runs" "$V" --quiet --runs "$J/f4" --seeds 1,2,3 --scale paper --skip "$(only fig4)" --out "$J/v4"
grep -q "run at scale 'quick', the study's is 'paper'" "$J/v4/verdicts.md" && ! grep -q '^fig4\.[^,]*,.*,\(PASS\|FAIL\),' "$J/v4/verdicts.csv" &&
  cli_ok || cli_fail "quick fig4 runs in a paper study: $(cut -d, -f1,26 "$J/v4/verdicts.csv" | tr '\n' ' ')"
grep -q "at paper scale" "$J/v4/summary.md" && cli_ok || cli_fail "summary names the study's scale"
# a run.txt from before the scale line, no --scale: the default, quick
sed -i '/^scale: /d' "$J/f4/fig4/seed"*/run.txt
check "verdicts --scale paper, run.txt without a scale line" "$V" --quiet --runs "$J/f4" --seeds 1,2,3 --scale paper --skip "$(only fig4)" --out "$J/v5"
grep -q "run at scale 'quick', the study's is 'paper'" "$J/v5/verdicts.md" && cli_ok || cli_fail "no scale line, no --scale: not refused"
# a deterministic experiment (exact rules only) may share a seed: table1_memory writes 'seed: 0'
for s in 1 2; do "$BIN/table1_memory" --quiet --out "$J/t1/table1_memory/seed$s" || cli_fail "table1_memory"; done
check "verdicts on table1_memory" "$V" --quiet --runs "$J/t1" --seeds 1,2 --skip "$(only table1_memory)" --out "$J/v6"
grep -q '^table1_memory.v_removed,.*,PASS,' "$J/v6/verdicts.csv" && cli_ok || cli_fail "an exact claim: $(grep v_removed "$J/v6/verdicts.csv" | cut -c1-200)"

# ---- 9, 12, 13. the judge's readers: one bad seed's file makes that seed INVALID, named ----------
# judge_seed2 DESCRIPTION REASON: fig3's real runs with seed 2's stats.csv or run.txt as the
# case left it: verdicts exits 0 within 60 s, seed 2 is INVALID with REASON, the others judged
judge_seed2() {
  timeout 60 "$V" --quiet --runs "$J/bad" --skip "$(only fig3)" --out "$J/vbad" 2>"$TMPD/err"; local rc=$?
  if [ $rc = 0 ] && grep -q "seed 2: .*$2" "$J/vbad/verdicts.md" && grep -q '^fig3.adam_beats_gd,.*,INVALID,' "$J/vbad/verdicts.csv"; then cli_ok
  else cli_fail "$1: exit $rc $(head -c 200 "$TMPD/err"); $(grep -m1 'Why INVALID' "$J/vbad/verdicts.md" 2>/dev/null)"; fi
  rm -rf "$J/bad" "$J/vbad"; cp -r "$J/real" "$J/bad"
}
cp -r "$J/real" "$J/bad"
s2=$J/bad/fig3/seed2
rm "$s2/stats.csv" && mkfifo "$s2/stats.csv"
judge_seed2 "a FIFO as stats.csv" "stats.csv is not a regular file"
rm "$s2/stats.csv" && truncate -s 1500M "$s2/stats.csv"
judge_seed2 "a 1.5 GB stats.csv" "stats.csv is 1500.0 MB, more than"
rm "$s2/stats.csv" && mkdir "$s2/stats.csv"
judge_seed2 "a folder as stats.csv" "stats.csv is a folder"
sed -i '2s/^/\n/' "$s2/stats.csv"
judge_seed2 "a blank line in stats.csv" "line 2 is not 'name,value'"
sed -i '2s/,/, /' "$s2/stats.csv"
judge_seed2 "a space before a value" "line 2 is not 'name,value'"
sed -i '2s/^/ /' "$s2/stats.csv"
judge_seed2 "a space before a name" "line 2 is not 'name,value'"
sed -i '2s/,.*/,0x1p3/' "$s2/stats.csv"
judge_seed2 "a hex value" "line 2 is not 'name,value'"
sed -i 's/^\(fig3.gap.adam_gd.full\),.*/\1,-1e-400/' "$s2/stats.csv"
judge_seed2 "a value that underflows to -0" "is not 'name,value' as stats_put writes it: 'fig3.gap.adam_gd.full,-1e-400'"
printf 'fig3.x,1\nfig3.x,2\n' >>"$s2/stats.csv"
judge_seed2 "a name twice" "names 'fig3.x' twice"
sed -i 's/$/\r/' "$s2/run.txt"
judge_seed2 "a run.txt with CR LF line ends" "run.txt holds a carriage return"
rm "$s2/run.txt" && mkfifo "$s2/run.txt"
judge_seed2 "a FIFO as run.txt" "run.txt is not a regular file"
# a subnormal is a value %.17g writes: kept
sed -i 's/^\(fig3.ref.gap.gd_adam.diag_h1\),.*/\1,4.9406564584124654e-324/' "$s2/stats.csv"
check "a subnormal value" "$V" --quiet --runs "$J/bad" --skip "$(only fig3)" --out "$J/vbad"
grep -q '^fig3.adam_beats_gd,.*,PASS,' "$J/vbad/verdicts.csv" && cli_ok || cli_fail "a subnormal made the seed unusable: $(grep -m1 'Why' "$J/vbad/verdicts.md")"
rm -rf "$J/bad" "$J/vbad"

# ---- 5-9, 12, 13. foreign checkpoints and data: a model file, its config, its vocabulary ---------
M=$TMPD/models
mkdir -p "$M"
"${P[@]}" --steps 20 --save-safetensors "$M/m.safetensors" --out "$M/t" || cli_fail "the model of the cases"
HB=("$BIN/hessian_blocks" --quiet --hess-batch 4 --panel 16)
# 5. a size flag beside --model FILE must agree with the file (the file's sizes are used)
expect_user_error "--model with --T 16 --C 32 --heads 8" timeout 60 "${HB[@]}" --model "$M/m.safetensors" --T 16 --C 32 --heads 8 --out "$TMPD/e5"
grep -q -- "--C 32 but $M/m.safetensors has C = 8" "$TMPD/err" && cli_ok || cli_fail "the flag named: $(cat "$TMPD/err")"
check "--model with --T 4 (the file's own)" timeout 60 "${HB[@]}" --model "$M/m.safetensors" --T 4 --heads 2 --out "$TMPD/ok5"
expect_no_files "no output after a size flag that disagrees" "$TMPD/e5"
# 6. the config JSON wins over the metadata for every key, and says so when they disagree
printf '{"n_head": 1}' >"$M/h1.json"
"$BIN/tt_probe" --model "$M/m.safetensors" --model-config "$M/h1.json" --out "$TMPD/p6" 2>"$TMPD/err"; rc=$?
[ $rc = 0 ] && grep -q "the config's n_head = 1 overrides the file's metadata (2)" "$TMPD/err" &&
  grep -q "^note: .*n_head = 1 overrides" "$TMPD/p6/run.txt" && cli_ok || cli_fail "a config's n_head over the metadata's: exit $rc: $(cat "$TMPD/err")"
# 8. the vocabulary: written on export, checked on import; a token file given as --text
"$TT" --C 8 --heads 2 --M 12 --T 8 --batch 8 --quiet --steps 20 --data text --save-safetensors "$M/c.safetensors" --out "$M/tc" ||
  cli_fail "a char model"
head -c 30000 /dev/urandom | base64 >"$M/garbage.txt"
expect_user_error "a char model probed on another text" "$BIN/tt_probe" --model "$M/c.safetensors" --data text --text "$M/garbage.txt" --out "$TMPD/e8"
grep -q "was trained on another text: id 0 is 0x09 in its vocabulary" "$TMPD/err" && cli_ok || cli_fail "the first difference named: $(cat "$TMPD/err")"
check "the char model on its own text" "$BIN/tt_probe" --quiet --model "$M/c.safetensors" --data text --out "$TMPD/ok8"
mkdir -p "$M/tok" && head -c 1600 /dev/urandom | tr '\000-\377' '\000\001\002\003\004\000\001\002\003\004' >"$M/tok/train.bin" && cp "$M/tok/train.bin" "$M/tok/val.bin"
expect_user_error "--text a token file itself" "$TT" --quiet --steps 2 --data text --text "$M/tok/train.bin" --vocab-size 5 --out "$TMPD/e8b"
grep -q "one of nanoGPT's token files, not text: give its folder" "$TMPD/err" && cli_ok || cli_fail "token file as --text: $(cat "$TMPD/err")"
# 13. a text of fewer symbols than the model's vocabulary: the message says so, not --vocab-size
printf 'abc%.0s' $(seq 1 400) >"$M/abc.txt"
expect_user_error "a 3-symbol text for a V = 5 model" "$BIN/tt_probe" --model "$M/m.safetensors" --data text --text "$M/abc.txt" --out "$TMPD/e13"
grep -q "vocabulary of 5 symbols but the text holds only 3 distinct bytes" "$TMPD/err" && ! grep -q -- "--vocab-size" "$TMPD/err" && cli_ok ||
  cli_fail "3 symbols for V = 5: $(cat "$TMPD/err")"
# 9. FIFOs and devices as inputs: refused at once, not waited on; a header of many names is fast
mkfifo "$M/fifo"
expect_user_error "a FIFO as --text" timeout 60 "$TT" --quiet --steps 2 --data text --text "$M/fifo" --out "$TMPD/e9"
grep -q "is not a regular file" "$TMPD/err" && cli_ok || cli_fail "FIFO --text: $(cat "$TMPD/err")"
expect_user_error "a FIFO as --model-config" timeout 60 "$BIN/tt_probe" --model "$M/m.safetensors" --model-config "$M/fifo" --out "$TMPD/e9"
expect_user_error "a FIFO as --model" timeout 60 "$BIN/tt_probe" --model "$M/fifo" --out "$TMPD/e9"
expect_user_error "/dev/zero as --text" timeout 60 "$TT" --quiet --steps 2 --data text --text /dev/zero --out "$TMPD/e9"
grep -q "/dev/zero is not a regular file" "$TMPD/err" && cli_ok || cli_fail "/dev/zero --text: $(cat "$TMPD/err")"
# 400,000 zero-size tensors and one name twice: sorted, the error comes at once (every pair: hours)
awk 'BEGIN { printf "{"; for (i = 0; i < 400000; i++) printf "\"t%d\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[0,0]},", i;
             printf "\"t7\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[0,0]}}" }' >"$M/many.json"
n=$(stat -c %s "$M/many.json")
{ printf "$(printf '\\x%02x' $((n & 255)) $(((n >> 8) & 255)) $(((n >> 16) & 255)) $(((n >> 24) & 255)))\0\0\0\0"; cat "$M/many.json"; } >"$M/many.safetensors"
expect_user_error "400,000 names, one twice (a 60 s hang guard)" timeout 60 "$BIN/tt_probe" --model "$M/many.safetensors" --out "$TMPD/e9"
grep -q "tensor 't7' appears twice" "$TMPD/err" && cli_ok || cli_fail "the name twice: $(cat "$TMPD/err")"
expect_no_files "no output after bad model inputs" "$TMPD/e9"

# ---- 13. spectra's memory is sized by m as used (at most the largest block), and says what to lower ----
case "${BUILD:-build}" in *san*) echo "# skipped: spectra under ulimit -v (sanitized build)";; *)
  expect_user_error "spectra --nv 100000 --m 10000 on blocks of at most 32" env OPENBLAS_NUM_THREADS=1 bash -c \
    "ulimit -v 1500000; exec timeout 60 '$BIN/spectra' --V 5 --C 8 --heads 2 --M 12 --T 4 --steps 20 --batch 8 --hess-batch 6 \
     --nv 100000 --m 10000 --quiet --out '$TMPD/e13s'"
  grep -q "with m = 32 (--m, at most the largest block, 32) on 63 blocks: .* need 6.451 GB.*lower --nv or --m" "$TMPD/err" &&
    cli_ok || cli_fail "spectra's memory: $(cat "$TMPD/err")";;
esac

# ---- 12. the seed list and the command line, strictly ----------------------------------------------
expect_user_error "verdicts --seeds 1,,2" "$V" --seeds 1,,2 --runs "$J/real" --out "$TMPD/e12"
expect_user_error "verdicts --seeds 1e3,2" "$V" --seeds 1e3,2 --runs "$J/real" --out "$TMPD/e12"
# a command line longer than 4 KB is recorded whole (a long --lr cut --out and the rest off)
lr=0.00$(printf '1%.0s' $(seq 1 5000))
check "a 5,000-digit --lr" "${P[@]}" --steps 2 --lr "$lr" --out "$TMPD/longcmd"
cmd=$(sed -n 's/^command: //p' "$TMPD/longcmd/run.txt")
eval "set -- $cmd"
[ "${*: -2:1}" = --out ] && [ "${*: -1}" = "$TMPD/longcmd" ] && [ ${#cmd} -gt 5000 ] && cli_ok || cli_fail "run.txt's command line cut: ${#cmd} bytes, ends '${cmd: -60}'"

# ---- 2. a run killed by SIGKILL: the next run into its folder removes what it left -----------
k=$TMPD/killed
"${P[@]}" --steps 2000000 --checkpoints 0.0001,1 --out "$k" & kp=$!
i=0
while [ ! -e "$k/step000200_vhat.npy" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
kill -KILL $kp; wait $kp 2>/dev/null
[ -e "$k/step000200_params.npy" ] && [ -n "$(find "$k" -name '*.tmp.*')" ] && cli_ok || cli_fail "the killed run left no checkpoint or temporary to clear"
grep -qx 'file: step000200_params.npy' "$k/.files" 2>/dev/null && cli_ok || cli_fail "no journal lists the killed run's committed files"
# beside them: a live process's temporary (this shell's pid) and a dead one's that is a link out
echo live >"$k/other.csv.tmp.$$"
echo precious >"$TMPD/outside.txt"
sh -c 'exit 0' & dead=$!; wait $dead
ln -s "$TMPD/outside.txt" "$k/x.csv.tmp.$dead"
check "a run into the killed run's folder" timeout 60 "${P[@]}" --steps 20 --checkpoints 1 --out "$k"
[ ! -e "$k/step000200_params.npy" ] && [ ! -e "$k/step000200_vhat.npy" ] && cli_ok || cli_fail "the killed run's checkpoints stay: $(ls "$k")"
[ -z "$(find "$k" -name '*.tmp.*' ! -name "other.csv.tmp.$$" ! -name "x.csv.tmp.$dead")" ] && cli_ok ||
  cli_fail "the killed run's temporaries stay: $(find "$k" -name '*.tmp.*')"
[ -e "$k/other.csv.tmp.$$" ] && cli_ok || cli_fail "a running process's temporary was removed"
[ -L "$k/x.csv.tmp.$dead" ] && [ "$(cat "$TMPD/outside.txt")" = precious ] && cli_ok || cli_fail "a link named as a temporary was followed or removed"
[ ! -e "$k/.files" ] && [ "$(grep -c '^file: ' "$k/run.txt")" = 4 ] && cli_ok || cli_fail "after a whole run: the journal stays or run.txt lists $(grep -c '^file: ' "$k/run.txt") files"
rm -f "$k/other.csv.tmp.$$"
# ---- 4. a run.txt naming the lock does not remove it: the second run is still refused ----------
d=$TMPD/lockname
mkdir -p "$d" && printf 'command: x\nfile: .lock\nfile: ./.lock\nfile: .files\n' >"$d/run.txt"
"${P[@]}" --steps 2000000 --out "$d" >/dev/null 2>&1 & lp=$!
i=0
while [ ! -e "$d/loss.csv.tmp.$lp" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
expect_user_error "a second run while the first holds the folder" timeout 60 "$BIN/demo_spectrum" --quiet --out "$d"
grep -q "in use by process $lp" "$TMPD/err" && cli_ok || cli_fail "the holder named: $(cat "$TMPD/err")"
kill -TERM $lp; wait $lp 2>/dev/null

# ---- 3. a link planted under the next temporary's name: the write does not follow it ----------
d=$TMPD/planted
mkdir -p "$d"
echo precious >"$TMPD/w.txt"
# the next pid: a process started just before the run gets the pid before its (a busy box may
# interleave others: then the plant misses, and the other checks still hold)
sh -c 'exit 0' & before=$!; wait $before
for n in 1 2 3 4 5 6 7 8; do ln -s "$TMPD/w.txt" "$d/loss.csv.tmp.$((before + n))"; done
check "a run into a folder with planted links" timeout 60 "${P[@]}" --steps 20 --out "$d"
[ "$(cat "$TMPD/w.txt")" = precious ] && cli_ok || cli_fail "the loss CSV went through a planted link: $(head -c 80 "$TMPD/w.txt")"
[ -f "$d/loss.csv" ] && [ ! -L "$d/loss.csv" ] && cli_ok || cli_fail "loss.csv not written as a file"
# the same through a link named exactly as this process's temporary (a pid is known once started):
# the program itself cannot know it in advance, so plant it from a wrapper that execs the program
echo precious >"$TMPD/w2.txt"
check "a link under the run's own temporary name" timeout 60 bash -c \
  "ln -s '$TMPD/w2.txt' '$d/loss.csv.tmp.'\$\$ && exec ${P[*]} --steps 20 --out '$d'"
[ "$(cat "$TMPD/w2.txt")" = precious ] && [ -f "$d/loss.csv" ] && [ ! -L "$d/loss.csv" ] && cli_ok ||
  cli_fail "a link under the process's own temporary name was written through"
# run_tasks --log: a planted task1.log link is not written through; the log is whole or absent
echo precious >"$TMPD/w3.txt"
mkdir -p "$TMPD/rl" && ln -s "$TMPD/w3.txt" "$TMPD/rl/task1.log"
echo 'echo hello' >"$TMPD/one.txt"
check "run_tasks --log with a planted link" "$BIN/run_tasks" --quiet --log "$TMPD/rl" "$TMPD/one.txt"
[ "$(cat "$TMPD/w3.txt")" = precious ] && [ "$(cat "$TMPD/rl/task1.log")" = hello ] && [ ! -L "$TMPD/rl/task1.log" ] &&
  cli_ok || cli_fail "run_tasks wrote through task1.log's link"
# a task still running: its log is a temporary, task1.log appears only when it ends
echo "echo started; sleep 2; echo done" >"$TMPD/slow.txt"
"$BIN/run_tasks" --quiet --log "$TMPD/rl2" "$TMPD/slow.txt" & rp=$!
sleep 1
[ ! -e "$TMPD/rl2/task1.log" ] && [ -n "$(find "$TMPD/rl2" -name 'task1.log.tmp.*')" ] && cli_ok || cli_fail "a running task's log is not a temporary"
wait $rp
[ "$(cat "$TMPD/rl2/task1.log")" = "started
done" ] && [ -z "$(find "$TMPD/rl2" -name '*.tmp.*')" ] && cli_ok || cli_fail "the log after the task: $(ls "$TMPD/rl2")"

# ---- 10. run_tasks without --log: output discarded, not kept; no task outlives it; old logs go ----
# output without --log is kept nowhere: a TMPDIR without room (or without existence) does not matter
echo "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last line" >"$TMPD/big.txt"
check "3 MB of output without --log, TMPDIR missing" env TMPDIR="$TMPD/no/such" "$BIN/run_tasks" --quiet "$TMPD/big.txt"
printf "%s\n" "echo 'prog: the reason' >&2; exit 3" >"$TMPD/fails.txt"
env TMPDIR="$TMPD/no/such" "$BIN/run_tasks" --quiet "$TMPD/fails.txt" 2>"$TMPD/err"; rc=$?
[ $rc = 3 ] && grep -q "failed with exit 3: prog: the reason" "$TMPD/err" && cli_ok || cli_fail "the failure's last line without --log: exit $rc: $(cat "$TMPD/err")"
# the last line after 200 KB of output (read in pieces: the line is whole in the message)
printf "%s\n" "head -c 200000 /dev/zero | tr '\\0' x; echo; printf 'prog: '; sleep 0.2; echo 'the end' >&2; exit 3" >"$TMPD/longout.txt"
"$BIN/run_tasks" --quiet "$TMPD/longout.txt" 2>"$TMPD/err"; rc=$?
[ $rc = 3 ] && grep -q "failed with exit 3: prog: the end" "$TMPD/err" && cli_ok || cli_fail "the last line after 200 KB: exit $rc: $(head -c 300 "$TMPD/err")"
# a task's background child ends with the task
echo "sleep 300 & echo \$! >$TMPD/bgpid; exit 0" >"$TMPD/bg.txt"
check "a task that leaves a background child" timeout 60 "$BIN/run_tasks" --quiet "$TMPD/bg.txt"
sleep 0.5
bg=$(cat "$TMPD/bgpid")
# (a zombie waiting for a reaper has ended: the state field of /proc/PID/stat)
if [ -e "/proc/$bg" ] && [ "$(sed 's/.*) //' "/proc/$bg/stat" | cut -d' ' -f1)" != Z ]; then
  cli_fail "the task's background child $bg outlives run_tasks"; kill "$bg"
else cli_ok; fi
# a shorter list into the same log folder: the longer list's logs go
printf 'echo 1\necho 2\necho 3\n' >"$TMPD/three.txt"
"$BIN/run_tasks" --quiet --log "$TMPD/rl3" "$TMPD/three.txt" && "$BIN/run_tasks" --quiet --log "$TMPD/rl3" "$TMPD/one.txt" ||
  cli_fail "run_tasks into one log folder twice"
[ "$(cd "$TMPD/rl3" && ls)" = task1.log ] && cli_ok || cli_fail "an earlier list's logs stay: $(cd "$TMPD/rl3" && ls | tr '\n' ' ')"

# ---- 11. SIGPIPE (the reader of stderr gone) is in the cleanup set -------------------------------
PP=("$TT" --V 5 --C 8 --heads 2 --M 12 --T 4 --batch 8)
env --default-signal=PIPE "${PP[@]}" --steps 3000000 --checkpoints 0.00001,1 --out "$TMPD/pp" 2>&1 | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc = 141 ] && [ ! -e "$TMPD/pp/.lock" ] && [ -z "$(find "$TMPD/pp" -name '*.tmp.*')" ] && cli_ok ||
  cli_fail "SIGPIPE at the end of a run: exit $rc, left $(cd "$TMPD/pp" && ls -A | grep -v '^step' | tr '\n' ' ')"
# mid-run (the program writes nothing to stderr while it trains: the signal sent by hand)
env --default-signal=PIPE "${PP[@]}" --quiet --steps 3000000 --checkpoints 0.00001,1 --out "$TMPD/pp2" & pp=$!
i=0
while [ ! -e "$TMPD/pp2/loss.csv.tmp.$pp" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -PIPE $pp; wait $pp; rc=$?
[ $rc = 141 ] && [ ! -e "$TMPD/pp2/.lock" ] && [ -z "$(find "$TMPD/pp2" -name '*.tmp.*')" ] && [ ! -e "$TMPD/pp2/run.txt" ] && cli_ok ||
  cli_fail "SIGPIPE mid-run: exit $rc, left $(cd "$TMPD/pp2" && ls -A | grep -v '^step' | tr '\n' ' ')"

# ---- 14. the signal tests set the dispositions they test: the same under a parent that ignores ----
# (nohup make test &, or any shell without job control, starts its commands with SIGINT and
# SIGQUIT ignored, and nohup SIGHUP: the runs of run_then_signal must not inherit that)
out=$(env --ignore-signal=HUP,INT,QUIT bash -c 'source tests/lib_cli.sh; TT=$1; ulimit -c 0
  for s in INT QUIT HUP; do run_then_signal $s; done; run_then_signal HUP ignore; cli_summary' _ "$TT" 2>&1)
counts=$(printf '%s\n' "$out" | sed -n 's/^# counts //p')
[ "$counts" = "9 0" ] && cli_ok || cli_fail "signal cases under a parent that ignores SIGINT, SIGQUIT, SIGHUP: $(printf '%s' "$out" | head -c 400)"

cli_summary
