# Hostile inputs, round four (issue 27): the judge on copied or mislabelled runs,
# leftovers of killed runs, writes through planted links, foreign checkpoints,
# strict readers, run_tasks' output, signals however the tests are started.
# Every case is bounded in time. Numbers in the headings are the issue's items.
source tests/lib_cli.sh
ulimit -c 0
TT=$BIN/train_transformer
V=$BIN/verdicts
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
grep -q '^table1.v_removed,.*,PASS,' "$J/v6/verdicts.csv" && cli_ok || cli_fail "an exact claim: $(grep v_removed "$J/v6/verdicts.csv" | cut -c1-200)"

# ---- 2. a run killed by SIGKILL: the next run into its folder removes what it left -----------
P=("$TT" --V 5 --C 8 --heads 2 --M 12 --T 4 --batch 8 --quiet)
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

cli_summary
