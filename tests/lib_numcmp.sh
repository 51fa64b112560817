# lib_numcmp.sh — sourced by the hessian_blocks tests: compare two runs' outputs.
# numcmp A B [TOL]: two text files (CSV, gnuplot matrices) token by token: equal
#   strings, or numbers whose difference is at most TOL (1e-12) times the larger
#   magnitude. Prints the first mismatch; status 1 on a mismatch.
# npy_text F: the values of a float64 .npy, one per line (od, round-trip digits).
# outcmp DIR1 DIR2 [TOL]: every .csv and .npy of DIR1 against DIR2 with numcmp
#   (TOL = 0: byte-identical).
numcmp() {
  local tol=${3:-1e-12}
  paste -d ' ' <(tr ', \t' '\n\n\n' <"$1" | grep -v '^$') <(tr ', \t' '\n\n\n' <"$2" | grep -v '^$') |
    awk -v tol="$tol" -v f="$1" '
      NF != 2 { print "numcmp: " f ": different token counts"; bad = 1; exit 1 }
      $1 == $2 { next }
      $1 ~ /^[-+0-9.eE]+$/ && $2 ~ /^[-+0-9.eE]+$/ {
        a = $1 + 0; b = $2 + 0; d = a - b; if (d < 0) d = -d
        m = a < 0 ? -a : a; mb = b < 0 ? -b : b; if (mb > m) m = mb
        if (d <= tol * m) next
      }
      { print "numcmp: " f " token " NR ": " $1 " vs " $2; bad = 1; exit 1 }
      END { exit bad }'
}
npy_text() {
  local hl; hl=$(od -A n -t u2 -j 8 -N 2 "$1" | tr -d ' ')
  od -A n -t f8 -v -j $((hl + 10)) "$1" | tr -s ' ' '\n' | grep -v '^$'
}
outcmp() {
  local a=$1 b=$2 tol=${3:-1e-12} f n rc=0
  for f in "$a"/*.csv "$a"/*.npy; do
    n=${f##*/}
    [ -e "$b/$n" ] || { echo "outcmp: $b/$n missing"; rc=1; continue; }
    if [ "$tol" = 0 ]; then cmp -s "$f" "$b/$n" || { echo "outcmp: $n differs"; rc=1; }
    elif [ "${n%.npy}" != "$n" ]; then numcmp <(npy_text "$f") <(npy_text "$b/$n") "$tol" || rc=1
    else numcmp "$f" "$b/$n" "$tol" || rc=1; fi
  done
  return $rc
}
