#!/usr/bin/env bash
# The build: flags the build needs survive a user's CFLAGS, and building on a
# machine that has the libraries never calls apt-get or dpkg.
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
cli_summary
