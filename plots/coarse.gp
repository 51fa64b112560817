# Coarse partitions (coarse): left, the share of Algorithm 3's progress each run
# loses, s = min(1, (L - L_alg3)/(L_0 - L_alg3)), against the multiple of the
# partition's own best learning rate (1 = no better than the initialisation or
# diverged; open points: diverged); right, the training loss of every partition
# at 2x its best lr (spikes show there).
# Variables: out (PNG), res (the run's folder: runs.csv, train.csv, reference.csv).
set terminal pngcairo size 1300,560 font ",10"
set output out
set datafile separator ","
set key noenhanced top left box opaque font ",9"
set grid lc rgb "#dddddd"
parts = "alg3 alg2 whole merged_heads random"
array lab[5] = ["Algorithm 3", "Algorithm 2 (per tensor)", "one block (whole model)", "Algorithm 3, q/k merged", \
                "random layout of Alg. 3's sizes"]
set linetype 1 lc rgb "#0077bb" lw 2 pt 7
set linetype 2 lc rgb "#009988" lw 2 pt 5
set linetype 3 lc rgb "#cc3311" lw 2 pt 9
set linetype 4 lc rgb "#ee7733" lw 2 pt 11
set linetype 5 lc rgb "#aa4499" lw 2 pt 13
layers = system(sprintf("awk -F, '$1==\"coarse.layers\"{print $2}' %s/stats.csv", res))
set multiplot layout 1,2 title sprintf("Adam-mini with partitions coarser than Algorithm 3 (%s-layer Transformer, one seed)", layers)
set logscale x 2
set xrange [0.8:5]
set xtics ("1x" 1, "2x" 2, "4x" 4)
set yrange [*:1.1]
set xlabel "multiple of the partition's own best learning rate"
set ylabel "share of Algorithm 3's progress lost (capped at 1)"
set title "final held-out loss"
sel(p) = sprintf("< awk -F, -v p=%s '$1==p' %s/runs.csv", p, res)
plot for [i=1:5] sel(word(parts, i)) using 2:5 with linespoints lt i title lab[i], \
     for [i=1:5] sel(word(parts, i)) using 2:($6 > 0 ? $5 : 1/0) with points pt 6 ps 2.5 lc rgb "black" notitle, \
     0 with lines dt 2 lc rgb "#555555" notitle
unset logscale x
set autoscale x
set xtics auto
set yrange [*:*]
set logscale y
set xlabel "step"
set ylabel "training loss (batch of 64)"
set title "training loss at 2x the best lr (spike: above 1.5x the running minimum)"
plot for [i=1:5] sprintf("%s/train.csv", res) using 1:(column(word(parts, i)."_x2")) with lines lt i title lab[i]
unset multiplot
