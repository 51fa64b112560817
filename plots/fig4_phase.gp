# Paper Fig. 4 as a phase diagram: tau of each matrix (log bins) on x, d (panel a) or
# kappa (panel b) on y, colour = median r over the samples in the bin (log scale,
# blue: D_Adam reduces kappa, red: it increases it). Variables: res, panel, out.
set terminal pngcairo size 900,500 font ",11"
set output out
set datafile separator ","
file = res.'/fig4'.panel.'_phase.csv'
col = (panel eq 'a') ? 2 : 3
labels = system(sprintf("awk -F, 'NR>1 && !s[$1]++{print $%d}' %s | tr '\\n' ' '", col, file))
fixed = system(sprintf("awk -F, 'NR==2{print $%d}' %s", 5 - col, file))
set logscale x
set xrange [10**-2.4:1]
set yrange [-0.5:words(labels) - 0.5]
set ytics ()
do for [i=1:words(labels)] { set ytics add (word(labels, i) i - 1) }
set xlabel "{/Symbol t}(H) of the matrix (log bins)"
if (panel eq 'a') {
    set ylabel "dimension d"
    set title sprintf("Fig. 4(a) phase diagram: median r = {/Symbol k}(D_{Adam}H)/{/Symbol k}(H), {/Symbol k}(H) = %s", fixed)
} else {
    set ylabel "{/Symbol k}(H)"
    set title sprintf("Fig. 4(b) phase diagram: median r = {/Symbol k}(D_{Adam}H)/{/Symbol k}(H), d = %s", fixed)
}
set cblabel "log_{10} r"
set cbrange [-2:2]
set palette defined (-2 "#2166ac", -1 "#67a9cf", 0 "#f7f7f7", 1 "#ef8a62", 2 "#b2182b")
set style fill solid 1.0 noborder
unset key
lo(x) = x > 0 ? x : 10**-2.4
plot file using (sqrt(lo($4) * $5)):1:(lo($4)):5:($1 - 0.45):($1 + 0.45):(log10($9)) \
     with boxxyerror fc palette
