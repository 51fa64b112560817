# Curves of several runs from a CSV "step,<name>,<name>,…" (experiments/ttexp.h).
# Variables: out (PNG), file (CSV), ttl (title), ylab (y label), c0, c1 (first
# and last data column to draw), optional: ref (reference.csv with the entropy
# floor: then draw value − floor on a log scale), logy (1: log y), xlab.
set terminal pngcairo size 900,560 font ",11"
set output out
set datafile separator ","
set key noenhanced outside right top box   # outside: no curve under it
set grid lc rgb "#dddddd"
set title ttl noenhanced
set xlabel (exists("xlab") ? xlab : "step")
set ylabel ylab noenhanced
set style data linespoints
set pointsize 0.6
floorv = 0
if (exists("ref")) {
    floorv = real(system("awk -F, '$1==\"optimal_loss\"{print $2}' ".ref))
    # text (--data text) has no known entropy floor (nan): the loss itself
    if (floorv != floorv) { floorv = 0; set ylabel "held-out loss (text: no known entropy floor)"; \
                            set title ttl." [text: the loss itself]" noenhanced } \
    else { set logscale y; set format y "10^{%L}" }
}
# log y over the data's own range (less than a decade here: tics in plain numbers)
if (exists("logy") && logy) {
    set logscale y; set autoscale yfix; set offsets 0, 0, graph 0.05, graph 0.05; set format y "%g"
    set ytics 10
    do for [e=-3:3] { do for [m in "1 1.2 1.5 2 3 5 7"] { set ytics add (real(m) * 10.0**e) } }
}
# linear y: a margin above the top curve, so that a curve at the limit is not on the frame
if (!exists("ref") && !(exists("logy") && logy)) { set offsets 0, 0, graph 0.04, 0 }
set linetype 1 lc rgb "#0077bb" lw 2 pt 7
set linetype 2 lc rgb "#009988" lw 2 pt 5
set linetype 3 lc rgb "#ee7733" lw 2 pt 9
set linetype 4 lc rgb "#cc3311" lw 2 pt 11
set linetype 5 lc rgb "#aa4499" lw 2 pt 13
set linetype 6 lc rgb "#555555" lw 2 pt 3
set linetype 7 lc rgb "#999933" lw 2 pt 4
plot for [i=c0:c1] file using 1:(column(i) - floorv) title columnheader(i)
