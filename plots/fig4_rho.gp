# Fig. 4's claim over seeds: every curve's Spearman rho between the mean tau and the
# statistic of r over all R (coloured, one point per seed) and the same for D = diag(1/|z|), z random
# and independent of H (grey, the negative control); a curve falls as tau -> 1 when rho <= -0.5.
# One panel per reading (kappa a/b x median/mean of r).
# Variables: runs (folder of seed<s>/stats.csv), seeds (space-separated), out.
set terminal pngcairo size 1300,1000 font ",10"
set output out
first = runs.'/seed'.word(seeds, 1).'/stats.csv'
# the curves, in the order fig4 writes them: "a_d2_k500" ...
curves = system(sprintf("awk -F, 'index($1, \"fig4.rho.a_median.\") == 1 {sub(\"fig4.rho.a_median.\", \"\", $1); printf \"%%s \", $1}' %s", first))
ncurves = words(curves)
set xrange [0.5:ncurves + 0.5]
set yrange [-1.05:1.6]
set bmargin 4.5
set ytics ("-1" -1, "-0.5" -0.5, "0" 0, "0.5" 0.5, "1" 1)
set xtics rotate by 45 right noenhanced
set for [i=1:ncurves] xtics add (word(curves, i) i)
set grid ytics lc rgb "#dddddd"
set ylabel "Spearman {/Symbol r}(mean {/Symbol t}, r) over all R"
extract(what, read, s) = sprintf("< awk -F, 'index($1, \"%s.%s.\") == 1 {n++; print n, $2}' %s/seed%s/stats.csv", what, read, runs, s)
share(read, s) = system(sprintf("awk -F, '$1 == \"fig4.share_falling.%s\" {printf \"%%.2f\", $2}' %s/seed%s/stats.csv", read, runs, s))
reads = "a_median b_median a_mean b_mean"
labels = "(a) eigenvalues of D^{1/2}HD^{1/2}, median r|(b) singular values of DH, median r|(a) eigenvalues, mean r|(b) singular values, mean r"
array colours[10] = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#377eb8", "#e41a1c", "#222222"]
set multiplot layout 2,2 title sprintf("Fig. 4 over seeds %s: a curve falls as {/Symbol t} {/Symbol \256} 1 when {/Symbol r} <= -0.5 (dashed); claim: more than half of the %d curves fall", seeds, ncurves)
do for [r=1:4] {
    read = word(reads, r)
    shares = ""
    do for [k=1:words(seeds)] { shares = shares.(k > 1 ? ", " : "").share(read, word(seeds, k)) }
    set title sprintf("%s%s\nshare of curves falling per seed: %s", read eq "a_median" ? "primary: " : "robustness: ", \
                      system(sprintf("echo '%s' | cut -d'|' -f%d", labels, r)), shares)
    set arrow 1 from graph 0, first -0.5 to graph 1, first -0.5 nohead dt 2 lw 1.5 lc rgb "#555555"
    set key top center opaque box horizontal maxrows 2 width -5 font ",9"
    plot for [k=1:words(seeds)] extract("fig4.control.rho", read, word(seeds, k)) using ($1 + 0.15):2 \
             with points pt 6 ps 0.8 lc rgb "#aaaaaa" title (k == 1 ? "random D (control)" : ""), \
         for [k=1:words(seeds)] extract("fig4.rho", read, word(seeds, k)) using ($1 - 0.1):2 \
             with points pt 7 ps 1.1 lc rgb colours[(k - 1) % 10 + 1] title "seed ".word(seeds, k)
}
unset multiplot
