# Why mean(v) works (vspread): the spread of log10(sqrt(v-hat) + eps) inside
# groups of one tensor's entries, over the tensor's own spread (1: no better
# than random groups, 0: constant in every group), against the training step.
# Left: the output-neuron tensors (Algorithm 3 splits them by rows): within
# rows (solid) and within columns (dashed). Right: query and key, whose
# Algorithm 3 block is a head: within heads (solid), rows (dashed), columns
# (dotted). Grey: random groups of the row sizes (the controls).
# Variables: res (a vspread output folder), out (PNG path).
set terminal pngcairo size 1400,560 font ",9"
set output out
set datafile separator ","
f = res."/spread.csv"
rows_of(name) = sprintf("< awk -F, '$2 == \"%s\"' %s", name, f)
set multiplot layout 1,2 title "Spread of Adam's v-hat inside groups along AdamW training (pooled within-group sd of log_{10}(v-hat^{1/2} + {/Symbol e}) over the tensor's sd)"
set logscale x
set xrange [0.7:1500]
set yrange [0:1.15]
set xlabel "training step (AdamW, 1,000 steps)"
set ylabel "within-group sd / tensor sd"
set grid lc rgb "#e0e0e0"
set key bottom left font ",8" noenhanced
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd"
rows_t = "h0.attn.value h0.attn.proj h0.mlp.fc_1 h0.mlp.proj lm_head"
set title "output-neuron tensors: rows (solid) vs columns (dashed)"
plot for [i=1:5] rows_of(word(rows_t, i)) using 1:11 with lines lc rgb "#c0c0c0" notitle, \
     for [i=1:5] rows_of(word(rows_t, i)) using 1:8 with linespoints pt 7 ps 0.6 lw 2 lc rgb word(colors, i) title word(rows_t, i)." rows", \
     for [i=1:5] rows_of(word(rows_t, i)) using 1:9 with linespoints pt 6 ps 0.6 lw 1.5 dt 2 lc rgb word(colors, i) title word(rows_t, i)." columns"
qk = "h0.attn.query h0.attn.key"
set title "query and key (Algorithm 3: one block per head): heads, rows, columns"
plot for [i=1:2] rows_of(word(qk, i)) using 1:11 with lines lc rgb "#c0c0c0" notitle, \
     for [i=1:2] rows_of(word(qk, i)) using 1:10 with linespoints pt 7 ps 0.6 lw 2 lc rgb word(colors, i) title word(qk, i)." heads", \
     for [i=1:2] rows_of(word(qk, i)) using 1:8 with linespoints pt 6 ps 0.6 lw 1.5 dt 2 lc rgb word(colors, i) title word(qk, i)." rows", \
     for [i=1:2] rows_of(word(qk, i)) using 1:9 with linespoints pt 4 ps 0.6 lw 1 dt 3 lc rgb word(colors, i) title word(qk, i)." columns"
unset multiplot
