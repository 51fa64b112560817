# Coarse partitions over seeds (coarse, make verdicts). Left: per seed, each
# partition's min over 1x and 2x of s(p) - s(alg3) (the claims: whole and alg2
# above 0.02) and the control (Algorithm 3 with another batch order). Right: in
# how many seeds each partition's run at 1x, 2x and 4x its best lr was unstable
# (diverged, or at least one loss spike above 1.5x the running minimum).
# Variables: runs (folder of seed<s>/stats.csv), seeds (space-separated), out.
set terminal pngcairo size 1300,560 font ",10"
set output out
set bmargin 7
stats_of(name) = sprintf("< for s in %s; do awk -F, -v s=$s '$1 == \"%s\" {print s, $2}' %s/seed$s/stats.csv; done", seeds, name, runs)
parts = "whole alg2 merged_heads random alg3"
nseeds = words(seeds)
off(s, c) = c + 0.3 * ((s - real(word(seeds, 1))) / (nseeds > 1 ? real(nseeds - 1) : 1.0) - 0.5) * (nseeds > 1)
set grid ytics lc rgb "#dddddd"
set key outside bottom center horizontal font ",9"
set offsets 0, 0, graph 0.08, graph 0.08
set multiplot layout 1,2 title sprintf("Adam-mini with coarse partitions over seeds %s", seeds)
set xrange [0.5:5.5]
set xtics ("one block\nmin 1x, 2x\n(claim > 0.02)" 1, "Algorithm 2\nmin 1x, 2x\n(claim > 0.02)" 2, \
           "one block\nat 2x\n(claim > 0.02)" 3, "q/k merged\nmin 1x, 2x\n(reported)" 4, \
           "random layout\nmin 1x, 2x\n(reported)" 5)
set yrange [*<-0.05:0.1<*]
set arrow 1 from graph 0, first 0.02 to graph 1, first 0.02 nohead dt 2 lw 1.5 lc rgb "#555555"
set ylabel "s(p) - s(alg3)"
set title "share of Algorithm 3's progress lost beyond Algorithm 3's"
stat(c) = c == 3 ? "coarse.whole_hurt.x2" : sprintf("coarse.%s_hurt", word("whole alg2 - merged_heads random", c))
plot for [c=1:5] stats_of(stat(c)) using (off($1, c) - 0.05):2 with points pt 7 \
         ps 1.3 lc rgb "#d95f02" title (c == 1 ? "partition (one point per seed)" : ""), \
     for [c=1:3] stats_of(c == 3 ? "coarse.control.alg3_other_batches_hurt.x2" : "coarse.control.alg3_other_batches_hurt") \
         using (off($1, c) + 0.05):2 with points pt 6 ps 1.3 lc rgb "#377eb8" \
         title (c == 1 ? "control: Algorithm 3 with another batch order" : "")
unset arrow 1
set xrange [0.5:5.5]
set xtics ("one block" 1, "Algorithm 2" 2, "q/k merged" 3, "random" 4, "Algorithm 3" 5)
set yrange [0:nseeds + 0.5]
set ylabel sprintf("seeds (of %d) with a spike or a divergence", nseeds)
set title "unstable runs at 1x, 2x, 4x the partition's best lr"
unstable(p, x) = sprintf("< n=0; for s in %s; do awk -F, -v a=coarse.diverged.%s.x%s -v b=coarse.spikes.%s.x%s '$1 == a || $1 == b {u += ($2 > 0)} END {print (u > 0)}' %s/seed$s/stats.csv; done | awk '{n += $1} END {print n + 0}'", seeds, p, x, p, x, runs)
set style fill solid 0.8
set boxwidth 0.25
plot for [c=1:5] unstable(word(parts, c), "1") using (c - 0.27):1 with boxes lc rgb "#1b9e77" title (c == 1 ? "1x" : ""), \
     for [c=1:5] unstable(word(parts, c), "2") using (c):1 with boxes lc rgb "#d95f02" title (c == 1 ? "2x" : ""), \
     for [c=1:5] unstable(word(parts, c), "4") using (c + 0.27):1 with boxes lc rgb "#7570b3" title (c == 1 ? "4x" : "")
unset multiplot
