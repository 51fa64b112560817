# Block heterogeneity over seeds (hetero, make verdicts): per seed, at
# initialisation, the checkpoint (1%) and the end, the difference of the
# Transformer's and the MLP's heterogeneity and its control. Left: claim
# hetero.tt_vs_mlp, D = S_tt - S_mlp (decades), control: the same for random
# blocks of the same sizes. Right: claim hetero.beyond_random,
# log2(S/S_rand) of tt minus mlp, control: a random partition in place of
# Algorithm 3's. The claims take the smallest of the three points, above 0.
# Variables: runs (folder of seed<s>/stats.csv), seeds (space-separated), out.
set terminal pngcairo size 1200,520 font ",10"
set output out
stats_of(name) = sprintf("< for s in %s; do awk -F, -v s=$s '$1 == \"%s\" {print s, $2}' %s/seed$s/stats.csv; done", seeds, name, runs)
points = "init checkpoint end"
nseeds = words(seeds)
off(s, c) = c + 0.3 * ((s - real(word(seeds, 1))) / (nseeds > 1 ? real(nseeds - 1) : 1.0) - 0.5) * (nseeds > 1)
set xrange [0.5:3.5]
set xtics ("initialisation" 1, "checkpoint (1%%)" 2, "end" 3)
set grid ytics lc rgb "#dddddd"
set key outside bottom center horizontal font ",9"
set offsets 0, 0, graph 0.08, graph 0.08
set yrange [*<-0.05:0.05<*]
set multiplot layout 1,2 title sprintf("Block heterogeneity, Transformer minus MLP, over seeds %s (claims hold above 0 at all three points)", seeds)
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead dt 2 lw 1.5 lc rgb "#555555"
set ylabel "S_{tt} - S_{mlp}, decades of log_{10} |{/Symbol l}|_{max}"
set title "hetero.tt\\_vs\\_mlp: sd of log_{10} |{/Symbol l}|_{max} over the blocks"
plot for [c=1:3] stats_of(sprintf("hetero.%s.diff", word(points, c))) using (off($1, c) - 0.05):2 with points pt 7 ps 1.3 \
         lc rgb "#d95f02" title (c == 1 ? "claim (one point per seed)" : ""), \
     for [c=1:3] stats_of(sprintf("hetero.control.%s.diff", word(points, c))) using (off($1, c) + 0.05):2 with points pt 6 \
         ps 1.3 lc rgb "#377eb8" title (c == 1 ? "control: random blocks of the same sizes" : "")
set ylabel "log_2(S/S_{rand}) of tt minus mlp"
set title "hetero.beyond\\_random: the same over random blocks of the same sizes"
plot for [c=1:3] stats_of(sprintf("hetero.%s.beyond_random", word(points, c))) using (off($1, c) - 0.05):2 with points \
         pt 7 ps 1.3 lc rgb "#d95f02" title (c == 1 ? "claim (one point per seed)" : ""), \
     for [c=1:3] stats_of(sprintf("hetero.control.%s.beyond_random", word(points, c))) using (off($1, c) + 0.05):2 with \
         points pt 6 ps 1.3 lc rgb "#377eb8" title (c == 1 ? "control: a random partition for Algorithm 3's" : "")
unset multiplot
