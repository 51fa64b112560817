# Paper Fig. 5d: per tensor, Adam leave-one-out at its best searched lr, and the same
# tensor frozen (lr 0, the claim's control), as held-out loss above Adam's in shares of
# Adam's progress (L - L_Adam)/(L_0 - L_Adam); bars +- 2 paired standard errors; the
# dashed line is the on-par margin (0.02).
# Variables: out (PNG), res (results/leave_out folder).
set terminal pngcairo size 1000,560 font ",11"
set output out
set datafile separator ","
set title "Adam leave-one-out per tensor: searched lr vs frozen (excess over Adam, share of Adam's progress)" noenhanced
set ylabel "(L - L_Adam) / (L_0 - L_Adam)" noenhanced
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -60 noenhanced font ",9"
set grid ytics lc rgb "#dddddd"
set key top left noenhanced
set datafile columnheaders
set xzeroaxis lt -1
plot res.'/gap.csv' using 6:(2*$7):xtic(2) title "left out, searched lr" lc rgb "#4477aa", \
     '' using 8:(2*$9) title "frozen (control)" lc rgb "#cc6677", \
     0.02 with lines dt 2 lc rgb "#222222" title "on-par margin"
