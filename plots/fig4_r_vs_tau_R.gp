# Fig. 4 read against each matrix's own tau: every matrix of every curve of the panel
# (theta draws x R values), median r over its points against its tau, coloured by R.
# tau is not monotone in R: the two branches (R up to R*, tau falling from 1; R past R*,
# tau rising a little while r keeps rising) lie on top of each other at small tau, which
# is where "tau is the only changing factor" fails. Variables: res, panel ('a'|'b'), out.
set terminal pngcairo size 1200,760 font ",10"
set output out
set datafile separator ","
file = res.'/fig4'.panel.'_matrices.csv'
nrow = system(sprintf("awk -F, 'NR>1{print $1}' %s | sort -nu | wc -l", file)) + 0
cols = 3
rows = int((nrow + cols - 1) / cols)
set multiplot layout rows, cols title sprintf("Fig. 4(%s) read against each matrix's own {/Symbol t}: r = {/Symbol k}(D_{Adam}H)/{/Symbol k}(H), median over x, colour = R", panel)
set logscale xy
set format y "10^{%T}"
set format x "10^{%T}"
set palette defined (0 "#2166ac", 0.5 "#f7f7f7", 1 "#b2182b")
set cbrange [0:1]
set xrange [*:1.2]
set grid lc rgb "#dddddd"
unset key
do for [i=0:nrow-1] {
    d = system(sprintf("awk -F, 'NR>1 && $1==%d{print $2; exit}' %s", i, file))
    k = system(sprintf("awk -F, 'NR>1 && $1==%d{print $3; exit}' %s", i, file))
    set title sprintf("d = %s, {/Symbol k} = %s", d, k)
    set xlabel "{/Symbol t}(H)"
    set ylabel "r"
    if (i == nrow - 1) { set colorbox; set cblabel "R" } else { unset colorbox }
    plot file using ($1 == i ? $6 : NaN):7:5 with points pt 7 ps 0.45 lc palette, \
         1 with lines dt 2 lc rgb "#555555"
}
unset multiplot
