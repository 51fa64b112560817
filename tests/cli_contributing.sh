#!/usr/bin/env bash
# docs/contributing.md followed once: in a copy of the tree (its files and its
# build), the toy experiment's files are written from the page's own blocks
# (<!-- file: PATH --> and <!-- append: PATH --> before a fenced block), then
# built, run and drawn by make as the page says; its registration keeps it out
# of DATA=text, and a fragment that does not register its figure stops make.
# Also: the docs index is complete (every docs/*.md linked from docs/README.md).
source "$(dirname "$0")/lib_cli.sh"
BUILD=${BUILD:-build}

# ---- the docs index ----------------------------------------------------------------------
for f in docs/*.md; do
  n=${f#docs/}
  [ "$n" = README.md ] && continue
  grep -qF "]($n)" docs/README.md && cli_ok || cli_fail "docs/README.md does not link $n"
done

# ---- a copy of the tree, with its build ----------------------------------------------------
COPY="$TMPD/tree"
mkdir -p "$COPY"
git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null |
  tar -xf - -C "$COPY"
cp -a "$BUILD" "$COPY/$BUILD"
SANFLAG=$([ "${BUILD%-san}" != "$BUILD" ] && echo SAN=1 || echo SAN=0)
mk() { (cd "$COPY" && MAKEFLAGS= make --no-print-directory "$SANFLAG" "$@"); }

# The page's blocks: a marker line, then a fenced block; file: writes it, append: adds it.
awk -v root="$COPY" '
  /^<!-- (file|append): [^ ]+ -->$/ { mode = $2; path = root "/" $3; want = 1; next }
  want && /^```/ { inblock = 1; want = 0; if (mode == "file:") printf "" > path; next }
  inblock && /^```$/ { inblock = 0; close(path); next }
  inblock { print >> path }
' docs/contributing.md
for f in experiments/toy.c mk/toy.mk plots/toy.gp docs/toy.md; do
  [ -s "$COPY/$f" ] && cli_ok || cli_fail "contributing.md gives no $f"
done
grep -qF "](toy.md)" "$COPY/docs/README.md" && cli_ok || cli_fail "contributing.md's index line not appended"

# ---- built, run and drawn by make -------------------------------------------------------
if mk "$BUILD/bin/toy" >"$TMPD/build.log" 2>&1; then cli_ok; else cli_fail "make $BUILD/bin/toy: $(tail -3 "$TMPD/build.log")"; fi
"$COPY/$BUILD/bin/toy" --help >"$TMPD/help" 2>&1 && grep -q -- "--seed" "$TMPD/help" && cli_ok || cli_fail "toy --help"
expect_user_error "toy --n -1" "$COPY/$BUILD/bin/toy" --n -1 --out "$TMPD/bad"
expect_no_files "toy --n -1 leaves nothing" "$TMPD/bad"
if mk figures/toy.png results/toy/claims.txt >"$TMPD/run.log" 2>&1; then cli_ok; else cli_fail "make figures/toy.png: $(tail -3 "$TMPD/run.log")"; fi
[ -s "$COPY/figures/toy.png" ] && cli_ok || cli_fail "no figures/toy.png"
grep -q "^PASS: the mean of 100 draws" "$COPY/results/toy/claims.txt" && cli_ok || cli_fail "toy's claims: $(cat "$COPY/results/toy/claims.txt")"
grep -q "^toy.control.mean," "$COPY/results/toy/stats.csv" && [ -s "$COPY/results/toy/run.txt" ] && cli_ok ||
  cli_fail "toy's stats.csv and run.txt"
# the docs index test passes in the copy with the toy's page
(cd "$COPY" && grep -qF "](toy.md)" docs/README.md) && cli_ok || cli_fail "toy.md not in the copy's index"

# ---- its registration: in make figures, not under DATA=text; in make verdicts ------------
mk print-FIGURES | tr ' ' '\n' | grep -qx "figures/toy.png" && cli_ok || cli_fail "make print-FIGURES lacks the toy"
mk print-FIGURES DATA=text | tr ' ' '\n' | grep -q "toy" && cli_fail "DATA=text makes the toy's figure" || cli_ok
mk print-FIGURES DATA=text | tr ' ' '\n' | grep -q "figures-text/fig6_query.png" && cli_ok ||
  cli_fail "DATA=text lost the Transformer's figures"
mk -n verdicts-only SEEDS=2 >"$TMPD/v" 2>&1
grep -q "bin/toy --scale quick --seed 1 " "$TMPD/v" && grep -q "bin/toy --scale quick --seed 2 " "$TMPD/v" && cli_ok ||
  cli_fail "make verdicts does not run the toy per seed: $(grep -m1 toy "$TMPD/v")"
mk -n verdicts-only SEEDS=2 DATA=text >"$TMPD/vt" 2>&1
grep -q "bin/toy " "$TMPD/vt" && cli_fail "make verdicts DATA=text runs the toy" || cli_ok

# ---- a fragment that does not register its experiment stops make ----------------------
sed -i '/^NON_TT_EXPS += toy$/d' "$COPY/mk/toy.mk"
mk -n figures-only >"$TMPD/unreg" 2>&1 && cli_fail "an unregistered figure did not stop make" ||
  { grep -q "figures/toy.png: no experiment of TT_EXPS or NON_TT_EXPS names it" "$TMPD/unreg" && cli_ok ||
      cli_fail "unregistered: $(tail -1 "$TMPD/unreg")"; }
echo "TT_EXPS += toy" >>"$COPY/mk/toy.mk"
echo "NON_TT_EXPS += toy" >>"$COPY/mk/toy.mk"
mk -n figures-only >"$TMPD/both" 2>&1 && cli_fail "an experiment in both lists did not stop make" ||
  { grep -q "toy: registered in both" "$TMPD/both" && cli_ok || cli_fail "both lists: $(tail -1 "$TMPD/both")"; }
cli_summary
