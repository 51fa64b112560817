# Paper Fig. 5d: per-tensor gap of Adam leave-one-out (best of its lr grid) minus Adam,
# held-out loss paired per position, bars = +- 2 standard errors.
# Variables: out (PNG), res (results/leave_out folder).
set terminal pngcairo size 1000,560 font ",11"
set output out
set datafile separator ","
set title "Adam leave-one-out: held-out loss minus Adam's, per tensor (error bars: 2 SE)" noenhanced
set ylabel "loss difference (negative: one lr per tensor is better)"
set style fill solid 0.6 border -1
set boxwidth 0.7
set xtics rotate by -60 noenhanced font ",9"
set grid ytics lc rgb "#dddddd"
set key off
set xrange [-0.7:*]
set datafile columnheaders
set xzeroaxis lt -1
plot res.'/gap.csv' using 0:6:xtic(2) with boxes lc rgb "#4477aa", \
     '' using 0:6:(2*$7) with yerrorbars lc rgb "#222222" pt -1
