#!/usr/bin/env bash
# Outputs byte-identical before and after a change: builds two commits in clean
# clones under a scratch folder, runs in each `make figures-only` (every
# experiment at quick scale, the figures and their claims) and a few tool runs
# that make figures does not make, then compares every file of the two result
# folders but run.txt (the times, the commit). Prints the files that differ and
# exits 1 if any does.
#   scripts/compare_outputs.sh [BASE [NEW [SCRATCH]]]
#     BASE     the commit before (default main), NEW the commit after (default HEAD)
#     SCRATCH  where the clones go (default /tmp/compare_outputs); reused: a clone
#              already at its commit is not rebuilt, nor its results rerun
# Heavy (about 10 minutes of CPU per side): run it niced, on a quiet machine.
set -euo pipefail
BASE=${1:-main}
NEW=${2:-HEAD}
SCRATCH=${3:-/tmp/compare_outputs}
REPO=$(git rev-parse --show-toplevel)
mkdir -p "$SCRATCH"

# the tool runs beside make figures: the model registry's users and the seed streams
tool_runs() { # in a clone: each run into out/<name>
  local b=build/bin tt="--steps 20 --hess-batch 8 --panel 16" mlp="--mlp-width 3 --mlp-pool 7 --mlp-eval-n 50"
  $b/hessian_blocks --model tt $tt --out out/hb_tt --quiet
  $b/hessian_blocks --model mlp $tt $mlp --out out/hb_mlp --quiet
  $b/hessian_blocks --model tt $tt --partition alg2 --path full --out out/hb_full --quiet
  $b/fig6 --steps 20 --hess-batch 8 --save-safetensors out/gpt.safetensors --out out/fig6_small --quiet
  $b/hessian_blocks --model out/gpt.safetensors --hess-batch 8 --out out/hb_file --quiet
  $b/heatmap --model out/gpt.safetensors --hess-batch 8 --block h0.attn.query --out out/heatmap --quiet
  $b/spectra --model mlp $tt $mlp --trace-probes 4 --out out/spectra_mlp --quiet
  $b/spectra --model out/gpt.safetensors --hess-batch 8 --trace-probes 4 --out out/spectra_file --quiet
  $b/partition_check --model both $tt $mlp --out out/partition_check --quiet
  $b/partition_check --model out/gpt.safetensors --hess-batch 8 --out out/partition_check_file --quiet
  $b/spectra_check $tt $mlp --m 5,10 --nv 1,2 --default-m 5 --default-nv 1 --checkpoints 0,0.5 \
    --out out/spectra_check --quiet >out/spectra_check.stdout
  sed -i 's/([0-9.]* s)/(s)/g' out/spectra_check.stdout   # its times
}

side() { # name commit: a clone at the commit, built, its outputs made
  local name=$1 commit dir
  commit=$(git -C "$REPO" rev-parse "$2")
  dir="$SCRATCH/$name"
  if [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" != "$commit" ] || [ ! -e "$dir/out/done" ]; then
    rm -rf "$dir"
    git clone -q --no-checkout "$REPO" "$dir"
    git -C "$dir" checkout -q "$commit"
    echo "== $name: $commit"
    (cd "$dir" && nice make --no-print-directory -j2 all >build.log 2>&1 &&
       { /usr/bin/time -f "$name figures-only: %e s wall, %U s user, %S s sys" \
           nice make --no-print-directory figures-only >figures.log 2>&1; tail -1 figures.log; } &&
       mkdir -p out && tool_runs && touch out/done) || { echo "$name failed: see $dir/*.log" >&2; exit 1; }
  fi
}

side base "$BASE"
side new "$NEW"
differ=0 same=0
cd "$SCRATCH"
for top in results figures out; do
  while IFS= read -r f; do
    rel=${f#base/}
    if [ ! -e "new/$rel" ]; then echo "only in $BASE: $rel"; differ=$((differ + 1))
    elif cmp -s "$f" "new/$rel"; then same=$((same + 1))
    else echo "differs: $rel"; differ=$((differ + 1)); fi
  done < <(find "base/$top" -type f ! -name run.txt ! -name .lock ! -name done | sort)
  while IFS= read -r f; do
    rel=${f#new/}
    [ -e "base/$rel" ] || { echo "only in $NEW: $rel"; differ=$((differ + 1)); }
  done < <(find "new/$top" -type f ! -name run.txt ! -name .lock ! -name done | sort)
done
echo "compare_outputs: $same files identical, $differ differ ($BASE vs $NEW, run.txt left out)"
[ "$differ" -eq 0 ]
