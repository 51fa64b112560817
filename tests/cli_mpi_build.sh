# The MPI build stays apart: the default build never compiles with mpicc or
# -DTK_MPI nor links ScaLAPACK; MPI=1 does all three, into its own folder.
source tests/lib_cli.sh
# the plans of a plain make: not SAN=1 or MPI=1 inherited from a make test SAN=1 around us
unset MAKEFLAGS MAKELEVEL MFLAGS SAN MPI SCALE
make --no-print-directory -n -B BUILD="$TMPD/b" all >"$TMPD/plan" 2>&1
grep -q -- "-DTK_MPI\|mpicc\|scalapack" "$TMPD/plan" && cli_fail "the default build plans MPI" || cli_ok
grep -q -- " -o $TMPD/b/bin/hessian_blocks" "$TMPD/plan" && cli_ok || cli_fail "the default build makes hessian_blocks"
if command -v mpicc >/dev/null && pkg-config --exists scalapack-openmpi 2>/dev/null; then
  make --no-print-directory -n -B MPI=1 all >"$TMPD/mplan" 2>&1
  c=$(grep -c -- " -c " "$TMPD/mplan")
  [ "$c" -gt 20 ] && [ "$c" -eq "$(grep -- ' -c ' "$TMPD/mplan" | grep -c -- '^mpicc .*-DTK_MPI')" ] && cli_ok ||
    cli_fail "MPI=1: a compile without mpicc -DTK_MPI"
  grep -- "-o build-mpi/bin/hessian_blocks" "$TMPD/mplan" | grep -q -- "-lscalapack-openmpi" && cli_ok ||
    cli_fail "MPI=1: hessian_blocks not linked with ScaLAPACK into build-mpi/"
  grep -q -- " build/" "$TMPD/mplan" && cli_fail "MPI=1 writes into build/" || cli_ok
fi
make --no-print-directory -n MPI=2 >/dev/null 2>&1 && cli_fail "MPI=2 accepted" || cli_ok
cli_summary
