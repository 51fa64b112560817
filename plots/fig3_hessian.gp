# Paper Fig. 3(a)/(c): heatmap of |H| read straight from the .npy (float64, C order),
# log colour scale; exact zeros (off the blocks) are left white.
# Variables: res (results folder), mat ('H' or 'H1'), out.
set terminal pngcairo size 640,560 font ",11"
set output out
file = res.'/'.mat.'.npy'
skip = 10 + system(sprintf("od -An -tu2 -j8 -N2 %s", file))
n = int(sqrt((system(sprintf("stat -c %%s %s", file)) - skip) / 8) + 0.5)
set size ratio -1
set xrange [-0.5:n - 0.5]
set yrange [n - 0.5:-0.5]
set xlabel "column j"
set ylabel "row i"
set logscale cb
set format cb "10^{%T}"
set cblabel "|H_{ij}|"
set palette defined (0 "#fff7ec", 1 "#fdd49e", 2 "#fc8d59", 3 "#d7301f", 4 "#7f0000")
if (mat eq 'H') {
    set title sprintf("Fig. 3(a): |H| of the three-block quadratic (%dx%d)", n, n)
} else {
    set title sprintf("Fig. 3(c): |H_1|, the first dense block (%dx%d)", n, n)
}
plot file binary skip=skip array=(n,n) format="%float64" endian=little \
     using (abs($1) > 0 ? abs($1) : NaN) with image notitle
