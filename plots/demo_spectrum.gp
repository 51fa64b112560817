# Histogram of Wishart eigenvalues against the Marchenko–Pastur density.
# Variables: res (results folder), out (PNG path).
set terminal pngcairo size 800,500 font ",11"
set output out
set datafile separator ","
set key top right
set xlabel "eigenvalue of X'X/n"
set ylabel "density"
set title "Wishart spectrum vs Marchenko-Pastur (seeded, LAPACK dsyevr)"
stats res.'/eigs.csv' using 2 nooutput
n = STATS_records
binw = (STATS_max - STATS_min) / 40.0
bin(x) = binw * (floor(x / binw) + 0.5)
set style fill solid 0.5 border -1
set boxwidth binw
plot res.'/eigs.csv' using (bin($2)):(1.0 / (n * binw)) smooth frequency with boxes lc rgb "#4477aa" title "eigenvalues", \
     res.'/mp_density.csv' using 1:2 with lines lw 2 lc rgb "#cc3311" title "Marchenko-Pastur"
