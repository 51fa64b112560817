# Paper Fig. 4 in the four readings of its claim: r = kappa(D_Adam H)/kappa(H) against the
# mean tau at each R, kappa by (a) eigenvalues of D^1/2 H D^1/2 or (b) singular values of DH,
# median or mean of r over the samples at each R. Points, not lines: tau is not monotone
# in R. The key gives each curve's Spearman rho over all R (stats.csv); a curve falls as
# tau -> 1 when rho <= -0.5. Variables: res, panel ('a'|'b'), out.
set terminal pngcairo size 1300,950 font ",10"
set output out
set datafile separator ","
file = res.'/fig4'.panel.'.csv'
stats = res.'/stats.csv'
col = (panel eq 'a') ? 1 : 2
vals = system(sprintf("awk -F, 'NR>1{print $%d}' %s | sort -gu | tr '\\n' ' '", col, file))
fixed = system(sprintf("awk -F, 'NR==2{print $%d}' %s", 3 - col, file))
curve(v) = (panel eq 'a') ? sprintf("a_d%s_k%s", v, fixed) : sprintf("b_d%s_k%s", fixed, v)
rho(read, v) = system(sprintf("awk -F, '$1 == \"fig4.rho.%s.%s\" {printf \"%%+.2f\", $2}' %s", read, curve(v), stats))
reads = "a_median b_median a_mean b_mean"
rcols = "8 12 7 11"
labels = "primary: (a) eigenvalues of D^{1/2}HD^{1/2}, median r|robustness: (b) singular values of DH, median r|robustness: (a) eigenvalues, mean r|robustness: (b) singular values, mean r"
array colours[6] = ["#7b3294", "#1b9e77", "#377eb8", "#d95f02", "#e7298a", "#222222"]
do for [i=1:6] { set linetype i lc rgb colours[i] }
set logscale xy
set format y "10^{%T}"
set xrange [*:1.15]
set grid xtics ytics lc rgb "#dddddd"
set pointsize 0.9
set multiplot layout 2,2 title sprintf("Fig. 4(%s) in four readings: %s; key: Spearman {/Symbol r} over all R (falls when <= -0.5)", \
    panel, (panel eq 'a') ? "{/Symbol k}(H) = ".fixed : "d = ".fixed)
do for [r=1:4] {
    read = word(reads, r)
    c = word(rcols, r) + 0
    set title system(sprintf("echo '%s' | cut -d'|' -f%d", labels, r))
    set xlabel "mean {/Symbol t}(H) at R"
    set ylabel "r (".(r > 2 ? "mean" : "median")." over {/Symbol q} and x at R)"
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#555555"
    set key left bottom opaque box width 1 title ((panel eq 'a') ? "d ({/Symbol r})" : "{/Symbol k}(H) ({/Symbol r})")
    plot for [i=1:words(vals)] file using 4:(column(col) == word(vals, i) + 0 ? column(c) : NaN) \
         with points pt 7 lc i title sprintf("%s (%s)", word(vals, i), rho(read, word(vals, i)))
}
unset multiplot
