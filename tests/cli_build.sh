#!/usr/bin/env bash
# The build: flags the build needs survive a user's CFLAGS, and building on a
# machine that has the libraries never calls apt-get or dpkg; the compiler and
# its flags go together; make clean keeps paper-scale results; make
# verdict-tasks (MPI) schedules the runs make verdicts runs.
source "$(dirname "$0")/lib_cli.sh"

# apt-get, apt, dpkg and dpkg-query that fail loudly and leave a mark
FAKE="$TMPD/fakebin"
mkdir -p "$FAKE"
for c in apt-get apt dpkg dpkg-query; do
  printf '#!/bin/sh\necho "%s must not be called" >&2\ntouch "%s/called"\nexit 1\n' "$c" "$FAKE" >"$FAKE/$c"
  chmod +x "$FAKE/$c"
done

# a real compile and link with CFLAGS=-O3 into a scratch build folder
OBJ="$TMPD/b/core/errors.o"
if PATH="$FAKE:$PATH" MAKEFLAGS= make --no-print-directory CFLAGS=-O3 BUILD="$TMPD/b" "$OBJ" >"$TMPD/make.out" 2>&1 \
   && [ -s "$OBJ" ] && grep -q -- "-O3" "$TMPD/make.out" && grep -q -- " -I\. " "$TMPD/make.out"; then cli_ok
else cli_fail "make CFLAGS=-O3 of one object: $(tail -3 "$TMPD/make.out")"; fi
[ ! -e "$FAKE/called" ] && cli_ok || cli_fail "building an object called apt-get or dpkg"

# every recipe of a full rebuild keeps the toolkit's flags and calls no installer
PATH="$FAKE:$PATH" MAKEFLAGS= make --no-print-directory -n -B CFLAGS=-O3 BUILD="$TMPD/b" all >"$TMPD/plan" 2>&1
compiles=$(grep -c -- " -c " "$TMPD/plan")
[ "$compiles" -gt 20 ] && [ "$compiles" -eq "$(grep -- ' -c ' "$TMPD/plan" | grep -c -- ' -I\. ')" ] && cli_ok \
  || cli_fail "a compile line lost -I. ($compiles compiles)"
links=$(grep -c -- " -o $TMPD/b/bin/" "$TMPD/plan")
[ "$links" -gt 5 ] && [ "$links" -eq "$(grep -- " -o $TMPD/b/bin/" "$TMPD/plan" | grep -c -- '-lopenblas')" ] && cli_ok \
  || cli_fail "a link line lost the libraries ($links links)"
grep -q "deps.sh\|apt-get" "$TMPD/plan" && cli_fail "make all plans to run the installer" || cli_ok
[ ! -e "$FAKE/called" ] && cli_ok || cli_fail "planning the build called apt-get or dpkg"

# the compiler: gcc unless CC is given, and gcc-only flags only for a compiler that takes them
env -u CC MAKEFLAGS= make --no-print-directory -n -B BUILD="$TMPD/b" "$TMPD/b/core/errors.o" >"$TMPD/gcc" 2>&1
grep -q "^gcc .*-fvect-cost-model=dynamic" "$TMPD/gcc" && cli_ok || cli_fail "make without CC does not compile with gcc"
if command -v clang >/dev/null; then
  MAKEFLAGS= make --no-print-directory -n -B CC=clang BUILD="$TMPD/b" "$TMPD/b/core/errors.o" >"$TMPD/clang" 2>&1
  grep -q "^clang " "$TMPD/clang" && ! grep -q -- "-fvect-cost-model" "$TMPD/clang" && cli_ok ||
    cli_fail "make CC=clang: $(grep -- ' -c ' "$TMPD/clang")"
fi

# make clean keeps results-paper/ and figures-paper/; make distclean removes them
MAKEFLAGS= make --no-print-directory -n clean >"$TMPD/clean" 2>&1
grep -q "rm -rf .*results" "$TMPD/clean" && ! grep -q -- "-paper" "$TMPD/clean" && cli_ok ||
  cli_fail "make clean: $(cat "$TMPD/clean")"
MAKEFLAGS= make --no-print-directory -n distclean >"$TMPD/distclean" 2>&1
grep -q "results-paper" "$TMPD/distclean" && grep -q "figures-paper" "$TMPD/distclean" && cli_ok ||
  cli_fail "make distclean keeps the paper-scale results"

# make verdict-tasks lists the runs make verdicts makes: VERDICT_SKIP leaves its experiments out
tasks() { # one line per run the recipe would list
  MAKEFLAGS= make --no-print-directory -n verdict-tasks SEEDS=1 RES="$TMPD/res" "$@" 2>&1 |
    grep -o "OPENBLAS_NUM_THREADS=1 build/bin/[a-z0-9_]* "
}
tasks >"$TMPD/all"
tasks VERDICT_SKIP="exp2_blockwise_gd leave_out" >"$TMPD/skip"
grep -q "bin/exp2_blockwise_gd " "$TMPD/all" && grep -q "bin/leave_out " "$TMPD/all" && cli_ok ||
  cli_fail "verdict-tasks without a skip does not schedule exp2_blockwise_gd and leave_out"
grep -q "bin/exp2_blockwise_gd \|bin/leave_out " "$TMPD/skip" && cli_fail "verdict-tasks ignores VERDICT_SKIP" || cli_ok
[ "$(wc -l <"$TMPD/skip")" -eq $(($(wc -l <"$TMPD/all") - 2)) ] && cli_ok ||
  cli_fail "verdict-tasks with two skipped: $(wc -l <"$TMPD/skip") of $(wc -l <"$TMPD/all") runs"
# a skipped experiment's seed-band figure is not asked for (it would need the runs not made; the
# library's build lines name its claims file, verdict/claims/block_structure.c)
MAKEFLAGS= make --no-print-directory -n verdicts-only VERDICT_SKIP=block_structure >"$TMPD/vskip" 2>&1 && \
  ! grep -v -e '--skip block_structure' -e 'verdict/claims/' "$TMPD/vskip" | grep -q 'block_structure' \
  && grep -q -- '--skip block_structure' "$TMPD/vskip" && cli_ok ||
  cli_fail "make verdicts VERDICT_SKIP=block_structure: $(grep -m1 'No rule\|block_structure' "$TMPD/vskip")"
# every script the Makefile and its fragments call exists and is executable (a moved script
# once broke make test-torch, which only CI runs)
missing=""
for f in $(grep -ohE '\./(scripts|tools|tests)/[A-Za-z0-9_./-]+\.(sh|py)' Makefile mk/*.mk .ci/run | sort -u); do
  [ -x "$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && cli_ok || cli_fail "scripts the Makefile calls are missing:$missing"
cli_summary
