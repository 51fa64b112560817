# make sweep's figure: one statistic against the first varied flag, the mean over seeds
# (line and points) inside the band of its smallest and largest seed; one series per
# value of the other varied flags. Reads band.csv (tools/sweep.c). Variables: band, out.
set terminal pngcairo size 900,600 font ",11"
set output out
set datafile separator ","
title = system(sprintf("head -1 '%s' | cut -c3-", band))
xname = system(sprintf("sed -n 2p '%s' | cut -d, -f2", band))
series = system(sprintf("awk -F, 'NR>2{print $1}' '%s' | awk '!seen[$0]++' | tr ' ' '~' | tr '\\n' ' '", band))
numeric = system(sprintf("awk -F, 'NR>2 && $2 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ {bad=1} END{print bad ? 0 : 1}' '%s'", band)) + 0
spread = system(sprintf("awk -F, 'NR>2 {if (min == \"\" || $2 < min) min = $2; if ($2 > max) max = $2} END{print (min > 0 ? max / min : 0)}' '%s'", band)) + 0
set title title noenhanced
set xlabel "--".xname noenhanced
set ylabel "mean over seeds (band: smallest to largest seed)"
set grid lc rgb "#dddddd"
set key top left noenhanced
if (numeric && spread >= 8) { set logscale x 2 }
array colours[6] = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#222222"]
do for [i=1:6] { set linetype i lc rgb colours[i] }
name(i) = system(sprintf("echo '%s' | tr '~' ' '", word(series, i)))
if (numeric) {
    plot for [i=1:words(series)] band using (stringcolumn(1) eq name(i) ? $2 : NaN):6:7 with filledcurves \
             fs transparent solid 0.18 noborder lc i notitle, \
         for [i=1:words(series)] band using (stringcolumn(1) eq name(i) ? $2 : NaN):4 with linespoints pt 7 lw 2 lc i \
             title (words(series) > 1 ? name(i) : "mean")
} else {
    plot for [i=1:words(series)] band using 0:(stringcolumn(1) eq name(i) ? $4 : NaN):6:7:xtic(2) \
             with yerrorbars pt 7 lw 2 lc i title (words(series) > 1 ? name(i) : "mean (bars: smallest to largest seed)")
}
