# Paper Fig. 4 as curves: median r = kappa(D_Adam H)/kappa(H) against mean tau, one
# series per d (panel a) or per kappa (panel b); bars are the quartiles of r.
# Points, not lines: tau is not monotone in R. Variables: res, panel ('a'|'b'), out.
set terminal pngcairo size 900,600 font ",11"
set output out
set datafile separator ","
file = res.'/fig4'.panel.'.csv'
col = (panel eq 'a') ? 1 : 2
vals = system(sprintf("awk -F, 'NR>1{print $%d}' %s | sort -gu | tr '\\n' ' '", col, file))
fixed = system(sprintf("awk -F, 'NR==2{print $%d}' %s", 3 - col, file))
set logscale xy
set format y "10^{%T}"
set xrange [*:1.15]
set xlabel "{/Symbol t}(H) = {/Symbol S}_i|H_{ii}| / {/Symbol S}_{ij}|H_{ij}|   (mean over {/Symbol q} draws at each R)"
set ylabel "r = {/Symbol k}(D_{Adam}H) / {/Symbol k}(H)   (median, bars: quartiles)"
if (panel eq 'a') {
    set title sprintf("Fig. 4(a): Adam's diagonal preconditioner vs density of H, {/Symbol k}(H) = %s", fixed)
    set key left bottom opaque box width 1 title "d"
} else {
    set title sprintf("Fig. 4(b): Adam's diagonal preconditioner vs density of H, d = %s", fixed)
    set key left bottom opaque box width 1 title "{/Symbol k}(H)"
}
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#555555"
set label "r = 1" at graph 0.01, first 1.25 tc rgb "#555555"
set pointsize 1.0
array colours[6] = ["#7b3294", "#1b9e77", "#377eb8", "#d95f02", "#e7298a", "#222222"]
do for [i=1:6] { set linetype i lc rgb colours[i] }
plot for [i=1:words(vals)] file using 4:(column(col) == word(vals, i) + 0 ? $8 : NaN):9:10 \
         with yerrorbars pt 7 lw 0.6 lc i title word(vals, i)
