# Why mean(v) works over seeds (vspread, make verdicts): each claim's
# statistic (the worst over the checkpoints) and its control's, one point per
# seed. Left: the three log2 ratios of within-group spreads (rows below 0,
# rows vs columns below 0, query/key heads vs rows above 0); right: the share
# of coordinates whose Adam-mini lr is within a factor 2 of Adam's (above 1/2).
# Variables: runs (folder of seed<s>/stats.csv), seeds (space-separated), out.
set terminal pngcairo size 1200,560 font ",10"
set output out
set bmargin 5
stats_of(name) = sprintf("< for s in %s; do awk -F, -v s=$s '$1 == \"%s\" {print s, $2}' %s/seed$s/stats.csv; done", seeds, name, runs)
names = "rows_vs_tensor rows_vs_cols heads_vs_rows"
nseeds = words(seeds)
off(s, c) = c + 0.3 * ((s - real(word(seeds, 1))) / (nseeds > 1 ? real(nseeds - 1) : 1.0) - 0.5) * (nseeds > 1)
set grid ytics lc rgb "#dddddd"
set key outside bottom center horizontal font ",9"
set offsets 0, 0, graph 0.08, graph 0.08
set yrange [*<-0.05:0.05<*]
set multiplot layout 1,2 title sprintf("Spread of v-hat in Adam-mini's blocks over seeds %s: each claim (worst over the checkpoints) and its control", seeds)
set xrange [0.5:3.5]
set xtics ("rows vs tensor\n(claim below 0)" 1, "rows vs columns\n(claim below 0)" 2, "q/k heads vs rows\n(claim above 0)" 3)
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead dt 2 lw 1.5 lc rgb "#555555"
set ylabel "log_2 of within-group sd ratio"
set title "within-group spread of log_{10}(v-hat^{1/2} + {/Symbol e})"
plot for [c=1:3] stats_of(sprintf("vspread.%s.worst", word(names, c))) using (off($1, c) - 0.05):2 with points pt 7 \
         ps 1.3 lc rgb "#d95f02" title (c == 1 ? "claim (one point per seed)" : ""), \
     for [c=1:3] stats_of(sprintf("vspread.control.%s.worst", word(names, c))) using (off($1, c) + 0.05):2 with points \
         pt 6 ps 1.3 lc rgb "#377eb8" title (c == 1 ? "control: random groups" : "")
set xrange [0.5:1.5]
set xtics ("Adam-mini's lr within a factor 2 of Adam's\n(claim above 1/2)" 1)
set yrange [0:1]
set arrow 1 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lw 1.5 lc rgb "#555555"
set ylabel "share of coordinates"
set title "closeness of the per-block learning rate"
plot stats_of("vspread.lr_within2.worst") using (off($1, 1) - 0.05):2 with points pt 7 ps 1.3 lc rgb "#d95f02" \
         title "claim", \
     stats_of("vspread.control.lr_within2.worst") using (off($1, 1) + 0.05):2 with points pt 6 ps 1.3 lc rgb "#377eb8" \
         title "control: random groups of the same sizes"
unset multiplot
