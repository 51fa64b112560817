# Per-block spectra by SLQ against the exact ones on the same Hessian (make
# spectra, quick scale: the tiny Transformer at 1% of training, H on 64
# sequences, Algorithm 3 blocks). Left: the density of log10(|lambda|/lambda_ref)
# per block type, exact (solid) and SLQ (dashed; n_v probes x m steps per
# block), each type's curve of area 1 over |lambda| > 1e-12 lambda_ref.
# Right: log10 |lambda|max per block, SLQ against exact (on the diagonal when
# equal). Variables: exact, slq (spectra output folders), out (PNG path).
set terminal pngcairo size 1500,620 font ",9"
set output out
set datafile separator ","
get(dir, key) = system(sprintf("awk -F, '$1 == \"%s\" {print $2; exit}' %s/summary.csv", key, dir))
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #aec7e8"
do for [i=1:12] { set linetype i lc rgb word(colors, i) lw 1.6 }
set multiplot layout 1,2 title sprintf("SLQ (n_v = %s probes x m = %s steps per block) against the exact block spectra: %s, P = %s, %s blocks", \
    get(slq, "probes"), get(slq, "steps"), get(exact, "model"), get(exact, "P"), get(exact, "blocks"))
fe = exact."/density_types.csv"
fs = slq."/density_types.csv"
stats fe skip 1 nooutput
ncol = STATS_columns
set title sprintf("densities per block type: exact solid, SLQ dashed (sigma %s decades)", get(slq, "sigma"))
set xlabel "log_{10}(|{/Symbol l}| / |{/Symbol l}|_{ref})"
set ylabel "density per type"
set xrange [-8:0.5]
set key top left font ",7" opaque
set grid xtics lc rgb "#e0e0e0"
plot for [i=2:ncol] fe using 1:i with lines lt (i - 1) title columnhead(i) noenhanced, \
     for [i=2:ncol] fs using 1:i with lines lt (i - 1) dt 2 notitle
set title sprintf("log_{10} |{/Symbol l}|_{max} per block: spread S = %.3f exact, %.3f SLQ (decades)", \
    real(get(exact, "spread_sd_log10_abs_lambda_max")), real(get(slq, "spread_sd_log10_abs_lambda_max")))
set xlabel "exact"
set ylabel "SLQ"
set autoscale xy
unset xrange
set key bottom right
ncols = int(system(sprintf("head -1 %s/blocks.csv | tr ',' '\\n' | wc -l", exact)))
plot "< paste -d, ".exact."/blocks.csv ".slq."/blocks.csv" using 22:(column(22 + ncols)) every ::1 with points pt 7 ps 0.7 lc rgb "#1f77b4" title "block", \
     x with lines lc rgb "#808080" dt 2 title "equal"
unset multiplot
