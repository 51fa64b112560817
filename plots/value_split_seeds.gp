# Value split over seeds (value_split, make verdicts): per seed, d = (L_whole -
# L_neuron)/(L_0 - L_neuron) on the short runs (claim: below -0.02, whole better)
# and on the long runs (claim: above -0.02, neuron not worse), each with its
# control (short: neuron with another batch order in whole's place; long: whole
# over one block for the whole model in neuron's place).
# Variables: runs (folder of seed<s>/stats.csv), seeds (space-separated), out.
set terminal pngcairo size 900,560 font ",10"
set output out
set bmargin 6
stats_of(name) = sprintf("< for s in %s; do awk -F, -v s=$s '$1 == \"%s\" {print s, $2}' %s/seed$s/stats.csv; done", seeds, name, runs)
nseeds = words(seeds)
off(s, c) = c + 0.3 * ((s - real(word(seeds, 1))) / (nseeds > 1 ? real(nseeds - 1) : 1.0) - 0.5) * (nseeds > 1)
set grid ytics lc rgb "#dddddd"
set key outside bottom center horizontal font ",9"
set offsets 0, 0, graph 0.08, graph 0.08
set xrange [0.5:2.5]
set xtics ("short runs\n(claim below -0.02)" 1, "long runs\n(claim above -0.02)" 2)
set arrow 1 from graph 0, first -0.02 to graph 1, first -0.02 nohead dt 2 lw 1.5 lc rgb "#555555"
set ylabel "(L_{whole} - L_{neuron}) / (L_0 - L_{neuron})"
set title sprintf("Adam-mini, value as one block against value by output neuron, over seeds %s", seeds)
plot stats_of("value_split.short.whole_excess") using (off($1, 1) - 0.05):2 with points pt 7 ps 1.3 lc rgb "#d95f02" \
         title "claim (one point per seed)", \
     stats_of("value_split.long.whole_excess") using (off($1, 2) - 0.05):2 with points pt 7 ps 1.3 lc rgb "#d95f02" \
         notitle, \
     stats_of("value_split.control.short.other_batches_excess") using (off($1, 1) + 0.05):2 with points pt 6 ps 1.3 \
         lc rgb "#377eb8" title "control (short: other batch order; long: one block in neuron's place)", \
     stats_of("value_split.control.long.whole_over_one_block") using (off($1, 2) + 0.05):2 with points pt 6 ps 1.3 \
         lc rgb "#377eb8" notitle
