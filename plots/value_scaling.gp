# Value's Hessian entries over query's and key's (log10 of the mean |H_tt entry| ratio, fig6)
# as each factor of the setting moves, beside the paper's "about 10^6" (the dashed line at 6,
# and the band 5..7 of "within a decade"). One panel per make sweep of mk/value_scaling.mk:
# the mean over 3 seeds with the band from the smallest to the largest seed; the toolkit's
# default setting (the paper's sizes) is circled. Variables: res (the sweeps' folder), out.
set terminal pngcairo size 1500,900 font ",10"
set output out
set datafile separator ","
factors = "checkpoint lr T V heads C M data hess-batch"
defaults = "0.01 0.001 8 8 4 16 32 markov 256"
set multiplot layout 3, 3 title "value's Hessian entries over query's and key's (log_{10} of the mean |entry| ratio) against the setting; dashed: the paper's 10^6"
set grid lc rgb "#dddddd"
set yrange [0:8]
set ytics 1
unset key
do for [i=1:words(factors)] {
    f = word(factors, i)
    band = res.'/value-'.f.'/band.csv'
    ok = system(sprintf("[ -s '%s' ] && echo 1 || echo 0", band)) + 0
    set title f noenhanced
    set xlabel "--".f noenhanced
    set ylabel "log_{10} ratio"
    set object 1 rect from graph 0, first 5 to graph 1, first 7 fc rgb "#fde0dd" fs solid 0.5 noborder behind
    if (!ok) {
        set label 1 "not run" at graph 0.4, graph 0.5
        plot 6 with lines dt 2 lc rgb "#b2182b"
        unset label 1
        continue
    }
    numeric = system(sprintf("awk -F, 'NR>2 && $2 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ {bad=1} END{print bad ? 0 : 1}' '%s'", band)) + 0
    if (numeric) {
        spread = system(sprintf("awk -F, 'NR>2 {if (min == \"\" || $2 < min) min = $2; if ($2 > max) max = $2} END{print max / min}' '%s'", band)) + 0
        if (spread >= 20) { set logscale x 10 } else { set logscale x 2 }
        set format x "%g"
        set offsets graph 0.05, graph 0.05, 0, 0
        d = word(defaults, i) + 0
        plot band using 2:6:7 with filledcurves fs transparent solid 0.25 noborder lc rgb "#1b9e77", \
             band using 2:4 with linespoints pt 7 lw 2 lc rgb "#1b9e77", \
             band using ($2 == d ? $2 : NaN):4 with points pt 6 ps 2.5 lw 2 lc rgb "#222222", \
             6 with lines dt 2 lw 2 lc rgb "#b2182b"
        unset logscale x
        unset offsets
    } else {
        set offsets 0.5, 0.5, 0, 0
        plot band using 0:4:6:7:xtic(2) with yerrorbars pt 7 lw 2 lc rgb "#1b9e77", \
             6 with lines dt 2 lw 2 lc rgb "#b2182b"
        unset offsets
    }
}
unset multiplot
