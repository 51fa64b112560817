# Value split (value_split): held-out loss above the entropy floor of Adam-mini
# with value by output neuron and value as one block (and, on the long runs, one
# block for the whole model: the long claim's control), each at its own searched
# learning rate; left the short runs, right the long runs.
# Variables: out (PNG), res (the run's folder: eval_short.csv, eval_long.csv, reference.csv).
set terminal pngcairo size 1300,520 font ",10"
set output out
set datafile separator ","
set key noenhanced top right box opaque font ",9"
set grid lc rgb "#dddddd"
set linetype 1 lc rgb "#0077bb" lw 2 pt 7
set linetype 2 lc rgb "#cc3311" lw 2 pt 5
set linetype 3 lc rgb "#999999" lw 2 pt 9 dt 2
floorv = real(system(sprintf("awk -F, '$1==\"optimal_loss\"{print $2}' %s/reference.csv", res)))
set xlabel "step"
set ylabel "held-out loss - entropy floor"
# text (--data text) has no known entropy floor (nan): the loss itself
if (floorv != floorv) { floorv = 0; set ylabel "held-out loss (text: no known entropy floor)" } else { set logscale y }
set pointsize 0.6
set multiplot layout 1,2 title "Adam-mini: value split by output neuron vs value as one block (one seed; each at its searched lr)"
ncol(f) = int(system(sprintf("head -1 %s | awk -F, '{print NF}'", f)))
f = sprintf("%s/eval_short.csv", res)
set title "short runs"
plot for [i=2:ncol(f)] f using 1:(column(i) - floorv) with linespoints lt (i - 1) title columnheader(i)
f = sprintf("%s/eval_long.csv", res)
set title "long runs"
plot for [i=2:ncol(f)] f using 1:(column(i) - floorv) with linespoints lt (i - 1) title columnheader(i)
unset multiplot
